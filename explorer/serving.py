"""How the explorer is served: compressed, only the Bokeh bundles it uses, no per-session checks.

Every server of the app (``candela-explorer``, :func:`explorer.testing.served_app`,
the benchmarks) starts from :func:`server_settings` and calls
:func:`prepare_server` before it serves:

- **gzip**: HTML, JavaScript, CSS and JSON go gzip-compressed to a browser that
  asks for it (Tornado's ``compress_response``, through the transform below):
  the five largest files of a first load go from 2.9 MB to about 0.8 MB. The
  static files (Bokeh's and Panel's bundles, the same for every student) are
  compressed once per process and kept; only the page itself is compressed
  per request.
- **The WebSocket** is compressed too (permessage-deflate, which every
  browser offers): the document a page pulls when it opens (about 600 KB at
  64x64, more than all the JavaScript once gzipped) and every edit's answer.
  Bokeh's server leaves it off unless told a level; level 1 costs a few
  milliseconds a session, and each open connection keeps a compressor
  (about 0.3 MB with zlib's defaults).
- **Bundles**: Bokeh's server puts every one of its bundles in the page.
  ``bokeh-gl`` (WebGL) is never used: every figure draws on a canvas
  (``output_backend="canvas"``). ``bokeh-tables`` is not used either, but
  Panel 1.9's own bundle needs it to load (its Tabulator imports Bokeh's table
  module when ``panel.min.js`` runs), so it stays. The offline page
  (:mod:`explorer.export`) leaves out the same bundle. A notebook keeps them
  all: Panel's extension is loaded once for the whole notebook page, whose
  other outputs may well draw with WebGL.
- **No document validation per session**: Bokeh checks each new session's
  models for modelling mistakes (``BOKEH_VALIDATE_DOC``), which only ever logs,
  and costs each session walks over all its models: about a tenth of a
  session's CPU. The page is the same every time, so a test validates it once
  (``tests/explorer/test_serving.py``) and the server does not.

- **No wait before an edit** (:func:`immediate_changes`): Panel holds each
  change a page sends for 50 ms before handling it, in case more follow
  (a slider being dragged). A box, a list or a checkbox of the explorer sends
  one change per thing a person does: those are handled at once.
- **No wait after an edit** (also :func:`immediate_changes`): a change is
  handled once the server's reply to the message that brought it has been
  sent. Handled sooner, between the frames of that reply, its answer found the
  WebSocket busy and Panel sent it 10 ms later: over a quarter of the 40 ms
  an edit took on the server.
- **A change from a page unlocks only what is locked** (:func:`light_unlock`).
- **One write per message** (:func:`one_write_per_message`): an edit's answer
  (a dozen WebSocket frames) and Bokeh's reply to each message from a page go
  to the socket in one write each, not one a frame.
- **Garbage collected at a pause, memory back to the system**
  (:func:`collect_at_a_pause`): the full collection that frees ended sessions
  waits for a moment no page is sending, then the C library's free pages are
  returned; what the process holds before it serves is left out of every
  collection (:func:`freeze_lasting`).

- **Only its own names** (:func:`host_check`): a request whose ``Host`` is
  not a name the server is reached at (the same list its WebSocket accepts as
  origins) gets 403 and a one-line body instead of the page. That closes DNS
  rebinding: a foreign site whose name is made to resolve to this machine
  could otherwise read the page (and its session token) as its own; its
  WebSocket was already refused by origin.

Nothing here holds a session's state: the one thing kept across requests is
the compressed bytes of static files, keyed by path and content hash.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import gc
import json
import time
from typing import Any

from tornado.httputil import HTTPHeaders
from tornado.iostream import StreamClosedError
from tornado.web import GZipContentEncoding, OutputTransform
from tornado.websocket import WebSocketClosedError

__all__ = [
    "UNUSED_BUNDLES",
    "WEBSOCKET_COMPRESSION_LEVEL",
    "CompressStaticOnce",
    "collect_at_a_pause",
    "freeze_lasting",
    "host_check",
    "immediate_changes",
    "last_message",
    "lean_process",
    "lean_resources",
    "prepare_server",
    "server_settings",
    "watch_messages",
]

#: zlib level of the WebSocket's permessage-deflate: 1 is nearly as small as 6 at a
#: quarter of the CPU (the 64x64 document: 599 KB to 95 KB in 4 ms; level 6: 77 KB, 17 ms).
WEBSOCKET_COMPRESSION_LEVEL = 1

#: Bokeh's bundles the page never uses (its figures draw on a canvas, not with WebGL).
UNUSED_BUNDLES = ("bokeh-gl",)


class CompressStaticOnce(GZipContentEncoding):
    """Tornado's gzip transform, with each static file compressed once per process.

    A static file (``/static/...``, answered whole with an ``Etag``, the hash of
    its content) is compressed the first time a browser asks for it; later
    requests get the same bytes without compressing them again. Everything
    else (the page, a range, a 304) is compressed per response as Tornado does.
    Compressing Bokeh's and Panel's bundles costs about 0.12 s of CPU per
    first load otherwise, for every student.
    """

    #: (path, etag) -> the gzip-encoded body. Bounded: static files are a fixed set.
    _cache: dict[tuple[str, str], bytes] = {}
    MAX_BYTES = 32 * 2**20

    def __init__(self, request) -> None:
        super().__init__(request)
        static = request.method == "GET" and request.path.startswith("/static/")
        self._path = request.path if static else None
        self._key: tuple[str, str] | None = None
        self._parts: list[bytes] | None = None
        self._from_cache = False

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        etag = headers.get("Etag")
        if self._path and self._gzipping and status_code == 200 and etag:
            ctype = str(headers.get("Content-Type", "")).split(";")[0]
            if self._compressible_type(ctype) and "Content-Encoding" not in headers:
                self._key = (self._path, etag)
        cached = self._cache.get(self._key) if self._key else None
        if cached is not None:
            headers["Vary"] = (headers["Vary"] + ", " if "Vary" in headers else "") + (
                "Accept-Encoding"
            )
            headers["Content-Encoding"] = "gzip"
            headers["Content-Length"] = str(len(cached))
            self._from_cache = True
            return status_code, headers, cached
        if self._key:
            self._parts = []
        status_code, headers, chunk = super().transform_first_chunk(
            status_code, headers, chunk, finishing
        )
        if not self._gzipping:
            self._parts = None
        return status_code, headers, chunk

    def transform_chunk(self, chunk: bytes, finishing: bool) -> bytes:
        if self._from_cache:
            return b""  # the whole body went with the first chunk
        chunk = super().transform_chunk(chunk, finishing)
        if self._parts is not None:
            self._parts.append(chunk)
            if finishing and self._key:
                body = b"".join(self._parts)
                if sum(map(len, self._cache.values())) + len(body) <= self.MAX_BYTES:
                    self._cache[self._key] = body
                self._parts = None
        return chunk


def _host_names(hosts) -> frozenset[str]:
    # "name:port" as an origin list has them; a browser leaves ":80" out of Host.
    names = set()
    for host in hosts:
        host = str(host).strip().lower()
        names.add(host)
        if host.endswith(":80"):
            names.add(host[:-3])
    return frozenset(names)


def host_check(hosts) -> type[OutputTransform]:
    """A Tornado transform that answers 403 to a request whose ``Host`` is not in ``hosts``.

    ``hosts`` are ``name:port`` as the server's allowed WebSocket origins are
    written. The refused request's own answer never reaches the client: its
    status, headers and body are replaced.
    """
    allowed = _host_names(hosts)

    class HostCheck(OutputTransform):
        def __init__(self, request) -> None:
            super().__init__(request)
            self.host = (request.headers.get("Host") or "").strip().lower()
            self.refused = self.host not in allowed

        def transform_first_chunk(self, status_code, headers, chunk, finishing):
            if not self.refused:
                return status_code, headers, chunk
            body = (
                f"403: this server does not answer to the name {self.host[:200]!r}; "
                "start it with --allow-origin for that name\n"
            ).encode()
            refusal = HTTPHeaders({"Content-Type": "text/plain; charset=utf-8"})
            refusal["Content-Length"] = str(len(body))
            return 403, refusal, body

        def transform_chunk(self, chunk: bytes, finishing: bool) -> bytes:
            return b"" if self.refused else chunk

    return HostCheck


def server_settings() -> dict[str, Any]:
    """Keyword arguments for :func:`panel.serve` (passed through Bokeh to Tornado)."""
    # ``transforms`` replaces what ``compress_response=True`` would add (Tornado's
    # plain GZipContentEncoding); the setting is kept so Tornado's own code sees it.
    return {
        "compress_response": True,
        "transforms": [CompressStaticOnce],
        # permessage-deflate for the WebSocket, when the browser offers it (all do).
        "websocket_compression_level": WEBSOCKET_COMPRESSION_LEVEL,
    }


#: The garbage of ended sessions is collected once no page has sent a message for this
#: long (s) and no session has ended for Panel's 5 s (:func:`collect_at_a_pause`).
COLLECT_QUIET_S = 1.0
#: ... or this long (s) after Panel asked for it, pause or not.
COLLECT_WITHIN_S = 30.0

#: When this process last had a message over a WebSocket (a page pulling its
#: document, an edit, a click), any server's, any session's (:func:`watch_messages`).
_LAST_MESSAGE = [0.0]


def watch_messages() -> None:
    """Note the time of every WebSocket message the process gets (Bokeh has no hook for it)."""
    from bokeh.server.views.ws import WSHandler

    if getattr(WSHandler.on_message, "_candela", False):
        return
    on_fragment = WSHandler.on_message

    async def on_message(self, fragment) -> None:
        _LAST_MESSAGE[0] = time.monotonic()
        return await on_fragment(self, fragment)

    on_message._candela = True
    WSHandler.on_message = on_message


def last_message() -> float:
    """``time.monotonic()`` of the last WebSocket message from any page (0.0: none yet)."""
    return _LAST_MESSAGE[0]


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (another C library, another system); looked up once
    (``find_library`` may run ``ldconfig``)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


#: The collection waiting for a pause: when Panel asked for it (``time.monotonic()``),
#: or None; how many were done, and the last few: (when each ended, how long it took in ms).
_COLLECTION: dict[str, Any] = {"asked": None, "count": 0, "done": collections.deque(maxlen=20)}


def collect_at_a_pause() -> None:
    """Panel's collection of ended sessions' garbage waits for a pause of the pages; then the
    memory those sessions held goes back to the system.

    A closed page's session lives on in cycles of references (its Bokeh models,
    Panel's watchers: about 11,000 of its 14,000 objects), freed only by a full
    ``gc.collect()``. Panel runs one 5 s after a session ends (debounced). A
    full collection walks every object of every open session: it holds the
    server for about 10 ms a session open (0.3 s with 30 open; 0.46 s before
    :func:`freeze_lasting`), and every edit that comes meanwhile waits. Here it waits for a moment when no page has
    sent a message for :data:`COLLECT_QUIET_S` and no session has ended for
    Panel's 5 s, and runs at the latest :data:`COLLECT_WITHIN_S` after Panel
    asked: a class pauses between tasks, and a student's edit is rarely the
    one that waits.

    Then glibc's ``malloc_trim`` hands the freed pages back (about 8 ms): else
    the C library keeps them for the process to use again, and 200 sessions
    opened and ended left the server 35-57 MB larger, though nothing of them was
    left. Installed once however often this is called.
    """
    import panel.io.application as panel_application
    import panel.io.document as panel_document

    if getattr(panel_document._garbage_collect, "_candela", False):
        return
    watch_messages()
    panel_document._garbage_collect = _garbage_collect
    # Panel asks through its scheduler, which holds one task of a name for the whole
    # process, on the loop of the server whose session ended: if that server stops before
    # it runs, no later session of any server is collected. Asked here as well, on the
    # loop the session ended on.
    destroy = panel_application._destroy_document  # what each of its documents gets

    def _destroy_document(self, session) -> None:
        destroy(self, session)
        _garbage_collect()

    panel_application._destroy_document = _destroy_document


def _garbage_collect() -> None:
    """In place of Panel's ``_garbage_collect`` (it calls it 5 s after a session ends)."""
    asked, now = _COLLECTION["asked"], time.monotonic()
    # One collection waits at a time; one overdue waited on a loop that has stopped since
    # (a server stopped: its callbacks never run), and this one takes its place.
    if asked is None or now - asked > COLLECT_WITHIN_S + 5:
        _COLLECTION["asked"] = now
        _collect_when_quiet()


