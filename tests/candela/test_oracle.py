"""Laws: every layout and every chain of operations agrees with NumPy.

Random layouts (any rank up to 5, sizes 0 to 4, negative and zero strides,
offsets) go through random chains of operations, the old ones and NumPy's
and PyTorch's words (reshape, permute, flip, unsqueeze, squeeze, expand, T,
mT) alike, applied both to candela and to NumPy (the same layout as a
strided view of ``np.arange``). After every
step: shape, strides, offset, the positions from all three traversal
methods, and every flag must match NumPy or a brute-force walk; an operation
the contract rejects must raise the right error class.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from candela import (
    AxesOutOfBounds,
    CannotBroadcast,
    IndexOutOfBounds,
    InvalidShape,
    InvalidViewShape,
    Layout,
    NonContiguousView,
    NotEnoughAxes,
    OpError,
    RepeatedAxes,
    SliceOutOfBounds,
    s,
)

from .oracle import (
    ITEM,
    as_numpy,
    brute_contiguous,
    brute_transposed_at,
    naive_walk,
    numpy_fields,
    stepped_axis,
)
from .strategies import KINDS, layouts, operations, shapes

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_matches_numpy(layout: Layout, base: np.ndarray, view: np.ndarray) -> None:
    """The layout describes exactly the NumPy view `view` of `base`."""
    shape, strides, offset = numpy_fields(base, view)
    assert layout.shape == shape
    assert layout.len == view.size == len(layout)
    expected = view.ravel().tolist()  # values are buffer positions
    assert layout.positions().tolist() == expected
    if layout.len:
        assert layout.offset == offset
        # a size-1 axis never steps, so its stride is free (NumPy itself varies)
        for n, mine, theirs in zip(layout.shape, layout.stride, strides):
            if n > 1:
                assert mine == theirs, (layout, strides)


def assert_laws(layout: Layout) -> None:
    """Traversals, adj_stride and flags agree with the naive walk."""
    walk = naive_walk(layout.shape, layout.stride, layout.offset)
    positions = [p for _, p in walk]
    assert layout.positions().dtype == np.int64
    assert layout.positions().tolist() == positions
    assert list(layout.strided_indices()) == positions
    steps = list(layout.walk())
    assert [st.index for st in steps] == [i for i, _ in walk]
    assert [st.position for st in steps] == positions
    for (prev, prev_pos), (cur, cur_pos), step in zip(walk, walk[1:], steps[1:]):
        axis = stepped_axis(prev, cur)
        assert step.axis == axis
        assert step.delta == cur_pos - prev_pos == layout.adj_stride[axis]
    if steps:
        assert steps[0].axis is None and steps[0].delta == 0
    # flags against brute force
    assert layout.is_contiguous() == brute_contiguous(layout.shape, layout.stride, layout.offset)
    for axis in range(-layout.rank, layout.rank):
        a = axis % layout.rank
        expected = layout.len == 0 or brute_contiguous(layout.shape[a:], layout.stride[a:])
        assert layout.is_contiguous_at_axis(axis) == expected
        assert layout.is_transposed_at_axis(axis) == brute_transposed_at(layout, a)
    assert layout.is_transposed() == any(brute_transposed_at(layout, a) for a in range(layout.rank))
    for out in (layout.rank, layout.rank + 3, -layout.rank - 1):
        assert not layout.is_contiguous_at_axis(out)
        assert not layout.is_transposed_at_axis(out)
    for idx, pos in walk[:: max(1, len(walk) // 7)]:
        assert layout.flat_index(idx) == pos


def norm(axis: int, rank: int):
    return axis + rank if -rank <= axis < 0 else axis


def numpy_apply(
    name: str,
    args: tuple,
    layout: Layout,
    view: np.ndarray,
    tensor: bool = False,
    base: np.ndarray | None = None,
):
    """The NumPy result of an op, or the candela error class the contract demands.

    With `tensor`, ``reshape`` is a Tensor's: it copies where it cannot view.
    `base` is the buffer `view` looks into (``as_strided`` starts from it).
    """
    rank = layout.rank
    in_range = lambda a: -rank <= a < rank  # noqa: E731
    if name in ("view", "reshape"):  # on a Layout, reshape is view
        shape = args[0] if len(args) == 1 else args  # view((2, 3)) or view(2, 3)
        dims = shape if isinstance(shape, tuple) else (shape,)
        if any(d < -1 for d in dims):
            return InvalidShape
        try:  # NumPy's own count check, and its inference of one -1
            target = np.empty(layout.shape, dtype=np.int8).reshape(dims).shape
        except ValueError:
            return InvalidViewShape
        if not (name == "reshape" and tensor) and not brute_contiguous(
            layout.shape, layout.stride, layout.offset
        ):
            return NonContiguousView
        return view.reshape(target)
    if name == "slice":
        (keys,) = args
        if len(keys) > rank:
            return AxesOutOfBounds
        py = []
        for key, n in zip(keys, layout.shape):
            if isinstance(key, int):
                if not -n <= key < n:
                    return SliceOutOfBounds
                k = key % n
                py.append(slice(k, k + 1))
                continue
            start, stop, step = key.start, key.stop, key.step or 1
            if key.step == 0:
                return SliceOutOfBounds
            if start is None and stop is None:
                py.append(key)
                continue
            names_element = lambda i: -n <= i < n  # noqa: E731
            if start is not None and not names_element(start):
                return SliceOutOfBounds
            if stop is not None and not (-n <= stop <= n if step > 0 else names_element(stop)):
                return SliceOutOfBounds
            if len(range(n)[key]) == 0:
                return SliceOutOfBounds
            py.append(key)
        return view[tuple(py)]
    if name == "narrow":
        dim, start, length = args
        if not in_range(dim):
            return AxesOutOfBounds
        n = layout.shape[dim]
        begin = start + n if start < 0 else start
        if not (0 <= begin < n and length >= 1 and begin + length <= n):
            return SliceOutOfBounds
        return view[(slice(None),) * norm(dim, rank) + (slice(begin, begin + length),)]
    if name == "transpose":
        if not args:
            return view.T
        if len(args) == 1 and isinstance(args[0], tuple):  # transpose((2, 0, 1))
            return numpy_apply("transpose_axes", args, layout, view)
        if len(args) == 2:  # two separate axes: seed 003's and PyTorch's swap, on every rank
            return numpy_apply("swapaxes", args, layout, view)
        if len(args) == rank:  # NumPy's permutation, every axis listed
            return numpy_apply("transpose_axes", (args,), layout, view)
        return NotEnoughAxes
    if name == "swapaxes":
        if not all(in_range(a) for a in args):
            return AxesOutOfBounds
        return np.swapaxes(view, *args)
    if name in ("moveaxis", "movedim"):
        src, dst = (a if isinstance(a, tuple) else (a,) for a in args)
        for axes in (src, dst):
            if not all(map(in_range, axes)):
                return AxesOutOfBounds
            if len({norm(a, rank) for a in axes}) != len(axes):
                return RepeatedAxes
        if len(src) != len(dst):
            return NotEnoughAxes
        return np.moveaxis(view, src, dst)
    if name == "select":
        dim, index = args
        if not in_range(dim):
            return AxesOutOfBounds
        if not -layout.shape[dim] <= index < layout.shape[dim]:
            return IndexOutOfBounds
        out = view[(slice(None),) * norm(dim, rank) + (index,)]
        return out if out.ndim else out.reshape(1)  # candela keeps rank 1
    if name in ("flatten", "ravel"):
        start, end = args or (0, -1)
        if not (in_range(start) and in_range(end)) or norm(start, rank) > norm(end, rank):
            return AxesOutOfBounds
        a, b = norm(start, rank), norm(end, rank)
        target = view.shape[:a] + (int(np.prod(view.shape[a : b + 1])),) + view.shape[b + 1 :]
        out = view.reshape(target)
        if not tensor and layout.len > 1 and not np.shares_memory(out, view):
            return NonContiguousView  # NumPy had to copy; a Layout cannot
        return out
    if name == "diagonal":
        offset, dim1, dim2 = args or (0, 0, 1)
        if rank < 2:
            return NotEnoughAxes
        if not (in_range(dim1) and in_range(dim2)):
            return AxesOutOfBounds
        if norm(dim1, rank) == norm(dim2, rank):
            return RepeatedAxes
        return np.diagonal(view, offset, dim1, dim2)
    if name == "unflatten":
        dim, sizes = args
        if not in_range(dim):
            return AxesOutOfBounds
        d = norm(dim, rank)
        if any(n < -1 for n in sizes):
            return InvalidShape
        try:  # PyTorch's rule: the sizes multiply up to that axis (-1 inferred) ...
            sizes = np.empty(view.shape[d], dtype=np.int8).reshape(sizes).shape
        except ValueError:
            return InvalidViewShape
        # ... and then NumPy's reshape of that one axis
        return view.reshape(view.shape[:d] + sizes + view.shape[d + 1 :])
    if name == "unfold":
        dim, size, step = args
        if not in_range(dim):
            return AxesOutOfBounds
        if not 0 <= size <= layout.shape[dim] or step < 1:
            return InvalidShape
        windows = sliding_window_view(view, size, axis=norm(dim, rank))
        return windows[(slice(None),) * norm(dim, rank) + (slice(None, None, step),)]
    if name == "as_strided":
        shape, stride = args[:2]
        offset = args[2] if len(args) == 3 else layout.offset
        positions = [p for _, p in naive_walk(shape, stride, offset)]
        if (len(args) == 3 and offset < 0) or (positions and min(positions) < 0):
            return InvalidShape  # (an empty layout's own offset may be below 0, as NumPy's)
        assert base is not None and (not positions or max(positions) < base.size)
        return as_strided(
            base[max(offset, 0) :],
            shape=shape,
            strides=tuple(st * ITEM for st in stride),
            writeable=False,
        )
    if name == "subscript":
        (key,) = args
        try:
            out = view[key]
        except IndexError:
            return IndexOutOfBounds
        except ValueError:  # a step of 0
            return SliceOutOfBounds
        return out if out.ndim else out.reshape(1)  # candela keeps rank 1
    if name == "transpose_axes":
        (axes,) = args
        if len(axes) != rank:
            return NotEnoughAxes
        if not all(in_range(a) for a in axes) or len({norm(a, rank) for a in axes}) != rank:
            return AxesOutOfBounds
        return np.transpose(view, axes)
    if name == "broadcast":
        (shape,) = args
        try:
            return np.broadcast_to(view, shape)
        except ValueError:
            return CannotBroadcast
    if name == "rotate_axis_innermost":
        (axis,) = args
        if not in_range(axis):
            return AxesOutOfBounds
        return np.transpose(view, np.roll(np.arange(rank), -(norm(axis, rank) + 1)))
    if name == "permute":  # permute(1, 0) or permute((1, 0))
        axes = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
        return numpy_apply("transpose_axes", (axes,), layout, view)
    if name in ("flip", "squeeze"):
        given = args[0] if len(args) == 1 else (args or None)  # flip(0, 1) or flip((0, 1))
        if given is None:
            axes = tuple(range(rank)) if name == "flip" else None
        else:
            axes = given if isinstance(given, tuple) else (given,)
            if not all(in_range(a) for a in axes):
                return AxesOutOfBounds
            if len({norm(a, rank) for a in axes}) != len(axes):
                return AxesOutOfBounds
        if name == "flip":
            return np.flip(view, axes)
        if axes is not None and any(layout.shape[a] != 1 for a in axes):
            return InvalidShape
        out = np.squeeze(view, axes)
        return out if out.ndim else out.reshape(1)  # candela keeps rank 1
    if name == "unsqueeze":
        (axis,) = args
        if not -rank - 1 <= axis <= rank:
            return AxesOutOfBounds
        return np.expand_dims(view, axis)
    if name == "expand":
        sizes = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
        extra = len(sizes) - rank
        if extra < 0 or -1 in sizes[:extra]:
            return CannotBroadcast
        target = tuple(layout.shape[i - extra] if n == -1 else n for i, n in enumerate(sizes))
        return numpy_apply("broadcast", (target,), layout, view)
    if name == "T":
        return view.T
    if name == "mT":
        return NotEnoughAxes if rank < 2 else np.swapaxes(view, -2, -1)
    raise AssertionError(name)


def call(layout: Layout, name: str, args: tuple) -> Layout:
    if name == "slice":
        return layout.slice(s[args[0]] if args[0] else ())
    if name in ("T", "mT"):  # properties
        return getattr(layout, name)
    return getattr(layout, name)(*args)


@SETTINGS
@given(layouts())
def test_every_layout_matches_numpy_and_brute_force(layout):
    base, view = as_numpy(layout)
    assert_matches_numpy(layout, base, view)
    assert_laws(layout)


def check_operation(layout: Layout, base: np.ndarray, view: np.ndarray, name: str, args: tuple):
    """Apply one op to both sides; return the new pair, or the old one if rejected."""
    expected = numpy_apply(name, args, layout, view, base=base)
    if isinstance(expected, type):
        with pytest.raises(expected) as info:
            call(layout, name, args)
        assert isinstance(info.value, OpError)
        return layout, view  # the last good layout stays
    layout = call(layout, name, args)
    if np.shares_memory(expected, base) or expected.size == 0:
        assert_matches_numpy(layout, base, expected)
    else:  # NumPy copied (a reshape it could not view): compare the values only
        assert layout.positions().tolist() == expected.ravel().tolist()
    assert_laws(layout)
    return layout, expected


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=layouts(), data=st.data())
def test_each_operation_matches_numpy(kind, layout, data):
    base, view = as_numpy(layout)
    name, args = data.draw(operations(layout, kind))
    check_operation(layout, base, view, name, args)


@SETTINGS
@given(layouts(), st.data())
def test_chains_of_operations_match_numpy(layout, data):
    base, view = as_numpy(layout)
    for _ in range(data.draw(st.integers(1, 5))):
        name, args = data.draw(operations(layout))
        layout, view = check_operation(layout, base, view, name, args)


@SETTINGS
@given(layouts())
def test_adj_stride_follows_its_formula(layout):
    shape, stride = layout.shape, layout.stride
    for d in range(layout.rank):
        inner = sum(stride[k] * (shape[k] - 1) for k in range(d + 1, layout.rank))
        assert layout.adj_stride[d] == stride[d] - inner


@SETTINGS
@given(layouts())
def test_equality_and_hash_follow_the_fields(layout):
    same = Layout.from_raw_parts(
        layout.shape, layout.stride, layout.adj_stride, layout.offset, layout.len
    )
    assert same == layout and hash(same) == hash(layout)
    assert layout.with_offset(layout.offset + 1) != layout
    assert len({layout, same}) == 1


@SETTINGS
@given(layouts())
def test_shape_as_3d_keeps_the_count_and_the_last_two_axes(layout):
    batch, rows, cols = layout.shape_as_3d()
    assert batch * rows * cols == layout.len
    padded = (1, 1) + layout.shape
    assert (rows, cols) == padded[-2:]
    assert batch == int(np.prod(padded[:-2]))


@SETTINGS
@given(layouts(), st.data())
def test_the_new_words_undo_and_agree_with_the_old_ones(layout, data):
    rank = layout.rank
    axis = data.draw(st.integers(-rank, rank - 1))
    perm = tuple(data.draw(st.permutations(range(rank))))
    inverse = tuple(int(i) for i in np.argsort(perm))
    assert layout.permute(*perm) == layout.permute(perm) == layout.transpose_axes(perm)
    assert layout.permute(perm).permute(inverse) == layout
    assert layout.T == layout.transpose() and layout.T.T == layout
    if rank >= 2:
        assert layout.mT == layout.swapaxes(-2, -1) and layout.mT.mT == layout
    assert layout.flip(axis).flip(axis) == layout
    assert (
        layout.flip()
        == layout.flip(tuple(range(rank)))
        == layout.slice(s[(slice(None, None, -1),) * rank])
    )
    assert layout.unsqueeze(axis).squeeze(axis) == layout
    assert layout.expand(*(-1,) * rank) == layout
    assert layout.expand((3,) + (-1,) * rank) == layout.broadcast((3,) + layout.shape)
    if layout.is_contiguous():
        assert layout.reshape(-1) == layout.view(layout.len)


@SETTINGS
@given(shapes(), st.data())
def test_unsqueeze_of_a_contiguous_layout_is_contiguous(shape, data):
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    at = axis + len(shape) + 1 if axis < 0 else axis
    expected = Layout(shape[:at] + (1,) + shape[at:])
    assert Layout(shape).unsqueeze(axis) == expected
    assert Layout(shape).squeeze() == Layout(tuple(n for n in shape if n != 1) or (1,))


@SETTINGS
@given(layouts(), st.data())
def test_both_spellings_agree_and_the_tricks_undo(layout, data):
    rank = layout.rank
    perm = tuple(data.draw(st.permutations(range(rank))))
    assert layout.transpose(perm) == layout.transpose_axes(perm)
    if rank != 2:  # every axis listed separately is NumPy's permutation too
        assert layout.transpose(*perm) == layout.transpose_axes(perm)
    axes = tuple(data.draw(st.lists(st.integers(0, rank - 1), unique=True, min_size=1)))
    assert layout.flip(*axes) == layout.flip(axes)
    a, b = data.draw(st.integers(-rank, rank - 1)), data.draw(st.integers(-rank, rank - 1))
    assert (
        layout.swapaxes(a, b) == layout.swapaxes(b, a)
        and layout.swapaxes(a, b).swapaxes(a, b) == layout
    )
    assert layout.transpose(a, b) == layout.swapaxes(a, b)  # seed 003: a swap on every rank
    assert layout.movedim(a, b) == layout.moveaxis(a, b)
    assert layout.moveaxis(a, b).moveaxis(b, a) == layout
    if layout.is_contiguous() and layout.rank > 1 and layout.len:
        sizes = layout.shape
        assert layout.reshape(*sizes) == layout.view(sizes) == layout.view(*sizes)
    # every NumPy subscript of full slices and `...` is the layout itself
    assert layout.subscript(Ellipsis) == layout.subscript((slice(None),) * rank) == layout
    if layout.len:  # select is the integer subscript of one axis
        d = data.draw(st.integers(0, rank - 1))
        if layout.shape[d]:
            i = data.draw(st.integers(0, layout.shape[d] - 1))
            key = (slice(None),) * d + (i,)
            assert layout.select(d, i) == layout.subscript(key)
