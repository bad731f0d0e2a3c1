"""The page at real screen sizes, honest lessons, one unit, and the back button, in Chromium.

Widths are read as the browser lays them out (``scrollWidth``); "visible" text is
what ``innerText`` gives, the text a student can read on the page.
"""

from __future__ import annotations

import dataclasses
import time

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from explorer import lessons as L
from explorer.testing import open_served

pytestmark = pytest.mark.browser


def open_at(page, url, query, width, height):
    page.set_viewport_size({"width": width, "height": height})
    # Drawn and heard back from: a key pressed before the keyboard component runs (later
    # with the patches off) is lost.
    open_served(page, url + query)
    page.locator(".candela-title").wait_for(state="attached")
    return page


def inside_viewport(page, selector, width, height):
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, (selector, box)
    assert box["y"] >= 0 and box["y"] + box["height"] <= height, (selector, box)


@pytest.mark.parametrize(
    ("query", "width", "height"),
    [
        ("?shape=3,4&ops=.transpose()", 1280, 800),
        ("?shape=2,3,4&lesson=transpose&step=2", 1280, 800),
        ("?lesson=transpose&step=2&presenter=true", 1280, 720),
        ("?lesson=transpose&step=2&presenter=true", 1920, 1080),
        ("?shape=3,3,3,3,3", 1280, 800),
        # Narrower than the controls and the lesson panel side by side: the columns wrap.
        ("?shape=3,4&ops=.transpose()", 600, 900),
    ],
)
def test_no_sideways_scroll_and_every_lesson_control_on_screen(
    page, explorer_server, query, width, height
):
    open_at(page, explorer_server, query, width, height)
    page.wait_for_timeout(300)  # let the layout settle after the figures' first sizes
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    if "lesson" in query:
        for part in (".candela-answer input", ".candela-check button", ".candela-next button"):
            inside_viewport(page, part, width, height)
        inside_viewport(page, ".candela-prev button", width, height)


def font_px(page, selector) -> float:
    return float(page.locator(selector).evaluate("e => getComputedStyle(e).fontSize")[:-2])


def test_presenter_mode_looks_the_same_however_it_was_reached(page, explorer_server):
    open_at(page, explorer_server, "?lesson=transpose&step=2&presenter=true", 1280, 720)
    size_on = page.locator(".candela-question").evaluate("e => getComputedStyle(e).fontSize")
    page.locator(".candela-presenter-toggle input").click()
    expect(page.locator(".candela-presenter")).to_have_count(0, timeout=15000)
    expect(page.locator(".candela-question")).not_to_have_css("font-size", size_on)
    size_off = page.locator(".candela-question").evaluate("e => getComputedStyle(e).fontSize")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    page.locator(".candela-presenter-toggle input").click()
    expect(page.locator(".candela-presenter")).to_have_count(1, timeout=15000)
    expect(page.locator(".candela-question")).to_have_css("font-size", size_on)
    assert size_off != size_on
    # The lesson list's label is the panel's title: larger than any other label, either way.
    assert font_px(page, ".candela-lesson-select label") > font_px(page, ".candela-answer label")
    page.locator(".candela-presenter-toggle input").click()
    expect(page.locator(".candela-presenter")).to_have_count(0, timeout=15000)
    assert font_px(page, ".candela-lesson-select label") > font_px(page, ".candela-answer label")
    open_at(page, explorer_server, "?lesson=transpose&step=2", 1280, 720)
    expect(page.locator(".candela-question")).to_have_css("font-size", size_off)
    page.locator(".candela-keys").wait_for()  # the page's scripts are running
    page.locator(".candela-presenter-toggle input").check()
    expect(page.locator(".candela-presenter")).to_have_count(1, timeout=15000)
    expect(page.locator(".candela-question")).to_have_css("font-size", size_on)


#: The grid and the buffer (the cost panel's units, under the traversal, are a figure too).
FIGURES = ".bk-Figure:not(.candela-cost-figure)"


def figure_boxes(page) -> list[dict]:
    return page.locator(FIGURES).evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return {left: r.left, right: r.right, width: r.width} })"
    )


