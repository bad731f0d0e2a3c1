"""Tables of edge cases: ranks 1 to 8, sizes 0 and 1, negative and zero strides, offsets.

Each case is checked against NumPy or the brute-force walk (`oracle`), not
against numbers copied from candela. A few small literal cases from the seeds
pin the worked examples the docs teach.
"""

from __future__ import annotations

import numpy as np
import pytest

from candela import Layout, s

from .oracle import as_numpy
from .test_oracle import assert_laws, assert_matches_numpy, check_operation

SHAPES = [
    (0,),
    (1,),
    (5,),
    (0, 3),
    (3, 0),
    (1, 1),
    (1, 4),
    (4, 1),
    (3, 4),
    (2, 3, 4),
    (2, 1, 3, 1),
    (1, 2, 1, 2, 1),
    (2, 2, 2, 2, 2, 2),
    (1, 2, 1, 2, 1, 2, 1),
    (2, 1, 2, 1, 2, 1, 2, 1),
    (2, 2, 2, 2, 2, 2, 2, 2),
    (1,) * 8,
    (3, 0, 2, 1, 0, 1, 1, 2),
]

STRIDED = [
    ((3,), (-1,), 2),
    ((3,), (0,), 0),
    ((3, 4), (0, 1), 5),
    ((3, 4), (1, 3), 0),
    ((3, 4), (-4, 1), 8),
    ((3, 4), (4, -1), 3),
    ((3, 4), (-4, -1), 11),
    ((2, 3), (0, 0), 4),
    ((2, 2, 2), (4, 0, 1), 0),
    ((2, 3, 4), (1, 2, 6), 0),
    ((4, 2), (2, 0), 1),
    ((2, 2, 2, 2, 2, 2, 2, 2), (-128, 64, -32, 16, -8, 4, -2, 1), 170),
    ((1, 5), (7, -2), 8),
    ((2, 0, 3), (-5, 3, 1), 5),
    ((3, 1), (2, 99), 0),
]


def all_layouts():
    for shape in SHAPES:
        yield Layout(shape)
        yield Layout(shape).with_offset(3)
    for shape, stride, offset in STRIDED:
        yield Layout.from_strided(shape, stride, offset)


LAYOUTS = list(all_layouts())


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_table_layouts_match_numpy_and_the_walk(layout):
    base, view = as_numpy(layout)
    assert_matches_numpy(layout, base, view)
    assert_laws(layout)


OPERATIONS = [
    ("transpose", ()),
    ("transpose", (0, -1)),
    ("transpose", (-1, -1)),
    ("rotate_axis_innermost", (0,)),
    ("rotate_axis_innermost", (-1,)),
    ("slice", ((slice(None, None, -1),),)),
    ("slice", ((slice(None, None, -2),),)),
    ("slice", ((slice(None, None, 2), slice(None, None, -1)),)),
    ("slice", ((-1,),)),
    ("slice", ((0, slice(1, None)),)),
    ("slice", ((slice(-2, None),),)),
    ("slice", ((slice(None, -1),),)),
    ("slice", ((slice(None, 0, -1),),)),
    ("slice", ((slice(1, None, -1),),)),
    ("slice", ((slice(None),) * 8,)),
    ("narrow", (0, 0, 1)),
    ("narrow", (-1, 1, 1)),
    ("narrow", (0, -1, 1)),
    ("view", ((-1,),)),
    ("broadcast", ((2, 1),)),
    ("broadcast", ((3, 4),)),
    ("broadcast", ((2, 3, 4),)),
    ("broadcast", ((0,),)),
    ("flip", ()),
    ("flip", (0,)),
    ("flip", (-1,)),
    ("unsqueeze", (0,)),
    ("unsqueeze", (-1,)),
    ("squeeze", ()),
    ("squeeze", (0,)),
    ("expand", ((2, -1),)),
    ("reshape", ((-1,),)),
    ("T", ()),
    ("mT", ()),
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: f"{op[0]}{op[1]}")
def test_table_operations_match_numpy(layout, op):
    name, args = op
    if name == "view":  # a flat view of the same count, in every rank it fits
        args = ((layout.len,),)
    if name == "broadcast":  # targets right-aligned with this layout
        args = (args[0] + layout.shape,)
    if name == "expand":  # a new leading axis of 2, every old axis kept by -1
        args = ((2,) + (-1,) * layout.rank,)
    base, view = as_numpy(layout)
    check_operation(layout, base, view, name, args)


