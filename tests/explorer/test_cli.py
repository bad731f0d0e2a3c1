"""The ways in: ``candela-explorer``, ``python -m explorer`` and ``panel serve explorer/app.py``.

Each is started as a real process on a free port; the test waits for the URL it
prints (or for the port to answer), fetches the page over HTTP and stops it.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from explorer.testing import free_port, start_command, stop_command, wait_for_url

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def fetch(url: str, deadline: float) -> str:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.parametrize(
    "cmd",
    [
        [str(BIN / "candela-explorer"), "--no-browser"],
        [sys.executable, "-m", "explorer", "--no-browser"],
    ],
    ids=["candela-explorer", "python -m explorer"],
)
def test_the_command_serves_on_localhost_and_prints_the_url(cmd):
    port = free_port()
    proc = start_command(
        ["--port", str(port), "--shape", "3,4", "--ops", ".transpose()"], program=cmd
    )
    try:
        lines = wait_for_url(proc, timeout=60)
        url = re.search(r"Candela Explorer: (http://\S+)", lines[-1]).group(1)
        assert url.startswith(f"http://127.0.0.1:{port}/?shape=3,4&ops=.transpose()")
        page = fetch(url, time.monotonic() + 60)
        assert "<title>Candela Explorer</title>" in page
    finally:
        stop_command(proc)


def test_a_busy_port_is_a_clear_message_not_a_traceback():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "explorer", "--no-browser", "--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 2
    assert f"cannot serve on 127.0.0.1:{port}" in proc.stderr and "Traceback" not in proc.stderr


def test_panel_serve_of_the_app_file_works():
    port = free_port()
    proc = start_command(
        ["serve", "explorer/app.py", "--port", str(port), "--address", "127.0.0.1"],
        program=[str(BIN / "panel")],
    )
    try:
        page = fetch(f"http://127.0.0.1:{port}/app?shape=2,3", time.monotonic() + 60)
        assert "<title>Candela Explorer</title>" in page
    finally:
        out = stop_command(proc)
    assert "Traceback" not in out and "Error" not in out, out


def test_waiting_for_a_command_that_prints_nothing_ends_at_its_timeout():
    # A command that hangs without a line must fail the test that waits for its URL,
    # not hang it: the wait is bounded, and the silent command is stopped.
    silent = start_command([], program=[sys.executable, "-c", "import time; time.sleep(120)"])
    started = time.monotonic()
    try:
        with pytest.raises(AssertionError, match="printed no URL within 2 s"):
            wait_for_url(silent, timeout=2)
        assert time.monotonic() - started < 30
        assert silent.wait(timeout=10) is not None  # killed, not left running
    finally:
        stop_command(silent)


def test_waiting_for_the_url_gives_every_line_up_to_it():
    script = "print('one'); print('two'); print('Candela Explorer: http://x/'); print('after')"
    proc = start_command([], program=[sys.executable, "-c", script])
    try:
        lines = wait_for_url(proc, timeout=30)
        assert [line.strip() for line in lines] == ["one", "two", "Candela Explorer: http://x/"]
        proc.wait(timeout=30)  # it has printed everything and ended
    finally:
        rest = stop_command(proc)
    assert rest.strip() == "after"  # what follows the URL is left in the pipe for the caller
