"""One WebSocket connection cannot make the server hold buffers without end.

:class:`FrameBudget` is held to Bokeh's protocol as a law: any run of well-formed
messages within the bounds passes, and a message declaring more buffers than the
bound is stopped at its header. Against the real command (patches on and with
``CANDELA_PLAIN=1``), a raw client declares ``num_buffers: 10**9`` and sends 60 KB
binary frames: its connection is closed before the server holds them, with one log
line, the worker does not grow, and another student's edit is answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.connection_bounds import MAX_BUFFERS, FrameBudget
from explorer.testing import (
    BokehClient,
    free_port,
    rss_mb,
    run_in_thread,
    start_command,
    stop_command,
    tree_sum,
    wait_for_url,
)

pytestmark = pytest.mark.safety


def frames(num_buffers: int, sizes: list[int]) -> list[str | bytes]:
    header = {"msgid": "1", "msgtype": "PATCH-DOC", "num_buffers": num_buffers}
    out: list[str | bytes] = [json.dumps(header), "{}", json.dumps({"events": []})]
    for i, size in enumerate(sizes[:num_buffers]):
        out += [json.dumps({"id": str(i)}), b"x" * size]
    return out


@given(
    messages=st.lists(
        st.integers(0, MAX_BUFFERS).flatmap(
            lambda n: st.tuples(st.just(n), st.lists(st.integers(0, 4096), min_size=n, max_size=n))
        ),
        max_size=20,
    )
)
def test_well_formed_messages_within_the_bounds_always_pass(messages):
    budget = FrameBudget()
    for num_buffers, sizes in messages:
        for frame in frames(num_buffers, sizes):
            assert budget.over(frame) is None


@given(declared=st.integers(MAX_BUFFERS + 1, 10**12), before=st.integers(0, 5))
def test_a_message_declaring_too_many_buffers_is_stopped_at_its_header(declared, before):
    budget = FrameBudget()
    for _ in range(before):
        for frame in frames(1, [10]):
            assert budget.over(frame) is None
    why = budget.over(frames(declared, [])[0])
    assert why is not None and f"{declared:,}" in why


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads memory from /proc")
@pytest.mark.parametrize("plain", ["", "1"], ids=["patched", "plain"])
def test_a_connection_declaring_a_billion_buffers_is_closed_before_it_swells_the_worker(plain):
    port = free_port()
    proc = start_command(
        ["--port", str(port), "--ready", "0"],
        env={"CANDELA_PLAIN": plain, "CANDELA_LOG_WINDOW_S": "0.5"},
    )
    chunk = b"\0" * 60_000

    async def scenario() -> dict:
        student, hostile = BokehClient(port), BokehClient(port)
        await student.open("/?shape=3,4")
        await hostile.open("/?shape=3,4")
        figures = {"rss_before": tree_sum(rss_mb, proc.pid), "sent": 0}
        try:
            header = {"msgid": "x", "msgtype": "PATCH-DOC", "num_buffers": 10**9}
            for part in (header, {}, {"events": []}):
                await hostile.ws.write_message(json.dumps(part))
            for i in range(1000):
                await hostile.ws.write_message(json.dumps({"id": str(i)}))
                await hostile.ws.write_message(chunk, binary=True)
                figures["sent"] += 1
        except Exception as exc:  # the server closed it: writing fails
            figures["error"] = type(exc).__name__
        # Whatever was written, the server closed the connection.
        with contextlib.suppress(ConnectionError):
            while True:
                await asyncio.wait_for(hostile.read(), 30)
        figures["close_code"] = hostile.ws.close_code
        figures["edit_ms"] = await student.edit(".T")
        figures["rss_after"] = tree_sum(rss_mb, proc.pid)
        await student.close()
        return figures

    try:
        wait_for_url(proc)
        figures = run_in_thread(scenario, timeout=180)
        time.sleep(1.0)  # past the log's window
    finally:
        out = stop_command(proc)
    assert figures["close_code"] == 1009, figures
    # 1,000 such frames used to grow the worker by ~57 MB.
    assert figures["rss_after"] - figures["rss_before"] < 15, figures
    assert figures["edit_ms"] < 10_000, figures
    refused = [line for line in out.splitlines() if "refused a WebSocket connection" in line]
    assert len(refused) == 1 and "1,000,000,000 buffers" in refused[0], out
    assert "Traceback" not in out, out
