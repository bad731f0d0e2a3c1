"""A refusal costs the server nothing, and says so correctly.

The real command serves with pages built ahead (``--ready``); a trickle of
requests it must refuse (a foreign ``Host``, a WebSocket upgrade for a foreign
``Host``, a WebSocket from a page of a foreign origin) is sent over raw sockets.
Each gets ``403 Forbidden``; the server's CPU time and memory (read from /proc)
and its pool of built pages (a page taken would be built again within seconds,
costing about 0.6 s of CPU) stay where they were.
"""

from __future__ import annotations

import base64
import os
import re
import socket
import sys
import time

import pytest

from explorer.testing import (
    cpu_seconds,
    free_port,
    rss_mb,
    start_command,
    tree_sum,
    wait_for_url,
)

pytestmark = [
    pytest.mark.safety,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]


def settle(pid: int, window: float = 2.0, timeout: float = 120.0) -> None:
    """Wait until the server (the command and its worker) spends (nearly) no CPU over
    ``window`` seconds: its pool is full."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = tree_sum(cpu_seconds, pid)
        time.sleep(window)
        if tree_sum(cpu_seconds, pid) - before < 0.05:
            return
    pytest.fail("the server never went idle")


def raw(port: int, request: str) -> str:
    """Send ``request`` to 127.0.0.1:``port``; the status line of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request.encode("latin-1"))
        answer = b""
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.split(b"\r\n", 1)[0].decode("latin-1")


def get(host: str) -> str:
    return f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"


def upgrade(host: str, origin: str) -> str:
    key = base64.b64encode(os.urandom(16)).decode()
    return (
        f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Sec-WebSocket-Protocol: bokeh, x\r\nOrigin: {origin}\r\n\r\n"
    )


@pytest.mark.patched("refuse_early")
def test_a_trickle_of_refused_requests_costs_no_cpu_memory_or_page():
    port = free_port()
    # Repeated log lines are counted once a window: a short one, so every count is written.
    proc = start_command(["--port", str(port), "--ready", "3"], env={"CANDELA_LOG_WINDOW_S": "1"})
    try:
        wait_for_url(proc)
        own = f"127.0.0.1:{port}"
        # No page asked for first: one served and never opened holds the pool's next
        # build back for seconds, which would fall inside the measurement.
        kinds = [
            get(f"evil.example:{port}"),
            get(""),
            upgrade(f"evil.example:{port}", f"http://evil.example:{port}"),
            upgrade(own, "http://evil.example"),
        ]
        for request in kinds:  # each kind once before measuring: its code is warm
            assert raw(port, request) == "HTTP/1.1 403 Forbidden", request
        settle(proc.pid)
        cpu, rss = tree_sum(cpu_seconds, proc.pid), tree_sum(rss_mb, proc.pid)
        refusals = kinds * 10
        for request in refusals:
            assert raw(port, request) == "HTTP/1.1 403 Forbidden", request
            time.sleep(0.2)
        time.sleep(4.0)  # a page taken from the pool would be built again by now
        spent = tree_sum(cpu_seconds, proc.pid) - cpu
        grown = tree_sum(rss_mb, proc.pid) - rss
        # Building one page costs ~0.6 s of CPU, a refused one used to cost ~0.13 s.
        assert spent < 0.5, f"{len(refusals)} refusals cost {spent:.2f} s of CPU"
        assert grown < 5, f"{len(refusals)} refusals grew the server by {grown:.1f} MB"
        assert raw(port, get(own)) == "HTTP/1.1 200 OK"  # the server's own name is served
    finally:
        proc.terminate()
        out = proc.communicate(timeout=30)[0]
    assert "Traceback" not in out, out
    assert "--allow-websocket-origin" not in out and "--allow-origin" in out, out
    refused = [line for line in out.splitlines() if "refused" in line]
    # Each refusal is one line, or counted in one ("3 more like it in the last 1 s: ...").
    counts = [re.match(r"(\d+) more like it", line) for line in refused]
    assert sum(int(m.group(1)) if m else 1 for m in counts) == len(refusals) + len(kinds)
    assert len(refused) < len(refusals) and all(len(line) < 300 for line in refused), refused