_garbage_collect._candela = True


def _session_ended() -> float:
    """When Panel may next collect, by its own rule: 5 s after the last session ended."""
    import panel.io.document as panel_document

    return getattr(panel_document, "_panel_last_cleanup", 0.0) + panel_document.GC_DEBOUNCE


def _collect_when_quiet() -> None:
    from tornado.ioloop import IOLoop

    now = time.monotonic()
    quiet_at = max(last_message() + COLLECT_QUIET_S, _session_ended())
    if quiet_at > now and now - _COLLECTION["asked"] < COLLECT_WITHIN_S:
        IOLoop.current().call_later(max(0.05, quiet_at - now), _collect_when_quiet)
        return
    _COLLECTION["asked"] = None
    t0 = time.perf_counter()
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
    _COLLECTION["done"].append((time.monotonic(), (time.perf_counter() - t0) * 1000))
    _COLLECTION["count"] += 1


def freeze_lasting() -> None:
    """Leave what the process holds before it serves out of every later collection.

    Its modules, classes and functions (about 146,000 objects: Panel, Bokeh,
    NumPy, the explorer) live as long as the process, yet every full
    collection walked them all: about 130 ms each time, a quarter of one with
    30 sessions open. ``gc.freeze()`` moves them aside for good. Only the first
    call does it: a later one, made while sessions are open, would keep their
    garbage for ever.
    """
    if _FROZEN[0]:
        return
    _FROZEN[0] = True
    gc.collect()
    gc.freeze()


