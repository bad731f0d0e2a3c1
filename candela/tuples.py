"""Pure integer-tuple maths behind a layout.

Small functions over tuples of ints, apart from the `Layout` class so each can
be read, tested and reused on its own. Each carries a one-line statement of
what it computes. Most trust their input; those that check it (`check_*`,
`canonical_axis`, `broadcast_strides`) raise the errors of `candela.errors`,
naming the values.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from .errors import (
    AxesOutOfBounds,
    CannotBroadcast,
    InvalidShape,
    InvalidViewShape,
    NotEnoughAxes,
    RepeatedAxes,
    ZeroRankShape,
)

Shape = tuple[int, ...]
ShapeLike = int | Sequence[int]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def in_int64(value: int) -> bool:
    """``INT64_MIN <= value <= INT64_MAX``: the value fits a NumPy int64 exactly.

    >>> in_int64(2**63 - 1), in_int64(2**63), in_int64(-(2**63))
    (True, False, True)
    """
    return INT64_MIN <= value <= INT64_MAX


def prod(values: Sequence[int]) -> int:
    """Product of the values; 1 for none.

    >>> prod((3, 4, 2)), prod(())
    (24, 1)
    """
    result = 1
    for v in values:
        result *= v
    return result


def contiguous_strides(shape: Sequence[int]) -> Shape:
    """Row-major strides: exclusive suffix product of the sizes, a size 0 counted as 1.

    >>> contiguous_strides((3, 4, 2))
    (8, 2, 1)
    >>> contiguous_strides((3, 0, 2))
    (2, 2, 1)
    """
    strides = [1] * len(shape)
    running = 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = running
        running *= max(shape[d], 1)
    return tuple(strides)


def adj_strides(shape: Sequence[int], stride: Sequence[int]) -> Shape:
    """Per axis d: ``stride[d] - sum(stride[k] * (shape[k] - 1) for k > d)``.

    The delta the running buffer position takes when axis d is the innermost
    axis that steps: undo the walk through every inner axis, then step d.

    >>> adj_strides((3, 4), (4, 1))
    (1, 1)
    >>> adj_strides((4, 3), (1, 4))
    (-7, 4)
    """
    adj = [0] * len(shape)
    inner_walk = 0  # sum of stride[k] * (shape[k] - 1) over the axes inside d
    for d in range(len(shape) - 1, -1, -1):
        adj[d] = stride[d] - inner_walk
        inner_walk += stride[d] * (shape[d] - 1)
    return tuple(adj)


def position_bounds(shape: Sequence[int], stride: Sequence[int], offset: int) -> tuple[int, int]:
    """Lowest and highest buffer position the layout reaches (of a non-empty layout).

    >>> position_bounds((3, 4), (1, -3), 9)
    (0, 11)
    """
    lo = hi = offset
    for n, st in zip(shape, stride):
        reach = st * (n - 1)
        if reach < 0:
            lo += reach
        else:
            hi += reach
    return lo, hi


def coalesce(shape: Sequence[int], stride: Sequence[int]) -> tuple[Shape, Shape]:
    """The fewest axes that walk the same positions in the same order.

    Axes of size 1 never step and are dropped; an axis whose stride is the
    inner axis's stride times its size continues that axis and is merged.
    (Used for speed only: the walk is unchanged.)

    >>> coalesce((2, 1, 3, 4), (12, 99, 4, 1))
    ((24,), (1,))
    >>> coalesce((3, 4), (1, 3))
    ((3, 4), (1, 3))
    """
    out_shape: list[int] = []
    out_stride: list[int] = []
    for n, st in zip(shape, stride):
        if n == 1:
            continue
        if out_shape and out_stride[-1] == st * n:
            out_shape[-1] *= n
            out_stride[-1] = st
        else:
            out_shape.append(n)
            out_stride.append(st)
    if not out_shape:
        return (1,), (1,)
    return tuple(out_shape), tuple(out_stride)


def flipped(
    shape: Sequence[int], stride: Sequence[int], offset: int, axes: Sequence[int]
) -> tuple[Shape, int]:
    """Strides negated on `axes`, offset moved by ``(n-1) * stride`` to their old last element.

    A size-0 axis has no last element and moves nothing.

    >>> flipped((3, 4), (4, 1), 0, (1,))
    ((4, -1), 3)
    """
    out = list(stride)
    for a in axes:
        offset += max(shape[a] - 1, 0) * stride[a]
        out[a] = -stride[a]
    return tuple(out), offset


def unsqueeze_stride(shape: Sequence[int], stride: Sequence[int], axis: int) -> int:
    """Stride of a size-1 axis put before `axis`: ``stride[axis] * max(shape[axis], 1)``, 1 at the end.

    The stride a contiguous layout would give it (a size 0 counted as 1, as
    `contiguous_strides` does).

    >>> unsqueeze_stride((3, 4), (4, 1), 0), unsqueeze_stride((3, 4), (4, 1), 2)
    (12, 1)
    """
    if axis == len(shape):
        return 1
    return stride[axis] * max(shape[axis], 1)


def nocopy_reshape_strides(
    shape: Sequence[int], stride: Sequence[int], new_shape: Sequence[int]
) -> Shape | None:
    """Strides that walk the same elements as `new_shape` in row-major order, or None.

    NumPy's ``_attempt_nocopy_reshape`` (C order): drop the size-1 axes, then
    match runs of old and new axes whose sizes have equal products; a run of
    old axes can be split or merged only if it is row-major among itself
    (``stride[k] == shape[k+1] * stride[k+1]``). Trailing new size-1 axes take
    the last stride. Sizes must have the same non-zero product.

    >>> nocopy_reshape_strides((4, 6), (12, 2), (2, 2, 3, 2))  # rows 12 apart, every 2nd column
    (24, 12, 4, 2)
    >>> nocopy_reshape_strides((3, 4), (1, 3), (12,)) is None  # a transpose cannot flatten
    True
    """
    old = [(n, st) for n, st in zip(shape, stride) if n != 1]
    new_stride = [0] * len(new_shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new_shape) and oi < len(old):
        np_, op = new_shape[ni], old[oi][0]
        while np_ != op:
            if np_ < op:
                np_ *= new_shape[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):  # the old run must be row-major among itself
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        new_stride[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new_stride[k - 1] = new_stride[k] * new_shape[k]
        ni, nj = nj, nj + 1
        oi, oj = oj, oj + 1
    last = new_stride[ni - 1] if ni >= 1 else 1
    for k in range(ni, len(new_shape)):
        new_stride[k] = last
    return tuple(new_stride)


def one_or_many(args: tuple) -> object:
    """What a call taking a shape or axes either way was given: ``f(2, 3)`` or ``f((2, 3))``.

    >>> one_or_many((2, 3)), one_or_many(((2, 3),)), one_or_many((4,))
    ((2, 3), (2, 3), (4,))
    """
    if len(args) == 1 and hasattr(args[0], "__len__") and not isinstance(args[0], (str, bytes)):
        return args[0]
    return args


def diagonal_start(shape: Sequence[int], offset: int, dim1: int, dim2: int) -> tuple[int, int, int]:
    """``(i, j)`` where diagonal `offset` starts on axes dim1, dim2, and its length (NumPy's).

    Offset ``k >= 0`` starts at ``(0, k)``, ``k < 0`` at ``(-k, 0)``; the
    length is what fits in both axes, 0 when nothing does.

    >>> diagonal_start((3, 4), 1, 0, 1), diagonal_start((3, 4), -2, 0, 1), diagonal_start((3, 4), 9, 0, 1)
    ((0, 1, 3), (2, 0, 1), (0, 0, 0))
    """
    i, j = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(0, min(shape[dim1] - i, shape[dim2] - j))
    return (i, j, length) if length else (0, 0, 0)


def moved_axes(rank: int, source: Sequence[int], destination: Sequence[int]) -> list[int]:
    """The permutation NumPy's ``moveaxis`` makes: `source` axes land at `destination`.

    The other axes keep their order in the places left.

    >>> moved_axes(4, (0,), (2,)), moved_axes(3, (0, 1), (2, 0))
    ([1, 2, 0, 3], [1, 2, 0])
    """
    order = [a for a in range(rank) if a not in source]
    for dst, src in sorted(zip(destination, source)):
        order.insert(dst, src)
    return order


def swapped_axes(rank: int, a: int, b: int) -> list[int]:
    """The permutation of ``0 .. rank-1`` that exchanges axes `a` and `b`.

    >>> swapped_axes(3, 0, 2), swapped_axes(2, 1, 1)
    ([2, 1, 0], [0, 1])
    """
    order = list(range(rank))
    order[a], order[b] = order[b], order[a]
    return order


def broadcast_strides(shape: Shape, stride: Shape, target: Shape) -> Shape:
    """Strides reading `shape` as `target` by NumPy's right-aligned rules: stride 0 where it repeats.

    New leading axes and size-1 axes that grow take stride 0; an axis of
    another size is `CannotBroadcast`.

    >>> broadcast_strides((4,), (1,), (3, 4)), broadcast_strides((3, 1), (1, 1), (3, 5))
    ((0, 1), (1, 0))
    """
    extra = len(target) - len(shape)
    if extra < 0:
        raise CannotBroadcast(
            f"cannot broadcast shape {shape} to {target}: the target has fewer axes",
            shape=shape,
            target=target,
        )
    out = [0] * extra
    for axis, (n, st) in enumerate(zip(shape, stride)):
        t = target[extra + axis]
        if n == t:
            out.append(st)
        elif n == 1:
            out.append(0)
        else:
            raise CannotBroadcast(
                f"cannot broadcast shape {shape} to {target}: axis {extra + axis} has "
                f"size {n}, which is neither {t} nor 1",
                shape=shape,
                target=target,
                axis=extra + axis,
            )
    return tuple(out)


def count(n: int, one: str, many: str) -> str:
    """``n`` and its noun, singular or plural: ``count(1, "axis", "axes") == "1 axis"``."""
    return f"{n} {one if n == 1 else many}"


def as_int(value: object, what: str) -> int:
    """`value` as a Python int; bools, floats and strings are refused by name."""
    if isinstance(value, bool):
        raise InvalidShape(f"{what} must be an integer, got the bool {value!r}", value=value)
    try:
        result = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise InvalidShape(
            f"{what} must be an integer, got {value!r} ({type(value).__name__})", value=value
        ) from None
    if not in_int64(result):
        raise InvalidShape(
            f"{what} is {result}, outside the int64 range {INT64_MIN}..{INT64_MAX}", value=result
        )
    return result


def check_shape(shape: object) -> Shape:
    """A shape as a tuple of non-negative ints, rank >= 1; a single int is rank 1.

    >>> check_shape([3, 4]), check_shape(5)
    ((3, 4), (5,))
    """
    if isinstance(shape, (str, bytes)):
        raise InvalidShape(f"shape must be a sequence of integers, got {shape!r}", shape=shape)
    if not isinstance(shape, Sequence) and not hasattr(shape, "__iter__"):
        return (check_size(shape, "shape"),)
    values = tuple(shape)  # type: ignore[arg-type]
    if not values:
        raise ZeroRankShape("a shape needs at least one axis, got ()", shape=values)
    return tuple(
        check_size(v, f"size of axis {d} in shape {values!r}") for d, v in enumerate(values)
    )


def check_size(value: object, what: str) -> int:
    """One axis size: a non-negative int."""
    size = as_int(value, what)
    if size < 0:
        raise InvalidShape(f"{what} is negative: {size}", value=size)
    return size


def check_stride(stride: object, shape: Shape) -> Shape:
    """A stride of the same rank as `shape` (any sign, zero allowed)."""
    if isinstance(stride, (str, bytes)):
        raise InvalidShape(f"stride must be a sequence of integers, got {stride!r}", stride=stride)
    if not isinstance(stride, Sequence) and not hasattr(stride, "__iter__"):
        stride = (stride,)
    values = tuple(stride)  # type: ignore[arg-type]
    if len(values) != len(shape):
        raise InvalidShape(
            f"stride {values!r} has {count(len(values), 'entry', 'entries')} but shape {shape!r} "
            f"has {count(len(shape), 'axis', 'axes')}",
            stride=values,
            shape=shape,
        )
    return tuple(as_int(v, f"stride of axis {d} in {values!r}") for d, v in enumerate(values))


def check_offset(offset: object) -> int:
    """An offset: a non-negative int."""
    value = as_int(offset, "offset")
    if value < 0:
        raise InvalidShape(f"offset must be >= 0, got {value}", offset=value)
    return value


def canonical_axis(axis: object, rank: int, what: str = "axis") -> int:
    """`axis` in ``0..rank-1``, a negative one counted from the end (as NumPy does).

    >>> canonical_axis(-1, 3)
    2
    """
    if isinstance(axis, bool):
        raise AxesOutOfBounds(f"{what} must be an integer, got {axis!r}", axis=axis, rank=rank)
    try:
        a = operator.index(axis)  # type: ignore[arg-type]
    except TypeError:
        raise AxesOutOfBounds(
            f"{what} must be an integer, got {axis!r}", axis=axis, rank=rank
        ) from None
    if not -rank <= a < rank:
        raise AxesOutOfBounds(
            f"{what} {a} is out of range for rank {rank} (valid: {-rank}..{rank - 1})",
            axis=a,
            rank=rank,
        )
    return a + rank if a < 0 else a


def check_axes(axes: object, rank: int, what: str = "axis") -> tuple[int, ...]:
    """Axes (an int, a sequence, or None for all) in ``0..rank-1``, each at most once.

    >>> check_axes(-1, 3), check_axes((0, -1), 3), check_axes(None, 2)
    ((2,), (0, 2), (0, 1))
    """
    if axes is None:
        return tuple(range(rank))
    given = tuple(axes) if isinstance(axes, Sequence) and not isinstance(axes, str) else (axes,)
    out = tuple(canonical_axis(a, rank, what) for a in given)
    for k, a in enumerate(out):
        if a in out[:k]:
            raise RepeatedAxes(
                f"{what}: {given} names axis {a} more than once", axes=given, axis=a, rank=rank
            )
    return out


def check_permutation(axes: object, rank: int) -> list[int]:
    """`axes` as a permutation of ``0 .. rank-1``, a negative axis counted from the end.

    >>> check_permutation((-1, 0, 1), 3)
    [2, 0, 1]
    """
    if isinstance(axes, (str, bytes)) or not hasattr(axes, "__len__"):
        raise NotEnoughAxes(
            f"axes must be a sequence of {count(rank, 'axis', 'axes')}, got {axes!r}", axes=axes
        )
    given = tuple(axes)  # type: ignore[arg-type]
    if len(given) != rank:
        raise NotEnoughAxes(
            f"axes {given} has {count(len(given), 'entry', 'entries')} but the layout has "
            f"{count(rank, 'axis', 'axes')}",
            axes=given,
            rank=rank,
        )
    perm = [canonical_axis(a, rank, f"axis in {given}") for a in given]
    if len(set(perm)) != len(perm):
        repeated = sorted({a for a in perm if perm.count(a) > 1})
        raise AxesOutOfBounds(
            f"axes {given} is not a permutation: axis {repeated[0]} appears more than once",
            axes=given,
            axis=repeated[0],
            rank=rank,
        )
    return perm


def check_view_shape(shape: object, elements: int) -> Shape:
    """A view's target shape, its one ``-1`` (if any) replaced by the size that keeps the count.

    Refused (`InvalidViewShape`): two ``-1``, a ``-1`` no whole size fits
    (as NumPy: the other sizes' product must be non-zero and divide the
    count), or a count that differs. Other negative sizes are `InvalidShape`.

    >>> check_view_shape((2, -1), 6), check_view_shape(-1, 6)
    ((2, 3), (6,))
    """
    values = shape if isinstance(shape, Sequence) and not isinstance(shape, str) else (shape,)
    unknown = [d for d, v in enumerate(values) if _is_minus_one(v)]
    for d, v in enumerate(values):  # a size below -1 is no size at all, however many -1 there are
        if d not in unknown:
            check_size(v, f"size of axis {d} in shape {tuple(values)!r}")
    if len(unknown) > 1:
        raise InvalidViewShape(
            f"shape {tuple(values)} has more than one -1: only one size can be inferred",
            shape=tuple(values),
            elements=elements,
        )
    if not unknown:
        dims = check_shape(shape)
    else:
        (u,) = unknown
        known = check_shape(tuple(values[:u]) + (1,) + tuple(values[u + 1 :]))
        rest = prod(known)
        if rest == 0 or elements % rest:
            raise InvalidViewShape(
                f"cannot view {count(elements, 'element', 'elements')} as shape "
                f"{tuple(values)}: no whole size for the -1 keeps the count",
                shape=tuple(values),
                elements=elements,
            )
        dims = known[:u] + (elements // rest,) + known[u + 1 :]
    target = prod(dims)
    if target != elements:
        raise InvalidViewShape(
            f"cannot view {count(elements, 'element', 'elements')} as shape {dims} "
            f"({count(target, 'element', 'elements')})",
            shape=dims,
            elements=elements,
            target_elements=target,
        )
    return dims


def _is_minus_one(value: object) -> bool:
    """True for an integer -1 (a NumPy one too), not for -1.0 or a bool."""
    if isinstance(value, bool):
        return False
    try:
        return operator.index(value) == -1  # type: ignore[arg-type]
    except TypeError:
        return False


def check_expand_sizes(sizes: object, shape: Shape) -> Shape:
    """PyTorch's ``expand`` sizes as a broadcast target: each ``-1`` keeps its axis's size.

    >>> check_expand_sizes((2, -1, 4), (3, 1))
    (2, 3, 4)
    """
    values = sizes if isinstance(sizes, Sequence) and not isinstance(sizes, str) else (sizes,)
    values = tuple(values)
    extra = len(values) - len(shape)
    if extra < 0:
        raise CannotBroadcast(
            f"cannot expand shape {shape} to {values}: the target has fewer axes",
            shape=shape,
            target=values,
        )
    out = []
    for d, v in enumerate(values):
        if not _is_minus_one(v):
            out.append(v)
        elif d < extra:
            raise CannotBroadcast(
                f"cannot expand shape {shape} to {values}: -1 on axis {d}, a new leading "
                "axis, has no size to keep",
                shape=shape,
                target=values,
                axis=d,
            )
        else:
            out.append(shape[d - extra])
    return check_shape(tuple(out))


def check_in_range(
    shape: Shape, stride: Shape, adj_stride: Shape, offset: int, length: int, lowest: int = 0
) -> None:
    """Refuse a layout any of whose numbers leaves int64, or whose positions leave ``lowest..2**63-1``.

    A layout with no elements reaches no position; only its numbers are checked.
    `from_raw_parts` passes ``lowest=INT64_MIN``: exact, but not checked for sense.

    O(rank): the positions are bounded by `position_bounds`, not walked.

    >>> check_in_range((3,), (2**62,), (2**62,), 0, 3)
    Traceback (most recent call last):
    ...
    candela.errors.InvalidShape: shape (3,) with stride (4611686018427387904,) and offset 0 reaches position 9223372036854775808: positions must be <= 9223372036854775807
    """
    numbers = (offset, length, *stride, *adj_stride)
    if min(numbers) < INT64_MIN or max(numbers) > INT64_MAX:
        names = ["offset", "len"]
        names += [f"stride[{d}]" for d in range(len(stride))]
        names += [f"adj_stride[{d}]" for d in range(len(adj_stride))]
        name, v = next((n, v) for n, v in zip(names, numbers) if not in_int64(v))
        raise InvalidShape(
            f"shape {shape} with stride {stride} and offset {offset}: {name} is {v}, "
            f"outside the int64 range {INT64_MIN}..{INT64_MAX}",
            shape=shape,
            stride=stride,
            offset=offset,
            value=v,
        )
    if 0 in shape:
        return  # no element is read: a derived offset is carried as it is (NumPy does the same)
    lo, hi = position_bounds(shape, stride, offset)
    if lo < lowest:
        raise InvalidShape(
            f"shape {shape} with stride {stride} and offset {offset} reaches position {lo}: "
            f"positions must be >= {lowest}" + (" (raise the offset)" if lowest == 0 else ""),
            shape=shape,
            stride=stride,
            offset=offset,
            value=lo,
        )
    if hi > INT64_MAX:
        raise InvalidShape(
            f"shape {shape} with stride {stride} and offset {offset} reaches position {hi}: "
            f"positions must be <= {INT64_MAX}",
            shape=shape,
            stride=stride,
            offset=offset,
            value=hi,
        )
