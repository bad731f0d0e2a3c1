"""While a question waits, nothing sent to the page answers it: every question of every lesson.

The rule (docs/classroom.md, "Predict, then reveal") per kind of question, checked
on the models a served page would receive (the Bokeh document's JSON), before and
after the answer: the walk sent stops before the asked jump (candela's own walk is
the oracle for where that jump is), no cell's colour or label says where an
element sits, and the fields and step list are not in the document at all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("panel")

from bokeh.document import Document
from hypothesis import given, settings
from hypothesis import strategies as st

from candela import Layout
from explorer import lessons as L
from explorer.app import Explorer
from explorer.classroom import read_catalogue
from explorer.fields import fields_html

DOCS = Path(__file__).resolve().parents[2] / "docs" / "classroom.md"

CATALOGUE, _ = read_catalogue()
QUESTIONS = [
    pytest.param(lesson.id, n, id=f"{lesson.id}-{n}-{step.question.ask}")
    for lesson in CATALOGUE
    for n, step in enumerate(lesson.steps, 1)
    if step.question is not None
]


def table_rows() -> dict[str, tuple[str, str]]:
    """The kinds in docs/classroom.md's table: kind -> (grid drawn, the walk)."""
    rows = {}
    for line in DOCS.read_text().splitlines():
        m = re.match(r"\| `(\w+)` \| ([^|]+) \| ([^|]+) \|$", line)
        if m:
            rows[m.group(1)] = (m.group(2).strip(), m.group(3).strip())
    return rows


def test_every_kind_of_question_has_its_row_in_the_table_and_its_rule():
    # A kind the grader knows with no row (or a row for a kind that does not exist) fails.
    rows = table_rows()
    assert set(rows) == set(L.ASKS) == set(L.WITHHELD)
    for kind, (grid, walk) in rows.items():
        rule = L.WITHHELD[kind]
        assert (rule.grid == "before") == grid.startswith("the tensor before"), kind
        assert (rule.walk == "none") == walk.startswith("none"), kind


def test_every_kind_is_asked_by_some_lesson_question():
    # Each kind's rule is then proven on a real question by the tests below.
    asked = {step.question.ask for lesson in CATALOGUE for step in lesson.steps if step.question}
    missing = set(L.ASKS) - asked
    assert missing <= {"len"}, missing  # `len` is proven on its own below


# ---------------------------------------------------------------- the walk's limit, as laws

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


def walk_of(layout: Layout) -> list:
    return [tuple(step) for step in layout.walk()]