_FROZEN = [False]


def lean_resources(resources):
    """``resources`` (Bokeh's ``Resources``) without the bundles the page never uses."""
    return resources.clone(components=[c for c in resources.components if c not in UNUSED_BUNDLES])


def prepare_server(server, ready: int = 0) -> None:
    """Before ``server`` (what :func:`panel.serve` returns) serves: lean pages, no validation.

    Its pages then list only the bundles the explorer uses; every session of
    every server in this process skips Bokeh's document validation and is
    sent without working out default values (:func:`lean_serialization`) or
    Panel's report of the browser (:func:`no_browser_info`), and a change from
    a page is handled at once (:func:`immediate_changes`); with ``ready``, up
    to that many pages are built ahead of the requests that take them, for the
    app at ``/`` (:mod:`explorer.pool`). The memory of sessions that end goes
    back to the system at a pause of the pages (:func:`collect_at_a_pause`); what
    the process holds before it serves is left out of every collection
    (:func:`freeze_lasting`).
    """
    lean_process()
    import explorer.app  # noqa: F401  (imported before the freeze: it lasts as long)

    freeze_lasting()
    if ready > 0:
        from explorer.app import open_page
        from explorer.classroom import catalogue_stamp
        from explorer.pool import install

        install(server, ready, arrive=open_page, stamp=catalogue_stamp)
    tornado_app = server._tornado  # Bokeh's Tornado application: no public handle
    if getattr(tornado_app, "_candela_lean", False):
        return
    full = tornado_app.resources

    def resources(absolute_url=None):
        return lean_resources(full(absolute_url))

    tornado_app.resources = resources
    tornado_app._candela_lean = True


