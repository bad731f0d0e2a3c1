"""Every log line a client can cause is one short line, and repeated ones are counted.

A client decides much of what a server logs: a WebSocket upgrade with a bad or
expired token, or without the ``bokeh`` subprotocol, is an "Uncaught exception"
with its whole traceback on Tornado's ``tornado.application`` logger; a request
answered 4xx or 5xx is a line of ``tornado.access``; a malformed request one of
``tornado.general``; Bokeh's message handling quotes a page's message whole.
6,000 bad upgrades in 30 s made 8.8 MB of log.

:func:`install` puts one filter (the standard ``logging`` API, not a patch: on
with every patch off) on each logger of :data:`CLIENT_LOGGERS`:

- **One line.** A record becomes one line of at most :data:`LOG_LINE_CHARS`,
  without a traceback (its exception named by its class), quoting no client's
  words: a message is logged as its type, any text longer than a name as its
  length, a request by its method and the start of its path. A refused
  WebSocket upgrade says why in a few words ("bad token", "no 'bokeh'
  subprotocol", "expired token").
- **Counted, not repeated.** Records of the same kind (the same logger, the
  same template, the same exception class; for an upgrade, the same reason; for
  an access line, the same status) are logged once per :data:`WINDOW_S`
  seconds; those that follow within the window are counted, and the count is one
  line when the window ends: ``refused 6000 more WebSocket upgrades in the last
  10 s: bad token``. At most :data:`MAX_KINDS` kinds are told apart: past that,
  a logger's new kinds are counted as one.

A window's count is written when the next record of any kind comes, and, in a
served process, by the server's IOLoop every window (:func:`count_on`). Of the
explorer's own logger only the lines that begin "refused" are a client's.
``CANDELA_LOG_WINDOW_S`` sets the window (a test makes it short).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CLIENT_LOGGERS",
    "LOG_LINE_CHARS",
    "MAX_KINDS",
    "WINDOW_S",
    "ClientLines",
    "count_on",
    "install",
    "one_line",
]

#: The longest line a client can cause in the log.
LOG_LINE_CHARS = 300
#: Records of one kind are logged once in this many seconds; the rest are counted.
WINDOW_S = 10.0
#: At most this many kinds are told apart at a time.
MAX_KINDS = 100
#: The loggers whose records a client can cause.
CLIENT_LOGGERS = (
    "tornado.access",
    "tornado.application",
    "tornado.general",
    "bokeh.server.protocol_handler",
    "bokeh.server.views.ws",
    "bokeh.server.tornado",
    "bokeh.server.connection",
    "bokeh.server.session",
    "candela-explorer",
)
#: Of the explorer's own logger, only these lines are a client's.
OWN_LOGGER, OWN_CLIENT_PREFIX = "candela-explorer", "refused"

#: Why Bokeh refused a WebSocket upgrade, in a few words (by the start of its text).
UPGRADE_REASONS = (
    ("Subprotocol header is not", "no 'bokeh' subprotocol"),
    ("No token received", "no token"),
    ("Invalid token signature", "bad token"),
    ("Session expiry has not been provided", "bad token"),
    ("Token is expired", "expired token"),
)
_COUNTED = "candela_counted"


def _described(arg: Any) -> Any:
    """A record's argument as the log may show it: never a client's words at length."""
    msgtype = getattr(arg, "msgtype", None)
    if isinstance(msgtype, str):
        return f"<{msgtype[:40]} message>"
    if isinstance(arg, BaseException):
        return type(arg).__name__
    if isinstance(arg, (str, bytes, bytearray)) and len(arg) > 40:
        return f"<{len(arg):,} {'characters' if isinstance(arg, str) else 'bytes'}>"
    if isinstance(arg, (str, int, float, bool, type(None))):
        return arg
    return f"<{type(arg).__name__}>"


def one_line(text: str, limit: int = LOG_LINE_CHARS) -> str:
    """``text`` on one line (whitespace runs made one space), at most ``limit`` characters."""
    line = " ".join(text[: limit * 4].split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _request(summary: Any) -> tuple[str, str]:
    """Tornado's request summary (``GET /path?query (address)``) as ``(request, address)``,
    the path cut short."""
    text = " ".join(str(summary).split())
    method, _, rest = text.partition(" ")
    path, paren, who = rest.rpartition(" (")
    if not paren:
        path, who = rest, ""
    if len(path) > 60:
        path = f"{path[:60]}…({len(path):,} characters)"
    return f"{method[:10]} {path}", who.rstrip(")")[:60]


def _upgrade_reason(exc: BaseException) -> str:
    text = str(exc)
    for start, reason in UPGRADE_REASONS:
        if text.startswith(start):
            return reason
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    if any("token" in frame.name for frame in frames):
        return f"bad token ({type(exc).__name__})"
    return type(exc).__name__


def _count_line(counted: tuple[str, str, str], n: int, seconds: str) -> str:
    before, what, after = counted
    return one_line(f"{before}{n} more {what} in the last {seconds} s{after}")


@dataclass
class _Kind:
    logger: str
    level: int
    counted: tuple[str, str, str]  # a count's line: before, what, after (see _count_line)
    start: float
    suppressed: int = 0


def _describe(record: logging.LogRecord) -> tuple[tuple, str, tuple[str, str, str]] | None:
    """``(kind, line, counted)`` for a client's record; None for one left as it is."""
    exc = record.exc_info[1] if record.exc_info else None
    args = record.args if isinstance(record.args, tuple) else ()
    if record.name == OWN_LOGGER and not str(record.msg).startswith(OWN_CLIENT_PREFIX):
        return None
    if record.name == "tornado.access" and len(args) >= 2:
        status = args[0] if isinstance(args[0], int) else 0
        request, who = _request(args[1])
        line = one_line(f"{status} {request}" + (f" ({who})" if who else ""))
        return (
            (record.name, status),
            line,
            ("", f"requests answered {status}", ""),
        )
    if record.name == "tornado.application" and str(record.msg).startswith("Uncaught exception"):
        request = args[1] if len(args) > 1 else None
        headers = getattr(request, "headers", None)
        upgrade = headers is not None and headers.get("Upgrade", "").lower() == "websocket"
        where, who = _request(args[0]) if args else ("a request", "")
        if upgrade and exc is not None:
            reason = _upgrade_reason(exc)
            line = one_line(f"refused a WebSocket upgrade from {who or 'a client'}: {reason}")
            counted = ("refused ", "WebSocket upgrades", f": {reason}")
            return (record.name, "upgrade", reason), line, counted
        kind = type(exc).__name__ if exc is not None else "error"
        line = one_line(
            f"a request failed: {where}" + (f" from {who}" if who else "") + f": {kind}"
        )
        return (
            (record.name, "failed", kind),
            line,
            ("", "requests failed", f": {kind}"),
        )
    # Any other record: its own words, its arguments described (the explorer's own lines
    # quote a client's words only cut short already). Its kind: its template, and its
    # arguments with every number and every long name (a session's id, a token) the same.
    plain = args if isinstance(record.args, tuple) else (record.args,) if record.args else ()
    same = tuple(_kind_of(arg) for arg in plain)
    if record.name != OWN_LOGGER:
        if args:
            record.args = tuple(_described(arg) for arg in args)
        elif record.args:
            record.args = _described(record.args)
    try:
        text = record.getMessage()
    except Exception:  # a record that cannot be formatted: its template alone
        text = str(record.msg)
    if exc is not None:
        text += f" [{type(exc).__name__}]"
    line = one_line(text)
    template = one_line(str(record.msg), 120)
    kind = (record.name, template, type(exc).__name__ if exc is not None else None, same)
    return kind, line, ("", "like it", f": {one_line(line, 160)}")


