"""Worker restarts are budgeted per time window, a given-up worker comes back, and the
command never ends with status 0 while it meant to serve.

The budget is checked as a law against a direct count over a fake clock; the real
command (``--num-procs 2``) has one worker killed again and again, past the
budget: it keeps serving with the other, never exiting as Tornado's own limit
made it ("Too many child restarts"); with the delays made short
(``CANDELA_WORKER_*``), the given-up worker is back after its retry delay, and
once every worker is given up the command exits non-zero with one line saying why.
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
from explorer.testing import free_port, start_command, stop_command
from explorer.workers import RESTARTS, RestartBudget, policy_from_env


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


def wait_for_workers(proc, count: int, timeout: float = 60) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = cli._worker_pids(proc.pid)
        if len(pids) >= count or proc.poll() is not None:
            return pids
        time.sleep(0.05)
    return cli._worker_pids(proc.pid)


def kill_until_given_up(proc, spare: set[int], restarts: int) -> None:
    """Kill every worker not in ``spare`` as it comes, ``restarts + 1`` times."""
    killed: set[int] = set()
    for _ in range(restarts + 1):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            victims = [p for p in cli._worker_pids(proc.pid) if p not in killed | spare]
            if victims:
                break
            time.sleep(0.02)
        else:
            return
        killed.add(victims[0])
        os.kill(victims[0], signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads workers from /proc")
def test_a_given_up_worker_comes_back_and_the_command_never_exits_0():
    restarts, retry = 2, 4.0
    port = free_port()
    env = {
        "CANDELA_WORKER_RESTARTS": str(restarts),
        "CANDELA_WORKER_WINDOW_S": "60",
        "CANDELA_WORKER_RETRY_S": str(retry),
    }
    proc = start_command(["--port", str(port), "--num-procs", "2", "--ready", "0"], env=env)
    try:
        assert len(wait_for_workers(proc, 2)) == 2
        survivor = min(cli._worker_pids(proc.pid))
        kill_until_given_up(proc, {survivor}, restarts)
        given_up = time.monotonic()
        time.sleep(0.5)
        assert cli._worker_pids(proc.pid) == [survivor]  # given up for now
        back = wait_for_workers(proc, 2, timeout=retry * 5)
        waited = time.monotonic() - given_up
        assert len(back) == 2 and survivor in back, back  # ... and retried
        assert waited >= retry - 0.6, waited  # not before its delay
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) as response:
            assert response.status == 200
        # Now every worker, each past its budget: nothing left to serve.
        kill_until_given_up(proc, set(), 2 * (restarts + 1) + 2)
        status = proc.wait(timeout=60)
    finally:
        out = stop_command(proc, timeout=60)
    assert status not in (0, None), out
    assert "Traceback" not in out, out
    assert out.count("not started again now") >= 2, out
    assert out.count(f"retried in {retry:.0f} s") >= 1 and "worker 1: retried" in out, out
    last = out.strip().splitlines()[-1]
    assert last.startswith("candela-explorer: no worker left to serve"), out


@pytest.mark.parametrize(
    "name, value",
    [
        ("CANDELA_WORKER_RESTARTS", "ten"),
        ("CANDELA_WORKER_RETRY_S", "-1"),
        ("CANDELA_WORKER_WINDOW_S", "nan"),
        ("CANDELA_WORKER_RETRY_MAX_S", "1e9"),
    ],
)
def test_a_bad_worker_setting_is_named(name, value):
    with pytest.raises(ValueError, match=name):
        policy_from_env({name: value})


@given(retry=st.floats(0.1, 1000), cap=st.floats(0.1, 1000))
def test_the_retry_delay_never_exceeds_its_cap(retry, cap):
    policy = policy_from_env(
        {"CANDELA_WORKER_RETRY_S": repr(retry), "CANDELA_WORKER_RETRY_MAX_S": repr(cap)}
    )
    assert policy.retry == retry and policy.retry_max == max(retry, cap)