def lean_process() -> None:
    """Every per-process change of this module, for any server of the app.

    :func:`prepare_server` calls it, and so does ``panel serve explorer/app.py``
    (which has no :func:`prepare_server`): each server of the app then handles
    a session and an edit the same way. Each change is installed once however
    often this is called.
    """
    from bokeh.settings import settings

    settings.perform_document_validation.set_value(False)
    no_browser_info()
    lean_serialization()
    unparsed_location()
    immediate_changes()
    one_write_per_message()
    light_unlock()
    collect_at_a_pause()


def _query_properties_with_values(
    self, query, *, include_defaults: bool = True, include_undefined: bool = False
) -> dict[str, Any]:
    """Bokeh 3.9's ``HasProps.query_properties_with_values``, without working out skipped values.

    Bokeh's own asks every property for its value and only then drops those
    left at their default (when ``include_defaults`` is false, as serializing
    a model does); working out a default is most of the cost of sending a page
    (about 60% of a session whose page was built ahead). This skips a property
    before asking for its value when the answer would be dropped anyway: the
    same result for every model whose required properties are set (which
    Bokeh's validation demands); ``tests/explorer/test_serving.py`` holds it to
    Bokeh's own on every model of a page.
    """
    from bokeh.core.property.descriptors import UnsetValueError
    from bokeh.core.property.wrappers import PropertyValueContainer

    if include_defaults:
        return _BOKEH_QUERY(
            self, query, include_defaults=include_defaults, include_undefined=include_undefined
        )
    themed_keys: set[str] = set()
    result: dict[str, Any] = {}
    keys = self.properties(_with_props=True)
    selected = set(self._property_values) | set(self._unstable_default_values)
    themed_values = self.themed_values()
    if themed_values is not None:
        themed_keys = set(themed_values)
        selected |= themed_keys
    for key in keys:
        if key not in selected:
            continue
        descriptor = self.lookup(key)
        if not query(descriptor):
            continue
        try:
            value = descriptor.get_value(self)
        except UnsetValueError:
            if include_undefined:
                from bokeh.core.property.singletons import Undefined

                value = Undefined
            else:
                raise
        else:
            if key not in themed_keys:
                if (
                    isinstance(value, PropertyValueContainer)
                    and key in self._unstable_default_values
                ):
                    continue
        result[key] = value
    return result


_BOKEH_QUERY = None


