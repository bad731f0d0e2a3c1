"""Who may drive a served explorer: a page on another site may not, whatever the bind
address; the command says who can reach it; and stopping it stops every worker.

Each server is the real command in a process of its own on a free port. Every
connection goes to 127.0.0.1 only, whatever address the server listens on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import signal
import sys
import time
import urllib.error
import urllib.request

import pytest

from explorer import cli
from explorer.testing import free_port, start_command, stop_command, wait_for_url

pytestmark = pytest.mark.safety

EVIL = "http://evil.example"


def page_token(port: int) -> str:
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
                page = response.read().decode()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    found = re.search(r'"token":"([^"]+)"', page)
    assert found, "no session token in the page"
    return found.group(1)


def websocket(port: int, origin: str, token: str) -> object:
    """Open the app's WebSocket at 127.0.0.1 with ``origin``: the first message, or the HTTP code."""
    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    async def go():
        request = HTTPRequest(f"ws://127.0.0.1:{port}/ws", headers={"Origin": origin})
        try:
            conn = await websocket_connect(request, subprotocols=["bokeh", token])
        except HTTPClientError as exc:
            return exc.code
        try:
            return await asyncio.wait_for(conn.read_message(), 20)
        finally:
            conn.close()

    # In a thread of its own: Playwright's sync API may hold this thread's event loop.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, go()).result()


def accepted(reply: object) -> bool:
    # Bokeh's first message on an accepted connection is its ACK header.
    return isinstance(reply, str) and "ACK" in reply


@pytest.mark.parametrize("address", ["127.0.0.1", "localhost", "0.0.0.0"])
def test_a_foreign_origin_is_refused_and_the_servers_own_are_accepted(address):
    port = free_port()
    extra = "school.example:8080"
    proc = start_command(["--address", address, "--port", str(port), "--allow-origin", extra])
    try:
        lines = wait_for_url(proc)
        token = page_token(port)
        for origin in (EVIL, f"{EVIL}:{port}", f"http://evil.localhost.example:{port}"):
            assert websocket(port, origin, token) == 403, origin
        own = [f"http://127.0.0.1:{port}", f"http://localhost:{port}", "http://school.example:8080"]
        if address == "0.0.0.0":
            own += [f"http://{host}:{port}" for host in cli.host_names()]
        for origin in own:
            assert accepted(websocket(port, origin, page_token(port))), origin
    finally:
        stop_command(proc)
    out = "".join(lines)
    url = re.search(r"Candela Explorer: http://([^/]+)/", out).group(1)
    if address == "0.0.0.0":
        assert "warning: listening on every network interface" in out
        assert not url.startswith("0.0.0.0") and not url.startswith("127.0.0.1")
    else:
        assert "warning" not in out and url == f"{address}:{port}"


def test_the_allowed_origins_are_where_the_server_is_reached():
    assert cli.allowed_origins("127.0.0.1", 5006) == ["localhost:5006", "127.0.0.1:5006"]
    assert cli.allowed_origins("localhost", 5006) == ["localhost:5006", "127.0.0.1:5006"]
    lan = cli.allowed_origins("192.0.2.7", 80, ["school.example"])
    assert lan[:3] == ["localhost:80", "127.0.0.1:80", "192.0.2.7:80"]
    assert lan[-1] == "school.example"
    anywhere = cli.allowed_origins("0.0.0.0", 5006)
    assert "*" not in anywhere and all(o.endswith(":5006") for o in anywhere)
    for host in cli.host_names() + cli.interface_addresses():
        assert f"{host}:5006" in anywhere


def test_the_server_kwargs_never_allow_every_origin():
    for address in ["127.0.0.1", "localhost", "0.0.0.0", "192.0.2.7", "::"]:
        args = cli.build_parser().parse_args(["--address", address])
        kwargs = cli.server_kwargs(args, 5006)
        assert "*" not in kwargs["websocket_origin"]
        # "::" binds both families: Tornado's every-interface address (None) does
        assert kwargs["address"] == (None if address == "::" else address)
        assert kwargs["port"] == 5006
        assert not any(o.startswith("[") for o in kwargs["websocket_origin"])  # Bokeh's list


def test_the_warning_names_who_can_reach_the_server_and_the_url_is_usable():
    assert cli.exposure_warning("127.0.0.1", 5006, []) is None
    assert cli.exposure_warning("localhost", 5006, []) is None
    lan = cli.exposure_warning("192.0.2.7", 5006, ["192.0.2.7:5006"])
    assert "anyone on a network that reaches 192.0.2.7 on port 5006" in lan
    every = cli.exposure_warning("0.0.0.0", 5006, ["*"])
    assert "every network interface" in every and "any site" in every
    url, others = cli.urls("0.0.0.0", 5006, "?shape=3,4")
    assert not url.startswith("http://0.0.0.0") and url.endswith(":5006/?shape=3,4")
    assert others[-1] == "http://127.0.0.1:5006/?shape=3,4" or url.startswith("http://127.0.0.1")


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("--allow-origin", "javascript:alert(1)", "not an origin"),
        ("--allow-origin", "http://a.example/path", "not an origin"),
        ("--allow-origin", "", "not an origin"),
        ("--address", "999.1.1.1", "not an IP address"),
        ("--address", "a b", "not an IP address"),
        ("--port", "70000", "0 to 65535"),
        ("--num-procs", "-1", "number of processes"),
        ("--ready", "-1", "number of pages"),
        ("--ready", "501", "number of pages"),
        ("--ready", "1e3", "number of pages"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(capsys, flag, value, words):
    with pytest.raises(SystemExit) as caught:
        cli.main([flag, value])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# --------------------------------------------------------------------------- workers


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().decode().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads workers from /proc")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=str)
@pytest.mark.parametrize(
    "procs",
    [1, 2],  # 1: one worker
    ids=lambda n: f"{n}procs",
)
def test_stopping_the_command_stops_every_worker(how, procs):
    port = free_port()
    proc = start_command(["--port", str(port), "--num-procs", str(procs)])
    workers: list[int] = []
    try:
        wait_for_url(proc)
        page_token(port)  # a worker serves
        deadline = time.monotonic() + 30
        while len(workers := cli._worker_pids(proc.pid)) < procs and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(workers) == procs, workers
        os.kill(proc.pid, how)  # the command alone, as a service manager would
        proc.wait(timeout=30)
        deadline = time.monotonic() + 20
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in workers), "a worker survived"
    finally:
        stop_command(proc)
        for pid in workers:  # never leave one behind, even on failure
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def http_status(port: int, host: str) -> tuple[int, str]:
    """GET / at 127.0.0.1 with the ``Host`` header ``host``: the status and the body's start."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/", headers={"Host": host})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read(20000).decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(200).decode(errors="replace")


def test_a_request_for_a_foreign_name_gets_no_page():
    # DNS rebinding: evil.example made to resolve to this machine must not read the page.
    port = free_port()
    proc = start_command(["--port", str(port), "--allow-origin", "school.example:8080"])
    try:
        wait_for_url(proc)
        page_token(port)  # the page is up, at its own name
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.2:{port}", ""):
            status, body = http_status(port, host)
            assert status == 403 and "token" not in body and "allow-origin" in body, host
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "school.example:8080"):
            status, body = http_status(port, host)
            assert status == 200 and "Candela Explorer" in body, host
    finally:
        stop_command(proc)
