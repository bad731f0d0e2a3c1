"""The frames drawn around marked cells (the traversal's cursor, the hovered cell).

The figures draw them (:mod:`explorer.figures`, ``traverse.mjs``) and the labels keep
clear of them (:mod:`explorer.labels`): both read their sizes here.
"""

from __future__ import annotations

from . import columns as C

__all__ = ["FRAME_RINGS", "MARKS", "SMALL_CELL", "frame_rings"]


#: The rings of a frame, outermost first: (colour, or None for the mark's own; extra px).
#: Black and white together stand out on every cell colour (at least 4.5:1 for one of
#: them); the mark's colour inside says which mark it is.
FRAME_RINGS = (("#000000", 4), ("#FFFFFF", 2), (None, 0))
#: Each mark's colour and the width of its own (innermost) ring in px, drawn in this
#: order (the cursor on top).
MARKS = {"hover": (C.HOVER, 2), "cursor": (C.CURSOR, 3)}
#: Below this cell size (px) a frame is drawn thicker and around the cell, not on it:
#: a 3 px ring on a 16 px cell was a few pixels a projector loses.
SMALL_CELL = 30


def frame_rings(cell: float) -> dict:
    """How each mark's frame is drawn on cells of ``cell`` px: its size (in cells, the
    ring's centre line) and its rings as ``[colour, px]``, outermost first.

    On big cells the frame sits on the cell's edge. On small ones it is thicker and
    drawn around the cell, so the cell's own colour still shows inside it.
    """
    small = 0 < cell < SMALL_CELL
    out = {}
    for mark, (color, width) in MARKS.items():
        width += 2 if small else 0
        rings = [[ring or color, width + extra] for ring, extra in FRAME_RINGS]
        size = 1 + width / cell if small else 0.97
        out[mark] = {"size": round(size, 4), "rings": rings}
    return out
