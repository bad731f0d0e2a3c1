"""Bad input: each error is its contract class and built-in, carries and names the values."""

from __future__ import annotations

import numpy as np
import pytest

import candela
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
    SliceRange,
    Tensor,
    ZeroRankShape,
    s,
)

BUILTIN = {
    ZeroRankShape: ValueError,
    InvalidShape: ValueError,
    InvalidViewShape: ValueError,
    NonContiguousView: ValueError,
    CannotBroadcast: ValueError,
    NotEnoughAxes: ValueError,
    AxesOutOfBounds: IndexError,
    SliceOutOfBounds: IndexError,
    IndexOutOfBounds: IndexError,
    RepeatedAxes: IndexError,
}

# (call, error class, words the message must contain, attribute -> value)
CASES = [
    (lambda: Layout(()), ZeroRankShape, ["()"], {}),
    (lambda: Layout([]), ZeroRankShape, ["()"], {}),
    (lambda: Layout((3, -1)), InvalidShape, ["-1"], {"value": -1}),
    (lambda: Layout((3, 2.5)), InvalidShape, ["2.5"], {"value": 2.5}),
    (lambda: Layout((True, 2)), InvalidShape, ["True"], {"value": True}),
    (lambda: Layout("34"), InvalidShape, ["'34'"], {}),
    (lambda: Layout(None), InvalidShape, ["None"], {}),
    (lambda: Layout.from_strided((2, 3), (1,)), InvalidShape, ["(1,)", "(2, 3)"], {"stride": (1,)}),
    (lambda: Layout.from_strided((2, 3), (3, 1), -1), InvalidShape, ["-1"], {"offset": -1}),
    (lambda: Layout.from_strided((3,), (-1,), 1), InvalidShape, ["-1"], {"offset": 1}),
    (lambda: Layout((3,)).with_offset(-2), InvalidShape, ["-2"], {"offset": -2}),
    (
        lambda: Layout((2, 3)).view((4, 4)),
        InvalidViewShape,
        ["6", "(4, 4)", "16"],
        {"shape": (4, 4), "elements": 6},
    ),
    (lambda: Layout((2, 3)).transpose().view((6,)), NonContiguousView, ["(6,)"], {"shape": (6,)}),
    (lambda: Layout((2, 3)).view((3, -2)), InvalidShape, ["-2"], {}),
    (
        lambda: Layout((3,)).broadcast((3, 2)),
        CannotBroadcast,
        ["(3,)", "(3, 2)"],
        {"target": (3, 2)},
    ),
    (
        lambda: Layout((2, 3)).broadcast((3,)),
        CannotBroadcast,
        ["(2, 3)", "(3,)"],
        {"shape": (2, 3)},
    ),
    (
        lambda: Layout((2, 3)).transpose_axes((0,)),
        NotEnoughAxes,
        ["(0,)", "2 axes"],
        {"axes": (0,)},
    ),
    (lambda: Layout((2, 3)).transpose_axes((0, 0)), AxesOutOfBounds, ["(0, 0)", "0"], {"axis": 0}),
    (lambda: Layout((2, 3)).transpose_axes((0, 2)), AxesOutOfBounds, ["2"], {"axis": 2}),
    (
        lambda: Layout((2, 3)).transpose(0, 5),
        AxesOutOfBounds,
        ["5", "rank 2"],
        {"axis": 5, "rank": 2},
    ),
    (lambda: Layout((2, 3)).transpose(0), NotEnoughAxes, ["transpose(0)", "got 1 axis"], {}),
    (lambda: Layout((2, 3, 4)).transpose(0, 1, 2, 3), NotEnoughAxes, ["all 3 axes"], {}),
    (lambda: Layout((2, 3)).transpose(1, 1, 0), NotEnoughAxes, ["transpose(1, 1, 0)"], {}),
    (lambda: Layout((2, 3)).transpose(0, 1, 1), NotEnoughAxes, ["got 3 axes"], {"rank": 2}),
    (lambda: Layout((2, 3, 4)).transpose((0, 0, 1)), AxesOutOfBounds, ["(0, 0, 1)"], {}),
    (lambda: Layout((2, 3)).swapaxes(0, 2), AxesOutOfBounds, ["swapaxes", "2"], {"axis": 2}),
    (lambda: Layout((2, 3)).view(4, -1), InvalidViewShape, ["(4, -1)", "6 elements"], {}),
    (lambda: Layout((2, 3)).flip(0, 0), RepeatedAxes, ["(0, 0)"], {"axis": 0}),
    (lambda: Layout((2, 3)).flip(0, 5), AxesOutOfBounds, ["flip axis 5"], {"axis": 5}),
    (
        lambda: Layout((2, 3, 4)).moveaxis((0, 1), (1,)),
        NotEnoughAxes,
        ["(0, 1)", "(1,)", "2 and 1"],
        {"source": (0, 1)},
    ),
    (lambda: Layout((2, 3, 4)).moveaxis((0, 0), (1, 2)), RepeatedAxes, ["(0, 0)"], {"axis": 0}),
    (lambda: Layout((2, 3, 4)).movedim(3, 0), AxesOutOfBounds, ["source 3"], {"axis": 3}),
    (lambda: Layout((2, 3)).select(2, 0), AxesOutOfBounds, ["select dim 2"], {"axis": 2}),
    (
        lambda: Layout((2, 3)).select(1, 3),
        IndexOutOfBounds,
        ["index 3", "axis 1 of size 3"],
        {"index": 3, "size": 3},
    ),
    (
        lambda: Layout((2, 3)).transpose().flatten(),
        NonContiguousView,
        ["(3, 2)", "(1, 3)", "(6,)"],
        {"shape": (6,)},
    ),
    (lambda: Layout((2, 3, 4)).flatten(2, 1), AxesOutOfBounds, ["start_dim 2", "end_dim 1"], {}),
    (lambda: Layout(3).diagonal(), NotEnoughAxes, ["1 axis"], {"rank": 1}),
    (lambda: Layout((2, 3)).diagonal(0, 1, -1), RepeatedAxes, ["dim1 1", "dim2 -1"], {"axis": 1}),
    (
        lambda: Layout((2, 5)).unfold(1, 6, 1),
        InvalidShape,
        ["size=6", "axis 1 of size 5"],
        {"size": 6},
    ),
    (lambda: Layout((2, 5)).unfold(1, 2, 0), InvalidShape, ["step=0", "step >= 1"], {"step": 0}),
    (
        lambda: Layout((3, 4)).as_strided((3, 3), (-4, 1)),
        InvalidShape,
        ["(3, 3)", "(-4, 1)", "position -8"],
        {"value": -8},
    ),
    (
        lambda: Tensor.arange((3, 4)).as_strided((3, 3), (4, 2), 1),
        InvalidShape,
        ["position 13", "index (2, 2)", "12 elements"],
        {"position": 13, "index": (2, 2)},
    ),
    (
        lambda: Tensor.arange((3, 4)).slice(s[1:]).as_strided((2,), (-5,)),
        InvalidShape,
        ["position -1", "index (1,)", "positions 0..11"],
        {"position": -1},
    ),
    (
        lambda: Layout((2, 3)).subscript((0, 0, 0)),
        IndexOutOfBounds,
        ["[0, 0, 0]", "3 axes", "2 axes"],
        {},
    ),
    (lambda: Layout((2, 3)).subscript((slice(None), 3)), IndexOutOfBounds, ["index 3"], {}),
    (lambda: Layout((2, 3)).subscript((Ellipsis, Ellipsis)), IndexOutOfBounds, ["`...`"], {}),
    (lambda: Layout((2, 3)).subscript(slice(None, None, 0)), SliceOutOfBounds, ["::0"], {}),
    (lambda: Layout((2, 3)).rotate_axis_innermost(-3), AxesOutOfBounds, ["-3"], {"axis": -3}),
    (lambda: Layout((2, 3)).narrow(2, 0, 1), AxesOutOfBounds, ["2"], {"axis": 2}),
    (
        lambda: Layout((2, 3)).narrow(1, 2, 2),
        SliceOutOfBounds,
        ["start=2", "length=2", "3"],
        {"size": 3},
    ),
    (lambda: Layout((2, 3)).narrow(1, 0, 0), SliceOutOfBounds, ["length=0"], {"length": 0}),
    (
        lambda: Layout((2, 3)).slice(s[0:1, 0:1, 0:1]),
        AxesOutOfBounds,
        ["3 ranges", "2 axes"],
        {"rank": 2},
    ),
    (
        lambda: Layout((2, 3)).slice(s[:, 3]),
        SliceOutOfBounds,
        ["axis 1", "3"],
        {"axis": 1, "size": 3},
    ),
    (lambda: Layout((2, 3)).slice(s[:, 1:1]), SliceOutOfBounds, ["empty"], {"axis": 1}),
    (lambda: Layout((2, 3)).slice(s[:, 0:4]), SliceOutOfBounds, ["stop 4"], {"axis": 1}),
    (lambda: Layout((2, 3)).slice(s[::0]), SliceOutOfBounds, ["step"], {"axis": 0}),
    (lambda: Layout((2, 3)).slice(s[-3]), SliceOutOfBounds, ["-3"], {"axis": 0}),
    (lambda: Layout((2, 3)).slice(s[0:1.5]), SliceOutOfBounds, ["1.5"], {}),
    (lambda: Layout((2, 3)).slice(s[...]), SliceOutOfBounds, ["Ellipsis"], {}),
    (lambda: Layout((2, 3)).slice(s["a"]), SliceOutOfBounds, ["'a'"], {}),
    (lambda: Layout((2, 3)).flat_index((1,)), NotEnoughAxes, ["(1,)"], {"index": (1,)}),
    (
        lambda: Layout((2, 3)).flat_index((1, 3)),
        IndexOutOfBounds,
        ["3", "axis 1"],
        {"axis": 1, "size": 3},
    ),
    (lambda: Layout((2, 3)).flat_index((1, 1.0)), IndexOutOfBounds, ["1.0"], {}),
    (
        lambda: Tensor.from_slice([1, 2, 3], (2, 2)),
        InvalidViewShape,
        ["3", "(2, 2)"],
        {"elements": 3},
    ),
    (lambda: Tensor.from_numpy(np.float64(2.0)), ZeroRankShape, [], {}),
    (lambda: Tensor.arange((2, 3))[0, 5], IndexOutOfBounds, ["5"], {}),
    (lambda: Tensor.arange((2, 3))[0:1], IndexOutOfBounds, [".slice"], {}),
    (lambda: Tensor(np.arange(5), Layout((2, 3))), InvalidShape, ["5"], {"buffer_len": 5}),
    # NumPy's and PyTorch's words
    (lambda: Layout((2, 3)).view((-1, -1)), InvalidViewShape, ["(-1, -1)", "one"], {}),
    (lambda: Layout((2, 3)).view((4, -1)), InvalidViewShape, ["6", "(4, -1)"], {"elements": 6}),
    (lambda: Layout((0, 3)).view((0, -1)), InvalidViewShape, ["(0, -1)"], {"elements": 0}),
    (lambda: Layout((2, 3)).reshape((4, 4)), InvalidViewShape, ["(4, 4)"], {"elements": 6}),
    (lambda: Layout((2, 3)).T.reshape(-1), NonContiguousView, ["(6,)"], {"shape": (6,)}),
    (lambda: Tensor.arange((2, 3)).reshape((5,)), InvalidViewShape, ["(5,)"], {}),
    (lambda: Layout((2, 3)).permute(0), NotEnoughAxes, ["(0,)"], {"axes": (0,)}),
    (lambda: Layout((2, 3)).permute(1, 1), AxesOutOfBounds, ["(1, 1)"], {"axis": 1}),
    (lambda: Layout((2, 3)).flip(2), AxesOutOfBounds, ["2", "rank 2"], {"axis": 2}),
    (lambda: Layout((2, 3)).flip((0, -2)), RepeatedAxes, ["(0, -2)"], {"axis": 0}),
    (
        lambda: Layout((2, 3)).unsqueeze(3),
        AxesOutOfBounds,
        ["3", "rank 2", "-3..2"],
        {"axis": 3, "rank": 2},
    ),
    (lambda: Layout((2, 3)).unsqueeze(-4), AxesOutOfBounds, ["-4"], {"axis": -4}),
    (lambda: Layout((2, 3)).squeeze(0), InvalidShape, ["axis 0", "2"], {"axis": 0}),
    (lambda: Layout((1, 3)).squeeze(2), AxesOutOfBounds, ["2"], {"axis": 2}),
    (lambda: Layout((1, 3)).squeeze((0, 0)), RepeatedAxes, ["(0, 0)"], {"axis": 0}),
    (lambda: Layout((2, 3)).expand(3), CannotBroadcast, ["(2, 3)", "(3,)"], {"target": (3,)}),
    (lambda: Layout((2, 3)).expand(-1, 2, 3), CannotBroadcast, ["-1", "axis 0"], {"axis": 0}),
    (lambda: Layout((2, 3)).expand(4, -1), CannotBroadcast, ["(2, 3)", "(4, 3)"], {}),
    (lambda: Layout((2, 3)).expand(2, -2), InvalidShape, ["-2"], {"value": -2}),
    (lambda: Layout(3).mT, NotEnoughAxes, ["1 axis"], {"rank": 1}),
    (lambda: Tensor.arange(3).mT, NotEnoughAxes, ["1 axis"], {"rank": 1}),
]


