"""Column data, the animation arrays and the fields' text, checked against candela and NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from candela import Layout, Tensor
from explorer import columns as C
from explorer.fields import adj_stride_work, contiguous_reason, field_values, transposed_reason
from explorer.pipeline import apply, parse

CHAINS = [
    "",
    ".transpose()",
    ".transpose().slice(s[0:2, ::-1])",
    ".slice(s[1:, ::2])",
    ".narrow(1, 1, 2).transpose()",
    ".slice(s[1]).broadcast((3, 3, 4))",
    ".transpose().as_contiguous()",
]


def tensors():
    for chain in CHAINS:
        yield chain, apply(parse(chain), Tensor.arange((3, 4)))[-1]
    yield "rank3", Tensor.arange((2, 3, 4)).transpose_axes((2, 0, 1))
    yield "rank1", Tensor.arange((5,))
    yield "empty", Tensor.arange((0, 3))


@pytest.mark.parametrize(
    ("name", "tensor"), list(tensors()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_walk_arrays_agree_with_candela_walk(name, tensor):
    layout = tensor.layout
    walk = C.walk_arrays(layout)
    steps = list(layout.walk())
    assert [tuple(col) for col in walk.index.T.tolist()] == [s.index for s in steps]
    assert walk.position.tolist() == [s.position for s in steps]
    assert walk.axis.tolist() == [-1 if s.axis is None else s.axis for s in steps]
    assert walk.delta.tolist() == [s.delta for s in steps]


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@settings(max_examples=60, deadline=None)
@given(shapes, st.data())
def test_walk_laws_hold_for_any_permuted_flipped_layout(shape, data):
    # Laws: positions are NumPy's strided reads; each delta is the position change and
    # equals adj_stride of the axis that stepped; that axis is the innermost non-zero index.
    perm = data.draw(st.permutations(range(len(shape))))
    flips = data.draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    t = Tensor.arange(shape).transpose_axes(tuple(perm))
    ranges = tuple(slice(None, None, -1) if f else slice(None) for f in flips)
    from candela import s

    t = t.slice(s[ranges])
    walk = C.walk_arrays(t.layout)
    assert np.array_equal(t.buffer[walk.position], t.to_numpy().ravel())
    assert np.array_equal(np.diff(walk.position), walk.delta[1:])
    adj = np.array(t.layout.adj_stride)
    assert np.array_equal(adj[walk.axis[1:]], walk.delta[1:])
    for k in range(1, len(walk.position)):
        nz = np.flatnonzero(walk.index[:, k])
        assert walk.axis[k] == nz[-1]


def test_walk_arrays_stay_vectorised_at_65536_elements():
    t = Tensor.arange((256, 256)).transpose()
    walk = C.walk_arrays(t.layout)
    assert len(walk.position) == 65536
    assert np.array_equal(walk.position, np.arange(65536).reshape(256, 256).T.ravel())


def test_logical_columns_are_in_walk_order_with_values_read_from_the_buffer():
    t = Tensor.arange((3, 4)).transpose()
    cols = C.columns_for(t)
    # each index as Python prints it, in the walk's order
    assert cols.logical["index"] == [str(step.index) for step in t.layout.walk()]
    # What element k reads: frame k's position, and the buffer's value there.
    pos = cols.frames["pos"]
    assert pos.tolist() == t.layout.positions().tolist()
    assert [cols.buffer["value"][p] for p in pos] == t.to_numpy().ravel().tolist()
    # Row-major cells: x is the column, -y the row.
    assert cols.logical["x"].tolist()[:4] == [0, 1, 2, 0]
    assert cols.logical["y"].tolist()[:4] == [0, 0, 0, -1]


def test_buffer_columns_count_reads_and_grey_what_no_element_reads():
    t = apply(parse(".slice(s[1]).broadcast((3, 1, 4))"), Tensor.arange((3, 4)))[-1]
    cols = C.columns_for(t)
    reads = np.asarray(cols.buffer["reads"])
    assert reads.tolist() == [0] * 4 + [3] * 4 + [0] * 4
    assert (
        cols.buffer_labels["reads_label"][4] == "×3" and cols.buffer_labels["reads_label"][0] == ""
    )
    assert all(c == C.GREY_RGBA for c in np.asarray(cols.buffer["color"])[reads == 0])
    # A read cell takes the colour of the first logical element that reads it.
    pos = cols.frames["pos"].tolist()
    for p in np.flatnonzero(reads):
        assert cols.buffer["color"][p] == cols.logical["color"][pos.index(p)]


@pytest.mark.parametrize(
    "pipelines",
    [
        ("", ".slice(s[::-1])", ".slice(s[:, ::-1])", ".transpose().transpose()"),
        (".transpose()", ".view((4, 3))", ".slice(s[::-1]).transpose()"),
        (".slice(s[1]).broadcast((3, 4))", ".flip(0)", ".expand((3, 4))"),
    ],
)
def test_the_logical_columns_are_the_same_for_every_walk_of_a_shape(pipelines):
    # An edit that keeps the shape sends the logical figure nothing (and the browser does
    # not paint its cells again) only because nothing in its columns depends on the walk.
    tensors = [apply(parse(p), Tensor.arange((3, 4)))[-1] for p in pipelines]
    assert len({tuple(t.layout.shape) for t in tensors}) == 1
    assert len({tuple(t.layout.positions().tolist()) for t in tensors}) > 1  # walks differ
    first = C.columns_for(tensors[0]).logical
    for t in tensors[1:]:
        logical = C.columns_for(t).logical
        assert set(logical) == set(first)
        for key, column in logical.items():
            assert np.array_equal(np.asarray(column), np.asarray(first[key])), key


def test_every_cell_of_a_nested_grid_has_its_own_place():
    for shape in [(5,), (3, 4), (2, 3, 4), (2, 2, 3, 4), (2, 2, 2, 2, 2, 2, 2, 2)]:
        t = Tensor.arange(shape)
        cols = C.columns_for(t)
        xy = set(zip(cols.logical["x"].tolist(), cols.logical["y"].tolist()))
        assert len(xy) == math.prod(shape)
        grid = cols.grid
        assert max(cols.logical["x"]) == grid.width - 1
        assert -min(cols.logical["y"]) == grid.height - 1
        lead = math.prod(shape[:-2]) if len(shape) > 2 else 0
        assert len(cols.tiles["text"]) == lead


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 400), step=st.sampled_from([1, -1, 2, -3]))
def test_a_long_1d_grid_reads_in_rows_as_numpy_prints_it(n, step):
    # One row of 24 on a 1024x768 projector had 25 px cells, too small for a letter. A
    # 1-D grid keeps its elements in index order, left to right and row after row, each
    # in its own place, the rows as even as they go and no longer than 16 up to 48 cells
    # (NumPy prints a long 1-D array over lines the same way); up to 16, one row.
    t = apply(parse(f"[::{step}]"), Tensor.arange((n,)))[-1]
    k = t.layout.shape[0]
    cols = C.columns_for(t)
    if cols.overview:
        return
    x, y = np.asarray(cols.logical["x"]), np.asarray(cols.logical["y"])
    order = np.lexsort((x, -y))  # top row first, then left to right
    assert order.tolist() == list(range(k))
    rows = np.unique(y)
    lengths = [int((y == r).sum()) for r in rows[::-1]]
    assert len(set(zip(x.tolist(), y.tolist()))) == k
    assert max(x) == cols.grid.width - 1 and -min(y) == cols.grid.height - 1
    if k <= 16:
        assert lengths == [k]
    elif k <= 48:
        assert max(lengths) <= 16 and max(lengths) - min(lengths) <= len(lengths)
        assert len(lengths) == math.ceil(k / 16)  # no more rows than 16 to a row needs
    assert all(length == lengths[0] for length in lengths[:-1])  # only the last is short
    if len(lengths) > 1:  # rows apart as the buffer lane's, and the heading says so
        assert np.allclose(np.diff(rows), C.BUFFER_ROW_PITCH)
        from explorer.fields import headings_html

        grid, _ = headings_html((k,), n, 16)
        assert f"drawn {lengths[0]} to a row" in grid


def test_tile_labels_name_the_leading_indices():
    cols = C.columns_for(Tensor.arange((2, 3, 4)))
    assert cols.tiles["text"] == ["[0, :, :]", "[1, :, :]"]


def test_above_the_detail_limit_the_grid_is_summarised():
    t = Tensor.arange((128, 64)).transpose()
    cols = C.columns_for(t)
    assert cols.overview["elements"] == 8192 and len(cols.logical["x"]) == 36
    assert len(cols.frames["pos"]) == 36
    full = C.columns_for(Tensor.arange((64, 64)))
    assert not full.overview and len(full.logical["x"]) == 4096


def test_labels_are_built_only_up_to_the_label_limit():
    small = C.columns_for(Tensor.arange((3, 4)).transpose())
    assert small.labels and small.logical_labels["pos_label"][:3] == ["@0", "@4", "@8"]
    read = [small.buffer["value"][p] for p in small.frames["pos"]]
    assert small.logical_labels["value_label"] == [str(v) for v in read]
    assert small.buffer_labels["pos_label"][:3] == ["0", "1", "2"]
    # Each label's text colour is the one for its cell's colour.
    text_for = dict(zip(C._PALETTE_RGBA.tolist(), C._PALETTE_TEXT.tolist()))
    assert [text_for[c] for c in small.logical["color"]] == list(small.logical_labels["text_color"])
    sliced = C.columns_for(apply(parse(".slice(s[::2])"), Tensor.arange((4, 4)))[-1])
    want = [text_for[c] if r else C.UNREAD_TEXT for c, r in zip(sliced.buffer["color"].tolist(), sliced.buffer["reads"].tolist())]  # fmt: skip
    assert list(sliced.buffer_labels["text_color"]) == want and C.UNREAD_TEXT in want
    big = C.columns_for(Tensor.arange((64, 64)))
    assert not big.labels and len(big.logical["x"]) == 4096
    assert all(len(v) == 0 for v in {**big.logical_labels, **big.buffer_labels}.values())


def test_changed_columns_are_exactly_the_ones_that_differ():
    # Law: old updated with the change equals new, and no column in the change is unchanged.
    pairs = [
        ("", ".transpose()"),
        ("", ".slice(s[::-1])"),
        (".transpose()", ".view((12,))"),
        ("", ".narrow(0, 1, 2)"),
    ]
    for a, b in pairs:
        old = C.columns_for(apply(parse(a), Tensor.arange((3, 4)))[-1])
        new = C.columns_for(apply(parse(b), Tensor.arange((3, 4)))[-1])
        for part in ("logical", "buffer", "frames"):
            o, n = getattr(old, part), getattr(new, part)
            change = C.changed_columns(o, n)
            merged = {**o, **change}
            assert all(np.array_equal(np.asarray(merged[k]), np.asarray(n[k])) for k in n)
            if change is not n:
                assert all(not np.array_equal(np.asarray(o[k]), np.asarray(n[k])) for k in change)
    same = C.columns_for(Tensor.arange((3, 4)))
    assert C.changed_columns(same.logical, C.columns_for(Tensor.arange((3, 4))).logical) == {}
    shorter = C.columns_for(Tensor.arange((2, 4))).logical
    assert C.changed_columns(same.logical, shorter) is shorter


@given(
    st.lists(st.integers(-3, 3), min_size=1, max_size=6),
    st.lists(st.integers(-3, 3), min_size=1, max_size=6),
)
def test_comparing_kept_columns_again_gives_the_same_answer(xs, ys):
    # Equality of two read-only arrays that own their data is kept with the pair; asked
    # again (the kept answer) it must still be array_equal's.
    a, b = np.array(xs, dtype=np.int16), np.array(ys, dtype=np.int16)
    a.flags.writeable = b.flags.writeable = False
    want = np.array_equal(a, b)
    assert C._same_column(a, b) == want
    assert C._same_column(a, b) == want


def test_a_read_only_view_of_a_writable_array_is_compared_each_time():
    # Its values can change under it (through the array it views): nothing may be kept.
    base, other = np.arange(4), np.arange(4)
    view = base[:]
    view.flags.writeable = other.flags.writeable = False
    assert C._same_column(view, other)
    base[0] = 9
    assert not C._same_column(view, other)


def test_changed_columns_count_nan_padding_as_unchanged():
    # The labels sources pad with NaN positions: the same padding is no change.
    pad = np.array([1.5, np.nan, np.nan], dtype=np.float32)
    old = {"x": pad, "text": ["a", "", ""]}
    assert C.changed_columns(old, {"x": pad.copy(), "text": ["a", "", ""]}) == {}
    moved = np.array([2.5, np.nan, np.nan], dtype=np.float32)
    assert set(C.changed_columns(old, {"x": moved, "text": ["a", "", ""]})) == {"x"}


def test_frames_carry_previous_position_for_the_jump():
    cols = C.columns_for(Tensor.arange((3, 4)).transpose())
    pos, prev = cols.frames["pos"], cols.frames["prev"]
    assert prev[0] == pos[0] and prev[1:].tolist() == pos[:-1].tolist()


def test_element_colours_are_distinct_and_from_viridis():
    colors = C.element_colors(12)
    assert len(set(colors.tolist())) == 12
    from bokeh.palettes import Viridis256

    assert set(colors.tolist()) <= set(Viridis256)
    # ... and they are what the grid draws, packed as RGBA for the browser.
    drawn = C.columns_for(Tensor.arange((3, 4))).logical["color"]
    assert drawn.dtype == np.uint32 and drawn.tolist() == [C.rgba(c) for c in colors]


@pytest.mark.parametrize(
    ("name", "tensor"), list(tensors()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_worked_adj_stride_evaluates_to_the_layouts_adj_stride(name, tensor):
    # Law: each worked line, evaluated as arithmetic, gives the layout's own entry.
    layout = tensor.layout
    for d, line in enumerate(adj_stride_work(layout)):
        lhs, rhs = line.split(" = ", 1)
        assert lhs == f"adj_stride[{d}]"
        expr, result = rhs.rsplit(" = ", 1)
        assert int(result) == layout.adj_stride[d]
        if not expr.startswith("stride"):
            assert eval(expr, {"__builtins__": {}}) == layout.adj_stride[d]  # our own text


def test_fields_print_as_python_does():
    layout = Tensor.arange((3, 4)).transpose().layout
    assert field_values(layout) == {
        "shape": "(4, 3)",
        "stride": "(1, 4)",
        "adj-stride": "(-7, 4)",
        "offset": "0",
        "len": "12",
        "is-contiguous": "False",
        "is-transposed": "True",
    }
    assert field_values(layout, scale=4)["stride"] == "(4, 16)"


def test_flag_reasons_point_at_the_first_break_of_the_walk():
    transposed = Tensor.arange((3, 4)).transpose().layout
    assert "adj_stride[1] = 4" in contiguous_reason(transposed)
    assert "axis 0" in transposed_reason(transposed)
    broadcast = Tensor.arange((4,)).broadcast((3, 4)).layout
    assert "from (0, 3) to (1, 0)" in contiguous_reason(broadcast)
    assert "broadcast" in transposed_reason(broadcast)
    assert "in order" in contiguous_reason(Layout((3, 4)))
    assert "0 or 1" in contiguous_reason(Layout((1,)))


# --------------------------------------------------------------------------- kept columns


def same_data(x: dict, y: dict) -> bool:
    """Two sources' data hold the same columns (NaN equals NaN)."""
    return x.keys() == y.keys() and all(
        np.array_equal(x[k], y[k], equal_nan=x[k].dtype.kind == "f")
        if isinstance(x[k], np.ndarray)
        else list(x[k]) == list(y[k])
        for k in x
    )


