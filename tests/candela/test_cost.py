"""The cost of a walk, against a brute-force count over the naive walk's positions.

The reference (`brute`) walks every multi-index in ``np.ndindex`` order with
``offset + sum(i * stride)`` (`oracle.naive_walk`, no candela), puts each
position in unit ``p * itemsize // unit`` and counts in plain Python. Both of
candela's ways of counting are held to it: over positions (`cost._direct`,
used for small walks) and over residues (`cost._closed`, used for large
ones), the latter also against the former on walks too large for the
reference.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from candela import Cost, InvalidShape, Layout, Tensor, s
from candela import cost as C

from .oracle import naive_walk
from .strategies import layouts

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

itemsizes = st.sampled_from([1, 2, 4, 8, 16])
units = st.sampled_from([16, 32, 64, 128])
warps = st.one_of(st.none(), st.integers(1, 64))


def brute(layout: Layout, itemsize: int, unit: int, warp: int | None) -> dict:
    """Every count by definition, over the naive walk."""
    pos = [p for _, p in naive_walk(layout.shape, layout.stride, layout.offset)]
    ids = [p * itemsize // unit for p in pos]
    entries = sum(1 for k, u in enumerate(ids) if k == 0 or u != ids[k - 1])
    out = {
        "elements": len(pos),
        "units": len(set(ids)),
        "unit_entries": entries,
        "bytes_moved": entries * unit,
        "bytes_used": len(set(pos)) * itemsize,
        "distinct_positions": len(set(pos)),
        "requests": None,
        "request_units": None,
    }
    if warp is not None:
        groups = [ids[i : i + warp] for i in range(0, len(ids), warp)]
        out["requests"] = len(groups)
        out["request_units"] = sum(len(set(g)) for g in groups)
    return out


def fields(c: Cost) -> dict:
    return {k: getattr(c, k) for k in brute(Layout(1), 1, 1, None)}


def by(method, layout: Layout, itemsize: int, unit: int, warp: int | None) -> dict:
    """The counts of one of candela's ways, as `brute` names them."""
    isz, u = C._reduced(itemsize, unit)
    units_, entries, distinct, requests, request_units = method(layout, isz, u, warp)
    return {
        "elements": layout.len,
        "units": units_,
        "unit_entries": entries,
        "bytes_moved": entries * unit,
        "bytes_used": distinct * itemsize,
        "distinct_positions": distinct,
        "requests": requests,
        "request_units": request_units,
    }


@st.composite
def wide_layouts(draw, max_elements=3000):
    """Layouts of a few thousand elements: long runs, large and interleaving strides."""
    rank = draw(st.integers(1, 4))
    shape, total = [], 1
    for _ in range(rank):
        n = draw(st.sampled_from([1, 2, 3, 5, 8, 16, 17, 31, 64, 100]))
        n = n if total * n <= max_elements else 1
        shape.append(n)
        total *= n
    stride = [draw(st.sampled_from([0, 1, -1, 2, 3, -3, 5, 16, 17, 64, -100, 1000])) for _ in shape]
    low = sum(min(st_ * (n - 1), 0) for n, st_ in zip(shape, stride))
    return Layout.from_strided(shape, stride, -low + draw(st.integers(0, 200)))


# -- every count, by definition -------------------------------------------------


@SETTINGS
@given(layouts(), itemsizes, units, warps)
def test_cost_is_the_brute_force_count(layout, itemsize, unit, warp):
    expected = brute(layout, itemsize, unit, warp)
    c = layout.cost(itemsize, unit=unit, warp=warp)
    assert fields(c) == expected
    assert (c.itemsize, c.unit, c.warp) == (itemsize, unit, warp)
    if warp is None:
        assert c.units_per_request is None
    elif expected["requests"]:
        assert c.units_per_request == expected["request_units"] / expected["requests"]


@SETTINGS
@given(layouts(), itemsizes, units, warps)
def test_both_ways_of_counting_are_the_brute_force_count(layout, itemsize, unit, warp):
    if layout.len == 0:
        return
    expected = brute(layout, itemsize, unit, warp)
    assert by(C._direct, layout, itemsize, unit, warp) == expected
    assert by(C._closed, layout, itemsize, unit, warp) == expected


@SETTINGS
@given(layouts(), st.integers(1, 40), st.integers(1, 200), warps)
def test_any_itemsize_and_unit_count_by_definition(layout, itemsize, unit, warp):
    # Units need not be powers of two, nor larger than an element.
    if layout.len == 0:
        return
    expected = brute(layout, itemsize, unit, warp)
    assert by(C._closed, layout, itemsize, unit, warp) == expected
    assert fields(layout.cost(itemsize, unit, warp)) == expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wide_layouts(), itemsizes, st.sampled_from([16, 32, 64, 128, 4096]), warps)
