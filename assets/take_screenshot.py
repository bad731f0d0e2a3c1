"""Retake ``assets/explorer.png``, the README's picture, from the real page in Chromium.

Serves the app in-process, opens ``?shape=3,4&ops=.transpose()``, steps the
traversal to the first backward jump and saves a screenshot of the page.
Run: ``.venv/bin/python assets/take_screenshot.py`` (needs Debian's chromium).
"""

from __future__ import annotations

import socket
from pathlib import Path

import panel as pn
from playwright.sync_api import sync_playwright

from explorer.app import app

OUT = Path(__file__).with_name("explorer.png")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def main() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = pn.serve({"/": app}, port=port, address="127.0.0.1", threaded=True, show=False)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1500, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/?shape=3,4&ops=.transpose()")
            page.wait_for_function(
                "() => window.Bokeh && Bokeh.documents.length > 0 && "
                "Bokeh.documents[0].get_model_by_name('frames-source')"
            )
            forward = page.get_by_role("button", name="step ▶")
            for _ in range(3):  # frame 3: the walk jumps back from position 8 to 1
                forward.click()
            page.wait_for_function(
                "() => Bokeh.documents[0].get_model_by_name('frame-slider').value === 3"
            )
            page.wait_for_timeout(500)  # let the last paint land
            page.screenshot(path=str(OUT), full_page=True)
            browser.close()
    finally:
        server.stop()
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
