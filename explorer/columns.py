"""Pure functions from a tensor to the column data the explorer draws.

Everything the page shows of a tensor — the logical grid, the buffer lane, the
frames of the traversal and the text of the fields — is computed here from a
``candela.Tensor`` with vectorised NumPy, with no Panel or Bokeh objects, so it
can be tested on its own and stays fast at 65,536 elements. Row ``k`` of the
logical columns and of the frames is logical element ``k`` (row-major order,
the order of the walk); row ``p`` of the buffer columns is buffer position ``p``.
A tensor too large for that is drawn by :func:`overview_columns`: the grid holds
NumPy's edge items of each axis, the buffer a cell per bin of positions, and the
frames say each drawn element's true position.

:func:`columns_for` keeps the columns of the last few tensors it drew (a class
following one lesson draws the same few states, each at every student's edit);
what it returns is shared, and nothing changes it.
"""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from .kept import Kept, freeze
from .pipeline import positions_buffer, values_are_positions  # noqa: F401

#: Up to this many logical elements (and buffer cells) are drawn cell by cell.
DETAIL_LIMIT = 4096
#: Up to this many cells carry text labels; above it values show on hover.
LABEL_LIMIT = 256

# Colour-blind-safe colours: Okabe-Ito for marks, viridis for the element order.
GREY = "#d9d9d9"
CURSOR = "#E69F00"  # orange: the current cell of the traversal
FORWARD = "#0072B2"  # blue: a jump forward through the buffer
BACKWARD = "#D55E00"  # vermillion: a jump backward
OFFSET = "#CC79A7"  # reddish purple: the offset marker
#: The same hue as text on the page's background, light or dark (white or black): 4.6:1 on
#: both, so the canvas needs no colour per theme.
OFFSET_TEXT = "#B5528E"
#: Text drawn on the page's background (tile headers): 4.6:1 on white and on black.
PAGE_TEXT = "#757575"
#: A value in a cell no element reads (opaque GREY, the same on any page): 5:1.
UNREAD_TEXT = "#595959"

#: Rows of a wrapped buffer lie this many cell heights apart: the gap holds the offset
#: marker and keeps the jump arcs of one row clear of the row above.
BUFFER_ROW_PITCH = 1.5
HOVER = "#009E73"  # bluish green: cells linked by hover


def _viridis() -> np.ndarray:
    # The lighter three quarters of viridis, so dark text stays readable on most of it.
    from bokeh.palettes import Viridis256

    return np.array(Viridis256[48:])


_PALETTE = _viridis()


