"""Slice ranges: `SliceRange`, the `s[...]` builder, and their normalisation.

Slicing has the most edge cases of any operation, so it lives here on its own.
A `SliceRange` is what the user wrote (`1:3`, `::-1`, a bare `2`);
`resolve_range` turns one into ``(start, size, step)`` for an axis of a given
size, or raises `SliceOutOfBounds` naming the axis and the bound. Bounds are
read as Python reads them (a negative bound counts from the end) but never
clipped: a bound past the axis is an error, not a silent fix, and so is a
bound or step outside int64.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import SliceOutOfBounds

__all__ = ["SliceRange", "s", "to_ranges", "resolve_range", "format_ranges", "format_subscript"]


def _bound(value: object, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise SliceOutOfBounds(f"slice {what} must be an integer, got {value!r}", bound=value)
    try:
        result = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise SliceOutOfBounds(
            f"slice {what} must be an integer or omitted, got {value!r}", bound=value
        ) from None
    if not -(2**63) <= result < 2**63:  # refused, never truncated
        raise SliceOutOfBounds(f"slice {what} {result} is outside the int64 range", bound=result)
    return result


@dataclass(frozen=True)
class SliceRange:
    """One axis's selection: ``start:stop:step``, or a single index that keeps the axis.

    >>> SliceRange(1, 3), SliceRange(step=-1), SliceRange.at(-1)
    (SliceRange(1:3), SliceRange(::-1), SliceRange(-1))
    """

    start: int | None = None
    stop: int | None = None
    step: int | None = None
    single: bool = False  # a bare integer: select element `start`, keep the axis with size 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", _bound(self.start, "start"))
        object.__setattr__(self, "stop", _bound(self.stop, "stop"))
        object.__setattr__(self, "step", _bound(self.step, "step"))

    @classmethod
    def at(cls, index: int) -> SliceRange:
        """The range that selects element `index` alone (``s[index]``)."""
        return cls(start=index, single=True)

    @classmethod
    def full(cls) -> SliceRange:
        """The range that takes the whole axis (``s[:]``)."""
        return cls()

    @classmethod
    def from_key(cls, key: object) -> SliceRange:
        """A `SliceRange` from a Python ``slice``, an int, or a `SliceRange`."""
        if isinstance(key, SliceRange):
            return key
        if isinstance(key, slice):
            return cls(key.start, key.stop, key.step)
        if isinstance(key, bool) or key is Ellipsis or key is None:
            raise SliceOutOfBounds(
                f"cannot slice with {key!r}: use ints and start:stop:step", key=key
            )
        try:
            return cls.at(operator.index(key))  # type: ignore[arg-type]
        except TypeError:
            raise SliceOutOfBounds(
                f"cannot slice with {key!r} ({type(key).__name__}): use ints and start:stop:step",
                key=key,
            ) from None

    def __str__(self) -> str:
        if self.single:
            return str(self.start)
        text = (
            f"{'' if self.start is None else self.start}:{'' if self.stop is None else self.stop}"
        )
        if self.step is not None:
            text += f":{self.step}"
        return text

    def __repr__(self) -> str:
        return f"SliceRange({self})"


class _SliceBuilder:
    """``s[1:3, ::-1, 0]`` builds a tuple of `SliceRange`, one per leading axis."""

    def __getitem__(self, key: object) -> tuple[SliceRange, ...]:
        keys = key if isinstance(key, tuple) else (key,)
        return tuple(SliceRange.from_key(k) for k in keys)

    def __repr__(self) -> str:
        return "s"


s = _SliceBuilder()
"""Build slice ranges with Python's own syntax: ``s[0:2, ::-1]``, ``s[-1]``.

>>> s[1:3, ::-1, 0]
(SliceRange(1:3), SliceRange(::-1), SliceRange(0))
"""

RangesLike = SliceRange | slice | int | Sequence[SliceRange | slice | int]


def to_ranges(ranges: RangesLike) -> tuple[SliceRange, ...]:
    """Accept ``s[...]``, one range, or a sequence of ranges / slices / ints."""
    if isinstance(ranges, (SliceRange, slice)) or not isinstance(ranges, Sequence):
        return (SliceRange.from_key(ranges),)
    if isinstance(ranges, (str, bytes)):
        raise SliceOutOfBounds(f"cannot slice with the text {ranges!r}", key=ranges)
    return tuple(SliceRange.from_key(r) for r in ranges)


def format_ranges(ranges: Sequence[SliceRange]) -> str:
    """The ``s[...]`` text that builds `ranges`.

    >>> format_ranges(s[1:3, ::-1, 0])
    's[1:3, ::-1, 0]'
    """
    return "s[" + ", ".join(str(r) for r in ranges) + "]"


def format_subscript(items: Sequence[object]) -> str:
    """NumPy subscript items (ints, slices, ``None``, ``...``) as Python writes them.

    >>> format_subscript((slice(1, None), slice(None, None, -2), None, Ellipsis, 0))
    '[1:, ::-2, None, ..., 0]'
    """

    def one(item: object) -> str:
        if item is None:
            return "None"
        if item is Ellipsis:
            return "..."
        if isinstance(item, slice):
            text = ("" if item.start is None else str(item.start)) + ":"
            text += "" if item.stop is None else str(item.stop)
            return text + ("" if item.step is None else f":{item.step}")
        return str(operator.index(item))

    return "[" + ", ".join(one(item) for item in items) + "]"


def resolve_range(r: SliceRange, n: int, axis: int) -> tuple[int, int, int]:
    """``(start, size, step)`` that `r` selects on an axis of size `n`.

    >>> resolve_range(SliceRange(1, None), 4, 0)
    (1, 3, 1)
    >>> resolve_range(SliceRange(step=-2), 5, 0)
    (4, 3, -2)
    >>> resolve_range(SliceRange.at(-1), 4, 0)
    (3, 1, 1)
    """

    def fail(reason: str) -> SliceOutOfBounds:
        return SliceOutOfBounds(
            f"slice {r} on axis {axis} (size {n}): {reason}", range=r, axis=axis, size=n
        )

    if r.single:
        i = r.start
        assert i is not None
        if not -n <= i < n:
            raise fail(f"index {i} is out of range (valid: {-n}..{n - 1})")
        return (i + n if i < 0 else i), 1, 1

    step = 1 if r.step is None else r.step
    if step == 0:
        raise fail("step must not be 0")
    if r.start is None and r.stop is None:
        # The whole axis in its direction, even an axis of size 0.
        size = -(-n // abs(step))
        return (0 if step > 0 else max(n - 1, 0)), size, step

    def element(i: int, what: str) -> int:
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise fail(f"{what} {i} does not name an element (valid: {-n}..{n - 1})")
        return j

    if step > 0:
        start = 0 if r.start is None else element(r.start, "start")
        if r.stop is None:
            stop = n
        else:
            stop = r.stop + n if r.stop < 0 else r.stop
            if not 0 <= stop <= n:
                raise fail(f"stop {r.stop} is past the axis (valid: {-n}..{n})")
        if not start < stop:
            raise fail(f"the selection is empty (start {start} >= stop {stop})")
        return start, -(-(stop - start) // step), step

    start = n - 1 if r.start is None else element(r.start, "start")
    stop = -1 if r.stop is None else element(r.stop, "stop")
    if not stop < start:
        raise fail(f"the selection is empty (stop {stop} >= start {start} with a negative step)")
    return start, -(-(start - stop) // -step), step
