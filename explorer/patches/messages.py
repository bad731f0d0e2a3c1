"""When a page last talked to the server, and which served pages are drawn: Bokeh has no hook.

Two patches on Bokeh's WebSocket handler, read by what waits for a pause of the
pages (:mod:`explorer.patches.collect_at_a_pause`, :mod:`explorer.pool`):

- ``watch_messages``: ``WSHandler.on_message`` notes the time of every message,
  any server's, any session's (:func:`last_message`). Off, the time stays 0.0:
  a collection or a page built ahead no longer waits for the pages to pause.
- ``watch_openings``: ``WSHandler._handle`` notes which sessions have pulled their
  document and which have sent their first change (:data:`OPENING`, kept by the
  pool). Off, a page served and not yet drawn holds the pool back until
  ``explorer.pool.OPENING_S`` passes.
"""

from __future__ import annotations

import time

from . import Patch, register

__all__ = ["OPENING", "last_message", "watch_messages", "watch_openings"]

#: When this process last had a message over a WebSocket (a page pulling its
#: document, an edit, a click), any server's, any session's.
_LAST_MESSAGE = [0.0]

#: Sessions whose page was served and not yet drawn: session id -> (when it was
#: served or its document sent, whether its document was sent). Filled by the pool.
OPENING: dict[str, tuple[float, bool]] = {}


def last_message() -> float:
    """``time.monotonic()`` of the last WebSocket message from any page (0.0: none yet)."""
    return _LAST_MESSAGE[0]


def watch_messages() -> bool:
    """Note the time of every WebSocket message the process gets (if the patch is on)."""
    from . import apply

    return apply("watch_messages")


def watch_openings() -> bool:
    """Note which served pages have pulled their document and which are drawn."""
    from . import apply

    watch_messages()
    return apply("watch_openings")


def _install_on_message() -> None:
    from bokeh.server.views.ws import WSHandler

    if getattr(WSHandler.on_message, "_candela", False):
        return
    on_fragment = WSHandler.on_message

    async def on_message(self, fragment) -> None:
        _LAST_MESSAGE[0] = time.monotonic()
        return await on_fragment(self, fragment)

    on_message._candela = True
    WSHandler.on_message = on_message


def _install_handle() -> None:
    from bokeh.server.views.ws import WSHandler

    if getattr(WSHandler._handle, "_candela", False):
        return
    handle = WSHandler._handle

    async def _handle(self, message):
        connection = getattr(self, "connection", None)
        if OPENING and connection is not None:
            session_id = connection.session.id
            if getattr(message, "msgtype", None) == "PULL-DOC-REQ":  # the views are next
                if session_id in OPENING:
                    OPENING[session_id] = (time.monotonic(), True)
            else:  # the page is drawn: this is its first change
                OPENING.pop(session_id, None)
        return await handle(self, message)

    _handle._candela = True
    WSHandler._handle = _handle


CHECKED = {"bokeh": "3.9", "tornado": "6"}

register(
    Patch(
        name="watch_messages",
        changes="bokeh.server.views.ws.WSHandler.on_message: notes the time, then Bokeh's own",
        why="Bokeh has no hook for a message arriving; the collection and the pool wait "
        "for a pause of the pages",
        buys="what collect_at_a_pause and the pool buy (an edit rarely waits for either)",
        checked=CHECKED,
        needs=("bokeh.server.views.ws:WSHandler.on_message",),
        install=_install_on_message,
    )
)

register(
    Patch(
        name="watch_openings",
        changes="bokeh.server.views.ws.WSHandler._handle: notes a session's PULL-DOC-REQ "
        "and first change, then Bokeh's own",
        why="Bokeh has no hook for a page having pulled its document or being drawn; "
        "the pool builds no page while one is being drawn",
        buys="a page opening is not delayed by a build of the pool (0.6 s of CPU)",
        checked=CHECKED,
        needs=("bokeh.server.views.ws:WSHandler._handle",),
        install=_install_handle,
    )
)
