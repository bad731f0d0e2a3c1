"""Past one machine: two ``candela-explorer`` servers behind Debian's nginx, one link.

nginx (``docs/classroom.md`` has the configuration this test writes) keeps each
browser on one server (``hash`` on a cookie its ``userid`` module sets), passes
WebSockets through, and each server is started with ``--allow-origin`` for the
proxy's name. 60 pages are opened through it, raw protocol clients and a few
Chromium pages, each usable. Then the server of one student's page is stopped:
the page says its server went away, and "reconnect" lands on the other server
with the state in the URL kept.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from explorer.testing import (
    BokehClient,
    free_port,
    http_get,
    run_in_thread,
    session_token,
    start_command,
    stop_command,
    wait_connected,
)

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
pytestmark = [
    pytest.mark.browser,
    # Under CI the test never skips: tests/run installs nginx, and a missing one fails.
    pytest.mark.skipif(
        NGINX is None and os.environ.get("CI") != "true",
        reason="nginx is not installed (bash tests/run installs it)",
    ),
]
ROOT = Path(__file__).resolve().parents[2]
PAGES, BROWSER_PAGES = 60, 3

NGINX_CONF = """
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;

    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      close;
    }}
    upstream explorer {{
        # One browser, one server: its page and its WebSocket meet the same session.
        hash $uid_got$uid_set consistent;
        server 127.0.0.1:{one} max_fails=1 fail_timeout=60s;
        server 127.0.0.1:{two} max_fails=1 fail_timeout=60s;
    }}
    server {{
        listen 127.0.0.1:{port};
        userid on;
        userid_name candela_route;
        userid_path /;
        location / {{
            proxy_pass http://explorer;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $http_host;
            proxy_set_header X-Real-IP $remote_addr;
            proxy_read_timeout 1h;
            proxy_next_upstream error timeout;
            add_header X-Candela-Server $upstream_addr always;
        }}
    }}
}}
"""


def start_server(port: int, proxy: str) -> subprocess.Popen:
    return start_command(
        ["--port", str(port), "--ready", "0", "--allow-origin", proxy, "--behind-proxy"]
    )


def wait_for(port: int, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/static/js/bokeh.min.js", headers={"Host": f"127.0.0.1:{port}"})
            if conn.getresponse().status in (200, 403):
                return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"nothing answers on port {port}")


class ProxiedClient(BokehClient):
    """A raw client that keeps the proxy's cookie, as a browser does; notes its server."""

    async def open(self, path: str = "/?shape=3,4") -> None:
        def get() -> tuple[int, bytes, str, str]:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                cookie = (response.getheader("Set-Cookie") or "").split(";")[0]
                server = response.getheader("X-Candela-Server") or ""
                return response.status, response.read(), cookie, server
            finally:
                conn.close()

        status, body, self.cookie, self.page_server = await asyncio.to_thread(get)
        if status != 200:
            raise RuntimeError(f"GET {path} through the proxy answered {status}")
        self.headers = {"Cookie": self.cookie}
        await self.start(session_token(body))
        self.ws_server = self.ws.headers.get("X-Candela-Server", "")


class CookielessClient(ProxiedClient):
    """A raw client that never sends the proxy's cookie back: its WebSocket may reach
    either server."""

    async def start(self, token: str) -> None:
        self.headers = {}
        await super().start(token)


def test_a_page_whose_websocket_reaches_another_server_gets_its_own_url_state():
    # Deterministic: the page from one server, its WebSocket to the other (as a client
    # that drops the proxy's cookie may do). The state travels in the connection.
    one, two = free_port(), free_port()
    servers = [start_server(one, "*"), start_server(two, "*")]

    async def crossed() -> tuple[str, str]:
        status, body = await asyncio.to_thread(http_get, one, "/?shape=5,6&ops=.T")
        assert status == 200
        client = BokehClient(two)
        await client.start(session_token(body))
        try:
            return client.value("candela-shape-input"), client.value("candela-ops-input")
        finally:
            await client.close()

    try:
        for port in (one, two):
            wait_for(port)
        assert run_in_thread(crossed, timeout=300) == ("5,6", ".T")
    finally:
        for server in servers:
            stop_command(server)


