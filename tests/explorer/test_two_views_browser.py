"""Two views of one buffer in Chromium: both grids, the lane, the second fields, hover links."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from explorer.testing import open_served

pytestmark = pytest.mark.browser

MODEL = "(name) => Bokeh.documents[0].get_model_by_name(name)"
BOX = """(name) => {
  const model = Bokeh.documents[0].get_model_by_name(name);
  const view = Bokeh.index.find_one(model);
  const r = view.el.getBoundingClientRect();
  return {x: r.x, y: r.y, width: r.width, height: r.height};
}"""


#: The rings of a hover, as [x, y] cells: on the first grid (its marks of kind "link"),
#: the second grid and the lane.
RINGS = """() => {
  const m = (name) => Bokeh.documents[0].get_model_by_name(name);
  const cells = (s) => s.data.x.map((x, i) => [x, s.data.y[i]]);
  const marks = m('marks-logical-source').data;
  const a = marks.x.map((x, i) => [x, marks.y[i], marks.mark[i]]).filter(r => r[2] === 'link');
  return {a: a.map(r => [r[0], r[1]]), b: cells(m('compare-link-b')),
          lane: cells(m('compare-link-lane'))};
}"""


def links(page) -> dict:
    return {name: len(cells) for name, cells in page.evaluate(RINGS).items()}


def test_two_views_side_by_side_over_one_buffer_with_linked_hover(page, explorer_server):
    page.goto(explorer_server + "?shape=3,4&ops=.T&compare=[1:]")
    # (two views: two elements of each field class, the second inside .candela-compare)
    expect(page.locator(".candela-fields .candela-shape").first).to_have_text("(4, 3)")
    expect(page.locator(".candela-compare .candela-shape")).to_have_text("(2, 4)")
    expect(page.locator(".candela-compare .candela-stride")).to_have_text("(4, 1)")
    expect(page.locator(".candela-compare-legend")).to_contain_text("both, aliased: 8")
    expect(page.locator(".candela-compare-input input")).to_have_value("[1:]")
    page.wait_for_function(
        "() => Bokeh.documents[0].get_model_by_name('compare-lane-source').data.pos.length === 12"
    )
    # Both grids are drawn side by side: the second to the right of the first.
    first = page.evaluate(BOX, "logical-figure")
    second = page.evaluate(BOX, "compare-logical-figure")
    assert second["x"] > first["x"] + first["width"] / 2, (first, second)
    # Hover position 5 in the lane (a one-row lane of 12 cells): the cell is ringed, and
    # so is the element of each view that reads it.
    lane = page.evaluate(BOX, "compare-lane-figure")
    cell = (lane["width"] - 8) / 12.2
    page.mouse.move(lane["x"] + 4 + cell * (0.6 + 5), lane["y"] + lane["height"] / 2)
    page.wait_for_function(f"() => Object.values(({RINGS})()).every(c => c.length === 1)")
    assert links(page) == {"a": 1, "b": 1, "lane": 1}
    page.mouse.move(1, 1)  # off every figure: the rings go
    page.wait_for_function(
        "() => Bokeh.documents[0].get_model_by_name('compare-link-lane').data.x.length === 0"
    )
    # A bad second pipeline names itself and keeps the second view on screen.
    box = page.locator(".candela-compare-input input")
    box.fill(".bogus()")
    box.press("Enter")
    expect(page.locator(".candela-error")).to_contain_text("compare: step 1 .bogus()")
    expect(page.locator(".candela-compare .candela-shape")).to_have_text("(2, 4)")
    box.fill("[::2, 1]")
    box.press("Enter")
    expect(page.locator(".candela-compare .candela-shape")).to_have_text("(2,)")
    expect(page.locator(".candela-error")).to_have_text("")
    page.wait_for_function("() => decodeURIComponent(location.search).includes('compare=[::2, 1]')")


#: Each grid's cell in px, and how far the lane reaches past the window's right edge.
SCALES = """() => {
  const box = (name) => {
    const model = Bokeh.documents[0].get_model_by_name(name);
    const r = Bokeh.index.find_one(model).el.getBoundingClientRect();
    return {model, r};
  };
  const cell = (name, cols) => (box(name).model.width - 8) / (cols + 0.2);
  const lane = box('compare-lane-figure').r;
  return {a: cell('logical-figure', 3), b: cell('compare-logical-figure', 4),
          past: lane.right - window.innerWidth, lane: lane.width};
}"""


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
def test_the_two_grids_are_drawn_at_one_scale_and_the_lane_fits_the_screen(
    page, explorer_server, size
):
    from explorer.testing import open_served

    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_served(page, explorer_server + "?shape=3,4&ops=.T&compare=[1:]")
    expect(page.locator(".candela-compare .candela-shape")).to_have_text("(2, 4)")
    # A (4 rows of 3) and B (2 rows of 4) side by side or one above the other: the same
    # cells, so that one element's place in each can be compared, and the whole lane on
    # the screen (a phone's too), wherever it wraps.
    try:
        page.wait_for_function(
            f"() => {{ const s = ({SCALES})(); return Math.abs(s.a - s.b) < 1 && s.past <= 0; }}",
            timeout=15_000,
        )
    finally:
        scales = page.evaluate(SCALES)
    assert abs(scales["a"] - scales["b"]) < 1 and scales["past"] <= 0, scales
    assert scales["a"] >= 29, scales  # large enough to show each cell's value and position


def test_hovering_a_cell_of_either_grid_rings_what_reads_its_position_in_both(
    page, explorer_server
):
    from explorer.testing import open_served

    open_served(page, explorer_server + "?shape=3,4&ops=.T&compare=[1:]")
    expect(page.locator(".candela-compare .candela-shape")).to_have_text("(2, 4)")

    def hover(figure: str, cols: int, row: int, col: int) -> None:
        box = page.evaluate(BOX, figure)
        cell = (box["width"] - 8) / (cols + 0.2)
        page.mouse.move(box["x"] + 4 + cell * (0.6 + col), box["y"] + 4 + cell * (0.6 + row))

    def ringed() -> dict:
        page.wait_for_function(
            "() => Bokeh.documents[0].get_model_by_name('compare-link-lane').data.x.length === 1"
        )
        return page.evaluate(RINGS)

    # B[0, 1] reads position 5 (x[1:]): A = x.T reads it at A[1, 1]; the lane's cell 5.
    hover("compare-logical-figure", 4, 0, 1)
    assert ringed() == {"a": [[1, -1]], "b": [[1, 0]], "lane": [[5, 0]]}
    page.mouse.move(1, 1)
    page.wait_for_function(
        "() => Bokeh.documents[0].get_model_by_name('compare-link-lane').data.x.length === 0"
    )
    # A[0, 2] reads position 8, which B reads at B[1, 0].
    hover("logical-figure", 3, 0, 2)
    assert ringed() == {"a": [[2, 0]], "b": [[0, -1]], "lane": [[8, 0]]}
    page.mouse.move(1, 1)
    # A[1, 0] reads position 1, which B does not read: no ring in B.
    page.wait_for_function(
        "() => Bokeh.documents[0].get_model_by_name('compare-link-lane').data.x.length === 0"
    )
    hover("logical-figure", 3, 1, 0)
    assert ringed() == {"a": [[0, -1]], "b": [], "lane": [[1, 0]]}


def test_a_lesson_link_shows_its_two_views_once_the_question_is_answered(page, explorer_server):
    from explorer.testing import open_served

    open_served(page, explorer_server + "?lesson=aliasing&step=4")  # p = x[3:], q = x[:5]
    expect(page.locator(".candela-compare-input input")).to_have_value("[:5]")
    expect(page.locator(".candela-compare")).to_have_count(0)  # while the question waits
    box = page.locator(".candela-answer input")
    box.fill("4")
    box.press("Enter")
    expect(page.locator(".candela-compare .candela-shape")).to_have_text("(5,)")
    expect(page.locator(".candela-compare-legend")).to_contain_text("both, aliased: 2")
    page.wait_for_function(
        "() => Bokeh.documents[0].get_model_by_name('compare-lane-source').data.pos.length === 8"
    )


@pytest.mark.parametrize(
    "how", ["a second view typed on a live page", "a lesson's second view, once answered"]
)
def test_a_second_view_added_to_a_live_page_links_every_hover_without_an_error(
    page, explorer_server, how
):
    # The second view's hover was once added to the first grid after it was drawn: every
    # hover of the first grid then threw a TypeError in BokehJS and showed nothing, and
    # every ring drawn was sent to the server and refused there (45 log lines a sweep).
    errors, refused = [], []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: refused.append(m.text) if "refused" in m.text else None)
    if how.startswith("a second view typed"):
        open_served(page, explorer_server + "?shape=3,4&ops=.transpose()")
        box = page.locator(".candela-compare-input input")
        box.fill("[:]")
        box.press("Enter")
    else:
        open_served(page, explorer_server + "?lesson=aliasing&step=1")
        answer = page.locator(".candela-answer input")
        answer.fill("6")
        answer.press("Enter")
        expect(page.locator(".candela-verdict-right")).to_be_visible()
    page.wait_for_function(
        "() => (m => m && m.data.pos.length === 12)("
        "Bokeh.documents[0].get_model_by_name('compare-lane-source'))"
    )
    grid = page.evaluate(BOX, "logical-figure")
    cell = (grid["width"] - 8) / 3.2
    # element [2, 1] of x.T reads position 6: ringed in both grids and the lane
    page.mouse.move(grid["x"] + 4 + cell * 1.6, grid["y"] + 4 + cell * 2.6)
    page.wait_for_function(f"() => Object.values(({RINGS})()).every(c => c.length === 1)")
    expect(page.locator(".bk-Tooltip, .bk-tooltip").first).to_contain_text("6")
    page.mouse.move(1, 1)
    assert errors == [] and refused == [], (errors[:3], refused[:3])


def test_a_hover_before_the_first_grid_has_played_a_frame_still_rings_it(page, explorer_server):
    # The first grid's rings are painted by its traversal module: a hover that comes before
    # that module has run on the page (as it may, with every patch off) runs it first.
    open_served(page, explorer_server + "?shape=3,4&ops=.T&compare=[1:]")
    page.wait_for_function(
        "() => (m => m && m.data.pos.length === 12)("
        "Bokeh.documents[0].get_model_by_name('compare-lane-source'))"
    )
    page.evaluate(
        "() => { delete Bokeh.documents[0].get_model_by_name('frames-source').__candela }"
    )
    lane = page.evaluate(BOX, "compare-lane-figure")
    cell = (lane["width"] - 8) / 12.2
    page.mouse.move(lane["x"] + 4 + cell * (0.6 + 5), lane["y"] + lane["height"] / 2)
    page.wait_for_function(f"() => Object.values(({RINGS})()).every(c => c.length === 1)")
    assert links(page) == {"a": 1, "b": 1, "lane": 1}
