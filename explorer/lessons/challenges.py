"""Challenges: the student types a pipeline that reaches a target layout.

Any chain that reaches the target is right (:func:`grade_challenge`); a wrong one
says what differs and never shows the solution; text that is not a pipeline is
refused, unread and unrun. No Panel, no Bokeh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .files import (
    Challenge,
    Step,
    Target,
    Verdict,
    run_step,
)
from .grading import (
    byte_unit,
    format_answer,
    walk_element,
)

if TYPE_CHECKING:  # pragma: no cover - only for type hints
    from candela import Tensor


# --------------------------------------------------------------------------- challenges


def challenge_start(step: Step) -> Tensor:
    """The tensor a challenge starts from: the step's ``ops`` on ``Tensor.arange(shape)``."""
    return run_step(step)


def describe_target(target: Target, limit: int = 24, unit: str = "elements") -> str:
    """The target in words, for the page to show beside the challenge's prompt.

    Its stride and offset are in bytes of ``unit`` when that is a dtype name;
    the walk's positions number cells.

    >>> describe_target(Target(shape=(4, 3), positions=(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11)))
    'shape (4, 3); the walk visits 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11'
    """
    parts = []
    if target.shape is not None:
        parts.append(f"shape {format_answer(target.shape)}")
    if target.stride is not None:
        parts.append(f"stride {_in_unit(target.stride, unit)}")
    if target.offset is not None:
        parts.append(f"offset {_in_unit(target.offset, unit)}")
    if target.positions is not None:
        shown = ", ".join(str(p) for p in target.positions[:limit])
        more = f", ... ({len(target.positions)} in all)" if len(target.positions) > limit else ""
        parts.append(f"the walk visits {shown}{more}")
    return "; ".join(parts)


def grade_challenge(step: Step, typed: str, unit: str = "elements") -> Verdict:
    """Grade a typed pipeline against the step's challenge: the layout it reaches counts.

    The text is parsed by :func:`explorer.pipeline.parse` (never evaluated) and
    applied to :func:`challenge_start` through :func:`explorer.state.evaluate`;
    any chain that reaches the target is right. Text that is not a pipeline
    (or is too long) is not ``readable`` and the message says what to type. A
    pipeline that runs but misses says what differs: the shape, the stride,
    the offset, or where the walk first leaves the target's. A pipeline that
    copies (``as_contiguous``) is refused: the target is a view of the same
    buffer. A wrong verdict never shows a solution. Strides and offsets are
    stated in ``unit``, as the page shows them.
    """
    from explorer.pipeline import PipelineError, format_pipeline, parse
    from explorer.state import MAX_OPS_CHARS, StateError, evaluate

    challenge = _challenge_of(step)
    text = clean_pipeline(typed)
    if not text:
        return Verdict(False, False, _TYPE_A_PIPELINE, None, None)
    if len(text) > MAX_OPS_CHARS:
        return Verdict(
            False,
            False,
            f"Could not read that: {len(text):,} characters is more than the "
            f"{MAX_OPS_CHARS:,} a pipeline may have. {_TYPE_A_PIPELINE}",
            None,
            None,
        )
    try:
        steps = parse(text)
    except PipelineError as exc:
        message = f"Could not read that as a pipeline: {exc}. {_TYPE_A_PIPELINE}"
        return Verdict(False, False, message, None, None)
    start = challenge_start(step)
    try:
        result = evaluate(None, text, start=start)
    except StateError as exc:
        return _miss(f"candela refuses it: {exc}.")
    chain = format_pipeline(steps) or "(no operations)"
    if result.copied or result.tensor.buffer is not start.buffer:
        return _miss(
            f"`{chain}` copies the elements into a new buffer; the target is a view of "
            "the same buffer, so reach it without a copy."
        )
    difference = _difference(challenge.target, result.layout, unit)
    if difference:
        return _miss(f"`{chain}` {difference}.")
    return Verdict(
        True,
        True,
        f"Right: `{chain}` reaches the target. {challenge.why}",
        None,
        None,
        _summary(result.layout, unit),
    )


def show_solution(step: Step, unit: str = "elements") -> Verdict:
    """The "show me" of a challenge: the reference solution, its reason and its layout."""
    from explorer.state import evaluate

    challenge = _challenge_of(step)
    layout = evaluate(None, challenge.solution, start=challenge_start(step)).layout
    message = f"One pipeline that works: `{challenge.solution.strip()}`. {challenge.why}"
    return Verdict(False, True, message, None, None, _summary(layout, unit), revealed=True)


_TYPE_A_PIPELINE = (
    "Type a chain of operations such as .transpose().slice(s[::-1]); it is read, never run as code."
)


def _challenge_of(step: Step) -> Challenge:
    if step.challenge is None:
        raise ValueError("this step has no challenge")
    return step.challenge


def clean_pipeline(typed: Any) -> str:
    if not isinstance(typed, str):
        return ""
    text = typed.strip()
    for dash in ("\u2212", "\u2013", "\u2014", "\ufe63", "\uff0d"):
        text = text.replace(dash, "-")
    return text


def _miss(reason: str) -> Verdict:
    return Verdict(False, True, f"Not quite: {reason}", None, None, hint=reason)


def _difference(target: Target, lay: Any, unit: str = "elements") -> str:
    # What first differs between the layout and the target, in words; "" when it matches.
    shape, stride = tuple(lay.shape), tuple(lay.stride)
    if target.shape is not None and shape != target.shape:
        return (
            f"gives shape {format_answer(shape)}, but the target's shape is "
            f"{format_answer(target.shape)}"
        )
    if target.positions is not None:
        walk = [int(p) for p in lay.positions()]
        for k, (mine, theirs) in enumerate(zip(walk, target.positions)):
            if mine != theirs and k == 0:
                return f"starts its walk at {mine}, but the target's walk starts at {theirs}"
            if mine != theirs:
                cells = "cell" if k == 1 else f"{k} cells"
                return (
                    f"follows the target's walk for its first {cells}, then visits {mine} "
                    f"where the target visits {theirs} ({walk_element(k, lay)})"
                )
        if len(walk) != len(target.positions):
            return f"walks {len(walk)} cells, but the target's walk has {len(target.positions)}"
    if target.stride is not None and stride != target.stride:
        return (
            f"has the target's shape but stride {_in_unit(stride, unit)}, not "
            f"{_in_unit(target.stride, unit)}"
        )
    if target.offset is not None and lay.offset != target.offset:
        return (
            f"starts at offset {_in_unit(lay.offset, unit)}, but the target starts at offset "
            f"{_in_unit(target.offset, unit)}"
        )
    return ""


def _summary(lay: Any, unit: str = "elements") -> str:
    walk = ", ".join(str(int(p)) for p in lay.positions()[:12])
    more = ", ..." if lay.len > 12 else ""
    return (
        f"shape {format_answer(tuple(lay.shape))}, stride {_in_unit(tuple(lay.stride), unit)}, "
        f"offset {_in_unit(lay.offset, unit)}; the walk visits {walk}{more}."
    )


def _in_unit(value: int | tuple[int, ...], unit: str) -> str:
    # A stride or an offset as the page shows it: in elements, or in bytes of a dtype.
    size = byte_unit(unit)
    if not size:
        return format_answer(value) if isinstance(value, tuple) else str(value)
    if isinstance(value, tuple):
        return f"{format_answer(tuple(v * size for v in value))} bytes of {unit}"
    return f"{value * size} bytes of {unit}"
