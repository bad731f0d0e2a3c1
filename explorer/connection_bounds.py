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

Each connection also has a budget of messages and of the server's CPU time per second
(:class:`RateBudget`, token buckets): a person clicking, typing and resizing as fast
as a person can never meets it; a client flooding the server does. Past it, the
connection's next messages wait (it is slowed: Tornado reads no more of its messages
meanwhile, and other pages are served), and once it has been slowed for
:data:`MAX_WAIT_S` without a pause that brought it back within the budget it is
closed, with one log line.

Each message is held until it is whole and then judged before Bokeh reads any of
it: a message a page never sends, or a change no person can make on the page
(:func:`explorer.page_changes.refusal`), is answered with a short ``ERROR`` and one
log line, and never reaches Bokeh. Every ``ERROR`` a page is sent, Bokeh's own
included, says only the kind of failure: never the server's traceback (file paths,
versions).

Each address also has a budget of pages (:class:`PageBudget`): every page asked for is a
session built for it (~50 ms of the server's CPU), and 300 asked for in a second from one
client took the server 104 s to answer while a student's edits waited. Past the budget
a page request is answered ``429 Too Many Requests`` with ``Retry-After`` at once, at no
cost (Tornado's one access line for it is counted, not repeated,
:mod:`explorer.client_logs`). Within the budget, an address's pages are built one at a
time, each after a rest as long as the last took (:meth:`PageBudget.turn`): 60 64x64
pages asked for at once from one address (0.25-0.5 s of CPU each) held a student's edit
7-18 s behind them, its many short steps on the server's loop each waiting behind a
build; now one address has at most half of the server's time. The loopback address is
the operator's own, or a proxy's on this machine that has not been named: behind a proxy,
``--behind-proxy`` makes each student's own address (the proxy's ``X-Real-IP``) the one
counted.

