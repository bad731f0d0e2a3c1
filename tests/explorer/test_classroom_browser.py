"""The classroom in Debian's Chromium: a lesson from a link, walked with the keyboard only.

Waits on state (DOM text, Bokeh models found by name), never on time. Keys go
to the page with ``page.keyboard``; the one mouse-free exception is focusing the
answer box, which is what the Tab key would do.
"""

from __future__ import annotations

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from explorer.testing import MARKS_JS, open_served

pytestmark = pytest.mark.browser

MODEL = "(name) => Bokeh.documents[0].get_model_by_name(name)"


def model_js(body: str) -> str:
    return f"() => {{ const m = {MODEL}; const mark = ({MARKS_JS})(m); {body} }}"


def cursor(page) -> tuple[int, int]:
    """The traversal's current frame and the buffer position lit with it."""
    k, pos = page.evaluate(
        model_js("return [mark('logical', 'cursor').k[0], mark('buffer', 'cursor').pos[0]]")
    )
    return k, pos


@pytest.fixture
def open_lesson(page, explorer_server):
    def open_(query: str):
        page.goto(explorer_server + query)
        page.wait_for_function(
            "() => window.Bokeh && Bokeh.documents.length > 0"
            " && Bokeh.documents[0].get_model_by_name('frames-source') !== null"
        )
        page.locator(".candela-keys").wait_for()  # the keyboard script is running
        return page

    return open_


def test_a_lesson_walked_with_the_keyboard_in_presenter_mode(open_lesson):
    page = open_lesson("?lesson=transpose&presenter=true")
    body = page.locator("body")
    expect(page.locator(".candela-lesson-step")).to_have_text("step 1 of 5")
    expect(page.locator(".candela-presenter")).to_have_count(1)
    expect(page.locator(".candela-question")).to_contain_text("stride[0]")
    # presenter mode enlarges the type (wait: the stylesheet may land after the text)
    expect(page.locator(".candela-question")).to_have_css("font-size", "20px")
    # Step 1's question (stride[0] of (3, 4).transpose()) hides the fields; the walk sent
    # stops before axis 0 first steps: [0, 4, 8], not on to 1.
    positions = page.evaluate(model_js("return Array.from(m('frames-source').data.pos)"))
    assert positions == [0, 4, 8]

    # n: next lesson step, through the server.
    body.press("n")
    expect(page.locator(".candela-lesson-step")).to_have_text("step 2 of 5")
    expect(page.locator(".candela-question")).to_contain_text("adj_stride[0]")
    page.wait_for_function("() => location.search.includes('step=2')")
    assert "presenter=true" in page.evaluate("location.search")

    # Right arrow steps the walk in the browser: frame 1 lights buffer position 4.
    page.wait_for_function(model_js("return mark('logical', 'cursor').k[0] === 0"))
    page.keyboard.press("ArrowRight")
    page.wait_for_function(model_js("return mark('logical', 'cursor').k[0] === 1"))
    assert cursor(page) == (1, 4)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")  # the backward jump 8 -> 1 is the answer: it stops
    page.wait_for_function(model_js("return mark('logical', 'cursor').k[0] === 2"))
    expect(page.locator(".candela-odometer")).to_contain_text("the next step shows once")
    assert cursor(page) == (2, 8)
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(model_js("return mark('logical', 'cursor').k[0] === 1"))

    # Typing in the answer box must not move the walk: "n" and digits are text there.
    answer = page.locator(".candela-answer input")
    answer.focus()
    page.keyboard.type("3")
    page.keyboard.press("Enter")
    expect(page.locator(".candela-verdict")).to_contain_text("Not quite: you said 3")
    expect(page.locator(".candela-verdict-wrong")).to_have_count(1)
    expect(page.locator(".candela-lesson-step")).to_have_text("step 2 of 5")
    # A wrong try gives a hint, never the answer: nothing on screen says -7 yet.
    expect(page.locator(".candela-adj-stride")).to_be_hidden()
    visible = page.locator("body").inner_text()
    assert "-7" not in visible and "−7" not in visible

    # "show me" reveals: the answer, the fields, and the walk plays.
    page.locator(".candela-show-me button").click()
    expect(page.locator(".candela-verdict")).to_contain_text("-7")
    expect(page.locator(".candela-adj-stride")).to_have_text("(-7, 4)")
    page.wait_for_function(model_js("return m('frame-slider').value === 11"))
    answer.evaluate("el => el.blur()")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(model_js("return mark('logical', 'cursor').k[0] === 10"))
    page.evaluate(model_js("m('speed-slider').value = 30"))
    page.keyboard.press(" ")
    page.wait_for_function(model_js("return mark('logical', 'cursor').k[0] === 11"))
    # Space again while playing pauses (slowly, so the walk cannot finish first).
    for _ in range(5):
        page.keyboard.press("ArrowLeft")
    page.wait_for_function(model_js("return mark('logical', 'cursor').k[0] === 6"))
    page.evaluate(model_js("m('speed-slider').value = 1"))
    playing = model_js("return m('play-button').label.includes('pause')")
    page.keyboard.press(" ")
    page.wait_for_function(playing)
    page.keyboard.press(" ")
    page.wait_for_function(f"() => !({playing})()")
    assert cursor(page)[0] < 11

    # n to step 3, and a right answer.
    page.keyboard.press("n")
    expect(page.locator(".candela-lesson-step")).to_have_text("step 3 of 5")
    expect(page.locator(".candela-verdict")).to_have_text("")
    answer.focus()
    page.keyboard.type("1")
    page.keyboard.press("Enter")
    expect(page.locator(".candela-verdict-right")).to_contain_text(
        "Right: the buffer position after element 3 of the walk is 1"
    )
    expect(page.locator(".candela-verdict")).to_contain_text("8 - 7 = 1")

    # p goes back, once focus has left the box.
    answer.evaluate("el => el.blur()")
    page.keyboard.press("p")
    expect(page.locator(".candela-lesson-step")).to_have_text("step 2 of 5")


