"""`Layout`: how a tensor's logical shape maps onto its flat buffer — the algebra.

A layout is an immutable value: shape, stride, adj_stride, offset and len.
This class holds the algebra of seeds 002 and 003 and nothing else: how a
layout is built, its fields, the seed's moves (view, slice, narrow,
transpose, transpose_axes, broadcast, rotate_axis_innermost, shape_as_3d),
the flags, and the three walks. Each move returns a new layout and copies
nothing. NumPy's and PyTorch's words (reshape, permute, flip, squeeze, T,
mT, moveaxis, diagonal, a NumPy subscript, ...) are written once over this
algebra in `candela.words`, which `Layout` and `Tensor` both inherit; the
integer-tuple maths is in `candela.tuples`, the slicing rules in
`candela.slicing`.

Layouts are built in one place, `Layout._make`, which derives adj_stride
and len from shape and stride and refuses any number outside int64 or any
position outside ``0 .. 2**63-1`` (in O(rank)), so a layout can never be
internally inconsistent and nothing it computes can wrap (except through the
`from_raw_parts` escape hatch, which trusts its caller on consistency but
not on range).

The flags are exact and cost O(rank): they answer what the walk does, and the
tests prove each against a brute-force walk.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from . import tuples as T
from .errors import AxesOutOfBounds, NonContiguousView, NotEnoughAxes
from .slicing import RangesLike, check_index, narrow_range, sliced
from .words import Words

if TYPE_CHECKING:
    from .cost import Cost

__all__ = ["Layout", "Step"]


class Step(NamedTuple):
    """One step of the walk: the element reached and how the position got there."""

    index: tuple[int, ...]  # the multi-index of the element
    position: int  # its position in the buffer
    axis: int | None  # the axis that stepped; None for the first element
    delta: int  # what was added to the position: adj_stride[axis] (0 for the first)


class Layout(Words):
    """An immutable, hashable description of a strided tensor.

    >>> l = Layout((3, 4))
    >>> l.shape, l.stride, l.adj_stride, l.offset, l.len
    ((3, 4), (4, 1), (1, 1), 0, 12)
    >>> t = l.transpose()
    >>> t.stride, t.adj_stride, t.is_contiguous(), t.is_transposed()
    ((1, 4), (-7, 4), False, True)
    >>> list(t.strided_indices())[:5]
    [0, 4, 8, 1, 5]
    """

    __slots__ = ("_shape", "_stride", "_adj_stride", "_offset", "_len")

    _shape: tuple[int, ...]
    _stride: tuple[int, ...]
    _adj_stride: tuple[int, ...]
    _offset: int
    _len: int

    def __init__(self, shape: T.ShapeLike) -> None:
        dims = T.check_shape(shape)
        self._set(dims, T.contiguous_strides(dims), 0)

    # -- construction -------------------------------------------------------

    def _set(self, shape: tuple[int, ...], stride: tuple[int, ...], offset: int) -> None:
        # The one place derived fields are computed, and the int64 range checked (O(rank)).
        adj = T.adj_strides(shape, stride)
        length = T.prod(shape)
        T.check_in_range(shape, stride, adj, offset, length)
        object.__setattr__(self, "_shape", shape)
        object.__setattr__(self, "_stride", stride)
        object.__setattr__(self, "_adj_stride", adj)
        object.__setattr__(self, "_offset", offset)
        object.__setattr__(self, "_len", length)

    @classmethod
    def _make(cls, shape: tuple[int, ...], stride: tuple[int, ...], offset: int) -> Layout:
        """The factory every layout is built through (`__init__` shares its `_set`)."""
        layout = object.__new__(cls)
        layout._set(tuple(shape), tuple(stride), offset)
        return layout

    _derive = _make  # what a word (candela.words) derives a layout with

    @classmethod
    def contiguous(cls, shape: T.ShapeLike) -> Layout:
        """Row-major layout of `shape`; the same as ``Layout(shape)``.

        >>> Layout.contiguous((2, 3)) == Layout((2, 3))
        True
        """
        return cls(shape)

    @classmethod
    def empty(cls) -> Layout:
        """The empty layout: shape ``(0,)``, len 0.

        >>> Layout.empty().is_empty(), Layout.empty().shape
        (True, (0,))
        """
        return cls((0,))

    @classmethod
    def from_strided(cls, shape: T.ShapeLike, stride: T.ShapeLike, offset: int = 0) -> Layout:
        """A layout with an explicit stride (negative and zero allowed) and offset.

        adj_stride and len are derived. Refused (`InvalidShape`): a stride of
        another rank, a negative offset, a number outside int64, or a stride
        and offset that reach a position outside ``0 .. 2**63-1``.

        >>> Layout.from_strided((2, 3), (1, 2)).adj_stride
        (-3, 2)
        >>> Layout.from_strided((3,), (-1,), 2).positions().tolist()
        [2, 1, 0]
        """
        dims = T.check_shape(shape)
        strides = T.check_stride(stride, dims)
        return cls._make(dims, strides, T.check_offset(offset))

    @classmethod
    def from_raw_parts(
        cls,
        shape: Sequence[int],
        stride: Sequence[int],
        adj_stride: Sequence[int],
        offset: int,
        len: int,
    ) -> Layout:
        """Assemble a layout from fields already worked out, trusting they agree.

        The escape hatch: the fields are not checked against each other, nor
        for positions below 0. But nothing it holds can wrap: a number
        outside int64, or a position it reaches outside int64, is
        `InvalidShape`, as everywhere.

        >>> Layout.from_raw_parts((2, 3), (3, 1), (1, 1), 0, 6) == Layout((2, 3))
        True
        """
        fields = (
            tuple(T.as_int(v, "size") for v in shape),
            tuple(T.as_int(v, "stride") for v in stride),
            tuple(T.as_int(v, "adj_stride") for v in adj_stride),
            T.as_int(offset, "offset"),
            T.as_int(len, "len"),
        )
        T.check_in_range(*fields, lowest=T.INT64_MIN)
        layout = object.__new__(cls)
        for name, value in zip(("_shape", "_stride", "_adj_stride", "_offset", "_len"), fields):
            object.__setattr__(layout, name, value)
        return layout

    def with_offset(self, offset: int) -> Layout:
        """This layout starting at another buffer position.

        >>> Layout(4).with_offset(3).offset
        3
        """
        return self._make(self._shape, self._stride, T.check_offset(offset))

    # -- fields -------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each axis."""
        return self._shape

    @property
    def stride(self) -> tuple[int, ...]:
        """Buffer elements to step to advance one index along each axis."""
        return self._stride

    @property
    def adj_stride(self) -> tuple[int, ...]:
        """The delta added to the position when each axis is the innermost that steps."""
        return self._adj_stride

    @property
    def offset(self) -> int:
        """The buffer position of the first element."""
        return self._offset

    @property
    def len(self) -> int:
        """The number of elements: the product of the shape."""
        return self._len

    @property
    def rank(self) -> int:
        """The number of axes."""
        return len(self._shape)

    def __len__(self) -> int:
        return self._len

    def is_empty(self) -> bool:
        """True when the layout has no elements."""
        return self._len == 0

    # -- value semantics ----------------------------------------------------

    def _key(self) -> tuple:
        return (self._shape, self._stride, self._adj_stride, self._offset, self._len)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Layout is immutable: cannot set {name!r}")

    def __reduce__(self):
        return (Layout.from_raw_parts, self._key())

    def __repr__(self) -> str:
        return (
            f"Layout(shape={self._shape}, stride={self._stride}, "
            f"adj_stride={self._adj_stride}, offset={self._offset}, len={self._len})"
        )

    def __str__(self) -> str:
        """``shape:stride`` and the offset, in one line.

        >>> print(Layout((3, 4)).transpose())
        (4, 3):(1, 4) offset 0
        """
        return f"{self._shape}:{self._stride} offset {self._offset}"

    # -- zero-copy derivations ----------------------------------------------

    def view(self, *shape: int | Sequence[int]) -> Layout:
        """The same elements as another shape (a reshape). Needs a contiguous layout.

        The shape is one tuple or separate sizes (``view(3, -1)``). One size
        may be ``-1``: it is inferred from the others, as NumPy and PyTorch
        do. The element count is checked first, then contiguity; the result
        has contiguous strides at the same offset.

        >>> Layout((2, 3)).view((3, -1)).shape, Layout((2, 3)).view(3, 2).shape
        ((3, 2), (3, 2))
        >>> Layout((2, 3)).view((4, 4))
        Traceback (most recent call last):
        ...
        candela.errors.InvalidViewShape: cannot view 6 elements as shape (4, 4) (16 elements)
        """
        dims = T.check_view_shape(T.one_or_many(shape), self._len)
        if not self.is_contiguous():
            raise NonContiguousView(
                f"cannot view a non-contiguous layout (shape {self._shape}, stride "
                f"{self._stride}) as {dims}: make it contiguous first (as_contiguous)",
                shape=dims,
                layout=self,
            )
        return self._make(dims, T.contiguous_strides(dims), self._offset)

    def slice(self, ranges: RangesLike) -> Layout:
        """The sub-region one `SliceRange` per leading axis selects; the rank is kept.

        Missing ranges take their axis in full; a bare integer keeps its axis
        with size 1; a step multiplies the stride, and the offset moves to the
        first selected element (so a negative step is a zero-copy flip). A
        stride so multiplied past int64 is refused (`InvalidShape`), even on
        an axis left with one element.

        >>> from candela import s
        >>> sub = Layout((4, 6)).slice(s[1:3, ::-2])
        >>> sub.shape, sub.stride, sub.offset
        ((2, 3), (6, -2), 11)
        """
        return self._make(*sliced(self._shape, self._stride, self._offset, ranges))

    def narrow(self, dim: int, start: int, length: int) -> Layout:
        """`length` elements of axis `dim` from `start`: ``slice`` of ``start:start+length``.

        A negative `dim` or `start` counts from the end.

        >>> n = Layout((4, 6)).narrow(1, 2, 3)
        >>> n.shape, n.offset
        ((4, 3), 2)
        """
        axis = T.canonical_axis(dim, self.rank, "narrow axis")
        begin, count = narrow_range(dim, start, length, axis, self._shape[axis])
        shape = self._shape[:axis] + (count,) + self._shape[axis + 1 :]
        return self._make(shape, self._stride, self._offset + begin * self._stride[axis])

    def transpose(self, *axes: int | Sequence[int]) -> Layout:
        """Reverse every axis; or swap two (seed 003, PyTorch); or NumPy's permutation.

        - no axes: every axis reversed (``.T``);
        - two separate axes: their swap, on every rank, as seed 003's
          ``transpose(dim0, dim1)`` and PyTorch's (``swapaxes``); the same axis
          twice changes nothing;
        - one tuple (``transpose((2, 0, 1))``), or every axis listed separately on
          a layout of rank other than 2 (``transpose(2, 0, 1)``): NumPy's
          permutation, as `transpose_axes`.

        >>> Layout((2, 3, 4)).transpose().shape, Layout((2, 3, 4)).transpose(2, 0, 1).shape
        ((4, 3, 2), (4, 2, 3))
        >>> Layout((2, 3, 4)).transpose(0, 2).stride, Layout((2, 3)).transpose(0, 1).stride
        ((1, 4, 12), (1, 3))
        """
        if not axes:
            return self._make(self._shape[::-1], self._stride[::-1], self._offset)
        given = T.one_or_many(axes)
        if given is not axes:
            return self.transpose_axes(given)  # type: ignore[arg-type]
        if len(axes) == 2:  # seed 003's swap
            a, b = (T.canonical_axis(d, self.rank, "transpose axis") for d in axes)
            return self._permute(T.swapped_axes(self.rank, a, b))
        if len(axes) == self.rank:
            return self.transpose_axes(axes)  # type: ignore[arg-type]
        raise NotEnoughAxes(
            f"transpose({', '.join(map(str, axes))}): give no axes (reverse them all), two to "
            f"swap (as seed 003 and PyTorch) or all {T.count(self.rank, 'axis', 'axes')} "
            f"(a permutation, as NumPy), got {T.count(len(axes), 'axis', 'axes')}",
            axes=axes,
            rank=self.rank,
        )

    def transpose_axes(self, axes: Sequence[int]) -> Layout:
        """Reorder the axes: axis ``i`` of the result is axis ``axes[i]`` of this one.

        >>> Layout((1, 2, 3)).transpose_axes((0, 2, 1)).shape
        (1, 3, 2)
        """
        return self._permute(T.check_permutation(axes, self.rank))

    def _permute(self, perm: Sequence[int]) -> Layout:
        return self._make(
            tuple(self._shape[a] for a in perm), tuple(self._stride[a] for a in perm), self._offset
        )

    def broadcast(self, shape: T.ShapeLike) -> Layout:
        """Expand to `shape` by NumPy's right-aligned rules, faking repeats with stride 0.

        >>> b = Layout((4,)).broadcast((3, 4))
        >>> b.stride, b.adj_stride
        ((0, 1), (-3, 1))
        >>> Layout((3,)).broadcast((3, 2))
        Traceback (most recent call last):
        ...
        candela.errors.CannotBroadcast: cannot broadcast shape (3,) to (3, 2): axis 1 has size 3, which is neither 2 nor 1
        """
        target = T.check_shape(shape)
        return self._make(
            target, T.broadcast_strides(self._shape, self._stride, target), self._offset
        )

    def rotate_axis_innermost(self, axis: int) -> Layout:
        """Rotate the axes to ``[axis+1, .., rank-1, 0, .., axis]``: `axis` becomes innermost.

        >>> Layout((2, 3, 4)).rotate_axis_innermost(0).shape
        (3, 4, 2)
        """
        a = T.canonical_axis(axis, self.rank, "rotate axis")
        return self._permute(list(range(a + 1, self.rank)) + list(range(a + 1)))

    def shape_as_3d(self) -> tuple[int, int, int]:
        """``(batch, rows, cols)``: the last two axes, and all above them folded into batch.

        >>> Layout(5).shape_as_3d(), Layout((6, 2, 3, 4)).shape_as_3d()
        ((1, 1, 5), (12, 3, 4))
        """
        padded = (1, 1) + self._shape
        return (T.prod(padded[:-2]), padded[-2], padded[-1])

    # -- flags ----------------------------------------------------------------

    def _block_contiguous(self, first_axis: int) -> bool:
        # Axes first_axis.. walked inward must step by exactly 1, 2, ... as row-major.
        expected = 1
        for d in range(self.rank - 1, first_axis - 1, -1):
            n = self._shape[d]
            if n == 1:
                continue  # never steps
            if self._stride[d] != expected:
                return False
            expected *= n
        return True

    def is_contiguous(self) -> bool:
        """True when a flat walk visits ``offset, offset+1, ..., offset+len-1`` in order.

        Axes of size 1 never step, and 0 or 1 elements are contiguous.

        >>> Layout((3, 4)).is_contiguous(), Layout((3, 4)).transpose().is_contiguous()
        (True, False)
        """
        return self._len <= 1 or self._block_contiguous(0)

    def is_contiguous_at_axis(self, axis: int) -> bool:
        """Like `is_contiguous` for the block of axes `axis` inward; False out of range.

        >>> l = Layout((4, 6)).narrow(1, 1, 3)  # each row keeps 3 of its 6: rows are apart
        >>> l.is_contiguous(), l.is_contiguous_at_axis(1), Layout((2, 3)).is_contiguous_at_axis(9)
        (False, True, False)
        """
        a = self._axis_or_none(axis)
        if a is None:
            return False
        return self._len == 0 or self._block_contiguous(a)

    def _axis_or_none(self, axis: int) -> int | None:
        try:
            return T.canonical_axis(axis, self.rank)
        except AxesOutOfBounds:
            return None

    def _runs_backwards(self, axis: int) -> bool:
        return (
            self._len > 0
            and self._shape[axis] > 1
            and self._stride[axis] != 0
            and self._adj_stride[axis] < 0
        )

    def is_transposed(self) -> bool:
        """True when some axis that steps runs backwards (adj_stride < 0) and is not broadcast.

        >>> Layout((3, 4)).is_transposed(), Layout((3, 4)).transpose().is_transposed()
        (False, True)
        >>> Layout((4,)).broadcast((3, 4)).is_transposed()  # a broadcast restart is no transpose
        False
        """
        return any(self._runs_backwards(d) for d in range(self.rank))

    def is_transposed_at_axis(self, axis: int) -> bool:
        """Like `is_transposed` for one axis; False out of range.

        >>> t = Layout((3, 4)).transpose()
        >>> t.is_transposed_at_axis(0), t.is_transposed_at_axis(1), t.is_transposed_at_axis(9)
        (True, False, False)
        """
        a = self._axis_or_none(axis)
        return a is not None and self._runs_backwards(a)

    def is_last_axes_transposed(self) -> bool:
        """A 2-D layout with row stride 1 and column stride > 1 (BLAS's transpose flag).

        A stride rule, not a property of the walk; False for any other rank.

        >>> Layout((3, 4)).transpose().is_last_axes_transposed(), Layout((3, 4)).is_last_axes_transposed()
        (True, False)
        """
        return self.rank == 2 and self._stride[0] == 1 and self._stride[1] > 1

    # -- addressing and traversal -------------------------------------------

    def flat_index(self, index: Sequence[int]) -> int:
        """``offset + sum(i * stride)``: the buffer position of one element.

        A negative index counts from the end of its axis, as NumPy's does.

        >>> Layout((3, 4)).transpose().flat_index((2, 1))
        6
        """
        idx = check_index(index, self._shape)
        return self._offset + sum(i * st for i, st in zip(idx, self._stride))

    def walk(self) -> Iterator[Step]:
        """Each element in logical order, with how the running position reached it.

        An odometer: the innermost axis that has not reached its end steps,
        the axes inside it wrap to 0, and the position takes ``adj_stride`` of
        the axis that stepped. No multiplication per element.

        >>> for step in Layout((2, 2)).transpose().walk():
        ...     print(step.index, step.position, step.axis, step.delta)
        (0, 0) 0 None 0
        (0, 1) 2 1 2
        (1, 0) 1 0 -1
        (1, 1) 3 1 2
        """
        if self._len == 0:
            return
        shape, adj = self._shape, self._adj_stride
        last = self.rank - 1
        counter = [0] * self.rank
        position = self._offset
        yield Step(tuple(counter), position, None, 0)
        while True:
            d = last
            while counter[d] == shape[d] - 1:
                if d == 0:
                    return
                counter[d] = 0
                d -= 1
            counter[d] += 1
            position += adj[d]
            yield Step(tuple(counter), position, d, adj[d])

    def strided_indices(self) -> Iterator[int]:
        """Buffer positions in logical order, by the adj_stride walk.

        >>> list(Layout((2, 3)).transpose().strided_indices())
        [0, 3, 1, 4, 2, 5]
        """
        if self._len == 0:
            return
        shape, adj = self._shape, self._adj_stride
        last = self.rank - 1
        inner_n, inner_adj = shape[last], adj[last]
        counter = [0] * self.rank
        position = self._offset
        while True:
            # The innermost axis runs as a plain loop; outer axes step as an odometer.
            for _ in range(inner_n - 1):
                yield position
                position += inner_adj
            yield position
            d = last - 1
            while d >= 0 and counter[d] == shape[d] - 1:
                counter[d] = 0
                d -= 1
            if d < 0:
                return
            counter[d] += 1
            position += adj[d]

    def positions(self) -> np.ndarray:
        """Buffer positions in logical order, as a NumPy int64 array (vectorised).

        Built outward from the innermost axis with ``np.add.outer``, after
        merging the axes that walk as one; broadcast axes are replicated by
        NumPy rather than computed. The output is written once.

        >>> Layout((2, 3)).transpose().positions()
        array([0, 3, 1, 4, 2, 5])
        """
        if self._len == 0:
            return np.empty(0, dtype=np.int64)
        shape, stride = T.coalesce(self._shape, self._stride)
        # Broadcast axes (stride 0) repeat what is inside them: compute the rest,
        # then let NumPy replicate it (a plain copy, cheaper than adding zeros).
        moving = [(n, st) for n, st in zip(shape, stride) if st != 0]
        if not moving:
            return np.full(self._len, self._offset, dtype=np.int64)
        inner = _outer_positions([n for n, _ in moving], [st for _, st in moving], self._offset)
        if len(moving) == len(shape):
            return inner
        keep = [n if st != 0 else 1 for n, st in zip(shape, stride)]
        return np.broadcast_to(inner.reshape(keep), shape).reshape(-1)

    def cost(self, itemsize: int, unit: int = 64, warp: int | None = None) -> Cost:
        """What the walk costs in memory units of `unit` bytes: see `candela.cost`.

        An element at position ``p`` lies in unit ``p * itemsize // unit``;
        the `Cost` counts the distinct units (``units``), the times the walk
        enters one (``unit_entries``), bytes moved and used, and with `warp`
        the mean distinct units per group of `warp` consecutive elements.

        >>> Layout((64, 64)).cost(4).units, Layout((64, 64)).cost(4).unit_entries
        (256, 256)
        >>> c = Layout((64, 64)).T.cost(4, warp=32)
        >>> c.units, c.unit_entries, c.units_per_request
        (256, 4096, 32.0)
        """
        from .cost import walk_cost

        return walk_cost(self, itemsize, unit, warp)


def _outer_positions(shape: Sequence[int], stride: Sequence[int], offset: int) -> np.ndarray:
    """``offset + sum(i * stride)`` in row-major order, built outward with ``np.add.outer``."""
    if len(shape) == 1 and stride[0] == 1:
        return np.arange(offset, offset + shape[0], dtype=np.int64)
    out = np.arange(shape[-1], dtype=np.int64) * stride[-1] + offset
    for n, st in zip(reversed(shape[:-1]), reversed(stride[:-1])):
        out = np.add.outer(np.arange(n, dtype=np.int64) * st, out).reshape(-1)
    return out