def test_residues_agree_with_positions_on_larger_walks(layout, itemsize, unit, warp):
    assert by(C._closed, layout, itemsize, unit, warp) == by(
        C._direct, layout, itemsize, unit, warp
    )


# -- laws -------------------------------------------------------------------------


@SETTINGS
@given(layouts(), itemsizes, units, st.integers(1, 64))
def test_orders_of_the_counts(layout, itemsize, unit, warp):
    c = layout.cost(itemsize, unit, warp)
    assert c.units <= c.unit_entries <= c.elements
    # a unit of `unit` bytes holds at most unit / itemsize element starts (both powers of two)
    assert c.bytes_used <= c.units * max(unit, itemsize) <= c.bytes_moved * max(1, itemsize // unit)
    assert c.requests == -(-c.elements // warp)
    if c.elements:
        assert 1 <= c.units_per_request <= min(warp, c.elements)
        assert c.units_per_request <= c.units
    else:
        assert c.units_per_request == 0.0


@SETTINGS
@given(layouts(), itemsizes, units, st.integers(0, 4))
def test_a_leading_broadcast_repeats_the_walk(layout, itemsize, unit, k):
    # k copies of the walk: k times its entries, less one per seam where the
    # last element and the first share a unit; the same units and positions.
    c = layout.cost(itemsize, unit)
    b = layout.broadcast((k, *layout.shape)).cost(itemsize, unit)
    if layout.len == 0 or k == 0:
        assert b.unit_entries == 0
        return
    pos = layout.positions()
    seam = int(pos[0] * itemsize // unit == pos[-1] * itemsize // unit)
    assert b.unit_entries == k * c.unit_entries - (k - 1) * seam
    assert (b.units, b.distinct_positions) == (c.units, c.distinct_positions)


@SETTINGS
@given(layouts(), itemsizes, units, warps, st.integers(1, 3))
def test_shifting_by_whole_units_changes_nothing(layout, itemsize, unit, warp, k):
    # `unit` elements are `itemsize` whole units: every element moves to another unit
    # by the same count, so every count stays.
    moved = layout.with_offset(layout.offset + k * unit)
    assert fields(moved.cost(itemsize, unit, warp)) == fields(layout.cost(itemsize, unit, warp))


@SETTINGS
@given(layouts(), itemsizes, units, warps, st.integers(2, 5))
def test_scaling_item_and_unit_together_changes_only_bytes(layout, itemsize, unit, warp, k):
    a, b = layout.cost(itemsize, unit, warp), layout.cost(k * itemsize, k * unit, warp)
    same = ("units", "unit_entries", "distinct_positions", "requests", "request_units")
    assert [getattr(a, f) for f in same] == [getattr(b, f) for f in same]
    assert (b.bytes_moved, b.bytes_used) == (k * a.bytes_moved, k * a.bytes_used)


@SETTINGS
@given(layouts(), itemsizes, units)
def test_the_same_positions_touch_the_same_units(layout, itemsize, unit):
    # flipping every axis or permuting them reads the same positions in another order
    c = layout.cost(itemsize, unit)
    for other in (layout.flip(tuple(range(layout.rank))), layout.T, layout.unsqueeze(0)):
        o = other.cost(itemsize, unit)
        assert (o.units, o.distinct_positions) == (c.units, c.distinct_positions)
    assert layout.unsqueeze(-1).cost(itemsize, unit) == c  # a size-1 axis never steps


# -- figures worked out by hand -------------------------------------------------------


def test_a_64x64_float32_row_walk_and_column_walk():
    # 4,096 floats of 4 bytes are 256 lines of 64 bytes; a row walk enters each
    # once, a column walk (rows 256 bytes apart) enters a line at every element.
    row, col = Layout((64, 64)).cost(4), Layout((64, 64)).T.cost(4)
    assert (row.units, row.unit_entries, row.bytes_moved) == (256, 256, 16384)
    assert (col.units, col.unit_entries, col.bytes_moved) == (256, 4096, 262144)
    # a warp of 32 along a row reads 128 bytes: 2 lines; down a column: 32 lines
    assert Layout((64, 64)).cost(4, warp=32).units_per_request == 2.0
    assert Layout((64, 64)).T.cost(4, warp=32).units_per_request == 32.0
    # 32-byte sectors: a warp of 32 floats along a row is 4 sectors
    assert Layout((64, 64)).cost(4, unit=32, warp=32).units_per_request == 4.0


@pytest.mark.parametrize("n", [4096, 10**6])
def test_huge_walks_are_counted_exactly_and_at_once(n):
    # n*n float32: contiguous, n*n*4/64 lines entered once each; transposed,
    # every element enters a line (rows are n*4 >= 64 bytes apart).
    lines = n * n * 4 // 64
    c = Layout((n, n)).cost(4, warp=32)
    assert (c.units, c.unit_entries, c.bytes_used, c.units_per_request) == (
        lines,
        lines,
        n * n * 4,
        2.0,
    )
    t = Layout((n, n)).T.cost(4, warp=32)
    assert (t.units, t.unit_entries, t.units_per_request) == (lines, n * n, 32.0)
    # every 8th float32 of each row: 32 bytes apart, 2 to a line
    e = Layout((n, n)).slice(s[:, ::8]).cost(4)
    assert (e.units, e.unit_entries, e.bytes_used) == (n * n // 16, n * n // 16, n * n // 2)
    # a broadcast row: one row's lines, entered again on every row
    b = Layout(n).broadcast((n, n)).cost(4)
    assert (b.units, b.unit_entries, b.distinct_positions) == (n // 16, n * n // 16, n)


def test_a_huge_walk_whose_rows_do_not_fill_warps():
    # rows of 4,095 float32 in rows of 4,096: a warp of 32 straddles rows
    layout = Layout((10**5, 4096)).slice(s[:, :4095])
    c = layout.cost(4, warp=32)
    rows = Layout((40, 4096)).slice(s[:, :4095])
    assert C._closed(rows, 1, 16, 32) == C._direct(rows, 1, 16, 32)
    assert c.requests == -(-(10**5 * 4095) // 32)
    assert c.units == 10**5 * 256


def test_overlapping_windows_count_each_position_once():
    # sliding windows of 10**6 over 2 * 10**6 - 1 elements: 10**12 reads of 2 * 10**6 - 1 floats
    w = Layout.from_strided((10**6, 10**6), (1, 1))
    c = w.cost(4)
    assert c.elements == 10**12
    assert c.distinct_positions == 2 * 10**6 - 1
    assert c.units == -(-(2 * 10**6 - 1) * 4 // 64)


# -- a tensor's own item size -------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.float64, np.complex128])
def test_a_tensor_costs_its_dtype_itemsize(dtype):
    a = np.zeros((8, 24), dtype=dtype)
    for view in (a, a.T, a[:, ::3], a[::-1, 1:]):
        t = Tensor.from_numpy(view)
        for unit, warp in ((64, None), (32, 8), (128, 32)):
            assert t.cost(unit, warp) == t.layout.cost(np.dtype(dtype).itemsize, unit, warp)
            assert fields(t.cost(unit, warp)) == brute(
                t.layout, np.dtype(dtype).itemsize, unit, warp
            )


# -- refused, and empty -----------------------------------------------------------------


@pytest.mark.parametrize(
    "args, named",
    [
        ((0,), "0"),
        ((-4,), "-4"),
        ((2.5,), "2.5"),
        ((True,), "True"),
        (("4",), "'4'"),
        ((4, 0), "0"),
        ((4, 64.0), "64.0"),
        ((4, 64, 0), "0"),
        ((4, 64, 1.5), "1.5"),
        ((2**64,), str(2**64)),
    ],
)
def test_bad_arguments_are_refused_by_name(args, named):
    with pytest.raises(InvalidShape) as e:
        Layout((3, 4)).cost(*args)
    which = ("itemsize", "unit", "warp")[len(args) - 1]
    assert which in str(e.value) and named in str(e.value)


def test_a_byte_position_past_int64_is_refused():
    far = Layout.from_strided((2,), (2**62,))
    assert far.cost(1).units == 2
    with pytest.raises(InvalidShape, match=str(2**62 * 4)):
        far.cost(4)
    with pytest.raises(InvalidShape, match="bytes moved"):
        far.cost(1, unit=2**62)  # 2 entries of 2**62 bytes


@pytest.mark.parametrize("layout", [Layout.empty(), Layout((3, 0, 2)), Layout((0, 4)).T])
def test_an_empty_walk_costs_nothing(layout):
    c = layout.cost(4)
    assert (c.units, c.unit_entries, c.bytes_moved, c.bytes_used, c.elements) == (0, 0, 0, 0, 0)
    assert c.units_per_request is None
    w = layout.cost(4, warp=32)
    assert (w.units_per_request, w.requests, w.request_units) == (0.0, 0, 0)


def test_a_cost_is_frozen_and_says_itself():
    c = Layout(12).cost(4, unit=16, warp=4)
    with pytest.raises(AttributeError):
        c.units = 0  # type: ignore[misc]
    text = str(c)
    assert "12 elements" in text and "3 16-byte units" in text and "3 times" in text
    assert "1.0 units a request" in text
    assert "from 3 cache lines" in str(Layout(40).cost(4))
    assert "from 1 sector," in str(Layout(8).cost(4, 32))