def lean_serialization(on: bool = True) -> None:
    """Serialize models (a page's document, an edit's new models) without working out defaults.

    In this process, for every document: see :func:`_query_properties_with_values`.
    """
    global _BOKEH_QUERY
    from bokeh.core.has_props import HasProps

    if _BOKEH_QUERY is None:
        _BOKEH_QUERY = HasProps.query_properties_with_values
    HasProps.query_properties_with_values = _query_properties_with_values if on else _BOKEH_QUERY


def unparsed_location() -> None:
    """Panel's ``Location`` parses its query only for objects synced to it (the explorer syncs none).

    Panel's own parses the query on every change of the URL, whether anything
    is synced or not, and turns each all-digit value into an ``int``: a query
    value of more than 4,300 digits (Python's limit for converting text to
    ``int``) raised, and the page answered HTTP 500. The explorer reads its
    query itself (:mod:`explorer.url`), with its own limits.
    """
    from panel.io.location import Location

    update = Location._update_synced
    if getattr(update, "_candela", False):
        return

    def _update_synced(self, event=None) -> None:
        if self._synced:
            update(self, event)

    _update_synced._candela = True
    Location._update_synced = _update_synced


def no_browser_info() -> None:
    """Pages without Panel's report of the browser (language, time zone, dark mode).

    Nothing here reads it, and it is a model more in every session, sent with
    every page.
    """
    import panel as pn

    pn.config.browser_info = False


def immediate_changes() -> None:
    """In a served page, a change from the browser to a text box, list or checkbox is handled
    at once, not after Panel's 50 ms wait for more, and answered at once (see
    :func:`_answer_at_once`).

    Panel waits ``_debounce`` ms before handling the first change a page sends
    for a widget, so that a burst (a slider dragged) is handled once. These
    widgets send one change per action (Enter in a box, a choice in a list, a
    click), so the wait was a fixed 50 ms on every edit. The slider keeps it.
    Panel has no public setting for it; in a notebook Panel does not wait.
    """
    import panel as pn

    for widget in (
        pn.widgets.TextInput,
        pn.widgets.Select,
        pn.widgets.RadioButtonGroup,
        pn.widgets.Checkbox,
    ):
        widget._debounce = 0
    _answer_at_once()


def _answer_at_once() -> None:
    """Panel handles a change from a page only once Bokeh's reply to its message is sent.

    Bokeh acknowledges each message a page sends with a reply written under the
    WebSocket's write lock, frame by frame, giving way to the event loop between
    frames. Panel's handling of the change ran in one of those gaps; when its
    answer (the new figures, fields and boxes) was ready, the lock was still
    held, and Panel tries again only after 10 ms (``panel.io.document``). Waiting
    for the lock first (a free lock costs nothing) sends the answer as soon as
    it is made. ``_change_coroutine``, the session's ``_subscribed_connections``
    and the socket's ``write_lock`` have no public handle; if Panel or Bokeh
    move them, nothing waits and the test of this fails.
    """
    from panel.reactive import Syncable

    handle = Syncable._change_coroutine
    if getattr(handle, "_candela", False):
        return

    async def _change_coroutine(self, doc, *args, **kwargs):
        context = getattr(doc, "session_context", None)
        session = getattr(context, "session", None)
        for connection in list(getattr(session, "_subscribed_connections", None) or ()):
            lock = getattr(getattr(connection, "_socket", None), "write_lock", None)
            if lock is not None:
                async with lock:  # the reply being written, if any, is out
                    pass
        return await handle(self, doc, *args, **kwargs)

    _change_coroutine._candela = True
    Syncable._change_coroutine = _change_coroutine


def one_write_per_message() -> None:
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


def light_unlock() -> None:
    """Panel unlocks only a widget's locked parameters to apply a change from its page.

    For every change a page sends, Panel makes each of the widget's parameters
    writable and then puts each back (``edit_readonly``): 28 parameters of a
    text box, each set four times, 0.4 ms of every message, to unlock none (the
    explorer's boxes have no locked parameter). Only those locked (read-only or
    constant) are unlocked and put back now, as before. ``edit_readonly`` is
    looked up in ``panel.reactive`` by name; if it moves, Panel's own is used.
    """
    import contextlib

    from panel import reactive

    if getattr(reactive.edit_readonly, "_candela", False):
        return

    @contextlib.contextmanager
    def edit_readonly(parameterized):
        locked = [
            (p, p.readonly, p.constant)
            for p in parameterized.param.objects("existing").values()
            if p.readonly or p.constant
        ]
        for p, _, _ in locked:
            p.readonly = p.constant = False
        try:
            yield
        finally:
            for p, readonly, constant in locked:
                p.readonly, p.constant = readonly, constant

    edit_readonly._candela = True
    reactive.edit_readonly = edit_readonly
