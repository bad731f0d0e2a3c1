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
from dataclasses import dataclass

from .pipeline import MAX_ELEMENTS, PipelineError, Step, apply, format_pipeline, parse

#: Ranks the explorer accepts.
MAX_RANK = 8
#: Longest pipeline text accepted, so a pasted novel cannot stall the parser.
MAX_OPS_CHARS = 2000


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
    shown = value if isinstance(value, str) else repr(value)
    if isinstance(value, str):
        text = value.strip().strip("()[]").strip()
        parts = [p for p in re.split(r"[,\s]+", text) if p]
        if not parts:
            raise StateError(f"shape `{shown}`: give one size per axis, e.g. 3,4")
        sizes = []
        for p in parts:
            if not re.fullmatch(r"[+-]?\d+", p):
                raise StateError(f"shape `{shown}`: `{p}` is not a whole number")
            sizes.append(int(p))
    elif isinstance(value, bool):
        raise StateError(f"shape `{shown}`: a shape is a tuple of ints, not a bool")
    elif isinstance(value, int):
        sizes = [value]
    elif isinstance(value, (tuple, list)):
        sizes = list(value)
        for v in sizes:
            if isinstance(v, bool) or not isinstance(v, int):
                raise StateError(f"shape `{shown}`: sizes must be ints, got {v!r}")
    else:
        raise StateError(f"shape `{shown}`: a shape is a tuple of ints or text like 3,4")
    for axis, size in enumerate(sizes):
        if size < 0:
            raise StateError(f"shape `{shown}`: size {size} of axis {axis} is negative")
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
    return Result(size, tuple(steps), tuple(states))
