"""How the explorer is served: compressed, no per-session checks, the patches of a served process.

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
- **Bundles**: Bokeh's server puts every one of its bundles in the page, as it
  does. ``bokeh-gl`` (WebGL) is never used: every figure draws on a canvas
  (``output_backend="canvas"``), and the offline page (:mod:`explorer.export`)
  leaves it out (:func:`lean_resources`). Leaving it out of served pages took a
  change to Bokeh's server and saved 7% of the bytes of a first load: less than
  a tenth, so served pages keep it. ``bokeh-tables`` is not used either, but
  Panel 1.9's own bundle needs it to load (its Tabulator imports Bokeh's table
  module when ``panel.min.js`` runs); Panel 1.10's does not, and leaves it out
  itself. A notebook keeps them all.
- **No document validation per session**: Bokeh checks each new session's
  models for modelling mistakes (``BOKEH_VALIDATE_DOC``), which only ever logs,
  and costs each session walks over all its models: about a tenth of a
  session's CPU. The page is the same every time, so a test validates it once
  (``tests/explorer/test_serving.py``) and the server does not.

- **Patches** (:data:`SERVER_PATCHES`, each in :mod:`explorer.patches`, each
  optional): models serialized without working out defaults, no 50 ms wait
  before an edit, one write per message (so an edit's answer never waits for
  the socket either), the garbage of ended sessions collected at a pause of the
  pages and their memory handed back. ``CANDELA_PLAIN=1`` turns them all off.
- **Safety is never a patch** (on with ``CANDELA_PLAIN=1``): a page changes only
  what a person could change on it, a message is judged whole before Bokeh reads
  it, an ``ERROR`` reply carries no traceback, a connection's buffers are bounded
  (:mod:`explorer.connection_bounds`, :mod:`explorer.page_changes`), and a URL
  with a long number is a page, not an HTTP 500 (:func:`long_query_numbers`).
- **Log lines** (:mod:`explorer.client_logs`, a logging filter, on with the
  patches off too): every line a client can cause (a refused WebSocket upgrade,
  a failed request, Bokeh's lines about a page's message) is one short line,
  and repeated ones are counted once every ten seconds, not repeated.
- **Bounded connections** (:mod:`explorer.connection_bounds`, on with the
  patches off too): a WebSocket message declaring more buffers than a page
  could need, or sending more than 1 MB of them, closes its connection unread.
- **Frozen** (:func:`freeze_lasting`): what the process holds before it serves
  is left out of every collection.

- **Only its own names** (:func:`host_check`): a request whose ``Host`` is
  not a name the server is reached at (the same list its WebSocket accepts as
  origins) gets 403 and a one-line body instead of the page. That closes DNS
  rebinding: a foreign site whose name is made to resolve to this machine
  could otherwise read the page (and its session token) as its own; its
  WebSocket was already refused by origin. The command also refuses such a
  request, and a WebSocket from a foreign origin, before anything is built
  for it (:mod:`explorer.patches.refuse_early`); this transform is what holds
  with the patches off. Names are matched by :func:`allows`, IPv6 addresses
  in brackets included.

Nothing here holds a session's state: the one thing kept across requests is
the compressed bytes of static files, keyed by path and content hash.
"""

from __future__ import annotations

import gc
from typing import Any

from tornado.httputil import HTTPHeaders
from tornado.web import GZipContentEncoding, OutputTransform

from . import class_start, client_logs, patches
from .page_changes import MAX_MESSAGE_BYTES
from .painting import UNUSED_BUNDLES
from .patches.browser import browser_patches

__all__ = [
    "SERVER_PATCHES",
    "WEBSOCKET_COMPRESSION_LEVEL",
    "CompressStaticOnce",
    "allows",
    "freeze_lasting",
    "host_check",
    "lean_process",
    "lean_resources",
    "long_query_numbers",
    "prepare_server",
    "server_settings",
    "split_host",
]

