"""Tensor: zero-copy wrapping of NumPy arrays, derivations over one buffer, copies."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from candela import Layout, Tensor, s

from .oracle import as_numpy
from .strategies import layouts, operations
from .test_oracle import call, numpy_apply

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
        expected = numpy_apply(name, args, t.layout, view)
        if isinstance(expected, type):
            with pytest.raises(expected):
                call(t, name, args)
            continue
        derived = call(t, name, args)
        assert derived.buffer is t.buffer  # zero-copy
        assert derived.layout == call(t.layout, name, args)
        assert derived.tolist() == expected.tolist()
        t, view = derived, expected
    packed = t.as_contiguous()
    assert packed.is_contiguous() and packed.offset == 0 and packed.buffer.size == t.len
    assert np.array_equal(packed.to_numpy(), np.ascontiguousarray(view))
    assert not np.shares_memory(packed.buffer, t.buffer)


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
