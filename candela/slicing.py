"""Slice ranges, subscripts and indices: `SliceRange`, the `s[...]` builder, their normalisation.

Slicing has the most edge cases of any operation, so it lives here on its own:
candela's ranges (`sliced`, `narrow_range`), NumPy's subscripts (`subscripted`)
and one element's index (`check_index`) turn into a layout's new shape,
stride and offset, or a clear error, here; `Layout` and the words only apply
the result.
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

import numpy as np

from . import tuples as T
from .errors import AxesOutOfBounds, IndexOutOfBounds, NotEnoughAxes, SliceOutOfBounds

__all__ = [
    "SliceRange",
    "s",
    "to_ranges",
    "resolve_range",
    "format_ranges",
    "format_subscript",
    "sliced",
    "narrow_range",
    "subscripted",
    "check_index",
]

Fields = tuple[tuple[int, ...], tuple[int, ...], int]  # a layout's (shape, stride, offset)


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


def sliced(shape: Sequence[int], stride: Sequence[int], offset: int, ranges: RangesLike) -> Fields:
    """``(shape, stride, offset)`` of the region one range per leading axis selects; rank kept.

    Each range's start moves the offset, its step multiplies the stride.

    >>> sliced((4, 6), (6, 1), 0, s[1:3, ::-2])
    ((2, 3), (6, -2), 11)
    """
    rs = to_ranges(ranges)
    if len(rs) > len(shape):
        raise AxesOutOfBounds(
            f"{format_ranges(rs)} has {T.count(len(rs), 'range', 'ranges')} but the layout "
            f"has {T.count(len(shape), 'axis', 'axes')}",
            ranges=rs,
            rank=len(shape),
        )
    out_shape, out_stride = list(shape), list(stride)
    for axis, r in enumerate(rs):
        start, size, step = resolve_range(r, shape[axis], axis)
        offset += start * stride[axis]
        out_shape[axis] = size
        out_stride[axis] = stride[axis] * step
    return tuple(out_shape), tuple(out_stride), offset


def narrow_range(dim: object, start: object, length: object, axis: int, n: int) -> tuple[int, int]:
    """``(begin, count)`` that ``narrow(dim, start, length)`` takes of `axis`, of size `n`.

    A negative start counts from the end; the range must fit, with at least one element.

    >>> narrow_range(1, -3, 2, 1, 6)
    (3, 2)
    """
    first = T.as_int(start, "narrow start")
    count = T.as_int(length, "narrow length")
    begin = first + n if first < 0 else first
    if not 0 <= begin < n or count < 1 or begin + count > n:
        raise SliceOutOfBounds(
            f"narrow(dim={dim}, start={start}, length={length}) does not fit axis {axis} "
            f"of size {n}: it needs 0 <= start < {n}, length >= 1, start + length <= {n}",
            axis=axis,
            start=first,
            length=count,
            size=n,
        )
    return begin, count


def subscripted(shape: Sequence[int], stride: Sequence[int], offset: int, key: object) -> Fields:
    """``(shape, stride, offset)`` of NumPy's ``a[key]`` (basic indexing) of such a layout.

    An integer selects and drops its axis, a slice keeps it (bounds clipped,
    as Python's), ``None`` inserts an axis of size 1 (with the stride a
    contiguous layout would give it), ``...`` stands for the axes not named.
    No rank 0: a key that drops every axis leaves the last, with size 1.

    >>> subscripted((3, 4), (4, 1), 0, (slice(1, None), None, -1))
    ((2, 1), (4, 4), 7)
    """
    rank = len(shape)
    items = key if isinstance(key, tuple) else (key,)
    named = sum(1 for k in items if k is not None and k is not Ellipsis)
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexOutOfBounds(
            f"subscript {format_subscript(items)} has more than one `...`", index=key
        )
    if named > rank:
        raise IndexOutOfBounds(
            f"subscript {format_subscript(items)} names {T.count(named, 'axis', 'axes')} but the "
            f"layout has {T.count(rank, 'axis', 'axes')}",
            index=key,
            rank=rank,
        )
    if Ellipsis not in items:
        items = items + (Ellipsis,)
    out_shape: list[int] = []
    out_stride: list[int] = []
    axis = 0
    for k in items:
        if k is None:
            out_shape.append(1)
            out_stride.append(T.unsqueeze_stride(shape, stride, axis))
        elif k is Ellipsis:
            for _ in range(rank - named):
                out_shape.append(shape[axis])
                out_stride.append(stride[axis])
                axis += 1
        elif isinstance(k, slice):
            try:
                picked = range(shape[axis])[k]
            except (TypeError, ValueError) as error:
                raise SliceOutOfBounds(
                    f"slice {format_subscript((k,))} on axis {axis}: {error}", axis=axis, key=k
                ) from None
            if len(picked):
                offset += picked.start * stride[axis]
            out_shape.append(len(picked))
            out_stride.append(stride[axis] * picked.step)
            axis += 1
        else:
            n = shape[axis]
            i = T.as_int(k, "an index")
            if not -n <= i < n:
                raise IndexOutOfBounds(
                    f"index {i} is out of range for axis {axis} of size {n}",
                    index=i,
                    axis=axis,
                    size=n,
                )
            offset += (i % n) * stride[axis]
            axis += 1
    if not out_shape:  # every axis dropped: the last stays, with size 1 (as `select` keeps it)
        return (1,), tuple(stride[-1:]), offset
    return tuple(out_shape), tuple(out_stride), offset


def check_index(index: object, shape: Sequence[int]) -> tuple[int, ...]:
    """One element's multi-index, each entry in ``0 .. n-1`` (a negative one counted from the end).

    A single integer is the index of a rank-1 layout.

    >>> check_index((-1, 2), (3, 4)), check_index(1, (5,))
    ((2, 2), (1,))
    """
    if isinstance(index, (str, bytes)) or not hasattr(index, "__len__"):
        index = (index,)
    idx = tuple(index)  # type: ignore[arg-type]
    if len(idx) != len(shape):
        raise NotEnoughAxes(
            f"index {idx} has {T.count(len(idx), 'entry', 'entries')} but the layout has "
            f"{T.count(len(shape), 'axis', 'axes')}",
            index=idx,
            rank=len(shape),
        )
    out = []
    for axis, (i, n) in enumerate(zip(idx, shape)):
        if isinstance(i, bool):
            raise IndexOutOfBounds(f"index {idx} has a bool on axis {axis}", index=idx, axis=axis)
        try:
            k = int(i) if isinstance(i, (int, np.integer)) else None
        except TypeError:
            k = None
        if k is None:
            raise IndexOutOfBounds(
                f"index {idx} has {i!r} on axis {axis}: indices are integers",
                index=idx,
                axis=axis,
            )
        if not -n <= k < n:
            raise IndexOutOfBounds(
                f"index {k} is out of range for axis {axis} of size {n} in {idx}",
                index=idx,
                axis=axis,
                size=n,
            )
        out.append(k + n if k < 0 else k)
    return tuple(out)