This is the explorer's own, not a patch: on with every patch off. Each served app's
``/ws`` route is given :class:`BoundedWSHandler`, a subclass of Panel's WebSocket handler
that overrides Tornado's public ``on_message``, and each page route a subclass of its own
handler whose ``get`` first asks the address's budget, through Tornado's public
``Application.add_handlers`` (its rules come before the application's own). Bokeh's
server exposes its Tornado application only as ``server._tornado``: the one private
name read here; without it :func:`bound_connections` raises, and nothing serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

from panel.io.server import WSHandler

__all__ = [
    "MAX_BUFFERS",
    "AddressBuckets",
    "MAX_BUFFER_BYTES",
    "BoundedWSHandler",
    "FrameBudget",
    "BUDGETS",
    "PAGES",
    "PageBudget",
    "RateBudget",
    "bound_connections",
]

log = logging.getLogger("candela-explorer")

#: The most buffers one message may declare (the explorer's pages send none).
MAX_BUFFERS = 8
#: The most bytes of buffers one message may send before it is complete.
MAX_BUFFER_BYTES = 1 << 20
#: The WebSocket close code: "message too big" (RFC 6455).
CLOSE_CODE = 1009
#: The WebSocket close code: "policy violation" (RFC 6455), for a flood.
FLOOD_CODE = 1008

#: Each budget of a connection: (sustained amount a second, amount at once). ``messages``:
#: a page sends one per edit, click, resize or key. ``cpu``: the server's CPU seconds its
#: messages cost (an edit 7-75 ms, a new shape ~300 ms); a quarter of a core, so that
#: one connection cannot take more than its share from the class. ``pulls``: whole
#: documents asked for (~50 ms each at 64x64); a page asks once, when it opens.
BUDGETS = {
    "messages": (20.0, 200.0),
    "cpu": (0.25, 5.0),
    "pulls": (0.1, 2.0),
}
MESSAGES_PER_S, MESSAGE_BURST = BUDGETS["messages"]
CPU_PER_S, CPU_BURST = BUDGETS["cpu"]
#: The longest a connection is slowed, without a pause, before it is closed instead.
MAX_WAIT_S = 10.0


class RateBudget:
    """Token buckets of one connection (:data:`BUDGETS`): its messages, the CPU time they
    cost, and the whole documents it asks for.

    :meth:`admit` says how long the connection's next message waits for the buckets to
    refill (0 while within the budget), or None once it has been slowed for
    :data:`MAX_WAIT_S` in all since a pause last refilled half of every bucket: then it
    is closed. :meth:`charge` takes one message, the CPU seconds it cost and whether it
    asked for the whole document.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.at = clock()
        self.left = {name: burst for name, (_, burst) in BUDGETS.items()}
        self.slowed = 0.0

    def _refill(self) -> None:
        now = self.clock()
        passed, self.at = max(now - self.at, 0.0), now
        for name, (rate, burst) in BUDGETS.items():
            self.left[name] = min(burst, self.left[name] + passed * rate)

    def charge(self, cpu_s: float = 0.0, pull: bool = False) -> None:
        self._refill()
        self.left["messages"] -= 1.0
        self.left["cpu"] -= max(cpu_s, 0.0)
        if pull:
            self.left["pulls"] -= 1.0

    def wait(self) -> float:
        self._refill()
        return max([0.0] + [-self.left[name] / rate for name, (rate, _) in BUDGETS.items()])

    def admit(self) -> float | None:
        wait = self.wait()
        if wait <= 0.0:
            if all(self.left[name] >= burst / 2 for name, (_, burst) in BUDGETS.items()):
                self.slowed = 0.0  # a pause long enough to refill half of each: forgiven
            return 0.0
        self.slowed += wait
        return None if self.slowed > MAX_WAIT_S else wait


#: The pages one address may ask for: (a second, at once). A class of 30 behind one school
#: address opening the page together is well within it; a client asking for hundreds in a
#: second is not.
PAGES = (1.0, 60.0)
#: The longest rest (s) an address's next page waits after one that took long to build.
MAX_REST_S = 2.0
#: The most addresses whose page budgets are kept (the longest unheard are forgotten).
MAX_ADDRESSES = 4096
#: What a page request past its address's budget is answered.
PAGES_REFUSED = "Too many pages asked for from this address: try again in {wait} s.\n"


class AddressBuckets:
    """A token bucket per address: ``rate`` a second, ``burst`` at once; the buckets of
    the :data:`MAX_ADDRESSES` longest unheard addresses are forgotten.

    :meth:`take` takes one from ``address``'s bucket and returns 0, or returns the
    seconds until it holds one again (nothing is taken)."""

    def __init__(
        self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self.buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, address: str) -> float:
        now = self.clock()
        left, at = self.buckets.pop(address, (self.burst, now))
        left = min(self.burst, left + max(now - at, 0.0) * self.rate)
        wait = 0.0 if left >= 1.0 else (1.0 - left) / self.rate
        self.buckets[address] = (left - 1.0 if wait == 0.0 else left, now)
        while len(self.buckets) > MAX_ADDRESSES:
            self.buckets.popitem(last=False)
        return wait


class PageBudget:
    """Token buckets of the pages each address asks for (:data:`PAGES`).

    :meth:`admit` takes a page from ``address``'s bucket and returns 0, or returns the
    seconds until it holds one again (the request is refused; nothing is taken). The
    loopback address is not counted (see the module's text)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.pages = AddressBuckets(*PAGES, clock)
        #: Each address's turn (one page built at a time) and how many of its pages wait
        #: or are built; when its rest after the last one ends.
        self.turns: dict[str, tuple[asyncio.Lock, int]] = {}
        self.rests: OrderedDict[str, float] = OrderedDict()

    def admit(self, address: str) -> float:
        return 0.0 if _loopback(address) else self.pages.take(address)

    @contextlib.asynccontextmanager
    async def turn(self, address: str) -> AsyncIterator[None]:
        """``address``'s pages one at a time, each after a rest as long as the last one
        took to build: one address has at most half of the server's time, and what others
        ask for meanwhile (an edit is many short steps on the server's one loop) goes on
        in the rests. A page from the pool of pages built ahead costs little, and so does
        its rest. At most the burst of pages wait (the rest were refused). The loopback
        address is not held."""
        if _loopback(address):
            yield
            return
        lock, waiting = self.turns.get(address, (asyncio.Lock(), 0))
        self.turns[address] = (lock, waiting + 1)
        try:
            async with lock:
                rest = self.rests.get(address, 0.0) - self.clock()
                if rest > 0:
                    await asyncio.sleep(rest)
                started = self.clock()
                try:
                    yield
                finally:
                    took = min(self.clock() - started, MAX_REST_S)
                    self.rests.pop(address, None)
                    self.rests[address] = self.clock() + took
                    while len(self.rests) > MAX_ADDRESSES:
                        self.rests.popitem(last=False)
        finally:
            lock, waiting = self.turns[address]
            if waiting <= 1:
                del self.turns[address]
            else:
                self.turns[address] = (lock, waiting - 1)


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


class _BoundedPages:
    """Mixed before a server's page handler: a page request past its address's
    :class:`PageBudget` (the application's ``candela_pages``) is answered 429 at once;
    within it, the address's pages are built one at a time."""

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        budget = getattr(self.application, "candela_pages", None)
        if budget is None:
            return await super().get(*args, **kwargs)
        address = str(self.request.remote_ip)
        wait = budget.admit(address)
        if wait > 0.0:
            seconds = max(1, math.ceil(wait))
            self.set_status(429)
            self.set_header("Retry-After", str(seconds))
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.set_header("Cache-Control", "no-store")
            self.finish(PAGES_REFUSED.format(wait=seconds))
            return None
        async with budget.turn(address):
            return await super().get(*args, **kwargs)


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
        rate = getattr(self, "candela_rate", None)
        if rate is None:
            rate = self.candela_rate = RateBudget()
        wait = rate.admit()
        if wait is None:
            return self._close_flood()
        if wait > 0:  # slowed: Tornado reads nothing more of this connection meanwhile
            await asyncio.sleep(wait)
            if self.ws_connection is None:  # closed while it waited
                return None
        started = time.thread_time()
        try:
            refused = self._refusal(frames)
            if refused is not None:
                return await self._refuse(frames, refused)
            frames = self._parseable(frames)
            for frame in frames:
                await super().on_message(frame)
        finally:
            rate.charge(time.thread_time() - started, pull=_is_pull(frames))
        return None

    def _close_flood(self) -> None:
        if not getattr(self, "candela_closed", False):
            self.candela_closed = True
            log.warning(
                "closed a WebSocket connection from %s: more than %g messages, %g s of the "
                "server's CPU or %g documents a second, slowed for %g s",
                str(self.request.remote_ip)[:60],
                MESSAGES_PER_S,
                CPU_PER_S,
                BUDGETS["pulls"][0],
                MAX_WAIT_S,
            )
            self.close(FLOOD_CODE, "too many messages")
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

    def _parseable(self, frames: list) -> list:
        """The message, its page's report of its URL made one Panel can parse
        (:func:`explorer.page_changes.parseable_location`)."""
        if len(frames) != 3 or not all(isinstance(f, str) for f in frames):
            return frames
        if '"PATCH-DOC"' not in frames[0] or '"search"' not in frames[2]:
            return frames
        from .page_changes import parseable_location

        session = getattr(getattr(self, "connection", None), "session", None)
        content = json.loads(frames[2])  # a PATCH-DOC's, read by _refusal already: JSON
        if session is None or not parseable_location(session.document, content):
            return frames
        return [frames[0], frames[1], json.dumps(content)]

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


def _is_pull(frames: list) -> bool:
    try:
        return json.loads(frames[0]).get("msgtype") == "PULL-DOC-REQ"
    except (TypeError, ValueError, AttributeError, IndexError):
        return False


def bound_connections(server: Any) -> None:
    """Route every ``/ws`` of ``server`` (what :func:`panel.serve` returns) to
    :class:`BoundedWSHandler`, and every route that builds a session (the page, and
    ``autoload.js`` for a page that embeds it) to its handler within a
    :class:`PageBudget`; once per server."""
    from bokeh.server.views.autoload_js_handler import AutoloadJsHandler
    from bokeh.server.views.doc_handler import DocHandler as BokehDocHandler
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
        elif (
            isinstance(target, type)
            and issubclass(target, (BokehDocHandler, AutoloadJsHandler))  # each builds a session
            and pattern
        ):
            if not issubclass(target, _BoundedPages):
                bounded = type(f"Bounded{target.__name__}", (_BoundedPages, target), {})
                routes.append((pattern.pattern, bounded, dict(rule.target_kwargs)))
    if not any(handler is BoundedWSHandler for _, handler, _ in routes):
        raise RuntimeError("cannot bound what a WebSocket connection holds: no /ws route found")
    app.candela_pages = PageBudget()
    app.add_handlers(r".*$", routes)
    app.candela_bounded = True
