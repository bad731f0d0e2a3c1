"""NumPy's and PyTorch's words for the moves of a layout, written once for `Layout` and `Tensor`.

`Layout` holds the algebra: its fields, the seed's moves (view, slice,
narrow, transpose, transpose_axes, broadcast, rotate_axis_innermost), its
flags and its walks. Everything NumPy and PyTorch users type on top of that
(reshape, permute, swapaxes, moveaxis, select, flatten, diagonal, unfold,
as_strided, a NumPy subscript, flip, unsqueeze, squeeze, expand, T, mT, ...)
is a word here, in the mixin class `Words`. A word uses only what `Layout`
and `Tensor` both have: the fields (shape, stride, offset, rank, len), the
algebra's moves, and ``_derive(shape, stride, offset)``, which returns the
same kind of object (a layout, or a tensor over the same buffer) with those
fields. So `Layout` and `Tensor` both inherit every word from here and name
none of them again; a tensor overrides only where its meaning differs
(``reshape`` and ``flatten`` copy where no view can say the result).

Another name for exactly one word is one line at the end of the class
(``movedim = moveaxis``): adding a spelling is adding that line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import tuples as T
from .errors import (
    AxesOutOfBounds,
    IndexOutOfBounds,
    InvalidShape,
    NonContiguousView,
    NotEnoughAxes,
    RepeatedAxes,
)
from .slicing import subscripted

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Words"]


class Words:
    """NumPy's and PyTorch's words, each over the algebra both `Layout` and `Tensor` have.

    >>> from candela import Layout, Tensor
    >>> t = Tensor.arange((2, 3))
    >>> t.permute(1, 0).layout == Layout((2, 3)).permute(1, 0)
    True
    """

    __slots__ = ()

    # -- reshaping ------------------------------------------------------------

    def reshape(self, *shape: int | Sequence[int]) -> Self:
        """The same as `view` on a layout (a `Tensor` may copy where a view cannot).

        >>> from candela import Layout
        >>> Layout((2, 3)).reshape(-1).shape, Layout((2, 3)).reshape(1, 6).shape
        ((6,), (1, 6))
        """
        return self.view(*shape)

    def _strided_reshape(self, dims: tuple[int, ...]) -> Self | None:
        # The same elements as `dims` by strides over the same memory (NumPy's rule), or None.
        if self.is_contiguous():
            return self.view(dims)
        stride = T.nocopy_reshape_strides(self.shape, self.stride, dims)
        return None if stride is None else self._derive(dims, stride, self.offset)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Self:
        """Axes `start_dim` .. `end_dim` (all, by default) merged into one, zero-copy.

        NumPy's ``ravel`` (and PyTorch's ``flatten``) on a layout: a view
        wherever strides can walk the merged axes in order (NumPy's
        ``reshape`` rule, wider than `view`'s), else `NonContiguousView`;
        a `Tensor` copies there instead, as NumPy and PyTorch do.

        >>> from candela import Layout, s
        >>> Layout((2, 3, 4)).flatten(1).shape, Layout((4, 6)).slice(s[:, ::2]).flatten(1).stride
        ((2, 12), (6, 2))
        """
        target = self._flattened(start_dim, end_dim)
        out = self._strided_reshape(target)
        if out is None:
            raise NonContiguousView(
                f"cannot flatten shape {self.shape} with stride {self.stride} to {target} "
                "without a copy: its axes do not walk in row-major order (as_contiguous first)",
                shape=target,
                layout=self,
            )
        return out

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
        return self.shape[:a] + (T.prod(self.shape[a : b + 1]),) + self.shape[b + 1 :]

    def ravel(self) -> Self:
        """NumPy's name for `flatten` of every axis (on a `Tensor`, a copy only where a view cannot be).

        >>> from candela import Layout
        >>> Layout((2, 3)).ravel().shape
        (6,)
        """
        return self.flatten()

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Self:
        """Axis `dim` split into axes of `sizes` (one may be ``-1``): always zero-copy.

        PyTorch's ``unflatten``; the split axes walk as the one they replace did.

        >>> from candela import Layout
        >>> Layout((2, 6)).unflatten(1, (2, -1)).shape, Layout((6, 2)).transpose().unflatten(1, (3, 2)).stride
        ((2, 2, 3), (1, 4, 2))
        """
        d = T.canonical_axis(dim, self.rank, "unflatten axis")
        if isinstance(sizes, int) or not isinstance(sizes, Sequence):
            sizes = (sizes,)  # type: ignore[assignment]
        dims = T.check_view_shape(tuple(sizes), self.shape[d])
        # the split axes walk as the one they replace: its stride times a row-major count
        split = tuple(c * self.stride[d] for c in T.contiguous_strides(dims))
        shape = self.shape[:d] + dims + self.shape[d + 1 :]
        return self._derive(shape, self.stride[:d] + split + self.stride[d + 1 :], self.offset)

    # -- reordering axes ------------------------------------------------------

    def permute(self, *axes: int | Sequence[int]) -> Self:
        """PyTorch's name for `transpose_axes`: ``permute(1, 0)`` or ``permute((1, 0))``.

        >>> from candela import Layout
        >>> Layout((2, 3, 4)).permute(2, 0, 1).shape, Layout((2, 3)).permute((1, 0)).stride
        ((4, 2, 3), (1, 3))
        """
        given = axes[0] if len(axes) == 1 and hasattr(axes[0], "__len__") else axes
        return self.transpose_axes(given)  # type: ignore[arg-type]

    def swapaxes(self, axis1: int, axis2: int) -> Self:
        """Swap two axes (NumPy's ``swapaxes``, PyTorch's two-axis ``transpose``).

        >>> from candela import Layout
        >>> Layout((2, 3, 4)).swapaxes(0, -1).stride
        (1, 4, 12)
        """
        a, b = (T.canonical_axis(d, self.rank, "swapaxes axis") for d in (axis1, axis2))
        return self.transpose_axes(T.swapped_axes(self.rank, a, b))

    def moveaxis(self, source: int | Sequence[int], destination: int | Sequence[int]) -> Self:
        """Move axes to new places; the others keep their order (NumPy's ``moveaxis``).

        `source` and `destination` are an int each or sequences of the same
        length; negative axes count from the end. A repeated axis is
        `RepeatedAxes`, sequences of different lengths `NotEnoughAxes`.

        >>> from candela import Layout
        >>> Layout((2, 3, 4)).moveaxis(0, -1).shape, Layout((2, 3, 4)).moveaxis((0, 1), (2, 0)).shape
        ((3, 4, 2), (3, 4, 2))
        >>> Layout((2, 3, 4)).movedim(-1, 0).shape  # PyTorch's name
        (4, 2, 3)
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
        return self.transpose_axes(T.moved_axes(self.rank, src, dst))

    def flip(self, *axes: int | Sequence[int] | None) -> Self:
        """Reverse the given axes (ints, or one tuple; none or None: every axis), zero-copy.

        Each flipped stride is negated and the offset moves to the old last
        element along that axis, as ``s[::-1]`` does. A repeated axis is
        `AxesOutOfBounds`, as NumPy refuses it.

        >>> from candela import Layout
        >>> f = Layout((3, 4)).flip(1)
        >>> f.stride, f.offset, f.positions().tolist()[:4]
        ((4, -1), 3, [3, 2, 1, 0])
        >>> Layout((3, 4)).flip(0, 1) == Layout((3, 4)).flip((0, 1)) == Layout((3, 4)).flip()
        True
        """
        given = None if axes in ((), (None,)) else T.one_or_many(axes)
        which = T.check_axes(given, self.rank, "flip axis")
        stride, offset = T.flipped(self.shape, self.stride, self.offset, which)
        return self._derive(self.shape, stride, offset)

    # -- adding and dropping axes ---------------------------------------------

    def unsqueeze(self, axis: int) -> Self:
        """Insert a size-1 axis at `axis` (``-1`` appends; valid: ``-rank-1 .. rank``).

        Its stride is the one a contiguous layout would give it: the stride
        times the size of the axis it lands before (a size 0 counted as 1),
        or 1 at the end. Should that product leave int64, the layout is
        refused (`InvalidShape`), as every layout is.

        >>> from candela import Layout
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
        stride = T.unsqueeze_stride(self.shape, self.stride, a)
        return self._derive(
            self.shape[:a] + (1,) + self.shape[a:],
            self.stride[:a] + (stride,) + self.stride[a:],
            self.offset,
        )

    def squeeze(self, axes: int | Sequence[int] | None = None) -> Self:
        """Drop size-1 axes: all of them, or the given ones (each must have size 1).

        candela has no rank 0: when every axis would go, the last of them stays.

        >>> from candela import Layout
        >>> Layout((1, 3, 1)).squeeze().shape, Layout((1, 3, 1)).squeeze(-1).shape
        ((3,), (1, 3))
        >>> Layout((1, 1)).squeeze().shape
        (1,)
        """
        if axes is None:
            drop = tuple(d for d, n in enumerate(self.shape) if n == 1)
        else:
            drop = T.check_axes(axes, self.rank, "squeeze axis")
            for a in drop:
                if self.shape[a] != 1:
                    raise InvalidShape(
                        f"cannot squeeze axis {a} of shape {self.shape}: its size is "
                        f"{self.shape[a]}, not 1",
                        shape=self.shape,
                        axis=a,
                    )
        if len(drop) == self.rank:
            drop = tuple(sorted(drop))[:-1]
        keep = [d for d in range(self.rank) if d not in drop]
        return self._derive(
            tuple(self.shape[d] for d in keep), tuple(self.stride[d] for d in keep), self.offset
        )

    def expand(self, *sizes: int | Sequence[int]) -> Self:
        """PyTorch's broadcast: ``expand(3, -1)`` or ``expand((3, -1))``; -1 keeps a size.

        New axes go in front; a size-1 axis grows with stride 0; otherwise
        `broadcast`'s rules.

        >>> from candela import Layout
        >>> e = Layout((3, 1)).expand(2, -1, 4)
        >>> e.shape, e.stride
        ((2, 3, 4), (0, 1, 0))
        """
        given = sizes[0] if len(sizes) == 1 and hasattr(sizes[0], "__len__") else sizes
        return self.broadcast(T.check_expand_sizes(given, self.shape))

    # -- picking elements -----------------------------------------------------

    def select(self, dim: int, index: int) -> Self:
        """The sub-layout at `index` of axis `dim`, that axis dropped (PyTorch's ``select``).

        ``select(d, i)`` is NumPy's ``a[:, .., i]`` (`i` on axis `d`). A
        negative `dim` or `index` counts from the end. candela has no rank 0:
        selecting from a rank-1 layout keeps one axis of size 1.

        >>> from candela import Layout
        >>> Layout((3, 4)).select(1, -1).shape, Layout((3, 4)).select(1, -1).offset
        ((3,), 3)
        """
        a = T.canonical_axis(dim, self.rank, "select dim")
        n = self.shape[a]
        i = T.as_int(index, "select index")
        if not -n <= i < n:
            raise IndexOutOfBounds(
                f"select index {i} is out of range for axis {a} of size {n}",
                index=i,
                axis=a,
                size=n,
            )
        offset = self.offset + (i % n) * self.stride[a]
        if self.rank == 1:
            return self._derive((1,), self.stride, offset)
        return self._derive(
            self.shape[:a] + self.shape[a + 1 :], self.stride[:a] + self.stride[a + 1 :], offset
        )

    def subscript(self, key: object) -> Self:
        """What NumPy's ``a[key]`` selects (basic indexing), zero-copy.

        An integer selects and drops its axis, a slice keeps it (bounds
        clipped, as Python's; a negative step flips), ``None`` inserts an
        axis of size 1, ``...`` stands for the axes not named. Unlike `slice`
        (candela's rule: an integer keeps its axis). candela has no rank 0:
        a key that drops every axis leaves one of size 1.

        >>> from candela import Layout
        >>> l = Layout((3, 4))
        >>> l.subscript((slice(1, None), slice(None, None, -2))).positions().tolist()
        [7, 5, 11, 9]
        >>> l.subscript((Ellipsis, 0)).shape, l.subscript((None, 1)).shape
        ((3,), (1, 4))
        """
        return self._derive(*subscripted(self.shape, self.stride, self.offset, key))

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Self:
        """The diagonal of axes `dim1`, `dim2` as one axis appended last (NumPy's, PyTorch's).

        Its stride is ``stride[dim1] + stride[dim2]``; `offset` > 0 starts
        above the main diagonal (at ``(0, offset)``), < 0 below it. A
        diagonal outside the matrix is an axis of size 0.

        >>> from candela import Layout
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
        i, j, length = T.diagonal_start(self.shape, k, a, b)
        keep = [d for d in range(self.rank) if d not in (a, b)]
        return self._derive(
            tuple(self.shape[d] for d in keep) + (length,),
            tuple(self.stride[d] for d in keep) + (self.stride[a] + self.stride[b],),
            self.offset + i * self.stride[a] + j * self.stride[b],
        )

    # -- strided tricks -------------------------------------------------------

    def unfold(self, dim: int, size: int, step: int) -> Self:
        """PyTorch's sliding windows: axis `dim` becomes the windows, a last axis of `size`.

        Axis `dim` of size n becomes ``(n - size) // step + 1`` windows with
        its stride times `step`; a new last axis of `size` keeps its old
        stride. NumPy's ``sliding_window_view(a, size, axis=dim)`` is the
        same for `step` 1. `size` beyond the axis, or `step` < 1, is
        `InvalidShape`.

        >>> from candela import Layout
        >>> w = Layout(6).unfold(0, 3, 2)
        >>> w.shape, w.stride, w.positions().tolist()
        ((2, 3), (2, 1), [0, 1, 2, 2, 3, 4])
        """
        a = T.canonical_axis(dim, self.rank, "unfold dim")
        n = self.shape[a]
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
        return self._derive(
            self.shape[:a] + ((n - width) // hop + 1,) + self.shape[a + 1 :] + (width,),
            self.stride[:a] + (self.stride[a] * hop,) + self.stride[a + 1 :] + (self.stride[a],),
            self.offset,
        )

    def as_strided(
        self, shape: T.ShapeLike, stride: T.ShapeLike, offset: int | None = None
    ) -> Self:
        """Any shape and stride over the same buffer, from `offset` (this one's, by default).

        NumPy's ``as_strided`` and PyTorch's: nothing is checked but range. A
        position outside ``0 .. 2**63-1`` is `InvalidShape` naming it; a
        `Tensor` refuses any position outside its buffer.

        >>> from candela import Layout
        >>> Layout(6).as_strided((4, 3), (1, 1)).positions().tolist()[:6]
        [0, 1, 2, 1, 2, 3]
        >>> Layout(6).as_strided((2,), (-1,))
        Traceback (most recent call last):
        ...
        candela.errors.InvalidShape: shape (2,) with stride (-1,) and offset 0 reaches position -1: positions must be >= 0 (raise the offset)
        """
        dims = T.check_shape(shape)
        strides = T.check_stride(stride, dims)
        start = self.offset if offset is None else T.check_offset(offset)
        return self._derive(dims, strides, start)

    # -- other names for exactly one word or field: one line each --------------

    movedim = moveaxis  # PyTorch's name for NumPy's moveaxis
    dims = property(lambda self: self.shape, doc="The shape (seed 003's name for it).")
    elem_count = property(lambda self: self.len, doc="The number of elements (seed 003's `len`).")

    # NumPy's and PyTorch's property names. Last in the class: everywhere above them the
    # name T is the module `candela.tuples`, as in the rest of the package.

    @property
    def T(self) -> Self:
        """Every axis reversed: `transpose()`.

        >>> from candela import Layout
        >>> Layout((2, 3, 4)).T.shape
        (4, 3, 2)
        """
        return self.transpose()

    @property
    def mT(self) -> Self:
        """The last two axes swapped: ``transpose(-2, -1)``; rank 2 at least.

        >>> from candela import Layout
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