def same_columns(a: C.Columns, b: C.Columns) -> bool:
    parts = ("logical", "buffer", "frames", "tiles", "logical_labels", "buffer_labels")
    return all(same_data(getattr(a, p), getattr(b, p)) for p in parts) and (
        a.grid,
        a.buffer_cols,
        a.buffer_rows,
        a.labels,
        a.overview,
    ) == (b.grid, b.buffer_cols, b.buffer_rows, b.labels, b.overview)


layouts = st.tuples(
    st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple),
    st.integers(0, 2),
    st.booleans(),
    st.sampled_from(["int64", "int32", "float64", "bool"]),
    st.integers(0, 2),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(layouts, min_size=1, max_size=25))
def test_kept_columns_are_the_columns_of_the_tensor_asked_for(specs):
    # A law: whatever was drawn before, columns_for(t) is what working t out afresh gives.
    # Tensors here differ only in stride, offset, dtype or values, never in shape alone,
    # so a key that left one of them out gives another tensor's columns.
    for shape, offset, flip, dtype, values in specs:
        n = math.prod(shape)
        buffer = (np.arange(n + 2) * (values + 1) - values).astype(dtype)
        layout = Layout(shape).with_offset(offset)  # two spare cells: offsets 0..2 fit
        if flip and len(shape) > 1:
            layout = layout.transpose()
        tensor = Tensor(buffer, layout)
        assert same_columns(
            C.columns_for(tensor), C._columns(tensor, C.DETAIL_LIMIT, C.LABEL_LIMIT)
        )


