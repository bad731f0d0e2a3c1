"""`Tensor`: a flat NumPy buffer and a `Layout` that addresses it.

Every layout derivation returns a Tensor over the same buffer (zero-copy):
the seed's moves are forwarded to the layout, and NumPy's and PyTorch's words
are inherited from `candela.words`, the same words a `Layout` has. Only
where a tensor's meaning differs does it say a word again: `reshape` and
`flatten` copy where no strides over the same buffer can express the result,
and `as_strided` refuses positions outside the buffer. `as_contiguous`
copies, and so does `contiguous` when the tensor is not contiguous. `Tensor.from_numpy` wraps a
NumPy array without copying: byte strides become element strides, and the
buffer is the memory of the array that owns it, so the offset is where the
view starts in it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import tuples as T
from .cost import Cost
from .errors import IndexOutOfBounds, InvalidShape, InvalidViewShape, ZeroRankShape
from .layout import Layout, Step
from .slicing import RangesLike
from .words import Words

__all__ = ["Tensor"]


class Tensor(Words):
    """A strided tensor: ``buffer[layout.flat_index(i)]`` is element ``i``.

    >>> t = Tensor.arange((2, 3))
    >>> t.tolist(), t.transpose().tolist()
    ([[0, 1, 2], [3, 4, 5]], [[0, 3], [1, 4], [2, 5]])
    >>> t.transpose().buffer is t.buffer
    True
    """

    __slots__ = ("_buffer", "_layout")

    def __init__(self, buffer: np.ndarray, layout: Layout) -> None:
        buf = np.asarray(buffer)
        if buf.ndim != 1:
            raise InvalidShape(f"a buffer is flat (1-D), got {buf.ndim}-D", buffer_ndim=buf.ndim)
        if layout.len:
            lo, hi = T.position_bounds(layout.shape, layout.stride, layout.offset)
            if lo < 0 or hi >= buf.shape[0]:
                raise InvalidShape(
                    f"layout {layout} reaches positions {lo}..{hi} but the buffer has "
                    f"{buf.shape[0]} elements",
                    layout=layout,
                    buffer_len=buf.shape[0],
                )
        self._buffer = buf
        self._layout = layout

    # -- construction -------------------------------------------------------

    @classmethod
    def from_slice(cls, data: Any, shape: T.ShapeLike) -> Tensor:
        """A contiguous tensor of `shape` over `data` (copied into a new flat buffer).

        >>> Tensor.from_slice([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], (2, 3))[1, 0]
        4.0
        """
        layout = Layout(shape)
        buf = np.array(data).reshape(-1)
        if buf.shape[0] != layout.len:
            raise InvalidViewShape(
                f"cannot lay {buf.shape[0]} values out as shape {layout.shape} "
                f"({layout.len} elements)",
                shape=layout.shape,
                elements=buf.shape[0],
            )
        return cls(buf, layout)

    @classmethod
    def arange(cls, shape: T.ShapeLike) -> Tensor:
        """Values ``0..n-1`` laid out contiguously: each value is its buffer position.

        >>> Tensor.arange((2, 2)).transpose().tolist()
        [[0, 2], [1, 3]]
        """
        layout = Layout(shape)
        return cls(np.arange(layout.len, dtype=np.int64), layout)

    @classmethod
    def from_numpy(cls, array: np.ndarray) -> Tensor:
        """Wrap a NumPy array without copying wherever strides can say where it is.

        The buffer is the memory of the array that owns `array`'s data, found
        through every ``.base`` (also the plain object ``as_strided`` and
        ``sliding_window_view`` leave there), seen as `array`'s dtype; the
        offset is where `array` starts in it; strides are counted in
        elements, negative ones keep their sign. Where that owner is no flat
        block holding the view, or the view starts part-way into one of its
        elements, the buffer is the smallest span covering the view. Only a
        byte stride that is not a whole number of elements on an axis that
        steps (size 2 or more) forces a packed copy; an axis of size 0 or 1
        never steps, and a stride it cannot express is written as 0.

        >>> a = np.arange(12).reshape(3, 4)
        >>> t = Tensor.from_numpy(a.T[::2])
        >>> t.shape, t.stride, t.offset, np.shares_memory(t.buffer, a)
        ((2, 3), (2, 4), 0, True)
        >>> Tensor.from_numpy(a[::-1, 1:]).offset
        9
        >>> r = np.arange(4, dtype=np.int32).view(np.uint8)[1:-3].view(np.int32)
        >>> Tensor.from_numpy(r).tolist() == r.tolist(), Tensor.from_numpy(r).buffer.size
        (True, 3)
        """
        arr = np.asarray(array)
        if arr.ndim == 0:
            raise ZeroRankShape("cannot wrap a 0-d array: a layout has rank >= 1", shape=())
        item = arr.itemsize
        if arr.size == 0:
            return cls(arr.reshape(-1)[:0], Layout(arr.shape))
        if item == 0 or any(n > 1 and st % item for n, st in zip(arr.shape, arr.strides)):
            packed = np.ascontiguousarray(arr)
            return cls(packed.reshape(-1), Layout(arr.shape))
        stride = tuple(st // item if st % item == 0 else 0 for st in arr.strides)
        buffer = _owner_buffer(arr, stride)
        if buffer is None:
            buffer = _span_buffer(arr, stride)
        start = (_address(arr) - _address(buffer)) // item
        return cls(buffer, Layout.from_strided(arr.shape, stride, start))

    # -- the pair ---------------------------------------------------------------

    @property
    def layout(self) -> Layout:
        """The layout that addresses the buffer."""
        return self._layout

    @property
    def buffer(self) -> np.ndarray:
        """The flat 1-D buffer, shared with every tensor derived from this one."""
        return self._buffer

    @property
    def dtype(self) -> np.dtype:
        """The buffer's element type."""
        return self._buffer.dtype

    def _with(self, layout: Layout) -> Tensor:
        return Tensor(self._buffer, layout)

    def _derive(self, shape: tuple[int, ...], stride: tuple[int, ...], offset: int) -> Tensor:
        # what a word (candela.words) derives a tensor with: a new layout, the same buffer
        return self._with(self._layout._derive(shape, stride, offset))

    # -- forwarded accessors and flags (the seed's Dimension trait) ----------

    shape = property(lambda self: self._layout.shape, doc="The size of each axis.")
    stride = property(lambda self: self._layout.stride, doc="Per-axis stride in elements.")
    adj_stride = property(lambda self: self._layout.adj_stride, doc="The adj_stride of the layout.")
    offset = property(lambda self: self._layout.offset, doc="Buffer position of the first element.")
    len = property(lambda self: self._layout.len, doc="The number of elements.")
    rank = property(lambda self: self._layout.rank, doc="The number of axes.")

    def __len__(self) -> int:
        return self._layout.len

    def is_empty(self) -> bool:
        return self._layout.is_empty()

    def is_contiguous(self) -> bool:
        return self._layout.is_contiguous()

    def is_contiguous_at_axis(self, axis: int) -> bool:
        return self._layout.is_contiguous_at_axis(axis)

    def is_transposed(self) -> bool:
        return self._layout.is_transposed()

    def is_transposed_at_axis(self, axis: int) -> bool:
        return self._layout.is_transposed_at_axis(axis)

    def is_last_axes_transposed(self) -> bool:
        return self._layout.is_last_axes_transposed()

    def flat_index(self, index: Sequence[int]) -> int:
        return self._layout.flat_index(index)

    def strided_indices(self) -> Iterator[int]:
        return self._layout.strided_indices()

    def positions(self) -> np.ndarray:
        return self._layout.positions()

    def cost(self, unit: int = 64, warp: int | None = None) -> Cost:
        """`Layout.cost` with this tensor's own item size (its dtype's bytes per element).

        >>> a = Tensor.from_numpy(np.zeros((4, 16), dtype=np.float64))
        >>> a.cost().units, a.T.cost().unit_entries, a.cost(unit=32, warp=4).units_per_request
        (8, 64, 1.0)
        """
        return self._layout.cost(self._buffer.dtype.itemsize, unit, warp)

    def walk(self) -> Iterator[Step]:
        return self._layout.walk()

    def shape_as_3d(self) -> tuple[int, int, int]:
        return self._layout.shape_as_3d()

    # -- zero-copy derivations over the same buffer -------------------------

    def view(self, *shape: int | Sequence[int]) -> Tensor:
        return self._with(self._layout.view(*shape))

    def slice(self, ranges: RangesLike) -> Tensor:
        return self._with(self._layout.slice(ranges))

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        return self._with(self._layout.narrow(dim, start, length))

    def transpose(self, *axes: int | Sequence[int]) -> Tensor:
        return self._with(self._layout.transpose(*axes))

    def as_strided(
        self, shape: T.ShapeLike, stride: T.ShapeLike, offset: int | None = None
    ) -> Tensor:
        """Any shape and stride over this buffer; refused where a position falls outside it.

        The message names the first position outside ``0 .. len(buffer)-1``
        and the index that reaches it.

        >>> Tensor.arange(6).as_strided((4, 3), (1, 1)).tolist()[-1]
        [3, 4, 5]
        >>> Tensor.arange(6).as_strided((4, 3), (1, 2))
        Traceback (most recent call last):
        ...
        candela.errors.InvalidShape: as_strided(shape (4, 3), stride (1, 2), offset 0) reaches position 7 at index (3, 2), outside the buffer of 6 elements (positions 0..5)
        """
        dims = T.check_shape(shape)
        strides = T.check_stride(stride, dims)
        start = self._layout.offset if offset is None else T.check_offset(offset)
        size = self._buffer.shape[0]
        if 0 not in dims:
            lo, hi = T.position_bounds(dims, strides, start)
            if lo < 0 or hi >= size:
                low = lo < 0  # the low end is the one outside
                index = tuple((n - 1 if (st < 0) == low else 0) for n, st in zip(dims, strides))
                raise InvalidShape(
                    f"as_strided(shape {dims}, stride {strides}, offset {start}) reaches "
                    f"position {lo if low else hi} at index {index}, outside the buffer of "
                    f"{size} elements (positions 0..{size - 1})",
                    shape=dims,
                    stride=strides,
                    offset=start,
                    position=lo if low else hi,
                    index=index,
                    buffer_len=size,
                )
        # `offset`, not `start`: an empty layout's own offset may be below 0, as NumPy's.
        return super().as_strided(dims, strides, offset)

    def transpose_axes(self, axes: Sequence[int]) -> Tensor:
        return self._with(self._layout.transpose_axes(axes))

    def broadcast(self, shape: T.ShapeLike) -> Tensor:
        return self._with(self._layout.broadcast(shape))

    def rotate_axis_innermost(self, axis: int) -> Tensor:
        return self._with(self._layout.rotate_axis_innermost(axis))

    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        """The same elements as `shape` (one ``-1`` inferred): a view where strides can say it.

        The shape is one tuple or separate sizes (``reshape(2, -1)``).

        NumPy's rule: a contiguous tensor is viewed (`view`); otherwise the
        runs of axes that the new shape splits or merges must each be
        row-major among themselves (NumPy's ``_attempt_nocopy_reshape``),
        and then the result is a view with the strides that walk them; else
        it is a packed copy, as PyTorch's ``reshape`` does.
        ``np.shares_memory`` on the buffers tells which.

        >>> from candela import s
        >>> t = Tensor.arange((4, 6)).slice(s[:, ::2])  # rows apart, every 2nd column
        >>> r = t.reshape((2, 2, 3))
        >>> r.stride, r.buffer is t.buffer
        ((12, 6, 2), True)
        >>> c = t.transpose().reshape(-1)  # a transpose cannot be flattened in place
        >>> c.tolist()[:5], np.shares_memory(c.buffer, t.buffer)
        ([0, 6, 12, 18, 2], False)
        """
        dims = T.check_view_shape(T.one_or_many(shape), self._layout.len)
        view = self._strided_reshape(dims)
        return self.as_contiguous().view(dims) if view is None else view

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Axes `start_dim` .. `end_dim` merged into one: a view where strides allow, else a copy.

        >>> t = Tensor.arange((2, 3))
        >>> t.flatten().buffer is t.buffer, np.shares_memory(t.T.flatten().buffer, t.buffer)
        (True, False)
        """
        return self.reshape(self._flattened(start_dim, end_dim))

    # -- copies and conversions ---------------------------------------------

    def as_contiguous(self) -> Tensor:
        """A packed row-major copy in a new buffer (the seed's ``AsContiguous``).

        >>> t = Tensor.arange((2, 3)).transpose().as_contiguous()
        >>> t.buffer.tolist(), t.is_contiguous()
        ([0, 3, 1, 4, 2, 5], True)
        """
        packed = np.array(self.to_numpy(), order="C", copy=True)  # always a new buffer
        return Tensor(packed.reshape(-1), Layout(self._layout.shape))

    def contiguous(self) -> Tensor:
        """This tensor when it is already contiguous, else `as_contiguous` (PyTorch's meaning).

        >>> t = Tensor.arange((2, 3))
        >>> t.contiguous() is t, t.T.contiguous().is_contiguous()
        (True, True)
        """
        return self if self.is_contiguous() else self.as_contiguous()

    def to_numpy(self) -> np.ndarray:
        """A NumPy view of the same buffer with this layout (read-only where broadcast).

        An axis of size 0 or 1 never steps: NumPy is given stride 0 there, as
        it writes itself, so any stride candela holds for it converts.

        >>> from candela import s
        >>> Tensor.arange((2, 3)).slice(s[:, ::-1]).to_numpy()
        array([[2, 1, 0],
               [5, 4, 3]])
        >>> Tensor(np.arange(12)[::-2], Layout((2, 3))).to_numpy()  # a buffer that is a view
        array([[11,  9,  7],
               [ 5,  3,  1]])
        """
        layout = self._layout
        item = self._buffer.strides[0]  # a buffer cell's step in bytes: its own, any view's
        start = self._buffer[layout.offset :] if layout.len else self._buffer[:0]
        broadcast = any(st == 0 and n > 1 for n, st in zip(layout.shape, layout.stride))
        return as_strided(
            start,
            shape=layout.shape,
            strides=tuple(st * item if n > 1 else 0 for n, st in zip(layout.shape, layout.stride)),
            writeable=not broadcast and self._buffer.flags.writeable,
        )

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.to_numpy()
        return out if dtype is None else out.astype(dtype)

    def tolist(self) -> list:
        """The elements as nested Python lists, in logical order."""
        return self.to_numpy().tolist()

    def __getitem__(self, index: Any) -> Any:
        """One element as a Python scalar: ``t[i, j]`` (``t[i]`` for rank 1)."""
        idx = index if isinstance(index, tuple) else (index,)
        if any(isinstance(i, slice) for i in idx):
            raise IndexOutOfBounds(
                f"t[{index!r}] selects one element; use .subscript(...) (NumPy's a[...]) or "
                ".slice(s[...]) for a range",
                index=idx,
            )
        return self._buffer[self._layout.flat_index(idx)].item()

    def __repr__(self) -> str:
        return f"Tensor({self.tolist()!r}, layout={self._layout!r})"

    def __str__(self) -> str:
        return f"Tensor {self._layout} over {self._buffer.shape[0]} buffer elements"


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _owner(arr: np.ndarray) -> np.ndarray:
    """The last array along `arr`'s chain of ``.base``, through non-array links too.

    ``as_strided`` (and so ``sliding_window_view``) leaves a plain object in
    ``.base`` that exposes ``__array_interface__`` and keeps the array it was
    made from as its own ``.base``.
    """
    root = arr
    link = arr.base
    seen = {id(arr)}
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link, np.ndarray):
            root = link
        link = getattr(link, "base", None)
    return root


def _owner_buffer(arr: np.ndarray, stride: tuple[int, ...]) -> np.ndarray | None:
    """The owner's memory as a flat array of `arr`'s dtype, if it holds `arr` on whole elements."""
    root = _owner(arr)
    item = arr.itemsize
    if not (root.flags.c_contiguous or root.flags.f_contiguous) or root.size == 0:
        return None
    begin = _address(arr) - _address(root)  # in bytes
    if begin % item:
        return None  # the view starts part-way into an element of the owner
    lo, hi = T.position_bounds(arr.shape, stride, begin // item)
    count = root.nbytes // item
    if lo < 0 or hi >= count:
        return None
    if root.dtype == arr.dtype:
        return as_strided(root, shape=(count,), strides=(item,), writeable=root.flags.writeable)
    if root.dtype.hasobject or arr.dtype.hasobject:
        return None
    raw = root.ravel(order="K").view(np.uint8)  # a view: the owner is one flat block
    return raw[: count * item].view(arr.dtype)


def _span_buffer(arr: np.ndarray, stride: tuple[int, ...]) -> np.ndarray:
    """The smallest flat span of memory that covers every element of `arr`."""
    lo, hi = T.position_bounds(arr.shape, stride, 0)
    # The element at the lowest address: the last index on every backward axis.
    corner = tuple(slice(n - 1, n) if st < 0 else slice(0, 1) for n, st in zip(arr.shape, stride))
    return as_strided(
        arr[corner], shape=(hi - lo + 1,), strides=(arr.itemsize,), writeable=arr.flags.writeable
    )
