"""The figures' text, as rows of one labels source per figure.

Every text a figure draws (each cell's value, buffer position and read count,
the tile headers of a rank > 2 grid, the offset marker and its name) is a row
of that figure's labels source, drawn by one text glyph whose size, alignment,
offsets and weight are per-row columns. The kinds of label follow one another
in a fixed order (:data:`LABEL_KINDS`), each with the rows it draws: none for a
kind too small for its cells, or for a position label while a question waits.
Bokeh's text glyph must never see its source get shorter, so a source is padded
with rows that draw nothing to the length it had (:func:`at_least`): it is as
long as the most labels it has drawn, not as long as the most it could draw (a
3x4 grid's output carried 1,900 empty rows before, 60% of a notebook output).

:func:`label_blocks` works out the blocks (the offline lesson page ships them so
and joins them in the browser, as :func:`label_rows` does here).
"""

from __future__ import annotations

import numpy as np

from . import columns as C
from .kept import Kept, freeze
from .marks import frame_rings

#: The smallest text a figure draws (px): a label that would be smaller is not drawn (hover
#: still tells). Text under 12 px is hard to read, on a phone above all.
LEAST_FONT = 12
#: The kinds of text label, per figure: (kind, x column, y column, align, baseline, px at
#: scale 1, y_offset, bold, the smallest cell in px it shows in). Labels shrink with their
#: cells and drop below that size or below LEAST_FONT, so they never overlap.
LOGICAL_LABELS = (
    ("value_label", "x", "y", "center", "middle", 15, -5, False, 24),
    ("pos_label", "x", "y", "center", "middle", 12, 11, False, 36),
)
BUFFER_LABELS = (
    ("value_label", "x", "y", "center", "middle", 14, 2, False, 22),
    ("pos_label", "x_left", "y_top", "left", "top", 12, 0, False, 34),
    ("reads_label", "x_right", "y_bottom", "right", "bottom", 12, 0, True, 30),
)
#: A label's font is at most this share of its cell's size.
FONT_SHARE = {"value_label": 0.42, "pos_label": 0.3, "reads_label": 0.3}
#: Label kinds that would answer a question about positions: hidden while one waits.
POSITION_LABELS = frozenset({"pos_label", "reads_label"})
#: Up to this many tile headers (rank > 2); a shape with more has none (too small to read).
TILE_LIMIT = 256
#: Every text of a figure is a row of its one labels source, drawn by one text glyph.
LABEL_KEYS = (
    "x", "y", "text", "color", "size", "align", "baseline", "x_offset", "y_offset", "style", "kind",
)  # fmt: skip
#: Up to this many dots on the cells of a buffer overview that drawn elements read.
DRAWN_LIMIT = 128


def at_least(rows: dict, n: int) -> dict:
    """A figure's label ``rows`` with empty rows after them up to ``n`` rows: Bokeh's text
    glyph must never see its source get shorter (it measures labels asynchronously and
    read past the new end: a RangeError). ``rows`` is shared (kept), so a longer copy is
    made, never ``rows`` changed."""
    pad = n - len(rows["text"])
    if pad <= 0:
        return rows
    return _join([rows, label_block("pad", None, pad)])


def _font(px: float) -> str:
    return f"{int(px * 2) / 2:g}px"  # whole or half pixels, never larger than asked


def label_block(kind: str, rows: dict | None, pad: int = 0) -> dict:
    """One kind's rows as source columns: ``rows`` has x, y, text, color and the kind's
    constant style (size, align, baseline, x_offset, y_offset, style); None draws
    nothing. ``pad`` rows that draw nothing follow them (:func:`at_least`)."""
    count = 0 if rows is None else len(rows["text"])
    n = count + pad
    nan = np.full(pad, np.nan, dtype=np.float32)
    out = {
        "x": np.concatenate([np.asarray(rows["x"][:count] if count else [], np.float32), nan]),
        "y": np.concatenate([np.asarray(rows["y"][:count] if count else [], np.float32), nan]),
        "text": [*(rows["text"] if count else []), *[""] * pad],
        "color": [*(list(rows["color"][:count]) if count else []), *["#000000"] * pad],
    }
    for key, default in (("size", "0px"), ("align", "left"), ("baseline", "middle"),
                         ("x_offset", 0.0), ("y_offset", 0.0), ("style", "normal")):  # fmt: skip
        out[key] = [rows[key] if count else default] * n
    out["kind"] = [kind] * n
    return out


def _join(blocks: list[dict]) -> dict:
    data = {}
    for key in LABEL_KEYS:
        parts = [block[key] for block in blocks]
        data[key] = np.concatenate(parts) if key in ("x", "y") else [v for p in parts for v in p]
    for key in ("x_offset", "y_offset"):
        data[key] = np.asarray(data[key], dtype=np.float32)
    return data