@pytest.mark.parametrize("call,cls,words,attrs", CASES)
def test_bad_input_raises_the_contract_error(call, cls, words, attrs):
    with pytest.raises(cls) as info:
        call()
    err = info.value
    assert type(err) is cls
    assert isinstance(err, OpError) and isinstance(err, BUILTIN[cls])
    for word in words:
        assert word in str(err), (word, str(err))
    for name, value in attrs.items():
        assert getattr(err, name) == value


def test_every_error_class_is_exported_and_typed():
    for cls, builtin in BUILTIN.items():
        assert getattr(candela, cls.__name__) is cls
        assert issubclass(cls, OpError) and issubclass(cls, builtin)


def test_a_rejected_operation_leaves_the_layout_unchanged():
    layout = Layout((2, 3)).transpose()
    before = (layout.shape, layout.stride, layout.adj_stride, layout.offset, layout.len)
    for bad in (
        lambda: layout.view((6,)),
        lambda: layout.slice(s[5]),
        lambda: layout.broadcast((4,)),
    ):
        with pytest.raises(OpError):
            bad()
    assert (layout.shape, layout.stride, layout.adj_stride, layout.offset, layout.len) == before


def test_slice_range_text():
    assert [str(r) for r in s[1:3, ::-1, 0, :, 2:, :-1:2]] == [
        "1:3",
        "::-1",
        "0",
        ":",
        "2:",
        ":-1:2",
    ]
    assert candela.format_ranges(s[1:3, -1]) == "s[1:3, -1]"
    assert SliceRange.from_key(slice(1, 3)) == SliceRange(1, 3)
