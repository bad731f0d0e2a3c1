"""What the page looks like, as laws: text colours readable, labels that never outgrow
their cells, frames that stand out on every cell colour."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("panel")

from candela import Tensor, s
from explorer import columns as C
from explorer import style
from explorer.figures import (
    CELL_FILL,
    FRAME_RINGS,
    LABELLED_CELL,
    LESSON_CELL,
    LOGICAL_MAX_PX,
    Figures,
    frame_rings,
    split_height,
)
from explorer.labels import BUFFER_LABELS, FONT_SHARE, LEAST_FONT, LOGICAL_LABELS, tile_cell


def luminance(color: str) -> float:
    # WCAG 2 relative luminance of an sRGB colour.
    rgb = [int(color.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def text_colours(css: str) -> list[str]:
    # Every `color:` (not background-color) the stylesheets give text.
    return re.findall(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{6})", css)


def test_every_text_colour_of_the_page_reads_at_4_5_to_1_on_white():
    css = style.CSS
    colours = text_colours(css) + [C.OFFSET_TEXT, style.RIGHT_COLOR, style.WRONG_COLOR]
    assert len(colours) >= 3
    for colour in colours:
        assert contrast(colour, "#FFFFFF") >= 4.5, colour


def _palette(theme: str) -> dict[str, str]:
    block = re.search(rf":host\(\.candela-{theme}\) \{{([^}}]*)\}}", style.THEME_CSS).group(1)
    return dict(re.findall(r"--candela-([\w-]+):\s*(#[0-9a-fA-F]{6})", block))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_text_colour_of_a_theme_reads_at_4_5_to_1_on_its_backgrounds(theme):
    palette = _palette(theme)
    texts = ["fg", "muted", "warn", "error", "link", "right", "wrong"]
    grounds = ["bg", "code-bg", "note-bg", "kbd-bg", "button-bg"]
    for text in texts:
        for ground in grounds:
            ratio = contrast(palette[text], palette[ground])
            assert ratio >= 4.5, (theme, text, ground, round(ratio, 2))
    # The page's fallbacks (a pane outside the explorer's box) are the light theme's.
    light = _palette("light")
    for name, colour in re.findall(r"var\(--candela-([\w-]+), (#[0-9a-fA-F]{6})\)", style.CSS):
        if name in texts:
            assert contrast(colour, light["bg"]) >= 4.5, (name, colour)


def test_the_text_colour_rule_catches_a_pale_colour():
    assert text_colours(".x { color: #82AAFF; background-color: #000000 }") == ["#82AAFF"]
    assert contrast("#82AAFF", "#FFFFFF") < 4.5


@pytest.mark.parametrize("cell", [12, 16, 20, 29, 30, 46, 69])
def test_the_cursor_and_hover_frames_stand_out_on_every_cell_colour(cell):
    # A dark and a light ring together: one of them contrasts with any cell at 4.5:1.
    spec = frame_rings(cell)
    assert set(spec) == {"cursor", "hover"}
    for mark, colour in (("cursor", C.CURSOR), ("hover", C.HOVER)):
        rings = spec[mark]["rings"]
        assert rings[-1][0] == colour  # innermost: the mark's own colour
        outlines = [c for c, _ in rings[:-1]]
        for cell_colour in [*C._PALETTE, C.GREY, "#FFFFFF"]:
            assert max(contrast(ring, cell_colour) for ring in outlines) >= 4.5, cell_colour
        # Drawn outer first, each ring wider than the next, so every one shows around it.
        widths = [w for _, w in rings]
        assert widths == sorted(widths, reverse=True) and len(set(widths)) == len(widths)


def test_frames_on_small_cells_are_thicker_and_go_around_the_cell():
    big, small = frame_rings(46), frame_rings(16)
    for mark in ("cursor", "hover"):
        assert small[mark]["rings"][-1][1] > big[mark]["rings"][-1][1]
        # The mark's own ring lies wholly outside a small cell (its inner edge at or past
        # the cell's edge), so the cell's colour and label still show inside the frame.
        size, width = small[mark]["size"], small[mark]["rings"][-1][1]
        assert size * 16 - width >= 16 - 1e-9
        assert big[mark]["size"] < 1  # on big cells the frame sits on the cell's edge


def test_the_marks_source_holds_every_ring_of_the_first_frame():
    figures = Figures()
    t = Tensor.arange((2, 3)).transpose()
    figures.render(C.columns_for(t), t.layout)
    data = figures.marks_buffer.data
    assert data["mark"] == ["cursor"] * len(FRAME_RINGS)
    assert data["ring"] == list(range(len(FRAME_RINGS)))
    assert set(data["pos"]) == {t.layout.offset}
    assert figures.marks_logical.data["k"] == [0] * len(FRAME_RINGS)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=8).filter(
    lambda s: int(np.prod(s)) <= 256
)


@settings(max_examples=40, deadline=None)
@given(shapes, st.sampled_from([1.0, 1.5]))
def test_labels_never_outgrow_their_cells_at_any_rank(shape, scale):
    figures = Figures()
    figures.set_scale(scale)
    cols = C.columns_for(Tensor.arange(tuple(shape)))
    figures.render(cols, Tensor.arange(tuple(shape)).layout)
    cell = {
        "logical-figure": (figures.logical_figure.width - 8) / (cols.grid.width + 0.2),
        "buffer-figure": (figures.buffer_figure.width - 8) / (figures.columns.buffer_cols + 0.2),
    }
    for fig, data in (
        ("logical", figures.labels_logical.data),
        ("buffer", figures.labels_buffer.data),
    ):
        specs = {spec[0]: spec for spec in (LOGICAL_LABELS if fig == "logical" else BUFFER_LABELS)}
        for i, text in enumerate(data["text"]):
            if not text:
                continue
            kind, font = data["kind"][i], float(data["size"][i].rstrip("px"))
            if kind == "tile":  # spelt as fully as it fits (labels.tile_spelling)
                drawn = [t for t, k in zip(data["text"], data["kind"]) if k == "tile" and t]
                widest = max(len(t) for t in drawn) * 0.62 * font
                # over its tile and the gap to the next (where the next header begins)
                assert widest <= cell["logical-figure"] * (shape[-1] + 1) + 1
            elif kind in FONT_SHARE:
                assert font <= FONT_SHARE[kind] * cell[f"{fig}-figure"] + 1, (shape, kind, font)
                # Shown in cells of its least size (at scale 1), never under 12 px.
                assert cell[f"{fig}-figure"] + 1 >= specs[kind][-1] and font >= LEAST_FONT


def test_a_labels_source_never_gets_shorter_and_is_as_long_as_the_most_it_has_drawn():
    # Bokeh's text glyph must never see its source get shorter; beyond that a source
    # carries no empty rows (each costs a notebook's output and the page's text glyph).
    figures = Figures()
    most = {"logical": 0, "buffer": 0}
    shapes = [(3, 4), (16, 16), (1,), (2, 3, 4), (64, 64), (2, 2, 2, 2, 2), (3, 4), (5,)]
    for shape in shapes:
        t = Tensor.arange(shape)
        cols = C.columns_for(t)
        figures.render(cols, t.layout)
        alone = Figures()  # the same state drawn first: no padding at all
        alone.render(cols, t.layout)
        for fig, data, first in (
            ("logical", figures.labels_logical.data, alone.labels_logical.data),
            ("buffer", figures.labels_buffer.data, alone.labels_buffer.data),
        ):
            assert len({len(v) for v in data.values()}) == 1
            kinds = np.asarray(data["kind"], dtype=object)
            drawn = int((kinds != "pad").sum())
            most[fig] = max(most[fig], drawn)
            assert len(data["text"]) == most[fig], (shape, fig)
            assert len(first["text"]) == drawn and "pad" not in first["kind"], (shape, fig)
            # A padding row comes after the drawn ones, is placed nowhere and has no text.
            pad = kinds == "pad"
            assert not pad[:drawn].any()
            assert np.isnan(np.asarray(data["x"], dtype=float)[pad]).all()
            assert not any(np.asarray(data["text"], dtype=object)[pad])
        # The real rows carry the columns' own text, in order.
        if cols.labels:
            shown = [t for t, k in zip(figures.labels_logical.data["text"],
                                       figures.labels_logical.data["kind"]) if k == "value_label"]  # fmt: skip
            assert shown == list(cols.logical_labels["value_label"])
    assert most["logical"] > 24  # the sequence grew the sources past a 3x4 grid's labels


def test_a_page_stylesheet_is_a_file_in_the_package():
    from explorer.shipped import without_comments

    here = Path(style.__file__).parent
    # as sent: its comments emptied (explorer.shipped)
    assert without_comments((here / "page.css").read_text(), ".css") in style.CSS


@pytest.mark.parametrize("concealed", [False, True])
def test_while_a_question_waits_neither_hover_nor_text_alternative_names_a_position(concealed):
    figures = Figures()
    figures.concealed = concealed
    t = Tensor.arange((3, 4)).transpose()
    figures.render(C.columns_for(t), t.layout)
    tips = [name for tool in figures.hover_tools.values() for name, _ in tool.tooltips]
    labels = [
        f.html_attributes["aria-label"] for f in (figures.logical_figure, figures.buffer_figure)
    ]
    assert ("position" in tips, "reads" in tips) == (not concealed, not concealed)
    assert all(("position" in label) == (not concealed) for label in labels), labels
    assert all(("(4, 3)" in label) == (not concealed) for label in labels[:1]), labels


def test_the_offset_marker_points_at_the_cell_the_walk_starts_from():
    figures = Figures()
    t = Tensor.arange((3, 4)).slice(s[1:, 2:])  # offset 6
    cols = C.columns_for(t)
    figures.render(cols, t.layout)
    data = figures.labels_buffer.data
    rows = {kind: i for i, kind in enumerate(data["kind"]) if kind.startswith("offset")}
    mark, name = rows["offset_mark"], rows["offset"]
    assert data["text"][mark] == "▲" and data["text"][name] == "offset"
    assert data["x"][mark] == cols.buffer["x"][t.layout.offset] == data["x"][name]
    assert data["y"][mark] < cols.buffer["y"][t.layout.offset]  # just below the cell


@pytest.mark.parametrize(
    "shape", [(2, 3, 4), (2, 2, 2, 2), (2, 2, 2, 2, 2), (2, 1, 3, 2, 2, 2), (2,) * 7, (2,) * 8]
)
def test_every_tile_up_to_rank_8_has_its_header_and_values(shape):
    # Each tile is labelled with its leading indices ([0,1,0,1,0,1,:,:]), readable and no
    # wider than its tile and the gap to the next; the cells show their values.
    t = Tensor.arange(shape)
    cols = C.columns_for(t)
    figures = Figures()
    figures.render(cols, t.layout)
    data = figures.labels_logical.data
    cell = figures.cells["logical"]
    headers = [(text, float(size[:-2])) for text, kind, size in
               zip(data["text"], data["kind"], data["size"]) if kind == "tile" and text]  # fmt: skip
    leading = math.prod(shape[:-2])
    assert len(headers) == leading
    # Spelt as fully as lets the grid fit its column: [0, 1, :, :], [0,1,0,1,0,:,:] or
    # [0,1,0,1,0] (NumPy's x[0,1,0,1,0] is the same tile); in full if none does.
    full = {text for text, _ in headers} == set(cols.tiles["text"])
    room = (LOGICAL_MAX_PX - 8) / (cols.grid.width + 0.2)
    assert full or cell <= room < tile_cell(cols, 1.0, 0)
    for (text, font), whole in zip(headers, cols.tiles["text"]):
        assert font >= 12
        inner = [part.strip() for part in text.strip("[]").split(",")]
        assert inner[: len(shape) - 2] == [p.strip() for p in whole.strip("[]").split(",")][:-2]
        assert inner[len(shape) - 2 :] == ([":", ":"] if full else [])
        assert 0.62 * font * len(text) <= cell * (shape[-1] + 1) + 1
    values = [text for text, kind in zip(data["text"], data["kind"]) if kind == "value_label"]
    assert len([v for v in values if v]) == math.prod(shape)


@settings(max_examples=60, deadline=None)
@given(
    st.floats(160, 2000),
    st.floats(1, 80),
    st.floats(2, 60),
    st.floats(1, 200),
    st.floats(1, 200),
)
def test_the_figures_share_the_height_they_have(tall, grid_high, lane_high, grid_px, lane_px):
    # Both figures within the height the page measured, one cell size for both unless a
    # figure's width holds its cells smaller, which leaves the rest to the other.
    high = {"logical": grid_high, "buffer": lane_high}
    wide = {"logical": grid_px, "buffer": lane_px}
    heights = split_height(tall, high, wide)
    assert heights["logical"] + heights["buffer"] <= tall + 1e-6
    cells = {fig: (heights[fig] - 8) / high[fig] for fig in high}
    capped = [fig for fig in high if wide[fig] < (tall - 16) / (grid_high + lane_high)]
    if not capped:
        assert math.isclose(cells["logical"], cells["buffer"], rel_tol=1e-9)
    else:
        assert any(math.isclose(cells[fig], wide[fig], rel_tol=1e-9) for fig in capped)
        assert math.isclose(heights["logical"] + heights["buffer"], tall, rel_tol=1e-9)


def test_a_measured_room_sizes_the_cells_and_keys_take_it():
    from explorer.keys import Keys

    t = Tensor.arange((4, 3))
    figures = Figures()
    figures.set_scale(1.5)  # presenter mode: cells grow to the room, past 46 px
    figures.render(C.columns_for(t), t.layout)
    seen = []
    keys = Keys()
    keys.on_room = lambda *room: seen.append(room) or figures.set_room(*room)
    keys._handle_msg({"room": [1360, 1080, 700]})
    keys._handle_msg({"room": [1360, "1080", 700]})  # not numbers: ignored
    assert seen == [(1360, 1080, 700)]
    assert figures.cells["logical"] > 80 and figures.cells["buffer"] > 80
    assert figures.logical_figure.height + figures.buffer_figure.height <= 700
    keys._handle_msg({"room": [600, 768, 260]})  # a short screen: smaller, still fits
    assert figures.logical_figure.height + figures.buffer_figure.height <= 260
    keys._handle_msg({"room": [600, 768, 260, 1, 2]})  # five numbers: ignored
    assert seen[-1] == (600, 768, 260)


def test_on_a_phone_the_grid_ends_on_the_first_screen_where_it_begins():
    # 390x844 under a lesson's question: the page says the first screen leaves the grid
    # 240 px; a grid of 24 lettered cells drawn at 42 px (352 px) ran past 300.
    from explorer.keys import Keys

    t = Tensor.arange((2, 3, 2, 2))
    figures = Figures()
    figures.render(C.columns_for(t), t.layout)
    keys = Keys()
    keys.on_room = figures.set_room
    keys._handle_msg({"room": [352, 844, 760]})
    whole = figures.logical_figure.height
    assert whole > 240  # the two figures' room alone would draw it taller ...
    keys._handle_msg({"room": [352, 844, 760, 240]})
    assert figures.logical_figure.height <= 240 < whole  # ... than the first screen has
    assert figures.cells["logical"] >= 29  # its cells still show their values


#: The room a 1024x768 projector's page measures in presenter mode, beside the lesson
#: panel: the column's width, the window's height, the height both figures share.
PROJECTOR_ROOM = (624, 768, 408)


def _lane_places(figures):
    # Each buffer cell's place as the page gets it, read back as a position in the lane.
    data, width = figures.buffer_source.data, figures.columns.buffer_cols
    rows = -np.asarray(data["y"], dtype=float) / C.BUFFER_ROW_PITCH
    return (rows * width + np.asarray(data["x"], dtype=float)).tolist()


@pytest.mark.parametrize(
    "tensor",
    [Tensor.arange((4, 5)), Tensor.arange((2, 3, 4)).transpose(1, 2), Tensor.arange((6, 4))],
    ids=["4x5", "2x4x3", "6x4"],
)
def test_on_a_projector_a_lessons_buffer_wraps_wider_to_give_the_grid_lesson_cells(tensor):
    # A lesson's grid of up to 24 elements on a 1024x768 projector: cells of LESSON_CELL
    # px, the buffer under it keeping cells that show their values; the lane wrapped
    # wider (2 rows of 10 for a 4x5, where 4 rows of 5 left the grid 34 px), whole rows
    # of the tensor to a row. Out of presenter mode the lane keeps its own wrap.
    cols = C.columns_for(tensor)
    figures = Figures()
    figures.set_scale(1.5)
    figures.set_room(*PROJECTOR_ROOM)
    figures.render(cols, tensor.layout)
    drawn = figures.columns
    assert figures.cells["logical"] >= LESSON_CELL - 1e-6, figures.cells
    assert figures.cells["buffer"] >= LABELLED_CELL, figures.cells
    assert drawn.buffer_cols in C.wraps(cols)
    assert _lane_places(figures) == list(range(len(cols.buffer["pos"])))
    plain = Figures()
    plain.render(cols, tensor.layout)
    assert plain.columns.buffer_cols == cols.buffer_cols


def test_a_room_that_wraps_the_lane_otherwise_draws_it_again():
    # The page measures its room after the first drawing: a lane wrapped for a guess is
    # wrapped again for the room, its cells placed anew in the source the page draws.
    t = Tensor.arange((4, 5))
    figures = Figures()
    figures.set_scale(1.5)
    figures.render(C.columns_for(t), t.layout)
    widths = {figures.columns.buffer_cols}
    frames, tags = figures.frames_source.data, dict(figures.frames_source.tags[0])
    figures.frame_slider.value = 7  # the walk at element 8
    for room in (PROJECTOR_ROOM, (1640, 1080, 700), PROJECTOR_ROOM, (400, 700, 300)):
        figures.set_room(*room)
        widths.add(figures.columns.buffer_cols)
        assert _lane_places(figures) == list(range(20)), room
        # The same walk: its frames not sent again (the page would restart it at element
        # 1), only their tags changed, which has the page draw its frame again in place.
        assert figures.frames_source.data is frames and figures.frame_slider.value == 7
        assert figures.frames_source.tags[0] != tags
        tags = dict(figures.frames_source.tags[0])
        assert len(figures.labels_buffer.data["x"]) >= 20
        lane = figures.labels_buffer.data
        placed = {
            t: (x, y) for t, x, y, k in zip(lane["text"], lane["x"], lane["y"], lane["kind"])
            if k == "value_label" and t
        }  # fmt: skip
        data = figures.buffer_source.data
        for p in range(20):  # each value's label on its own cell
            if str(p) in placed:
                assert placed[str(p)] == (data["x"][p], data["y"][p]), (room, p)
    assert len(widths) > 1  # the rooms did wrap it otherwise


@settings(max_examples=60, deadline=None)
@given(st.floats(20, 80), st.sampled_from([1.0, 1.5, 2.0]))
def test_a_cells_corner_labels_and_the_offsets_name_sit_clear_of_the_cursors_frame(cell, scale):
    # The cursor's frame, drawn on a large cell's edge (marks.frame_rings: its centre line
    # at `size` cells, its outermost ring `width` px), crossed the top of buffer cell 0's
    # position label, and the offset's name under it: each now sits clear of it.
    from explorer.labels import label_blocks
    from explorer.marks import frame_rings

    t = Tensor.arange((3, 4))
    cols = C.columns_for(t)
    x, y = float(cols.buffer["x"][0]), float(cols.buffer["y"][0])
    cells = {"logical": cell, "buffer": cell}
    blocks = dict(label_blocks(cols, cells, scale, (x, y - 0.62), False)["buffer"])
    ring = frame_rings(cell)["cursor"]
    outer = ring["rings"][0][1]
    inner = (1 - ring["size"]) / 2 * cell + outer / 2  # px in from the cell's edge
    reach = (ring["size"] - 1) / 2 * cell + outer / 2  # px out past it
    for kind in ("pos_label", "reads_label"):
        rows = blocks[kind]
        if rows is None:  # too small a cell for it: hover tells
            continue
        cx, cy = x, y
        # the label's corner, px in from the cell's edges (x right, y down on the screen)
        from_left = (rows["x"][0] - (cx - 0.5)) * cell + rows["x_offset"]
        from_top = ((cy + 0.5) - rows["y"][0]) * cell + rows["y_offset"]
        if kind == "pos_label":
            assert from_left >= inner and from_top >= inner, (from_left, from_top, inner)
        else:
            assert cell - from_left >= inner and cell - from_top >= inner, (kind, inner)
    name = blocks["offset"]
    if name is not None:  # beside the marker, past the frame's side
        assert abs(name["x_offset"]) >= cell / 2 + max(reach, 0.0), (name, reach)


@settings(max_examples=60, deadline=None)
@given(st.floats(20, 80), st.sampled_from([1.0, 1.5, 2.0]), st.sampled_from([1, 8, 512, 4096]))
def test_a_corner_label_ends_inside_the_cursors_frame_on_either_side(cell, scale, unit):
    # A position in bytes (5 digits in a 40-80 px cell) began clear of the frame's left
    # side and ran under its right side: the label's whole width is inside the frame.
    from explorer.labels import label_blocks
    from explorer.marks import frame_rings

    cols = C.columns_for(Tensor.arange((3, 4)))
    cells = {"logical": cell, "buffer": cell}
    blocks = dict(label_blocks(cols, cells, scale, None, False, unit)["buffer"])
    ring = frame_rings(cell)["cursor"]
    inner = max(0.0, (1 - ring["size"]) / 2 * cell + ring["rings"][0][1] / 2)
    rows = blocks["pos_label"]
    if rows is None:
        return
    size = float(rows["size"].rstrip("px"))
    for x, text in zip(rows["x"], rows["text"]):
        from_left = (x - (round(x) - 0.5)) * cell + rows["x_offset"]
        right = from_left + 0.6 * size * len(text)  # a digit is about 0.6 of the font wide
        assert right <= cell - inner + 0.5, (text, size, from_left, right, cell - inner)


#: Where a tiled grid is drawn: no room measured, a laptop, a projector, a phone.
SCREENS = [
    (None, 1.0), ((1280, 800, 520), 1.0), (PROJECTOR_ROOM, 1.5), ((352, 844, 760, 240), 1.0)
]  # fmt: skip


def _drawn(shape, room, scale) -> tuple[Figures, C.Columns]:
    # The figures of an arange of ``shape`` drawn in ``room`` at ``scale``.
    t = Tensor.arange(shape)
    figures = Figures()
    figures.set_scale(scale)
    if room is not None:
        figures.set_room(*room)
    cols = C.columns_for(t)
    figures.render(cols, t.layout)
    return figures, cols


@pytest.mark.parametrize("shape", [(2, 3, 2, 2), (2, 2, 2, 3), (2, 3, 4), (3, 2, 2, 2, 2)])
@pytest.mark.parametrize("room, scale", SCREENS)
def test_the_first_tiles_headers_are_whole_inside_the_grids_figure(shape, room, scale):
    # The row above the first tiles is only as tall as their headers need (it was two
    # rows of cells, 62 px of 31 px cells over a 16 px header on a projector): each
    # header, lifted clear of the cursor's frame, still ends inside the figure.
    from explorer.labels import frame_reach

    figures, _ = _drawn(shape, room, scale)
    data = figures.labels_logical.data
    tiles = [i for i, kind in enumerate(data["kind"]) if kind == "tile"]
    assert tiles, data["kind"]
    cell = figures.cells["logical"]
    top = figures.logical_figure.y_range.end
    for i in tiles:
        font = float(data["size"][i].removesuffix("px"))
        lift = -float(data["y_offset"][i])
        assert lift >= frame_reach(cell)  # clear of the cursor's frame on the tile's cells
        # px from the header's anchor (its tile's top edge) to the figure's top
        assert (top - float(data["y"][i])) * cell >= lift + font - 0.01, (i, cell, top)
    # ... and no more room than that, as a share of the figure, than before: two rows.
    assert top - max(float(data["y"][i]) for i in tiles) <= 2.0


@pytest.mark.parametrize(
    "shape", [(2, 3, 2, 2), (3, 2, 4), (3, 2, 2, 2, 2), (2,) * 6, (2,) * 8, (3, 2, 1, 40)]
)
@pytest.mark.parametrize("room, scale", SCREENS)
def test_every_tiles_header_is_clear_of_the_tile_above_it(shape, room, scale):
    # Tiles one above another are a header's row and half a row apart
    # (columns.TILE_BAND; two rows left the channels-last lesson 37 px cells on a
    # projector): each header, lifted clear of the cursor's frame on its own tile, ends
    # below the bottom edge of every cell above it in its columns.
    figures, cols = _drawn(shape, room, scale)
    data = figures.labels_logical.data
    cell = figures.cells["logical"]
    cx, cy = np.asarray(cols.logical["x"]), np.asarray(cols.logical["y"])
    half = CELL_FILL / 2  # a cell's half height, in cells
    checked = drawn = 0
    for i, kind in enumerate(data["kind"]):
        if kind != "tile" or not data["text"][i]:
            continue
        drawn += 1
        font = float(data["size"][i].removesuffix("px"))
        anchor = float(data["y"][i])  # its tile's top edge, less 0.1
        ends = anchor + (-float(data["y_offset"][i]) + font) / cell
        width = 0.62 * font * len(data["text"][i]) / cell
        left = float(data["x"][i])
        under = (cx >= left - 0.5) & (cx <= left + width + 0.5) & (cy > anchor + 0.5)
        if under.any():
            checked += 1
            assert ends <= cy[under].min() - half + 0.01, (data["text"][i], cell, font)
    # Tiles one above another were checked (a projector's rank 6 and 8, fitted whole on
    # its screen, have cells too small for headers: hover names a tile there).
    assert checked or math.prod(shape[:-3]) == 1 or not drawn
