"""The command's worker processes: forked, started again, retried later, and why the command stops.

``candela-explorer`` serves from worker processes forked from its own process, which
binds the listening sockets, imports everything and never serves a session itself.
This module is the supervisor of those workers: the explorer's own code, on public
APIs only (``os.fork``, ``os.waitpid``, Tornado's ``Configurable.configure``).

- **Where the fork happens.** Bokeh's server binds its sockets, then calls
  ``HTTPServer.start(num_procs)`` before any IOLoop exists: the one moment a fork
  shares the sockets and nothing else. Tornado's public ``Configurable.configure``
  has Bokeh build a :class:`SupervisedHTTPServer` there, whose ``start`` runs
  :func:`supervise`, not Tornado's ``fork_processes`` (which restarts a worker at most
  100 times over the server's whole life, then stops the command, and ends it with
  status 0 once no worker is left). The class is configured only around the command's
  own call of :func:`panel.serve` (:func:`supervised`); any other server is Tornado's.
- **A worker that dies** (killed by a signal, or exiting without being asked) is
  started again at once, at most :data:`RESTARTS` times within any :data:`WINDOW_S`
  seconds (:class:`RestartBudget`, one per worker). Past that it is given up *for
  now*: retried after :data:`RETRY_S` seconds, and after twice as long each time it is
  given up again (at most :data:`RETRY_MAX_S`); a worker that then served for a whole
  window is back to the first delay. Each death, each decision and each retry is one
  log line.
- **A worker that asks to be replaced** (exit status :data:`RECYCLE_STATUS`,
  :mod:`explorer.recycling`) is replaced by a fresh one at once, not counted.
- **The command never ends quietly while it meant to serve.** When no worker is left
  running (every one given up), :func:`supervise` raises :class:`CannotServe` and the
  command exits with status 1 and one line saying why, so that a service manager
  (systemd's ``Restart=on-failure``, see ``docs/classroom.md``) starts it again.

The delays can be set for a test or an operator through the environment
(:func:`policy_from_env`): ``CANDELA_WORKER_RESTARTS``, ``CANDELA_WORKER_WINDOW_S``,
``CANDELA_WORKER_RETRY_S``, ``CANDELA_WORKER_RETRY_MAX_S``.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from tornado.httpserver import HTTPServer

__all__ = [
    "ONE_WORKER",
    "RECYCLE_STATUS",
    "RESTARTS",
    "RETRY_MAX_S",
    "RETRY_S",
    "WINDOW_S",
    "CannotServe",
    "Policy",
    "RestartBudget",
    "SupervisedHTTPServer",
    "policy_from_env",
    "replacement",
    "supervise",
    "supervised",
    "task_id",
]

log = logging.getLogger("candela-explorer")

#: At most this many restarts of one worker ...
RESTARTS = 10
#: ... within any this many seconds; past that it is given up for now ...
WINDOW_S = 60.0
#: ... and retried after this many seconds, twice as long each time it is given up again ...
RETRY_S = 30.0
#: ... but never longer than this.
RETRY_MAX_S = 600.0
#: The number of processes the command gives Bokeh for one supervised worker (Bokeh
#: forks for any number but 1).
ONE_WORKER = -1
#: The exit status of a worker that asks to be replaced by a fresh one (EX_TEMPFAIL).
RECYCLE_STATUS = 75

#: In a worker: its number (0 to N-1) and whether it took the place of an earlier one.
_TASK: list[int | None] = [None]
_REPLACEMENT = [False]


def task_id() -> int | None:
    """In a worker: its number, 0 to N-1; None in the command's own process."""
    return _TASK[0]


def replacement() -> bool:
    """In a worker: True when it took the place of another (it prints no news again)."""
    return _REPLACEMENT[0]


class CannotServe(Exception):
    """The command can no longer serve: why, as one line."""


@dataclass(frozen=True)
class Policy:
    """How often a worker is started again, and when one given up is retried."""

    restarts: int = RESTARTS
    window: float = WINDOW_S
    retry: float = RETRY_S
    retry_max: float = RETRY_MAX_S


_ENV = {
    "CANDELA_WORKER_RESTARTS": ("restarts", int, 0, 10_000),
    "CANDELA_WORKER_WINDOW_S": ("window", float, 0.1, 86_400.0),
    "CANDELA_WORKER_RETRY_S": ("retry", float, 0.1, 86_400.0),
    "CANDELA_WORKER_RETRY_MAX_S": ("retry_max", float, 0.1, 86_400.0),
}


def policy_from_env(env: Mapping[str, str] | None = None) -> Policy:
    """The :class:`Policy`, with any of ``CANDELA_WORKER_*`` set in ``env`` (the environment).

    A value that is not a number in its range raises ``ValueError`` naming it.
    """
    env = os.environ if env is None else env
    values: dict[str, float | int] = {}
    for name, (attr, kind, low, high) in _ENV.items():
        text = env.get(name)
        if text is None or not text.strip():
            continue
        try:
            value = kind(text.strip())
        except ValueError:
            value = None
        if value is None or value != value or not low <= value <= high:
            raise ValueError(
                f"{name}={text[:40]!r} is not a{'' if kind is int else ' decimal'} number "
                f"from {low:g} to {high:g}"
            )
        values[attr] = value
    policy = Policy(**values)
    if policy.retry_max < policy.retry:
        policy = Policy(policy.restarts, policy.window, policy.retry, policy.retry)
    return policy


