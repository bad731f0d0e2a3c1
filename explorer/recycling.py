"""A worker that served sessions and sits idle, larger than it started, is replaced by a fresh one.

Once a class's sessions have ended, their objects are gone: Python's object count
and live bytes go back to where they were. The process's memory does not: CPython's
allocator keeps each 1 MB arena that one long-lived object still sits in, and a
day's sessions leave most arenas pinned that way (after 200 sessions, 159 arenas,
none handed back), 80-100 MB over the size the server had when it was warm. No
collection or ``malloc_trim`` reaches that memory; a fresh process does not have it.

So the command serves from a worker process forked from its own process, which
binds the listening sockets, imports everything and never serves a session
(:mod:`explorer.workers`). :func:`install`, in each worker, looks
every :data:`CHECK_S` seconds; the worker is recycled when all of these hold:

- it has served a session (a fresh worker is warm, and is never recycled: no loop);
- no session is open (a student's page, even one left open without a word, keeps
  its session, so a lesson under way is never cut), no led class is kept in its memory
  (:meth:`explorer.class_store.MemoryStore.held`), and none has been, nor has any
  request come, for :data:`IDLE_S` seconds;
- its resident memory is more than :data:`MARGIN_MB` over its warm size: the largest
  it was before its first session (the process as forked, its pages built ahead),
  and at least its size when installed plus what its pages built ahead will take.

It then logs one line with its memory, stops listening (the command's process
still holds the socket, so a connection that comes meanwhile waits in its queue
for the fresh worker: never refused), leaves :data:`GRACE_S` for a request already
accepted (a connection with no request under way is closed), and exits with ``RECYCLE_STATUS``; the command forks a fresh worker from
its warm process at once. A page that opens in between reconnects from its URL,
as after any lost worker.

Everything here, and in the supervisor, is Bokeh's, Panel's, Tornado's and the
operating system's public API: it is the same with every patch off (``CANDELA_PLAIN=1``).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from tornado.web import OutputTransform

__all__ = [
    "CHECK_S",
    "GRACE_S",
    "IDLE_S",
    "MARGIN_MB",
    "Recycler",
    "RequestClock",
    "install",
    "own_rss_mb",
]

log = logging.getLogger("candela-explorer")

#: How often (s) a worker looks whether it should be recycled.
CHECK_S = 1.0
#: A worker is recycled only once no session was open and no request came for this long (s).
IDLE_S = 5.0
#: ... and once its memory is more than this over its warm size (MB). One page opened in a
#: fresh worker grows it by about 12 MB (the pages it shares with the command's process
#: that its objects' reference counts write to are copied): a single visit is no reason.
MARGIN_MB = 15.0
#: Between no longer listening and exiting: for a request accepted just before (s).
GRACE_S = 1.0

#: When the last HTTP request (a page, a file, a WebSocket's opening) came, in this process.
_LAST_REQUEST = [0.0]


class RequestClock(OutputTransform):
    """A Tornado transform that only notes when each request came (:func:`last_request`)."""

    def __init__(self, request) -> None:
        super().__init__(request)
        _LAST_REQUEST[0] = time.monotonic()


def last_request() -> float:
    """``time.monotonic()`` of the last request this process was asked (0 if none)."""
    return _LAST_REQUEST[0]


def own_rss_mb() -> float | None:
    """This process's resident memory in MB (``/proc``), or None where it cannot be read."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return None
    return None


class Recycler:
    """Whether, and when, the worker serving ``server`` asks to be replaced (see the module).

    ``sessions()`` counts the open sessions; ``rss()`` reads the memory (MB);
    ``clock`` is ``time.monotonic``. :meth:`check` is called every :data:`CHECK_S`
    and returns True once the worker should go.
    """

    def __init__(
        self,
        sessions: Callable[[], int],
        expected_mb: float = 0.0,
        rss: Callable[[], float | None] = own_rss_mb,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sessions, self.rss, self.clock = sessions, rss, clock
        start = rss()
        self.warm = None if start is None else start + expected_mb
        self.served = 0
        self.busy_at = clock()

    def session_created(self, _context: Any = None) -> None:
        self.served += 1
        self.busy_at = self.clock()

    def check(self) -> bool:
        now, rss = self.clock(), self.rss()
        if rss is None or self.warm is None:
            return False
        if not self.served:
            self.warm = max(self.warm, rss)  # still warm: its pages built ahead count
            return False
        if self.sessions():
            self.busy_at = now
            return False
        quiet = min(now - self.busy_at, now - last_request())
        return quiet >= IDLE_S and rss - self.warm > MARGIN_MB


def busy(server: Any) -> int:
    """What keeps ``server``'s worker: its open sessions, and the led classes kept in its
    memory (one started from a page: explorer.class_start), each as a session."""
    from .class_store import current as class_store

    return len(server.get_sessions()) + class_store().held()


def install(server: Any, status: int, expected_mb: float = 0.0) -> Recycler:
    """Recycle the worker that serves ``server`` (what :func:`panel.serve` returns) when it
    should be (see the module), exiting with ``status``. ``expected_mb``: what its pages
    built ahead will add to its warm size. Call in the worker, before the server starts."""
    import panel as pn
    from tornado.ioloop import PeriodicCallback

    from .workers import task_id

    recycler = Recycler(lambda: busy(server), expected_mb)
    pn.state.on_session_created(recycler.session_created)

    def check() -> None:
        if not recycler.check():
            return
        periodic.stop()
        log.warning(
            "worker %d (pid %d) idle after %d sessions at %.0f MB, %.0f MB over its warm %.0f "
            "MB: recycled, a fresh one takes its place",
            task_id() or 0,
            os.getpid(),
            recycler.served,
            recycler.rss() or 0.0,
            (recycler.rss() or 0.0) - (recycler.warm or 0.0),
            recycler.warm or 0.0,
        )
        # No longer accepting (the command's process holds the socket: connections now wait
        # in its queue); a request already accepted is answered meanwhile.
        server.stop(wait=False)
        server.io_loop.call_later(GRACE_S, lambda: _exit(status))

    periodic = PeriodicCallback(check, CHECK_S * 1000)
    server.io_loop.add_callback(periodic.start)
    return recycler


def _exit(status: int) -> None:
    for handler in logging.getLogger().handlers + log.handlers:
        handler.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
