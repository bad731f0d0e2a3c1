"""Profile what one served session costs the server: ``cProfile`` of N page requests.

Prints figures and a profile; it is not a test. The app is served in this
process as the command line serves it, the server's event loop runs under
``cProfile`` in the main thread, and a client thread asks for the page N times
one after another (a plain GET builds a whole session, as a browser's first
request does), optionally pulling each session's document over the WebSocket
as the browser then does (``--pull``). Run:
``.venv/bin/python benchmarks/profile_session.py [-n 10] [--pull] [--top 40]
[--no-profile]``. Compare before and after with ``--no-profile`` (cProfile
roughly doubles the time), run alternately, and read the ratio.

Printed: CPU seconds per session (the process's CPU time over the requests,
after a first warm-up request), the slices of it spent in the parts the page is
built from (``Explorer()``, Panel's ``get_root``, the page's HTML), and the
functions with the most cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import http.client
import io
import pstats
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: Functions whose cumulative time is reported as a share of the whole.
PARTS = {
    "app(): Explorer() and its view": ("explorer/app.py", "app"),
    "  Figures()": ("explorer/figures.py", "__init__"),
    "  Classroom()": ("explorer/classroom.py", "__init__"),
    "  Editor()": ("explorer/editor.py", "__init__"),
    "Panel get_root": ("panel/viewable.py", "get_root"),
    "Bokeh document validation": ("bokeh/document/document.py", "validate"),
    "page HTML": ("panel/io/server.py", "server_html_page_for_session"),
    "document to JSON (pull)": ("bokeh/document/document.py", "to_json"),
}



def _pool_of(context):
    """The pool of pages built ahead for Bokeh's application ``context`` (None: none)."""
    if context is None:
        return None
    try:
        from explorer.pool import _POOLS
    except ImportError:  # a checkout from before the pool kept its own registry
        return getattr(context, "_candela_pool", None)
    return _POOLS.get(context)

def get(port: int, path: str = "/") -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"GET {path} answered {response.status}")
        return body
    finally:
        conn.close()


def pull(port: int, page: bytes) -> None:
    """Open the page's WebSocket and pull its document, as the browser does."""
    import asyncio
    import json
    import re

    from tornado.websocket import websocket_connect

    token = re.search(rb'"token":\s*"([^"]+)"', page) or re.search(rb"token=([\w.-]+)", page)
    if token is None:
        raise RuntimeError("no session token in the page")

    async def go() -> None:
        ws = await websocket_connect(
            f"ws://127.0.0.1:{port}/ws",
            subprotocols=["bokeh", token.group(1).decode()],
        )
        ack = await ws.read_message()  # ACK
        assert ack is not None
        header = json.dumps({"msgid": "1", "msgtype": "PULL-DOC-REQ"})
        for part in (header, "{}", "{}"):
            await ws.write_message(part)
        while True:  # header, metadata, content, then any buffers
            message = await ws.read_message()
            if message is None or (isinstance(message, str) and '"PULL-DOC-REPLY"' in message):
                break
        for _ in range(2):
            await ws.read_message()
        ws.close()

    asyncio.run(go())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10, help="sessions to profile (after one warm-up)")
    parser.add_argument("--pull", action="store_true", help="also pull each session's document")
    parser.add_argument("--top", type=int, default=35, help="functions to list")
    parser.add_argument(
        "--no-profile", action="store_true", help="time only (CPU per session without cProfile)"
    )
    parser.add_argument("--save", default=None, help="write the raw profile to this file")
    parser.add_argument("--query", default="", help="query string of the page, e.g. ?shape=64,64")
    parser.add_argument(
        "--ready",
        action="store_true",
        help="with N pages built ahead (explorer.pool): profile what a request still costs",
    )
    args = parser.parse_args()

    import panel as pn

    from explorer.app import app
    from explorer.testing import free_port

    try:
        from explorer.serving import server_settings
    except ImportError:  # before the serving module existed: Panel's defaults
        server_settings = dict
    try:
        from explorer.cli import prepare as prepare_server
    except ImportError:  # before the command composed them: the serving module did
        try:
            from explorer.serving import prepare_server
        except ImportError:
            prepare_server = lambda server, **kw: None  # noqa: E731

    pn.extension()
    port = free_port()
    server = pn.serve(
        {"/": app},
        port=port,
        address="127.0.0.1",
        show=False,
        start=False,
        verbose=False,
        title="Candela Explorer",
        **server_settings(),
    )
    if args.ready:
        prepare_server(server, ready=args.n + 1)
    else:
        prepare_server(server)
    profile = cProfile.Profile()
    spans: dict = {}

    def client() -> None:
        try:
            path = "/" + args.query
            page = get(port, path)  # warm-up: imports, caches, first-use costs
            if args.pull:
                pull(port, page)
            if args.ready:  # wait until the pool has a page for every request timed
                pools = [
                    _pool_of(c)
                    for c in server._tornado._applications.values()
                ]
                while any(p is not None and len(p.ready) < min(p.size, args.n) for p in pools):
                    time.sleep(0.1)
                for p in pools:  # and builds no more: only what a request costs is timed
                    p.size = 0
            spans["cpu0"], spans["t0"] = time.process_time(), time.perf_counter()
            if not args.no_profile:
                server.io_loop.add_callback(profile.enable)
            time.sleep(0.2)
            for _ in range(args.n):
                page = get(port, path)
                if args.pull:
                    pull(port, page)
            spans["cpu1"], spans["t1"] = time.process_time(), time.perf_counter()
        finally:
            server.io_loop.add_callback(profile.disable)
            server.io_loop.add_callback(server.io_loop.stop)

    thread = threading.Thread(target=client, daemon=True)
    server.start()
    thread.start()
    server.io_loop.start()
    thread.join()
    server.stop()

    cpu = (spans["cpu1"] - spans["cpu0"]) / args.n
    wall = (spans["t1"] - spans["t0"]) / args.n
    print(
        f"{args.n} sessions{' with the document pulled' if args.pull else ''}: "
        f"{cpu:.3f} s CPU per session (process, client thread included), {wall:.3f} s wall"
    )
    if args.no_profile:
        return
    stats = pstats.Stats(profile)
    total = max(stats.total_tt, 1e-9)
    print(f"profiled (server loop): {total / args.n:.3f} s per session")
    for name, (file, func) in PARTS.items():
        cum = sum(
            ct
            for (path, _, fn), (_, _, _, ct, _) in stats.stats.items()
            if path.endswith(file) and fn == func
        )
        if cum:
            print(f"  {name:28} {cum / args.n:.3f} s  {100 * cum / total:4.0f}%")
    if args.save:
        profile.dump_stats(args.save)
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(args.top)
    print(out.getvalue())


if __name__ == "__main__":
    main()