def _kind_of(arg: Any) -> str:
    """What of a record's argument tells its kind: no number, no long name, at most 80 characters."""
    if isinstance(arg, (bytes, bytearray)):
        return "<bytes>"
    if isinstance(arg, (int, float)) or getattr(arg, "msgtype", None) is not None:
        return "#" if isinstance(arg, (int, float)) else f"<{arg.msgtype}>"
    text = arg if isinstance(arg, str) else type(arg).__name__
    if len(text) > 20 and not any(ch.isspace() for ch in text):
        return "<name>"
    return re.sub(r"[0-9][0-9,.]*", "#", text[:80])


class ClientLines(logging.Filter):
    """The filter of :func:`install` (see the module); ``clock`` is ``time.monotonic``."""

    def __init__(self, window: float = WINDOW_S, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.window, self.clock = window, clock
        self.kinds: dict[tuple, _Kind] = {}
        self.lock = threading.Lock()
        self.next_due = float("inf")

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, _COUNTED, False):
            return True
        now = self.clock()  # read once: a window must not end between two reads
        self.flush(now=now)
        described = _describe(record)
        if described is None:
            return True
        kind, line, counted = described
        with self.lock:
            if kind not in self.kinds and len(self.kinds) >= MAX_KINDS:
                kind = (record.name, "other")
                counted = ("", f"lines of {record.name}", "")
            seen = self.kinds.get(kind)
            if seen is not None and now - seen.start < self.window:
                seen.suppressed += 1
                return False
            self.kinds[kind] = _Kind(record.name, record.levelno, counted, now)
            self.next_due = min(self.next_due, now + self.window)
        if seen is not None and seen.suppressed:  # its window ended since (another thread)
            self._write(seen, now)
        record.msg, record.args = line, None
        record.exc_info = record.exc_text = record.stack_info = None
        return True

    def flush(self, force: bool = False, now: float | None = None) -> None:
        """Write the count of each window that ended by ``now`` (the clock's time if None;
        every window's, if ``force``)."""
        now = self.clock() if now is None else now
        if not force and now < self.next_due:
            return
        due: list[_Kind] = []
        with self.lock:
            for key, kind in list(self.kinds.items()):
                if force or now - kind.start >= self.window:
                    del self.kinds[key]
                    if kind.suppressed:
                        due.append(kind)
            self.next_due = min(
                (k.start + self.window for k in self.kinds.values()), default=float("inf")
            )
        for kind in due:
            self._write(kind, now)

    def _write(self, kind: _Kind, now: float) -> None:
        """The line of ``kind``'s count."""
        seconds = f"{min(now - kind.start, self.window):.3g}"
        logging.getLogger(kind.logger).log(
            kind.level,
            _count_line(kind.counted, kind.suppressed, seconds),
            extra={_COUNTED: True},
        )


_FILTER: list[ClientLines] = []


def _window_from_env() -> float:
    text = os.environ.get("CANDELA_LOG_WINDOW_S", "").strip()
    if not text:
        return WINDOW_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.05 <= value <= 3600:
        raise ValueError(f"CANDELA_LOG_WINDOW_S={text[:40]!r} is not a number from 0.05 to 3600")
    return value


def install() -> ClientLines:
    """Put the filter on every logger of :data:`CLIENT_LOGGERS` (once a process); return it."""
    if not _FILTER:
        _FILTER.append(ClientLines(_window_from_env()))
    lines = _FILTER[0]
    for name in CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if lines not in logger.filters:
            logger.addFilter(lines)
    return lines


def count_on(io_loop: Any) -> None:
    """Have ``io_loop`` (a Tornado IOLoop) write each window's count when it ends."""
    from tornado.ioloop import PeriodicCallback

    lines = install()
    periodic = PeriodicCallback(lines.flush, max(lines.window / 4, 0.05) * 1000)
    io_loop.add_callback(periodic.start)
