"""A still picture of an explorer (SVG), for where scripts do not run.

A notebook viewed on GitHub, in nbviewer without JavaScript, or sent as an
attachment shows its outputs without running their scripts, so a live explorer
there is blank. :func:`still_svg` draws the explorer's layout as it is when
displayed: the logical grid (each cell labelled with the buffer position it
reads), the memory buffer (positions the layout reads filled), and the fields
as text. The notebook glue puts it in the output's bundle as ``image/svg+xml``
and inside ``<noscript>`` in its HTML; JupyterLab, Notebook 7 and nbconvert's
HTML, which run scripts, keep drawing the live explorer.
"""

from __future__ import annotations

import html
import math

__all__ = ["still_html", "still_svg"]

CELL = 28
#: Beyond this many cells a picture would be unreadable: only the fields are drawn.
MAX_CELLS = 1024


def _grid_shape(shape: tuple[int, ...]) -> tuple[int, int]:
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return 1, shape[0]
    return math.prod(shape[:-1]), shape[-1]


#: A buffer cell's fill: read by the one view, by A only, B only, both, or neither.
READ_FILL = {"*": "#f6d9a8", "A": "#dbe8f6", "B": "#f6d9a8", "AB": "#c9e7c2", "": "#f2f2f2"}


def still_svg(layout, lines: list[str], second=None, second_lines=()) -> str:
    """An SVG of ``layout``'s grid and buffer with ``lines`` of text (the fields) under
    them; with ``second`` (a compare's second view over the same buffer), both grids
    (A, B) and the buffer's cells marked with the views that read them, then
    ``second_lines``."""
    views = [("A: " if second is not None else "", layout)]
    if second is not None:
        views.append(("B: ", second))
    drawn = []
    for name, lay in views:
        rows, cols = _grid_shape(tuple(lay.shape))
        positions = [int(p) for p in lay.positions()] if rows * cols <= MAX_CELLS else []
        drawn.append((name, lay, rows, cols, positions))
    shown = all(positions for *_, positions in drawn)
    buffer = max(max(p) + 1 for *_, p in drawn) if shown else 0
    parts = []
    y = 8

    def cell(x0: int, y0: int, fill: str, stroke: str, label: str, mark: str = "") -> None:
        # Every text takes the picture's font and colour from its group (a notebook
        # stores the picture with each output: about half the bytes of spelling them out).
        middle = x0 + CELL // 2 - 1
        parts.append(
            f'<rect x="{x0}" y="{y0}" width="{CELL - 2}" height="{CELL - 2}" '
            f'fill="{fill}" stroke="{stroke}"/>'
            f'<text x="{middle}" y="{y0 + CELL // 2 + (1 if mark else 4)}" '
            f'text-anchor="middle">{label}</text>'
        )
        if mark:
            parts.append(
                f'<text x="{middle}" y="{y0 + CELL - 5}" text-anchor="middle" '
                f'font-size="8">{mark}</text>'
            )

    if shown:
        for name, lay, rows, cols, positions in drawn:
            parts.append(f'<text x="8" y="{y + 12}">{name}logical grid {lay.shape}</text>')
            y += 20
            for k, p in enumerate(positions):
                r, c = divmod(k, cols)
                cell(8 + c * CELL, y + r * CELL, "#dbe8f6", "#4a78a8", str(p))
            y += rows * CELL + 12
        reads = [set(positions) for *_, positions in drawn]
        key = "" if second is None else " (read by A, B or both)"
        parts.append(f'<text x="8" y="{y + 12}">memory buffer, {buffer} positions{key}</text>')
        y += 20
        for p in range(buffer):
            if second is None:
                mark, shown_mark = ("*" if p in reads[0] else ""), ""
            else:
                mark = ("A" if p in reads[0] else "") + ("B" if p in reads[1] else "")
                shown_mark = mark or "-"
            cell(8 + (p % 32) * CELL, y + (p // 32) * CELL, READ_FILL[mark], "#a8824a", str(p),
                 shown_mark)  # fmt: skip
        y += math.ceil(buffer / 32) * CELL + 12
    every_line = [*lines, *second_lines]
    for line in every_line:
        parts.append(f'<text x="8" y="{y + 12}">{html.escape(line)}</text>')
        y += 18
    widest = max((cols for *_, cols, _ in drawn), default=0) if shown else 0
    width = 16 + max(widest, min(buffer, 32)) * CELL
    headings = [f"memory buffer, {buffer} positions (read by A, B or both)"] if second else []
    longest = max((len(line) for line in [*every_line, *headings]), default=0)
    width = max(width, 16 + 8 * longest)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="candela-still" width="{width}" '
        f'height="{y + 8}" viewBox="0 0 {width} {y + 8}" role="img" '
        f'aria-label="Candela Explorer: {html.escape(lines[0] if lines else "")}">'
        f'<rect width="100%" height="100%" fill="#fff"/>'
        f'<g font-family="monospace" font-size="12" fill="#222">{"".join(parts)}</g></svg>'
    )


def _grid_text(positions: list[int], cols: int, width: int) -> str:
    """Rows of ``cols`` positions, each right-aligned in ``width`` characters."""
    return "\n".join(
        "".join(f"{p:>{width}}" for p in positions[r : r + cols])
        for r in range(0, len(positions), cols)
    )


def still_html(layout, lines: list[str], second=None, second_lines=()) -> str:
    """The still picture in the HTML tags every sanitizer keeps (div, b, pre).

    Where a notebook is shown with its HTML sanitized (opened untrusted, nbviewer,
    ``nbconvert --HTMLExporter.sanitize_html=True``) no script runs and neither an SVG nor
    an image is kept: this is what shows there, each view's grid as rows of the buffer
    positions its cells read, the buffer as rows of positions marked with the views that
    read them (A, B), and the fields. The live explorer hides it.
    """

    def read(lay):
        count = math.prod(_grid_shape(tuple(lay.shape)))
        return [int(p) for p in lay.positions()] if count <= MAX_CELLS else None

    first = read(layout)
    other = read(second) if second is not None else None
    size = max([*(first or []), *(other or [])], default=-1) + 1
    width = len(str(max(size - 1, 0))) + 3
    blocks = []
    if first is not None:
        name = "A: " if second is not None else ""
        blocks.append(
            f"{name}logical grid {tuple(layout.shape)}: the buffer position each cell reads\n"
            + _grid_text(first, _grid_shape(tuple(layout.shape))[1], width)
        )
    if other is not None:
        blocks.append(
            f"B: logical grid {tuple(second.shape)}\n"
            + _grid_text(other, _grid_shape(tuple(second.shape))[1], width)
        )
    if first is not None and (second is None or other is not None) and size <= MAX_CELLS:
        reads_a, reads_b = set(first), set(other or [])
        if second is None:
            marks = ["*" if p in reads_a else " " for p in range(size)]
            key = "* read"
        else:
            marks = [("A" if p in reads_a else "") + ("B" if p in reads_b else "") or "-"
                     for p in range(size)]  # fmt: skip
            key = "read by A, B or both (AB); - by neither"
        cells = [f"{p:>{width - 1}}{m:<2}" for p, m in enumerate(marks)]
        rows = ["".join(cells[i : i + 16]) for i in range(0, len(cells), 16)]
        blocks.append(f"memory buffer, {size} positions ({key})\n" + "\n".join(rows))
    blocks.append("\n".join([*lines[1:], *second_lines]))
    body = "\n\n".join(html.escape(b) for b in blocks)
    title = html.escape(lines[0] if lines else "")
    return f'<div class="candela-still-html"><div><b>{title}</b></div><pre>{body}</pre></div>'
