"""The classroom panel without a browser: lessons drive the Explorer, answers are graded,
the URL round-trips, presenter mode enlarges, every control takes the keyboard and the
colours survive colour-blind vision."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

pytest.importorskip("panel")

import panel as pn
from bokeh.document import Document
from bokeh.models import TapTool
from bokeh.models.widgets import Widget as BokehWidget

from explorer import columns as C
from explorer import lessons as L
from explorer.app import PRESENTER_SCALE, Explorer
from explorer.markup import lesson_html
from explorer.pipeline import format_pipeline, parse
from explorer.state import evaluate, parse_shape
from explorer.style import (
    PANE_SHEETS,
    PRESENTER_CLASS,
    PRESENTER_CSS,
    RIGHT_COLOR,
    WRONG_COLOR,
)
from explorer.url import query_for, read_query
from tests.explorer.test_look import contrast


def shown(ex: Explorer) -> tuple[tuple[int, ...], str]:
    return parse_shape(ex.shape), ex.ops


def test_picking_a_lesson_shows_its_first_step():
    ex = Explorer()
    cr = ex.classroom
    assert cr.lesson is None and not cr.step_box.visible
    cr.lesson_select.value = "transpose"
    lesson = L.load_lesson("transpose")
    assert (ex.lesson, ex.step) == ("transpose", 1)
    assert shown(ex) == (lesson.steps[0].shape, lesson.steps[0].ops)
    assert ex.layout.stride == (1, 4) and ex.error is None
    assert "step 1 of 5" in cr.header_pane.object
    assert cr.text_pane.object == lesson_html(lesson.steps[0].text)
    assert lesson.steps[0].question.prompt in cr.question_pane.object
    assert cr.prev_button.disabled and not cr.next_button.disabled
    cr.lesson_select.value = ""
    assert ex.lesson == "" and not cr.step_box.visible and ex.fields_pane.visible


def test_next_and_previous_walk_the_steps_and_stop_at_the_ends():
    ex = Explorer(lesson="slicing")
    cr = ex.classroom
    lesson = L.load_lesson("slicing")
    for n in range(2, len(lesson.steps) + 1):
        cr.next_button.clicks += 1
        assert ex.step == n
        step = lesson.steps[n - 1]
        assert shown(ex) == (step.shape, step.ops)
    assert cr.next_button.disabled
    cr.next()
    assert ex.step == len(lesson.steps)
    ex.keys._handle_msg({"key": "previous"})  # the p key, as the browser sends it
    assert ex.step == len(lesson.steps) - 1
    ex.keys._handle_msg({"key": "next"})
    ex.keys._handle_msg({"key": "rm -rf"})  # anything else is ignored
    assert ex.step == len(lesson.steps)
    ex.step = 1
    cr.previous()
    assert ex.step == 1 and cr.prev_button.disabled


@pytest.mark.parametrize("lesson", L.list_lessons(), ids=lambda lesson: lesson.id)
def test_each_step_of_a_walk_draws_each_view_once_and_as_a_link_to_the_step_would(lesson):
    # ▶ before an answer shows the answer of the step it leaves, then the next: drawn twice
    # in one held message, the page was sent a change of a few columns read at sending
    # time, of another length than the rest ("Size mismatch" in BokehJS, sliding-windows
    # 4 -> 5). Each view is drawn once, with what a link to that step draws.
    ex = Explorer(lesson=lesson.id)
    ex.__panel__()
    drawn: list = []
    draw_now = ex._draw_now
    ex._draw_now = lambda view: (drawn.append(view), draw_now(view))[1]
    for n in range(2, len(lesson.steps) + 1):
        drawn.clear()
        ex.classroom.next()
        assert ex.step == n and len(drawn) == len(set(map(id, drawn))) == len(ex._views), n
        fresh = Explorer(lesson=lesson.id, step=n)
        fresh.__panel__()
        mine, theirs = ex._views[0].figures, fresh._views[0].figures
        for name in ("logical_source", "buffer_source"):
            a, b = getattr(mine, name).data, getattr(theirs, name).data
            assert set(a) == set(b), (n, name)
            for column in a:
                assert np.array_equal(np.asarray(a[column]), np.asarray(b[column])), (n, column)


def test_a_question_hides_the_fields_until_graded_then_reveals():
    ex = Explorer(lesson="transpose", step=2)
    cr = ex.classroom
    assert not ex.fields_pane.visible
    plays = ex.keys.play_count

    verdict = cr.check("soon")  # not an answer: no reveal, nothing given away
    assert not verdict.readable and "candela-worked" not in cr.verdict_pane.object
    assert "candela-verdict-unread" in cr.verdict_pane.object
    assert ex.keys.play_count == plays and not ex.fields_pane.visible

    cr.answer_input.value_input = "3"
    cr.check_button.clicks += 1
    # Wrong: a hint and another try; the answer, the fields and the walk stay hidden.
    assert "candela-verdict-wrong" in cr.verdict_pane.object
    assert "Not quite: you said 3" in cr.verdict_pane.object
    assert "-7" not in cr.verdict_pane.object and "−7" not in cr.verdict_pane.object
    assert ex.keys.play_count == plays and not ex.fields_pane.visible
    assert cr.show_me_button.visible and not cr.reveal_pane.visible

    verdict = cr.check("−7")  # a typographic minus, as slides have
    assert verdict.correct and "candela-verdict-right" in cr.verdict_pane.object
    assert "Right: adj_stride[0] is -7" in cr.verdict_pane.object
    assert "adj_stride[0] = 1 - 4*(3-1) = -7" in cr.verdict_pane.object  # worked out
    assert ex.keys.play_count == plays + 1 and ex.fields_pane.visible
    assert not cr.show_me_button.visible

    cr.next()
    assert cr.verdict is None and cr.answer_input.value == ""
    assert 'class="candela-verdict"></div>' in cr.verdict_pane.object


def test_show_me_reveals_after_a_wrong_try_and_a_challenge_takes_any_right_chain():
    ex = Explorer(lesson="transpose", step=2)
    cr = ex.classroom
    cr.check("3")
    assert not ex.fields_pane.visible
    verdict = cr.show_me()
    assert verdict.revealed and "-7" in cr.verdict_pane.object and ex.fields_pane.visible
    lesson = cr._find("challenges")
    n = next(i for i, step in enumerate(lesson.steps, 1) if step.challenge is not None)
    ex.param.update(lesson="challenges", step=n)
    assert not ex.fields_pane.visible  # the target is not given away either
    step = cr.current_step
    assert not cr.check(".bogus()").readable
    assert cr.check(step.challenge.solution).correct and ex.fields_pane.visible
    assert ex.error is None and ex.ops.endswith(step.challenge.solution.strip())


def test_grading_puts_the_step_back_when_the_student_changed_it():
    ex = Explorer(lesson="transpose", step=2)
    ex.ops = ""  # the student wandered off
    verdict = ex.classroom.check("-7")
    assert verdict.correct and ex.ops == ".transpose()"


def test_every_question_of_every_lesson_grades_its_own_answer_right():
    ex = Explorer()
    for lesson in L.list_lessons():
        ex.lesson, ex.step = lesson.id, 1
        for n, step in enumerate(lesson.steps, 1):
            ex.step = n
            if step.question is not None:
                verdict = ex.classroom.check(L.format_answer(step.question.answer))
                assert verdict.correct, (lesson.id, n, verdict.message)


@pytest.mark.parametrize("reached_by", ["next", "link"])
def test_a_step_that_expects_an_error_shows_it_over_the_state_before_the_failing_op(reached_by):
    # The text talks about the layout the failing op is applied to: that one stays on show,
    # whether the step is reached with "next" or opened from a link.
    if reached_by == "next":
        ex = Explorer(lesson="contiguity", step=2)
        ex.step = 3
    else:
        ex = Explorer()
        ex.open_url("?lesson=contiguity&step=3")
    step = ex.classroom.current_step
    assert step.expect_error == "NonContiguousView"
    assert ex.error and "non-contiguous" in ex.error
    before_failing = evaluate(step.shape, format_pipeline(parse(step.ops)[:-1])).layout
    assert ex.layout == before_failing and ex.layout != L.step_layout(L.Step(step.shape, "", ""))
    assert 'class="candela-error"' in ex.error_pane.object
    assert "NonContiguousView" in ex.classroom.text_pane.object
    ex.step = 4
    assert ex.error is None


@pytest.mark.parametrize(
    ("query", "lesson", "step", "words"),
    [
        ("?lesson=transpose&step=2", "transpose", 2, None),
        ("?lesson=transpose", "transpose", 1, None),
        ("?lesson=nope&step=2", "", 1, "no lesson 'nope'; the lessons are: row-major"),
        ("?lesson=transpose&step=9", "transpose", 5, "steps 1 to 5, not 9; showing step 5"),
        ("?lesson=transpose&step=99", "transpose", 5, "steps 1 to 5, not 99; showing step 5"),
        ("?lesson=transpose&step=0", "transpose", 1, "steps 1 to 5, not 0"),
        ("?lesson=transpose&step=two", "transpose", 1, "step 'two' is not a number"),
        ("?lesson=transpose&presenter=maybe", "transpose", 1, "presenter 'maybe'"),
    ],
)
def test_a_link_opens_its_lesson_step_or_says_what_is_wrong(query, lesson, step, words):
    ex = Explorer()
    message = ex.open_url(query)
    assert (ex.lesson, ex.step) == (lesson, step)
    if words is None:
        assert message is None
    else:
        shown = html_text(ex.classroom.message_pane.object) + html_text(ex.error_pane.object)
        assert words in message and words in shown
        # The URL says what the page shows, not the value it fell back from.
        assert ex.url.location.search == query_for(ex, ex.classroom.at_step())
        if lesson:
            assert f"step={step}" in ex.url.location.search
    assert ex.layout is not None  # never a blank page


def test_a_link_to_a_lesson_step_with_a_second_view_shows_it_once_answered():
    # The aliasing lesson's steps compare two views of one buffer; the link to one
    # (?lesson=aliasing&step=1, as the page writes it) leaves compare out.
    ex = Explorer()
    assert ex.open_url("?lesson=aliasing&step=1") is None
    step = ex.classroom.current_step
    assert step.compare and ex.compare == step.compare and ex.compare_result is not None
    ex.classroom.show_me()
    assert all(v.compare_column is not None and v.compare_column.visible for v in ex._views)
    # A link without a lesson still means no second view.
    ex.open_url("?shape=3,4")
    assert ex.compare == "" and ex.compare_result is None


def html_text(markup: str) -> str:
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_the_url_is_a_clean_link_on_a_lesson_step_and_keeps_changes_otherwise():
    ex = Explorer(ops=".transpose()")
    assert query_for(ex, ex.classroom.at_step()) == "?shape=3,4&ops=.transpose()"
    ex.open_url("?lesson=transpose&step=2&presenter=true")
    assert ex.presenter
    assert ex.url.location.search == "?lesson=transpose&step=2&presenter=true"
    ex.ops = ".transpose().transpose()"
    assert ex.url.location.search == (
        "?shape=3,4&ops=.transpose().transpose()&lesson=transpose&step=2&presenter=true"
    )
    assert read_query("?shape=3,4&lesson=a&step=2&presenter=") == (
        {"lesson": "a", "step": 2, "presenter": True, "shape": "3,4"},
        [],
    )


def test_presenter_mode_enlarges_type_and_cells_and_undoes_cleanly():
    def on_a_projector(**kwargs) -> tuple[Explorer, object]:
        # Its page's figures' column and the height they have, as the page measures them
        # (unmeasured, the cells fit a guess of an ordinary window).
        shown = Explorer(**kwargs)
        root = shown.__panel__()
        shown._on_room(1280, 1000, 760)
        return shown, root

    ex, root = on_a_projector(shape=(3, 4), ops=".transpose()")
    size = (ex.figures.logical_figure.width, ex.figures.buffer_figure.height)
    font = ex.figures.labels_logical.data["size"][0]
    ex.presenter = True
    assert "candela-presenter" in root.css_classes
    for pane, shows in ((ex.fields_pane, "fields"), (ex.classroom.question_pane, "question")):
        # presenter mode's rules for what the pane shows are in its sheet (style.for_pane)
        sheet = "".join(s for s in pane.stylesheets if s in PANE_SHEETS)
        rule = f":host(.{PRESENTER_CLASS}) .candela-{shows}"
        assert rule in PRESENTER_CSS and rule in sheet and PRESENTER_CLASS in pane.css_classes
    # cells (and so figures) grow by the scale, to within a pixel a cell
    assert ex.figures.logical_figure.width >= (PRESENTER_SCALE - 0.1) * (size[0] - 8)
    assert ex.figures.labels_logical.data["size"][0] != font
    assert not any(part.visible for part in ex.editing_parts)  # a projector needs no editor
    # The shape and pipeline boxes too, as the README says.
    assert not ex.editor.shape_input.visible and not ex.editor.ops_input.visible
    ex.ops = ".transpose().transpose()"  # a redraw in presenter mode stays large
    redrawn, _ = on_a_projector(shape=(3, 4), ops=".transpose().transpose()", presenter=True)
    assert ex.figures.logical_figure.width == redrawn.figures.logical_figure.width
    with ex.typed():
        ex.ops = ".transpose().view((12,))"  # a bad input redraws nothing: no double scaling
    assert ex.figures.logical_figure.width == redrawn.figures.logical_figure.width
    ex.presenter = False
    assert "candela-presenter" not in root.css_classes
    assert PRESENTER_CLASS not in ex.fields_pane.css_classes
    assert (
        ex.figures.logical_figure.width
        == on_a_projector(shape=(3, 4), ops=".transpose().transpose()")[
            0
        ].figures.logical_figure.width
    )
    assert ex.figures.labels_logical.data["size"][0] == font
    assert all(part.visible for part in ex.editing_parts)


def _look(ex: Explorer, root) -> list:
    """What a page shows, part by part: its kind, classes, visibility and figure sizes."""
    parts = [
        (type(o).__name__, tuple(o.css_classes), o.visible)
        for o in root.select()
        if hasattr(o, "css_classes") and hasattr(o, "visible")
    ]
    figs = ex.figures
    sizes = [(f.width, f.height) for f in (figs.logical_figure, figs.buffer_figure)]
    return [parts, sizes, ex.download_button.disabled, ex.concealed]


@pytest.mark.parametrize("presenter", [False, True])
def test_a_page_walked_through_a_lesson_looks_as_one_opened_at_each_step(presenter):
    """A step changes only what a question's concealment touches (presenter mode is
    not applied again): walked forward and back, each step looks as a page opened there."""
    lesson = L.load_lesson("transpose")
    ex = Explorer(lesson=lesson.id, step=1, presenter=presenter)
    root = ex.__panel__()
    walk = [*range(1, len(lesson.steps) + 1), *range(len(lesson.steps) - 1, 0, -1)]
    for n in walk:
        ex.step = n
        opened = Explorer(lesson=lesson.id, step=n, presenter=presenter)
        shown = opened.__panel__()
        if not ex.concealed:  # coming back to a step whose answer was shown
            opened.classroom.show_me()
        assert _look(ex, root) == _look(opened, shown), f"step {n}"
        if ex.concealed:  # and once its answer is shown
            ex.classroom.show_me()
            opened.classroom.show_me()
            assert not ex.concealed
            assert _look(ex, root) == _look(opened, shown), f"step {n}, its answer shown"
    ex.presenter = not presenter  # then the other mode, at the last step (answer shown)
    opened = Explorer(lesson=lesson.id, step=walk[-1], presenter=not presenter)
    shown = opened.__panel__()
    opened.classroom.show_me()
    assert _look(ex, root) == _look(opened, shown)


def test_a_second_display_of_a_presented_page_is_presented_too():
    ex = Explorer(lesson="transpose", step=2, presenter=True)
    first, second = ex.__panel__(), ex.__panel__()
    assert "candela-presenter" in second.css_classes
    assert [type(o).__name__ for o in second] == [type(o).__name__ for o in first]
    assert second.objects[1] is ex.lesson_area  # the lesson first, where a projector shows it


def test_every_control_is_a_focusable_widget():
    """Keyboard users reach every control: no click-only divs, tap tools or links."""
    ex = Explorer(lesson="transpose")
    page = ex.__panel__()
    for obj in page.select():
        if isinstance(obj, pn.pane.HTML | pn.pane.Markdown):
            text = str(obj.object)
            # The code panel's copy buttons are native buttons: focusable, Enter and
            # space press them. Nothing else in a pane may take a click.
            text = re.sub(
                r'<button type="button" class="candela-copy [^"]*" onclick="[^"]*">', "", text
            )
            assert not re.search(r"onclick|<button|<a\b|tabindex=\"-1\"", text, re.IGNORECASE), obj
    doc = Document()
    page.get_root(doc)
    for model in doc.models:
        assert not isinstance(model, TapTool)
        if model.js_event_callbacks or getattr(model, "js_property_callbacks", {}).get(
            "change:active"
        ):
            assert isinstance(model, BokehWidget), f"{type(model).__name__} takes clicks"
    # The controls a lesson needs are all widgets (focusable inputs and buttons).
    cr = ex.classroom
    for control in (
        cr.lesson_select,
        cr.answer_input,
        cr.check_button,
        cr.prev_button,
        cr.next_button,
        cr.presenter_toggle,
    ):
        assert isinstance(control, pn.widgets.Widget), control


# --------------------------------------------------------------------------- colour

OKABE_ITO = {"#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"}

# Machado, Oliveira and Fernandes (2009), severity 1.0, on linear RGB.
DICHROMACY = {
    "protanopia": [
        [0.152286, 1.052583, -0.204868],
        [0.114503, 0.786281, 0.099216],
        [-0.003882, -0.048116, 1.051998],
    ],
    "deuteranopia": [
        [0.367322, 0.860646, -0.227968],
        [0.280085, 0.672501, 0.047413],
        [-0.011820, 0.042940, 0.968881],
    ],
    "tritanopia": [
        [1.255528, -0.076749, -0.178779],
        [-0.078411, 0.930809, 0.147602],
        [0.004733, 0.691367, 0.303900],
    ],
}


def _lab(hex_color: str, vision: str | None) -> np.ndarray:
    # sRGB hex -> (simulated) CIELAB, D65.
    c = np.array([int(hex_color[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    if vision:
        linear = np.clip(np.array(DICHROMACY[vision]) @ linear, 0, 1)
    xyz = (
        np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
        @ linear
        / np.array([0.95047, 1, 1.08883])
    )
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def distance(a: str, b: str, vision: str | None) -> float:
    """CIE76 colour difference as a viewer with ``vision`` sees the two colours."""
    return float(np.linalg.norm(_lab(a, vision) - _lab(b, vision)))


MARKS = {
    "cursor": C.CURSOR,
    "forward": C.FORWARD,
    "backward": C.BACKWARD,
    "offset": C.OFFSET,
    "hover": C.HOVER,
    "not read": C.GREY,
}


def test_mark_colours_are_okabe_ito_and_elements_viridis():
    from bokeh.palettes import Viridis256

    for name, color in MARKS.items():
        assert color.upper() in OKABE_ITO or name == "not read", name
    for color in (RIGHT_COLOR, WRONG_COLOR):  # text colours: readable on white (WCAG AA)
        assert contrast(color, "#FFFFFF") >= 4.5, color
    assert set(C.element_colors(100)) <= set(Viridis256)


@pytest.mark.parametrize("vision", [None, *DICHROMACY])
def test_every_two_marks_stay_apart_under_colour_blind_vision(vision):
    # 15 CIE76 units is well past "clearly different"; a classic red/green pair fails it.
    assert distance("#d62728", "#2ca02c", "deuteranopia") < 15
    for (a, x), (b, y) in itertools.combinations(MARKS.items(), 2):
        assert distance(x, y, vision) >= 15, (a, b, vision)
    assert distance(RIGHT_COLOR, WRONG_COLOR, vision) >= 15


def test_toggling_presenter_mode_writes_the_url_at_once():
    ex = Explorer()
    ex.open_url("?lesson=transpose&step=2")
    assert ex.url.location.search == "?lesson=transpose&step=2"
    ex.presenter = True  # the checkbox: a reload must stay in presenter mode
    assert ex.url.location.search == "?lesson=transpose&step=2&presenter=true"
    ex.presenter = False
    assert ex.url.location.search == "?lesson=transpose&step=2"


# --------------------------------------------------------------------------- one unit


def test_in_a_byte_unit_a_lesson_states_strides_jumps_and_offsets_in_bytes():
    ex = Explorer(lesson="transpose", step=2, unit="float32")  # adj_stride[0]: -7 elements
    cr = ex.classroom
    assert "bytes of float32" in cr.unit_note_pane.object and cr.unit_note_pane.visible
    assert "-28" not in cr.unit_note_pane.object and "-7" not in cr.unit_note_pane.object
    wrong = cr.check("3")
    assert not wrong.correct and "-28" not in wrong.message and "-7" not in wrong.message
    assert "bytes of float32" in wrong.message  # the hint names the unit expected
    shown = cr.show_me()
    assert "adj_stride[0] is -28 bytes of float32 (-7 elements)" in shown.message
    assert "adj_stride[0] = 4 - 16*(3-1) = -28 bytes of float32" in shown.worked
    assert "-28 bytes of float32" in cr.verdict_pane.object
    ex.unit = "float64"  # the verdict on screen follows the unit
    assert "-56 bytes of float64 (-7 elements)" in cr.verdict_pane.object
    ex.unit = "elements"
    assert "adj_stride[0] is -7." in cr.verdict_pane.object and not cr.unit_note_pane.visible


@pytest.mark.parametrize("typed", ["-28", "-7", "−28"])
def test_in_a_byte_unit_an_answer_counts_in_bytes_or_in_elements(typed):
    ex = Explorer(lesson="transpose", step=2, unit="float32")
    verdict = ex.classroom.check(typed)
    assert verdict.correct and verdict.expected == -28
    assert "Right: adj_stride[0] is -28 bytes of float32 (-7 elements)" in verdict.message


def test_in_a_byte_unit_positions_are_in_bytes_beside_the_cell_the_answer_names():
    ex = Explorer(lesson="transpose", step=3, unit="float32")  # the position after 8
    verdict = ex.classroom.check("1")
    assert verdict.correct and not ex.classroom.check("4").correct
    assert "reads position 32 bytes of float32 (cell 8)" in verdict.worked
    assert "adj_stride[0] = -28 bytes of float32: 32 - 28 = 4 bytes of float32" in verdict.worked
    assert verdict.worked.endswith("cell 4/4 = 1.")
    ex = Explorer(lesson="slicing", step=1, unit="int16")  # offset 6 elements
    verdict = ex.classroom.check("12")
    assert verdict.correct and "offset = 12 bytes of int16" in verdict.worked


def test_in_a_byte_unit_a_challenge_target_and_its_summary_are_in_bytes():
    ex = Explorer(lesson="challenges", step=1, unit="float32")
    cr = ex.classroom
    assert "stride (4, 16) bytes of float32" in cr.question_pane.object
    verdict = cr.check(cr.current_step.challenge.solution)
    assert verdict.correct and "stride (4, 16) bytes of float32" in verdict.worked


@pytest.mark.parametrize("unit", ["bogus", "", None, 7])
def test_a_unit_that_is_not_a_dtype_counts_in_elements(unit):
    step = L.load_lesson("transpose").steps[1]
    layout = L.step_layout(step)
    assert L.accepted_answers(step.question, layout, unit) == (-7,)
    assert L.grade(step.question, layout, "-7", unit).correct
    assert "bytes" not in L.show_me(step.question, layout, unit).message


def test_a_lesson_step_shows_its_code_in_numpys_and_pytorchs_words_once_answered():
    ex = Explorer(lesson="sliding-windows", step=1)  # .unfold(0, 3, 1) over 8 elements
    step = ex.classroom.current_step
    assert step.question is not None and "candela-code" not in ex.fields_pane.object
    assert ex.classroom.check(L.format_answer(step.question.answer)).correct
    code = ex.fields_pane.object
    assert "y = sliding_window_view(x, 3, axis=0)" in code  # NumPy's word for it
    assert "y = x.unfold(0, 3, 1)" in code  # and PyTorch's
    ex.classroom.next()  # the next step's code, withheld again until answered
    assert "candela-code" not in ex.fields_pane.object
