"""What one WebSocket connection can make the server hold is bounded: past it, it is closed.

A Bokeh message is a header, metadata and content (three text frames), then, for each
of the ``num_buffers`` its header declares, a buffer header and a binary frame. Bokeh
keeps every buffer of a message until the last one comes: a header declaring
``num_buffers: 10**9`` and then many binary frames, each under the size limit of one
frame, held memory without end (1,000 frames of 60 KB: a worker from 100 to 157 MB),
for a message that never completes, and nothing checking whole messages ever saw it.

The explorer's pages send no buffers at all. So each connection's frames are followed
as Bokeh's protocol lays them out, before Bokeh reads them (:class:`FrameBudget`), and
the connection is closed, unread, with one log line, once a message:

- declares more than :data:`MAX_BUFFERS` buffers, or
- has sent more than :data:`MAX_BUFFER_BYTES` of buffers.

Each message is held until it is whole and then judged before Bokeh reads any of
it: a message a page never sends, or a change no person can make on the page
(:func:`explorer.page_changes.refusal`), is answered with a short ``ERROR`` and one
log line, and never reaches Bokeh. Every ``ERROR`` a page is sent, Bokeh's own
included, says only the kind of failure: never the server's traceback (file paths,
versions).

This is the explorer's own, not a patch: on with every patch off. Each served app's
``/ws`` route is given :class:`BoundedWSHandler`, a subclass of Panel's WebSocket handler
that overrides Tornado's public ``on_message``, through Tornado's public
``Application.add_handlers`` (its rules come before the application's own). Bokeh's
server exposes its Tornado application only as ``server._tornado``: the one private
name read here; without it :func:`bound_connections` raises, and nothing serves.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from panel.io.server import WSHandler

__all__ = [
    "MAX_BUFFERS",
    "MAX_BUFFER_BYTES",
    "BoundedWSHandler",
    "FrameBudget",
    "bound_connections",
]

log = logging.getLogger("candela-explorer")

#: The most buffers one message may declare (the explorer's pages send none).
MAX_BUFFERS = 8
#: The most bytes of buffers one message may send before it is complete.
MAX_BUFFER_BYTES = 1 << 20
#: The WebSocket close code: "message too big" (RFC 6455).
CLOSE_CODE = 1009


class FrameBudget:
    """Follows one connection's frames as Bokeh's protocol lays them out; :meth:`over`
    says why a frame goes past a bound (None while within)."""

    def __init__(self) -> None:
        self.text_left = 3  # header, metadata, content
        self.buffers = 0  # buffers the message being read still expects
        self.expect_binary = False
        self.bytes = 0

    def over(self, fragment: str | bytes) -> str | None:
        if isinstance(fragment, bytes):
            self.bytes += len(fragment)
            if self.bytes > MAX_BUFFER_BYTES:
                return f"more than {MAX_BUFFER_BYTES:,} bytes of buffers in one message"
            if self.expect_binary:
                self.expect_binary = False
                self.buffers -= 1
                if self.buffers <= 0:
                    self._next_message()
            return None  # out of place: Bokeh refuses it and closes the connection
        if self.text_left == 3:  # a message's header
            try:
                header = json.loads(fragment)
                declared = header.get("num_buffers", 0) if isinstance(header, dict) else 0
            except ValueError:
                declared = 0  # Bokeh refuses it and closes the connection
            if not isinstance(declared, int) or isinstance(declared, bool):
                declared = 0
            if declared > MAX_BUFFERS:
                return f"a message declaring {declared:,} buffers, more than {MAX_BUFFERS}"
            self.buffers = max(declared, 0)
            self.text_left = 2
        elif self.text_left > 0:
            self.text_left -= 1
            if self.text_left == 0 and self.buffers == 0:
                self._next_message()
        else:  # a buffer's header: its binary frame comes next
            self.expect_binary = True
        return None

    def _next_message(self) -> None:
        self.text_left, self.buffers, self.expect_binary, self.bytes = 3, 0, False, 0


#: What a page is told when the server could not handle its message.
REPLY = "the server could not handle this message ({kind})"


class BoundedWSHandler(WSHandler):
    """Panel's WebSocket handler: a connection past :class:`FrameBudget`'s bounds is
    closed; each message is judged whole before Bokeh reads it; errors say no more
    than their kind."""

    async def on_message(self, fragment: str | bytes) -> None:
        budget = getattr(self, "candela_budget", None)
        if budget is None:
            budget = self.candela_budget = FrameBudget()
            self.candela_held = []
        why = budget.over(fragment)
        if why is not None:
            return self._close_over(why)
        self.candela_held.append(fragment)
        if budget.text_left != 3:
            return None  # the message is not whole yet: nothing of it reaches Bokeh
        frames, self.candela_held = self.candela_held, []
        refused = self._refusal(frames)
        if refused is not None:
            return await self._refuse(frames, refused)
        for frame in frames:
            await super().on_message(frame)
        return None

    def _refusal(self, frames: list) -> str | None:
        """Why a whole message is refused (None: Bokeh reads it, and refuses what it
        cannot parse itself)."""
        from .page_changes import PAGE_MESSAGES, refusal

        try:
            header = json.loads(frames[0])
            msgtype = header.get("msgtype")
        except (TypeError, ValueError, AttributeError):
            return None
        if msgtype not in PAGE_MESSAGES:
            return f"a {str(msgtype)[:40]} message, which a page never sends"
        if msgtype != "PATCH-DOC":
            return None
        if len(frames) != 3:
            return "binary buffers"
        session = getattr(getattr(self, "connection", None), "session", None)
        if session is None:
            return "a change before the page's session is open"
        try:
            return refusal(session.document, json.loads(frames[2]))
        except Exception as exc:  # a judge that cannot read it refuses it
            return f"unreadable ({type(exc).__name__})"

    async def _refuse(self, frames: list, why: str) -> None:
        session = getattr(getattr(self, "connection", None), "session", None)
        log.warning(
            "refused a change from a page of session %.12s…: %s",
            getattr(session, "id", "(none)"),
            why,
        )
        try:
            msgid = json.loads(frames[0]).get("msgid")
        except (TypeError, ValueError, AttributeError):
            msgid = None
        protocol = getattr(getattr(self, "connection", None), "protocol", None)
        if protocol is None or not isinstance(msgid, str):
            return None
        reply = protocol.create("ERROR", msgid[:64], f"refused: {why}"[:200])
        reply.content = {"text": reply.content.get("text", ""), "traceback": None}
        await self.send_message(reply)
        return None

    async def send_message(self, message: Any) -> None:
        if message.msgtype == "ERROR" and not str(message.content.get("text", "")).startswith(
            "refused: "
        ):
            # Bokeh's own error reply carries the server's traceback: only its kind goes
            lines = str(message.content.get("traceback") or "").strip().splitlines()
            kind = lines[-1].split(":", 1)[0].strip()[:60] if lines else "error"
            message.content = {"text": REPLY.format(kind=kind or "error"), "traceback": None}
        return await super().send_message(message)

    def _close_over(self, why: str) -> None:
        if not getattr(self, "candela_closed", False):
            self.candela_closed = True
            log.warning(
                "refused a WebSocket connection from %s: %s; closed",
                str(self.request.remote_ip)[:60],
                why,
            )
            self.close(CLOSE_CODE, "message too big")
        return None


def bound_connections(server: Any) -> None:
    """Route every ``/ws`` of ``server`` (what :func:`panel.serve` returns) to
    :class:`BoundedWSHandler`; once per server."""
    from bokeh.server.views.ws import WSHandler as BokehWSHandler

    app = getattr(server, "_tornado", None)
    rules = getattr(getattr(app, "wildcard_router", None), "rules", None)
    if app is None or rules is None:
        raise RuntimeError(
            "cannot bound what a WebSocket connection holds: this Bokeh server has no "
            "_tornado.wildcard_router"
        )
    if getattr(app, "candela_bounded", False):
        return
    routes = []
    for rule in list(rules):
        target = getattr(rule, "target", None)
        pattern = getattr(getattr(rule, "matcher", None), "regex", None)
        if isinstance(target, type) and issubclass(target, BokehWSHandler) and pattern:
            if not issubclass(target, BoundedWSHandler):
                routes.append((pattern.pattern, BoundedWSHandler, dict(rule.target_kwargs)))
    if not routes:
        raise RuntimeError("cannot bound what a WebSocket connection holds: no /ws route found")
    app.add_handlers(r".*$", routes)
    app.candela_bounded = True
