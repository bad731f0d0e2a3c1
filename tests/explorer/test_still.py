"""The still picture (SVG) a notebook's viewer shows where no script runs: what it draws is the layout.

Read back from the SVG as a viewer draws it: each grid's cells say the buffer
positions their layout reads, in row-major order, and each buffer cell is marked
with the views that read it; for a compare, both views.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as hs

from candela import Layout
from explorer.still import still_svg

SVG = "{http://www.w3.org/2000/svg}"


def read_back(svg: str) -> tuple[dict[str, list[int]], dict[int, str], list[str]]:
    """Each grid's cell labels (by heading), each buffer cell's mark, and the text lines."""
    texts = [t for t in ET.fromstring(svg).iter(f"{SVG}text")]
    grids: dict[str, list[int]] = {}
    marks: dict[int, str] = {}
    lines: list[str] = []
    section, last_cell = None, None
    for t in texts:
        body = t.text or ""
        if "logical grid" in body:
            section = body
            grids[section] = []
        elif body.startswith("memory buffer"):
            section = "buffer"
        elif t.get("font-size") == "8":
            marks[last_cell] = body
        elif body.isdigit() and section == "buffer":
            last_cell = int(body)
            marks[last_cell] = ""
        elif body.isdigit() and section is not None:
            grids[section].append(int(body))
        else:
            lines.append(body)
    return grids, marks, lines


def views(draw) -> tuple[Layout, Layout]:
    shape = tuple(draw(hs.lists(hs.integers(1, 4), min_size=1, max_size=3)))
    a = Layout(shape)
    pick = draw(hs.sampled_from(["transpose", "step", "flip", "same"]))
    if pick == "transpose":
        b = a.transpose()
    elif pick == "step":
        b = a.slice((slice(None, None, 2),))
    elif pick == "flip":
        b = a.slice((slice(None, None, -1),))
    else:
        b = a
    if draw(hs.booleans()):
        a = a.transpose()
    return a, b


@settings(max_examples=60, deadline=None)
@given(hs.data())
def test_a_compares_picture_draws_both_views_and_marks_each_buffer_cell_with_its_readers(data):
    a, b = views(data.draw)
    svg = still_svg(a, ["title", "A fields"], b, ["B: ops", "B fields"])
    grids, marks, lines = read_back(svg)
    assert grids == {
        f"A: logical grid {a.shape}": [int(p) for p in a.positions()],
        f"B: logical grid {b.shape}": [int(p) for p in b.positions()],
    }
    read_a, read_b = {int(p) for p in a.positions()}, {int(p) for p in b.positions()}
    size = max(read_a | read_b) + 1
    assert sorted(marks) == list(range(size))
    for p, mark in marks.items():
        assert mark == (("A" if p in read_a else "") + ("B" if p in read_b else "") or "-"), p
    assert lines == ["title", "A fields", "B: ops", "B fields"]
    # every line of text fits the picture's width (monospace 12 px: under 8 px a letter)
    root = ET.fromstring(svg)
    width = float(root.get("width"))
    for t in root.iter(f"{SVG}text"):
        if t.get("text-anchor") != "middle":
            assert float(t.get("x")) + 8 * len(t.text or "") <= width, (t.text, width)


@settings(max_examples=30, deadline=None)
@given(hs.data())
def test_one_views_picture_draws_its_grid_and_the_buffer_it_reads(data):
    a, _ = views(data.draw)
    grids, marks, _ = read_back(still_svg(a, ["title"]))
    assert grids == {f"logical grid {a.shape}": [int(p) for p in a.positions()]}
    assert set(marks) == set(range(max(int(p) for p in a.positions()) + 1))
