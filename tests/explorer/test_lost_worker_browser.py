"""A lost worker is visible and survivable: in Chromium, against the real command.

``candela-explorer --num-procs 2`` serves a page; its workers are killed (as an
out-of-memory killer or an admin's ``kill`` would). The page says on screen that
its server went away and offers to reconnect; the command starts new workers, and
"reconnect" opens the same state again from the page's URL.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from explorer import cli
from explorer.testing import free_port, start_command, stop_command, wait_connected

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads workers from /proc"),
]


def workers_of(pid: int, count: int, other_than: set[int] = frozenset()) -> list[int]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = [w for w in cli._worker_pids(pid) if w not in other_than]
        if len(found) >= count:
            return found
        time.sleep(0.2)
    pytest.fail(f"the command has {cli._worker_pids(pid)} workers, not {count} new ones")


def test_a_page_whose_websocket_never_opens_says_so(page, explorer_server):
    """A proxy that does not pass WebSockets through: a served page is drawn from what
    its WebSocket brings, so it would stay blank. It says why, on screen; a page whose
    WebSocket works shows the explorer and not that line."""
    url = explorer_server + "?shape=3,4&ops=.transpose()"
    cut = page.context.browser.new_context().new_page()
    cut.route_web_socket("**/*", lambda ws: None)  # accepted, never answered
    try:
        cut.goto(url)
        waiting = cut.locator(".candela-waiting")
        expect(waiting).to_be_visible(timeout=30_000)
        expect(waiting).to_contain_text("cannot reach its server")
        expect(waiting).to_contain_text("WebSockets")
        page.goto(url)
        expect(page.locator(".candela-shape")).to_have_text("(4, 3)", timeout=60_000)
        page.wait_for_timeout(5_000)  # longer than the line waits before it shows
        expect(page.locator(".candela-waiting")).to_be_hidden()
    finally:
        cut.context.close()


def test_a_page_whose_server_went_away_says_so_and_reconnects_to_the_same_state(page, tmp_path):
    port = free_port()
    proc = start_command(["--port", str(port), "--num-procs", "2", "--ready", "0"])
    try:
        first = workers_of(proc.pid, 2)
        url = f"http://127.0.0.1:{port}/?shape=3,4&ops=.transpose()"
        page.goto(url)
        expect(page.locator(".candela-shape")).to_have_text("(4, 3)", timeout=90_000)
        expect(page.locator(".candela-lost")).to_have_count(0)
        # The page learns it has a server once its WebSocket is open; killed before
        # then, the page had no connection to lose.
        wait_connected(page, timeout=90_000)
        for pid in first:
            os.kill(pid, signal.SIGKILL)
        lost = page.locator(".candela-lost")
        expect(lost).to_be_visible(timeout=30_000)
        expect(lost).to_contain_text("server went away")
        page.screenshot(path=str(tmp_path / "lost-worker.png"))
        workers_of(proc.pid, 2, other_than=set(first))  # the command started new ones
        page.locator(".candela-reconnect").click()
        expect(page.locator(".candela-shape")).to_have_text("(4, 3)", timeout=90_000)
        expect(page.locator(".candela-lost")).to_have_count(0)
        assert page.url == url
        assert proc.poll() is None, "the command stopped"
    finally:
        out = stop_command(proc, timeout=60)
        for pid in cli._worker_pids(proc.pid):
            os.kill(pid, signal.SIGKILL)
    assert "Too many child restarts" not in out
