"""One address cannot have the server build pages without end: a class opening together
never meets its budget, a flood always does, and the class carries on.

:class:`PageBudget` is held to laws on a clock of its own; against the real command
(``--behind-proxy``, each request naming its address as a proxy does), one address asks
for pages as fast as it can: past its budget it is answered 429 with ``Retry-After`` at
once, the log says so in one line and a count, and another address's page is served.
"""

from __future__ import annotations

import http.client
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.connection_bounds import PAGES, PageBudget
from explorer.testing import free_port, start_command, stop_command, wait_for_url

pytestmark = pytest.mark.safety

RATE, BURST = PAGES


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


ADDRESSES = st.sampled_from(["10.0.0.7", "10.0.0.8", "2001:db8::7", "192.0.2.1"])


@given(st.lists(st.tuples(st.floats(0, 5), ADDRESSES), max_size=300))
def test_any_trace_serves_at_most_the_burst_and_the_refill(trace):
    # For each address: what is served never exceeds the burst plus a page a second since
    # its first request, and a refused request is told a wait of at most a second's refill.
    clock = Clock()
    budget = PageBudget(clock)
    served: dict[str, int] = {}
    first: dict[str, float] = {}
    for gap, address in trace:
        clock.now += gap
        first.setdefault(address, clock.now)
        wait = budget.admit(address)
        assert 0 <= wait <= 1 / RATE + 1e-9
        if wait == 0:
            served[address] = served.get(address, 0) + 1
        assert served.get(address, 0) <= BURST + (clock.now - first[address]) * RATE + 1e-6


@given(st.integers(1, int(BURST)), st.lists(st.floats(1 / RATE, 600), max_size=200))
def test_a_class_opening_together_then_at_a_persons_pace_is_never_refused(class_size, gaps):
    # A class behind one address opens the page at the same instant, then someone
    # reloads now and then (no faster than the budget's rate).
    clock = Clock()
    budget = PageBudget(clock)
    assert all(budget.admit("10.0.0.7") == 0 for _ in range(class_size))
    clock.now += class_size / RATE  # the class's pages refilled
    for gap in gaps:
        clock.now += gap
        assert budget.admit("10.0.0.7") == 0


@given(st.integers(1, 500), st.floats(0, 0.2))
def test_a_flood_from_one_address_is_refused_past_the_burst(extra, gap):
    clock = Clock()
    budget = PageBudget(clock)
    asked = int(BURST) + extra
    refused = 0
    for _ in range(asked):
        clock.now += gap
        refused += budget.admit("10.0.0.7") > 0
    assert refused >= asked - BURST - clock.now * RATE - 1
    assert budget.admit("10.0.0.8") == 0, "another address is not held back"
    assert budget.admit("127.0.0.1") == 0 and budget.admit("::1") == 0, "the server's own"


def _median_s(answers: list) -> float:
    return sorted(a[2] for a in answers)[len(answers) // 2]


def _get(port: int, address: str, path: str = "/?shape=3,4") -> tuple[int, str | None, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    started = time.monotonic()
    try:
        conn.request("GET", path, headers={"X-Real-IP": address})
        response = conn.getresponse()
        response.read()
        return response.status, response.getheader("Retry-After"), time.monotonic() - started
    finally:
        conn.close()


def test_a_flood_of_pages_from_one_address_is_answered_429_and_the_class_carries_on():
    port = free_port()
    proc = start_command(
        ["--port", str(port), "--ready", "0", "--behind-proxy"],
        env={"CANDELA_LOG_WINDOW_S": "0.5"},
    )
    try:
        wait_for_url(proc)
        asked = int(BURST) + 60
        started = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda _: _get(port, "10.0.0.7"), range(asked)))
        elapsed = time.monotonic() - started
        # autoload.js builds a session as a page does: the same budget (five asked
        # together: the bucket refills a page a second, however slow a page served is).
        embedded = [
            _get(port, "10.0.0.7", "/autoload.js?bokeh-autoload-element=x") for _ in range(5)
        ]
        other = _get(port, "10.0.0.8")
        time.sleep(1.0)
    finally:
        out = stop_command(proc)
    served = [a for a in answers if a[0] == 200]
    refused = [a for a in answers if a[0] == 429]
    assert len(served) + len(refused) == asked, {a[0] for a in answers}
    assert len(served) <= BURST + elapsed * RATE + 1, (len(served), elapsed)
    assert refused and all(a[1] is not None and int(a[1]) >= 1 for a in refused)
    # A refusal costs nothing: answered sooner than a page is built (medians, one run).
    assert _median_s(refused) < _median_s(served), (_median_s(refused), _median_s(served))
    assert other[0] == 200, "another address's page is served"
    assert [a[0] for a in embedded].count(429) >= 2, embedded
    lines = [line for line in out.splitlines() if "429" in line]
    # One line, then counts: a line naming the address at most once a counting window.
    named = sum("10.0.0.7" in line for line in lines)
    assert 1 <= named <= max(3, len(refused) // 4), out[-2000:]
    assert "Traceback" not in out, out[-3000:]