def label_blocks(
    cols: C.Columns,
    cells: dict[str, float],
    scale: float,
    offset_at: tuple[float, float] | None,
    concealed: bool,
    unit_bytes: int = 1,
) -> dict:
    """Each figure's labels as ``[kind, rows or None]`` blocks (see :func:`label_block`).

    Every label is as large as its cell (``cells[figure]`` px) allows, up to its
    size at ``scale``, or dropped; position labels are dropped while
    ``concealed``. ``offset_at`` is where the offset marker goes (None: none).
    With ``unit_bytes`` other than 1 (a byte unit), positions are in bytes.
    """
    out = {}
    for fig, specs, data in (
        ("logical", LOGICAL_LABELS, cols.logical_labels),
        ("buffer", BUFFER_LABELS, cols.buffer_labels),
    ):
        cell = cells.get(fig, 0.0)
        blocks = []
        for kind, x, y, align, baseline, px, y_offset, bold, min_cell in specs:
            rows = None
            if _shown(cols, cell, scale, kind, px, min_cell, data) and not (
                concealed and kind in POSITION_LABELS
            ):
                if fig == "logical" and kind == "value_label":
                    # Above the position label that shares its cell, or in the middle.
                    _, _, _, _, _, pos_px, _, _, pos_min = LOGICAL_LABELS[1]
                    if concealed or not _shown(
                        cols, cell, scale, "pos_label", pos_px, pos_min, data
                    ):
                        y_offset = 0
                text = data[kind]
                if kind == "pos_label" and unit_bytes != 1:
                    text = _in_bytes(text, unit_bytes)
                # A corner's label, moved in clear of the cursor's frame (and as narrow).
                inward = corner_clearance(cell) if align != "center" else 0.0
                font = min(px * scale, cell * FONT_SHARE[kind], _fits(text, cell, kind, inward))
                if font < LEAST_FONT - 0.01:  # too long for its cell to read: hover tells
                    blocks.append([kind, None])
                    continue
                font = max(font, LEAST_FONT)
                x_offset = 0.0
                if align != "center":
                    x_offset = inward if align == "left" else -inward
                    y_offset = inward if baseline == "top" else -inward
                rows = {
                    "x": data[x], "y": data[y], "text": text,
                    "color": data["text_color"],
                    "size": _font(font),
                    "align": align, "baseline": baseline, "x_offset": x_offset,
                    "y_offset": float(y_offset), "style": "bold" if bold else "normal",
                }  # fmt: skip
            blocks.append([kind, rows])
        if fig == "buffer":  # which cells of an overview the drawn elements read
            blocks.append(["drawn", None if concealed else _drawn_dots(cols, cell)])
        blocks += _extra_labels(fig, cols, cell, scale, offset_at)
        out[fig] = blocks
    return out


#: The widest a label may be, as a share of its cell (the rest parts it from the next).
LABEL_WIDTH = {"value_label": 0.92, "pos_label": 0.92, "reads_label": 0.5}


def _fits(text, cell: float, kind: str, inward: float = 0.0) -> float:
    """The largest font (px) at which the longest of ``text`` fits its share of a cell:
    a digit is about 0.6 of the font wide (a 5-digit value over a 40 px cell is 12 px).
    A corner's label, ``inward`` px further in than its place (:func:`corner_clearance`),
    ends as far in from the other side: inside the cursor's frame on both."""
    longest = max((len(t) for t in text), default=0)
    width = LABEL_WIDTH[kind] * cell
    if inward:
        width = min(width, cell * (1 - 2 * CORNER_INSET) - 2 * inward)
    return width / (0.6 * longest) if longest else float("inf")


#: How far in from a cell's edges (a share of the cell) its corner labels sit
#: (columns._label_places: 0.43 of a cell from its middle).
CORNER_INSET = 0.07


def _shown(cols: C.Columns, cell: float, scale: float, kind, px, min_cell, data) -> bool:
    # A label kind shows in cells of at least its least size (at scale 1: enlarged, in any
    # cell its font fits) at a font of LEAST_FONT or more.
    font = min(px * scale, cell * FONT_SHARE[kind])
    return bool(cols.labels and cell >= min_cell and len(data[kind])) and (
        font >= LEAST_FONT - 0.01
    )


def _in_bytes(labels, unit_bytes: int) -> list[str]:
    # Position labels ("5", "@5") in bytes of an element of unit_bytes bytes.
    out = []
    for label in labels:
        at = label.startswith("@")
        if not label[1 if at else 0 :]:  # withheld while a question waits: no number
            out.append(label)
            continue
        number = int(label[1:] if at else label) * unit_bytes
        out.append(f"@{number}" if at else str(number))
    return out


