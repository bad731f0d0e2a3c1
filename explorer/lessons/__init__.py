"""Lessons for the classroom: load them, validate them, and check a student's answers.

A lesson is a JSON file in ``assets/lessons/`` named ``NN-<id>.json``; the numeric
prefix orders the lessons and ``<id>`` is the lesson's ``id`` (the name used in
the app's URL). Each lesson is an ordered list of steps; a step is a shape, a
pipeline applied to ``Tensor.arange(shape)`` (so every value is its original
buffer position), a short teaching text, and optionally a predict-then-reveal
question, a challenge, or the name of the candela error the pipeline must raise.

The file format, exactly::

    {"id": "row-major", "title": "...", "summary": "...",
     "steps": [{"shape": [3, 4], "ops": ".transpose()", "text": "markdown",
                "reveal": "markdown shown only after the answer",
                "question": {"ask": "adj_stride", "axis": 0, "prompt": "...",
                             "answer": -7, "why": "..."},
                "challenge": {"prompt": "...", "why": "...",
                              "target": {"shape": [4, 3], "stride": [1, 4],
                                         "offset": 0, "positions": [0, 4, ...]},
                              "solution": ".transpose()"},
                "expect_error": "NonContiguousView",
                "unit": "float32", "cost": 64, "warp": 32}]}

``unit``, ``cost`` and ``warp`` are optional: what the page counts in on the
step, as the URL's keys (a dtype whose bytes the strides and the cost count;
bytes per memory unit; elements a warp reads at once). A question about the
cost (``units``, ``unit_entries``, ``units_per_request``) counts with them, so
its step needs ``unit`` (and ``warp`` for requests).
``question``, ``challenge`` and ``expect_error`` are optional and at most one
is on a step; ``reveal`` needs a question or a challenge. The question's stored
``answer`` is what the lesson author believes; the app grades against
:func:`expected_answer`, computed from candela, and the tests prove the two
agree, so a lesson cannot teach a wrong number. :func:`verify_lesson` also
refuses a step whose title, text or prompt shows its answer before it is asked
(:func:`give_aways`): such a sentence belongs in ``reveal``.

What the page shows, and when
-----------------------------

A step with a question:

1. before an answer: ``step.text`` and ``question.prompt``; nothing computed
   from the asked quantity is shown, doable or sent: :data:`WITHHELD` says, per
   kind, what is drawn instead and how far the walk may go (:func:`walk_limit`);
2. on "check": ``v = grade(question, layout, typed)``.
   ``v.correct``: show ``v.message`` and ``v.worked``, then ``step.reveal``,
   the fields, and play the traversal. Wrong but ``v.readable``: show
   ``v.message`` (what was typed, then ``v.hint``); keep the fields hidden,
   let the student try again, and offer "show me". Not ``v.readable``: show
   ``v.message`` (what to type). A wrong verdict never holds the right value
   (``v.expected`` is ``None``, ``v.worked`` is empty);
3. on "show me": ``v = show_me(question, layout)``, with ``v.revealed`` True:
   show it as after a right answer (message, worked, ``step.reveal``, fields,
   traversal), marked as shown rather than answered.

A step with a challenge: show ``step.text``, ``challenge.prompt`` and
:func:`describe_target` of ``challenge.target``; the student types a pipeline
that continues from the step's layout (:func:`challenge_start`). On "check",
``v = grade_challenge(step, typed)``: the resulting layout is compared with the
target, so any chain that reaches it is right; a wrong one says what differs
(shape, stride, offset, or where the walk leaves the target's) and never shows
the solution; text that is not a pipeline is refused, unread and unrun. On
"show me", :func:`show_solution` gives the reference solution and its layout.
After either, show ``step.reveal``.

The package is pure: it imports neither Panel nor Bokeh. Its modules, one idea each:

- :mod:`explorer.lessons.files`: where lesson files are, loading and validating them
  (the standard library only), and running a step's pipeline (through
  ``explorer.pipeline``, the one parser of pipeline text);
- :mod:`explorer.lessons.grading`: expected answers (read from a ``candela.Layout``),
  grading, hints, units, and the give-away check;
- :mod:`explorer.lessons.challenges`: challenges (a pipeline that reaches a target);
- :mod:`explorer.lessons.verify`: a whole lesson checked against candela;
- :mod:`explorer.lessons.withholding`: what a waiting question withholds, per kind,
  and what is drawn instead;
- :mod:`explorer.lessons.lint`: the lesson linter (``python -m explorer.lessons.lint``):
  a step whose text, picture, neighbour or hint gives its answer away while it waits.
  It imports ``explorer.state`` and the page's drawing code (no Panel, no Bokeh), so
  it is not imported here.

Everything public is importable from ``explorer.lessons`` itself.
"""

from __future__ import annotations

from .challenges import (
    challenge_start,
    clean_pipeline,
    describe_target,
    grade_challenge,
    show_solution,
)
from .files import (
    ASKS,
    COST_ASKS,
    DTYPE_BYTES,
    ERROR_NAMES,
    MAX_ELEMENTS,
    MAX_FILE_BYTES,
    MAX_RANK,
    TARGET_KEYS,
    Answer,
    Challenge,
    Lesson,
    LessonError,
    LessonNotFound,
    Question,
    Step,
    Target,
    Verdict,
    lesson_files,
    lessons_dir,
    list_lessons,
    load_lesson,
    load_lesson_file,
    parse_lesson,
    parse_lesson_json,
    run_step,
    step_layout,
)
from .grading import (
    ANSWER_HINT,
    IN_UNIT,
    PIPELINE_HINT,
    accepted_answers,
    byte_unit,
    check_answer,
    describe,
    expected_answer,
    explain,
    explain_in_bytes,
    format_answer,
    give_aways,
    grade,
    hint,
    parse_typed,
    show_me,
    state_answer,
    unit_method,
    unit_note,
)
from .verify import (
    verify_lesson,
)
from .withholding import WITHHELD, Withheld, draws_before, grid_drawn, walk_limit

__all__ = [
    "ANSWER_HINT",
    "PIPELINE_HINT",
    "ASKS",
    "COST_ASKS",
    "DTYPE_BYTES",
    "ERROR_NAMES",
    "IN_UNIT",
    "MAX_ELEMENTS",
    "MAX_FILE_BYTES",
    "MAX_RANK",
    "TARGET_KEYS",
    "Answer",
    "Challenge",
    "Lesson",
    "LessonError",
    "LessonNotFound",
    "Question",
    "Step",
    "Target",
    "Verdict",
    "WITHHELD",
    "Withheld",
    "accepted_answers",
    "byte_unit",
    "challenge_start",
    "check_answer",
    "clean_pipeline",
    "describe",
    "describe_target",
    "draws_before",
    "grid_drawn",
    "expected_answer",
    "explain",
    "explain_in_bytes",
    "format_answer",
    "give_aways",
    "grade",
    "grade_challenge",
    "hint",
    "lesson_files",
    "lessons_dir",
    "list_lessons",
    "load_lesson",
    "load_lesson_file",
    "parse_lesson",
    "parse_lesson_json",
    "parse_typed",
    "run_step",
    "show_me",
    "show_solution",
    "state_answer",
    "step_layout",
    "unit_method",
    "unit_note",
    "verify_lesson",
    "walk_limit",
]
