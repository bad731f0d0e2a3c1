"""Tensor: zero-copy wrapping of NumPy arrays, derivations over one buffer, copies."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided, sliding_window_view

from candela import Layout, Tensor, s
from candela.errors import InvalidShape

from .oracle import as_numpy
from .strategies import layouts, operations
from .test_oracle import assert_matches_numpy, call, numpy_apply

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DTYPES = [np.int8, np.int16, np.float32, np.float64, np.complex128]


@st.composite
def numpy_views(draw):
    """A real NumPy view: a base array, reshaped, transposed, sliced with steps and flips."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=4)))
    base = np.arange(int(np.prod(shape)), dtype=dtype)
    a = base.reshape(shape)
    if draw(st.booleans()):
        a = a.transpose(draw(st.permutations(range(a.ndim))))
    keys = []
    for n in a.shape:
        step = draw(st.sampled_from([1, 1, 2, -1, -2]))
        start = draw(st.integers(0, n - 1))
        keys.append(slice(start, None, step))
    a = a[tuple(keys)]
    return base, a


@SETTINGS
@given(numpy_views())
def test_from_numpy_wraps_the_same_memory(pair):
    base, a = pair
    t = Tensor.from_numpy(a)
    assert t.shape == a.shape
    assert t.stride == tuple(st // a.itemsize for st in a.strides)
    assert np.shares_memory(t.buffer, base) and t.buffer.size == base.size
    assert t.buffer.dtype == a.dtype
    # the offset is where the view starts in its owner's memory
    assert (
        t.offset
        == (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // a.itemsize
    )
    assert np.array_equal(t.to_numpy(), a) and t.tolist() == a.tolist()
    assert np.array_equal(t.buffer[t.positions()], a.ravel())
    if a.size:
        idx = tuple(n - 1 for n in a.shape)
        assert t[idx] == a[idx]
        t.buffer[t.flat_index(idx)] = 0  # writes land in the original array
        assert a[idx] == 0


def test_from_numpy_of_the_seed_example_a_T_step_2():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = Tensor.from_numpy(a.T[::2])
    assert t.stride == (2, 4) and t.offset == 0 and t.buffer.base is not None
    assert t.tolist() == a.T[::2].tolist()
    flipped = Tensor.from_numpy(a[::-1, ::-1])
    assert flipped.stride == (-4, -1) and flipped.offset == 11


def test_from_numpy_without_a_flat_owner_uses_the_smallest_span():
    raw = bytearray(np.arange(20, dtype=np.int32).tobytes())
    a = np.ndarray(shape=(3, 2), dtype=np.int32, buffer=raw, offset=8, strides=(16, -4))
    t = Tensor.from_numpy(a)
    assert np.array_equal(t.to_numpy(), a)
    assert np.shares_memory(t.buffer, a)
    lo = min(t.positions())
    assert lo == 0 and t.buffer.size == max(t.positions()) + 1  # nothing outside the span


def test_from_numpy_of_structured_fields():
    rec = np.zeros(4, dtype=[("x", np.int32), ("y", np.int16)])
    rec["y"] = [1, 2, 3, 4]
    t = Tensor.from_numpy(rec["y"])  # 6-byte records: stride 3 whole int16s, no copy
    assert t.tolist() == [1, 2, 3, 4] and t.stride == (3,) and np.shares_memory(t.buffer, rec)
    odd = np.zeros(4, dtype=[("x", np.int8), ("y", np.int16)])  # 3-byte records
    odd["y"] = [5, 6, 7, 8]
    c = Tensor.from_numpy(odd["y"])  # a stride that is no whole element forces a packed copy
    assert c.tolist() == [5, 6, 7, 8] and c.is_contiguous() and not np.shares_memory(c.buffer, odd)


def test_from_numpy_broadcast_and_empty():
    b = np.broadcast_to(np.arange(4.0), (3, 4))
    t = Tensor.from_numpy(b)
    assert t.stride == (0, 1) and t.tolist() == b.tolist() and not t.to_numpy().flags.writeable
    e = Tensor.from_numpy(np.zeros((2, 0)))
    assert e.shape == (2, 0) and e.tolist() == [[], []] and e.is_empty()


@SETTINGS
@given(layouts(), st.data())
def test_tensor_derivations_share_the_buffer_and_match_numpy(layout, data):
    base, view = as_numpy(layout)
    t = Tensor(base, layout)
    assert t.tolist() == view.tolist()
    for _ in range(data.draw(st.integers(1, 3))):
        name, args = data.draw(operations(t.layout))
        expected = numpy_apply(name, args, t.layout, view, tensor=True, base=base)
        if isinstance(expected, type):
            with pytest.raises(expected):
                call(t, name, args)
            continue
        derived = call(t, name, args)
        assert derived.tolist() == expected.tolist()
        copying = name in ("reshape", "flatten", "ravel")
        if copying and derived.buffer is not t.buffer:  # a packed copy
            assert derived.is_contiguous() and not np.shares_memory(derived.buffer, t.buffer)
            break
        assert derived.buffer is t.buffer  # zero-copy
        if not copying:
            assert derived.layout == call(t.layout, name, args)
        t, view = derived, expected
    packed = t.as_contiguous()
    assert packed.is_contiguous() and packed.offset == 0 and packed.buffer.size == t.len
    assert np.array_equal(packed.to_numpy(), np.ascontiguousarray(view))
    assert not np.shares_memory(packed.buffer, t.buffer)


def test_as_strided_of_an_empty_view_keeps_its_own_offset_below_zero():
    # Narrowing an empty flipped view moves its offset below 0, as NumPy's pointer moves
    # before its buffer; as_strided from there (its own offset) is still an empty view.
    t = Tensor(np.arange(2), Layout.from_strided((0, 2), (2, -1), 0)).narrow(1, 1, 1)
    assert t.offset == -1 and t.is_empty()
    empty = t.as_strided((0,), (0,))
    assert empty.shape == (0,) and empty.tolist() == [] and empty.buffer is t.buffer
    with pytest.raises(InvalidShape, match="offset must be >= 0, got -1"):
        t.as_strided((0,), (0,), -1)  # an offset given is still checked


def test_tensor_forwards_the_layout():
    t = Tensor.arange((2, 3, 4)).transpose(0, 2).slice(s[1:, ::-1])
    layout = t.layout
    for name in ("shape", "stride", "adj_stride", "offset", "len", "rank", "dims", "elem_count"):
        assert getattr(t, name) == getattr(layout, name)
    for name in (
        "is_empty",
        "is_contiguous",
        "is_transposed",
        "is_last_axes_transposed",
        "shape_as_3d",
    ):
        assert getattr(t, name)() == getattr(layout, name)()
    for axis in range(-4, 4):
        assert t.is_contiguous_at_axis(axis) == layout.is_contiguous_at_axis(axis)
        assert t.is_transposed_at_axis(axis) == layout.is_transposed_at_axis(axis)
    assert list(t.strided_indices()) == t.positions().tolist() == [st.position for st in t.walk()]
    assert len(t) == t.len


def test_from_slice_arange_and_indexing():
    t = Tensor.from_slice([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], (2, 3))
    assert t.shape == (2, 3) and t.layout == Layout((2, 3))
    assert t[1, 0] == 4.0 and t[-1, -1] == 6.0 and isinstance(t[0, 0], float)
    assert Tensor.arange(5)[3] == 3
    assert np.asarray(Tensor.arange((2, 2)).transpose()).tolist() == [[0, 2], [1, 3]]


# -- from_numpy over a generated family of real NumPy views -------------------

PACKED = np.dtype([("a", "u1"), ("b", "<i4"), ("c", "<i2")])  # 7 bytes, fields unaligned
ALIGNED = np.dtype([("a", "u1"), ("b", "<i4"), ("c", "<i2")], align=True)  # 12 bytes
OWNER_DTYPES = [
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
    np.bool_,
    np.dtype(">i4"),
    np.dtype(">f8"),
    np.dtype(">c16"),
    PACKED,
    ALIGNED,
]
REINTERPRET_DTYPES = [np.uint8, np.int16, np.int32, np.dtype(">i4"), np.float64, np.complex64]


def make_owner(n: int, dtype, fortran: bool, rows: int) -> np.ndarray:
    """An array that owns its memory, filled with distinct values."""
    dtype = np.dtype(dtype)
    if dtype.names:
        owner = np.zeros(n, dtype=dtype)
        for k, name in enumerate(dtype.names):
            owner[name] = np.arange(n) * 3 + k + 1
    elif dtype == np.bool_:
        owner = np.arange(n) % 3 == 0
    else:
        owner = (np.arange(n) + 1).astype(dtype)
    if fortran and n % rows == 0:
        owner = np.asfortranarray(owner.reshape(rows, n // rows))  # a new F-ordered owner
    return owner


@st.composite
def numpy_family(draw):
    """``(owner, view)``: a real NumPy view of an owning array, through a random chain.

    Links: reinterpreting the bytes as another dtype from any byte offset,
    structured fields, reshapes, transposes, slices with steps, flips and
    empty selections, ``broadcast_to``, ``as_strided`` with overlap,
    ``sliding_window_view``, and size-0 or size-1 axes with odd byte strides.
    """
    n = draw(st.integers(0, 24))
    owner = make_owner(
        n, draw(st.sampled_from(OWNER_DTYPES)), draw(st.booleans()), draw(st.sampled_from([2, 3]))
    )
    a = owner
    for _ in range(draw(st.integers(0, 4))):
        a = draw(st.sampled_from(LINKS))(draw, a)
    return owner, a


def _reinterpret(draw, a):
    if not a.flags.c_contiguous or a.dtype.hasobject or a.size == 0:
        return a
    raw = a.reshape(-1).view(np.uint8)
    dtype = np.dtype(draw(st.sampled_from(REINTERPRET_DTYPES)))
    start = draw(st.integers(0, min(len(raw), 2 * dtype.itemsize)))
    count = (len(raw) - start) // dtype.itemsize
    if count == 0:
        return a
    count = draw(st.integers(1, count))
    return raw[start : start + count * dtype.itemsize].view(dtype)


def _field(draw, a):
    return a[draw(st.sampled_from(a.dtype.names))] if a.dtype.names else a


def _reshape(draw, a):
    if not a.flags.c_contiguous or a.size < 2:
        return a  # only where NumPy's reshape is a view
    sizes = [k for k in range(1, a.size + 1) if a.size % k == 0]
    first = draw(st.sampled_from(sizes))
    return a.reshape(first, -1)


def _transpose(draw, a):
    return a.transpose(draw(st.permutations(range(a.ndim))))


def _slice(draw, a):
    keys = []
    for n in a.shape:
        step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
        if n and draw(st.integers(0, 4)):
            start = draw(st.integers(0, n - 1))
        else:
            start = None
        empty = draw(st.integers(0, 9)) == 0
        keys.append(slice(start, start if empty else None, step))
    return a[tuple(keys)]


def _broadcast(draw, a):
    return np.broadcast_to(a, (draw(st.integers(0, 3)), *a.shape))


def _as_strided(draw, a):
    """Overlapping rows over axis 0 of `a`, inside `a`'s memory."""
    n = a.shape[0]
    if a.size == 0:
        return a
    width = draw(st.integers(1, n))
    hop = draw(st.integers(0, 2))
    rows = draw(st.integers(1, 1 + (n - width) // hop)) if hop else draw(st.integers(1, 3))
    first = a[(slice(None),) + (0,) * (a.ndim - 1)]  # axis 0 alone
    return as_strided(first, (rows, width), (hop * first.strides[0], first.strides[0]))


def _sliding_window(draw, a):
    axis = draw(st.integers(0, a.ndim - 1))
    if a.shape[axis] == 0:
        return a
    window = draw(st.integers(1, a.shape[axis]))
    return sliding_window_view(a, window, axis=axis)


def _odd_size_one_axis(draw, a):
    """A size-1 (or size-0) axis in front whose byte stride is no whole element."""
    size = draw(st.sampled_from([1, 1, 0]))
    odd = draw(st.sampled_from([1, 3, a.itemsize * 5 + 1, -7, 2**40 + 1]))
    return as_strided(a, (size, *a.shape), (odd, *a.strides), writeable=False)


LINKS = [
    _reinterpret,
    _reinterpret,
    _field,
    _reshape,
    _transpose,
    _slice,
    _slice,
    _broadcast,
    _as_strided,
    _sliding_window,
    _odd_size_one_axis,
]


def value_bytes(a: np.ndarray) -> list[bytes]:
    """The values' bytes in logical order, field by field (padding between fields is no value)."""
    if a.dtype.names:
        return [b for name in a.dtype.names for b in value_bytes(a[name])]
    return [a.tobytes()]


def byte_bounds(a: np.ndarray) -> tuple[int, int]:
    """Lowest byte of the lowest element and one past the highest element, over axes that step."""
    lo = hi = a.__array_interface__["data"][0]
    for n, st_ in zip(a.shape, a.strides):
        if n > 1:
            lo, hi = lo + min(st_ * (n - 1), 0), hi + max(st_ * (n - 1), 0)
    return lo, hi + a.itemsize


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(numpy_family())
def test_from_numpy_of_any_view_has_numpys_values_shape_and_memory(pair):
    owner, a = pair
    t = Tensor.from_numpy(a)
    assert t.shape == a.shape and t.dtype == a.dtype
    # values, bit for bit, in logical order: through NumPy and through the positions
    assert value_bytes(t.to_numpy()) == value_bytes(a)
    assert value_bytes(t.buffer[t.positions()]) == value_bytes(a.reshape(-1))
    assert len(t.tolist()) == len(a.tolist())
    item = a.itemsize
    steps_whole = all(st_ % item == 0 for n, st_ in zip(a.shape, a.strides) if n > 1)
    # zero-copy wherever the strides are whole elements on every axis that steps
    assert np.shares_memory(t.buffer, a) == (a.size > 0 and steps_whole)
    if not np.shares_memory(t.buffer, a):
        return
    begin = a.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    if begin % item == 0:  # the owner's memory is the buffer; the offset is where `a` starts
        assert t.buffer.__array_interface__["data"][0] == owner.__array_interface__["data"][0]
        assert t.buffer.size == owner.nbytes // item
        assert t.offset == begin // item
    else:  # part-way into an owner's element: the smallest span covering the view
        lo, hi = byte_bounds(a)
        assert t.buffer.__array_interface__["data"][0] == lo
        assert t.buffer.size * item == hi - lo


def test_from_numpy_of_a_view_that_starts_inside_an_owner_element():
    r = np.arange(8, dtype=np.int32)
    v = r.view(np.uint8)[1:-3].view(np.int32)
    t = Tensor.from_numpy(v)
    assert t.tolist() == v.tolist() == [(k + 1) << 24 for k in range(7)]  # 0x01000000, ...
    assert np.shares_memory(t.buffer, r)
    t.buffer[t.flat_index((0,))] = -1  # writes land in the owner
    assert v[0] == -1 and r[0] != 0


def test_from_numpy_of_packed_fields_over_an_int32_owner():
    r = np.arange(8, dtype=np.int32)
    rec = r.view(np.dtype([("p", "u1"), ("x", "<i4"), ("q", "u1", 3)]))  # "x" at byte 1
    t = Tensor.from_numpy(rec["x"])
    assert t.tolist() == rec["x"].tolist() and np.shares_memory(t.buffer, r)


def test_from_numpy_of_an_odd_stride_on_a_size_one_axis_shares_memory():
    base = np.arange(6, dtype=np.int64)
    a = as_strided(base, (1, 6), (3, 8))  # 3 bytes: no whole element, but the axis never steps
    t = Tensor.from_numpy(a)
    assert t.tolist() == a.tolist() and np.shares_memory(t.buffer, base)
    t.buffer[t.flat_index((0, 2))] = 99
    assert base[2] == 99


def test_from_numpy_of_as_strided_and_sliding_windows_finds_the_owner():
    x = np.arange(10)
    for view in (as_strided(x[2:], (3, 4), (16, 8)), sliding_window_view(x[1:], 3)):
        t = Tensor.from_numpy(view)
        assert t.buffer.size == x.size and np.shares_memory(t.buffer, x)
        assert t.offset == (view.__array_interface__["data"][0] - x.ctypes.data) // x.itemsize
        assert t.tolist() == view.tolist()


# -- NumPy's and PyTorch's words on a Tensor -----------------------------------


@SETTINGS
@given(layouts(), st.data())
def test_reshape_is_a_view_exactly_where_numpy_makes_one(layout, data):
    base, view = as_numpy(layout)
    t = Tensor(base, layout)
    _, args = data.draw(operations(layout, "reshape"))
    shape = args[0] if len(args) == 1 else args  # reshape((2, 3)) or reshape(2, 3)
    expected = numpy_apply("reshape", (shape,), layout, view, tensor=True)
    if isinstance(expected, type):
        with pytest.raises(expected):
            t.reshape(shape)
        return
    r = t.reshape(shape)
    assert r.shape == expected.shape and r.tolist() == expected.tolist()
    if layout.len:
        assert np.shares_memory(r.buffer, base) == np.shares_memory(expected, base)
    if np.shares_memory(r.buffer, base):
        assert r.buffer is t.buffer
        assert_matches_numpy(r.layout, base, expected)  # NumPy's strides, where they matter
    else:
        assert r.is_contiguous() and r.offset == 0 and r.buffer.size == r.len
    if layout.is_contiguous():
        assert r.layout == layout.view(shape)


@SETTINGS
@given(layouts())
def test_contiguous_is_the_tensor_itself_or_a_packed_copy(layout):
    base, view = as_numpy(layout)
    t = Tensor(base, layout)
    c = t.contiguous()
    assert c.is_contiguous() and c.tolist() == view.tolist()
    assert (c is t) == layout.is_contiguous()
    if c is not t:
        assert not np.shares_memory(c.buffer, base)


def test_the_words_new_users_type():
    t = Tensor.arange((2, 3))
    a = np.arange(6).reshape(2, 3)
    assert t.permute(1, 0).tolist() == t.permute((1, 0)).tolist() == a.transpose(1, 0).tolist()
    assert t.reshape(-1).tolist() == a.reshape(-1).tolist()
    assert t.T.tolist() == a.T.tolist() and t.mT.tolist() == a.mT.tolist()
    assert t.flip(0).tolist() == np.flip(a, 0).tolist()
    assert t.unsqueeze(0).shape == np.expand_dims(a, 0).shape
    assert t.unsqueeze(0).squeeze().tolist() == a.tolist()
    assert t.slice(s[:1]).expand(4, -1).tolist() == np.broadcast_to(a[:1], (4, 3)).tolist()
    assert t.T.contiguous().tolist() == a.T.tolist()
    for word in (t.permute(1, 0), t.reshape(-1), t.T, t.flip(0), t.unsqueeze(0), t.contiguous()):
        assert word.buffer is t.buffer  # all zero-copy here