def label_rows(blocks: dict) -> dict:
    """Each figure's labels source data: its blocks' rows, one kind after another."""
    return {fig: _join([label_block(k, r) for k, r in b]) for fig, b in blocks.items()}


#: How many drawings' label rows :func:`rows_for` keeps.
KEPT = 16
_kept = Kept(KEPT)


def rows_for(
    cols: C.Columns,
    cells: dict[str, float],
    scale: float,
    offset_at: tuple[float, float] | None,
    concealed: bool,
    unit_bytes: int = 1,
) -> dict:
    """``label_rows(label_blocks(...))`` of these arguments, kept for the last few drawings.

    Columns are kept and shared (:func:`explorer.columns.columns_for`), so the same
    columns drawn at the same cell sizes are the same labels: about a thousand
    rows at 64x64, built again at every student's edit before. What it returns is
    shared (:mod:`explorer.kept`); nothing changes it.
    """
    key = (tuple(sorted(cells.items())), scale, offset_at, concealed, unit_bytes)
    found = _kept.get_for((cols,), key)
    if found is not None:
        return found
    rows = label_rows(label_blocks(cols, cells, scale, offset_at, concealed, unit_bytes))
    freeze(rows.values())
    _kept.put_for((cols,), key, rows)
    return rows


def _extra_labels(fig: str, cols: C.Columns, cell: float, scale: float, offset_at) -> list:
    # The logical grid's tile headers (rank > 2), which fit over their tile's width or
    # drop (the hover names the index); the buffer's offset marker and its name.
    if fig == "buffer":
        if offset_at is None:
            return [["offset_mark", None], ["offset", None]]
        x, y = offset_at
        common = {"x": [x], "y": [y], "align": "center", "baseline": "middle",
                  "x_offset": 0.0, "y_offset": 0.0, "style": "normal"}  # fmt: skip
        # The marker is text too: the pink that is 4.5:1 on white and on black alike (the
        # offset's own swatch pink is 3:1 on white).
        mark = {**common, "text": ["▲"], "color": [C.OFFSET_TEXT],
                "size": _font(min(13 * scale, max(float(LEAST_FONT), 0.7 * cell)))}  # fmt: skip
        if cell < 14 * scale:  # rows too close for the name: the marker alone, hover tells
            return [["offset_mark", mark], ["offset", None]]
        # The name beside the marker, past the cursor's frame (which marks the offset's
        # cell first, and crossed the name's top where it began 10 px from the middle).
        gap = max(10.0 * scale, cell / 2 + frame_reach(cell) + 2)
        name = {**common, "text": ["offset"], "color": [C.OFFSET_TEXT], "align": "left",
                "size": _font(LEAST_FONT * scale), "x_offset": gap}  # fmt: skip
        # The name goes right of the marker, or left of it where the figure ends first
        # (about 6 characters of 12 px, past the gap).
        if (cols.buffer_cols - 0.4 - x) * cell < gap + 6 * 7.4 * scale:
            name.update(align="right", x_offset=-gap)
        return [["offset_mark", mark], ["offset", name]]
    return [*_tile_labels(cols, cell, scale), _gap_labels(cols, cell, scale)]


def _drawn_dots(cols: C.Columns, cell: float) -> dict | None:
    # A dot in each cell of the buffer's overview that a drawn element reads.
    dots = cols.drawn_reads
    if not len(dots["x"]) or cell < 4:
        return None
    return {
        "x": dots["x"], "y": dots["y"], "text": ["●"] * len(dots["x"]), "color": dots["color"],
        "size": _font(max(4.0, 0.6 * cell)), "align": "center", "baseline": "middle",
        "x_offset": 0.0, "y_offset": 0.0, "style": "normal",
    }  # fmt: skip


def _gap_labels(cols: C.Columns, cell: float, scale: float) -> list:
    # The marks where a summarised grid leaves elements out, in the middle of their slot.
    gaps = cols.gaps
    if not len(gaps["text"]) or cell < 4:
        return ["gap", None]
    return ["gap", {
        "x": gaps["x"], "y": gaps["y"], "text": gaps["text"],
        "color": [C.PAGE_TEXT] * len(gaps["text"]),
        "size": _font(max(8.0, min(16 * scale, 0.8 * cell))), "align": "center",
        "baseline": "middle", "x_offset": 0.0, "y_offset": 0.0, "style": "bold",
    }]  # fmt: skip


