"""The cost panel in Chromium: its words, its shaded units, the unit lit as the walk plays."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from candela import Layout
from explorer.testing import open_served

pytestmark = pytest.mark.browser

UNITS = "() => Bokeh.documents[0].get_model_by_name('cost-units-source').data"
LIT = "() => Bokeh.documents[0].get_model_by_name('marks-cost-source').data.pos"


def test_the_cost_panel_states_the_totals_shades_the_units_and_lights_the_walks(open_explorer):
    page = open_explorer("?shape=64,64&ops=.T&cost=64")
    panel = page.locator(".candela-cost").first
    # np.arange's int64: 8 elements a line, and the column walk enters a line at each one.
    cost = Layout((64, 64)).T.cost(8)
    expect(panel.locator(".candela-cost-words")).to_contain_text(cost.words())
    expect(panel).to_contain_text("entered 8 times on average")
    units = page.evaluate(UNITS)
    assert len(units["unit"]) == 512 and set(units["entries"]) == {8}
    # Playing lights the unit of the walk's current element: element k reads position
    # 64k, in line 8k, for the first row of the walk.
    page.locator(".candela-toggle button").first.click()
    page.wait_for_function(f"() => ({LIT})().length > 0 && ({LIT})()[0] >= 16")
    lit = page.evaluate(LIT)[0]
    assert lit % 8 == 0, lit  # a unit the column walk enters: 8 * the element's row
    page.locator(".candela-toggle button").first.click()  # pause
    # A slice with steps touches some lines and skips others: the shading says which.
    page = open_explorer("?shape=64,64&ops=[::2, ::16]&cost=64")
    page.wait_for_function(f"() => ({UNITS})().entries.length === 512")
    units = page.evaluate(UNITS)
    assert set(units["entries"]) == {0, 1}
    assert len(set(units["color"])) == 2  # touched and untouched look different
    expect(page.locator(".candela-cost-words").first).to_contain_text(
        Layout((64, 64)).slice((slice(None, None, 2), slice(None, None, 16))).cost(8).words()
    )
    # The panel's select changes the unit, the words and the URL.
    page.locator(".candela-cost-unit select").first.select_option(label="128-byte lines")
    expect(page.locator(".candela-cost-words").first).to_contain_text("128-byte lines")
    page.wait_for_function("() => location.search.includes('cost=128')")


@pytest.mark.parametrize("size", [(1280, 800), (1024, 768)])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_cost_panel_fits_the_screen_in_either_theme(page, explorer_server, size, theme):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_served(page, f"{explorer_server}?shape=64,64&compare=.T&cost=64&warp=32&theme={theme}")
    panels = page.locator(".candela-cost")
    expect(panels).to_have_count(2)
    for i in range(2):
        expect(panels.nth(i).locator(".candela-cost-words")).to_contain_text("a warp of 32")
    page.wait_for_timeout(300)
    # No sideways scroll; each panel's words as wide as the window allows.
    wide = page.evaluate("() => document.scrollingElement.scrollWidth")
    assert wide <= size[0], wide
    for i in range(2):
        box = panels.nth(i).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= size[0] + 1


def test_the_offline_pages_show_the_cost_and_light_the_unit_with_no_python(page, tmp_path):
    from explorer.app import Explorer
    from explorer.lesson_page import save_lesson_html

    ex = Explorer(shape=(16, 16), ops=".T", unit="float32")
    path = ex.save_html(tmp_path / "cost.html")
    page.goto(path.as_uri())
    expect(page.locator(".candela-cost").first).to_contain_text(ex.cost.words())
    page.wait_for_function(
        f"() => window.Bokeh && Bokeh.documents.length && ({UNITS})().entries.length === 16"
    )
    page.locator(".candela-toggle button").first.click()
    page.wait_for_function(f"() => ({LIT})().length > 0 && ({LIT})()[0] > 0")
    # The offline lesson: a waiting question shows no cost; "show me" brings it.
    lesson = save_lesson_html("transpose", tmp_path / "lesson.html")
    page.goto(lesson.as_uri())
    expect(page.locator(".candela-question")).to_be_visible()
    expect(page.locator(".candela-cost-text")).to_contain_text("once the question is answered")
    assert "reads" not in page.locator(".candela-cost-text").inner_text()
    box = page.locator(".candela-answer input")
    box.fill("1")  # the transposed layout's stride[0]
    box.press("Enter")
    expect(page.locator(".candela-verdict-right")).to_be_visible()
    words = Layout((3, 4)).T.cost(8).words()
    expect(page.locator(".candela-cost-text")).to_contain_text(words)
