"""Details a person sees, in Debian's Chromium: byte units in the odometer, formulas that
wrap only between terms, tile headers clear of the cursor, the offset's name inside its
figure, a lesson link past the last step corrected in the URL."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

MODEL = "Bokeh.documents[0].get_model_by_name"

#: Where each text of a figure's labels source lies on screen (px in the figure's canvas,
#: y down), measured with the canvas's own font metrics: one row per drawn text.
TEXT_BOXES_JS = """([figure, source]) => {
  const M = (name) => Bokeh.documents[0].get_model_by_name(name);
  const fig = M(figure), view = Bokeh.index.find_one(fig);
  const d = M(source).data, ctx = document.createElement("canvas").getContext("2d");
  const sx = (x) => view.frame.x_scale.compute(x), sy = (y) => view.frame.y_scale.compute(y);
  const out = [];
  for (let i = 0; i < d.text.length; i++) {
    if (!d.text[i] || !Number.isFinite(d.x[i])) continue;
    ctx.font = `${d.style[i] === "bold" ? "bold " : ""}${d.size[i]} sans-serif`;
    const w = ctx.measureText(d.text[i]).width, h = parseFloat(d.size[i]);
    const x = sx(d.x[i]) + d.x_offset[i], y = sy(d.y[i]) + d.y_offset[i];
    const left = d.align[i] === "left" ? x : d.align[i] === "right" ? x - w : x - w / 2;
    const top = d.baseline[i] === "top" ? y : d.baseline[i] === "bottom" ? y - h : y - h / 2;
    out.push({text: d.text[i], kind: d.kind[i], left, right: left + w, top, bottom: top + h});
  }
  return {boxes: out, width: view.frame.bbox.width + view.frame.bbox.left,
          frame: [view.frame.bbox.left, view.frame.bbox.right]};
}"""

#: The screen box (px in the canvas) of a mark's outermost ring on a figure.
RING_BOX_JS = """([figure, mark]) => {
  const M = (name) => Bokeh.documents[0].get_model_by_name(name);
  const view = Bokeh.index.find_one(M(figure));
  const d = M(`marks-${figure.split("-")[0]}-source`).data;
  const sx = (x) => view.frame.x_scale.compute(x), sy = (y) => view.frame.y_scale.compute(y);
  for (let i = 0; i < d.mark.length; i++) {
    if (d.mark[i] !== mark || d.ring[i] !== 0) continue;
    const half = d.size[i] / 2, pad = d.line[i] / 2;
    return {left: sx(d.x[i] - half) - pad, right: sx(d.x[i] + half) + pad,
            top: sy(d.y[i] + half) - pad, bottom: sy(d.y[i] - half) + pad};
  }
  return null;
}"""


def frames(page) -> list[int]:
    return page.evaluate(f"() => Array.from({MODEL}('frames-source').data.pos)")


def test_the_odometer_counts_bytes_in_a_byte_unit(open_explorer):
    page = open_explorer("?shape=4,5&ops=.slice(s[1:,%201:])&unit=float32")
    pos = frames(page)
    odometer = page.locator(".candela-odometer")
    expect(odometer).to_contain_text(
        f"start at the offset: position {pos[0] * 4} bytes (cell {pos[0]})"
    )
    page.locator(".candela-forward .bk-btn").click()
    expect(odometer).to_contain_text(
        f"position {pos[0] * 4} → {pos[1] * 4} bytes (cell {pos[0]} → {pos[1]})"
    )
    expect(odometer).to_contain_text("+4 bytes = adj_stride[1]")
    page.locator(".candela-forward .bk-btn").click()
    page.locator(".candela-forward .bk-btn").click()
    page.locator(".candela-forward .bk-btn").click()  # element 5: the jump to the next row
    jump = (pos[4] - pos[3]) * 4
    expect(odometer).to_contain_text(f"+{jump} bytes = adj_stride[0]")
    expect(odometer).to_contain_text(f"position {pos[3] * 4} → {pos[4] * 4} bytes")


def test_a_worked_formula_wraps_only_between_its_terms(open_explorer, page):
    page.set_viewport_size({"width": 390, "height": 800})
    open_explorer("?shape=2,3,4,5,6&ops=.permute(4,%203,%202,%201,%200)")
    work = page.locator(".candela-adj-stride-work")
    expect(work).to_contain_text("adj_stride[0] = ")
    lines = work.evaluate(
        """(el) => Array.from(el.querySelectorAll(".candela-term"))
            .map((t) => [t.textContent, t.getClientRects().length])"""
    )
    assert lines and all(rects == 1 for _, rects in lines), [t for t in lines if t[1] != 1]
    # and the formulas did wrap somewhere: the test would see a break inside a term
    heights = work.evaluate("(el) => Array.from(el.children).map((d) => d.getClientRects().length)")
    assert (
        heights
        and max(work.evaluate("(el) => Array.from(el.children).map((d) => d.offsetHeight)")) > 20
    )


@pytest.mark.parametrize("shape", ["2,3,4", "3,2,20,20"])
def test_a_tile_header_is_clear_of_the_cursor_on_its_first_row(open_explorer, shape):
    page = open_explorer(f"?shape={shape}")
    page.wait_for_function(f"() => {MODEL}('marks-logical-source').data.mark.length > 0")
    labels = page.evaluate(TEXT_BOXES_JS, ["logical-figure", "labels-logical-source"])
    tiles = [b for b in labels["boxes"] if b["kind"] == "tile"]
    assert tiles, "every tile has its header"
    for k in range(3):  # the cursor on the first row of tile 0, at its first cells
        if k:
            page.locator(".candela-forward .bk-btn").click()
            page.wait_for_function(f"() => {MODEL}('marks-logical-source').data.k[0] === {k}")
        ring = page.evaluate(RING_BOX_JS, ["logical-figure", "cursor"])
        header = tiles[0]
        overlap_x = header["left"] < ring["right"] and ring["left"] < header["right"]
        assert overlap_x or k, (header, ring)  # the first cell is under the header
        if overlap_x:
            assert header["bottom"] <= ring["top"] + 0.5, (header, ring)
    page.screenshot(path=f"/tmp/tile-header-{shape.replace(',', 'x')}.png")


@pytest.mark.parametrize(
    "query", ["?shape=4,4&ops=.slice(s[3:,%203:])", "?shape=20&ops=.slice(s[19:])"]
)
def test_the_offset_name_stays_inside_its_figure(open_explorer, query):
    page = open_explorer(query)
    page.wait_for_function(f"() => {MODEL}('labels-buffer-source').data.text.includes('offset')")
    labels = page.evaluate(TEXT_BOXES_JS, ["buffer-figure", "labels-buffer-source"])
    (name,) = [b for b in labels["boxes"] if b["kind"] == "offset"]
    (mark,) = [b for b in labels["boxes"] if b["kind"] == "offset_mark"]
    left, right = labels["frame"]
    assert left <= name["left"] and name["right"] <= right, (name, labels["frame"])
    assert name["right"] <= mark["left"] or mark["right"] <= name["left"]  # beside, not on


def test_a_link_past_the_last_step_opens_the_last_step_and_says_so_in_the_url(
    page, explorer_server
):
    page.goto(explorer_server + "?lesson=transpose&step=99")
    expect(page.locator(".candela-lesson-step")).to_have_text("step 5 of 5")
    page.wait_for_function("() => location.search.includes('step=5')")
    assert "step=99" not in page.url
    assert re.search(
        r"not 99; showing step 5", page.locator(".candela-lesson-message").inner_text()
    )
