"""The page fits the screen it is on, in Debian's Chromium: a 64x64 tensor with its buffer
and traversal controls on a 1280x800 laptop screen; a phone 390 px wide with no sideways
scroll and no text under 12 px."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright")
from contrast import FIGURE_TEXTS_JS
from playwright.sync_api import expect

from explorer.testing import open_served

pytestmark = pytest.mark.browser

#: Every element with text of its own on the page (through Panel's shadow roots): its
#: text, computed font size and whether it is on screen.
TEXTS_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) walk(el.shadowRoot);
      const own = Array.from(el.childNodes).some(
        (n) => n.nodeType === 3 && n.textContent.trim() !== "");
      if (!own) continue;
      const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
      if (r.width === 0 || r.height === 0 || cs.visibility === "hidden") continue;
      out.push({text: el.textContent.trim().slice(0, 40), px: parseFloat(cs.fontSize)});
    }
  };
  walk(document);
  return out;
}"""

#: The bottom edge (px from the page's top) of the element of a CSS class, in shadow roots.
BOTTOM_JS = """(cls) => {
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.classList && el.classList.contains(cls)) return el.getBoundingClientRect().bottom;
      if (el.shadowRoot) { const r = walk(el.shadowRoot); if (r != null) return r; }
    }
    return null;
  };
  return walk(document);
}"""

ROOM_SENT = """() => {
  const f = Bokeh.documents[0].get_model_by_name("logical-figure");
  return f != null && f.width <= %d;
}"""


def _open(page, url, query):
    open_served(page, url + query)  # drawn, and the server has heard its figures' room
    expect(page.locator(".candela-odometer")).to_contain_text("element 1 of")


def test_a_64_by_64_tensor_fits_a_laptop_screen(page, explorer_server):
    page.set_viewport_size({"width": 1280, "height": 800})
    _open(page, explorer_server, "?shape=64,64&ops=.transpose()")
    for cls in ("candela-toggle", "candela-odometer", "candela-frame-slider"):
        bottom = page.evaluate(BOTTOM_JS, cls)
        assert bottom is not None and bottom <= 800, (cls, bottom)
    for name in ("logical-figure", "buffer-figure"):
        box = page.evaluate(
            f"() => Bokeh.index.find_one(Bokeh.documents[0].get_model_by_name('{name}'))"
            ".el.getBoundingClientRect().toJSON()"
        )
        assert box["bottom"] <= 800 and box["right"] <= 1280, (name, box)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 1280
    _legend_entries_whole(page)
    page.screenshot(path="/tmp/fit-64x64-1280x800.png")


@pytest.mark.parametrize(
    "query",
    [
        "?shape=3,4&ops=.transpose()",
        "?shape=2,3,4",
        "?shape=64,64",
        "?lesson=transpose",
        "?shape=2,2,2,2,2",
        "?shape=3,4&ops=%5B1%3A%2C%202%3A%5D",  # an offset: its marker and name
    ],
)
def test_a_phone_gets_no_sideways_scroll_and_no_text_under_12px(page, explorer_server, query):
    page.set_viewport_size({"width": 390, "height": 844})
    _open(page, explorer_server, query)
    page.wait_for_function(ROOM_SENT % 390)  # the cells sized to the phone's width
    page.wait_for_function("() => document.documentElement.scrollWidth <= 390")
    small = [t for t in page.evaluate(TEXTS_JS) if t["px"] < 12]
    assert not small, small
    # The figures' own text, drawn on their canvases (cell labels, tile headers, the
    # offset's marker and name), too.
    small = [t for t in page.evaluate(FIGURE_TEXTS_JS) if t["px"] < 12]
    assert not small, small[:5]
    _legend_entries_whole(page)


def _legend_entries_whole(page) -> None:
    # A legend's swatch and its name on one line: a colour box at a line's end with its
    # name on the next reads as the wrong name's colour.
    entries = page.locator(".candela-legend-item")
    assert entries.count() >= 6
    for i in range(entries.count()):
        rects = entries.nth(i).evaluate("(el) => el.getClientRects().length")
        assert rects == 1, (entries.nth(i).inner_text(), rects)


