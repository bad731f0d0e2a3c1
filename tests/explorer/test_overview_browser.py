"""A real tensor in Debian's Chromium: the 2.4 M-element channels-last image batch is drawn
as NumPy's edge items with gap marks, its buffer as an overview, and the odometer steps
through the drawn elements' true indices and positions."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

MODEL = "Bokeh.documents[0].get_model_by_name"
SHAPE = (16, 3, 224, 224)


def test_the_channels_last_batch_is_drawn_and_walked(open_explorer, page):
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_viewport_size({"width": 1280, "height": 800})
    open_explorer("?shape=16,3,224,224&ops=.permute(0,2,3,1)")
    heading = page.locator(".candela-heading").filter(has_text="logical grid")
    # NumPy's first and last 2 of each long axis (3 made a grid of tiles 55 cells tall)
    expect(heading).to_contain_text("2,408,448 elements; drawn: the first and last 2")
    logical = page.evaluate(f"() => {MODEL}('logical-source').data.index")
    assert len(logical) == 4 * 4 * 4 * 3 and logical[-1] == "(15, 223, 223, 2)"
    buffer = page.evaluate(f"() => Array.from({MODEL}('buffer-source').data.reads)")
    assert sum(buffer) == np.prod(SHAPE) and len(buffer) <= 1024
    # The NumPy oracle: where each drawn element of the permuted arange reads.
    real = np.lib.stride_tricks.as_strided(
        np.arange(1), (16, 224, 224, 3), (150528 * 8, 224 * 8, 8, 50176 * 8)
    ).strides  # the strides in bytes only: the positions come from them
    stride = [s // 8 for s in real]
    odometer = page.locator(".candela-odometer")
    expect(odometer).to_contain_text("element 1 of 2,408,448 (192 drawn)")
    forward = page.locator(".candela-forward .bk-btn")
    shape = (16, 224, 224, 3)
    passed = []
    for k in range(1, 10):
        forward.click()
        index = tuple(int(v) for v in logical[k].strip("()").split(","))
        position = sum(i * s for i, s in zip(index, stride))
        expect(odometer).to_contain_text(f"index {logical[k]}")
        expect(odometer).to_contain_text(f"→ {position}")
        before = tuple(int(v) for v in logical[k - 1].strip("()").split(","))
        skip = np.ravel_multi_index(index, shape) - np.ravel_multi_index(before, shape) - 1
        if skip:  # (0, 0, 222, 0) after (0, 0, 1, 2): the elements between not drawn
            expect(odometer).to_contain_text(f"past {skip} elements not drawn")
            passed.append(index)
    assert passed == [(0, 0, 222, 0)], passed
    gaps = page.evaluate(
        f"() => {MODEL}('labels-logical-source').data.text.filter((t) => '⋯⋮⋱'.includes(t) && t)"
    )
    assert gaps, "the gaps of the summarised grid are marked"
    # Hover: a drawn cell names its true index, value and position; an overview cell its
    # range of positions and how often they are read.
    tip = page.locator(".bk-tooltip-content").first
    page.evaluate("() => window.scrollTo(0, 0)")  # the traversal's buttons are below
    xs, ys = page.evaluate(
        f"() => {{ const d = {MODEL}('logical-source').data; return [d.x[6], d.y[6]] }}"
    )
    page.mouse.move(*_cell_point(page, "logical-figure", xs, ys))
    expect(tip).to_contain_text("(0, 0, 222, 0)")
    words = " ".join(tip.inner_text().split())
    assert "value: 222" in words and "position: 222" in words, words
    page.mouse.move(0, 0)
    page.locator(".candela-heading", has_text="memory buffer").scroll_into_view_if_needed()
    bx, by = page.evaluate(
        f"() => {{ const d = {MODEL}('buffer-source').data; return [d.x[1], d.y[1]] }}"
    )
    page.mouse.move(*_cell_point(page, "buffer-figure", bx, by))
    expect(page.locator(".bk-tooltip-content", has_text="positions").first).to_contain_text(
        "2,352 to 4,703"
    )
    # In a byte unit the same cell is bytes 2,352 * 4 to the last byte of position 4,703,
    # and the heading says how many bytes a cell stands for.
    page.mouse.move(0, 0)
    page.locator(".candela-unit-select select").select_option("float32")
    expect(page.locator(".candela-heading", has_text="memory buffer")).to_contain_text(
        "2,352 positions (9,408 bytes) each"
    )
    page.locator(".candela-heading", has_text="memory buffer").scroll_into_view_if_needed()
    page.mouse.move(*_cell_point(page, "buffer-figure", bx, by))
    expect(page.locator(".bk-tooltip-content", has_text="positions").first).to_contain_text(
        "9,408 to 18,815"
    )
    assert not errors, errors


def _cell_point(page, figure: str, x: float, y: float) -> tuple[float, float]:
    return tuple(
        page.evaluate(
            """([name, x, y]) => {
            const view = Bokeh.index.find_one(Bokeh.documents[0].get_model_by_name(name));
            const r = view.canvas_view.el.getBoundingClientRect();
            return [r.left + view.frame.x_scale.compute(x), r.top + view.frame.y_scale.compute(y)];
        }""",
            [figure, x, y],
        )
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(
    "name, query, drawn",
    [
        ("channels-last", "?shape=16,3,224,224&ops=.permute(0,2,3,1)", "192 drawn"),
        ("300x300", "?shape=300,300&ops=.T", "36 drawn"),
    ],
)
def test_a_summarised_page_in_light_and_dark(open_explorer, page, scheme, name, query, drawn):
    # Set CANDELA_SHOTS to a folder to keep a screenshot of each, to look at.
    import os

    page.emulate_media(color_scheme=scheme)
    page.set_viewport_size({"width": 1280, "height": 800})
    open_explorer(query)
    expect(page.locator(".candela-odometer")).to_contain_text(drawn)
    heading = page.locator(".candela-heading").filter(has_text="memory buffer")
    expect(heading).not_to_contain_text("per row")
    expect(page.locator(".candela-error")).to_have_text("")
    out = os.environ.get("CANDELA_SHOTS")
    if out:
        page.wait_for_timeout(500)
        page.screenshot(path=f"{out}/{name}-{scheme}.png", full_page=True)