class RestartBudget:
    """How many restarts are left: at most ``limit`` within any ``window`` seconds."""

    def __init__(
        self,
        limit: int = RESTARTS,
        window: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit, self.window, self.clock = limit, window, clock
        self.times: collections.deque[float] = collections.deque()

    def allow(self) -> bool:
        """Whether a worker may be started again now (if so, it counts)."""
        now = self.clock()
        while self.times and now - self.times[0] >= self.window:
            self.times.popleft()
        if len(self.times) >= self.limit:
            return False
        self.times.append(now)
        return True


@dataclass
class _Slot:
    budget: RestartBudget
    delay: float
    started: float = 0.0
    retry_at: float | None = None


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"was stopped by signal {os.WTERMSIG(status)}"
    return f"exited with status {os.WEXITSTATUS(status)}"


def _wait(timeout: float | None) -> tuple[int, int]:
    """The next worker to end, as ``os.wait``; ``(0, 0)`` if none did within ``timeout``."""
    if timeout is None:
        return os.wait()
    deadline = time.monotonic() + max(timeout, 0.0)
    while True:
        pid, status = os.waitpid(-1, os.WNOHANG)
        left = deadline - time.monotonic()
        if pid or left <= 0:
            return pid, status
        time.sleep(min(0.2, left))


def supervise(count: int, policy: Policy | None = None) -> int:
    """Fork ``count`` workers and keep them running (see the module).

    Returns, in each worker, its number (0 to ``count - 1``). In the command's process it
    never returns: it raises :class:`CannotServe` once no worker is left, and whatever a
    signal handler raises (Ctrl+C, the command's own SIGTERM handler) goes through.
    """
    policy = policy or Policy()
    clock = time.monotonic
    slots = {
        task: _Slot(RestartBudget(policy.restarts, policy.window, clock), policy.retry)
        for task in range(count)
    }
    children: dict[int, int] = {}

    def start(task: int, again: bool) -> bool:
        pid = os.fork()
        if pid == 0:
            random.seed()  # not the same random numbers as every other worker
            _TASK[0], _REPLACEMENT[0] = task, again
            return True
        children[pid] = task
        slots[task].started = clock()
        return False

    for task in range(count):
        if start(task, again=False):
            return task
    while True:
        due = [s.retry_at for s in slots.values() if s.retry_at is not None]
        pid, status = _wait(max(0.0, min(due) - clock()) if due else None)
        now = clock()
        for task, slot in sorted(slots.items()):
            if slot.retry_at is not None and slot.retry_at <= now:
                slot.retry_at = None
                log.warning(
                    "worker %d: retried, %.0f s after it was given up (given up again, it is "
                    "retried after %.0f s)",
                    task,
                    slot.delay,
                    min(slot.delay * 2, policy.retry_max),
                )
                slot.delay = min(slot.delay * 2, policy.retry_max)
                if start(task, again=True):
                    return task
        task = children.pop(pid, None) if pid else None
        if task is None:
            continue
        slot = slots[task]
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == RECYCLE_STATUS:
            # The worker said why, with its memory: one line per recycle is enough.
            log.info("worker %d (pid %d) recycled; a fresh one takes its place", task, pid)
            if start(task, again=True):
                return task
            continue
        how = _how(status)
        if now - slot.started >= policy.window:
            slot.delay = policy.retry  # it served a whole window: a crash is news again
        if slot.budget.allow():
            log.warning("worker %d (pid %d) %s; starting it again", task, pid, how)
            if start(task, again=True):
                return task
            continue
        slot.retry_at = now + slot.delay
        log.warning(
            "worker %d (pid %d) %s; not started again now (%d restarts in the last %.0f s): "
            "retried in %.0f s; serving with the %d other worker(s)",
            task,
            pid,
            how,
            policy.restarts,
            policy.window,
            slot.delay,
            len(children),
        )
        if not children:
            raise CannotServe(
                f"no worker left to serve: the last, worker {task}, {how} after "
                f"{policy.restarts} restarts within {policy.window:g} s; stopping so that a "
                "service manager can start the command again"
            )


class SupervisedHTTPServer(HTTPServer):
    """Tornado's ``HTTPServer`` whose ``start(n)`` forks its workers with :func:`supervise`.

    ``n`` is Tornado's: the number of workers, 0 or less one per CPU; but
    :data:`ONE_WORKER` is one supervised worker, and 1 serves from this process.
    """

    policy: Policy = Policy()

    def start(self, num_processes: int | None = 1, max_restarts: int | None = None) -> None:
        if num_processes != 1:
            if num_processes == ONE_WORKER:
                count = 1
            elif num_processes is None or num_processes <= 0:
                count = os.cpu_count() or 1
            else:
                count = num_processes
            supervise(count, self.policy)  # returns in a worker only
        super().start(1)


@contextlib.contextmanager
def supervised(policy: Policy | None = None) -> Iterator[None]:
    """Within: a Bokeh server made with ``num_procs`` other than 1 forks through
    :func:`supervise` (Tornado's public ``Configurable.configure``); after, Tornado's own."""
    kind = type("SupervisedHTTPServer", (SupervisedHTTPServer,), {"policy": policy or Policy()})
    HTTPServer.configure(kind)
    try:
        yield
    finally:
        HTTPServer.configure(None)
