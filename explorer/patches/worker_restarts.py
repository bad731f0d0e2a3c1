"""Worker processes restarted within a budget per time window; the command outlives them.

Patch ``worker_restarts``: with ``--num-procs N`` Bokeh's server forks its workers
through Tornado's ``fork_processes``, which starts a worker again whenever one
dies, but at most 100 times over the server's whole life: after 100 deaths (over
weeks of serving, say) the command itself stopped with "Too many child restarts",
every student's page with it. ``tornado.process.fork_processes`` is replaced by
:func:`fork_processes`, the same loop with :class:`RestartBudget`: at most
:data:`RESTARTS` restarts within any :data:`WINDOW_S` seconds. A worker that dies
beyond that (a crash loop) is not started again, and the command keeps serving
with the workers it has; it ends only when none is left. Each death and each
decision is one log line.

The same loop supervises the default single process too, and it is where a worker is
recycled (:mod:`explorer.recycling`): Bokeh forks only when told a number of
processes other than 1, so the command tells it :data:`ONE_WORKER`, which this loop
reads as one worker. The command's process then binds the listening sockets,
imports everything and forks; it never serves a session itself. A worker that exits
with :data:`RECYCLE_STATUS` asked to be replaced: a fresh one is forked from that
warm, never-serving process at once, and not counted against the budget (a worker
killed by a signal, or failing, is a death and is counted). With the patch off
there is no supervisor for one process (it serves as Bokeh serves), and no worker
is recycled.
"""

from __future__ import annotations

import collections
import logging
import os
import sys
import time
from collections.abc import Callable

from . import Patch, apply, register

__all__ = [
    "ONE_WORKER",
    "RECYCLE_STATUS",
    "RESTARTS",
    "WINDOW_S",
    "RestartBudget",
    "fork_processes",
    "replacement",
    "worker_restarts",
]

log = logging.getLogger("candela-explorer")

#: At most this many worker restarts ...
RESTARTS = 10
#: ... within any this many seconds.
WINDOW_S = 60.0
#: The number of processes the command gives Bokeh for one supervised worker (any number
#: but 1 makes Bokeh fork; Tornado's own loop would read it as one per CPU).
ONE_WORKER = -1
#: The exit status of a worker that asks to be replaced by a fresh one (EX_TEMPFAIL).
RECYCLE_STATUS = 75

#: In a worker: whether it took the place of an earlier one (recycled or dead).
_REPLACEMENT = [False]


def replacement() -> bool:
    """In a worker: True when it took the place of another (it prints no news again)."""
    return _REPLACEMENT[0]


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


def worker_restarts() -> bool:
    """Install the patch (see the module), if it is on."""
    return apply("worker_restarts")


def fork_processes(num_processes: int | None, max_restarts: int | None = None) -> int:
    """Tornado's ``fork_processes`` with restarts budgeted per window (see the module).

    Returns the task id (0 to N-1) in each worker; in the supervising process it
    returns only by ``SystemExit`` once every worker has ended. ``ONE_WORKER`` is one
    worker; a worker that exits with ``RECYCLE_STATUS`` is replaced at once, unbudgeted.
    """
    import tornado.process as process

    if num_processes == ONE_WORKER:
        num_processes = 1
    elif num_processes is None or num_processes <= 0:
        num_processes = process.cpu_count()
    budget = RestartBudget()
    children: dict[int, int] = {}

    def start_child(task: int, again: bool = False) -> int | None:
        pid = os.fork()
        if pid == 0:
            process._reseed_random()
            process._task_id = task
            _REPLACEMENT[0] = again
            return task
        children[pid] = task
        return None

    for task in range(num_processes):
        if start_child(task) is not None:
            return task
    while children:
        pid, status = os.wait()
        if pid not in children:
            continue
        task = children.pop(pid)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == RECYCLE_STATUS:
            # The worker said why, with its memory: one line per recycle is enough.
            log.info("worker %d (pid %d) recycled; a fresh one takes its place", task, pid)
            if start_child(task, again=True) is not None:
                return task
            continue
        if os.WIFSIGNALED(status):
            how = f"was stopped by signal {os.WTERMSIG(status)}"
        elif os.WEXITSTATUS(status) != 0:
            how = f"exited with status {os.WEXITSTATUS(status)}"
        else:
            continue  # ended as asked: not started again
        if budget.allow():
            log.warning("worker %d (pid %d) %s; starting it again", task, pid, how)
            if start_child(task, again=True) is not None:
                return task
        else:
            log.warning(
                "worker %d (pid %d) %s; not started again (%d restarts in the last %.0f s); "
                "serving with the %d other worker(s)",
                task,
                pid,
                how,
                budget.limit,
                budget.window,
                len(children),
            )
    sys.exit(0)


def _install() -> None:
    import tornado.process as process

    if getattr(process.fork_processes, "_candela", False):
        return
    fork_processes._candela = True  # type: ignore[attr-defined]
    process.fork_processes = fork_processes


register(
    Patch(
        name="worker_restarts",
        changes="tornado.process.fork_processes: restarts budgeted per time window; a "
        "worker past the budget is not replaced and the command serves on; one worker "
        "for ONE_WORKER; a worker exiting with RECYCLE_STATUS replaced unbudgeted",
        why="Tornado restarts workers at most 100 times over the server's life, then "
        "the whole command exits ('Too many child restarts')",
        buys="a server that runs for weeks; a crash loop stopped without stopping the others; "
        "a worker that served a day's sessions replaced by a fresh one (its memory back)",
        checked={"tornado": "6"},
        needs=(
            "tornado.process:fork_processes",
            "tornado.process:_reseed_random",
            "tornado.process:_task_id",
            "tornado.process:cpu_count",
        ),
        install=_install,
    )
)