def test_kept_columns_are_shared_read_only_and_bounded():
    first = C.columns_for(Tensor.arange((3, 4)).transpose())
    assert C.columns_for(Tensor.arange((3, 4)).transpose()) is first  # another tensor, same
    with pytest.raises(ValueError):
        first.buffer["pos"][0] = 7  # shared between sessions: nobody may change it
    for n in range(1, C.KEPT + 5):
        C.columns_for(Tensor.arange((n, 2)))
    assert len(C._kept) == C.KEPT
    assert C.columns_for(Tensor.arange((3, 4)).transpose()) is not first  # long forgotten


def test_a_tensor_of_python_objects_is_worked_out_each_time():
    tensor = Tensor(np.array([1, "a", 2.5, None], dtype=object), Layout((2, 2)))
    assert C.columns_for(tensor) is not C.columns_for(tensor)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**40), 2**40) | st.integers(-200, 200), min_size=1, max_size=20))
def test_compact_integers_keep_their_values_in_the_fewest_bits(values):
    column = np.array(values, dtype=np.int64)
    small = C._compact({"c": column})["c"]
    assert small.tolist() == values
    narrower = [t for t in (np.int8, np.int16, np.int32) if np.dtype(t).itemsize < small.itemsize]
    assert all(min(values) < np.iinfo(t).min or max(values) > np.iinfo(t).max for t in narrower)


