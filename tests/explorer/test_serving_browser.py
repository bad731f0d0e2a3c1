"""The served page in Debian's Chromium: drawn from compressed files and a compressed WebSocket."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright")

pytestmark = pytest.mark.browser

TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def test_the_page_draws_with_no_errors_from_compressed_files(page, explorer_server):
    responses, problems, handshakes = [], [], []
    cdp = page.context.new_cdp_session(page)  # the WebSocket handshake's headers
    cdp.send("Network.enable")
    cdp.on(
        "Network.webSocketHandshakeResponseReceived",
        lambda e: handshakes.append({k.lower(): v for k, v in e["response"]["headers"].items()}),
    )
    page.on("response", lambda r: responses.append(r))
    page.on("pageerror", lambda exc: problems.append(f"pageerror: {exc}"))
    page.on(
        "console",
        lambda m: (
            problems.append(f"console.{m.type}: {m.text}")
            if m.type in ("error", "warning")
            else None
        ),
    )
    page.goto(explorer_server + "?shape=8,8&ops=.transpose()")
    page.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0"
        " && Bokeh.documents[0].get_model_by_name('frames-source') !== null"
    )
    page.locator(".candela-shape").wait_for()
    assert page.locator(".candela-shape").inner_text() == "(8, 8)"
    page.evaluate(TWO_FRAMES)
    canvases = page.locator(".candela-views canvas")
    assert canvases.count() >= 2
    box = canvases.first.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100

    urls = [r.url for r in responses]
    assert any("/static/js/bokeh.min.js" in u for u in urls)
    assert problems == []
    scripts = [
        r
        for r in responses
        if r.url.startswith(explorer_server) and r.url.split("?")[0].endswith((".js", ".css"))
    ]
    assert len(scripts) >= 5
    assert [r.url for r in scripts if r.headers.get("content-encoding") != "gzip"] == []
    assert handshakes, "no WebSocket handshake seen"
    assert all("permessage-deflate" in h.get("sec-websocket-extensions", "") for h in handshakes)
