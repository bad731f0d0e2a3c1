"""Retake ``assets/explorer.png``, the README's picture, from the real page in Chromium.

Serves the app in-process, opens ``?shape=3,4&ops=.transpose()``, steps the
traversal to the first backward jump and saves a screenshot of the page.
Run: ``.venv/bin/python assets/take_screenshot.py`` (needs Debian's chromium).
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import sync_playwright

from explorer.testing import CHROMIUM, CHROMIUM_ARGS, served_app

OUT = Path(__file__).with_name("explorer.png")


def main() -> None:
    with served_app() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 900})
        page.goto(url + "?shape=3,4&ops=.transpose()")
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
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
