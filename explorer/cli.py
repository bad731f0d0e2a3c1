"""The command line: ``candela-explorer`` (and ``python -m explorer``) serves the app.

Serves on 127.0.0.1 unless told otherwise, prints the URL to open and, unless
``--no-browser``, opens it. ``--shape`` and ``--ops`` set the state the URL
starts with, the same keys the page's own URL carries.
"""

from __future__ import annotations

import argparse
import sys
from urllib.parse import quote


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="candela-explorer",
        description="Serve Candela Explorer: pick a shape and a chain of layout operations "
        "and see the logical grid, the memory buffer, the fields and the "
        "traversal side by side.",
        epilog='example: candela-explorer --shape 3,4 --ops ".transpose()" --port 5006',
    )
    parser.add_argument(
        "--port", type=int, default=5006, help="port to serve on (default 5006; 0 picks a free one)"
    )
    parser.add_argument(
        "--address",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1, this machine only)",
    )
    parser.add_argument(
        "--no-browser", action="store_true", help="do not open a web browser, only print the URL"
    )
    parser.add_argument("--shape", default=None, help='starting shape, e.g. "3,4"')
    parser.add_argument("--ops", default=None, help='starting pipeline, e.g. ".transpose()"')
    parser.add_argument(
        "--export",
        metavar="PATH",
        default=None,
        help="write the --shape/--ops state as one offline HTML page to PATH "
        "and exit, serving nothing",
    )
    return parser


def start_query(shape: str | None, ops: str | None) -> str:
    """The query string for a starting state, e.g. ``?shape=3,4&ops=.transpose()``."""
    parts = []
    if shape is not None:
        parts.append("shape=" + quote(shape, safe=","))
    if ops is not None:
        parts.append("ops=" + quote(ops, safe=",.()[]:-"))
    return "?" + "&".join(parts) if parts else ""


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.export is not None:
        from .export import export_main

        return export_main(args.export, args.shape, args.ops)
    import panel as pn

    from .app import app

    pn.extension()
    try:
        server = pn.serve(
            {"/": app},
            port=args.port,
            address=args.address,
            show=False,
            start=False,
            title="Candela Explorer",
            websocket_origin="*" if args.address != "127.0.0.1" else None,
        )
    except OSError as exc:
        print(
            f"candela-explorer: cannot serve on {args.address}:{args.port}: {exc.strerror or exc}"
            " (try another --port, or --port 0 for a free one)",
            file=sys.stderr,
        )
        return 2
    host = "127.0.0.1" if args.address in ("0.0.0.0", "") else args.address
    url = f"http://{host}:{server.port}/{start_query(args.shape, args.ops)}"
    print(f"Candela Explorer: {url}", flush=True)
    print("Press Ctrl+C to stop.", flush=True)
    if not args.no_browser:
        import webbrowser

        server.io_loop.add_callback(lambda: webbrowser.open(url))
    try:
        server.start()
        server.io_loop.start()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
