"""The explorer's cost panel: what it shows is candela's Cost, in the URL, in both views.

The oracle is candela itself (``Layout.cost``, whose own laws are checked against
a brute-force count over the positions in tests/candela) and, for the units drawn,
a count over the walk's positions written here in plain Python.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from bokeh.document import Document
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import explorer
from candela import Layout
from explorer import lessons as L
from explorer.app import Explorer
from explorer.cost_view import COST_UNITS, WARPS, WITHHELD, item_bytes, unit_columns
from explorer.fields import DTYPE_BYTES, UNITS
from explorer.jupyter import as_tensor
from explorer.url import Location, query_for, read_query

PIPELINES = ["", ".T", "[::2]", "[:, ::3]", "[::-1, 1:]", ".T[::2, ::-3]", "[:, None]",
             ".flip(0)", ".diagonal()"]  # fmt: skip


def plain(markup: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", markup)).strip()


def brute_entries(positions, itemsize: int, unit: int) -> dict[int, int]:
    """Per unit, the times a walk enters it: counted one element at a time."""
    entries: dict[int, int] = {}
    last = None
    for p in positions:
        u = int(p) * itemsize // unit
        if u != last:
            entries[u] = entries.get(u, 0) + 1
        last = u
    return entries


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.sampled_from(PIPELINES),
    rows=st.integers(1, 9),
    cols=st.integers(1, 40),
    unit=st.sampled_from(UNITS),
    cost_unit=st.sampled_from(COST_UNITS),
    warp=st.sampled_from(WARPS),
)
def test_the_panel_shows_candelas_cost_of_what_is_shown(ops, rows, cols, unit, cost_unit, warp):
    ex = Explorer(shape=(rows, cols), ops=ops, unit=unit, cost_unit=cost_unit, warp=warp)
    if ex.error:  # a pipeline that does not fit this shape: the default is shown
        return
    # The item size: the unit switch's dtype in bytes, else the buffer's own (np.arange's).
    size = DTYPE_BYTES.get(unit, np.arange(1).dtype.itemsize)
    expected = ex.layout.cost(size, unit=cost_unit, warp=warp)
    assert ex.itemsize == size and ex.cost == expected
    assert expected.words() in plain(ex.cost_pane.object)
    # Each unit's shade counts its entries: as the walk's positions, one by one, say.
    data = ex.figures.units_source.data
    brute = brute_entries(ex.layout.positions(), size, cost_unit)
    got = {int(u): int(e) for u, e in zip(data["unit"], data["entries"]) if e}
    assert got == brute
    assert sum(got.values()) == expected.unit_entries and len(got) == expected.units
    # Every unit of the buffer has its cell, the untouched ones too.
    assert len(data["unit"]) == -(-len(ex.tensor.buffer) * size // cost_unit)


@pytest.mark.parametrize("dtype", ["float16", "float32", "int64", "complex128", "uint8"])
def test_a_shown_array_counts_with_its_own_item_size_in_either_unit(dtype):
    a = np.zeros((8, 24), dtype=dtype)[::2, 1::3].T
    ex = explorer.show(a)
    expected = as_tensor(a)[0].cost()  # Tensor.cost: the buffer's own item size
    assert ex.itemsize == a.itemsize and ex.cost == expected
    ex.unit = "elements"  # strides in elements: the elements are still this dtype's
    assert ex.itemsize == a.itemsize and ex.cost == expected
    ex.unit = "int8"  # strides in bytes of another dtype: the switch's item size counts
    assert ex.itemsize == 1 and ex.cost == ex.layout.cost(1)


def test_a_given_element_size_wins_over_the_buffers_dtype():
    # A PyTorch bfloat16 tensor is read as float32 values; its elements are 2 bytes.
    ex = Explorer(shape=(4, 8), ops=".T")
    ex.given_itemsize = 2
    assert ex.itemsize == 2 and ex.cost == ex.layout.cost(2)
    assert item_bytes("elements", given=2) == 2 and item_bytes("float64", given=2) == 8


def test_unit_columns_shade_by_entries_and_leave_untouched_units_grey():
    # Every other float32 of 4x16: 8 lines of 64 bytes... two read, each entered once.
    layout = Layout((4, 16)).slice((slice(None, None, 3), slice(None, None, 2)))
    cols = unit_columns(layout.positions(), 64, 4, 64)
    assert cols["entries"].tolist() == [1, 0, 0, 1]
    assert cols["color"][0] != cols["color"][1] == cols["color"][2]
    # More entries, a darker shade (a different colour for each doubling).
    many = unit_columns(Layout((64, 64)).T.positions(), 4096, 4, 64)
    assert set(many["entries"].tolist()) == {16} and many["color"][0] != cols["color"][0]


def test_changing_the_unit_the_warp_or_the_item_size_redraws_the_cost():
    ex = Explorer(shape=(64, 64), ops=".T", unit="float32")
    assert (ex.cost.units, ex.cost.unit_entries) == (256, 4096)
    ex.cost_unit = 128
    assert ex.cost == ex.layout.cost(4, unit=128)
    assert len(ex.figures.units_source.data["unit"]) == 128
    assert "128-byte lines" in ex.cost_pane.object
    ex.warp = 32
    assert ex.cost.units_per_request == 32.0 and "a warp of 32" in plain(ex.cost_pane.object)
    ex.unit = "float64"
    assert ex.cost == ex.layout.cost(8, unit=128, warp=32)
    assert ex.figures.frames_source.tags[0]["cost"] == {"itemsize": 8, "unit": 128}
    ex.cost_unit_select.value = 32  # the panel's select is the parameter
    assert ex.cost_unit == 32 and ex.cost.unit == 32


def test_a_walk_too_large_to_draw_shows_the_totals_exactly():
    ex = Explorer(shape=(4096, 4096), ops=".T", unit="float32")
    assert ex.columns.overview  # the summarised grid
    assert ex.cost == Layout((4096, 4096)).T.cost(4)
    assert ex.cost.words() in plain(ex.cost_pane.object)
    assert len(ex.figures.units_source.data["unit"]) == 0
    assert not ex.figures.cost_figure.visible


# ---------------------------------------------------------------- the URL


@settings(max_examples=30, deadline=None)
@given(cost_unit=st.sampled_from(COST_UNITS), warp=st.sampled_from(WARPS),
       unit=st.sampled_from(["elements", "float32"]))  # fmt: skip
def test_the_url_round_trips_the_cost_keys(cost_unit, warp, unit):
    ex = Explorer(shape=(8, 8), ops=".T", cost_unit=cost_unit, warp=warp, unit=unit)
    query = query_for(ex)
    updates, messages = read_query(query)
    assert messages == []
    assert updates.get("cost_unit", 64) == cost_unit and updates.get("warp") == warp
    assert updates.get("unit", "elements") == unit  # the stride unit keeps its key
    assert ("cost=" in query) == (cost_unit != 64) and ("warp=" in query) == (warp is not None)
    other = Explorer()
    assert other.open_url(query) is None
    assert (other.cost_unit, other.warp, other.unit) == (cost_unit, warp, unit)
    assert other.cost == ex.cost


@pytest.mark.parametrize("bad", ["33", "abc", "-64", "6" * 60, "64.0"])
def test_a_bad_cost_in_the_url_is_refused_by_name_and_the_rest_applies(bad):
    ex = Explorer()
    message = ex.open_url(f"?shape=64,64&ops=.T&cost={bad}&warp=32&unit=float32")
    assert message is not None and f"cost `{bad[:40]}`" in message
    assert "32, 64, 128" in message
    assert ex.layout.shape == (64, 64) and ex.layout.stride == (1, 64)
    assert (ex.cost_unit, ex.warp, ex.unit) == (64, 32, "float32")
    assert "cost=" not in ex.url.location.search  # the URL says what the page shows


@pytest.mark.parametrize("bad", ["7", "lots", "33"])
def test_a_bad_warp_in_the_url_is_refused_by_name(bad):
    ex = Explorer()
    message = ex.open_url(f"?shape=8,8&warp={bad}&cost=128")
    assert f"warp `{bad}`" in message and ex.warp is None and ex.cost_unit == 128


def test_a_link_without_cost_keys_counts_cache_lines_of_64_bytes():
    ex = Explorer(cost_unit=128, warp=32)
    location = Location(search="")
    ex.open_url(location=location)
    ex.open_url("?shape=4,4")
    assert (ex.cost_unit, ex.warp) == (64, None)


# ---------------------------------------------------------------- two views


def test_both_views_of_a_compare_page_show_their_own_cost():
    ex = Explorer(shape=(64, 64), compare=".T", unit="float32")
    doc = Document()
    doc.add_root(ex.__panel__().get_root(doc))
    first, second = Layout((64, 64)).cost(4), Layout((64, 64)).T.cost(4)
    assert ex.cost == first
    assert first.words() in plain(ex.cost_pane.object) and "of A" in plain(ex.cost_pane.object)
    assert second.words() in plain(ex.compare_cost_pane.object)
    assert "of B" in plain(ex.compare_cost_pane.object)
    view = ex._views[0]
    a = view.figures.units_source.data["entries"]
    b = view.compare.second.units_source.data["entries"]
    assert set(np.asarray(a).tolist()) == {1} and set(np.asarray(b).tolist()) == {16}
    assert view.compare.second.cost_figure.visible
    ex.cost_unit = 32  # one choice for both sides
    assert Layout((64, 64)).T.cost(4, unit=32).words() in plain(ex.compare_cost_pane.object)
    assert set(np.asarray(view.compare.second.units_source.data["entries"]).tolist()) == {8}


# ---------------------------------------------------------------- withholding


def test_while_a_question_waits_the_cost_panel_states_nothing():
    ex = Explorer()
    doc = Document()
    doc.add_root(ex.__panel__().get_root(doc))
    ex.param.update(lesson="transpose", step=1)
    assert ex.concealed
    assert plain(WITHHELD) in plain(ex.cost_pane.object)
    assert "reads" not in plain(ex.cost_pane.object)
    assert len(ex.figures.units_source.data["unit"]) == 0
    assert ex.figures.frames_source.tags[0]["cost"] is None
    assert not ex.figures.cost_figure.visible
    ex.classroom.show_me()
    assert not ex.concealed and ex.cost.words() in plain(ex.cost_pane.object)
    assert len(ex.figures.units_source.data["unit"]) > 0


def test_every_lesson_question_on_a_cost_withholds_its_number():
    # A cost question's answer is nowhere in the document while it waits.
    asks = {"units", "unit_entries", "units_per_request"}
    steps = [
        (lesson.id, n, step)
        for lesson in L.list_lessons()
        for n, step in enumerate(lesson.steps, 1)
        if step.question is not None and step.question.ask in asks
    ]
    if not steps:
        pytest.skip("no lesson asks about a cost")
    ex = Explorer()
    doc = Document()
    doc.add_root(ex.__panel__().get_root(doc))
    for lesson_id, n, _step in steps:
        ex.param.update(lesson="", step=1)
        ex.param.update(lesson=lesson_id, step=n)
        assert ex.concealed
        text = plain(ex.cost_pane.object)
        assert "reads" not in text and "entering" not in text, (lesson_id, n)
        assert len(ex.figures.units_source.data["unit"]) == 0


@pytest.mark.parametrize("dtype, size", [("float32", 4), ("bfloat16", 2), ("int16", 2)])
def test_a_shown_pytorch_tensor_counts_with_its_own_element_size(dtype, size):
    torch = pytest.importorskip("torch")
    t = torch.zeros((6, 40), dtype=getattr(torch, dtype))[:, ::3].T
    ex = explorer.show(t)
    assert ex.unit == "elements" and ex.itemsize == t.element_size() == size
    assert ex.cost == ex.layout.cost(size)


# ---------------------------------------------------------------- offline, notebook, still


def test_the_offline_page_carries_the_cost_and_its_units():
    from explorer.export import export_html

    ex = Explorer(shape=(16, 16), ops=".T", unit="float32", cost_unit=32)
    text = export_html(ex)
    assert "candela-cost" in text
    assert ex.cost.words() in re.sub(r"<[^>]+>", "", text.replace("\\u2013", "–"))
    assert '"cost-units-source"' in text


def test_the_offline_lesson_page_draws_each_steps_cost_and_withholds_a_waiting_ones():
    from explorer.lesson_page import lesson_page_data

    lesson = L.load_lesson("transpose")
    data = lesson_page_data(lesson)
    for step, shown in zip(lesson.steps, data["steps"]):
        layout = L.step_layout(step)
        full = shown["drawing"]
        assert layout.cost(8).words() in plain(full["cost"])
        assert sum(full["sources"]["units_source"]["entries"]) == layout.cost(8).unit_entries
        if step.question is not None:
            waiting = shown["withheld"]
            assert "reads" not in plain(waiting["cost"])
            assert waiting["sources"]["units_source"]["entries"] == []
            assert not waiting["cost_visible"]


def test_the_still_picture_states_the_totals():
    from explorer.notebook import _still_lines
    from explorer.still import still_svg

    ex = Explorer(shape=(8, 8), ops=".T", unit="float32")
    lines = _still_lines(ex)
    assert lines[-1] == "cost: " + ex.cost.words()
    assert ex.cost.words() in still_svg(ex.layout, lines)
