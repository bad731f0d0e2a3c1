"""A lesson checked against candela: each stored answer is the computed one, no step gives its
answer away, each challenge's solution reaches its target, each expected error is raised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .challenges import (
    _challenge_of,
    _difference,
    grade_challenge,
)
from .files import (
    Lesson,
    Step,
    step_layout,
)
from .grading import (
    expected_answer,
    format_answer,
    give_aways,
)

if TYPE_CHECKING:  # pragma: no cover - only for type hints
    pass


def verify_lesson(lesson: Lesson) -> list[str]:
    """Every way the lesson disagrees with candela, as readable lines; empty when sound.

    A step's pipeline must run (or fail with exactly its ``expect_error``), and
    each question must be answerable and its stored answer equal the computed one.
    """
    import candela

    problems: list[str] = []
    for i, step in enumerate(lesson.steps):
        where = f"{lesson.source or lesson.id}: steps[{i}]"
        if step.compare:
            try:
                step_layout(Step(step.shape, step.compare, ""))
            except Exception as exc:
                problems.append(f"{where}.compare: {step.compare!r} on {step.shape}: {exc}")
        try:
            layout = step_layout(step)
        except Exception as exc:
            name = type(exc).__name__
            expected = getattr(candela, step.expect_error, None) if step.expect_error else None
            if expected is None or not isinstance(exc, expected):
                problems.append(f"{where}: {step.ops!r} on {step.shape} raised {name}: {exc}")
            continue
        if step.expect_error is not None:
            problems.append(
                f"{where}: {step.ops!r} on {step.shape} should raise {step.expect_error} but ran"
            )
            continue
        if step.challenge is not None:
            problems += _verify_challenge(step, f"{where}.challenge")
        if step.question is None:
            problems += [f"{where}: {p}" for p in give_aways(step, layout, lesson.title)]
            continue
        try:
            computed = expected_answer(step.question, layout)
        except (ValueError, IndexError) as exc:
            problems.append(f"{where}.question: cannot be asked of {layout!r}: {exc}")
            continue
        if computed != step.question.answer or type(computed) is not type(step.question.answer):
            problems.append(
                f"{where}.question: stored answer {format_answer(step.question.answer)} "
                f"but candela computes {format_answer(computed)}"
            )
        problems += [f"{where}: {p}" for p in give_aways(step, layout, lesson.title)]
    return problems


def _verify_challenge(step: Step, where: str) -> list[str]:
    # The reference solution must reach the target, and doing nothing must not.
    challenge = _challenge_of(step)
    problems = []
    solved = grade_challenge(step, challenge.solution)
    if not solved.correct:
        problems.append(f"{where}.solution: does not reach the target: {solved.message}")
    if not _difference(challenge.target, step_layout(step)):
        problems.append(f"{where}.target: the start already is the target")
    return problems