def test_two_servers_behind_nginx_serve_one_link_and_a_student_moves_on_when_one_stops(
    page, tmp_path
):
    proxy_port, one, two = free_port(), free_port(), free_port()
    proxy = f"127.0.0.1:{proxy_port}"
    servers = {one: start_server(one, proxy), two: start_server(two, proxy)}
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        NGINX_CONF.format(tmp=tmp_path, one=one, two=two, port=proxy_port), encoding="utf-8"
    )
    nginx = subprocess.Popen(
        [NGINX, "-c", str(conf), "-p", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for port in (one, two, proxy_port):
            wait_for(port)

        async def class_of_raw_clients() -> list[tuple[str, str, float]]:
            found, clients = [], []
            for start in range(0, PAGES - BROWSER_PAGES, 10):  # ten at a time, as a class
                batch = [ProxiedClient(proxy_port) for _ in range(10)][
                    : PAGES - BROWSER_PAGES - start
                ]
                await asyncio.gather(*(c.open("/?shape=3,4") for c in batch))
                clients += batch
            times = await asyncio.gather(*(c.edit(".transpose()") for c in clients))
            for client, ms in zip(clients, times, strict=True):
                found.append((client.page_server, client.ws_server, ms))
                await client.close()
            return found

        raw = run_in_thread(class_of_raw_clients, timeout=900)
        # Every raw page: served, its WebSocket on the same server, an edit answered.
        assert len(raw) == PAGES - BROWSER_PAGES
        assert all(page_at and page_at == ws_at for page_at, ws_at, _ in raw), raw
        used = {page_at for page_at, _, _ in raw}
        assert used == {f"127.0.0.1:{one}", f"127.0.0.1:{two}"}, used

        # Clients that drop the cookie: wherever their WebSocket lands, their URL's state.
        async def cookieless() -> list[tuple[str, str, str, str]]:
            clients = [CookielessClient(proxy_port) for _ in range(10)]
            await asyncio.gather(*(c.open("/?shape=5,6&ops=.T") for c in clients))
            found = [
                (
                    c.page_server,
                    c.ws_server,
                    c.value("candela-shape-input"),
                    c.value("candela-ops-input"),
                )
                for c in clients
            ]
            for c in clients:
                await c.close()
            return found

        dropped = run_in_thread(cookieless, timeout=600)
        assert all(shape == "5,6" and ops == ".T" for _, _, shape, ops in dropped), dropped

        # A few Chromium pages, each with its own cookie (a context of its own).
        url = f"http://{proxy}/?shape=3,4&ops=.transpose()"
        contexts = [page.context.browser.new_context() for _ in range(BROWSER_PAGES - 1)]
        pages = [page] + [c.new_page() for c in contexts]
        served_by = []
        for p in pages:
            response = p.goto(url)
            served_by.append(response.headers.get("x-candela-server"))
            expect(p.locator(".candela-shape")).to_have_text("(4, 3)", timeout=120_000)
            wait_connected(p, timeout=120_000)

        # The server of the first student's page stops.
        gone = int(served_by[0].rsplit(":", 1)[1])
        servers[gone].terminate()
        servers[gone].wait(timeout=60)
        expect(page.locator(".candela-lost")).to_be_visible(timeout=60_000)
        page.locator(".candela-reconnect").click()
        expect(page.locator(".candela-shape")).to_have_text("(4, 3)", timeout=120_000)
        expect(page.locator(".candela-lost")).to_have_count(0)
        assert page.url == url
        # The page, and its WebSocket, are on the other server now: an edit is answered.
        box = page.locator(".candela-ops-input input")
        box.fill(".transpose().flip(0)")
        box.press("Enter")
        expect(page.locator(".candela-shape")).to_have_text("(4, 3)")
        expect(page).to_have_url(re.compile(r"flip"), timeout=60_000)
        for context in contexts:
            context.close()
    finally:
        nginx.terminate()
        nginx.wait(timeout=30)
        outs = []
        for proc in servers.values():
            if proc.poll() is None:
                proc.terminate()
            outs.append(proc.communicate(timeout=60)[0])
    assert not any("Traceback" in out for out in outs), outs
