"""The lesson linter: every shipped lesson passes it, and it catches each kind of give-away.

Each bad lesson below is made by hand to show one leak a student could use, found in
the shipped lessons once (issue #36): the linter must fail on it, so it can fail.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.lessons import lesson_files, load_lesson_file, parse_lesson, step_layout
from explorer.lessons.lint import decided, lint_lesson, main, shown_while_waiting

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("path", lesson_files(), ids=lambda p: p.name)
def test_every_shipped_lesson_passes_the_linter(path: Path) -> None:
    assert [str(p) for p in lint_lesson(load_lesson_file(path))] == []


def lesson(*steps: dict) -> object:
    return parse_lesson(
        {"id": "bad", "title": "A bad lesson", "summary": "s", "steps": list(steps)}
    )


def step(shape, ops, text="Look.", question=None, **more) -> dict:
    out = {"shape": shape, "ops": ops, "text": text, **more}
    if question is not None:
        out["question"] = {"prompt": "What is it?", "why": "Because.", **question}
    return out


def kinds(bad) -> set[tuple[int, str]]:
    return {(p.step, p.kind) for p in lint_lesson(bad)}


T = ".transpose()"


def test_a_text_that_states_its_answer_fails() -> None:
    bad = lesson(
        step([3, 4], "", "The strides are (4, 1).", {"ask": "stride", "axis": 0, "answer": 4})
    )
    assert (1, "states") in kinds(bad)


CUT = ".slice(s[:, :, 0:2])"  # adj_stride (3, 3, 1)


@pytest.mark.parametrize(
    "shape, ops, text, axis, ask",
    [
        # channels-last step 2 said this while asking for the channel stride, 1.
        ([2, 2, 2, 3], ".permute(0, 3, 1, 2)", "NHWC keeps a pixel's channels side by side.", 1,
         {"ask": "stride"}),
        ([2, 3, 4], CUT, "Its elements sit back to back.", 2, {"ask": "adj_stride"}),
        ([2, 3, 4], CUT, "A packed layout has adj_stride all ones.", 2, {"ask": "adj_stride"}),
        ([3, 4], "", "Each float's bytes are adjacent.", 1, {"ask": "stride_bytes", "dtype": "float32"}),
        ([3, 4], ".broadcast_to((2, 3, 4))", "The new axis reads the same cell every time.", 0,
         {"ask": "stride"}),
    ],
)  # fmt: skip
def test_a_text_that_says_its_stride_in_words_fails(shape, ops, text, axis, ask) -> None:
    from explorer.lessons import expected_answer

    def one_step(axis):
        draft = lesson(step(shape, ops, text, {**ask, "axis": axis, "answer": 0}))
        answer = expected_answer(draft.steps[0].question, step_layout(draft.steps[0]))
        return lesson(step(shape, ops, text, {**ask, "axis": axis, "answer": answer}))

    bad = one_step(axis)
    assert bad.steps[0].question.answer in (0, 1, 4)  # one element apart, or none
    assert (1, "states") in kinds(bad)
    # The same words on a step whose answer they do not say are no give-away.
    fine = one_step(1 - axis if axis < 2 else 1)
    assert fine.steps[0].question.answer != bad.steps[0].question.answer
    assert (1, "states") not in kinds(fine)


def test_a_heading_that_shows_the_asked_shape_fails() -> None:
    # With no operation the grid drawn is the one asked about: its heading is the answer.
    bad = lesson(step([3, 4], "", question={"ask": "shape", "answer": [3, 4]}))
    assert (1, "picture") in kinds(bad)


def test_a_copy_named_packed_decides_the_answer_and_the_page_does_not_name_it() -> None:
    from explorer.columns import columns_for, withheld_columns
    from explorer.fields import headings_html
    from explorer.state import evaluate

    bad = lesson(
        step([3, 4], T + ".as_contiguous()", question={"ask": "is_contiguous", "answer": True})
    )
    shown = shown_while_waiting(bad, 0)
    layout = step_layout(bad.steps[0])
    assert decided(bad.steps[0].question, layout, shown) is None  # the page shows no copy
    named = dataclasses.replace(shown, copied=True)  # a heading "a new packed copy"
    assert decided(bad.steps[0].question, layout, named)[0] is True
    # ... and the page withholds both: the heading's word and the copy's values in order.
    result = evaluate((3, 4), T + ".as_contiguous()")
    cols = withheld_columns(columns_for(result.tensor), 0)
    assert "packed copy" not in headings_html((4, 3), 12, cols.buffer_cols, True, "asked")[1]
    assert "packed copy" in headings_html((4, 3), 12, cols.buffer_cols, True, "")[1]
    labels = zip(cols.buffer_labels["value_label"], cols.buffer_labels["pos_label"])
    assert all(
        v in ("", p) for v, p in labels
    )  # a cell says its value only where it is its position
    assert list(cols.buffer["value"]).count("") >= 10  # 0 and 11 stay where they were


def test_the_next_steps_text_that_states_this_answer_fails() -> None:
    bad = lesson(
        step([3, 4], T, question={"ask": "adj_stride", "axis": 0, "answer": -7}),
        step(
            [3, 4],
            T,
            "Forward by 4, then back by 7.",
            {"ask": "next_position", "after": 2, "answer": 1},
        ),
    )
    assert (1, "neighbour") in kinds(bad)


def test_the_next_steps_walk_that_starts_at_the_asked_offset_fails() -> None:
    ops = ".slice(s[1:3, 1:4])"
    bad = lesson(
        step([4, 5], ops, question={"ask": "offset", "answer": 6}),
        step([4, 5], ops, question={"ask": "stride", "axis": 0, "answer": 5}),
    )
    problems = [p for p in lint_lesson(bad) if p.step == 1 and p.kind == "neighbour"]
    assert problems and "position 6" in problems[0].message


def test_the_previous_steps_odometer_that_counts_the_asked_len_fails() -> None:
    ops = ".slice(s[:, 0:2, 0:2])"
    bad = lesson(
        step([2, 3, 4], ops, question={"ask": "next_position", "after": 3, "answer": 12}),
        step([2, 3, 4], ops, question={"ask": "len", "answer": 8}),
    )
    problems = [p for p in lint_lesson(bad) if p.step == 2 and p.kind == "neighbour"]
    assert problems and "of 8" in problems[0].message


def test_the_next_steps_heading_with_the_asked_shape_fails() -> None:
    ops = ".rotate_axis_innermost(0)"
    bad = lesson(
        step([2, 3, 4], ops, question={"ask": "shape", "answer": [3, 4, 2]}),
        step([2, 3, 4], ops, question={"ask": "next_position", "after": 0, "answer": 12}),
    )
    assert (1, "neighbour") in kinds(bad)


def test_a_next_step_that_asks_nothing_about_the_same_layout_fails() -> None:
    bad = lesson(
        step([3, 4], T, question={"ask": "is_contiguous", "answer": False}), step([3, 4], T)
    )
    assert (1, "neighbour") in kinds(bad)


def test_a_number_in_a_neighbour_about_another_layout_is_no_give_away() -> None:
    good = lesson(
        step([3, 4], "", question={"ask": "stride", "axis": 0, "answer": 4}),
        step(
            [2, 3, 4],
            "",
            "Its inner strides are 4 and 1.",
            {"ask": "stride", "axis": 0, "answer": 12},
        ),
    )
    assert kinds(good) == set()


@pytest.mark.parametrize(
    "text, question, more",
    [
        ("Hover it in the buffer lane.", {"ask": "offset", "answer": 0}, {}),
        ("Follow the walk.", {"ask": "is_contiguous", "answer": True}, {}),
        ("The right grid is a.", {"ask": "offset", "answer": 0}, {"compare": "[:]"}),
        ("The gaps are greyed.", {"ask": "offset", "answer": 0}, {}),
        ("The lane shows read counts.", {"ask": "offset", "answer": 0}, {}),
        ("Count the grid's rows.", {"ask": "shape", "answer": [4, 3]}, {}),
    ],
)
def test_a_text_that_points_at_something_withheld_fails(text, question, more) -> None:
    ops = T if question["ask"] == "shape" else ""
    bad = lesson(step([3, 4], ops, text, question, **more))
    assert (1, "withheld") in kinds(bad)
    # ... unless the sentence says it is about the page once answered.
    later = lesson(
        step([3, 4], ops, "Once you answer, " + text[0].lower() + text[1:], question, **more)
    )
    assert (1, "withheld") not in kinds(later)


def test_an_answer_left_as_the_one_cell_nothing_read_fails() -> None:
    # The last element of the walk: 23 of 24 drawn, each reading its own cell.
    bad = lesson(
        step(
            [2, 3, 4],
            ".permute(2, 1, 0)",
            question={"ask": "flat_index", "index": [3, 2, 1], "answer": 23},
        )
    )
    assert (1, "elimination") in kinds(bad)


def test_the_command_line_fails_on_a_bad_file_and_passes_the_shipped_ones(tmp_path, capsys) -> None:
    bad = {
        "id": "bad",
        "title": "Bad",
        "summary": "s",
        "steps": [
            step([3, 4], "", "The strides are (4, 1).", {"ask": "stride", "axis": 0, "answer": 4})
        ],
    }
    path = tmp_path / "01-bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    assert main([str(path)]) == 1
    assert "01-bad.json: step 1: states" in capsys.readouterr().out
    run = subprocess.run(
        [sys.executable, "-m", "explorer.lessons.lint"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_answer_boxes_hints_give_no_answer_away():
    # The empty answer box said "e.g. -7 or (4, 3)": the very answer of transpose step 2
    # (adj_stride[0]) and of every question about a transposed 3x4's shape; the challenge
    # box's "e.g. .transpose()" was a challenge's solution. A hint with no number and no
    # operation in it can state neither, for any lesson present or to come.
    import re

    from explorer import lessons as L

    assert not re.search(r"\d", L.ANSWER_HINT), L.ANSWER_HINT
    assert not re.search(r"\d|\.\w", L.PIPELINE_HINT), L.PIPELINE_HINT


def test_a_question_step_shows_the_hint_in_its_answer_box():
    from explorer import lessons as L
    from explorer.app import Explorer

    ex = Explorer()
    ex.param.update(lesson="transpose", step=2)
    assert ex.classroom.answer_input.placeholder == L.ANSWER_HINT