def test_presenter_mode_fits_a_projector_of_any_size(page, explorer_server):
    query = "?lesson=transpose&step=2&presenter=true"
    # 1024x768: every figure whole on the screen, no sideways scroll, no editing boxes.
    open_at(page, explorer_server, query, 1024, 768)
    page.locator(".candela-keys").wait_for()
    # The page tells the server its width; the enlarged buffer (776 px wide at 1280)
    # is drawn to fit.
    buffer = page.locator(FIGURES).nth(1).element_handle()
    page.wait_for_function("e => e.getBoundingClientRect().right <= 1024", arg=buffer)
    boxes = figure_boxes(page)
    assert len(boxes) == 2 and all(b["left"] >= 0 and b["right"] <= 1024 for b in boxes), boxes
    assert page.evaluate("document.documentElement.scrollWidth") <= 1024
    # The grid, the buffer and the traversal's controls on the first screen, the grid's
    # letters still drawn.
    page.wait_for_function(
        "e => e.getBoundingClientRect().bottom <= 768",
        arg=page.locator(FIGURES).nth(1).element_handle(),
    )
    for part in (".candela-toggle", ".candela-forward", ".candela-odometer", FIGURES):
        for i in range(page.locator(part).count()):
            inside_viewport(page, f"{part} >> nth={i}", 1024, 768)
    assert "a" in drawn_texts(page, "logical")
    expect(page.locator(".candela-shape-input")).to_be_hidden()
    expect(page.locator(".candela-ops-input")).to_be_hidden()
    # 1280x720: the traversal's controls on the first screen.
    open_at(page, explorer_server, query, 1280, 720)
    page.locator(".candela-keys").wait_for()
    for part in (".candela-toggle", ".candela-forward", ".candela-back", ".candela-odometer"):
        inside_viewport(page, part, 1280, 720)
    # 1920x1080: the type grows with the screen, to 28 px and more; the cells grow to use
    # the room (they were 50-70 px with half the screen empty), the figures still on it.
    open_at(page, explorer_server, query, 1920, 1080)
    page.locator(".candela-keys").wait_for()
    grid = page.locator(FIGURES).first.element_handle()
    page.wait_for_function("e => e.getBoundingClientRect().width >= 3 * 90", arg=grid)
    for i in range(2):
        inside_viewport(page, f"{FIGURES} >> nth={i}", 1920, 1080)
    for part in (".candela-toggle", ".candela-odometer"):
        inside_viewport(page, part, 1920, 1080)
    for part in (".candela-question", ".candela-answer input", ".candela-odometer"):
        assert font_px(page, part) >= 28, part
    page.locator(".candela-answer input").fill("3")
    page.locator(".candela-answer input").press("Enter")
    page.locator(".candela-show-me button").click()
    expect(page.locator(".candela-stride")).to_be_visible()
    assert font_px(page, ".candela-stride") >= 28
    assert font_px(page, ".candela-verdict") >= 28


#: Lesson steps whose pictures a small projector found hardest: a 3-D grid of tiles, a 2-D
#: grid drawn before its slice, rank 4 (channels last), six stacked pairs of tiles and
#: twelve tiles side by side.
PROJECTOR_STEPS = [
    ("row-major", 2),
    ("slicing", 4),
    ("channels-last", 1),
    ("batched-matmul", 1),
    ("batched-matmul", 3),
]

#: Each figure's box on the page, [left, top, right, bottom] (px).
BOXES_JS = """els => els.filter((e) => e.getClientRects().length).map((e) => {
  const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom] })"""


def figures_whole(page, width: int, height: int, timeout: float = 15.0) -> list:
    """Wait until every figure shown is whole inside the screen (the page sizes them to
    the room it reports); return their boxes (the last seen, when they never are)."""
    deadline = time.monotonic() + timeout
    while True:
        boxes = page.locator(FIGURES).evaluate_all(BOXES_JS)
        whole = all(b[0] >= 0 and b[1] >= 0 and b[2] <= width and b[3] <= height for b in boxes)
        if (whole and len(boxes) >= 2) or time.monotonic() > deadline:
            return boxes
        page.wait_for_timeout(200)