#: zlib level of the WebSocket's permessage-deflate: 1 is nearly as small as 6 at a
#: quarter of the CPU (the 64x64 document: 599 KB to 95 KB in 4 ms; level 6: 77 KB, 17 ms).
WEBSOCKET_COMPRESSION_LEVEL = 1


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
        # Read here, not from Tornado's private state, so a Tornado release that renames
        # its fields leaves this Tornado's own transform, never a failing one.
        self._accepts_gzip = "gzip" in request.headers.get("Accept-Encoding", "")
        self._key: tuple[str, str] | None = None
        self._parts: list[bytes] | None = None
        self._from_cache = False

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        etag = headers.get("Etag")
        if self._path and self._accepts_gzip and status_code == 200 and etag:
            ctype = str(headers.get("Content-Type", "")).split(";")[0]
            if self._compressible(ctype) and "Content-Encoding" not in headers:
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
        if headers.get("Content-Encoding") != "gzip":  # Tornado chose not to compress it
            self._parts = None
        return status_code, headers, chunk

    def _compressible(self, ctype: str) -> bool:
        """Whether Tornado compresses ``ctype`` (its rule: text, or one of its CONTENT_TYPES)."""
        return ctype.startswith("text/") or ctype in getattr(self, "CONTENT_TYPES", ())

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


def split_host(text: str) -> tuple[str, str]:
    """``(name, port)`` of ``host[:port]`` as a Host header or an origin has it, lowercased.

    An IPv6 address is in brackets (``[::1]:5006``); without a port, 80.
    Anything else is returned whole as the name, so it matches nothing.
    """
    text = text.strip().lower()
    if text.startswith("["):
        name, bracket, rest = text.partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return text, ""
        return name + "]", rest[1:] or "80"
    name, colon, port = text.rpartition(":")
    if not colon:
        return text, "80"
    if ":" in name:  # an unbracketed IPv6 address
        return text, ""
    return name, port


def allows(allowed, host: str) -> bool:
    """Whether ``host`` (``name[:port]``) is one of ``allowed``.

    ``allowed`` holds ``name:port`` (or ``name``, for port 80) as the server's
    allowed origins are written; ``*`` stands for any one part of a dotted name,
    or any port. An IPv6 address is written in brackets, ``[::1]:5006``.
    """
    name, port = split_host(host)
    if not name or not port:
        return False
    for pattern in allowed:
        want_name, want_port = split_host(str(pattern))
        if want_port not in (port, "*"):
            continue
        if want_name == name:
            return True
        parts, want = name.split("."), want_name.split(".")
        if not name.startswith("[") and len(parts) == len(want):
            if all(w in ("*", p) for w, p in zip(want, parts)):
                return True
    return False


def host_check(hosts) -> type[OutputTransform]:
    """A Tornado transform that answers 403 to a request whose ``Host`` is not in ``hosts``.

    ``hosts`` are ``name:port`` as the server's allowed WebSocket origins are
    written. The refused request's own answer never reaches the client: its
    status, headers and body are replaced. With the patch ``refuse_early`` on,
    such a request never gets this far (:mod:`explorer.patches.refuse_early`):
    this is the check that holds with it off.
    """
    allowed = tuple(hosts)

    class HostCheck(OutputTransform):
        def __init__(self, request) -> None:
            super().__init__(request)
            self.host = (request.headers.get("Host") or "").strip().lower()
            self.refused = not allows(allowed, self.host)

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


#: The longest request head (request line and headers) Tornado reads: its default, said
#: here so that :func:`long_query_numbers` stays in step with it.
MAX_HEADER_BYTES = 64 * 1024


def long_query_numbers() -> None:
    """Let Python turn a number as long as a request's head into an ``int``.

    Panel's ``Location`` parses the query on every change of a page's URL, synced to
    anything or not, and turns each all-digit value into an ``int``: past Python's limit
    of 4,300 digits that raised, and ``GET /?x=<5,000 digits>`` was an HTTP 500 with a
    traceback. No query value is longer than the request's head, and a number of
    :data:`MAX_HEADER_BYTES` digits converts in about 20 ms; the explorer then reads its
    own query with its own limits (:mod:`explorer.url`). Python's public setting, for
    the server's process only; on with every patch off.
    """
    import sys

    limit = sys.get_int_max_str_digits()
    if limit and limit < MAX_HEADER_BYTES:
        sys.set_int_max_str_digits(MAX_HEADER_BYTES)


