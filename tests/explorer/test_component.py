"""The explorer as a component: an op added through the registry alone, and several
explorers (or one shown twice) on one page, each keeping its own traversal and keys."""

from __future__ import annotations

import pytest

from candela import Tensor
from explorer.app import Explorer
from explorer.ops import REGISTRY, Arg, Op, register, unregister
from explorer.pipeline import apply, format_step, parse


@pytest.fixture
def throwaway_op():
    # Narrow to the first `n` elements of axis 0: declared once, nowhere else.
    op = register(
        Op(
            "head",
            (Arg("n", "int", "2"),),
            help="the first n rows",
            numpy="a[:n]",
            torch="x[:n]",
            foreign=("take_first",),
            run=lambda t, args: t.narrow(0, 0, args[0]),
        )
    )
    yield op
    unregister("head")
    assert "head" not in REGISTRY


def test_an_op_added_through_the_registry_alone_parses_applies_and_gets_a_widget(throwaway_op):
    (step,) = parse(".head(1)")
    assert format_step(step) == ".head(1)"
    states = apply([step], Tensor.arange((3, 4)))
    assert states[-1].layout.shape == (1, 4)
    assert "`.head(n)`" in str(pytest.raises(ValueError, parse, ".take_first(1)").value)

    ex = Explorer(shape=(3, 4))
    ex.editor.op_choice.value = "head"
    (box,) = ex.editor.arg_widgets["head"]
    assert box.value == "2" and "n" in box.label
    assert ex.editor.step_text() == ".head(2)"
    assert ".head(n)" in ex.editor.op_help.object and "x[:n]" in ex.editor.op_help.object
    ex.editor.add_button.clicks += 1
    assert ex.ops == ".head(2)" and ex.layout.shape == (2, 4) and ex.error is None


def test_the_same_explorer_shown_twice_gets_figures_of_its_own_drawing_one_state():
    ex = Explorer(shape=(3, 4))
    first, second = ex.__panel__(), ex.__panel__()
    assert first is not second and len(ex._views) == 2
    a, b = (view.figures for view in ex._views)
    assert a.frames_source is not b.frames_source
    ex.ops = ".transpose()"
    assert a.frames_source.data["pos"].tolist() == b.frames_source.data["pos"].tolist()
    assert b.frames_source.data["pos"].tolist()[:4] == [0, 4, 8, 1]


def _pos(view) -> list[int]:
    return view.figures.frames_source.data["pos"].tolist()


def test_a_display_that_is_gone_is_dropped_and_no_longer_redrawn():
    from types import SimpleNamespace

    from bokeh.document import Document
    from panel.config import _cleanup_panel

    ex = Explorer(shape=(3, 4))
    cell, page, kept = ex.__panel__(), ex.__panel__(), ex.__panel__()
    cell_root = cell.get_root(Document())
    page_doc = Document()
    page.server_doc(page_doc)  # as a served session shows it
    kept.get_root(Document())
    cleared, closed, live = ex._views
    # What Panel does when a notebook output is cleared, and when a session closes.
    _cleanup_panel(cell_root.ref["id"])
    page._server_destroy(SimpleNamespace(_document=page_doc))
    assert ex._views == [live] and ex.figures is live.figures
    ex.ops = ".transpose()"
    assert _pos(live)[:4] == [0, 4, 8, 1] and ex.error is None
    assert _pos(cleared)[:4] == _pos(closed)[:4] == [0, 1, 2, 3]  # not redrawn


def test_a_view_drawn_again_after_its_cleanup_is_redrawn_again():
    from bokeh.document import Document

    ex = Explorer(shape=(3, 4))
    shown = ex.__panel__()
    doc = Document()
    root = shown.get_root(doc)
    shown._cleanup(root)
    assert ex._views == []
    ex.ops = ".transpose()"
    shown.get_root(doc)  # a notebook widget shown anew renders the same column again
    (view,) = ex._views
    assert _pos(view)[:4] == [0, 4, 8, 1]
