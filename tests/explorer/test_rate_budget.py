"""One connection cannot flood the server: a person never meets its budget, a flood always does.

:class:`RateBudget` is held to two laws on a clock of its own: any trace a person
could make (edits, clicks, resizes, at a person's pace) is never slowed; any
trace that keeps sending faster than the budget is slowed and then closed.
Against the real command, a raw client sends requests without waiting
for the answers: it is closed with one log line, and another student's edits
are answered meanwhile.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.connection_bounds import (
    BUDGETS,
    CPU_PER_S,
    MESSAGES_PER_S,
    RateBudget,
)
from explorer.testing import (
    BokehClient,
    free_port,
    run_in_thread,
    start_command,
    stop_command,
    wait_for_url,
)

pytestmark = pytest.mark.safety


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run(trace: list[tuple]) -> tuple[float, bool]:
    """Feed ``(gap before, CPU seconds[, a pull])`` messages as the handler does; (waited,
    closed)."""
    clock = Clock()
    budget = RateBudget(clock)
    waited = 0.0
    for gap, cpu, *pull in trace:
        clock.now += gap
        wait = budget.admit()
        if wait is None:
            return waited, True
        clock.now += wait
        waited += wait
        budget.charge(cpu, pull=bool(pull and pull[0]))
        clock.now += cpu
    return waited, False


#: What one person does, as (gap before, CPU): an edit (75 ms of the server's CPU, the
#: dearest measured), a new shape (300 ms), a sweep of resizes or keys (10 a second).
PERSON_ACTS = st.one_of(
    st.tuples(st.floats(0.5, 30), st.just(0.075), st.just(False)),  # an edit, typed or clicked
    st.tuples(st.floats(2.0, 30), st.just(0.3), st.just(False)),  # a new shape, a lesson step
    st.tuples(st.floats(0.1, 5), st.just(0.002), st.just(False)),  # a resize, a key, a hover
    st.tuples(st.floats(10.0, 60), st.just(0.05), st.just(True)),  # reconnected: the document
)


@given(st.lists(PERSON_ACTS, max_size=400))
def test_a_person_at_a_persons_pace_is_never_slowed(trace):
    waited, closed = run(trace)
    assert waited == 0 and not closed


@given(gap=st.floats(0, 1 / (4 * MESSAGES_PER_S)), cpu=st.floats(0, 0.3))
def test_a_flood_of_messages_is_slowed_then_closed(gap, cpu):
    # At least twice the message budget, or more of the CPU budget than a second has.
    waited, closed = run([(gap, cpu)] * 4000)
    assert closed and waited > 0


@given(gap=st.floats(0, 0.5))
def test_a_flood_of_dear_messages_is_slowed_then_closed(gap):
    # Messages at any pace that each cost three times the pause before them: 1.5 times
    # the CPU budget, or more.
    cpu = max(0.05, 3 * gap)
    assert cpu / (gap + cpu) >= 1.5 * CPU_PER_S - 1e-9
    waited, closed = run([(gap, cpu)] * 2000)
    assert closed and waited > 0


@given(gap=st.floats(0, 5), cpu=st.floats(0, 0.05))
def test_a_flood_of_document_requests_is_slowed_then_closed(gap, cpu):
    # A page asks for its document once; again and again, even slowly, is no page.
    waited, closed = run([(gap, cpu, True)] * 400)
    assert closed and waited > 0


def test_a_pause_brings_a_slowed_connection_back():
    clock = Clock()
    budget = RateBudget(clock)
    for _ in range(400):  # a burst past the budget
        budget.charge(0.0)
    assert budget.admit() > 0
    clock.now += 60  # a minute's quiet: the buckets refill and the slowing is forgiven
    assert budget.admit() == 0 and budget.slowed == 0
    assert budget.left == {name: burst for name, (_, burst) in BUDGETS.items()}


def test_a_flooding_connection_is_closed_and_the_class_carries_on():
    port = free_port()
    proc = start_command(["--port", str(port), "--ready", "0"], env={"CANDELA_LOG_WINDOW_S": "0.5"})

    async def scenario() -> dict:
        student, flood = BokehClient(port), BokehClient(port)
        await student.open("/?shape=3,4")
        await flood.open("/?shape=24,24")
        found = {"sent": 0, "closed_after_s": None, "edits_ms": []}
        started = time.monotonic()

        async def flooding() -> None:
            try:
                while time.monotonic() - started < 120:
                    await flood.send("SERVER-INFO-REQ", {})
                    found["sent"] += 1
                    await asyncio.sleep(0.002)
            except Exception:  # the server closed it
                pass

        async def draining() -> None:
            try:
                while True:
                    await flood.read()
            except Exception:
                found["closed_after_s"] = time.monotonic() - started

        tasks = [asyncio.ensure_future(flooding()), asyncio.ensure_future(draining())]
        try:
            ops = [".transpose()", ".T[1:]", ".transpose()[:, ::2]", ".flip(0)"]
            for i in range(8):
                found["edits_ms"].append(await student.edit(ops[i % len(ops)]))
                await asyncio.sleep(0.5)
            try:
                await asyncio.wait_for(tasks[1], 120)
            except asyncio.TimeoutError:
                raise AssertionError(f"the flood was not closed: {found}") from None
        finally:
            for task in tasks:
                task.cancel()
            await student.close()
            await flood.close()
        return found

    try:
        wait_for_url(proc)
        found = run_in_thread(scenario, timeout=300)
        time.sleep(1.0)
    finally:
        out = stop_command(proc)
    assert found["closed_after_s"] is not None, found
    # The other student's edits were answered while the flood was slowed.
    assert len(found["edits_ms"]) == 8 and max(found["edits_ms"]) < 10_000, found
    closing = [line for line in out.splitlines() if "closed a WebSocket connection" in line]
    assert len(closing) == 1 and "slowed" in closing[0], out[-2000:]
    assert "Traceback" not in out, out[-3000:]