def test_the_walk_at_64x64_is_sent_in_16_bits():
    frames = C.columns_for(Tensor.arange((64, 64)).transpose()).frames
    assert {k: frames[k].dtype.itemsize for k in ("pos", "prev", "delta")} == dict.fromkeys(
        ("pos", "prev", "delta"), 2
    )
    assert frames["axis"].dtype.itemsize == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", ".transpose()", ".slice(s[1:, ::2])", ".view((2, 6))"]),
            st.sampled_from([0.0, 20.0, 40.0, 60.0]),
            st.sampled_from([1.0, 1.5]),
            st.booleans(),
            st.booleans(),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_kept_label_rows_are_the_rows_of_the_drawing_asked_for(draws):
    # A law, as for kept columns: whatever was drawn before, the rows given are those
    # worked out afresh for these columns, cell sizes, scale, offset marker and concealment.
    from explorer import labels as L

    for ops, cell, scale, offset, concealed in draws:
        cols = C.columns_for(apply(parse(ops), Tensor.arange((3, 4)))[-1])
        cells = {"logical": cell, "buffer": cell / 2}
        at = (1.0, 0.5) if offset else None
        kept = L.rows_for(cols, cells, scale, at, concealed)
        fresh = L.label_rows(L.label_blocks(cols, cells, scale, at, concealed))
        assert kept.keys() == fresh.keys()
        assert all(same_data(kept[fig], fresh[fig]) for fig in fresh)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 12), min_size=2, max_size=4),
    st.permutations(range(4)),
)
def test_a_wrapped_buffer_holds_whole_rows_of_the_tensor(shape, order):
    # A tensor's rows (its last axis, as laid out in the buffer) never break across the
    # buffer's wrapped rows: the lane is a whole number of rows wide, whatever the walk.
    shape = tuple(shape)
    n = math.prod(shape)
    row = shape[-1]
    axes = [a for a in order if a < len(shape)]
    layout = Layout(shape).permute(*axes)
    width = C.buffer_width(n, C.buffer_row(layout))
    if n <= 16:
        assert width == n  # one lane
    elif 1 < row < n and sum(1 for d in shape if d > 1) > 1 and shape[-1] > 1:
        assert width % row == 0 and width <= max(128, row), (shape, axes, width)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 6), min_size=1, max_size=4),
    st.permutations(range(4)),
)
def test_a_lane_wrapped_anew_keeps_its_cells_and_whole_rows(shape, order):
    # Every wrap a lane is offered holds whole rows of its own wrap (so of the tensor),
    # up to one lane; wrapped anew, each cell keeps its data and sits where reading the
    # lane row by row finds its position; its labels sit on it.
    shape = tuple(shape)
    layout = Layout(shape).permute(*[a for a in order if a < len(shape)])
    cols = C.columns_for(Tensor(np.arange(math.prod(shape)), layout))
    n = len(cols.buffer["pos"])
    widths = C.wraps(cols)
    assert widths[0] == cols.buffer_cols
    assert widths[-1] == n or widths == [cols.buffer_cols]  # up to one lane
    for width in widths:
        assert width % cols.buffer_cols == 0 or width == n, (shape, width)
        out = C.rewrapped(cols, width)
        assert out.buffer_cols == width and out.buffer_rows == -(-n // width)
        for key in cols.buffer:
            if key not in ("x", "y"):
                assert np.array_equal(out.buffer[key], cols.buffer[key]), key
        x, y = np.asarray(out.buffer["x"]), np.asarray(out.buffer["y"])
        assert ((-y / C.BUFFER_ROW_PITCH) * width + x).tolist() == list(range(n))
        assert x.max(initial=0) < width
        if cols.labels:
            labels = out.buffer_labels
            assert np.array_equal(labels["x"], x) and np.array_equal(labels["y"], y)
            assert (np.asarray(labels["x_left"]) < x).all() and (x < labels["x_right"]).all()
            assert labels["value_label"] == cols.buffer_labels["value_label"]
    assert C.rewrapped(cols, n + 1) is cols  # not one of its wraps: as it was


def test_a_5_by_7_buffer_is_5_rows_of_7():
    assert C.columns_for(Tensor.arange((5, 7))).buffer_cols == 7
    assert C.columns_for(Tensor.arange((5, 7)).transpose()).buffer_cols == 7