def test_a_bad_lesson_link_says_so_and_the_page_still_works(open_lesson):
    page = open_lesson("?lesson=no-such-lesson&step=2")
    expect(page.locator(".candela-lesson-message")).to_contain_text("no lesson 'no-such-lesson'")
    expect(page.locator(".candela-shape")).to_have_text("(3, 4)")
    page = open_lesson("?lesson=contiguity&step=3")
    expect(page.locator(".candela-error")).to_contain_text("non-contiguous")
    expect(page.locator(".candela-lesson-text")).to_contain_text("NonContiguousView")


def test_in_a_byte_unit_the_revealed_answer_and_its_working_are_in_bytes(open_lesson):
    page = open_lesson("?lesson=transpose&step=2&unit=float32")
    note = page.locator(".candela-unit-note")
    expect(note).to_be_visible()
    expect(note).to_contain_text("in elements")
    expect(note).to_contain_text("bytes of float32")
    answer = page.locator(".candela-answer input")
    answer.focus()
    page.keyboard.type("3")
    page.keyboard.press("Enter")
    expect(page.locator(".candela-verdict-wrong")).to_contain_text("bytes of float32")
    visible = page.locator("body").inner_text()
    for value in ("-28", "−28", "-7", "−7"):
        assert value not in visible, value
    page.locator(".candela-show-me button").click()
    verdict = page.locator(".candela-verdict")
    expect(verdict).to_contain_text("adj_stride[0] is -28 bytes of float32 (-7 elements)")
    expect(page.locator(".candela-worked")).to_contain_text("4 - 16*(3-1) = -28 bytes")
    expect(page.locator(".candela-adj-stride")).to_have_text("(-28, 16)")


def test_next_past_an_unanswered_question_to_a_new_buffer_throws_nothing(page, explorer_server):
    # sliding-windows 4 -> 5: the step left shows its answer and the next has a buffer of
    # another length; drawn twice in one message, BokehJS threw "Size mismatch" twice.
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_served(page, explorer_server + "?lesson=sliding-windows&step=4")
    for n in (5, 6):
        page.locator(".candela-next button").click()
        expect(page.locator(".candela-lesson-step")).to_have_text(f"step {n} of 6")
        shape = "4,4" if n == 5 else "10"
        expect(page.locator(".candela-shape-input input")).to_have_value(shape)
    page.wait_for_timeout(500)  # anything the page's scripts throw once it settles
    assert errors == []