@pytest.mark.parametrize(("lesson", "step"), PROJECTOR_STEPS, ids=lambda v: str(v))
def test_presenter_mode_at_1024_by_768_shows_every_figure_whole_before_and_after_the_answer(
    page, explorer_server, lesson, step
):
    # A small projector: the grid, the buffer and the traversal's controls on the first
    # screen, nothing cut off at the side, while the question waits and once it is shown.
    open_at(page, explorer_server, f"?lesson={lesson}&step={step}&presenter=true", 1024, 768)
    page.locator(".candela-keys").wait_for()
    for answered in (False, True):
        if answered:
            page.locator(".candela-answer input").fill("999")
            page.locator(".candela-answer input").press("Enter")
            page.locator(".candela-show-me button").click()
            expect(page.locator(".candela-stride")).to_be_visible()
            # The click scrolled the lesson's column (its verdict and reveal below the
            # screen): the first screen is the page's top.
            page.evaluate("window.scrollTo(0, 0)")
        boxes = figures_whole(page, 1024, 768)
        assert len(boxes) >= 2 and all(
            b[0] >= 0 and b[1] >= 0 and b[2] <= 1024 and b[3] <= 768 for b in boxes
        ), (answered, boxes)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1024
        # (Once answered the walk plays: the odometer's text is written anew each frame.)
        for part in (".candela-toggle", ".candela-forward", ".candela-odometer")[: 3 - answered]:
            inside_viewport(page, part, 1024, 768)


def test_presenter_mode_shows_a_lessons_second_view_beside_the_grid_once_answered(
    page, explorer_server
):
    # The aliasing lesson's link (no compare in it): the second view waits with the
    # answer, then comes beside the first grid, whose cells keep their values and
    # positions (the second view's column is not room the grid gives up).
    open_at(page, explorer_server, "?lesson=aliasing&step=1&presenter=true", 1280, 800)
    page.locator(".candela-keys").wait_for()
    second = page.locator(".candela-compare-views")
    expect(second).to_be_hidden()
    page.locator(".candela-answer input").fill("999")
    page.locator(".candela-answer input").press("Enter")
    page.locator(".candela-show-me button").click()
    expect(second).to_be_visible()
    page.evaluate("window.scrollTo(0, 0)")
    grid = page.locator(FIGURES).first.bounding_box()
    box = second.bounding_box()
    assert box["x"] >= grid["x"] + grid["width"] and box["y"] < grid["y"] + grid["height"]
    page.wait_for_function(
        "() => { const d = Bokeh.documents[0].get_model_by_name('labels-logical-source').data;"
        " return d.text.some((t, i) => t === '@9' && parseFloat(d.size[i]) > 0) }"
    )
    # Once the page has measured its room again (the grid shrank to 8 px cells when the
    # second view's column counted against it), the grid's three columns keep 29 px.
    page.wait_for_timeout(2500)
    assert page.locator(FIGURES).first.bounding_box()["width"] >= 3 * 29
    assert "@9" in drawn_texts(page, "logical")


def drawn_texts(page, figure: str) -> list[str]:
    """The texts a figure draws on its canvas (its labels source's rows with a size)."""
    return page.evaluate(
        f"() => {{ const d = Bokeh.documents[0].get_model_by_name('labels-{figure}-source')"
        ".data; return d.text.filter((t, i) => t && parseFloat(d.size[i]) > 0) }"
    )


def overlap(a: dict, b: dict) -> float:
    """The area two bounding boxes share (px²)."""
    w = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    h = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return max(0.0, w) * max(0.0, h)


#: The width of the chosen lesson's name and of the widest in the lesson list, in the
#: list's own font, and the room for them.
NAMES_JS = """s => {
  const cs = getComputedStyle(s), c = document.createElement("canvas").getContext("2d");
  c.font = cs.font;
  const widths = Array.from(s.options).map((o) => c.measureText(o.text).width);
  return [widths[s.selectedIndex], Math.max(...widths),
          s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)];
}"""


@pytest.mark.parametrize(("width", "height"), [(1024, 768), (1920, 1080), (1280, 800)])
@pytest.mark.parametrize("presenter", ["&presenter=true", ""])
def test_the_lesson_column_parts_keep_apart_and_inside_it(
    page, explorer_server, width, height, presenter
):
    # The answer box's label clear of its box and of the check button; the button inside
    # the lesson column with its label whole; the chosen lesson's name whole in the list
    # (in presenter mode every lesson's: the list is wider there).
    open_at(page, explorer_server, f"?lesson=transpose&step=2{presenter}", width, height)
    page.locator(".candela-keys").wait_for()
    if presenter:
        expect(page.locator(".candela-presenter")).to_have_count(1)
    label = page.locator(".candela-answer label").bounding_box()
    box = page.locator(".candela-answer input").bounding_box()
    check = page.locator(".candela-check button").bounding_box()
    column = page.locator(".candela-lesson-area").bounding_box()
    assert overlap(label, box) == 0 and overlap(label, check) == 0, (label, box, check)
    assert overlap(box, check) == 0, (box, check)
    assert check["x"] + check["width"] <= column["x"] + column["width"], (check, column)
    button = page.locator(".candela-check button")
    assert button.evaluate("e => e.scrollWidth <= e.clientWidth"), "the check label is cut"
    chosen, widest, room = page.locator(".candela-lesson-select select").evaluate(NAMES_JS)
    assert (widest if presenter else chosen) <= room, (chosen, widest, room)


