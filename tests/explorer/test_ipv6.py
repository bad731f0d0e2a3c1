"""Every address form: IPv6 loopback, both families at once, a LAN IPv6 address.

The real command is started with each ``--address``; every URL it prints is
fetched, its page's WebSocket opened from the page's own origin, and a foreign
origin refused. Any ``Host`` a client sends gets 200 or 403, never a traceback.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import re
import socket
import urllib.request

import pytest

from explorer import cli
from explorer.testing import free_port, start_command, stop_command, wait_for_url


def _has_ipv6() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not _has_ipv6(), reason="no IPv6 on this machine")


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def websocket(url: str, origin: str) -> object:
    """Open the WebSocket of the page at ``url`` from ``origin``: its first message or the code."""
    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    token = re.search(r'"token":"([^"]+)"', fetch(url)[1]).group(1)
    base = re.match(r"http://([^/]+)/", url).group(1)

    async def go():
        request = HTTPRequest(f"ws://{base}/ws", headers={"Origin": origin})
        try:
            conn = await websocket_connect(request, subprotocols=["bokeh", token])
        except HTTPClientError as exc:
            return exc.code
        try:
            return await asyncio.wait_for(conn.read_message(), 30)
        finally:
            conn.close()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, go()).result()


def status_for_host(connect: str, port: int, host: str) -> int:
    conn = http.client.HTTPConnection(connect, port, timeout=60)
    try:
        conn.putrequest("GET", "/", skip_host=True)
        conn.putheader("Host", host)
        conn.endheaders()
        return conn.getresponse().status
    finally:
        conn.close()


ADDRESSES = ["::1", "::"] + [a for a in cli.interface_addresses6()][:1]


@pytest.mark.parametrize("address", ADDRESSES)
@pytest.mark.patched("ipv6_location")
def test_every_printed_url_works_and_its_page_may_open_its_websocket(address):
    port = free_port()
    proc = start_command(
        [
            "--ready",
            "0",
            "--address",
            address,
            "--port",
            str(port),
            "--allow-origin",
            "[fd00::7]:8080",
        ]
    )
    try:
        urls = re.findall(r"http://\S+", "".join(wait_for_url(proc, until="Press Ctrl+C")))
        assert urls, "no URL printed"
        if address == "::":  # both families: the IPv4 URLs and IPv6 loopback
            assert any("127.0.0.1" in url for url in urls) and any("[::1]" in url for url in urls)
        for url in urls:
            if re.match(r"http://[a-z]", url) and not url.startswith("http://localhost"):
                continue  # the machine's name: may not resolve on a test machine
            status, page = fetch(url)
            assert status == 200 and "Candela Explorer" in page, url
            origin = re.match(r"(http://[^/]+)/", url).group(1)
            reply = websocket(url, origin)
            assert isinstance(reply, str) and "ACK" in reply, (url, reply)
            assert websocket(url, "http://evil.example") == 403
        # An IPv6 origin given to --allow-origin is a name the server answers to.
        connect = "::1" if address in ("::1", "::") else address
        assert status_for_host(connect, port, "[fd00::7]:8080") == 200
        assert websocket(urls[0], "http://[fd00::7]:8080") not in (403, None)
        for host in ["[::1", "[::1]:x", "a:b:c:d", "[::1]:99999", "[]:1", "::1", "[zz]:1", ""]:
            assert status_for_host(connect, port, host) in (200, 403), host
    finally:
        out = stop_command(proc)
    assert "Traceback" not in out, out[-3000:]


def test_ipv6_origins_are_taken_by_allow_origin_and_bad_ones_refused():
    parse = cli.build_parser().parse_args
    assert parse(["--allow-origin", "[FD00::7]:8080"]).allow_origin == ["[fd00::7]:8080"]
    assert parse(["--allow-origin", "http://[fd00::7]"]).allow_origin == ["[fd00::7]"]
    for bad in ["[zz]:1", "[::1]x", "[::1]:70000", "[::1"]:
        with pytest.raises(SystemExit):
            parse(["--allow-origin", bad])