def test_worked_examples_from_the_seed():
    # 000: contiguous (3, 4) has adj_stride all ones; its transpose has (-7, 4).
    assert Layout((3, 4)).adj_stride == (1, 1)
    t = Layout((3, 4)).transpose()
    assert (t.shape, t.stride, t.adj_stride) == ((4, 3), (1, 4), (-7, 4))
    # 000: a [4] vector broadcast to [3, 4] reads buffer[j] in every row.
    b = Layout(4).broadcast((3, 4))
    assert b.stride == (0, 1) and b.positions().tolist() == [0, 1, 2, 3] * 3
    # 003: transpose(0, 2) of [2, 3, 4] has strides [1, 4, 12]; narrow moves the offset.
    assert Layout((2, 3, 4)).transpose(0, 2).stride == (1, 4, 12)
    assert Layout((4, 6)).narrow(1, 2, 3).offset == 2
    # 002: shape_as_3d
    assert [Layout(sh).shape_as_3d() for sh in [(5,), (2, 3), (2, 3, 4), (6, 2, 3, 4)]] == [
        (1, 1, 5),
        (1, 2, 3),
        (2, 3, 4),
        (12, 3, 4),
    ]


def test_seed_003_transpose_swaps_two_axes_on_every_rank():
    # 003: `transpose(dim0, dim1)` swaps two axes: [2, 3, 4] transpose(0, 2) -> [4, 3, 2],
    # strides [12, 4, 1] -> [1, 4, 12]. A swap on a 2-D layout too (PyTorch's meaning).
    t = Layout((2, 3, 4)).transpose(0, 2)
    assert (t.shape, t.stride) == ((4, 3, 2), (1, 4, 12))
    m = Layout((2, 3)).transpose(0, 1)
    assert (m.shape, m.stride) == ((3, 2), (1, 3))
    assert Layout((2, 3)).transpose(1, 0) == m
    assert Layout((2, 3)).transpose(1, 1) == Layout((2, 3))  # the same axis: no change
    assert Layout((2, 3)).transpose((0, 1)) == Layout((2, 3))  # one tuple: NumPy's permutation
    assert Layout((2, 3, 4)).transpose(2, 0, 1).shape == (4, 2, 3)  # all axes: a permutation


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_a_fresh_layout_is_contiguous_with_unit_adj_stride(shape):
    layout = Layout(shape)
    assert layout.is_contiguous() and not layout.is_transposed()
    assert layout == Layout.contiguous(shape)
    # NumPy's row-major strides, a size-0 axis counted as size 1 (as NumPy and PyTorch do)
    assert layout.stride == np.empty([max(n, 1) for n in shape], dtype=np.int8).strides
    if 0 not in shape:
        assert layout.adj_stride == (1,) * len(shape)


def test_empty():
    e = Layout.empty()
    assert e.shape == (0,) and e.len == 0 and len(e) == 0 and e.is_empty()
    assert list(e.strided_indices()) == [] and list(e.walk()) == [] and e.positions().size == 0
    assert e.is_contiguous() and e.is_contiguous_at_axis(0) and not e.is_transposed()


def test_is_last_axes_transposed_is_the_blas_stride_rule():
    cases = {
        ((4, 3), (1, 4)): True,  # a transposed row-major matrix
        ((4, 3), (1, 3)): True,
        ((4, 3), (3, 1)): False,  # row-major
        ((4, 3), (1, 1)): False,  # column stride not > 1
        ((4, 3), (0, 4)): False,  # broadcast rows
        ((4, 3), (1, 0)): False,
        ((2, 2, 2), (1, 2, 4)): False,  # another rank
        ((4,), (1,)): False,
    }
    for (shape, stride), expected in cases.items():
        assert Layout.from_strided(shape, stride).is_last_axes_transposed() is expected, (
            shape,
            stride,
        )


def test_fields_and_aliases():
    layout = Layout.from_strided((2, 3, 4), (1, 2, 6), 5)
    assert (
        layout.rank == 3 and layout.dims == layout.shape and layout.elem_count == layout.len == 24
    )
    assert "adj_stride=" in repr(layout) and str(layout) == "(2, 3, 4):(1, 2, 6) offset 5"
    assert eval(repr(layout).replace("Layout(", "dict(")) == dict(
        shape=layout.shape, stride=layout.stride, adj_stride=layout.adj_stride, offset=5, len=24
    )
    with pytest.raises(AttributeError):
        layout.offset = 3  # type: ignore[misc]
    import pickle

    assert pickle.loads(pickle.dumps(layout)) == layout


def test_shapes_given_as_one_int_or_numpy_ints():
    assert Layout(5) == Layout((5,)) == Layout([np.int64(5)])
    assert Layout.from_strided(np.array([2, 3]), np.array([3, 1])) == Layout((2, 3))


def test_slice_accepts_ranges_slices_and_ints():
    layout = Layout((4, 5))
    from candela import SliceRange

    expected = layout.slice(s[1:3, ::2])
    assert layout.slice([SliceRange(1, 3), SliceRange(step=2)]) == expected
    assert layout.slice((slice(1, 3), slice(None, None, 2))) == expected
    assert layout.slice(SliceRange(1, 3)) == layout.slice(s[1:3])
    assert layout.slice(s[-1]) == layout.slice(s[3:4])