def tile_spelling(text: str, spelling: int) -> str:
    """A tile's header in one of :data:`TILE_SPELLINGS`: ``[0, 221, :, :]`` (0), without
    spaces ``[0,221,:,:]`` (1), or its leading indices alone ``[0,221]`` (2: NumPy's
    ``x[0, 221]`` is the same tile)."""
    if spelling >= 1:
        text = text.replace(" ", "")
    if spelling >= 2:
        text = text.replace(",:", "")
    return text


#: How many spellings a tile header has, longest first (:func:`tile_spelling`): the
#: longest that fits over its tile is drawn.
TILE_SPELLINGS = 3


def _tile_labels(cols: C.Columns, cell: float, scale: float) -> list:
    if not len(cols.tiles["text"]) or len(cols.tiles["text"]) > TILE_LIMIT:
        return [["tile", None]]
    # Each header sits on its tile's top edge, lifted clear of the cursor's frame on the
    # tile's first row (the frame reaches past the cell's edge), within the row above.
    clear = frame_reach(cell) + 1
    room = cell * tile_room(cols.grid)
    for spelling in range(TILE_SPELLINGS):
        texts = [tile_spelling(t, spelling) for t in cols.tiles["text"]]
        font = min(LEAST_FONT * scale, room / (0.62 * max(len(t) for t in texts)),
                   cell * TILE_ROW - clear)  # fmt: skip
        if font >= LEAST_FONT - 0.01:  # (cells sized by tile_cell give LEAST_FONT, about)
            break
    else:
        return [["tile", None]]
    font = max(font, LEAST_FONT)
    return [["tile", {
        "x": cols.tiles["x"], "y": np.asarray(cols.tiles["y"]) - 0.1, "text": texts,
        "color": [C.PAGE_TEXT] * len(texts), "size": _font(font), "align": "left",
        "baseline": "bottom", "x_offset": 0.0, "y_offset": -clear, "style": "normal",
    }]]  # fmt: skip


def tile_room(grid) -> float:
    """How many cells wide a tile's header may be: its tile and the gap to the next."""
    return grid.shape[-1] + 1


#: The smallest font (px) a tile header is drawn at; its cells are made large enough.
TILE_FONT = LEAST_FONT


def tile_cell(cols: C.Columns, scale: float, spelling: int = 0) -> float:
    """The cell size (px) at which every tile's header (in ``spelling``: see
    :func:`tile_spelling`) fits over its tile at TILE_FONT: as wide as its text, and as
    tall, in the row above the tile, clear of the cursor's frame on the tile's first row
    (see :func:`_tile_labels`)."""
    texts = cols.tiles["text"]
    if not len(texts):
        return 0.0
    longest = max(len(tile_spelling(t, spelling)) for t in texts)
    cell = 0.62 * TILE_FONT * scale * longest / tile_room(cols.grid)
    while cell * TILE_ROW - (frame_reach(cell) + 1) < TILE_FONT * scale - 0.01:
        cell += 0.5
    return cell


def header_room(cell: float, scale: float) -> float:
    """How many cells (of ``cell`` px) above the first tiles' top edge their headers need
    (see :func:`_tile_labels`): the cursor's frame's reach, a header at its largest font
    and 2 px, less the 0.1 cell between that edge and the top of the cells' rows."""
    if cell <= 0:
        return TILE_ROW - 0.1
    return (frame_reach(cell) + 1 + TILE_FONT * scale + 2) / cell - 0.1


#: The height, in cells, of the room above a tile that holds its header (the cell's top
#: edge to the next tile's cells or the figure's top): tiles above one another are
#: C.TILE_BAND rows apart (columns.grid_for), and the figure leaves at most as much above
#: the first. A header of 12 px clear of the cursor's frame then fits over cells of
#: about 10 px.
TILE_ROW = C.TILE_BAND


def corner_clearance(cell: float) -> float:
    """How far (px) a label in a corner of a ``cell`` px cell (its place 0.07 of a cell in
    from each edge: columns._label_places) moves further in, to sit clear inside the
    cursor's frame where the frame is drawn on the cell's edge: buffer cell 0's position
    was crossed by the frame that marks it first."""
    spec = frame_rings(cell)["cursor"]
    if spec["size"] > 1:  # a small cell's frame is drawn around it, outside
        return 0.0
    inner = (1 - spec["size"]) / 2 * cell + spec["rings"][0][1] / 2 + 1
    return max(0.0, round(inner - CORNER_INSET * cell, 2))


def frame_reach(cell: float) -> float:
    """How far (px) the cursor's frame reaches past the edge of a ``cell`` px cell."""
    spec = frame_rings(cell)["cursor"]
    outer = spec["rings"][0][1]
    return max(0.0, (spec["size"] - 1) / 2 * cell + outer / 2)