def _text_for(palette: np.ndarray) -> np.ndarray:
    # White or black text, whichever contrasts more with the colour (WCAG's luminance, of
    # linear light): at least 4.58:1 on any colour, where a cut at 0.35 of the gamma-coded
    # mean left black digits on mid-blue cells at 3.5:1.
    rgb = np.array([[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in palette]) / 255
    linear = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    lum = linear @ np.array([0.2126, 0.7152, 0.0722])
    on_white, on_black = 1.05 / (lum + 0.05), (lum + 0.05) / 0.05
    return np.where(on_white >= on_black, "#ffffff", "#000000").astype(object)


_PALETTE_TEXT = _text_for(_PALETTE)


def _ramp(n: int) -> np.ndarray:
    # Palette entry of logical element k of n: evenly spread over the ramp.
    return np.linspace(0, len(_PALETTE) - 1, n).round().astype(int) if n else np.zeros(0, int)


def rgba(color: str) -> int:
    """A ``#RRGGBB`` colour as the packed ``0xRRGGBBAA`` integer a colour column holds."""
    return int(color[1:7], 16) << 8 | 0xFF


#: The ramp and the unread grey as packed RGBA: a colour column of uint32 reaches the
#: browser as one binary buffer and is used as is, where 4,096 CSS strings were parsed
#: on every edit.
_PALETTE_RGBA = np.array([rgba(c) for c in _PALETTE], dtype=np.uint32)
GREY_RGBA = rgba(GREY)


def element_colors(n: int) -> np.ndarray:
    """Colour of logical element ``k`` of ``n``: a viridis ramp in walk order."""
    return _PALETTE[_ramp(n)].astype(object)


# --------------------------------------------------------------------------- the walk


@dataclass(frozen=True)
class Walk:
    """The traversal as arrays, one entry per logical element in walk order.

    ``index`` has one row per axis (the multi-index), ``position`` the buffer
    position read, ``axis`` the axis that stepped into this element (-1 for the
    first) and ``delta`` the change of position (``adj_stride[axis]``, 0 first).
    """

    index: np.ndarray
    position: np.ndarray
    axis: np.ndarray
    delta: np.ndarray


def walk_arrays(layout) -> Walk:
    """The walk of ``layout`` as arrays, vectorised.

    The axis that steps into element ``k`` is the innermost axis whose index is
    non-zero: every axis inside it has just wrapped back to zero.
    """
    shape = tuple(layout.shape)
    n = layout.len
    rank = len(shape)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Walk(np.zeros((rank, 0), dtype=np.int64), empty, empty, empty)
    index = np.array(np.unravel_index(np.arange(n, dtype=np.int64), shape), dtype=np.int64)
    position = np.asarray(layout.positions(), dtype=np.int64)
    nonzero = index[::-1] != 0
    axis = np.where(nonzero.any(axis=0), rank - 1 - nonzero.argmax(axis=0), -1)
    adj = np.asarray(layout.adj_stride, dtype=np.int64)
    delta = np.where(axis >= 0, adj[axis], 0)
    return Walk(index, position, axis.astype(np.int64), delta.astype(np.int64))


def index_labels(index: np.ndarray) -> list[str]:
    """Each column of a (rank, n) multi-index array as Python prints the tuple: ``(i, j)``."""
    return [str(tuple(col)) for col in index.T.tolist()]


@functools.lru_cache(maxsize=16)
def _shape_index_labels(shape: tuple[int, ...]) -> tuple[str, ...]:
    # The walk visits a shape's multi-indices in row-major order whatever its strides, so
    # the labels depend on the shape alone: an edit that keeps the shape (half of all
    # edits) reuses them. At 4,096 cells they were half the server's time for an edit.
    n = math.prod(shape)
    return tuple(index_labels(np.array(np.unravel_index(np.arange(n), shape))))


# --------------------------------------------------------------------------- geometry


@dataclass(frozen=True)
class Grid:
    """Where the cells of a shape sit: rank > 2 as nested tiles of 2-D slices.

    The last two axes are the rows and columns of a tile; each leading axis,
    from the innermost outwards, lays its tiles side by side and then one under
    another, alternately, with wider gaps for outer axes. ``pitch_x[d]`` and
    ``pitch_y[d]`` are the cell offsets one step of axis ``d`` moves by.
    """

    shape: tuple[int, ...]
    pitch_x: tuple[int, ...]
    pitch_y: tuple[float, ...]
    width: int
    height: float
    #: A 1-D grid too long for one row draws ``wrap`` cells to a row (:func:`row_wrap`),
    #: rows BUFFER_ROW_PITCH apart as the buffer lane's; 0 for one row.
    wrap: int = 0


#: How many rows of cells apart tiles one above another are: a row for the lower tiles'
#: headers and half a row between it and the tiles above (outer axes add a row a level).
#: Two rows (a whole row between) left the channels-last lesson's grid on a 1024x768
#: projector 37 px cells; the header needs about 20 px of a row.
TILE_BAND = 1.5


def grid_for(shape: tuple[int, ...]) -> Grid:
    shape = tuple(shape)
    rank = len(shape)
    pitch_x = [0] * rank
    pitch_y = [0] * rank
    if rank == 1:
        pitch_x[0] = 1
        n = max(shape[0], 1)
        wrap = row_wrap(n)
        if wrap < n:
            rows = -(-n // wrap)
            height = (rows - 1) * BUFFER_ROW_PITCH + 1
            return Grid(shape, tuple(pitch_x), tuple(pitch_y), wrap, height, wrap)
        return Grid(shape, tuple(pitch_x), tuple(pitch_y), n, 1)
    pitch_x[-1], pitch_y[-2] = 1, 1
    width, height = max(shape[-1], 1), max(shape[-2], 1)
    for level, d in enumerate(range(rank - 3, -1, -1)):
        gap = 1 + level // 2
        if level % 2 == 0:
            pitch_x[d] = width + gap
            width = max(shape[d], 1) * pitch_x[d] - gap
        else:
            band = gap + TILE_BAND - 1  # the tiles' headers' row, and the gap above it
            pitch_y[d] = height + band
            height = max(shape[d], 1) * pitch_y[d] - band
    return Grid(shape, tuple(pitch_x), tuple(pitch_y), width, height)


def row_wrap(n: int) -> int:
    """How many cells to a row a 1-D grid of ``n`` draws: all of them up to 16; up to 48 in
    rows as even as they go (24 as 2 rows of 12: 40 px cells on a 1024x768 projector, where
    one row of 24 had 25 px, too small for a letter); more, as the buffer lane wraps
    (:func:`buffer_width`). NumPy prints a long 1-D array over lines the same way."""
    if n <= 16:
        return max(n, 1)
    if n <= 48:
        return -(-n // -(-n // 16))
    return buffer_width(n)


def cell_xy(grid: Grid, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cell centres for a (rank, n) multi-index: x grows right, y grows down as -y."""
    if grid.wrap:
        i = np.asarray(index[0], dtype=np.int64)
        return (i % grid.wrap).astype(float), -(i // grid.wrap) * BUFFER_ROW_PITCH
    px = np.asarray(grid.pitch_x, dtype=np.int64)
    py = np.asarray(grid.pitch_y, dtype=np.float64)
    x = px @ index if len(px) else np.zeros(index.shape[1])
    y = py @ index if len(py) else np.zeros(index.shape[1])
    return x.astype(float), -y.astype(float)


def buffer_width(n: int, row: int | None = None) -> int:
    """Cells per row of the buffer lane: one lane when short, a near-square wrap when long.

    ``row`` is the length of the tensor's rows in the buffer (:func:`buffer_row`): a
    wrapped lane then holds whole rows (the number nearest a near-square wrap), so the
    buffer lines up with the tensor (a 5x7 tensor's buffer is 5 rows of 7) instead of
    breaking its rows at 16.
    """
    if n <= 16:
        return max(n, 1)
    # Near square (rows lie 1.5 apart, so twice as wide as tall); a lane too long to
    # label is wider still, to fit under the grid on a laptop's screen.
    square = math.sqrt((2 if n <= LABEL_LIMIT else 6) * n)
    if row is not None and 1 < row <= 128 and row < n:
        return row * max(1, min(128 // row, round(square / row)))
    return int(min(128, max(16, 1 << round(math.log2(square)))))


def buffer_row(layout) -> int | None:
    """How many buffer cells one row of the tensor spans: the stride of the axis that steps
    across memory next after the innermost one (their strides' sizes in order), or None
    for a tensor that walks one axis (a lane has no rows)."""
    axes = sorted(
        (abs(int(st)), int(n)) for st, n in zip(layout.stride, layout.shape) if n > 1 and st
    )
    return axes[1][0] if len(axes) > 1 else None


def lane_places(count: int, width: int) -> dict:
    """Where a buffer lane of ``count`` cells wrapped ``width`` to a row puts each: ``x``
    across, ``y`` down (rows BUFFER_ROW_PITCH apart, room between them for the jumps)."""
    pos = np.arange(count)
    return {"x": (pos % width).astype(float), "y": -(pos // width) * BUFFER_ROW_PITCH}


# --------------------------------------------------------------------------- columns


#: The logical cells' columns depend on the shape alone, so an edit that walks the same
#: shape another way (half of all edits) sends the logical figure nothing and the browser
#: does not paint its 4,096 cells again. What element ``k`` reads is ``frames["pos"][k]``,
#: and its value ``buffer["value"][pos]``.
LOGICAL_KEYS = ("x", "y", "index", "color")
#: What the buffer figure draws and hover shows; nothing the page does not use (which of
#: the walk's elements reads a cell first decides its colour, and is not sent).
BUFFER_KEYS = ("x", "y", "pos", "value", "reads", "color", "alpha")
FRAME_KEYS = ("pos", "prev", "axis", "delta")
# The cells' text labels live in sources of their own, filled only up to LABEL_LIMIT cells:
# a text glyph costs the browser its font metrics for every row on every data change,
# even while hidden, which at 4,096 rows took most of a click's repaint.
LOGICAL_LABEL_KEYS = ("x", "y", "value_label", "pos_label", "text_color")
BUFFER_LABEL_KEYS = (
    "x",
    "y",
    "x_left",
    "y_top",
    "x_right",
    "y_bottom",
    "value_label",
    "pos_label",
    "reads_label",
    "text_color",
)


@dataclass
class Columns:
    """All column data for one tensor, ready to become ColumnDataSource data."""

    logical: dict
    buffer: dict
    frames: dict
    tiles: dict
    grid: Grid
    buffer_cols: int
    buffer_rows: int
    labels: bool
    #: Set when the tensor is too large to draw cell by cell (see :func:`overview_columns`):
    #: the grid draws NumPy's edge items of each axis, the buffer one cell per bin of
    #: positions. Empty when every element and buffer position has a cell.
    overview: dict = field(default_factory=dict)
    #: The marks of what a summarised grid leaves out (``⋯``, ``⋮``): x, y, text.
    gaps: dict = field(default_factory=lambda: {"x": [], "y": [], "text": []})
    #: The buffer overview's cells that a drawn element reads (a dot in each): x, y, color.
    drawn_reads: dict = field(default_factory=lambda: {"x": [], "y": [], "color": []})
    #: The cells' text (value, position, read count); empty columns when ``labels`` is off.
    logical_labels: dict = field(default_factory=lambda: {k: [] for k in LOGICAL_LABEL_KEYS})
    buffer_labels: dict = field(default_factory=lambda: {k: [] for k in BUFFER_LABEL_KEYS})


def _values(values):
    """The ``value`` column: integers as numbers (one binary array; hover prints them as
    Python does), anything else as Python prints it (see :func:`_fmt`)."""
    values = np.asarray(values)
    if values.dtype.kind in "iu" and values.dtype.itemsize <= 8:
        if not len(values) or (values.min() >= -(2**31) and values.max() < 2**31):
            return values.astype(np.int32)
    return _fmt(values)


def _text(values) -> list[str]:
    # A value column as label text.
    return values.astype(str).tolist() if isinstance(values, np.ndarray) else list(values)


def _fmt(values) -> list[str]:
    """Values as Python prints them; a float that is a whole number loses its ``.0``."""
    values = np.asarray(values)
    if values.dtype.kind in "iub":
        return values.astype(str).tolist()
    out = []
    for v in values.tolist():
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        out.append(str(v))
    return out


def logical_columns(walk: Walk, grid: Grid) -> dict:
    """One row per logical element: its cell, multi-index and colour (all from the shape)."""
    n = len(walk.position)
    x, y = cell_xy(grid, walk.index)
    return {
        "x": x,
        "y": y,
        "index": list(_shape_index_labels(tuple(int(d) for d in grid.shape))),
        "color": _PALETTE_RGBA[_ramp(n)],
    }


def logical_label_columns(logical: dict, position: np.ndarray, values) -> dict:
    """Text drawn in each logical cell: its value, and ``@p`` the buffer position it reads.

    ``position`` and ``values`` are, per logical element, the position read and its value.
    """
    n = len(position)
    return {
        "x": logical["x"],
        "y": logical["y"],
        "value_label": _text(values),
        "pos_label": [f"@{p}" for p in np.asarray(position).tolist()],
        "text_color": _PALETTE_TEXT[_ramp(n)],
    }


def buffer_columns(tensor, walk: Walk, cols: int) -> dict:
    """One row per buffer position: its cell, value, how often it is read, and its colour:
    that of the first logical element reading it (the walk order), grey if none does."""
    buffer = np.asarray(tensor.buffer)
    size = len(buffer)
    pos = np.arange(size)
    n = len(walk.position)
    reads = np.bincount(walk.position, minlength=size) if n else np.zeros(size, dtype=np.int64)
    # The first logical element reading each cell colours it (the walk order).
    first = np.full(size, -1, dtype=np.int64)
    if n:
        order = np.arange(n)[::-1]
        first[walk.position[::-1]] = order
    ramp = _ramp(n)
    read = first >= 0
    colors = np.full(size, GREY_RGBA, dtype=np.uint32)
    colors[read] = _PALETTE_RGBA[ramp[first[read]]]
    return {
        **lane_places(size, cols),
        "pos": pos,
        "value": _values(buffer),
        "reads": reads,
        "color": colors,
        # Opaque: a see-through grey took the page's colour, and its text's contrast with it.
        "alpha": np.ones(size),
    }


#: The text colour readable on each colour of the ramp.
_TEXT_ON = dict(zip(_PALETTE_RGBA.tolist(), _PALETTE_TEXT.tolist()))


def buffer_label_columns(buffer: dict) -> dict:
    """Text drawn in each buffer cell: value in the middle, position top-left, ``×n`` reads."""
    x, y = buffer["x"], buffer["y"]
    read = np.asarray(buffer["reads"]) > 0
    text = np.full(len(read), UNREAD_TEXT, dtype=object)
    text[read] = [_TEXT_ON[c] for c in np.asarray(buffer["color"])[read].tolist()]
    return {
        **_label_places(x, y),
        "value_label": _text(buffer["value"]),
        "pos_label": [str(p) for p in np.asarray(buffer["pos"]).tolist()],
        "reads_label": [f"×{r}" if r > 1 else "" for r in np.asarray(buffer["reads"]).tolist()],
        "text_color": text,
    }


def _label_places(x, y) -> dict:
    # Where a buffer cell's labels sit: its value in the middle, its position top-left,
    # its read count bottom-right.
    return {"x": x, "y": y, "x_left": x - 0.43, "y_top": y + 0.43,
            "x_right": x + 0.43, "y_bottom": y - 0.43}  # fmt: skip


def tile_columns(grid: Grid) -> dict:
    """Labels for the 2-D tiles of a rank > 2 shape, e.g. ``[1, :, :]``, above each tile."""
    shape = grid.shape
    rank = len(shape)
    if rank <= 2 or math.prod(shape) == 0:
        return {"x": [], "y": [], "text": []}
    lead = shape[:-2]
    idx = np.array(np.unravel_index(np.arange(math.prod(lead)), lead), dtype=np.int64)
    full = np.vstack([idx, np.zeros((2, idx.shape[1]), dtype=np.int64)])
    x, y = cell_xy(grid, full)
    # Rank 5 and up: without spaces, so the header of a small tile still fits over it.
    sep = ", " if rank <= 4 else ","
    text = ["[" + sep.join([*map(str, col), ":", ":"]) + "]" for col in idx.T.tolist()]
    return {"x": x - 0.5, "y": y + 0.6, "text": text}


def frame_columns(walk: Walk) -> dict:
    """The traversal's frames: the position read, the axis stepped and the delta added."""
    n = len(walk.position)
    previous = np.concatenate([walk.position[:1], walk.position[:-1]]) if n else walk.position
    return {
        "pos": walk.position,
        "prev": previous,
        "axis": walk.axis,
        "delta": walk.delta,
    }


# --------------------------------------------------------------------------- overview

#: An axis longer than twice this many draws its first and last this many indices, as
#: NumPy prints a large array (``np.set_printoptions(edgeitems=3)``).
EDGE_ITEMS = 3
#: A summarised grid is at most this many cells wide and tall where a smaller edge gets it
#: there (:func:`summary_edge`): at the 16 px a grid of tiles keeps for its headers, a
#: laptop's 528 px column wide, and with the buffer under it a 1280x800 screen tall.
SUMMARY_GRID = 32
#: ... and its tiles' headers, across it, at most this many characters: 528 px at the
#: 7.4 px a header's character takes (0.62 of labels.TILE_FONT's 12 px).
SUMMARY_HEADERS = 70
#: The buffer overview has at most this many cells, each a bin of positions.
OVERVIEW_CELLS = 1024
#: Positions are worked out this many at a time for the overview: memory stays bounded
#: whatever the number of elements.
CHUNK = 1 << 14


def edge_items(shape: tuple[int, ...], limit: int, edge: int = EDGE_ITEMS) -> tuple[int, list]:
    """The indices drawn of each axis: all of an axis up to ``2 * e`` long, else its first
    and last ``e`` (NumPy's edge items), with ``e`` the largest up to ``edge`` that keeps
    the drawn elements within ``limit`` (1 at the least)."""
    for e in range(max(edge, 1), 0, -1):
        kept = [np.arange(n) if n <= 2 * e else np.r_[0:e, n - e : n] for n in shape]
        if math.prod(len(k) for k in kept) <= limit or e == 1:
            return e, kept
    raise AssertionError("unreachable")


def position_chunks(shape: tuple[int, ...], stride: tuple[int, ...], offset: int, chunk=CHUNK):
    """The walk's positions in walk order, as ``(first element, positions)`` chunks of at
    most about ``chunk``: the trailing axes that fit in a chunk are worked out once, the
    leading ones added a block of rows at a time."""
    rank = len(shape)
    n = math.prod(shape)
    if n == 0:
        return
    k, inner = rank, 1
    while k > 0 and inner * shape[k - 1] <= chunk:
        k -= 1
        inner *= shape[k]
    stride = np.asarray(stride, dtype=np.int64)
    if k == rank:  # the last axis alone is longer than a chunk: split it
        last = shape[-1]
        outer = math.prod(shape[:-1])
        for o in range(outer):
            base = offset + int(stride[:-1] @ np.array(np.unravel_index(o, shape[:-1]), np.int64)
                                ) if rank > 1 else offset  # fmt: skip
            for s in range(0, last, chunk):
                stop = min(last, s + chunk)
                yield o * last + s, base + stride[-1] * np.arange(s, stop, dtype=np.int64)
        return
    inner_pos = np.zeros(1, dtype=np.int64)
    for d in range(k, rank):
        inner_pos = (inner_pos[:, None] + stride[d] * np.arange(shape[d], dtype=np.int64)).ravel()
    outer = math.prod(shape[:k])
    rows = max(1, chunk // inner)
    for g in range(0, outer, rows):
        count = min(rows, outer - g)
        if k:
            index = np.array(np.unravel_index(np.arange(g, g + count), shape[:k]), np.int64)
            base = offset + stride[:k] @ index
        else:
            base = np.array([offset], dtype=np.int64)
        yield g * inner, (base[:, None] + inner_pos[None, :]).ravel()


#: How much work the buffer overview may take, in positions worked out (or, counting a
#: row of the walk against every bin at once, row-bin pairs): about a fifth of a second of
#: the server's time. Within it the read counts are exact; past it they are estimated
#: from evenly chosen rows of the walk, and the heading says so.
WORK = 1 << 22


class Reads(NamedTuple):
    """How often the bins of a buffer are read: ``reads`` per bin, ``first`` the first
    element (in walk order) reading each (-1 for none), and ``share`` the part of the
    walk counted (1.0: exact; less: ``reads`` are estimated from that part). ``sampled``
    is the part of the walk ``first`` comes from: below 1, each is the first reader among
    those rows (of a bin read by none of them, the nearest bin's before it)."""

    reads: np.ndarray
    first: np.ndarray
    share: float
    sampled: float = 1.0


def _runs(shape, stride) -> tuple[int, list[tuple[int, int, int]]]:
    """The walk as runs of (size, stride, element step): axes of one element, and those of
    stride 0 (read again, never further), leave it (their count is returned: each
    position is read that many times over); an axis that continues the next one in both
    memory and walk order joins it (a contiguous tensor is one run)."""
    n = math.prod(shape)
    repeats = 1
    runs: list[tuple[int, int, int]] = []
    step = n
    for size, st in zip(shape, stride):
        step //= size if size else 1
        if size == 1:
            continue
        if st == 0:
            repeats *= size
            continue
        runs.append((size, int(st), step))
    merged: list[tuple[int, int, int]] = []
    for size, st, el in reversed(runs):  # innermost first
        if merged and st == merged[-1][1] * merged[-1][0] and el == merged[-1][2] * merged[-1][0]:
            inner, ist, iel = merged.pop()
            merged.append((size * inner, ist, iel))
        else:
            merged.append((size, st, el))
    return repeats, merged[::-1]


def binned_reads(
    layout, size: int, width: int, work: int = WORK, enumerate_up_to: int | None = None
) -> Reads:
    """How many elements read each bin of ``width`` positions of a ``size`` buffer, and the
    first element (in walk order) reading each, in bounded memory and time.

    Up to ``work`` elements (``enumerate_up_to`` if given) the positions are worked out
    a chunk at a time. Beyond, the longest run of the walk (:func:`_runs`) is counted in
    closed form: for each position where the run starts, how many of its steps fall in
    each bin is a floor division, so the work is a start and a bin at a time, whatever
    the run's length. When the walk has more starts than ``work`` allows, the counts do
    not depend on the walk's order, so its runs in memory order (:func:`_memory_runs`: a
    permuted contiguous tensor is one run) count them exactly if they have few enough
    starts, and evenly spread starts of the walk give the first readers (the colours,
    estimated); failing both, those starts' counts are scaled up (``share`` below 1).
    """
    cells = max(1, -(-size // width))
    shape, stride = tuple(int(v) for v in layout.shape), tuple(int(v) for v in layout.stride)
    offset = int(layout.offset)
    n = math.prod(shape)
    if n <= (work if enumerate_up_to is None else enumerate_up_to):
        return Reads(*_enumerated_reads(shape, stride, offset, cells, width), 1.0)
    if n == 0:
        return Reads(np.zeros(cells, np.int64), np.full(cells, -1, np.int64), 1.0)
    bins = (np.arange(cells, dtype=np.int64) * width, size, width)
    budget = max(1, work // cells)
    repeats, runs = _runs(shape, stride)
    if _starts(runs) > budget and n <= 4 * work and enumerate_up_to is None:
        # Working out every position takes a few times `work` here, but is exact.
        return Reads(*_enumerated_reads(shape, stride, offset, cells, width), 1.0)
    total, first, share = _closed_form(offset, runs, bins, budget)
    if share == 1:
        return Reads(total * repeats, first, 1.0)
    shift, memory = _memory_runs(shape, stride)
    exact, _, whole = _closed_form(offset + shift, memory, bins, budget)
    if whole == 1:
        # Read bins none of the rows counted reads take the first reader of the nearest
        # such bin before them (the order of the walk follows memory, roughly).
        known = np.where(first >= 0, np.arange(cells), 0)
        first = np.where(exact > 0, first[np.maximum.accumulate(known)], -1)
        first = np.where((exact > 0) & (first < 0), first[first >= 0].min(initial=0), first)
        return Reads(exact * repeats, first, 1.0, share)
    return Reads(np.round(total * repeats / share).astype(np.int64), first, share, share)


def _memory_runs(shape, stride) -> tuple[int, list[tuple[int, int, int]]]:
    """The positions a walk reads, as runs in memory order: each axis forwards (a negative
    stride read from its far end: the returned shift of the offset), by stride, joined
    where one continues another; axes of stride 0 or size 1 left out (:func:`_runs`)."""
    shift = sum(st * (size - 1) for size, st in zip(shape, stride) if st < 0 and size)
    axes = sorted((abs(st), size) for size, st in zip(shape, stride) if size > 1 and st)
    runs: list[tuple[int, int, int]] = []
    for st, size in axes:
        if runs and st == runs[-1][1] * runs[-1][0]:
            inner, ist, _ = runs.pop()
            runs.append((size * inner, ist, 0))
        else:
            runs.append((size, st, 0))
    return shift, runs[::-1]


def _starts(runs: list) -> int:
    # How many starts the longest of the runs has (see _closed_form).
    return math.prod(r[0] for r in runs) // max((r[0] for r in runs), default=1)


def _closed_form(offset: int, runs: list, bins: tuple, budget: int):
    """How many of the walk's elements (``runs`` from :func:`_runs`) read each bin, and the
    first of them (-1: none), counting the longest run in closed form from at most
    ``budget`` of its starts (the others' sizes, strides and element steps); and the part
    of the starts counted."""
    lo, size, width = bins
    cells = len(lo)
    total = np.zeros(cells, dtype=np.int64)
    if not runs:  # every element reads the offset
        total[offset // width] = 1
        return total, np.where(total > 0, 0, -1), 1.0
    long = max(range(len(runs)), key=lambda d: runs[d][0])
    m, a, el = runs[long]
    rest = runs[:long] + runs[long + 1 :]
    starts = math.prod(r[0] for r in rest)
    picked = min(starts, budget)
    hi = np.minimum(lo + width, size) - 1
    best = np.full(cells, np.iinfo(np.int64).max, dtype=np.int64)
    rows = max(1, (1 << 16) // cells)
    for g in range(0, picked, rows):
        k = np.arange(g, min(picked, g + rows), dtype=np.int64)
        if picked < starts:  # starts spread evenly over all (the golden ratio's sequence:
            # no period of the tensor's axes lines up with it), the first among them
            k = np.minimum(((k * 0.6180339887498949) % 1.0 * starts).astype(np.int64), starts - 1)
        pos = np.full(len(k), offset, dtype=np.int64)
        flat = np.zeros(len(k), dtype=np.int64)
        for r_size, r_stride, r_el in reversed(rest):
            i = k % r_size
            k = k // r_size
            pos += r_stride * i
            flat += r_el * i
        p = pos[:, None]
        if a > 0:
            k_lo, k_hi = -((p - lo) // a), (hi - p) // a
        else:
            k_lo, k_hi = -((hi - p) // -a), (p - lo) // -a
        k_lo = np.maximum(k_lo, 0)
        count = np.maximum(np.minimum(k_hi, m - 1) - k_lo + 1, 0)
        total += count.sum(axis=0)
        at = np.where(count > 0, flat[:, None] + k_lo * el, best[None, :]).min(axis=0)
        best = np.minimum(best, at)
    return total, np.where(total > 0, best, -1), picked / starts


def _enumerated_reads(shape, stride, offset: int, cells: int, width: int):
    # binned_reads by working out every position, a chunk at a time.
    reads = np.zeros(cells, dtype=np.int64)
    first = np.full(cells, -1, dtype=np.int64)
    for start, pos in position_chunks(shape, stride, offset):
        b = pos // width
        reads += np.bincount(b, minlength=cells)
        here = np.full(cells, -1, dtype=np.int64)
        here[b[::-1]] = start + np.arange(len(b) - 1, -1, -1, dtype=np.int64)
        first = np.where(first < 0, here, first)
    return reads, first


def _ramp_of(k: np.ndarray, n: int) -> np.ndarray:
    # Palette entry of element k of n (as _ramp, for chosen elements of a long walk).
    if n <= 1:
        return np.zeros(len(k), dtype=int)
    return np.round(np.asarray(k) * (len(_PALETTE) - 1) / (n - 1)).astype(int)


def overview_columns(
    tensor, detail_limit: int, label_limit: int, edge: int = EDGE_ITEMS, work: int = WORK
):
    """The columns of a tensor too large to draw cell by cell.

    The grid draws, of each axis, NumPy's edge items (:func:`edge_items`), with a gap
    slot (``⋯``, ``⋮``) where the rest is left out; its rows are the drawn elements in
    walk order, each with its true multi-index. The buffer is an overview of its whole
    span: one cell per bin of positions, with how many elements read it. The frames walk
    the drawn elements: ``pos`` is the bin read (the cell the cursor marks), ``at`` the
    true position, ``flat`` the element's number in the whole walk and ``skip`` how
    many elements the step from the drawn element before passes over undrawn.
    Nothing is made in proportion to the number of elements, and the time is bounded
    too: the overview's read counts take at most ``work`` (:func:`binned_reads`; past it
    they are estimated, and ``overview["share"]`` says from what part of the walk).
    """
    layout = tensor.layout
    shape = tuple(int(v) for v in layout.shape)
    rank = len(shape)
    n = int(layout.len)
    buffer = np.asarray(tensor.buffer)
    size = len(buffer)
    virtual = values_are_positions(buffer)
    if n <= detail_limit:  # every element drawn: only the buffer is summarised
        e, kept = edge_items(shape, max(n, 1), edge)
        kept, fixed = [np.arange(v) for v in shape], 0
    else:
        e, kept, fixed = summary_edge(shape, detail_limit, edge)
    summarised = [d >= fixed and len(k) < v for d, (k, v) in enumerate(zip(kept, shape))]
    slots = drawn_shape(shape, fixed)
    if n:
        index = np.array(np.meshgrid(*kept, indexing="ij"), dtype=np.int64).reshape(rank, -1)
    else:
        index = np.zeros((rank, 0), dtype=np.int64)
    # Where each drawn index sits: the gap takes slot e of a summarised axis.
    slot = np.array(
        [
            np.where(idx < e, idx, idx - (v - 2 * e) + 1) if cut else idx
            for idx, v, cut in zip(index, shape, summarised)
        ],
        dtype=np.int64,
    ).reshape(rank, -1)
    full_grid, squeeze, grid = _summary_grid(slots, e, summarised)
    stride = np.asarray(layout.stride, dtype=np.int64)
    at = int(layout.offset) + stride @ index if n else np.zeros(0, dtype=np.int64)
    flat = np.ravel_multi_index(index, shape) if n else np.zeros(0, dtype=np.int64)
    # The buffer: bins of positions, as few as keep it within OVERVIEW_CELLS cells.
    width = 1 if size <= detail_limit else -(-size // OVERVIEW_CELLS)
    reads, first, share, sampled = binned_reads(layout, size, width, work)
    cells = len(reads)
    read = first >= 0
    colors = np.full(cells, GREY_RGBA, dtype=np.uint32)
    colors[read] = _PALETTE_RGBA[_ramp_of(first[read], n)]
    lo = np.arange(cells, dtype=np.int64) * width
    hi = np.minimum(lo + width, size) - 1
    # A bin's shade says how often its positions are read: full where read as often as the
    # most-read bin (per position), fading to a third for the fewest.
    density = reads / (hi - lo + 1)
    alpha = np.where(read, 0.35 + 0.65 * density / max(density.max(), 1e-12), 1.0)
    bin_cols = buffer_width(cells, buffer_row(layout) if width == 1 else None)
    values = lo if virtual else buffer[lo]
    x, y = _placed(full_grid, slot, e, squeeze)
    drawn = len(flat)
    value_at = at if virtual else (buffer[at] if drawn else buffer[:0])
    logical = {
        "x": x,
        "y": y,
        "index": index_labels(index),
        "color": _PALETTE_RGBA[_ramp_of(flat, n)],
    }
    buffer_cols = {
        **lane_places(cells, bin_cols),
        "pos": lo,
        "value": _values(values),
        "reads": reads,
        "color": colors,
        "alpha": alpha if width > 1 else np.ones(cells),
    }
    bins = at // width
    previous = np.concatenate([bins[:1], bins[:-1]]) if drawn else bins
    diff = index[:, 1:] != index[:, :-1]
    axis = np.concatenate([[-1], np.where(diff.any(axis=0), diff.argmax(axis=0), -1)])
    frames = {
        "pos": bins,
        "prev": previous,
        "axis": axis[:drawn].astype(np.int64),
        "delta": np.diff(at, prepend=at[:1]) if drawn else at,
        "at": at,
        "flat": flat.astype(np.int64),
        "skip": np.diff(flat, prepend=flat[:1] - 1) - 1 if drawn else flat,
        "value": _values(value_at),
    }
    # The drawn cells' values and positions show where they fit; the buffer's only where
    # each cell is one position (a bin of many has no one value).
    labels = drawn <= label_limit
    out = Columns(
        logical=_compact(logical),
        buffer=_compact(buffer_cols),
        frames=_compact(frames),
        tiles=_overview_tiles(full_grid, kept, shape, e, summarised, squeeze),
        grid=grid,
        buffer_cols=bin_cols,
        buffer_rows=max(1, -(-cells // bin_cols)),
        labels=labels,
        overview={
            "elements": n,
            "drawn": drawn,
            "edge": e,
            "bin": width,
            "cells": cells,
            "buffer": size,
            "summarised": [d for d, cut in enumerate(summarised) if cut],
            "fixed": fixed,
            "share": share,
            "sampled": sampled,
        },
        gaps=_gap_marks(full_grid, slots, e, summarised, squeeze),
    )
    if width > 1 and drawn:  # where the drawn elements read, among the bins
        hit = np.flatnonzero(np.bincount(bins, minlength=cells))  # np.unique imports numpy.ma
        out.drawn_reads = {
            "x": buffer_cols["x"][hit],
            "y": buffer_cols["y"][hit],
            "color": [_TEXT_ON[c] for c in colors[hit].tolist()],
        }
    if labels:
        out.logical_labels = logical_label_columns(logical, at, _text(_values(value_at)))
        out.logical_labels["text_color"] = _PALETTE_TEXT[_ramp_of(flat, n)]
        if cells <= label_limit and width == 1:
            out.buffer_labels = buffer_label_columns(buffer_cols)
    return out


def summary_edge(
    shape: tuple[int, ...], limit: int, edge: int = EDGE_ITEMS
) -> tuple[int, list, int]:
    """:func:`edge_items` for a grid too large to draw whole, made to fit a laptop's
    screen: ``(e, kept, fixed)``.

    The edge is made smaller where that keeps the drawn grid within :data:`SUMMARY_GRID`
    cells each way and its tiles' headers within :data:`SUMMARY_HEADERS` characters
    across (16x224x224x3's 3 edge items make 6 tile rows 55 cells tall, 2 make 29).
    Where no edge does, the first ``fixed`` axes draw their index 0 alone, no gap
    after it: rank 8's 3x3x...x3 drew 64 tiles whose headers need 780 px across a 528 px
    column; ``x[0, 0, 0, 0]``, 9 tiles, fit. At most all but the last two are fixed.
    """
    rank = len(shape)
    for fixed in range(max(rank - 2, 0) + 1):
        rest = shape[fixed:]
        for most in range(max(edge, 1), 0, -1):
            e, kept = edge_items(rest, limit, most)
            kept = [np.zeros(1, dtype=np.int64)] * fixed + kept
            summarised = [False] * fixed + [len(k) < v for k, v in zip(kept[fixed:], rest)]
            grid = _summary_grid(drawn_shape(shape, fixed), e, summarised)[2]
            across = grid.width * _header_chars(kept)
            if max(grid.width, grid.height) <= SUMMARY_GRID and (
                across <= SUMMARY_HEADERS * (grid.shape[-1] + 1)
            ):
                return e, kept, fixed
    return e, kept, fixed  # the least there is: every axis but two fixed, edge 1


def drawn_shape(shape: tuple[int, ...], fixed: int) -> tuple[int, ...]:
    """``shape`` with its first ``fixed`` axes one index long (:func:`summary_edge`)."""
    return (1,) * fixed + tuple(shape[fixed:])


def _header_chars(kept: list) -> int:
    # The characters of the longest of the tiles' headers at their shortest, their leading
    # indices alone ("[0,221]": labels.tile_spelling), 0 with no tiles.
    lead = kept[:-2]
    if not lead:
        return 0
    digits = [len(str(int(k.max()))) if len(k) else 1 for k in lead]
    return 2 + sum(digits) + len(lead) - 1


def _summary_grid(shape: tuple[int, ...], e: int, summarised: list) -> tuple[Grid, list, Grid]:
    # The grid of the drawn slots (a gap slot where an axis is summarised), how far past
    # each gap the drawing moves back (_squeeze), and the grid so squeezed.
    slots = tuple(2 * e + 1 if cut else v for v, cut in zip(shape, summarised))
    full_grid = grid_for(slots)
    squeeze = _squeeze(full_grid, e, summarised)
    grid = replace(
        full_grid,
        width=full_grid.width - sum(s for s, g in zip(squeeze, full_grid.pitch_x) if g),
        height=full_grid.height - sum(s for s, g in zip(squeeze, full_grid.pitch_y) if g),
    )
    return full_grid, squeeze, grid


def _squeeze(grid: Grid, e: int, summarised: list) -> list[int]:
    """How many cells the drawing past the gap of each axis moves back: the gap slot of a
    leading axis (one whole tile wide or tall in :func:`grid_for`) is one cell."""
    rank = len(grid.shape)
    out = [0] * rank
    for level, d in enumerate(range(rank - 3, -1, -1)):
        if not summarised[d]:
            continue
        gap = 1 + level // 2
        if level % 2 == 0:
            out[d] = max(0, grid.pitch_x[d] - gap - 1)
        else:
            out[d] = max(0, grid.pitch_y[d] - gap - TILE_BAND)
    return out


def _placed(grid: Grid, slot: np.ndarray, e: int, squeeze: list[int]):
    # Cell centres of (rank, n) slots, past each squeezed gap moved back by its squeeze.
    x, y = cell_xy(grid, slot)
    for d, shift in enumerate(squeeze):
        if shift:
            past = slot[d] > e
            if grid.pitch_x[d]:
                x = x - shift * past
            else:
                y = y + shift * past
    return x, y


def _overview_tiles(
    grid: Grid, kept: list, shape: tuple, e: int, summarised: list, squeeze: list[int]
) -> dict:
    # The drawn tiles' headers, each with its true leading indices.
    rank = len(shape)
    if rank <= 2 or math.prod(shape) == 0:
        return {"x": [], "y": [], "text": []}
    lead = kept[:-2]
    idx = np.array(np.meshgrid(*lead, indexing="ij"), dtype=np.int64).reshape(rank - 2, -1)
    slot = np.array(
        [
            np.where(i < e, i, i - (v - 2 * e) + 1) if cut else i
            for i, v, cut in zip(idx, shape, summarised)
        ],
        dtype=np.int64,
    ).reshape(rank - 2, -1)
    full = np.vstack([slot, np.zeros((2, slot.shape[1]), dtype=np.int64)])
    x, y = _placed(grid, full, e, squeeze)
    sep = ", " if rank <= 4 else ","
    text = ["[" + sep.join([*map(str, col), ":", ":"]) + "]" for col in idx.T.tolist()]
    return {"x": x - 0.5, "y": y + 0.6, "text": text}


def _gap_marks(grid: Grid, shape: tuple, e: int, summarised: list, squeeze: list[int]) -> dict:
    """Where a summarised grid leaves elements out: ``⋯`` in a gap column, ``⋮`` in a gap
    row (``⋱`` where both meet) of each drawn tile, one mark in the middle of a gap of
    tiles."""
    rank = len(shape)
    if not any(summarised) or math.prod(shape) == 0:
        return {"x": [], "y": [], "text": []}
    slots = [np.arange(2 * e + 1) if cut else np.arange(v) for v, cut in zip(shape, summarised)]
    every = np.array(np.meshgrid(*slots, indexing="ij"), dtype=np.int64).reshape(rank, -1)
    gap = np.array([(s == e) & cut for s, cut in zip(every, summarised)]).reshape(rank, -1)
    inner = max(0, rank - 2)
    lead_gap = gap[:inner].any(axis=0) if inner else np.zeros(every.shape[1], bool)
    cell_gap = gap[inner:].any(axis=0)
    # Cells of a drawn tile that fall in a gap row or column.
    pick = ~lead_gap & cell_gap
    # One mark per gap tile: on its middle cell.
    mid = np.ones(every.shape[1], bool)
    for d in range(inner, rank):
        mid &= every[d] == (len(slots[d]) - 1) // 2
    pick |= lead_gap & mid
    chosen = every[:, pick].copy()
    # A gap of tiles is one cell wide (or tall): its mark goes there, in the middle of the
    # tiles beside it the other way.
    for j, col in enumerate(chosen.T.tolist()):
        gaps = [d for d in range(inner) if summarised[d] and col[d] == e]
        if gaps:
            d = gaps[0]
            along_x = bool(grid.pitch_x[d])
            for k in range(d + 1, rank):  # within the gap's tile, the same way: its start
                if bool(grid.pitch_x[k]) == along_x:
                    chosen[k, j] = 0
    x, y = _placed(grid, chosen, e, squeeze)
    text = []
    for col in chosen.T.tolist():
        row_gap = rank >= 2 and summarised[-2] and col[-2] == e
        col_gap = summarised[-1] and col[-1] == e
        if inner and any(summarised[d] and col[d] == e for d in range(inner)):
            d = next(d for d in range(inner) if summarised[d] and col[d] == e)
            text.append("⋯" if grid.pitch_x[d] else "⋮")
        elif row_gap and col_gap:
            text.append("⋱")
        elif row_gap:
            text.append("⋮")
        else:
            text.append("⋯")
    # Gaps of tiles that the squeeze lays on one spot (an inner axis the same way) are one.
    first = dict.fromkeys(zip(x.tolist(), y.tolist()), -1)  # no np.unique(axis=): numpy.ma
    for k, spot in enumerate(zip(x.tolist(), y.tolist())):
        if first[spot] < 0:
            first[spot] = k
    keep = np.array(sorted(first.values()), dtype=np.int64)
    return {"x": x[keep], "y": y[keep], "text": [text[k] for k in keep.tolist()]}


#: How many tensors' columns :func:`columns_for` keeps (~0.2 MB each at 64x64).
KEPT = 16
#: A buffer of more bytes than this is not hashed to find its columns kept: they are
#: worked out again (an overview, in bounded time).
KEY_BYTES = 1 << 26
_kept = Kept(KEPT)


def columns_for(
    tensor, detail_limit: int = DETAIL_LIMIT, label_limit: int = LABEL_LIMIT
) -> Columns:
    """Everything to draw for ``tensor``; above ``detail_limit`` an overview.

    The same layout over the same buffer values is the same columns: those of the
    last :data:`KEPT` tensors are kept and given again (:mod:`explorer.kept`: shared,
    their arrays read-only). A tensor of another dtype than numbers is worked out
    each time.
    """
    key = _key(tensor, detail_limit, label_limit)
    found = None if key is None else _kept.get(key)
    if found is not None:
        return found
    out = _columns(tensor, detail_limit, label_limit)
    if key is not None:
        freeze((out.logical, out.buffer, out.frames, out.tiles, out.logical_labels,
                out.buffer_labels, out.gaps, out.drawn_reads))  # fmt: skip
        _kept.put(key, out)
    return out


def _key(tensor, detail_limit: int, label_limit: int) -> tuple | None:
    buffer = np.asarray(tensor.buffer)
    if buffer.dtype.kind not in "biuf":  # bytes that say nothing of the values
        return None
    if buffer.nbytes > KEY_BYTES and not values_are_positions(buffer):
        return None  # hashing it would take longer than drawing its overview again
    layout = tensor.layout
    if values_are_positions(buffer):  # its values are its positions: nothing to hash
        values = b"positions"
    else:
        values = hashlib.blake2b(np.ascontiguousarray(buffer).tobytes(), digest_size=16).digest()
    return (
        tuple(layout.shape),
        tuple(layout.stride),
        layout.offset,
        buffer.dtype.str,
        buffer.shape,
        values,
        detail_limit,
        label_limit,
    )


def _columns(tensor, detail_limit: int, label_limit: int) -> Columns:
    layout = tensor.layout
    grid = grid_for(tuple(layout.shape))
    size = len(tensor.buffer)
    n = layout.len
    if n > detail_limit or size > detail_limit:
        return overview_columns(tensor, detail_limit, label_limit)
    walk = walk_arrays(layout)
    labels = max(n, size) <= label_limit
    cols = buffer_width(size, buffer_row(layout))
    logical = logical_columns(walk, grid)
    buffer = buffer_columns(tensor, walk, cols)
    out = Columns(
        logical=_compact(logical),
        buffer=_compact(buffer),
        frames=_compact(frame_columns(walk)),
        tiles=tile_columns(grid),
        grid=grid,
        buffer_cols=cols,
        buffer_rows=max(1, -(-size // cols)),
        labels=labels,
    )
    if labels:
        read = _values(np.asarray(tensor.buffer)[walk.position]) if n else []
        out.logical_labels = logical_label_columns(logical, walk.position, read)
        out.buffer_labels = buffer_label_columns(buffer)
    return out


def letters(n: int) -> list[str]:
    """``n`` cell names in walk order: ``a`` to ``z``, then ``aa``, ``ab`` ... (spreadsheet style).

    >>> letters(3), letters(28)[-2:]
    (['a', 'b', 'c'], ['aa', 'ab'])
    """
    out = []
    for k in range(n):
        name, k = "", k + 1
        while k:
            k, r = divmod(k - 1, 26)
            name = chr(97 + r) + name
        out.append(name)
    return out


def withheld_columns(cols: Columns, limit: int) -> Columns:
    """``cols`` as drawn while a question waits: nothing that says where an element sits.

    The walk keeps its first ``limit`` elements (0: none); the buffer is one colour
    with no read counts (which element reads which cell is the layout's answer); a
    logical cell is labelled by a letter in walk order, not by its value (on an
    ``arange`` start a value *is* the position it reads), with no ``@position``.
    What stays is what the shape and the buffer alone decide.
    """
    frames = {k: v[:limit] for k, v in cols.frames.items()}
    size = len(cols.buffer["pos"])
    value, pos = np.asarray(cols.buffer["value"]), np.asarray(cols.buffer["pos"])
    if value.shape == pos.shape and not np.array_equal(value, pos):
        # A copy's cells hold other cells' values in its own order (a packed copy's walk):
        # neither labelled nor hovered until the answer.
        value = np.array([str(v) if v == p else "" for v, p in zip(value.tolist(), pos.tolist())],
                         dtype=object)  # fmt: skip
    else:
        value = cols.buffer["value"]
    buffer = {
        **cols.buffer,
        "value": value,
        "reads": np.zeros(size, dtype=np.int8),
        "color": np.full(size, GREY_RGBA, dtype=np.uint32),
        "alpha": np.ones(size, dtype=np.float32),
    }
    out = replace(cols, frames=frames, buffer=buffer)
    if cols.labels:
        n = len(cols.logical_labels["x"])
        out.logical_labels = {
            **cols.logical_labels,
            "value_label": letters(n),
            "pos_label": [""] * n,
        }
        # A cell whose value is not its position holds a copy of another's value: where
        # it sits would say the copy's order (a packed copy's strides). Unlabelled.
        values = [
            v if v == p else "" for v, p in zip(cols.buffer_labels["value_label"],
                                                cols.buffer_labels["pos_label"])
        ]  # fmt: skip
        out.buffer_labels = {
            **cols.buffer_labels,
            "value_label": values,
            "reads_label": [""] * size,
            "text_color": np.full(size, "#000000", dtype=object),
        }
    if not cols.overview and cols.buffer_cols != buffer_width(size):
        # The lane wrapped to hold whole rows of the tensor (buffer_row) would say its
        # second-smallest stride: a slice of a 4x5 tensor's 20 cells in rows of 5 answers
        # "stride[0]?". Wrapped by its length alone until the answer.
        out = _wrapped_at(out, buffer_width(size))
    return out


def wraps(cols: Columns) -> list[int]:
    """The widths ``cols``'s buffer lane may be wrapped at and still hold whole rows of
    the tensor: multiples of its own wrap, up to one lane. Just its own for an overview
    (its cells are bins) or a lane of one row."""
    n, width = len(cols.buffer["pos"]), cols.buffer_cols
    if cols.overview or width >= n:
        return [width]
    return [min(k * width, n) for k in range(1, -(-n // width) + 1)]


def rewrapped(cols: Columns, width: int) -> Columns:
    """``cols`` with its buffer lane wrapped ``width`` cells to a row (one of
    :func:`wraps`): the same cells, values and colours, placed anew."""
    if width == cols.buffer_cols or width not in wraps(cols):
        return cols
    return _wrapped_at(cols, width)


def _wrapped_at(cols: Columns, width: int) -> Columns:
    # ``cols``'s buffer cells placed anew, ``width`` to a row.
    n = len(cols.buffer["pos"])
    at = _compact(lane_places(n, width))
    out = replace(
        cols, buffer={**cols.buffer, **at}, buffer_cols=width, buffer_rows=max(1, -(-n // width))
    )
    if len(cols.buffer_labels["x"]):
        out.buffer_labels = {**cols.buffer_labels, **_label_places(at["x"], at["y"])}
    return out


def _compact(data: dict) -> dict:
    """Numeric columns in the fewest bits their values fit: fewer bytes to send and decode.

    Integers go to 8, 16 or 32 bits (a walk's positions and deltas at 64x64 fit in 16:
    the traversal's four columns were 64 KB an edit in 32 bits, 28 KB now); floats to 32
    bits where that keeps every value. The check keeps any that would not fit in 64 bits.
    """
    out = {}
    for key, column in data.items():
        if isinstance(column, np.ndarray) and column.dtype == np.int64 and len(column):
            low, high = column.min(), column.max()
            for small in (np.int8, np.int16, np.int32):
                info = np.iinfo(small)
                if info.min <= low and high <= info.max:
                    column = column.astype(small)
                    break
        elif isinstance(column, np.ndarray) and column.dtype == np.float64:
            as32 = column.astype(np.float32)
            if np.array_equal(as32, column, equal_nan=True):
                column = as32
        out[key] = column
    return out


def changed_columns(old: dict, new: dict) -> dict:
    """The columns of ``new`` that differ from ``old``; all of ``new`` when the keys or lengths differ.

    Sending only these to the browser (``source.data.update(...)``) keeps a change that
    leaves most columns alone (the same shape, a new walk) from re-sending 4,096-row
    columns the page already has.
    """
    if set(old) != set(new) or {len(v) for v in old.values()} != {len(v) for v in new.values()}:
        return new
    return {k: v for k, v in new.items() if not _same_column(old[k], v)}


#: Whether two kept (read-only) columns are equal, by the pair's ids: they never change.
_compared = Kept(256)


def _same_column(a, b) -> bool:
    # NaN equals NaN here: the labels sources pad with NaN positions (rows that draw
    # nothing), and a NaN that never equalled itself re-sent both 770-row label columns
    # on every edit, for the browser to measure every label again.
    if a is b:  # kept columns and labels are shared: the same object is the same column
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        kept = _unchanging(a) and _unchanging(b)
        if kept:  # a class toggling between a few states compares the same pairs
            found = _compared.get_for((a, b))
            if found is not None:
                return found
        same = bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        if kept:
            _compared.put_for((a, b), (), same)
        return same
    return type(a) is type(b) and a == b


def _unchanging(column: np.ndarray) -> bool:
    """Read-only and owning its data (no writable array under it): it can never change."""
    return not column.flags.writeable and column.base is None
