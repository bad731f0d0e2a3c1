"""Worker restarts are budgeted per time window, and the command outlives a crash loop.

The budget is checked as a law against a direct count over a fake clock; the real
command (``--num-procs 2``) has one worker killed again and again, past the
budget: it keeps serving with the other, never exiting as Tornado's own limit
made it ("Too many child restarts").
"""

from __future__ import annotations

import os
import signal
import sys
import time
import urllib.request

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer import cli
from explorer.patches.worker_restarts import RESTARTS, RestartBudget
from explorer.testing import free_port, start_command, stop_command


@given(
    limit=st.integers(1, 5),
    window=st.floats(1, 100),
    gaps=st.lists(st.floats(0, 50), max_size=40),
)
def test_a_restart_is_allowed_iff_fewer_than_limit_were_allowed_within_the_window(
    limit, window, gaps
):
    now = [0.0]
    budget = RestartBudget(limit, window, clock=lambda: now[0])
    allowed: list[float] = []
    for gap in gaps:
        now[0] += gap
        recent = [t for t in allowed if now[0] - t < window]
        expected = len(recent) < limit
        assert budget.allow() == expected
        if expected:
            allowed.append(now[0])


@pytest.mark.patched("worker_restarts")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads workers from /proc")
def test_a_worker_in_a_crash_loop_is_given_up_and_the_command_serves_on():
    port = free_port()
    proc = start_command(["--port", str(port), "--num-procs", "2", "--ready", "0"])
    killed: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while len(cli._worker_pids(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        survivor = min(cli._worker_pids(proc.pid))
        for _ in range(RESTARTS + 1):  # one more death than the budget allows
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                victims = [p for p in cli._worker_pids(proc.pid) if p not in killed | {survivor}]
                if victims:
                    break
                time.sleep(0.05)
            else:
                pytest.fail("no worker was started again")
            killed.add(victims[0])
            os.kill(victims[0], signal.SIGKILL)
        time.sleep(2)
        assert proc.poll() is None, "the command exited"
        assert cli._worker_pids(proc.pid) == [survivor]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) as response:
            assert response.status == 200
    finally:
        out = stop_command(proc, timeout=60)
    assert "Too many child restarts" not in out and "Traceback" not in out
    assert out.count("starting it again") == RESTARTS, out
    assert "not started again" in out and "serving with the 1 other worker" in out, out
