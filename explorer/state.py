"""The explorer's state as plain values: a shape and a pipeline, evaluated.

``evaluate(shape, ops)`` reads the shape (a tuple or text such as ``"3,4"``),
parses the pipeline and applies it to ``Tensor.arange(shape)`` (or a given
starting tensor), returning a :class:`Result` with every intermediate tensor.
Anything wrong raises :class:`StateError` with a message fit for the page;
nothing here knows about Panel, so the app keeps the last good ``Result``.
"""

from __future__ import annotations

import math
import re
import reprlib
from dataclasses import dataclass

from .pipeline import (
    INT64_MAX,
    MAX_ELEMENTS,
    PipelineError,
    Step,
    apply,
    format_pipeline,
    format_step,
    parse,
)

#: Ranks the explorer accepts.
MAX_RANK = 8
#: Longest pipeline text accepted, so a pasted novel cannot stall the parser.
MAX_OPS_CHARS = 2000
#: Longest shape text accepted (eight sizes need far less).
MAX_SHAPE_CHARS = 200
#: The most axes any state may have (NumPy's own limit): a broadcast or view
#: can add axes beyond :data:`MAX_RANK`, but never past what can be drawn.
MAX_STATE_RANK = 64

_SIZE_DIGITS = len(str(MAX_ELEMENTS))