class QueryDigits(OutputTransform):
    """A query value of digits that are not decimal (``²``) reaches the page with a space after it.

    Panel 1.9's ``Location`` parses a page's query on every change of its URL, synced to
    anything or not, and takes each value of which ``str.isdigit()`` is true for an
    ``int``: ``int('²')`` raised, and ``GET /?shape=²`` was an HTTP 500 with a traceback
    (Panel 1.10 matches ``[0-9]`` only). Before the page's handler runs, such a value
    gets a trailing space (:func:`explorer.url.parseable_query`), which Panel then keeps
    as text; the explorer reads its query itself (:mod:`explorer.url`) and says of ``²``
    what it says of any other shape that is not a number. Tornado's public transform
    hook, which sees each request before its handler; on with every patch off. Nothing
    else in a request changes. (The page's own report of its URL, over its WebSocket,
    is made parseable too: :func:`explorer.page_changes.parseable_location`.)
    """

    def __init__(self, request) -> None:
        super().__init__(request)
        from .url import parseable_query

        query = parseable_query(request.query)
        if query != request.query:
            request.query = query
            request.uri = f"{request.path}?{query}"


def server_settings() -> dict[str, Any]:
    """Keyword arguments for :func:`panel.serve` (passed through Bokeh to Tornado)."""
    # ``transforms`` replaces what ``compress_response=True`` would add (Tornado's
    # plain GZipContentEncoding); the setting is kept so Tornado's own code sees it.
    return {
        "compress_response": True,
        "transforms": [QueryDigits, CompressStaticOnce],
        # permessage-deflate for the WebSocket, when the browser offers it (all do).
        "websocket_compression_level": WEBSOCKET_COMPRESSION_LEVEL,
        # A message larger than a page of the explorer ever sends closes its connection
        # unread (Bokeh's default is 20 MB).
        "websocket_max_message_size": MAX_MESSAGE_BYTES,
        # Tornado's default, written out: long_query_numbers() relies on it.
        "http_server_kwargs": {"max_header_size": MAX_HEADER_BYTES},
        # A teacher starts a led class from the page (explorer.class_start).
        "extra_patterns": class_start.route(),
    }


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


def prepare_server(server) -> None:
    """Before ``server`` (what :func:`panel.serve` returns) serves: no validation, the patches.

    Every session of every server in this process skips Bokeh's document
    validation, and the patches of :func:`lean_process` are applied. What the process holds before it serves is
    left out of every collection (:func:`freeze_lasting`): import the app first.
    Pages built ahead are the caller's to add (:func:`explorer.pool.install`): the
    command composes the server, the page and the pool.
    """
    from .connection_bounds import bound_connections

    lean_process()
    bound_connections(server)  # what one WebSocket connection may make it hold
    client_logs.count_on(server.io_loop)  # a client's repeated log lines: counted each window
    freeze_lasting()


#: The patches of every served process (:mod:`explorer.patches`), in the order applied.
SERVER_PATCHES = (
    "lean_serialization",
    "no_debounce",
    "one_write_per_message",
    "watch_messages",
    "collect_at_a_pause",
    "ipv6_location",
)


def lean_process() -> None:
    """Every per-process change for any server of the app: Bokeh's and Panel's settings, then
    the patches of :data:`SERVER_PATCHES` (each one only if it is on).

    :func:`prepare_server` calls it, and so does ``panel serve explorer/app.py``
    (which has no :func:`prepare_server`): each server of the app then handles
    a session and an edit the same way. Each change is installed once however
    often this is called.
    """
    from bokeh.settings import settings

    settings.perform_document_validation.set_value(False)
    long_query_numbers()  # a URL with a long number is a page, not an HTTP 500
    no_browser_info()
    patches.announce_plain()
    for name in SERVER_PATCHES:
        patches.apply(name)
    browser_patches()
    client_logs.install()  # a logging filter, not a patch: on with the patches off too


def no_browser_info() -> None:
    """Pages without Panel's report of the browser (language, time zone, dark mode).

    Nothing here reads it, and it is a model more in every session, sent with
    every page.
    """
    import panel as pn

    pn.config.browser_info = False
