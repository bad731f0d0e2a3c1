"""The ways in: ``candela-explorer``, ``python -m explorer`` and ``panel serve explorer/app.py``.

Each is started as a real process on a free port; the test waits for the URL it
prints (or for the port to answer), fetches the page over HTTP and stops it.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from explorer.testing import free_port

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


def start(cmd: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "BROWSER": "true"}
    return subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )


def printed_url(proc: subprocess.Popen, deadline: float) -> str:
    lines = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        found = re.search(r"Candela Explorer: (http://\S+)", line)
        if found:
            return found.group(1)
    pytest.fail("no URL printed:\n" + "".join(lines))


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
    proc = start(cmd + ["--port", str(port), "--shape", "3,4", "--ops", ".transpose()"])
    try:
        deadline = time.monotonic() + 60
        url = printed_url(proc, deadline)
        assert url.startswith(f"http://127.0.0.1:{port}/?shape=3,4&ops=.transpose()")
        page = fetch(url, deadline)
        assert "<title>Candela Explorer</title>" in page
    finally:
        proc.terminate()
        proc.wait(timeout=20)


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
    proc = start(
        [
            str(BIN / "panel"),
            "serve",
            "explorer/app.py",
            "--port",
            str(port),
            "--address",
            "127.0.0.1",
        ]
    )
    try:
        page = fetch(f"http://127.0.0.1:{port}/app?shape=2,3", time.monotonic() + 60)
        assert "<title>Candela Explorer</title>" in page
    finally:
        proc.terminate()
        out = proc.communicate(timeout=20)[0]
    assert "Traceback" not in out and "Error" not in out, out
