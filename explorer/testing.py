"""Serving the app in-process and launching Debian's Chromium, for tests, benchmarks and screenshots.

One place for what the browser-driving code shares: where Chromium is, the
flags it needs on a machine with no network but package registries (without
the background-networking flags it keeps dialling closed addresses), a free
port, and the app served on it. Importing this module imports no Panel.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator

#: Debian's Chromium (Playwright cannot download its own browser here).
CHROMIUM = os.environ.get("CANDELA_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


#: A browser-side function ``(m) => (figure, mark) => cells``: given a model finder
#: ``m(name)``, the cells a mark (``"cursor"``, ``"hover"``) frames in a figure
#: (``"logical"``, ``"buffer"``), as columns ``x``, ``y``, ``k``, ``pos`` with one
#: entry per cell (a marks source has a row per ring).
MARKS_JS = """(m) => (fig, kind) => {
  const d = m(`marks-${fig}-source`).data, out = {x: [], y: [], k: [], pos: []};
  for (let i = 0; i < d.mark.length; i++) {
    if (d.mark[i] !== kind || d.ring[i] !== 0) continue;
    for (const key of Object.keys(out)) out[key].push(d[key][i]);
  }
  return out;
}"""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def served_app(make=None, ready: int | None = None) -> Iterator[str]:
    """The explorer (or the page ``make()`` builds) served in a thread on a free port.

    As the command line serves it: the explorer with ``ready`` pages built
    ahead (:mod:`explorer.pool`; default 2), another page with none (it may
    well show one object in every session). Yields its base URL, then stops
    the server.
    """
    import panel as pn

    from explorer.app import app
    from explorer.serving import server_settings

    ready = (2 if make is None else 0) if ready is None else ready
    make = make or app

    port = free_port()
    server = pn.serve(
        {"/": lambda: make()},  # a function: Panel serves other callables as objects
        port=port,
        address="127.0.0.1",
        threaded=True,
        show=False,
        title="Candela Explorer",
        **server_settings(),  # served as the command line serves it
    )
    prepare_threaded(server, ready=ready)
    wait_for_port(port)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.stop()


def prepare_threaded(thread, timeout: float = 20.0, ready: int = 0) -> None:
    """:func:`explorer.serving.prepare_server` for a server ``pn.serve(threaded=True)`` starts.

    The server is built in its thread; this waits until it exists, before any
    request is made.
    """
    import time

    from panel.io.state import state

    from explorer.serving import prepare_server

    deadline = time.monotonic() + timeout
    while thread.server_id not in state._servers:  # Panel's registry of its servers
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server thread did not start a server")
        time.sleep(0.02)
    prepare_server(state._servers[thread.server_id][0], ready=ready)


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    """Return once something accepts connections on 127.0.0.1:``port`` (a server in a thread)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f} s")
        time.sleep(0.05)
