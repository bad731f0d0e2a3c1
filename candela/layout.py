"""`Layout`: how a tensor's logical shape maps onto its flat buffer.

A layout is an immutable value: shape, stride, adj_stride, offset and len.
Every derivation (view, slice, narrow, transpose, transpose_axes, broadcast,
rotate_axis_innermost, and NumPy's and PyTorch's words: reshape, permute,
flip, unsqueeze, squeeze, expand, T, mT, swapaxes, moveaxis, select,
flatten, diagonal, unfold, as_strided, and `subscript`, a NumPy subscript)
returns a new layout and copies nothing. A shape or a list of axes is taken
either way, as NumPy and PyTorch do: ``reshape(2, 6)`` or ``reshape((2, 6))``. Layouts are built in one place, `Layout._make`, which derives
adj_stride and len from shape and stride and refuses any number outside
int64 or any position outside ``0 .. 2**63-1`` (in O(rank)), so a layout can
never be internally inconsistent and nothing it computes can wrap (except
through the `from_raw_parts` escape hatch, which trusts its caller on
consistency but not on range).

The flags are exact and cost O(rank): they answer what the walk does, and the
tests prove each against a brute-force walk.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from . import tuples as T
from .errors import (
    AxesOutOfBounds,
    CannotBroadcast,
    IndexOutOfBounds,
    InvalidShape,
    NonContiguousView,
    NotEnoughAxes,
    RepeatedAxes,
    SliceOutOfBounds,
)
from .slicing import RangesLike, format_ranges, format_subscript, resolve_range, to_ranges

if TYPE_CHECKING:
    from .cost import Cost

__all__ = ["Layout", "Step"]


class Step(NamedTuple):
    """One step of the walk: the element reached and how the position got there."""

    index: tuple[int, ...]  # the multi-index of the element
    position: int  # its position in the buffer
    axis: int | None  # the axis that stepped; None for the first element
    delta: int  # what was added to the position: adj_stride[axis] (0 for the first)


class Layout:
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

    @property
    def dims(self) -> tuple[int, ...]:
        """The shape (the second library's name for it)."""
        return self._shape

    @property
    def elem_count(self) -> int:
        """The number of elements (the second library's name for `len`)."""
        return self._len

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

    def reshape(self, *shape: int | Sequence[int]) -> Layout:
        """The same as `view` on a layout (a `Tensor` may copy where a view cannot).

        >>> Layout((2, 3)).reshape(-1).shape, Layout((2, 3)).reshape(1, 6).shape
        ((6,), (1, 6))
        """
        return self.view(*shape)

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
        rs = to_ranges(ranges)
        if len(rs) > self.rank:
            raise AxesOutOfBounds(
                f"{format_ranges(rs)} has {T.count(len(rs), 'range', 'ranges')} but the layout "
                f"has {T.count(self.rank, 'axis', 'axes')}",
                ranges=rs,
                rank=self.rank,
            )
        shape = list(self._shape)
        stride = list(self._stride)
        offset = self._offset
        for axis, r in enumerate(rs):
            start, size, step = resolve_range(r, self._shape[axis], axis)
            offset += start * self._stride[axis]
            shape[axis] = size
            stride[axis] = self._stride[axis] * step
        return self._make(tuple(shape), tuple(stride), offset)

    def narrow(self, dim: int, start: int, length: int) -> Layout:
        """`length` elements of axis `dim` from `start`: ``slice`` of ``start:start+length``.

        A negative `dim` or `start` counts from the end.

        >>> n = Layout((4, 6)).narrow(1, 2, 3)
        >>> n.shape, n.offset
        ((4, 3), 2)
        """
        axis = T.canonical_axis(dim, self.rank, "narrow axis")
        n = self._shape[axis]
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
        if len(axes) == 2:
            return self._swap(*axes, what="transpose axis")  # type: ignore[misc]
        if len(axes) == self.rank:
            return self.transpose_axes(axes)  # type: ignore[arg-type]
        raise NotEnoughAxes(
            f"transpose({', '.join(map(str, axes))}): give no axes (reverse them all), two to "
            f"swap (as seed 003 and PyTorch) or all {T.count(self.rank, 'axis', 'axes')} "
            f"(a permutation, as NumPy), got {T.count(len(axes), 'axis', 'axes')}",
            axes=axes,
            rank=self.rank,
        )

    def swapaxes(self, axis1: int, axis2: int) -> Layout:
        """Swap two axes (NumPy's ``swapaxes``, PyTorch's two-axis ``transpose``).

        >>> Layout((2, 3, 4)).swapaxes(0, -1).stride
        (1, 4, 12)
        """
        return self._swap(axis1, axis2, what="swapaxes axis")

    def _swap(self, axis1: int, axis2: int, what: str) -> Layout:
        a = T.canonical_axis(axis1, self.rank, what)
        b = T.canonical_axis(axis2, self.rank, what)
        axes = list(range(self.rank))
        axes[a], axes[b] = axes[b], axes[a]
        return self._permute(axes)

    def moveaxis(self, source: int | Sequence[int], destination: int | Sequence[int]) -> Layout:
        """Move axes to new places; the others keep their order (NumPy's ``moveaxis``).

        `source` and `destination` are an int each or sequences of the same
        length; negative axes count from the end. A repeated axis is
        `RepeatedAxes`, sequences of different lengths `NotEnoughAxes`.

        >>> Layout((2, 3, 4)).moveaxis(0, -1).shape, Layout((2, 3, 4)).moveaxis((0, 1), (2, 0)).shape
        ((3, 4, 2), (3, 4, 2))
        """
        src = T.check_axes(source, self.rank, "moveaxis source")
        dst = T.check_axes(destination, self.rank, "moveaxis destination")
        if len(src) != len(dst):
            raise NotEnoughAxes(
                f"moveaxis source {source} and destination {destination} must name as many "
                f"axes each, got {len(src)} and {len(dst)}",
                source=source,
                destination=destination,
            )
        return self._permute(T.moved_axes(self.rank, src, dst))

    def movedim(self, source: int | Sequence[int], destination: int | Sequence[int]) -> Layout:
        """PyTorch's name for `moveaxis`.

        >>> Layout((2, 3, 4)).movedim(-1, 0).shape
        (4, 2, 3)
        """
        return self.moveaxis(source, destination)

    def select(self, dim: int, index: int) -> Layout:
        """The sub-layout at `index` of axis `dim`, that axis dropped (PyTorch's ``select``).

        ``select(d, i)`` is NumPy's ``a[:, .., i]`` (`i` on axis `d`). A
        negative `dim` or `index` counts from the end. candela has no rank 0:
        selecting from a rank-1 layout keeps one axis of size 1.

        >>> Layout((3, 4)).select(1, -1).shape, Layout((3, 4)).select(1, -1).offset
        ((3,), 3)
        """
        a = T.canonical_axis(dim, self.rank, "select dim")
        n = self._shape[a]
        i = T.as_int(index, "select index")
        if not -n <= i < n:
            raise IndexOutOfBounds(
                f"select index {i} is out of range for axis {a} of size {n}",
                index=i,
                axis=a,
                size=n,
            )
        offset = self._offset + (i % n) * self._stride[a]
        if self.rank == 1:
            return self._make((1,), self._stride, offset)
        return self._make(
            self._shape[:a] + self._shape[a + 1 :], self._stride[:a] + self._stride[a + 1 :], offset
        )

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Layout:
        """Axes `start_dim` .. `end_dim` (all, by default) merged into one, zero-copy.

        NumPy's ``ravel`` (and PyTorch's ``flatten``) on a layout: a view
        wherever strides can walk the merged axes in order (NumPy's
        ``reshape`` rule, wider than `view`'s), else `NonContiguousView`;
        a `Tensor` copies there instead, as NumPy and PyTorch do.

        >>> from candela import s
        >>> Layout((2, 3, 4)).flatten(1).shape, Layout((4, 6)).slice(s[:, ::2]).flatten(1).stride
        ((2, 12), (6, 2))
        """
        target = self._flattened(start_dim, end_dim)
        if self.is_contiguous():
            return self.view(target)
        stride = T.nocopy_reshape_strides(self._shape, self._stride, target)
        if stride is None:
            raise NonContiguousView(
                f"cannot flatten shape {self._shape} with stride {self._stride} to {target} "
                "without a copy: its axes do not walk in row-major order (as_contiguous first)",
                shape=target,
                layout=self,
            )
        return self._make(target, stride, self._offset)

    def ravel(self) -> Layout:
        """NumPy's name for `flatten` of every axis.

        >>> Layout((2, 3)).ravel().shape
        (6,)
        """
        return self.flatten()

    def _flattened(self, start_dim: int, end_dim: int) -> tuple[int, ...]:
        a = T.canonical_axis(start_dim, self.rank, "flatten start_dim")
        b = T.canonical_axis(end_dim, self.rank, "flatten end_dim")
        if a > b:
            raise AxesOutOfBounds(
                f"flatten start_dim {start_dim} (axis {a}) comes after end_dim {end_dim} "
                f"(axis {b})",
                axis=a,
                rank=self.rank,
            )
        return self._shape[:a] + (T.prod(self._shape[a : b + 1]),) + self._shape[b + 1 :]

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Layout:
        """Axis `dim` split into axes of `sizes` (one may be ``-1``): always zero-copy.

        PyTorch's ``unflatten``; the split axes walk as the one they replace did.

        >>> Layout((2, 6)).unflatten(1, (2, -1)).shape, Layout((6, 2)).transpose().unflatten(1, (3, 2)).stride
        ((2, 2, 3), (1, 4, 2))
        """
        d = T.canonical_axis(dim, self.rank, "unflatten axis")
        if isinstance(sizes, int) or not isinstance(sizes, Sequence):
            sizes = (sizes,)  # type: ignore[assignment]
        dims = T.check_view_shape(tuple(sizes), self._shape[d])
        # the split axes walk as the one they replace: its stride times a row-major count
        split = tuple(c * self._stride[d] for c in T.contiguous_strides(dims))
        shape = self._shape[:d] + dims + self._shape[d + 1 :]
        return self._make(shape, self._stride[:d] + split + self._stride[d + 1 :], self._offset)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Layout:
        """The diagonal of axes `dim1`, `dim2` as one axis appended last (NumPy's, PyTorch's).

        Its stride is ``stride[dim1] + stride[dim2]``; `offset` > 0 starts
        above the main diagonal (at ``(0, offset)``), < 0 below it. A
        diagonal outside the matrix is an axis of size 0.

        >>> d = Layout((3, 4)).diagonal()
        >>> d.shape, d.stride, Layout((3, 4)).diagonal(1).positions().tolist()
        ((3,), (5,), [1, 6, 11])
        """
        if self.rank < 2:
            raise NotEnoughAxes(
                f"diagonal needs 2 axes at least, the layout has "
                f"{T.count(self.rank, 'axis', 'axes')}",
                rank=self.rank,
            )
        a = T.canonical_axis(dim1, self.rank, "diagonal dim1")
        b = T.canonical_axis(dim2, self.rank, "diagonal dim2")
        if a == b:
            raise RepeatedAxes(
                f"diagonal dim1 {dim1} and dim2 {dim2} are the same axis {a}",
                axes=(dim1, dim2),
                axis=a,
                rank=self.rank,
            )
        k = T.as_int(offset, "diagonal offset")
        i, j, length = T.diagonal_start(self._shape, k, a, b)
        keep = [d for d in range(self.rank) if d not in (a, b)]
        return self._make(
            tuple(self._shape[d] for d in keep) + (length,),
            tuple(self._stride[d] for d in keep) + (self._stride[a] + self._stride[b],),
            self._offset + i * self._stride[a] + j * self._stride[b],
        )

    def unfold(self, dim: int, size: int, step: int) -> Layout:
        """PyTorch's sliding windows: axis `dim` becomes the windows, a last axis of `size`.

        Axis `dim` of size n becomes ``(n - size) // step + 1`` windows with
        its stride times `step`; a new last axis of `size` keeps its old
        stride. NumPy's ``sliding_window_view(a, size, axis=dim)`` is the
        same for `step` 1. `size` beyond the axis, or `step` < 1, is
        `InvalidShape`.

        >>> w = Layout(6).unfold(0, 3, 2)
        >>> w.shape, w.stride, w.positions().tolist()
        ((2, 3), (2, 1), [0, 1, 2, 2, 3, 4])
        """
        a = T.canonical_axis(dim, self.rank, "unfold dim")
        n = self._shape[a]
        width = T.as_int(size, "unfold size")
        hop = T.as_int(step, "unfold step")
        if not 0 <= width <= n or hop < 1:
            raise InvalidShape(
                f"unfold(dim={dim}, size={size}, step={step}) does not fit axis {a} of size {n}: "
                f"it needs 0 <= size <= {n} and step >= 1",
                axis=a,
                size=width,
                step=hop,
            )
        return self._make(
            self._shape[:a] + ((n - width) // hop + 1,) + self._shape[a + 1 :] + (width,),
            self._stride[:a]
            + (self._stride[a] * hop,)
            + self._stride[a + 1 :]
            + (self._stride[a],),
            self._offset,
        )

    def as_strided(
        self, shape: T.ShapeLike, stride: T.ShapeLike, offset: int | None = None
    ) -> Layout:
        """Any shape and stride over the same buffer, from `offset` (this one's, by default).

        NumPy's ``as_strided`` and PyTorch's: nothing is checked but range. A
        position outside ``0 .. 2**63-1`` is `InvalidShape` naming it; a
        `Tensor` refuses any position outside its buffer.

        >>> Layout(6).as_strided((4, 3), (1, 1)).positions().tolist()[:6]
        [0, 1, 2, 1, 2, 3]
        >>> Layout(6).as_strided((2,), (-1,))
        Traceback (most recent call last):
        ...
        candela.errors.InvalidShape: shape (2,) with stride (-1,) and offset 0 reaches position -1: positions must be >= 0 (raise the offset)
        """
        dims = T.check_shape(shape)
        strides = T.check_stride(stride, dims)
        start = self._offset if offset is None else T.check_offset(offset)
        return self._make(dims, strides, start)

    def subscript(self, key: object) -> Layout:
        """What NumPy's ``a[key]`` selects (basic indexing), zero-copy.

        An integer selects and drops its axis, a slice keeps it (bounds
        clipped, as Python's; a negative step flips), ``None`` inserts an
        axis of size 1, ``...`` stands for the axes not named. Unlike `slice`
        (candela's rule: an integer keeps its axis). candela has no rank 0:
        a key that drops every axis leaves one of size 1.

        >>> l = Layout((3, 4))
        >>> l.subscript((slice(1, None), slice(None, None, -2))).positions().tolist()
        [7, 5, 11, 9]
        >>> l.subscript((Ellipsis, 0)).shape, l.subscript((None, 1)).shape
        ((3,), (1, 4))
        """
        items = key if isinstance(key, tuple) else (key,)
        named = sum(1 for k in items if k is not None and k is not Ellipsis)
        if sum(1 for k in items if k is Ellipsis) > 1:
            raise IndexOutOfBounds(
                f"subscript {format_subscript(items)} has more than one `...`", index=key
            )
        if named > self.rank:
            raise IndexOutOfBounds(
                f"subscript {format_subscript(items)} names {T.count(named, 'axis', 'axes')} but the "
                f"layout has {T.count(self.rank, 'axis', 'axes')}",
                index=key,
                rank=self.rank,
            )
        if Ellipsis not in items:
            items = items + (Ellipsis,)
        shape: list[int] = []
        stride: list[int] = []
        offset = self._offset
        axis = 0
        for k in items:
            if k is None:
                shape.append(1)
                stride.append(
                    self._stride[axis] * max(self._shape[axis], 1) if axis < self.rank else 1
                )
            elif k is Ellipsis:
                for _ in range(self.rank - named):
                    shape.append(self._shape[axis])
                    stride.append(self._stride[axis])
                    axis += 1
            elif isinstance(k, slice):
                n, st = self._shape[axis], self._stride[axis]
                try:
                    picked = range(n)[k]
                except (TypeError, ValueError) as error:
                    raise SliceOutOfBounds(
                        f"slice {format_subscript((k,))} on axis {axis}: {error}", axis=axis, key=k
                    ) from None
                if len(picked):
                    offset += picked.start * st
                shape.append(len(picked))
                stride.append(st * picked.step)
                axis += 1
            else:
                n = self._shape[axis]
                i = T.as_int(k, "an index")
                if not -n <= i < n:
                    raise IndexOutOfBounds(
                        f"index {i} is out of range for axis {axis} of size {n}",
                        index=i,
                        axis=axis,
                        size=n,
                    )
                offset += (i % n) * self._stride[axis]
                axis += 1
        if not shape:  # every axis dropped: the last stays, with size 1 (as `select` keeps it)
            return self._make((1,), self._stride[-1:], offset)
        return self._make(tuple(shape), tuple(stride), offset)

    def transpose_axes(self, axes: Sequence[int]) -> Layout:
        """Reorder the axes: axis ``i`` of the result is axis ``axes[i]`` of this one.

        >>> Layout((1, 2, 3)).transpose_axes((0, 2, 1)).shape
        (1, 3, 2)
        """
        if isinstance(axes, (str, bytes)) or not hasattr(axes, "__len__"):
            raise NotEnoughAxes(
                f"axes must be a sequence of {T.count(self.rank, 'axis', 'axes')}, got {axes!r}",
                axes=axes,
            )
        given = tuple(axes)
        if len(given) != self.rank:
            raise NotEnoughAxes(
                f"axes {given} has {T.count(len(given), 'entry', 'entries')} but the layout has "
                f"{T.count(self.rank, 'axis', 'axes')}",
                axes=given,
                rank=self.rank,
            )
        perm = [T.canonical_axis(a, self.rank, f"axis in {given}") for a in given]
        if len(set(perm)) != len(perm):
            repeated = sorted({a for a in perm if perm.count(a) > 1})
            raise AxesOutOfBounds(
                f"axes {given} is not a permutation: axis {repeated[0]} appears more than once",
                axes=given,
                axis=repeated[0],
                rank=self.rank,
            )
        return self._permute(perm)

    def _permute(self, perm: Sequence[int]) -> Layout:
        return self._make(
            tuple(self._shape[a] for a in perm), tuple(self._stride[a] for a in perm), self._offset
        )

    def permute(self, *axes: int | Sequence[int]) -> Layout:
        """PyTorch's name for `transpose_axes`: ``permute(1, 0)`` or ``permute((1, 0))``.

        >>> Layout((2, 3, 4)).permute(2, 0, 1).shape, Layout((2, 3)).permute((1, 0)).stride
        ((4, 2, 3), (1, 3))
        """
        given = axes[0] if len(axes) == 1 and hasattr(axes[0], "__len__") else axes
        return self.transpose_axes(given)  # type: ignore[arg-type]

    def flip(self, *axes: int | Sequence[int] | None) -> Layout:
        """Reverse the given axes (ints, or one tuple; none or None: every axis), zero-copy.

        Each flipped stride is negated and the offset moves to the old last
        element along that axis, as ``s[::-1]`` does. A repeated axis is
        `AxesOutOfBounds`, as NumPy refuses it.

        >>> f = Layout((3, 4)).flip(1)
        >>> f.stride, f.offset, f.positions().tolist()[:4]
        ((4, -1), 3, [3, 2, 1, 0])
        >>> Layout((3, 4)).flip(0, 1) == Layout((3, 4)).flip((0, 1)) == Layout((3, 4)).flip()
        True
        """
        given = None if axes in ((), (None,)) else T.one_or_many(axes)
        which = T.check_axes(given, self.rank, "flip axis")
        stride, offset = T.flipped(self._shape, self._stride, self._offset, which)
        return self._make(self._shape, stride, offset)

    def unsqueeze(self, axis: int) -> Layout:
        """Insert a size-1 axis at `axis` (``-1`` appends; valid: ``-rank-1 .. rank``).

        Its stride is the one a contiguous layout would give it: the stride
        times the size of the axis it lands before (a size 0 counted as 1),
        or 1 at the end. Should that product leave int64, the layout is
        refused (`InvalidShape`), as every layout is.

        >>> u = Layout((3, 4)).unsqueeze(1)
        >>> u.shape, u.stride, u == Layout((3, 1, 4))
        ((3, 1, 4), (4, 4, 1), True)
        """
        try:
            a = T.canonical_axis(axis, self.rank + 1, "unsqueeze axis")
        except AxesOutOfBounds as error:
            raise AxesOutOfBounds(
                f"unsqueeze axis {error.axis!r} is out of range for a layout of rank {self.rank} "
                f"(valid: {-self.rank - 1}..{self.rank})",
                axis=error.axis,
                rank=self.rank,
            ) from None
        stride = T.unsqueeze_stride(self._shape, self._stride, a)
        return self._make(
            self._shape[:a] + (1,) + self._shape[a:],
            self._stride[:a] + (stride,) + self._stride[a:],
            self._offset,
        )

    def squeeze(self, axes: int | Sequence[int] | None = None) -> Layout:
        """Drop size-1 axes: all of them, or the given ones (each must have size 1).

        candela has no rank 0: when every axis would go, the last of them stays.

        >>> Layout((1, 3, 1)).squeeze().shape, Layout((1, 3, 1)).squeeze(-1).shape
        ((3,), (1, 3))
        >>> Layout((1, 1)).squeeze().shape
        (1,)
        """
        if axes is None:
            drop = tuple(d for d, n in enumerate(self._shape) if n == 1)
        else:
            drop = T.check_axes(axes, self.rank, "squeeze axis")
            for a in drop:
                if self._shape[a] != 1:
                    raise InvalidShape(
                        f"cannot squeeze axis {a} of shape {self._shape}: its size is "
                        f"{self._shape[a]}, not 1",
                        shape=self._shape,
                        axis=a,
                    )
        if len(drop) == self.rank:
            drop = tuple(sorted(drop))[:-1]
        return self._permute([d for d in range(self.rank) if d not in drop])  # the kept axes

    def expand(self, *sizes: int | Sequence[int]) -> Layout:
        """PyTorch's broadcast: ``expand(3, -1)`` or ``expand((3, -1))``; -1 keeps a size.

        New axes go in front; a size-1 axis grows with stride 0; otherwise
        `broadcast`'s rules.

        >>> e = Layout((3, 1)).expand(2, -1, 4)
        >>> e.shape, e.stride
        ((2, 3, 4), (0, 1, 0))
        """
        given = sizes[0] if len(sizes) == 1 and hasattr(sizes[0], "__len__") else sizes
        return self.broadcast(T.check_expand_sizes(given, self._shape))

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
        extra = len(target) - self.rank
        if extra < 0:
            raise CannotBroadcast(
                f"cannot broadcast shape {self._shape} to {target}: the target has fewer axes",
                shape=self._shape,
                target=target,
            )
        stride = [0] * extra
        for axis, (n, st) in enumerate(zip(self._shape, self._stride)):
            t = target[extra + axis]
            if n == t:
                stride.append(st)
            elif n == 1:
                stride.append(0)
            else:
                raise CannotBroadcast(
                    f"cannot broadcast shape {self._shape} to {target}: axis {extra + axis} has "
                    f"size {n}, which is neither {t} nor 1",
                    shape=self._shape,
                    target=target,
                    axis=extra + axis,
                )
        return self._make(target, tuple(stride), self._offset)

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
        if isinstance(index, (str, bytes)) or not hasattr(index, "__len__"):
            index = (index,)  # type: ignore[assignment]
        idx = tuple(index)
        if len(idx) != self.rank:
            raise NotEnoughAxes(
                f"index {idx} has {T.count(len(idx), 'entry', 'entries')} but the layout has "
                f"{T.count(self.rank, 'axis', 'axes')}",
                index=idx,
                rank=self.rank,
            )
        position = self._offset
        for axis, (i, n, st) in enumerate(zip(idx, self._shape, self._stride)):
            if isinstance(i, bool):
                raise IndexOutOfBounds(
                    f"index {idx} has a bool on axis {axis}", index=idx, axis=axis
                )
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
            position += (k + n if k < 0 else k) * st
        return position

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

    # -- NumPy's and PyTorch's property names ---------------------------------
    # Last in the class: inside the class body the name T would otherwise hide
    # the module `tuples as T` from the annotations of every method after it.

    @property
    def T(self) -> Layout:
        """Every axis reversed: `transpose()`.

        >>> Layout((2, 3, 4)).T.shape
        (4, 3, 2)
        """
        return self.transpose()

    @property
    def mT(self) -> Layout:
        """The last two axes swapped: ``transpose(-2, -1)``; rank 2 at least.

        >>> Layout((5, 2, 3)).mT.shape
        (5, 3, 2)
        """
        if self.rank < 2:
            raise NotEnoughAxes(
                f"mT swaps the last two axes, but the layout has "
                f"{T.count(self.rank, 'axis', 'axes')}",
                rank=self.rank,
            )
        return self.swapaxes(-2, -1)


def _outer_positions(shape: Sequence[int], stride: Sequence[int], offset: int) -> np.ndarray:
    """``offset + sum(i * stride)`` in row-major order, built outward with ``np.add.outer``."""
    if len(shape) == 1 and stride[0] == 1:
        return np.arange(offset, offset + shape[0], dtype=np.int64)
    out = np.arange(shape[-1], dtype=np.int64) * stride[-1] + offset
    for n, st in zip(reversed(shape[:-1]), reversed(stride[:-1])):
        out = np.add.outer(np.arange(n, dtype=np.int64) * st, out).reshape(-1)
    return out