QUESTION_LESSONS = [
    lesson for lesson in L.list_lessons() if any(step.question is not None for step in lesson.steps)
]


@pytest.mark.sweep
@pytest.mark.parametrize("lesson", QUESTION_LESSONS, ids=lambda lesson: lesson.id)
def test_no_question_shows_its_answer_on_the_page_before_it_is_answered(
    page, explorer_server, lesson
):
    open_at(page, explorer_server, f"?lesson={lesson.id}&step=1", 1280, 800)
    for n, step in enumerate(lesson.steps, 1):
        expect(page.locator(".candela-lesson-step")).to_have_text(
            f"step {n} of {len(lesson.steps)}"
        )
        if step.question is not None:
            expect(page.locator(".candela-question")).to_contain_text(
                step.question.prompt.replace("`", "")[:20]  # (as drawn: code marks gone)
            )
            visible = page.locator("body").inner_text()
            # ... and what a screen reader reads for the figures (their text alternative);
            # a hidden figure (a second view waiting for the answer) is not read.
            figures = page.locator("[role=img][aria-label]:visible")
            expect(figures).to_have_count(2)
            visible += "\n" + "\n".join(
                figures.evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
            )
            # The lesson's own give-away rule, applied to everything a student can read.
            shown = dataclasses.replace(step, text=visible)
            assert L.give_aways(shown, L.step_layout(step)) == [], (lesson.id, n)
        if n < len(lesson.steps):
            page.locator(".candela-next button").click()


def test_a_step_meant_to_fail_shows_the_state_before_the_failing_op(page, explorer_server):
    open_at(page, explorer_server, "?lesson=contiguity&step=3", 1280, 800)
    expect(page.locator(".candela-error")).to_contain_text("non-contiguous")
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")
    expect(page.locator(".candela-stride")).to_have_text("(1, 4)")


def test_one_unit_everywhere_once_bytes_are_chosen(page, explorer_server):
    open_at(page, explorer_server, "?shape=3,4&ops=.transpose()&unit=float32", 1280, 800)
    expect(page.locator(".candela-adj-stride")).to_have_text("(-28, 16)")
    # What a student reads (innerText): Panel shows its text once the stylesheets are in.
    reasons = page.locator(".candela-fields")
    expect(reasons).to_contain_text("-28", use_inner_text=True)
    for in_elements in ("= -7", "-7 <"):
        expect(reasons).not_to_contain_text(in_elements, use_inner_text=True)
    expect(page.locator(".candela-step-after")).to_contain_text("(-28, 16)")
    page.locator(".candela-views .bk-events").first.click()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    expect(page.locator(".candela-odometer-delta")).to_have_text("−28 bytes")


def test_the_back_button_follows_the_url_without_reloading(page, explorer_server):
    open_at(page, explorer_server, "?shape=3,4", 1280, 800)
    ops = page.locator(".candela-ops-input input")
    ops.fill(".transpose()")
    ops.press("Enter")
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")
    page.wait_for_function("() => location.search.includes('transpose')")
    page.evaluate("window.__stayed = true")
    page.go_back()
    expect(page.locator(".candela-shape")).to_have_text("(3, 4)")
    assert page.evaluate("window.__stayed === true"), "the page reloaded"
    page.go_forward()
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")
    assert page.evaluate("window.__stayed === true")


def test_lesson_text_colours_read_at_4_5_to_1(page, explorer_server):
    open_at(page, explorer_server, "?lesson=transpose&step=2", 1280, 800)
    code = page.locator(".candela-lesson-text code").first
    color = code.evaluate("e => getComputedStyle(e).color")
    rgb = [int(v) for v in color[color.index("(") + 1 : color.index(")")].split(",")[:3]]
    assert contrast_rgb(rgb, [255, 255, 255]) >= 4.5, color


def contrast_rgb(a, b) -> float:
    def lum(rgb):
        lin = [
            c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4
            for c in rgb
        ]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
