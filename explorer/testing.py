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


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def served_app() -> Iterator[str]:
    """The explorer served in a thread on a free port; yields its base URL, then stops it."""
    import panel as pn

    from explorer.app import app

    port = free_port()
    server = pn.serve(
        {"/": app},
        port=port,
        address="127.0.0.1",
        threaded=True,
        show=False,
        title="Candela Explorer",
    )
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.stop()
