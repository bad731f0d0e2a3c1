"""Lean all day: sessions opened and closed in rounds, and a swelled session, give memory back.

Raw clients of Bokeh's protocol open pages as a browser does (GET, pull the
document, say it is drawn) and close them; the server's unused-session expiry
discards their sessions, the garbage of ended sessions is collected at a
pause (:mod:`explorer.patches.collect_at_a_pause`), and the server's resident
memory is read from ``/proc``. ``benchmarks/bench_load.py --soak-only`` runs the
same rounds on the real command, 1,000 sessions, and prints every round.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from explorer.testing import (
    BokehClient,
    free_port,
    rss_mb,
    run_in_thread,
    start_command,
    stop_command,
    wait_for_url,
)

#: Sessions opened (and closed) in each round of the in-process test, and how many at once.
ROUND, AT_ONCE, ROUNDS = 20, 4, 2
#: Every round must leave the server within this of its warm size once its sessions expired.
WITHIN_MB = 20
#: The in-process server's unused-session expiry (ms), checked every second.
LIFETIME_MS = 2000


def own_rss_mb() -> float:
    import os

    return rss_mb(os.getpid())


async def open_and_close(port: int, n: int, at_once: int, path: str = "/?shape=8,8") -> None:
    for _ in range(0, n, at_once):
        clients = [BokehClient(port) for _ in range(at_once)]
        await asyncio.gather(*(c.open(path) for c in clients))
        assert await clients[0].edit(".transpose()") < 60_000
        for client in clients:
            await client.close()


def settle(sessions) -> None:
    """Until every session expired and their garbage was collected (at most ~40 s)."""
    from explorer.patches.collect_at_a_pause import _COLLECTION

    deadline = time.monotonic() + 40
    while sessions() and time.monotonic() < deadline:
        time.sleep(0.25)
    ended = time.monotonic()
    while time.monotonic() < deadline:
        done = _COLLECTION["done"]
        if _COLLECTION["asked"] is None and done and done[-1][0] > ended:
            break
        time.sleep(0.25)
    time.sleep(0.5)


@pytest.mark.patched("collect_at_a_pause")
def test_sessions_opened_and_closed_in_rounds_leave_the_server_its_warm_size():
    from panel.io.state import state

    from explorer.testing import served_app

    with served_app(
        ready=2,
        unused_session_lifetime_milliseconds=LIFETIME_MS,
        check_unused_sessions_milliseconds=1000,
    ) as url:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        server = next(iter(state._servers.values()))[0]  # Panel's registry of its servers

        def sessions() -> int:
            return len(server.get_sessions())

        # Warm: a first round of the same size raises what the allocators keep for the
        # process to use again (Python's arenas, the C library's heap): ~40 MB over the
        # server as started, never given back (docs/benchmarks.md, "Memory over a day").
        started = own_rss_mb()
        run_in_thread(lambda: open_and_close(port, ROUND, AT_ONCE), timeout=600)
        settle(sessions)
        warm = own_rss_mb()
        after = []
        for _ in range(ROUNDS):
            run_in_thread(lambda: open_and_close(port, ROUND, AT_ONCE), timeout=600)
            settle(sessions)
            assert sessions() == 0
            after.append(own_rss_mb())
    figures = {"started": started, "warm": warm, "after": after}
    over = [a - warm for a in after]
    assert max(over) < WITHIN_MB, figures
    # No growth from round to round: what is left is what the allocators keep, not sessions.
    assert after[-1] - after[0] < WITHIN_MB / 2, figures


@pytest.mark.patched("collect_at_a_pause")
def test_a_swelled_session_gives_its_memory_back_when_it_ends():
    """A hostile client opens the largest page allowed and draws several big pipelines
    (small messages, each one a person could send); once it leaves and its session
    expires, the server is back to within a few MB of where it was.

    The patch's ``malloc_trim`` is what hands it back: with it off, the C library keeps
    the freed arrays for the process (its threshold for giving a large block its own
    mapping rises once one is freed), and the server stays swelled (119 of 119 MB)."""
    port = free_port()
    proc = start_command(["--port", str(port), "--ready", "0"])
    # Copies (as_contiguous) are what a page can make the server hold: its start
    # tensor and the buffer overview cost nothing in proportion to the elements.
    pipelines = [
        ".transpose()",
        ".transpose().as_contiguous()",
        ".reshape(1024, 32, 32).transpose().as_contiguous()",
        ".flip(0).as_contiguous()",
        ".reshape(512, 2048).transpose().as_contiguous()",
        ".reshape(2048, 512)[::-1].as_contiguous()",
    ]

    async def scenario() -> dict:
        warm_up = BokehClient(port)
        await warm_up.open("/?shape=3,4")
        await warm_up.close()
        figures = {"warm": rss_mb(proc.pid)}
        hostile = BokehClient(port)
        await hostile.open("/?shape=1024,1024")  # the most elements a page may have
        for ops in pipelines:
            await hostile.edit(ops)
        figures["swelled"] = rss_mb(proc.pid)
        await hostile.close()
        # Bokeh's defaults: unused 15 s, looked for every 17 s; then the collection.
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            await asyncio.sleep(2)
            figures["after"] = rss_mb(proc.pid)
            if figures["after"] - figures["warm"] < 8:
                break
        return figures

    try:
        wait_for_url(proc)
        figures = run_in_thread(scenario, timeout=300)
    finally:
        stop_command(proc)
    assert figures["swelled"] - figures["warm"] > 15, figures  # it did swell the server
    assert figures["after"] - figures["warm"] < 8, figures
