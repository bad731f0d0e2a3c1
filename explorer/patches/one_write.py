"""A message to a page goes to its socket in one write: an edit's answer, Bokeh's replies.

Patch ``one_write_per_message``: Panel's ``panel.io.document.dispatch_tornado`` and
Bokeh's ``Message.send`` are replaced by ones that frame a message as Tornado's
``write_message`` does and write the frames together (see
:func:`one_write_per_message`).
"""

from __future__ import annotations

import asyncio
import json

from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError

from . import Patch, apply, register

__all__ = ["one_write_per_message"]


def one_write_per_message() -> bool:
    """A message to a page goes to its socket in one write: an edit's answer, Bokeh's replies.

    Bokeh's protocol sends a message as several WebSocket frames (header,
    metadata, content, then a header and the bytes of each binary column).
    Panel wrote each frame of an edit's answer to the socket as soon as it was
    made (13 system calls at 64x64, each waking the page's connection), and
    Bokeh writes its reply to each message a page sends frame by frame, giving
    way to the event loop after each. The frames are made as Tornado's
    ``write_message`` makes them (framing, compression) and written together,
    byte for byte the same on the wire, without the task ``write_message``
    starts for each frame (16 an edit, each a turn of the event loop).
    ``dispatch_tornado``, ``Message.send``'s order of frames, the connection's
    ``stream`` and ``write_lock`` and Tornado's framing have no public handle;
    if they move, each frame is written as before.
    """
    return apply("one_write_per_message")


def _install() -> None:
    from bokeh.protocol.message import Message
    from panel.io import document

    dispatch = document.dispatch_tornado
    if getattr(dispatch, "_candela", False):
        return
    send = Message.send

    def dispatch_tornado(conn, events=None, msg=None):
        socket = getattr(conn, "_socket", None)
        ws = getattr(socket, "ws_connection", None)
        if _stream(socket) is None or not _can_frame(ws):
            return dispatch(conn, events, msg)
        if ws.is_closing():
            return []
        if msg is None:
            if not events:
                return []
            msg = conn.protocol.create("PATCH-DOC", events)
        _, written = _in_one_write(socket, lambda: _write_frames(ws, _frames_of(msg)))
        return [] if written is None else [written]

    async def send_at_once(self, conn):
        ws = getattr(conn, "ws_connection", None)
        if _stream(conn) is None or not hasattr(conn, "write_lock") or not _can_frame(ws):
            return await send(self, conn)
        with await conn.write_lock.acquire():
            parts = _frames_of(self)
            if ws.is_closing():
                raise WebSocketClosedError()
            _, written = _in_one_write(conn, lambda: _write_frames(ws, parts))
            if written is not None:
                await written
            return sum(len(data) for data, _ in parts)

    dispatch_tornado._candela = True
    document.dispatch_tornado = dispatch_tornado
    Message.send = send_at_once


def _frames_of(msg) -> list[tuple[str | bytes, bool]]:
    """A Bokeh message's WebSocket frames, in Bokeh's order: (data, binary)."""
    parts = [(msg.header_json, False), (msg.metadata_json, False), (msg.content_json, False)]
    for buffer in msg._buffers:
        parts += [(json.dumps(buffer.ref), False), (buffer.to_bytes(), True)]
    return parts


def _can_frame(ws) -> bool:
    """Whether Tornado's WebSocket connection ``ws`` has the framing :func:`_write_frames` uses."""
    return all(hasattr(ws, name) for name in ("_write_frame", "_compressor", "RSV1", "is_closing"))


def _write_frames(ws, parts) -> None:
    """Each (data, binary) framed as Tornado's ``write_message`` frames it, without its task."""
    for data, binary in parts:
        if isinstance(data, str):
            data = data.encode("utf-8")
        ws._message_bytes_out = getattr(ws, "_message_bytes_out", 0) + len(data)
        flags = 0
        if ws._compressor is not None:
            data = ws._compressor.compress(data)
            flags |= ws.RSV1
        ws._write_frame(True, 0x2 if binary else 0x1, data, flags=flags)


def _stream(socket):
    """The Tornado stream under a WebSocket handler, if it is open and not already collecting."""
    stream = getattr(getattr(socket, "ws_connection", None), "stream", None)
    if stream is None or "write" in vars(stream) or not hasattr(stream, "write"):
        return None
    return stream


def _in_one_write(socket, make):
    """``make()``'s result, with every frame it writes to ``socket`` written at once.

    Returns the result and the future of that one write (None when nothing was written).
    """
    stream = _stream(socket)
    write, frames = stream.write, []

    def collect(data):
        frames.append(bytes(data))
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    stream.write = collect
    try:
        result = make()
    finally:
        del stream.write
    if not frames:
        return result, None
    try:
        return result, write(b"".join(frames))
    except StreamClosedError:  # as Tornado's own write_message says it
        raise WebSocketClosedError() from None


register(
    Patch(
        name="one_write_per_message",
        changes="panel.io.document.dispatch_tornado and bokeh.protocol.message.Message.send "
        "(replaced; each falls back to the framework's own when a name it reads is missing)",
        why="an edit's answer went as a dozen writes and tasks, one per WebSocket frame",
        buys="13 system calls and 16 turns of the event loop an edit, fewer",
        checked={"panel": "1.9", "bokeh": "3.9", "tornado": "6"},
        needs=(
            "panel.io.document:dispatch_tornado",
            "bokeh.protocol.message:Message.send",
            "tornado.websocket:WebSocketProtocol13._write_frame",
            "tornado.websocket:WebSocketProtocol13.RSV1",
        ),
        install=_install,
    )
)
