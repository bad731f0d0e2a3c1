"""Light and dark, in Debian's Chromium: the page follows the system's colour scheme and
``?theme=``; every visible text is at least 4.5:1 against what is behind it."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright")
from contrast import (
    FIGURE_TEXTS_JS,
    low_contrast,
    low_contrast_boxes,
    low_contrast_figure_texts,
)
from playwright.sync_api import expect

from explorer.testing import open_served

pytestmark = pytest.mark.browser

BG_JS = """() => {
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.classList && el.classList.contains("candela-explorer"))
        return getComputedStyle(el).backgroundColor;
      if (el.shadowRoot) { const r = walk(el.shadowRoot); if (r) return r; }
    }
  };
  return walk(document);
}"""


def _open(page, url, query):
    open_served(page, url + query)  # drawn, and the server has heard its figures' room
    expect(page.locator(".candela-odometer")).to_contain_text("element 1 of")
    page.locator(".candela-forward .bk-btn").click()
    expect(page.locator(".candela-odometer")).to_contain_text("element 2 of")


@pytest.mark.parametrize(
    ("scheme", "query", "dark"),
    [
        ("light", "?shape=2,3,4&ops=.transpose()", False),
        ("dark", "?shape=2,3,4&ops=.transpose()", True),
        ("light", "?shape=2,3,4&ops=.transpose()&theme=dark", True),
        ("dark", "?shape=2,3,4&ops=.transpose()&theme=light", False),
        ("dark", "?lesson=transpose&step=3", True),
        ("light", "?shape=4&ops=.broadcast((3,%204))&unit=float32", False),
    ],
)
def test_every_text_is_legible_light_and_dark(page, explorer_server, scheme, query, dark):
    page.emulate_media(color_scheme=scheme)
    _open(page, explorer_server, query)
    background = page.evaluate(BG_JS)
    assert background == ("rgb(0, 0, 0)" if dark else "rgb(255, 255, 255)"), background
    bad = low_contrast(page)
    page.screenshot(path=f"/tmp/theme-{scheme}-{'dark' if dark else 'light'}.png")
    assert not bad, bad
    # The figures' own text too: cell labels on their cells, tile headers and the offset's
    # marker and name on the page.
    assert not low_contrast_figure_texts(page)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_offset_marker_reads_at_4_5_to_1_light_and_dark(page, explorer_server, theme):
    # An offset into a wider buffer: the marker and its name drawn under a cell.
    _open(page, explorer_server, f"?shape=3,4&ops=%5B1%3A%2C%202%3A%5D&theme={theme}")
    texts = page.evaluate(FIGURE_TEXTS_JS)
    kinds = {t["kind"] for t in texts}
    assert {"offset_mark", "offset", "value_label"} <= kinds, kinds
    assert not low_contrast_figure_texts(page)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_offline_and_lesson_pages_are_legible_light_and_dark(page, tmp_path, scheme):
    from explorer.app import Explorer
    from explorer.lesson_page import save_lesson_html

    page.emulate_media(color_scheme=scheme)
    offline = Explorer(shape=(2, 3, 4), ops=".transpose()").save_html(tmp_path / "page.html")
    lesson = save_lesson_html("transpose", tmp_path / "lesson.html")
    for path in (offline, lesson):
        page.goto(path.as_uri())
        expect(page.locator(".candela-odometer")).to_contain_text("element 1 of")
        background = page.evaluate(BG_JS)
        assert background == ("rgb(0, 0, 0)" if scheme == "dark" else "rgb(255, 255, 255)")
        page.screenshot(path=f"/tmp/theme-{path.stem}-{scheme}.png")
        bad = low_contrast(page)
        assert not bad, (path.name, bad)


@pytest.mark.parametrize(("notebook_light", "dark"), [("false", True), ("true", False)])
def test_a_notebook_theme_decides_over_the_system(page, explorer_server, notebook_light, dark):
    # JupyterLab says its theme on its body (data-jp-theme-light); the explorer follows it
    # whatever the system prefers.
    page.emulate_media(color_scheme="light" if dark else "dark")
    _open(page, explorer_server, "?shape=3,4&ops=.T")
    page.evaluate(f"() => document.body.setAttribute('data-jp-theme-light', '{notebook_light}')")
    want = "rgb(0, 0, 0)" if dark else "rgb(255, 255, 255)"
    page.wait_for_function(f"() => ({BG_JS})() === '{want}'")
    assert not low_contrast(page)
    # The text typed in each box too (an input's value is no text node).
    assert not low_contrast_boxes(page)


#: Each list's arrow colour (the fill of its computed background image) and the list's
#: background colour.
ARROWS_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) walk(el.shadowRoot);
      if (el.tagName !== "SELECT" || el.multiple || !el.getClientRects().length) continue;
      const cs = getComputedStyle(el);
      const fill = decodeURIComponent(cs.backgroundImage).match(/fill=\\\\?"([^"\\\\]+)/);
      out.push({fill: fill && fill[1], bg: cs.backgroundColor});
    }
  };
  walk(document);
  return out;
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_list_shows_its_arrow_light_and_dark(page, explorer_server, theme):
    # Bokeh draws a list's arrow black: unseen on the dark theme's black. A control's
    # graphic needs 3:1 (WCAG 1.4.11).
    from contrast import contrast, hex_rgb

    _open(page, explorer_server, f"?shape=3,4&theme={theme}")
    arrows = page.evaluate(ARROWS_JS)
    assert len(arrows) >= 2, arrows  # the unit and the lesson lists
    named = {"black": "#000000", "white": "#ffffff", "darkgrey": "#a9a9a9"}
    for arrow in arrows:
        fill = named.get(arrow["fill"], arrow["fill"])
        assert fill and fill.startswith("#"), arrow
        bg = tuple(int(v) for v in arrow["bg"][arrow["bg"].index("(") + 1 : -1].split(",")[:3])
        assert contrast(hex_rgb(fill), bg) >= 3, arrow
