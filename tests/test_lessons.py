"""The classroom lessons: every file loads, every pipeline runs, every answer is true.

A lesson is data a teacher projects, so these tests state the laws that keep it
honest: each shipped step runs (or fails with exactly the error it declares),
each stored answer equals what candela computes, no step shows its answer
before it is asked, a wrong answer gets a hint and never the right value, a
student's typed answer (or challenge pipeline) is read in the forms people type
without evaluating anything, any pipeline that reaches a challenge's target
passes, and a malformed file is refused with a message naming the file, the
field and the reason.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import candela
from candela import Layout
from explorer import lessons, pipeline
from explorer.lessons import (
    ASKS,
    Lesson,
    LessonError,
    LessonNotFound,
    Question,
    Step,
    challenges,
    check_answer,
    describe,
    expected_answer,
    explain,
    format_answer,
    grade,
    lesson_files,
    list_lessons,
    load_lesson,
    load_lesson_file,
    parse_typed,
    run_step,
    step_layout,
    verify_lesson,
)
from explorer.ops import names

LESSONS = list_lessons()

# The view-or-reshape lesson uses operations (reshape, contiguous) that arrive in
# candela and the pipeline together; until then its steps cannot run, and skip.
NEEDS_RESHAPE = not hasattr(candela.Layout, "reshape")
PENDING = pytest.mark.skip(reason="needs candela reshape")


def _pending(step: Step) -> bool:
    if not NEEDS_RESHAPE:
        return False
    texts = [step.ops] + ([step.challenge.solution] if step.challenge else [])
    try:
        for text in texts:
            pipeline.parse(text)
    except pipeline.PipelineError:
        return True
    return False


STEPS = [
    pytest.param(lesson, i, step, id=f"{lesson.id}-{i}", marks=[PENDING] if _pending(step) else [])
    for lesson in LESSONS
    for i, step in enumerate(lesson.steps)
]
RUNNABLE = [p for p in STEPS if not p.marks]
QUESTIONS = [p for p in STEPS if p.values[2].question is not None]
CHALLENGES = [p for p in STEPS if p.values[2].challenge is not None]
# Operations that may copy: a bare Layout has no buffer to copy into.
COPYING = {"as_contiguous", "contiguous", "reshape"}
# Steps that succeed without a copy also apply to a bare Layout.
ZERO_COPY = [
    p
    for p in RUNNABLE
    if p.values[2].expect_error is None
    and all(op.name not in COPYING for op in pipeline.parse(p.values[2].ops))
]
LESSON_PARAMS = [
    pytest.param(lesson, id=lesson.id, marks=[PENDING] if any(map(_pending, lesson.steps)) else [])
    for lesson in LESSONS
]


# --------------------------------------------------------------------------- the shipped lessons


def test_there_are_at_least_nine_lessons_in_numbered_order() -> None:
    files = lesson_files()
    assert len(files) >= 9
    numbers = [int(f.name.split("-", 1)[0]) for f in files]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert [lesson.source for lesson in LESSONS] == [f.name for f in files]


def test_lesson_ids_are_unique_and_load_by_id() -> None:
    ids = [lesson.id for lesson in LESSONS]
    assert len(set(ids)) == len(ids)
    for lesson in LESSONS:
        assert load_lesson(lesson.id) == lesson


def test_an_unknown_lesson_id_names_the_known_ones() -> None:
    with pytest.raises(LessonNotFound) as caught:
        load_lesson("no-such-lesson")
    assert "no-such-lesson" in str(caught.value)
    for lesson in LESSONS:
        assert lesson.id in str(caught.value)


def test_the_lessons_use_every_pipeline_operation_and_every_kind_of_question() -> None:
    ops_used = {
        op.name
        for lesson in LESSONS
        for step in lesson.steps
        if not _pending(step)
        for text in (step.ops, step.challenge.solution if step.challenge else "")
        for op in pipeline.parse(text)
    }
    assert not set(names()) - ops_used, "no lesson uses these operations"
    asks_used = {s.question.ask for lesson in LESSONS for s in lesson.steps if s.question}
    assert asks_used == set(ASKS)
    assert any(s.expect_error for lesson in LESSONS for s in lesson.steps)


@pytest.mark.parametrize("lesson", LESSON_PARAMS)
def test_each_lesson_agrees_with_candela(lesson: Lesson) -> None:
    assert verify_lesson(lesson) == []


@pytest.mark.parametrize(("lesson", "index", "step"), STEPS)
def test_each_step_runs_or_fails_with_its_declared_error(
    lesson: Lesson, index: int, step: Step
) -> None:
    if step.expect_error is None:
        tensor = run_step(step)
        assert tensor.layout.len == len(tensor.to_numpy().ravel())
    else:
        with pytest.raises(getattr(candela, step.expect_error)):
            run_step(step)


@pytest.mark.parametrize(("lesson", "index", "step"), ZERO_COPY)
def test_a_step_without_a_copy_gives_the_same_layout_on_a_bare_layout(
    lesson: Lesson, index: int, step: Step
) -> None:
    layout = Layout(step.shape)
    for op in pipeline.parse(step.ops):
        layout = pipeline.apply_step(layout, op)
    assert layout == step_layout(step)


@pytest.mark.parametrize(("lesson", "index", "step"), QUESTIONS)
def test_each_stored_answer_is_what_candela_computes(
    lesson: Lesson, index: int, step: Step
) -> None:
    question = step.question
    assert question is not None
    layout = step_layout(step)
    computed = expected_answer(question, layout)
    assert computed == question.answer
    assert type(computed) is type(question.answer)
    assert _first_principles(question, layout) == question.answer


def _first_principles(question: Question, layout: Layout) -> object:
    # Each answer from its definition, by brute force over the walk and NumPy's itemsize.
    rank = layout.rank
    positions = [int(p) for p in layout.positions()]
    if question.ask in ("stride", "stride_bytes"):
        axis = question.axis % rank
        unit = [0] * rank
        unit[axis] = 1
        if layout.shape[axis] == 1:  # never steps: the stride is whatever the layout says
            stride = layout.stride[axis]
        else:
            stride = layout.flat_index(tuple(unit)) - layout.flat_index((0,) * rank)
        return stride * (np.dtype(question.dtype).itemsize if question.dtype else 1)
    if question.ask == "adj_stride":
        axis = question.axis % rank
        steps = list(layout.walk())
        deltas = {s.delta for s in steps[1:] if s.axis == axis}
        assert len(deltas) == 1, "an axis that steps always adds the same delta"
        return deltas.pop()
    if question.ask == "offset":
        return positions[0]
    if question.ask == "len":
        return len(positions)
    if question.ask == "shape":
        return tuple(layout.shape)
    if question.ask == "shape_as_3d":
        padded = (1, 1, *layout.shape)[-max(3, rank) :]
        return (int(np.prod(padded[:-2])), padded[-2], padded[-1])
    if question.ask == "is_contiguous":
        return positions == list(range(positions[0], positions[0] + len(positions)))
    if question.ask == "next_position":
        return positions[question.after + 1]
    if question.ask == "read_count":
        return positions.count(question.position)
    if question.ask == "flat_index":
        (position,) = [s.position for s in layout.walk() if tuple(s.index) == question.index]
        return position
    if question.ask in ("units", "unit_entries", "units_per_request"):
        # Memory unit of each read: its first byte's, p * itemsize // unit.
        size, unit = np.dtype(question.dtype).itemsize, question.unit_bytes
        units = [p * size // unit for p in positions]
        if question.ask == "units":
            return len(set(units))
        if question.ask == "unit_entries":
            return 1 + sum(1 for a, b in zip(units, units[1:]) if a != b)
        warp = question.warp
        groups = [units[k : k + warp] for k in range(0, len(units), warp)]
        per = sum(len(set(g)) for g in groups) / len(groups)
        assert per == int(per)
        return int(per)
    raise AssertionError(question.ask)


def test_error_names_are_candelas_error_classes() -> None:
    import candela

    for name in lessons.ERROR_NAMES:
        assert issubclass(getattr(candela, name), candela.OpError)


# --------------------------------------------------------------------------- grading typed answers


INT_QUESTION = Question(ask="adj_stride", axis=0, prompt="p", answer=-7, why="w")
SHAPE_QUESTION = Question(ask="shape", prompt="p", answer=(4, 3), why="w")
BOOL_QUESTION = Question(ask="is_contiguous", prompt="p", answer=False, why="w")
TRANSPOSED = Layout((3, 4)).transpose()


def _typed_forms(value: object) -> list[str]:
    # The ways a person types the same answer.
    if isinstance(value, bool):
        word = "True" if value else "False"
        return [word, word.lower(), f"  {word.upper()} ", "yes" if value else "no"]
    if isinstance(value, int):
        forms = [str(value), f" {value} ", f"{value}\n"]
        forms.append(f"\u2212{-value}" if value < 0 else f"+{value}")
        return forms
    items = [str(v) for v in value]
    forms = [
        repr(tuple(value)),
        ", ".join(items),
        ",".join(items),
        " ".join(items),
        f"[{', '.join(items)}]",
    ]
    if len(items) == 1:
        forms.append(f"({items[0]},)")
    return forms


def _wrong_values(value: object) -> list[object]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1, -value if value else 7]
    value = tuple(value)
    wrong = [(*value[:-1], value[-1] + 1), (*value, 1)]
    if value[::-1] != value:
        wrong.append(value[::-1])
    return wrong


@pytest.mark.parametrize(("lesson", "index", "step"), QUESTIONS)
def test_the_right_answer_is_accepted_in_every_typed_form(
    lesson: Lesson, index: int, step: Step
) -> None:
    question = step.question
    layout = step_layout(step)
    for typed in _typed_forms(question.answer):
        correct, message = check_answer(question, layout, typed)
        assert correct, (typed, message)
        assert message.startswith("Right")
        assert format_answer(question.answer) in message


def _names(text: str, value: object, question: Question, strict: bool = True) -> bool:
    # Does `text` name `value`? A tuple in any spacing; a whole-number token unless the
    # question itself names that number (an axis, a walk step, an index) or `strict` is
    # off, where only a statement of it as a result (`is 0`, `stride 0`, `0 cells`) counts.
    if isinstance(value, bool):
        return str(value) in text
    if isinstance(value, tuple):
        inner = r"\s*,\s*".join(rf"(?<![\d-]){v}(?!\d)" for v in value)
        return re.search(rf"[(\[]\s*{inner}\s*,?\s*[)\]]|{inner}", text) is not None
    token = rf"(?<![\w.-]){value}(?![\d.]|\w)" if value >= 0 else rf"(?<![\w.]){value}(?!\d)"
    named = {question.axis, question.after, question.position, *(question.index or ())}
    if question.after is not None:  # named as the odometer counts: "element after+1"
        named.add(question.after + 1)
    if strict and value not in named | set(range(8)):
        return re.search(token, text) is not None
    # Stated as a result, not as the first term of an expression to work out.
    result = rf"{token}(?!\s*[-+*/]\s*[\d(])"
    lead = r"(?:=|\bis|\bstride|\boffset|\bposition)[\s`(]*"
    stated = rf"{lead}{result}|{token}\s+(?:cells?|elements?)"
    return re.search(stated, text) is not None


@pytest.mark.parametrize(("lesson", "index", "step"), QUESTIONS)
def test_a_wrong_answer_gets_a_hint_and_never_the_right_value(
    lesson: Lesson, index: int, step: Step
) -> None:
    question = step.question
    layout = step_layout(step)
    for wrong in _wrong_values(question.answer):
        typed = format_answer(wrong) if not isinstance(wrong, bool) else str(wrong)
        verdict = grade(question, layout, typed)
        assert not verdict.correct and verdict.readable and not verdict.revealed
        assert verdict.hint
        assert verdict.message == f"Not quite: you said {format_answer(wrong)}. {verdict.hint}"
        assert verdict.hint == lessons.hint(question, layout, typed)
        assert verdict.expected is None and verdict.worked == ""
        if not isinstance(question.answer, bool):  # a yes/no answer is the other word
            assert not _names(verdict.hint, question.answer, question), verdict.message
        assert question.why not in verdict.message


@pytest.mark.parametrize(("lesson", "index", "step"), QUESTIONS)
def test_show_me_reveals_the_answer_its_reason_and_the_working(
    lesson: Lesson, index: int, step: Step
) -> None:
    question = step.question
    verdict = lessons.show_me(question, step_layout(step))
    assert verdict.revealed and verdict.readable and not verdict.correct
    assert verdict.expected == question.answer
    assert f"is {format_answer(question.answer)}" in verdict.message
    assert question.why in verdict.message
    assert format_answer(question.answer) in verdict.worked


@pytest.mark.parametrize(("lesson", "index", "step"), QUESTIONS)
def test_the_worked_reason_ends_at_the_answer(lesson: Lesson, index: int, step: Step) -> None:
    question = step.question
    layout = step_layout(step)
    right = grade(question, layout, format_answer(question.answer))
    assert right.correct and right.worked == lessons.explain(question, layout)
    assert format_answer(question.answer) in right.worked


@pytest.mark.parametrize(
    ("question", "layout", "typed", "noticed"),
    [
        # A stride of another axis, or the walk's jump instead of the stride.
        (Question("stride", "p", 1, "w", axis=0), Layout((3, 4)).transpose(), "4", "is stride[1]"),
        (Question("stride", "p", 1, "w", axis=0), Layout((3, 4)).transpose(), "-7", "jump"),
        # The plain stride where the jump is asked.
        (Question("adj_stride", "p", -7, "w", axis=0), Layout((3, 4)).transpose(), "1", "plain"),
        # Elements where bytes are asked.
        (
            Question("stride_bytes", "p", 16, "w", axis=0, dtype="float32"),
            Layout((3, 4)),
            "4",
            "counts elements",
        ),
        # Added the stride where the walk adds adj_stride.
        (Question("next_position", "p", 2, "w", after=5), Layout((3, 4)).transpose(), "10", "jump"),
        # A shape of the right length with one entry off, or of the wrong length.
        (
            Question("shape", "p", (4, 3), "w"),
            Layout((3, 4)).transpose(),
            "(4, 4)",
            "entry 1 is off",
        ),
        (Question("shape", "p", (4, 3), "w"), Layout((3, 4)).transpose(), "4 3 1", "3 entries"),
        # Where the last element sits, for the offset.
        (Question("offset", "p", 7, "w"), Layout((8,)).slice(candela.s[::-1]), "0", "last element"),
        # The row-major position where the layout's own strides apply.
        (
            Question("flat_index", "p", 6, "w", index=(2, 1)),
            Layout((3, 4)).transpose(),
            "7",
            "fresh row-major",
        ),
    ],
)
def test_a_hint_says_what_the_typed_value_is_and_how_to_find_the_answer(
    question: Question, layout: Layout, typed: str, noticed: str
) -> None:
    advice = lessons.hint(question, layout, typed)
    assert noticed in advice
    assert not _names(advice, expected_answer(question, layout), question), advice


def test_a_right_answer_has_no_hint_and_text_that_is_not_an_answer_says_what_to_type() -> None:
    question = Question("adj_stride", "p", -7, "w", axis=0)
    assert lessons.hint(question, TRANSPOSED, "-7") == ""
    assert lessons.hint(question, TRANSPOSED, "seven").startswith("Could not read")
    assert grade(question, TRANSPOSED, "seven").hint == ""


# --------------------------------------------------------------------------- predict, then reveal


def _shown_before_answering(lesson: Lesson, step: Step) -> str:
    prompt = step.question.prompt if step.question else ""
    prompt += step.challenge.prompt if step.challenge else ""
    return "\n".join((lesson.title, step.text, prompt))


@pytest.mark.parametrize(("lesson", "index", "step"), QUESTIONS)
def test_no_step_shows_its_answer_before_it_is_asked(
    lesson: Lesson, index: int, step: Step
) -> None:
    # The title, the text and the prompt are on screen before the answer; `why` and
    # `reveal` come after it. The answer computed by candela must not be in the former:
    # a tuple in any spacing, a number stated as a result, the tuple a stride or
    # adj_stride entry belongs to, or the two positions of a walk step and its successor.
    layout = step_layout(step)
    question = step.question
    shown = _shown_before_answering(lesson, step)
    answer = expected_answer(question, layout)
    assert lessons.give_aways(step, layout, lesson.title) == []
    if not isinstance(answer, bool):
        assert not _names(shown, answer, question, strict=False)
    if question.ask in ("stride", "adj_stride") and layout.rank > 1:
        whole = layout.stride if question.ask == "stride" else layout.adj_stride
        assert not _names(shown, tuple(whole), question)


@pytest.mark.parametrize(
    ("text", "question", "answer_layout"),
    [
        # The transpose lesson's old first step: the stride asked for, in the text.
        (
            "stride `(4, 1)` becomes `(1, 4)`.",
            Question("stride", "p", 1, "w", axis=0),
            Layout((3, 4)).transpose(),
        ),
        (
            "the strides are (1,4)",
            Question("stride", "p", 1, "w", axis=0),
            Layout((3, 4)).transpose(),
        ),
        (
            "adj_stride = [-7, 4]",
            Question("adj_stride", "p", -7, "w", axis=0),
            Layout((3, 4)).transpose(),
        ),
        (
            "adj_stride[0] is `-7`.",
            Question("adj_stride", "p", -7, "w", axis=0),
            Layout((3, 4)).transpose(),
        ),
        (
            "it gets **stride 0**",
            Question("stride", "p", 0, "w", axis=0),
            Layout((4,)).broadcast((3, 4)),
        ),
        ("these 8 elements", Question("len", "p", 8, "w"), Layout((2, 2, 2))),
        (
            "the walk reads 0, 4, 8, 1, 5",
            Question("next_position", "p", 1, "w", after=2),
            Layout((3, 4)).transpose(),
        ),
        ("shape `(4, 3)`", Question("shape", "p", (4, 3), "w"), Layout((3, 4)).transpose()),
        (
            "starting at offset 6",
            Question("offset", "p", 6, "w"),
            Layout((4, 5)).slice(candela.s[1:3, 1:4]),
        ),
    ],
)
def test_give_aways_catch_an_answer_written_before_the_question(
    text: str, question: Question, answer_layout: Layout
) -> None:
    step = Step(shape=(1,), ops="", text=text, question=question)
    assert lessons.give_aways(step, answer_layout)


@pytest.mark.parametrize(
    ("text", "question"),
    [
        # The exercise itself: the expression to work out, not its value.
        ("Work out adj_stride[0] = 1 - 4*(3-1).", Question("adj_stride", "p", -7, "w", axis=0)),
        ("What is adj_stride[1] now?", Question("adj_stride", "p", 1, "w", axis=0)),
        ("Along a row it adds adj_stride[1] = 4.", Question("adj_stride", "p", -7, "w", axis=0)),
        ("One step skips 4 cells.", Question("stride", "p", 1, "w", axis=0)),
    ],
)
def test_give_aways_let_the_exercise_through(text: str, question: Question) -> None:
    step = Step(shape=(1,), ops="", text=text, question=question)
    assert lessons.give_aways(step, TRANSPOSED) == []


@pytest.mark.parametrize(
    ("question", "typed"),
    [
        (INT_QUESTION, "abc"),
        (INT_QUESTION, ""),
        (INT_QUESTION, "-7.0"),
        (INT_QUESTION, "1-8"),
        (INT_QUESTION, "(-7,)"),
        (INT_QUESTION, "__import__('os').system('true')"),
        (INT_QUESTION, "9" * 400),
        (SHAPE_QUESTION, "(4, three)"),
        (SHAPE_QUESTION, "[4, 3"),
        (SHAPE_QUESTION, "()"),
        (SHAPE_QUESTION, "2*2, 3"),
        (BOOL_QUESTION, "maybe"),
    ],
)
def test_text_that_is_not_an_answer_is_unreadable_and_says_what_to_type(
    question: Question, typed: str
) -> None:
    verdict = grade(question, TRANSPOSED, typed)
    assert not verdict.correct and not verdict.readable
    assert verdict.message.startswith("Could not read")
    assert "type" in verdict.message
    with pytest.raises(ValueError):
        parse_typed(question, typed)


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_any_whole_number_reads_back_as_itself(value: int) -> None:
    assert parse_typed(INT_QUESTION, str(value)) == value
    assert parse_typed(INT_QUESTION, f"  {value}  ") == value


@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=8).map(tuple))
def test_any_shape_reads_back_from_its_repr_and_its_bare_list(value: tuple[int, ...]) -> None:
    assert parse_typed(SHAPE_QUESTION, repr(value)) == value
    assert parse_typed(SHAPE_QUESTION, " ".join(map(str, value))) == value
    assert parse_typed(SHAPE_QUESTION, str(list(value))) == value


def test_answers_are_graded_against_candela_not_the_stored_answer() -> None:
    # A question whose stored answer is wrong still grades the truth.
    lying = Question(ask="adj_stride", axis=0, prompt="p", answer=99, why="w")
    assert check_answer(lying, TRANSPOSED, "-7")[0]
    assert not check_answer(lying, TRANSPOSED, "99")[0]


def test_questions_about_an_axis_or_step_the_layout_lacks_raise_index_error() -> None:
    for question in (
        Question(ask="stride", axis=2, prompt="p", answer=1, why="w"),
        Question(ask="next_position", after=11, prompt="p", answer=1, why="w"),
    ):
        with pytest.raises(IndexError):
            expected_answer(question, TRANSPOSED)


def test_negative_axes_count_from_the_end() -> None:
    last = Question(ask="stride", axis=-1, prompt="p", answer=4, why="w")
    assert expected_answer(last, TRANSPOSED) == TRANSPOSED.stride[1]
    assert "stride[1]" in check_answer(last, TRANSPOSED, "4")[1]


def test_the_package_is_pure() -> None:
    files = sorted(Path(lessons.__file__).parent.glob("*.py"))
    assert len(files) >= 4  # the package, its files, grading, challenges, ...
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in (
                node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
            )
        }
        assert not imported & {"panel", "bokeh", "param"}, path.name


# --------------------------------------------------------------------------- malformed files


def _valid() -> dict:
    return {
        "id": "demo",
        "title": "Demo",
        "summary": "A lesson for the tests.",
        "steps": [
            {
                "shape": [3, 4],
                "ops": ".transpose()",
                "text": "Transposed.",
                "question": {"ask": "stride", "axis": 0, "prompt": "p", "answer": 1, "why": "w"},
            }
        ],
    }


def _write(folder: Path, data: object, name: str = "01-demo.json") -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_a_valid_file_loads(tmp_path: Path) -> None:
    lesson = load_lesson_file(_write(tmp_path, _valid()))
    assert lesson.id == "demo" and lesson.steps[0].question.answer == 1
    assert load_lesson("demo", tmp_path) == lesson
    assert list_lessons(tmp_path) == [lesson]


def _step(data: dict) -> dict:
    return data["steps"][0]


def _question(data: dict) -> dict:
    return data["steps"][0]["question"]


MUTATIONS = [
    ("missing title", lambda d: d.pop("title"), "title", "required"),
    ("empty steps", lambda d: d.update(steps=[]), "steps", "non-empty"),
    ("step not an object", lambda d: d.update(steps=[3]), "steps[0]", "JSON object"),
    ("unknown top field", lambda d: d.update(lesson=1), "lesson", "unknown field"),
    ("bad id", lambda d: d.update(id="Demo Lesson"), "id", "lowercase"),
    ("negative size", lambda d: _step(d).update(shape=[3, -4]), "steps[0].shape", "at least 1"),
    ("float size", lambda d: _step(d).update(shape=[3, 4.0]), "steps[0].shape", "whole numbers"),
    ("rank 0", lambda d: _step(d).update(shape=[]), "steps[0].shape", "rank"),
    ("rank 9", lambda d: _step(d).update(shape=[1] * 9), "steps[0].shape", "rank"),
    ("too big", lambda d: _step(d).update(shape=[100, 100]), "steps[0].shape", "at most"),
    ("ops not text", lambda d: _step(d).update(ops=None), "steps[0].ops", "pipeline string"),
    ("no text", lambda d: _step(d).pop("text"), "steps[0].text", "required"),
    ("typo in a step", lambda d: _step(d).update(qustion={}), "steps[0].qustion", "unknown field"),
    (
        "unknown ask",
        lambda d: _question(d).update(ask="strides"),
        "steps[0].question.ask",
        "not one of",
    ),
    ("axis missing", lambda d: _question(d).pop("axis"), "steps[0].question.axis", "required"),
    (
        "axis not int",
        lambda d: _question(d).update(axis="0"),
        "steps[0].question.axis",
        "whole number",
    ),
    (
        "extra field for the ask",
        lambda d: _question(d).update(ask="offset", axis=0),
        "steps[0].question.axis",
        "does not apply",
    ),
    (
        "unknown dtype",
        lambda d: _question(d).update(ask="stride_bytes", dtype="float128"),
        "steps[0].question.dtype",
        "not one of",
    ),
    (
        "negative walk step",
        lambda d: (
            _question(d).update(ask="next_position", axis=None, after=-1)
            or _question(d).pop("axis")
        ),
        "steps[0].question.after",
        "0 or more",
    ),
    ("no answer", lambda d: _question(d).pop("answer"), "steps[0].question.answer", "required"),
    (
        "tuple for an int",
        lambda d: _question(d).update(answer=[1]),
        "steps[0].question.answer",
        "whole number",
    ),
    (
        "bool for an int",
        lambda d: _question(d).update(answer=True),
        "steps[0].question.answer",
        "whole number",
    ),
    (
        "int for a shape",
        lambda d: _question(d).update(ask="shape", answer=4) or _question(d).pop("axis"),
        "steps[0].question.answer",
        "list of whole numbers",
    ),
    ("no why", lambda d: _question(d).update(why=""), "steps[0].question.why", "required"),
    (
        "unknown error",
        lambda d: _step(d).update(expect_error="KeyError") or _step(d).pop("question"),
        "steps[0].expect_error",
        "not a candela error",
    ),
    (
        "question on an error step",
        lambda d: _step(d).update(expect_error="NonContiguousView"),
        "steps[0].question",
        "expects an error",
    ),
    ("id differs from the file name", lambda d: d.update(id="other"), "id", "file name"),
    (
        "index not a list",
        lambda d: _question(d).update(ask="flat_index", index=3) or _question(d).pop("axis"),
        "steps[0].question.index",
        "list of whole numbers",
    ),
    (
        "index missing",
        lambda d: _question(d).update(ask="flat_index") or _question(d).pop("axis"),
        "steps[0].question.index",
        "required",
    ),
    ("empty reveal", lambda d: _step(d).update(reveal=""), "steps[0].reveal", "required"),
    (
        "reveal on a step that asks nothing",
        lambda d: _step(d).update(reveal="r") or _step(d).pop("question"),
        "steps[0].reveal",
        "asks nothing",
    ),
    (
        "challenge beside a question",
        lambda d: _step(d).update(challenge=_challenge()),
        "steps[0].challenge",
        "no question",
    ),
    (
        "challenge without a target",
        lambda d: _challenge_step(d, target=None),
        "steps[0].challenge.target",
        "JSON object",
    ),
    (
        "empty target",
        lambda d: _challenge_step(d, target={}),
        "steps[0].challenge.target",
        "at least one of",
    ),
    (
        "unknown target field",
        lambda d: _challenge_step(d, target={"strides": [1, 4]}),
        "steps[0].challenge.target.strides",
        "unknown field",
    ),
    (
        "stride without a shape",
        lambda d: _challenge_step(d, target={"stride": [1, 4]}),
        "steps[0].challenge.target.stride",
        "shape of the same length",
    ),
    (
        "negative target offset",
        lambda d: _challenge_step(d, target={"offset": -1}),
        "steps[0].challenge.target.offset",
        ">= 0",
    ),
    (
        "positions that do not fill the shape",
        lambda d: _challenge_step(d, target={"shape": [2, 2], "positions": [0, 1, 2]}),
        "steps[0].challenge.target.positions",
        "4 elements",
    ),
    (
        "challenge without a solution",
        lambda d: _challenge_step(d, solution=""),
        "steps[0].challenge.solution",
        "required",
    ),
    # What a step counts in, and a question about the cost that needs it.
    (
        "step unit not a dtype",
        lambda d: _step(d).update(unit="floats"),
        "steps[0].unit",
        "not one of",
    ),  # fmt: skip
    (
        "step cost not a unit size",
        lambda d: _step(d).update(cost=48),
        "steps[0].cost",
        "not one of 32, 64, 128",
    ),  # fmt: skip
    ("step warp a string", lambda d: _step(d).update(warp="32"), "steps[0].warp", "not one of"),
    (
        "cost question without a dtype",
        lambda d: _question(d).update(ask="units") or _question(d).pop("axis"),
        "steps[0].unit",
        "required when the question asks 'units'",
    ),
    (
        "requests without a warp",
        lambda d: (
            _question(d).update(ask="units_per_request"),
            _question(d).pop("axis"),
            _step(d).update(unit="float32"),
        ),  # fmt: skip
        "steps[0].warp",
        "required",
    ),
    (
        "dtype on a cost question",
        lambda d: (
            _question(d).update(ask="units", dtype="float32"),
            _question(d).pop("axis"),
            _step(d).update(unit="float32"),
        ),  # fmt: skip
        "steps[0].question.dtype",
        "does not apply",
    ),
]


def _challenge(**changes) -> dict:
    data = {
        "prompt": "Read the columns.",
        "target": {"shape": [4, 3], "stride": [1, 4], "offset": 0},
        "solution": ".transpose()",
        "why": "w",
    }
    data.update(changes)
    return data


def _challenge_step(data: dict, **changes) -> None:
    step = _step(data)
    step.pop("question")
    step["ops"] = ""
    step["challenge"] = _challenge(**changes)


@pytest.mark.parametrize(
    ("mutate", "field", "reason"), [m[1:] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS]
)
def test_a_malformed_lesson_is_refused_naming_file_field_and_reason(
    tmp_path: Path, mutate, field: str, reason: str
) -> None:
    data = _valid()
    mutate(data)
    with pytest.raises(LessonError) as caught:
        load_lesson_file(_write(tmp_path, data))
    message = str(caught.value)
    assert message.startswith("01-demo.json: ")
    assert caught.value.where == field
    assert f": {field}: " in message
    assert reason in message


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("01-demo.json", "{not json", "not valid JSON"),
        ("01-demo.json", "[1, 2]", "JSON object"),
        ("demo.json", json.dumps(_valid()), "NN-<id>.json"),
        ("01-Demo.json", json.dumps(_valid()), "NN-<id>.json"),
    ],
)
def test_a_file_that_is_not_a_lesson_is_refused(
    tmp_path: Path, name: str, text: str, reason: str
) -> None:
    with pytest.raises(LessonError) as caught:
        load_lesson_file(_write(tmp_path, text, name))
    assert str(caught.value).startswith(name)
    assert reason in str(caught.value)


def test_list_lessons_refuses_a_folder_with_a_bad_file(tmp_path: Path) -> None:
    _write(tmp_path, _valid())
    _write(tmp_path, "{", "02-broken.json")
    with pytest.raises(LessonError, match="02-broken.json"):
        list_lessons(tmp_path)


def _lesson_with(step: dict) -> Lesson:
    data = _valid()
    data["steps"] = [step]
    return lessons.parse_lesson(data, "01-demo.json")


def test_verify_lesson_catches_a_wrong_number() -> None:
    lesson = _lesson_with(
        {
            "shape": [3, 4],
            "ops": ".transpose()",
            "text": "t",
            "question": {"ask": "adj_stride", "axis": 0, "prompt": "p", "answer": 7, "why": "w"},
        }
    )
    (problem,) = verify_lesson(lesson)
    assert "01-demo.json: steps[0].question" in problem
    assert "stored answer 7" in problem and "computes -7" in problem


def test_verify_lesson_catches_an_error_that_does_not_happen_or_is_the_wrong_one() -> None:
    ran = _lesson_with(
        {"shape": [3, 4], "ops": ".view((12,))", "text": "t", "expect_error": "NonContiguousView"}
    )
    assert "should raise NonContiguousView but ran" in verify_lesson(ran)[0]
    other = _lesson_with(
        {"shape": [3, 4], "ops": ".view((5, 2))", "text": "t", "expect_error": "NonContiguousView"}
    )
    assert "raised InvalidViewShape" in verify_lesson(other)[0]


def test_verify_lesson_catches_a_pipeline_that_does_not_parse_or_run() -> None:
    bad = _lesson_with({"shape": [3, 4], "ops": ".frobnicate()", "text": "t"})
    assert "frobnicate" in verify_lesson(bad)[0]
    rejected = _lesson_with({"shape": [3, 4], "ops": ".transpose().view((12,))", "text": "t"})
    assert "NonContiguousView" in verify_lesson(rejected)[0]


def test_verify_lesson_catches_a_question_about_an_axis_the_layout_lacks() -> None:
    lesson = _lesson_with(
        {
            "shape": [3, 4],
            "ops": "",
            "text": "t",
            "question": {"ask": "stride", "axis": 2, "prompt": "p", "answer": 1, "why": "w"},
        }
    )
    assert "cannot be asked" in verify_lesson(lesson)[0]


def test_the_lessons_folder_can_be_pointed_elsewhere(tmp_path: Path, monkeypatch) -> None:
    _write(tmp_path, _valid())
    monkeypatch.setenv("CANDELA_LESSONS", str(tmp_path))
    assert lessons.lessons_dir() == tmp_path
    assert [lesson.id for lesson in list_lessons()] == ["demo"]


def test_the_lessons_folder_is_the_repositorys_assets_by_default(monkeypatch) -> None:
    monkeypatch.delenv("CANDELA_LESSONS", raising=False)
    assert (
        lessons.lessons_dir() == Path(lessons.__file__).resolve().parents[2] / "assets" / "lessons"
    )


# --------------------------------------------------------------------------- challenges


def test_there_are_at_least_five_challenges_in_a_lesson_of_their_own() -> None:
    lesson = load_lesson("challenges")  # other lessons may end on a challenge of their own
    assert len(lesson.steps) >= 5
    assert all(step.challenge is not None for step in lesson.steps)


@pytest.mark.parametrize(("lesson", "index", "step"), CHALLENGES)
def test_each_challenges_reference_solution_reaches_its_target(
    lesson: Lesson, index: int, step: Step
) -> None:
    challenge = step.challenge
    verdict = lessons.grade_challenge(step, challenge.solution)
    assert verdict.correct and verdict.readable, verdict.message
    assert verdict.message.startswith("Right") and challenge.why in verdict.message
    # ... and the target is not where the challenge starts.
    assert not lessons.grade_challenge(step, "").correct
    shown = lessons.show_solution(step)
    assert shown.revealed and challenge.solution in shown.message


@pytest.mark.parametrize(("lesson", "index", "step"), CHALLENGES)
def test_no_challenge_shows_its_solution_before_it_is_tried(
    lesson: Lesson, index: int, step: Step
) -> None:
    assert step.challenge.solution not in _shown_before_answering(lesson, step)
    assert lessons.give_aways(step, step_layout(step), lesson.title) == []


def _challenge_step_of(position: int) -> Step:
    return load_lesson("challenges").steps[position]


# Other chains that reach the same targets: the layout is graded, not the text.
ALTERNATIVES = [
    (0, ".transpose(1, 0)"),
    (0, ".swapaxes(0, 1)"),
    (0, ".transpose_axes((1, 0))"),
    (0, ".transpose().transpose().transpose()"),
    (1, ".slice(s[7::-1])"),
    (2, ".narrow(0, 1, 2).slice(s[:, 1::2])"),
    (3, ".broadcast((2, 3)).transpose()"),
    (4, ".narrow(2, 3, 1).slice(s[:, ::-1])"),
    (5, ".slice(s[:, :, ::2]).transpose_axes((1, 2, 0))"),
    (5, ".rotate_axis_innermost(0).slice(s[:, ::2])"),
    (6, ".view((16,)).slice(s[0:16:5])"),
    (6, "  .view( (16,) )\n  .slice( s[ : : 5 ] )  "),
]


@pytest.mark.parametrize(("position", "typed"), ALTERNATIVES)
def test_any_pipeline_that_reaches_the_target_passes(position: int, typed: str) -> None:
    step = _challenge_step_of(position)
    verdict = lessons.grade_challenge(step, typed)
    assert verdict.correct, verdict.message


def test_at_least_two_challenges_have_a_second_different_solution() -> None:
    differing = {
        position
        for position, typed in ALTERNATIVES
        if pipeline.parse(typed) != pipeline.parse(_challenge_step_of(position).challenge.solution)
    }
    assert len(differing) >= 2


WRONG_PIPELINES = [
    # The shape differs.
    (0, ".transpose().transpose()", "gives shape (3, 4), but the target's shape is (4, 3)"),
    # Same shape, other strides.
    (0, ".view((4, 3))", "has the target's shape but stride (3, 1), not (1, 4)"),
    # Same shape, but the walk starts elsewhere.
    (1, ".slice(s[::1])", "starts its walk at 0, but the target's walk starts at 7"),
    # Same shape, the walk agrees for a while and then leaves the target's.
    (
        6,
        ".view((16,)).slice(s[::4])",
        "follows the target's walk for its first cell, then visits 4 where the target visits 5",
    ),
    (
        5,
        ".slice(s[:, :, ::2]).transpose_axes((1, 0, 2))",
        "then visits 2 where the target visits 12",
    ),
    # candela refuses a step: its own words, naming the step.
    (0, ".transpose().view((12,))", "step 2 `.view((12,))`: cannot view"),
    # A copy is a different buffer.
    (0, ".as_contiguous().transpose()", "copies the elements into a new buffer"),
]


@pytest.mark.parametrize(("position", "typed", "says"), WRONG_PIPELINES)
def test_a_wrong_pipeline_fails_saying_what_differs(position: int, typed: str, says: str) -> None:
    step = _challenge_step_of(position)
    verdict = lessons.grade_challenge(step, typed)
    assert not verdict.correct and verdict.readable
    assert verdict.message.startswith("Not quite: ")
    assert says in verdict.message, verdict.message
    assert verdict.hint
    if step.challenge.solution not in typed:
        assert step.challenge.solution not in verdict.message


def test_the_difference_names_the_offset_when_only_the_offset_differs() -> None:
    target = lessons.Target(shape=(2,), stride=(1,), offset=1)
    assert challenges._difference(target, Layout((4,)).slice(candela.s[0:2])) == (
        "starts at offset 0, but the target starts at offset 1"
    )
    assert challenges._difference(target, Layout((4,)).slice(candela.s[1:3])) == ""


HOSTILE = [
    "__import__('os').system('touch {marker}')",
    ".transpose() if open('{marker}', 'w') else 0",
    ".transpose(); open('{marker}', 'w')",
    ".slice(s[open('{marker}', 'w')])",
    ".view((open('{marker}', 'w'),))",
    ".__class__.__init__.__globals__['os'].system('touch {marker}')",
    ".transpose(__import__('os').system('touch {marker}'), 0)",
    "lambda: open('{marker}', 'w')",
    ".transpose()\nimport os; os.system('touch {marker}')",
    "eval(\"open('{marker}', 'w')\")",
    ".transpose(x=open('{marker}', 'w'))",
    ".transpose()[open('{marker}', 'w')]",
    "." + "transpose()." * 400 + "transpose()",
    "(" * 500 + ")" * 500,
    "",
    "   ",
]


@pytest.mark.parametrize("typed", HOSTILE)
def test_hostile_text_is_refused_with_a_message_and_never_run(tmp_path: Path, typed: str) -> None:
    marker = tmp_path / "ran"
    text = typed.format(marker=marker)
    step = _challenge_step_of(0)
    verdict = lessons.grade_challenge(step, text)
    assert not verdict.correct and not verdict.readable
    assert "Type a chain of operations" in verdict.message
    assert not marker.exists()


def test_a_challenge_verdict_reads_a_typographic_minus() -> None:
    assert lessons.grade_challenge(_challenge_step_of(1), ".slice(s[::\u22121])").correct


def test_describe_target_says_what_to_reach() -> None:
    step = _challenge_step_of(1)
    assert lessons.describe_target(step.challenge.target) == (
        "shape (8,); the walk visits 7, 6, 5, 4, 3, 2, 1, 0"
    )
    long = lessons.Target(positions=tuple(range(30)))
    assert lessons.describe_target(long, limit=3) == "the walk visits 0, 1, 2, ... (30 in all)"


def _challenge_lesson(**changes) -> Lesson:
    data = _valid()
    data["steps"] = [{"shape": [3, 4], "ops": "", "text": "t", "challenge": _challenge(**changes)}]
    return lessons.parse_lesson(data, "01-demo.json")


def test_verify_lesson_catches_a_wrong_solution_and_a_target_already_reached() -> None:
    assert verify_lesson(_challenge_lesson()) == []
    (wrong,) = verify_lesson(_challenge_lesson(solution=".transpose().transpose()"))
    assert "steps[0].challenge.solution: does not reach the target" in wrong
    (trivial,) = verify_lesson(
        _challenge_lesson(target={"shape": [3, 4], "stride": [4, 1]}, solution=".view((3, 4))")
    )
    assert "steps[0].challenge.target: the start already is the target" in trivial
    (shown,) = verify_lesson(_challenge_lesson(prompt="Type .transpose() here."))
    assert "shows the reference solution" in shown


def test_verify_lesson_catches_an_answer_shown_before_it_is_asked() -> None:
    lesson = _lesson_with(
        {
            "shape": [3, 4],
            "ops": ".transpose()",
            "text": "stride `(4, 1)` becomes `(1, 4)`",
            "reveal": "said after",
            "question": {"ask": "stride", "axis": 0, "prompt": "p", "answer": 1, "why": "w"},
        }
    )
    (problem,) = [p for p in verify_lesson(lesson) if "(1, 4)" in p]
    assert "01-demo.json: steps[0]: shows the answer" in problem
    moved = _lesson_with(
        {
            "shape": [3, 4],
            "ops": ".transpose()",
            "text": "What happens to the strides?",
            "reveal": "stride `(4, 1)` becomes `(1, 4)`",
            "question": {"ask": "stride", "axis": 0, "prompt": "p", "answer": 1, "why": "w"},
        }
    )
    assert verify_lesson(moved) == []
    assert moved.steps[0].reveal == "stride `(4, 1)` becomes `(1, 4)`"


def test_a_cost_question_counts_with_its_steps_unit_memory_unit_and_warp(tmp_path) -> None:
    data = _valid()
    step = _step(data)
    step.update(unit="float64", cost=32, warp=32)
    step["question"] = {"ask": "units_per_request", "prompt": "p", "answer": 3, "why": "w"}
    lesson = load_lesson_file(_write(tmp_path, data))
    q = lesson.steps[0].question
    assert (q.dtype, q.unit_bytes, q.warp) == ("float64", 32, 32)
    # (4, 3) strides (1, 4): the walk's 12 float64 elements lie in three 32-byte sectors,
    # and the one request (12 < 32) touches all three.
    layout = step_layout(lesson.steps[0])
    assert expected_answer(q, layout) == layout.cost(8, unit=32, warp=32).units_per_request == 3
    assert verify_lesson(lesson) == []
    step["question"]["answer"] = 12
    wrong = load_lesson_file(_write(tmp_path, data))
    assert "candela computes 3" in " ".join(verify_lesson(wrong))


def test_a_lesson_without_the_new_fields_still_loads(tmp_path: Path) -> None:
    lesson = load_lesson_file(_write(tmp_path, _valid()))
    assert lesson.steps[0].reveal == "" and lesson.steps[0].challenge is None


@pytest.mark.parametrize(("lesson", "index", "step"), QUESTIONS)
def test_in_a_byte_unit_an_answer_is_right_in_bytes_or_elements_and_a_hint_shows_neither(
    lesson: Lesson, index: int, step: Step
) -> None:
    question = step.question
    layout = step_layout(step)
    accepted = lessons.accepted_answers(question, layout, "float32")
    in_unit = question.ask in lessons.IN_UNIT
    assert accepted == ((question.answer * 4, question.answer) if in_unit else (question.answer,))
    for value in accepted:
        assert grade(question, layout, format_answer(value), "float32").correct
    shown = lessons.show_me(question, layout, "float32")
    assert shown.expected == accepted[0]
    assert f"is {format_answer(accepted[0])}" in shown.message
    if in_unit:
        assert f"{accepted[0]} bytes of float32" in shown.worked
    if isinstance(question.answer, bool):
        return
    for wrong in _wrong_values(question.answer):
        if wrong in accepted or (in_unit and wrong * 4 in accepted):
            continue
        verdict = grade(question, layout, format_answer(wrong), "float32")
        assert not verdict.correct and verdict.expected is None and verdict.worked == ""
        for value in accepted:
            assert not _names(verdict.hint, value, question, strict=False), verdict.hint


WALK_QUESTIONS = [p for p in QUESTIONS if p.values[2].question.ask == "next_position"]


@pytest.mark.parametrize(("lesson", "index", "step"), WALK_QUESTIONS)
def test_a_walk_question_counts_elements_as_the_odometer_does(
    lesson: Lesson, index: int, step: Step
) -> None:
    # The odometer shows frame k as "element k+1 of n"; a question about the walk names
    # the element it starts from the same way, and that element reads the position named.
    question = step.question
    layout = step_layout(step)
    words = explain(question, layout)
    found = re.search(r"element (\d+) of (\d+) reads position (-?\d+)", words)
    assert found, words
    number, total, here = map(int, found.groups())
    assert total == layout.len
    assert int(layout.positions()[number - 1]) == here
    assert f"after element {number} of the walk" in describe(question, layout)
    for text in (step.text, question.prompt or ""):
        for named in re.findall(r"(?i)element (\d+) of the walk", text):
            assert int(named) == number, text
        assert not re.search(r"(?i)walk step \d", text), text
