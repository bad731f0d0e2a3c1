"""In a byte unit every position the page shows is in bytes (the buffer cell beside it):
the odometer, the cells' position labels, hover, the flags' reasons."""

from __future__ import annotations

import re

import pytest

from candela import Layout, Tensor, s
from explorer import columns as C
from explorer.app import Explorer
from explorer.fields import DTYPE_BYTES, contiguous_reason
from explorer.figures import Figures, odometer_start, position_text

UNITS = ["int8", "int16", "float32", "float64", "complex128"]


def _label_texts(rows: dict, kind: str) -> list[str]:
    return [t for t, k in zip(rows["text"], rows["kind"]) if k == kind and t]


@pytest.mark.parametrize("unit", UNITS)
def test_positions_are_in_bytes_with_the_cell_beside(unit):
    size = DTYPE_BYTES[unit]
    tensor = Tensor.arange((4, 5)).slice(s[1:, 1:])
    cols = C.columns_for(tensor)
    start = int(cols.frames["pos"][0])
    text = odometer_start(cols, size)
    assert f"position <b>{start * size}</b> bytes (cell {start})" in text
    assert (
        position_text(7, 6, size) == f"position {6 * size} → <b>{7 * size}</b> bytes (cell 6 → 7)"
    )
    assert position_text(7, 6) == "position 6 → <b>7</b>"

    figs = Figures()
    figs.render(cols, tensor.layout, unit)
    buffer = _label_texts(figs.labels_buffer.data, "pos_label")
    assert buffer == [str(p * size) for p in range(len(tensor.buffer))]
    logical = _label_texts(figs.labels_logical.data, "pos_label")
    assert logical == [f"@{int(p) * size}" for p in cols.frames["pos"]]
    # Back to elements: the labels are positions again.
    figs.set_unit("elements")
    assert _label_texts(figs.labels_buffer.data, "pos_label") == [
        str(p) for p in range(len(tensor.buffer))
    ]
    assert dict(figs.hover_tools["buffer"].tooltips)["position"] == "@pos{custom}"
    figs.set_unit(unit)
    assert "position (bytes)" in dict(figs.hover_tools["buffer"].tooltips)


@pytest.mark.parametrize("unit", UNITS)
def test_the_reasons_count_bytes(unit):
    size = DTYPE_BYTES[unit]
    layout = Layout((3, 4)).slice(s[1:])  # contiguous, from offset 4
    numbers = [int(n) for n in re.findall(r"\d+", contiguous_reason(layout, size))]
    assert numbers[:3] == [4 * size, 5 * size, 11 * size]


def test_the_page_shows_positions_in_bytes():
    ex = Explorer(shape=(4, 5), ops=".slice(s[1:, 1:])", unit="float32")
    start = int(ex.layout.offset)
    assert f"position <b>{start * 4}</b> bytes (cell {start})" in ex.figures.odometer.text
    assert "bytes in order" not in ex.fields_pane.object  # not contiguous: no run to read
    ex.unit = "elements"  # the browser writes the odometer again (test_browser)
    labels = _label_texts(ex.figures.labels_buffer.data, "pos_label")
    assert labels[:3] == ["0", "1", "2"]
    ex.unit = "int64"
    labels = _label_texts(ex.figures.labels_buffer.data, "pos_label")
    assert labels[:3] == ["0", "8", "16"]
