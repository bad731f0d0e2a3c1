"""What the page looks like, as laws: text colours readable, labels that never outgrow
their cells, frames that stand out on every cell colour."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("panel")

from candela import Tensor
from explorer import columns as C
from explorer import style
from explorer.figures import _FONT_SHARE, Figures


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
    assert len(colours) >= 10
    for colour in colours:
        assert contrast(colour, "#FFFFFF") >= 4.5, colour


def test_the_text_colour_rule_catches_a_pale_colour():
    assert text_colours(".x { color: #82AAFF; background-color: #000000 }") == ["#82AAFF"]
    assert contrast("#82AAFF", "#FFFFFF") < 4.5


def test_the_cursor_and_hover_frames_stand_out_on_every_cell_colour():
    # A dark and a light ring together: one of them contrasts with any cell at 4.5:1.
    figures = Figures()
    rings = {r.glyph.line_color for r in figures.frames}
    assert {C.CURSOR, C.HOVER} <= rings
    outlines = [c for c in rings if c not in (C.CURSOR, C.HOVER)]
    for cell in [*C._PALETTE, C.GREY, "#FFFFFF"]:
        assert max(contrast(ring, cell) for ring in outlines) >= 4.5, cell
    # ... and the rings drawn thicker than the mark itself, so they show around it.
    widths = {r.glyph.line_color: r.glyph.line_width for r in figures.frames}
    assert all(widths[o] > widths[C.CURSOR] for o in outlines)


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
        "buffer-figure": (figures.buffer_figure.width - 8) / (cols.buffer_cols + 0.2),
    }
    for renderer in figures.labels:
        if not renderer.visible:
            continue
        fig, text, _, min_cell = figures.label_spec[renderer.id]
        font = float(renderer.glyph.text_font_size.rstrip("px"))
        assert font <= _FONT_SHARE[text] * cell[fig] + 1, (shape, text, font, cell[fig])
        assert cell[fig] + 1 >= min_cell * scale
    if figures.tile_labels.visible and cols.tiles["text"]:
        font = float(figures.tile_labels.glyph.text_font_size.rstrip("px"))
        widest = max(len(t) for t in cols.tiles["text"]) * 0.62 * font
        assert widest <= cell["logical-figure"] * shape[-1] + 1


def test_a_page_stylesheet_is_a_file_in_the_package():
    here = Path(style.__file__).parent
    assert (here / "page.css").read_text() in style.CSS