@settings(max_examples=60, deadline=None)
@given(shapes, st.data())
def test_the_walk_stops_before_the_asked_axis_first_steps(shape, data):
    layout = Layout(shape).transpose() if len(shape) > 1 else Layout(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    walk = walk_of(layout)
    for ask in ("stride", "adj_stride", "stride_bytes"):
        q = L.Question(ask, "", 0, "", axis=axis, dtype="float32")
        k = L.walk_limit(q, layout)
        d = axis % len(shape)
        # No element shown was stepped into by the asked axis ...
        assert all(step[2] != d for step in walk[:k])
        # ... and the next element, the first withheld, is (when the axis steps at all).
        if k < len(walk):
            assert walk[k][2] == d
        else:
            assert layout.shape[d] == 1


@settings(max_examples=60, deadline=None)
@given(shapes, st.data())
def test_the_walk_stops_before_the_asked_element_and_the_asked_jump(shape, data):
    layout = Layout(shape)
    walk = walk_of(layout)
    index = tuple(data.draw(st.integers(0, n - 1)) for n in shape)
    k = L.walk_limit(L.Question("flat_index", "", 0, "", index=index), layout)
    assert all(tuple(step[0]) != index for step in walk[:k])
    assert tuple(walk[k][0]) == index
    if len(walk) > 1:
        after = data.draw(st.integers(0, len(walk) - 2))
        q = L.Question("next_position", "", 0, "", after=after)
        assert L.walk_limit(q, layout) == after + 1  # step `after` shown, its successor not


@pytest.mark.parametrize(
    "ask", ["offset", "len", "shape", "shape_as_3d", "read_count", "is_contiguous"]
)
def test_questions_the_walk_would_answer_show_no_walk(ask):
    q = L.Question(ask, "", 0, "", position=0)
    assert L.walk_limit(q, Layout((3, 4)).transpose()) == 0


# ---------------------------------------------------------------- the waiting buffer's places


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=2, max_size=4).map(tuple), st.data())
def test_the_waiting_buffer_is_placed_by_its_length_alone(shape, data):
    # Answered, a lane wraps to hold whole rows of the tensor (its second-smallest
    # stride); waiting, where its cells sit must not say so: a sliced, transposed or
    # permuted view lays its buffer out exactly as the buffer's own flat lane would.
    from candela import Tensor
    from explorer.columns import columns_for, withheld_columns

    base = Tensor.arange(shape)
    axes = data.draw(st.permutations(range(len(shape))))
    view = base.transpose_axes(axes)
    ranges = [
        slice(*sorted(data.draw(st.lists(st.integers(0, n), min_size=2, max_size=2, unique=True))))
        for n in view.layout.shape
    ]
    view = view.slice(ranges)
    size = len(view.buffer)
    if size > 200:  # a lesson's tensors are small; an overview lane is bins
        return
    flat = withheld_columns(columns_for(Tensor.arange((size,))), 0)
    waiting = withheld_columns(columns_for(view), 0)
    assert waiting.buffer_cols == flat.buffer_cols, (shape, axes, ranges)
    for key in ("x", "y"):
        assert np.array_equal(waiting.buffer[key], flat.buffer[key]), key
        if len(flat.buffer_labels["x"]):
            assert np.array_equal(waiting.buffer_labels[key], flat.buffer_labels[key]), key


# ---------------------------------------------------------------- every question, the document


@pytest.fixture(scope="module")
def page():
    ex = Explorer()
    doc = Document()
    doc.add_root(ex.__panel__().get_root(doc))
    return ex, doc


def go(ex: Explorer, lesson_id: str, n: int) -> None:
    """Open a lesson step afresh (unanswered), whatever was on show."""
    ex.param.update(lesson="", step=1)
    ex.param.update(lesson=lesson_id, step=n)


def document_text(doc: Document) -> str:
    return json.dumps(doc.to_json(), default=str)