#: The bounding box of the first element of a CSS class, through shadow roots.
BOX_JS = """(cls) => {
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.classList && el.classList.contains(cls)) return el.getBoundingClientRect().toJSON();
      if (el.shadowRoot) { const r = walk(el.shadowRoot); if (r != null) return r; }
    }
    return null;
  };
  return walk(document);
}"""


@pytest.mark.parametrize("query", ["?shape=3,4&ops=.transpose()", "?shape=64,64"])
def test_in_a_notebook_wide_output_the_figures_are_on_the_first_screen(
    page, explorer_server, query
):
    # A notebook's output is about 840 px wide: the figures sit beside the shape and
    # pipeline boxes, the grid and the buffer whole on the first screen (they were ~800 px
    # down, under the controls), with no sideways scroll.
    page.set_viewport_size({"width": 840, "height": 800})
    _open(page, explorer_server, query)
    inputs = page.evaluate(BOX_JS, "candela-ops-input")
    for name in ("logical-figure", "buffer-figure"):
        page.wait_for_function(
            f"() => Bokeh.index.find_one(Bokeh.documents[0].get_model_by_name('{name}'))"
            ".el.getBoundingClientRect().bottom <= 800"
        )
        box = page.evaluate(
            f"() => Bokeh.index.find_one(Bokeh.documents[0].get_model_by_name('{name}'))"
            ".el.getBoundingClientRect().toJSON()"
        )
        # (A buffer wider than the column scrolls inside its panel, not the page.)
        assert box["top"] >= 0 and box["left"] >= inputs["right"], (name, box, inputs)
    assert inputs["bottom"] <= 800
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 840
    page.screenshot(path="/tmp/notebook-840.png")


@pytest.mark.parametrize(
    "query, tiles, third",
    [
        ("?shape=16,3,224,224&ops=.permute(0,2,3,1)", 16, "[0,222]"),
        # rank 8: 64 tiles of 3x3 with headers of 13 characters or more could not fit 528
        # px (it was a 2,197 px grid scrolling sideways); x[0, 0, 0, 0], 9 tiles, does.
        ("?shape=3,3,3,3,3,3,3,3", 9, "[0,0,0,0,0,2]"),
    ],
    ids=["channels-last", "rank-8"],
)
def test_a_summarised_batch_fits_its_column_with_a_header_on_every_tile(
    page, explorer_server, query, tiles, third
):
    # 16x224x224x3 drawn as 6x6 tiles of 6x3 cells: a header as long as "[0, 221, :, :]"
    # over a 3-wide tile needed 26 px cells, a grid wider than its 528 px column (it
    # scrolled inside its panel). Each header is now spelt as fully as the column allows.
    # And as 6 rows of tiles at the 16 px their headers need the grid was 922 px tall:
    # drawn as NumPy's first and last 2 of each axis (4x4 tiles of 4x3 cells), it is on
    # the screen, the buffer's overview beginning on it.
    page.set_viewport_size({"width": 1280, "height": 800})
    _open(page, explorer_server, query)
    page.wait_for_function(ROOM_SENT % 528)
    box = page.evaluate(
        "() => Bokeh.index.find_one(Bokeh.documents[0].get_model_by_name('logical-figure'))"
        ".el.getBoundingClientRect().toJSON()"
    )
    lessons = page.evaluate(BOX_JS, "candela-lesson-area") or {"left": 1280}
    assert box["width"] <= 528 and box["right"] <= lessons["left"], (box, lessons)
    assert box["bottom"] <= 800, box
    buffer = page.evaluate(
        "() => Bokeh.index.find_one(Bokeh.documents[0].get_model_by_name('buffer-figure'))"
        ".el.getBoundingClientRect().toJSON()"
    )
    assert buffer["top"] < 800 - 40, buffer
    headers = page.evaluate(
        "() => { const d = Bokeh.documents[0].get_model_by_name('labels-logical-source').data;"
        " return d.text.filter((t, i) => d.kind[i] === 'tile' && t)"
        ".map((t, i) => [t, d.size[d.kind.indexOf('tile') + i]]) }"
    )
    assert len(headers) == tiles and all(float(px[:-2]) >= 12 for _, px in headers), headers
    # Each names its tile's leading indices, as NumPy's x[0, 222] is that tile.
    assert headers[2][0].replace(" ", "").replace(",:", "") == third, headers[2]
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 1280
    page.screenshot(path=f"/tmp/fit-{tiles}-tiles-1280x800.png")
