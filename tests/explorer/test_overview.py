"""A tensor too large to draw cell by cell: the grid draws NumPy's edge items of each axis,
the buffer an overview of its whole span, and the walk the drawn elements.

Laws, with NumPy as the oracle: the drawn indices of each axis are those
``np.array2string`` prints with the same ``edgeitems``; each drawn element's position and
value are ``as_strided``'s at that index; the overview's read counts are the
``np.bincount`` of the walk's positions, binned."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from candela import Layout, Tensor
from explorer import columns as C
from explorer.pipeline import (
    MAX_COPY,
    MAX_ELEMENTS,
    MAX_ELEMENTS_TEXT,
    positions_buffer,
    values_are_positions,
)
from explorer.state import StateError, evaluate


def numpy_edge_items(n: int, edge: int) -> list[int]:
    # The indices NumPy prints of an axis of n with `edgeitems=edge`, summarising.
    text = np.array2string(np.arange(n), threshold=0, edgeitems=edge, separator=",")
    return [int(v) for v in re.findall(r"\d+", text)]


@st.composite
def strided(draw, max_axis=9):
    """A tensor over an arange buffer: any strides (negative, zero: broadcasts, overlaps)."""
    shape = tuple(draw(st.lists(st.integers(0, max_axis), min_size=1, max_size=4)))
    stride = tuple(draw(st.lists(st.integers(-4, 4), min_size=len(shape), max_size=len(shape))))
    low = sum(min(0, s) * (n - 1) for s, n in zip(stride, shape) if n)
    high = sum(max(0, s) * (n - 1) for s, n in zip(stride, shape) if n)
    offset = -low + draw(st.integers(0, 3))
    size = offset + high + 1 + draw(st.integers(0, 3))
    virtual = draw(st.booleans())
    buffer = positions_buffer(size) if virtual else np.arange(size, dtype=np.int64) * 10
    return Tensor(buffer, Layout.from_strided(shape, stride, offset)), virtual


def oracle(tensor, virtual):
    # The tensor as NumPy sees it, over a buffer whose values are what the tensor's are.
    size = len(tensor.buffer)
    buffer = np.arange(size, dtype=np.int64) * (1 if virtual else 10)
    layout = tensor.layout
    item = buffer.itemsize
    return np.lib.stride_tricks.as_strided(
        buffer[layout.offset :], layout.shape, [s * item for s in layout.stride]
    ), np.lib.stride_tricks.as_strided(
        np.arange(size)[layout.offset :], layout.shape, [s * item for s in layout.stride]
    )


def _fits(shape, fixed, most, limit) -> int | None:
    # The edge drawn (None where it does not fit) where drawing index 0 of the first `fixed` axes and NumPy's edge items (up to
    # `most`, as few as keep within `limit`, 1 at the least) of the rest keeps the grid
    # within SUMMARY_GRID cells each way and its tiles' headers, at their shortest
    # ("[0,221]"), within SUMMARY_HEADERS characters across it.
    rest = shape[fixed:]
    for e in range(most, 0, -1):
        kept = [numpy_edge_items(v, e) if v else [] for v in rest]
        if math.prod(map(len, kept)) <= limit or e == 1:
            break
    cut = [False] * fixed + [len(k) < v for k, v in zip(kept, rest)]
    grid = C._summary_grid((1,) * fixed + tuple(rest), e, cut)[2]
    kept = [[0]] * fixed + kept
    lead = kept[:-2]
    headers = [
        "[" + ",".join(map(str, t)) + "]" for t in __import__("itertools").product(*lead)
    ] if lead else [""]  # fmt: skip
    across = grid.width * max(map(len, headers))
    fits = max(grid.width, grid.height) <= C.SUMMARY_GRID and (
        across <= C.SUMMARY_HEADERS * (grid.shape[-1] + 1)
    )
    return e if fits else None


@settings(max_examples=300, deadline=None)
@given(strided(), st.integers(1, 40), st.integers(1, 3))
def test_the_drawn_elements_are_numpys_edge_items_read_where_numpy_reads(case, limit, edge):
    tensor, virtual = case
    shape = tuple(tensor.layout.shape)
    n = math.prod(shape)
    cols = C.overview_columns(tensor, limit, 0, edge)
    o = cols.overview
    index = [tuple(int(v) for v in re.findall(r"-?\d+", s)) for s in cols.logical["index"]]
    if n > limit:  # summarised: NumPy's edge items of each axis, all combined in walk order
        e, fixed = o["edge"], o["fixed"]
        # ... after the first `fixed` axes, drawn at index 0 alone: the first choice, in
        # order (fewest fixed, then largest edge), whose grid fits a laptop's screen
        assert e <= edge and (e == 1 or o["drawn"] <= limit)
        assert _fits(shape, fixed, e, limit) == e
        assert not any(_fits(shape, f, m, limit) for f in range(fixed) for m in range(1, edge + 1))
        assert all(_fits(shape, fixed, m, limit) in (None, e) for m in range(e + 1, edge + 1))
        expected = [[0]] * fixed + [numpy_edge_items(v, e) if v else [] for v in shape[fixed:]]
    else:
        expected = [list(range(v)) for v in shape]
    assert index == list(__import__("itertools").product(*expected))
    values, positions = oracle(tensor, virtual)
    at = [positions[i] for i in index]
    assert cols.frames["at"].tolist() == at
    assert cols.frames["value"].tolist() == [values[i] for i in index]
    assert cols.frames["flat"].tolist() == [np.ravel_multi_index(i, shape) for i in index]
    skips = np.diff([-1, *cols.frames["flat"].tolist()]) - 1
    assert cols.frames["skip"].tolist() == skips.tolist()
    # The cursor's cell in the buffer is the bin the position falls in.
    assert (cols.frames["pos"] == np.asarray(at, dtype=np.int64) // o["bin"]).all()
    # The overview's cells dotted as read by a drawn element: exactly those bins.
    if o["bin"] > 1 and at:
        dotted = set(zip(cols.drawn_reads["x"].tolist(), cols.drawn_reads["y"].tolist()))
        bins = {p // o["bin"] for p in at}
        assert dotted == {(cols.buffer["x"][b], cols.buffer["y"][b]) for b in bins}


@settings(max_examples=300, deadline=None)
@given(strided(max_axis=12), st.integers(1, 30), st.booleans())
def test_the_overviews_read_counts_are_the_binned_bincount_of_the_walk(case, cells, closed):
    # Either every position worked out, or (`closed`: what a tensor past C.WORK elements
    # takes) the walk's longest run counted in closed form from each of its starts.
    tensor, _ = case
    n = tensor.layout.len
    size = len(tensor.buffer)
    width = -(-size // cells)
    reads, first, share, sampled = C.binned_reads(
        tensor.layout, size, width, enumerate_up_to=0 if closed else None
    )
    assert share == sampled == 1.0
    positions = np.asarray(tensor.layout.positions(), dtype=np.int64)
    bins = positions // width
    assert reads.sum() == n
    assert reads.tolist() == np.bincount(bins, minlength=len(reads)).tolist()
    # The first element (walk order) to read each bin colours it.
    for b in range(len(reads)):
        hits = np.flatnonzero(bins == b)
        assert first[b] == (hits[0] if len(hits) else -1)


@settings(max_examples=300, deadline=None)
@given(strided(max_axis=12), st.integers(1, 30), st.integers(0, 40))
def test_estimated_read_counts_count_only_what_is_read_and_add_up_to_the_walk(case, cells, work):
    # Past `work`, evenly spread starts of the longest run are counted and scaled up: a bin
    # counted is read, no earlier than its true first reader, and the counts add up to the
    # number of elements (within the rounding of each bin).
    tensor, _ = case
    n = tensor.layout.len
    size = len(tensor.buffer)
    width = -(-size // cells)
    reads, first, share, sampled = C.binned_reads(
        tensor.layout, size, width, work, enumerate_up_to=0
    )
    bins = np.asarray(tensor.layout.positions(), dtype=np.int64) // width
    true = np.bincount(bins, minlength=len(reads))
    assert 0 < share <= 1 and 0 < sampled <= 1
    assert abs(int(reads.sum()) - n) <= len(reads) / 2
    for b in range(len(reads)):
        assert (reads[b] > 0) == (first[b] >= 0)
        if reads[b]:
            assert true[b]
    if share == 1:  # counted exactly (in memory order), however many rows the walk has
        assert reads.tolist() == true.tolist()
    if sampled == 1:
        assert first.tolist() == [
            (np.flatnonzero(bins == b)[:1].tolist() or [-1])[0] for b in range(len(reads))
        ]


@pytest.mark.parametrize("chunk", [1, 5, 7, 64, 1 << 18])
def test_positions_in_chunks_are_the_walk(chunk):
    for shape, ops in [((4, 5, 6), (0, 2, 1)), ((3, 70), (1, 0)), ((130,), (0,))]:
        layout = Layout(shape).transpose(*ops)
        got = np.concatenate(
            [p for _, p in C.position_chunks(layout.shape, layout.stride, 0, chunk)]
        )
        assert got.tolist() == list(layout.positions())


def test_a_grid_of_300_by_300_marks_its_gaps():
    cols = C.columns_for(Tensor.arange((300, 300)))
    gaps = cols.gaps["text"]
    # A gap column in each of the 6 drawn rows, a gap row under each of 6 columns, a corner.
    assert sorted(gaps) == sorted(["⋯"] * 6 + ["⋮"] * 6 + ["⋱"])
    assert len(cols.logical["x"]) == 36 and cols.overview["summarised"] == [0, 1]


def test_the_channels_last_image_batch_is_drawn_with_true_indices():
    result = evaluate("16,3,224,224", ".permute(0,2,3,1)")
    assert values_are_positions(result.tensor.buffer)  # 2.4 M elements, no buffer made
    cols = C.columns_for(result.tensor)
    assert cols.overview["elements"] == 16 * 3 * 224 * 224
    # NumPy's 3 edge items made a grid of tiles 55 cells tall: 2 keep it within 32
    assert cols.overview["edge"] == 2 and cols.overview["drawn"] == 4 * 4 * 4 * 3
    assert max(cols.grid.width, cols.grid.height) <= C.SUMMARY_GRID
    assert cols.logical["index"][-1] == "(15, 223, 223, 2)"
    assert cols.frames["at"][-1] == 16 * 3 * 224 * 224 - 1
    assert cols.buffer["reads"].sum() == 16 * 3 * 224 * 224
    assert len(cols.buffer["x"]) <= C.OVERVIEW_CELLS
    # Tiles: the first and last 2 of axes 0 and 1, each header with its true indices.
    assert cols.tiles["text"][2] == "[0, 222, :, :]" and len(cols.tiles["text"]) == 16


@pytest.mark.parametrize(
    "ops", [".T.contiguous()", ".T.reshape(-1)", ".T[::7].as_contiguous()", ".T.flatten()"]
)
def test_a_copy_of_a_buffer_never_made_holds_what_numpy_copies(ops):
    big = evaluate("70,80", ops)
    real = np.arange(70 * 80).reshape(70, 80).T
    expected = {
        ".T.contiguous()": real,
        ".T.reshape(-1)": real.reshape(-1),
        ".T[::7].as_contiguous()": real[::7],
        ".T.flatten()": real.reshape(-1),
    }[ops]
    assert big.tensor.to_numpy().tolist() == expected.tolist() and big.copied


def test_the_bounds_name_their_values():
    assert MAX_ELEMENTS == 2**59  # element numbers, positions and bytes fit in 64 bits
    bound = re.escape(MAX_ELEMENTS_TEXT)
    with pytest.raises(StateError, match=f"{MAX_ELEMENTS + 1}.* more than the {bound}"):
        evaluate(f"{MAX_ELEMENTS + 1}", "")
    with pytest.raises(StateError, match=f"more than the {bound}"):
        evaluate(f"{2**30},{2**30}", "")
    with pytest.raises(StateError, match=f"at most {bound}"):
        evaluate(f"{2**29}", f".broadcast((3, {2**30}, {2**29}))")
    with pytest.raises(StateError, match=f"copies at most {MAX_COPY:,}"):
        evaluate("2048,4096", ".T.contiguous()")
    # A view of as many elements copies nothing and is drawn, as is the largest of all.
    assert evaluate("4096,4096", ".T").layout.len == 1 << 24
    assert evaluate(f"{2**29},{2**30}", ".T").layout.len == MAX_ELEMENTS


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 12), min_size=1, max_size=6).map(tuple),
    st.integers(1, 60),
    st.integers(1, 3),
)
def test_drawn_cells_and_gap_marks_never_overlap_and_stay_in_the_grid(shape, limit, edge):
    tensor = Tensor(positions_buffer(math.prod(shape)), Layout(shape))
    cols = C.overview_columns(tensor, limit, 0, edge)
    cells = set(zip(cols.logical["x"].tolist(), cols.logical["y"].tolist()))
    marks = list(zip(np.asarray(cols.gaps["x"]).tolist(), np.asarray(cols.gaps["y"]).tolist()))
    assert len(cells) == len(cols.logical["x"])  # one cell per drawn element
    assert not cells & set(marks) and len(set(marks)) == len(marks)
    for x, y in [*cells, *marks]:
        assert 0 <= x <= cols.grid.width - 1 and -(cols.grid.height - 1) <= y <= 0
    # A mark for every gap: each summarised axis leaves a gap where its indices jump.
    if cols.overview["summarised"]:
        assert marks


def test_two_views_of_a_buffer_too_large_for_their_lane_are_refused_by_name():
    from explorer.state import ExplorerState

    st_ = ExplorerState(shape=(100, 100), ops=".T")
    with pytest.raises(ValueError, match="at most 4,096; this buffer has 10,000"):
        st_.compare = ".T"  # from Python: raised, and nothing changes
    assert st_.error is None and st_.compare == ""
    with st_.typed():  # typed on the page: said under the boxes
        st_.compare = ".T"
    assert st_.error.startswith("compare: ") and "at most 4,096; this buffer has 10,000" in (
        st_.error
    )
    assert st_.compare_result is None and st_.result.ops == ".T"


PEAK_PROBE = """
import re, sys
from explorer.state import ExplorerState
def status(key):
    return int(re.search(key + r":\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024
ExplorerState(shape=(3, 4))  # what a server holds before the URL
try:
    open("/proc/self/clear_refs", "w").write("5")  # the peak starts again here
except OSError:
    print("no way to reset the peak")
    sys.exit()
before = status("VmRSS")
state = ExplorerState(shape=sys.argv[1], ops=sys.argv[2], compare=sys.argv[3])
assert state.error is None, state.error
print(status("VmHWM") - before)
"""


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/clear_refs"), reason="Linux")
@pytest.mark.parametrize(
    "shape, ops, compare", [("4096,4096", ".T", ""), ("4096", ".broadcast((4096, 4096))", ".T")]
)
def test_a_url_of_16_million_elements_holds_no_memory_in_proportion(shape, ops, compare):
    # Its int64 buffer would be 128 MB, its positions as many: the server's peak resident
    # memory grows by a small fraction of that.
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", PEAK_PROBE, shape, ops, compare],
        capture_output=True,
        text=True,
        check=True,
    )
    if "no way" in run.stdout:
        pytest.skip("this system cannot reset a process's peak memory")
    assert float(run.stdout.split()[-1]) < 16, run.stdout


@pytest.mark.parametrize("cell", [20.0, 30.0, 46.0])
@pytest.mark.parametrize("query", [((300, 300), ".T"), ((3, 4), ""), ((70, 3), ".T")])
def test_a_cells_label_fits_its_cell_or_is_left_to_hover(cell, query):
    from explorer import labels as L

    cols = C.columns_for(evaluate(*query).tensor)
    for blocks in L.label_blocks(
        cols, {"logical": cell, "buffer": cell}, 1.0, None, False
    ).values():
        for kind, rows in blocks:
            if rows is None or kind not in L.LABEL_WIDTH:
                continue
            px = float(rows["size"].removesuffix("px"))
            assert px >= L.LEAST_FONT
            assert 0.6 * px * max(len(t) for t in rows["text"]) <= L.LABEL_WIDTH[kind] * cell + 1e-9


@pytest.mark.parametrize(
    "shape, ops, view",
    [
        ("16,3,224,224", ".permute(0,2,3,1)", lambda a: a.transpose(0, 2, 3, 1)),
        ("4096,4096", ".T[::-3]", lambda a: a.T[::-3]),
        ("4096", ".broadcast((4096, 4096))", lambda a: np.broadcast_to(a, (4096, 4096))),
    ],
)
def test_fields_of_a_large_layout_are_numpys_worked_out_from_the_layout_alone(shape, ops, view):
    # NumPy's strides of the same view of a one-byte array (bytes are elements), its flags;
    # and nothing in proportion to the elements: well under a second for 16 M.
    import time

    from explorer.fields import field_values

    sizes = tuple(int(v) for v in shape.split(","))
    a = view(np.zeros(sizes, dtype=np.int8))
    t0 = time.perf_counter()
    layout = evaluate(shape, ops).layout
    fields = field_values(layout)
    assert time.perf_counter() - t0 < 1.0
    assert fields["shape"] == str(a.shape) and fields["stride"] == str(a.strides)
    assert fields["len"] == str(a.size)
    assert fields["is-contiguous"] == str(a.flags.c_contiguous)


LARGE_LAYOUTS = [
    ("4096,4096,2", ""),  # a KV cache: 32 M elements
    ("64,3,512,512", ".permute(0,2,3,1)"),  # a batch of images, channels last: 50 M
    ("10,10,10,10,10,10,10,10", ".permute(7,6,5,4,3,2,1,0)"),  # 100 M, every axis cut
    ("256,256,256,256", "[::2, ::3, 1::2, ::-5]"),  # 33 M, no two axes one run
    (f"{2**29},{2**30}", ".T"),  # the largest
    (f"{2**20}", f".broadcast(({2**20}, {2**20}))"),
]

#: Run in an interpreter of its own: ``tracemalloc`` counts every thread's allocations, and
#: in the whole suite a server another test started (its page pool, its sessions) allocates
#: in the same process while the layout is worked out.
PEAK_SCRIPT = """
import json, sys, tracemalloc
from explorer import columns as C
from explorer.state import evaluate
peaks = []
for shape, ops in json.loads(sys.argv[1]):
    C.columns_for(evaluate("2,3", ".T").tensor)  # imports, caches
    tracemalloc.start()
    try:
        C.columns_for(evaluate(shape, ops).tensor)
        peaks.append(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()
print(json.dumps(peaks))
"""


@pytest.fixture(scope="module")
def large_layout_peaks() -> dict[tuple[str, str], int]:
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT, json.dumps(LARGE_LAYOUTS)],
        cwd=root, capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    return dict(zip(LARGE_LAYOUTS, json.loads(out.stdout)))


@pytest.mark.parametrize("shape, ops", LARGE_LAYOUTS)
def test_a_layout_of_any_size_is_drawn_in_bounded_memory(shape, ops, large_layout_peaks):
    # No array in proportion to the elements: the peak of what Python allocates while the
    # state is evaluated and its columns worked out stays under 8 MB (an int64 array of
    # the positions of the smallest here would be 256 MB). The read counts add up to
    # the elements, and are exact unless the heading says they are estimated.
    from explorer.fields import headings_html

    result = evaluate(shape, ops)
    cols = C.columns_for(result.tensor)
    peak = large_layout_peaks[shape, ops]
    n = result.layout.len
    assert n > 1 << 24 and peak < 8 << 20, (n, peak)
    o = cols.overview
    assert o["elements"] == n and o["cells"] <= C.OVERVIEW_CELLS
    reads = cols.buffer["reads"].astype(np.int64)
    if o["share"] == 1:
        assert int(reads.sum()) == n
    else:
        assert abs(int(reads.sum()) - n) <= o["cells"]
    _, lane = headings_html(result.layout.shape, o["buffer"], cols.buffer_cols, overview=o)
    assert ("read counts estimated" in lane) == (o["share"] < 1)
    if o["share"] == 1 and shape.startswith("4096"):  # a contiguous tensor: each cell once
        assert set(reads.tolist()) == {o["bin"]}


def test_the_overview_of_a_large_layout_agrees_with_numpy_where_numpy_can_count():
    # 20 M elements of a strided view of 60 M: the closed form (forced, with the work to
    # count every start) and NumPy's bincount of every position agree bin for bin, and on
    # each bin's first reader.
    layout = evaluate("60,1000,1000", ".permute(2,0,1)[::3, 1::2, ::-1]").layout
    size = 60 * 1000 * 1000
    width = -(-size // C.OVERVIEW_CELLS)
    reads, first, share, sampled = C.binned_reads(
        layout, size, width, work=1 << 26, enumerate_up_to=0
    )
    assert share == sampled == 1
    pos = np.asarray(layout.positions(), dtype=np.int64) // width
    assert reads.tolist() == np.bincount(pos, minlength=len(reads)).tolist()
    expected = np.full(len(reads), -1)
    expected[pos[::-1]] = np.arange(len(pos) - 1, -1, -1)
    assert first.tolist() == expected.tolist()


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.sampled_from([1, 2, 3, 4, 5, 6, 7, 8, 50]), min_size=2, max_size=8).filter(
        lambda s: math.prod(s) > C.DETAIL_LIMIT
    )
)
def test_every_gap_of_a_summarised_grid_has_its_mark_drawn(shape):
    _every_gap_drawn(shape)


@pytest.mark.parametrize(
    "shape", [(7,) * 8, (7,) * 6, (8, 50, 6, 9, 50, 50), (4, 7, 7, 1, 6, 8, 9), (7, 7, 7, 100)]
)
def test_every_gap_has_its_mark_in_the_shapes_with_the_most(shape):
    # The most gap marks of any shape (rank 6, two edge items an axis: 2,493) and rank 8's.
    _every_gap_drawn(shape)


def _every_gap_drawn(shape):
    # In each drawn tile, a summarised column axis leaves a gap column between its first and
    # last e columns, with a mark on each drawn row (and a summarised row axis a gap row);
    # each summarised leading axis leaves a gap of tiles with a mark in it, outside every
    # drawn tile. Every mark is drawn: the labels hold them all.
    import ast

    from explorer import labels as L

    tensor = Tensor(positions_buffer(math.prod(shape)), Layout(shape))
    cols = C.columns_for(tensor)
    marks = set(zip(np.asarray(cols.gaps["x"]).tolist(), np.asarray(cols.gaps["y"]).tolist()))
    assert len(marks) == len(cols.gaps["text"])
    e, cut, rank = cols.overview["edge"], set(cols.overview["summarised"]), len(shape)
    tiles: dict = {}
    for label, x, y in zip(cols.logical["index"], cols.logical["x"], cols.logical["y"]):
        index = ast.literal_eval(label)
        lead = index[: max(rank - 2, 0)]
        tiles.setdefault(lead, set()).add((float(x), float(y)))
    boxes = []
    for cells in tiles.values():
        xs, ys = sorted({x for x, _ in cells}), sorted({y for _, y in cells}, reverse=True)
        boxes.append((xs[0], xs[-1], ys[-1], ys[0]))
        gap_x = xs[e - 1] + 1 if rank - 1 in cut else None
        gap_y = ys[e - 1] - 1 if rank >= 2 and rank - 2 in cut else None
        if gap_x is not None:
            assert all((gap_x, y) in marks for y in ys)
        if gap_y is not None:
            assert all((x, gap_y) in marks for x in xs)
        if gap_x is not None and gap_y is not None:
            assert (gap_x, gap_y) in marks
    outside = [
        (x, y) for x, y in marks
        if not any(x0 - 1 <= x <= x1 + 1 and y0 - 1 <= y <= y1 + 1 for x0, x1, y0, y1 in boxes)
    ]  # fmt: skip
    assert len(outside) >= len(cut - {rank - 1, rank - 2})
    blocks = dict(
        L.label_blocks(cols, {"logical": 10.0, "buffer": 10.0}, 1.0, None, False)["logical"]
    )
    drawn = blocks["gap"]
    if not cut:  # only index 0 of leading axes drawn, the rest whole: no gap to mark
        assert not len(cols.gaps["text"]) and drawn is None and cols.overview["fixed"]
        return
    assert drawn is not None and len(drawn["text"]) == len(cols.gaps["text"])
    rows = L.label_rows({"logical": [["gap", drawn]]})["logical"]
    assert sum(1 for t in rows["text"] if t) == len(cols.gaps["text"])


def test_a_url_and_explorer_show_take_what_candela_takes():
    # Past the 16,777,216 elements once refused: a KV cache from a URL, a PyTorch-like
    # tensor of 2**40 elements and a NumPy broadcast of 32 M from explorer.show.
    from explorer.jupyter import as_tensor
    from explorer.state import ExplorerState
    from explorer.url import read_query

    updates, messages = read_query("?shape=4096,4096,2&ops=.permute(2,0,1)")
    assert not messages and updates["shape"] == "4096,4096,2"
    assert ExplorerState(**updates).result.layout.len == 4096 * 4096 * 2

    class TorchLike:  # .shape, .stride() and .storage_offset(), strides in elements
        shape = (1 << 20, 1 << 20)

        def stride(self):
            return (1, 1 << 20)

        def storage_offset(self):
            return 0

    for x in (TorchLike(), np.broadcast_to(np.arange(4096, dtype=np.int8), (8192, 4096))):
        tensor, _ = as_tensor(x)
        state = ExplorerState(start=tensor, ops=".T")
        assert state.error is None and state.result.layout.len == math.prod(x.shape)
        assert int(state.columns.buffer["reads"].sum()) == math.prod(x.shape)


def test_rank_8_draws_its_first_block_whole_and_the_heading_says_which():
    # 3x3x...x3 (6,561 elements): one index each side of every axis made 64 tiles whose
    # headers need 780 px across a 528 px column; its leading axes at index 0 alone,
    # x[0, 0, 0, 0] is drawn whole: the elements NumPy's x[0, 0, 0, 0] holds, in order.
    from explorer.fields import headings_html

    shape = (3,) * 8
    cols = C.columns_for(Tensor(positions_buffer(3**8), Layout(shape)))
    fixed = cols.overview["fixed"]
    block = np.arange(3**8).reshape(shape)[(0,) * fixed]
    assert cols.frames["flat"].tolist() == block.ravel().tolist()
    assert cols.overview["summarised"] == [] and not len(cols.gaps["text"])
    assert len(cols.tiles["text"]) == math.prod(shape[fixed:-2])
    grid, _ = headings_html(shape, 3**8, cols.buffer_cols, overview=cols.overview)
    zeros = ", ".join(["0"] * fixed)
    assert f"drawn: x[{zeros}] (index 0 along axes" in grid and f"{block.size} in all" in grid
    assert "⋯" not in grid  # nothing left out inside the block drawn