def plain(markup: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", markup)).strip()


def asked_layout(step: L.Step):
    return L.step_layout(step)


def check_withheld(ex: Explorer, step: L.Step, text: str) -> None:
    q = step.question
    layout = asked_layout(step)
    f = ex.figures
    true_walk = [int(p) for p in layout.positions()]
    sent = [int(p) for p in f.frames_source.data["pos"]]
    limit = 0 if L.draws_before(q) else L.walk_limit(q, layout)
    assert sent == true_walk[:limit]
    if q.ask == "next_position":
        assert len(sent) == q.after + 1
    if q.ask in ("offset", "read_count", "is_contiguous", "shape", "shape_as_3d", "len"):
        assert sent == []
    # The buffer: one colour, nothing read, no offset marker; the grid: letters, no "@p".
    buffer = f.buffer_source.data
    assert len(set(np.asarray(buffer["color"]).tolist())) <= 1
    assert not np.asarray(buffer["reads"]).any()
    labels = f.labels_logical.data["text"]
    assert not any(str(t).startswith("@") for t in labels)
    assert not any(re.fullmatch(r"-?\d+", str(t)) for t in labels)  # no value: a position
    assert "offset" not in list(f.labels_buffer.data["text"])
    assert not any("position" in name for name, _ in f.hover_tools["logical"].tooltips)
    # Text: the fields and the step's layouts are not in the document at all.
    fields = plain(fields_html(layout, ex.unit))
    assert fields[:40] not in plain(text)
    assert "after:" not in text and "before:" not in text
    if q.ask in ("shape", "shape_as_3d", "len"):
        answer = L.expected_answer(q, layout)
        heading = plain(ex.logical_heading.object)
        alt = f.logical_figure.html_attributes.get("aria-label", "")
        if q.ask == "len":
            assert f"{answer} cells" not in plain(ex.buffer_heading.object) or layout.len == len(
                ex.tensor.buffer
            )
        else:
            shown = str(tuple(answer))
            if L.draws_before(q) and len(ex.result.states) > 1:
                assert shown not in heading + alt


@pytest.mark.parametrize("lesson_id, n", QUESTIONS)
def test_while_a_question_waits_the_document_holds_nothing_that_answers_it(page, lesson_id, n):
    ex, doc = page
    go(ex, lesson_id, n)
    step = ex.classroom.current_step
    assert ex.concealed and ex.classroom.waiting is step.question
    check_withheld(ex, step, document_text(doc))
    assert ex.download_button.disabled  # the offline page of this state holds every field
    # After "show me" everything comes back: the whole walk, the colours, the fields.
    ex.classroom.show_me()
    layout = asked_layout(step)
    f = ex.figures
    assert [int(p) for p in f.frames_source.data["pos"]] == [int(p) for p in layout.positions()]
    assert plain(fields_html(layout, ex.unit))[:40] in plain(ex.fields_pane.object)
    assert not ex.download_button.disabled
    if len(set(int(p) for p in layout.positions())) > 1:
        assert len(set(np.asarray(f.buffer_source.data["color"]).tolist())) > 1


def test_a_right_answer_brings_everything_back(page):
    ex, _ = page
    go(ex, "transpose", 2)
    step = ex.classroom.current_step
    before = len(ex.figures.frames_source.data["pos"])
    answer = L.expected_answer(step.question, asked_layout(step))
    ex.classroom.check(L.format_answer(answer))
    assert ex.classroom.verdict.correct and not ex.concealed
    assert len(ex.figures.frames_source.data["pos"]) == asked_layout(step).len > before


def test_a_wrong_answer_keeps_it_withheld(page):
    ex, doc = page
    go(ex, "transpose", 2)
    step = ex.classroom.current_step
    answer = L.expected_answer(step.question, asked_layout(step))
    ex.classroom.check(str(answer + 1000))
    assert not ex.classroom.verdict.correct and ex.concealed
    check_withheld(ex, step, document_text(doc))


def test_leaving_an_unanswered_question_for_another_on_the_same_layout_withholds_the_new_one():
    # Two questions about one layout in a row: the second one's limit, not the first's.
    ex = Explorer()
    lesson = L.Lesson(
        "t", "t", "",
        (
            L.Step((3, 4), ".transpose()", "a", question=L.Question(
                "next_position", "p", 8, "w", after=5)),
            L.Step((3, 4), ".transpose()", "b", question=L.Question(
                "adj_stride", "p", -7, "w", axis=0)),
        ),
    )  # fmt: skip
    ex.classroom.catalogue.append(lesson)
    ex.param.update(lesson="t", step=1)
    assert len(ex.figures.frames_source.data["pos"]) == 6
    ex.classroom.next()
    assert len(ex.figures.frames_source.data["pos"]) == 3  # up to (0, 2): axis 0 not stepped


def test_a_len_question_draws_the_tensor_before_its_step():
    ex = Explorer()
    lesson = L.Lesson(
        "t", "t", "",
        (L.Step((3, 4), ".slice(s[1:, ::2])", "a", question=L.Question("len", "p", 4, "w")),),
    )  # fmt: skip
    ex.classroom.catalogue.append(lesson)
    ex.param.update(lesson="t", step=1)
    f = ex.figures
    assert len(f.logical_source.data["x"]) == 12  # the (3, 4) before the slice, not its 4
    assert len(f.frames_source.data["pos"]) == 0
    assert "shape (3, 4)" in ex.logical_heading.object and "(2, 2)" not in ex.logical_heading.object
    ex.classroom.show_me()
    assert len(f.logical_source.data["x"]) == 4 and len(f.frames_source.data["pos"]) == 4


def test_the_grid_heading_says_before_the_last_step_only_when_there_is_one():
    # A shape question on a step with no operation draws the start tensor, the layout
    # asked about (batched-matmul 1: shape_as_3d of (6, 2, 3, 4)); with one it draws the
    # tensor before it (batched-matmul 4: after .transpose(-2, -1)).
    from explorer.lesson_page import lesson_page_data

    ex = Explorer()
    lesson = next(lsn for lsn in CATALOGUE if lsn.id == "batched-matmul")
    steps = lesson_page_data(lesson)["steps"]
    for n, before in ((1, False), (4, True)):
        step = lesson.steps[n - 1]
        assert step.question.ask == "shape_as_3d" and bool(step.ops) == before
        go(ex, "batched-matmul", n)
        assert ex.concealed
        for heading in (ex.logical_heading.object, steps[n - 1]["withheld"]["logical_heading"]):
            assert ("before the last step" in heading) == before, (n, heading)
            assert "cells lettered in walk order" in heading


# ---------------------------------------------------------------- the offline lesson page


@pytest.mark.parametrize("lesson", [lsn for lsn in CATALOGUE if any(s.question for s in lsn.steps)],
                         ids=lambda lsn: lsn.id)  # fmt: skip
def test_the_lesson_page_draws_every_waiting_question_withheld(lesson):
    from explorer.lesson_page import lesson_page_data

    data = lesson_page_data(lesson)
    for step, shown in zip(lesson.steps, data["steps"]):
        q = step.question
        if q is None:
            assert "withheld" not in shown
            continue
        layout = asked_layout(step)
        waiting, full = shown["withheld"], shown["drawing"]
        limit = 0 if L.draws_before(q) else L.walk_limit(q, layout)
        positions = [int(p) for p in layout.positions()]
        assert waiting["sources"]["frames_source"]["pos"] == positions[:limit]
        assert full["sources"]["frames_source"]["pos"] == positions
        assert waiting["fields"] == "" and waiting["layout"] == ""
        assert len(set(waiting["sources"]["buffer_source"]["color"])) <= 1
        texts = [t for kind, rows in waiting["labels"]["logical"] if rows for t in rows["text"]]
        assert not any(re.fullmatch(r"-?\d+|@-?\d+", str(t)) for t in texts)
        assert all(rows is None for kind, rows in waiting["labels"]["buffer"] if kind == "offset")
        if q.ask == "shape" and len(step.ops.strip()):
            answer = tuple(L.expected_answer(q, layout))
            assert str(answer) not in plain(waiting["logical_heading"])


COMPARED = [
    pytest.param(lesson.id, n, id=f"{lesson.id}-{n}")
    for lesson in CATALOGUE
    for n, step in enumerate(lesson.steps, 1)
    if step.question is not None and step.compare
]


@pytest.mark.parametrize("lesson_id, n", COMPARED)
def test_a_waiting_question_sends_nothing_of_the_second_view(lesson_id, n):
    # A step that draws a second view over the buffer (the aliasing lesson): its grid,
    # lane and fields are a second copy of the asked layout's numbers, so they wait too.
    ex = Explorer()
    doc = Document()
    doc.add_root(ex.__panel__().get_root(doc))
    go(ex, lesson_id, n)
    step = ex.classroom.current_step
    assert ex.concealed and ex.compare_result is not None
    lane = [v.compare.lane_source.data for v in ex._views if v.compare is not None]
    assert all(not len(next(iter(data.values()), [])) for data in lane), lane
    for pane in (ex.compare_fields, ex.compare_heading, ex.lane_heading):
        assert pane.object == ""
    assert "fields of B" not in document_text(doc)  # the second view's fields heading
    ex.classroom.show_me()
    assert not ex.concealed
    compare = L.step_layout(L.Step(step.shape, step.compare, ""))
    assert plain(fields_html(compare))[:40] in plain(ex.compare_fields.object)
    assert all(v.compare_column.visible for v in ex._views)