class _ShortRepr(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 64:  # converting it in full could take long, or fail
            return f"<a number of about {int(x.bit_length() * 0.30103) + 1:,} digits>"
        return super().repr_int(x, level)


_short_repr = _ShortRepr()


def _shown(value: object) -> str:
    # A short repr that never fails: no huge number is converted, no deep list walked.
    if isinstance(value, str):
        return value if len(value) <= 60 else value[:59] + "…"
    try:
        return _short_repr.repr(value)
    except (ValueError, RecursionError):
        return f"a {type(value).__name__}"


class StateError(ValueError):
    """Input the explorer cannot show; the message says which input and why."""


def parse_shape(value: object) -> tuple[int, ...]:
    """Read a shape from a tuple/list of ints, an int, or text like ``"3,4"``.

    >>> parse_shape("3, 4")
    (3, 4)
    >>> parse_shape("(2, 3, 4)")
    (2, 3, 4)
    >>> parse_shape("3,-1")
    Traceback (most recent call last):
    ...
    explorer.state.StateError: shape `3,-1`: size -1 of axis 1 is negative
    """
    shown = _shown(value)
    if isinstance(value, str):
        if len(value) > MAX_SHAPE_CHARS:
            raise StateError(
                f"shape `{shown}`: is {len(value):,} characters; at most {MAX_SHAPE_CHARS}"
            )
        text = value.strip().strip("()[]").strip()
        parts = [p for p in re.split(r"[,\s]+", text) if p]
        if not parts:
            raise StateError(f"shape `{shown}`: give one size per axis, e.g. 3,4")
        if len(parts) > MAX_RANK:
            raise StateError(f"shape `{shown}`: rank {len(parts)} is outside 1..{MAX_RANK}")
        sizes = []
        for axis, p in enumerate(parts):
            if not re.fullmatch(r"[+-]?[0-9]+", p):  # ASCII digits only: int("²") fails
                raise StateError(
                    f"shape `{shown}`: `{_shown(p)}` is not a whole number (digits 0-9)"
                )
            digits = p.lstrip("+-").lstrip("0")
            if len(digits) > _SIZE_DIGITS:  # never convert a number of thousands of digits
                raise StateError(
                    f"shape `{shown}`: size `{_shown(p)[:20]}` of axis {axis} has "
                    f"{len(digits):,} digits; a size is at most {MAX_ELEMENTS:,}"
                )
            sizes.append(int(p))
    elif isinstance(value, bool):
        raise StateError(f"shape `{shown}`: a shape is a tuple of ints, not a bool")
    elif isinstance(value, int):
        sizes = [value]
    elif isinstance(value, (tuple, list)):
        if len(value) > MAX_RANK:
            raise StateError(f"shape `{shown}`: rank {len(value)} is outside 1..{MAX_RANK}")
        sizes = list(value)
        for v in sizes:
            if isinstance(v, bool) or not isinstance(v, int):
                raise StateError(f"shape `{shown}`: sizes must be ints, got {_shown(v)}")
    else:
        raise StateError(f"shape `{shown}`: a shape is a tuple of ints or text like 3,4")
    for axis, size in enumerate(sizes):
        if size < 0:
            raise StateError(f"shape `{shown}`: size {_shown(size)} of axis {axis} is negative")
        if size > MAX_ELEMENTS:
            raise StateError(
                f"shape `{shown}`: size {_shown(size)} of axis {axis} is more than the "
                f"{MAX_ELEMENTS:,} elements the explorer handles"
            )
    if not 1 <= len(sizes) <= MAX_RANK:
        raise StateError(f"shape `{shown}`: rank {len(sizes)} is outside 1..{MAX_RANK}")
    if math.prod(sizes) > MAX_ELEMENTS:
        raise StateError(
            f"shape `{shown}`: {math.prod(sizes):,} elements is more than the "
            f"{MAX_ELEMENTS:,} the explorer handles"
        )
    return tuple(sizes)


def shape_text(shape: tuple[int, ...]) -> str:
    """The URL and input-box form of a shape: ``3,4``."""
    return ",".join(str(v) for v in shape)


@dataclass(frozen=True)
class Result:
    """A shape and pipeline that evaluated cleanly, with every state along the way."""

    shape: tuple[int, ...]
    steps: tuple[Step, ...]
    states: tuple  # candela.Tensor per state, the start first

    @property
    def ops(self) -> str:
        return format_pipeline(self.steps)

    @property
    def tensor(self):
        return self.states[-1]

    @property
    def layout(self):
        return self.states[-1].layout

    @property
    def copied(self) -> bool:
        """True when an ``as_contiguous`` step repacked the elements into a new buffer."""
        return any(step.name == "as_contiguous" for step in self.steps)


def evaluate(shape: object, ops: str, start=None) -> Result:
    """Evaluate a shape and a pipeline; raise :class:`StateError` saying what is wrong.

    ``start`` is a tensor to begin from instead of ``Tensor.arange(shape)``.
    """
    from candela import OpError, Tensor

    if start is None:
        size = parse_shape(shape)
        try:
            start = Tensor.arange(size)
        except (OpError, ValueError) as exc:
            raise StateError(f"shape `{shape_text(size)}`: {exc}") from exc
    else:
        size = tuple(start.layout.shape)
    if not isinstance(ops, str):
        raise StateError(f"pipeline must be text, got {type(ops).__name__}")
    if len(ops) > MAX_OPS_CHARS:
        raise StateError(f"pipeline is {len(ops):,} characters; at most {MAX_OPS_CHARS:,}")
    try:
        steps = parse(ops)
        states = apply(steps, start)
    except PipelineError as exc:
        raise StateError(str(exc)) from exc
    for number, state in enumerate(states[1:], 1):
        shape = tuple(state.layout.shape)
        step = f"step {number} `{format_step(steps[number - 1])}`"
        if len(shape) > MAX_STATE_RANK:  # NumPy's limit: drawing it would fail later
            raise StateError(
                f"{step}: gives rank {len(shape)}; the explorer draws at most {MAX_STATE_RANK} axes"
            )
        if any(n > MAX_ELEMENTS for n in shape):  # possible when another axis is 0
            raise StateError(
                f"{step}: an axis of size {max(shape):,} is more than the "
                f"{MAX_ELEMENTS:,} the explorer draws"
            )
        layout = state.layout
        numbers = (*layout.stride, *layout.adj_stride, layout.offset)
        if any(abs(v) > INT64_MAX for v in numbers):  # a huge slice step: drawing needs int64
            raise StateError(
                f"{step}: gives stride {tuple(layout.stride)}, beyond the 64-bit integers "
                "the explorer draws with"
            )
    return Result(size, tuple(steps), tuple(states))
