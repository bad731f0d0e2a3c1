"""In a notebook, an explorer's output is made in one pass over its models, not thirteen.

Patch ``lean_display`` (speed), for the explorer's own views only (a mixin,
:class:`LeanDisplay`, of the view's outermost box, beside
:class:`~explorer.patches.inline_once.InlineOnce`): Panel 1.9 makes a notebook
output in steps that each walk the whole graph of the output's models
(``bokeh.model.util.collect_models``, about 4 ms each for an explorer's ~100
models): it adds the root to its document twice (``Viewable._render_model``, then
``render_mimebundle``), each time taking every model out of any document first; the
document recomputes its models at each root added (the view, the ``CommManager``,
the ``Location``); it selects every ``UIElement`` again to inline stylesheets
(already inlined here); each figure's ``pn.pane.Bokeh`` walks its figure's models
(half of the output's) for ``CustomJS`` models; Bokeh's
``standalone_docs_json_and_render_items`` walks the models for Python callbacks only
to print a warning Panel suppresses; and ``Document.to_json`` works out every
property's default value only to drop it, and encodes the figures' labels (about
14,000 strings) one by one. That was ~60% of the kernel's time to make an explorer's
output: 165 ms of CPU, 71 ms with this patch (alternating on and off in one process).

Here one display walks the models once: taking them out of any other document (as
Panel does), inlining their stylesheets, and giving the document its models from that
walk (Bokeh's ``recompute``, repeated with the models given) once the view, the
``CommManager`` and the ``Location`` have joined it in Panel's order; the figures'
panes are told their ``CustomJS`` models by the explorer (:class:`LeanBokehPane`);
the document is serialized without working out the defaults it drops
(:func:`explorer.patches.lean_serialization._query_properties_with_values`) and with
a list of strings taken whole, for these models only (the process's Bokeh is
untouched). The bundle is Panel's: the same models with the same ids and properties,
the same roots in the same order, the document held as Panel holds it with the same
events waiting, the same comm and callbacks, the same metadata;
``tests/explorer/test_notebook_lean.py`` holds it to Panel's own. Off (or outside
Panel's inline, Jupyter-comms case), Panel makes the output.

Reproduction (for upstream): count ``bokeh.model.util.collect_models`` calls while
``pn.Column(*[pn.widgets.TextInput() for _ in range(30)])._repr_mimebundle_()`` runs
in a notebook: each walks every model of the output.
"""

from __future__ import annotations

import functools
import os
import sys

from . import Patch, apply, is_on, register

__all__ = ["LeanBokehPane", "LeanDisplay", "lean_display", "lean_json"]


def lean_display() -> bool:
    """Turn the patch on (see the module), if it may be; the explorer's views then use it."""
    return apply("lean_display")


@functools.cache
def _serializer_class():
    """Bokeh's ``Serializer``, serializing a model without working out the defaults it drops."""
    from bokeh.core.serialization import Serializer
    from bokeh.model import Model
    from bokeh.settings import settings

    from .lean_serialization import _query_properties_with_values

    class LeanSerializer(Serializer):
        def _encode(self, obj):
            if (
                not isinstance(obj, Model)
                or type(obj).to_serializable is not Model.to_serializable
                or settings.serialize_include_defaults()
            ):
                return super()._encode(obj)
            # Bokeh 3.9's Model.to_serializable and HasProps.to_serializable, in one.
            self.add_ref(obj, obj.ref)
            rep = {"type": "object", "name": obj.__qualified_model__, "id": obj.id}
            properties = _query_properties_with_values(
                obj, lambda prop: prop.serialized, include_defaults=False
            )
            attributes = {key: self.encode(val) for key, val in properties.items()}
            if attributes:
                rep["attributes"] = attributes
            return rep

        def _encode_list(self, obj: list):
            # A list of strings (a labels source's columns: thousands of rows) is its own
            # encoding: Bokeh encodes item by item, each a str, as it is.
            if all(type(item) is str for item in obj):
                return list(obj)
            return super()._encode_list(obj)

    return LeanSerializer


def lean_json(doc) -> dict:
    """``doc.to_json(deferred=False)`` (Bokeh 3.9's steps), its models serialized lean."""
    from bokeh import __version__
    from bokeh.core.has_props import is_DataModel
    from bokeh.model import Model

    data_models = [m for m in Model.model_class_reverse_map.values() if is_DataModel(m)]
    serializer = _serializer_class()(deferred=False)
    defs = serializer.encode(data_models)
    config = serializer.encode(doc._config)
    roots = serializer.encode(doc._roots)
    callbacks = serializer.encode(doc.callbacks.js_event_callbacks)
    doc_json = {"version": __version__, "title": doc.title, "config": config, "roots": roots}
    if data_models:
        doc_json["defs"] = defs
    if doc.callbacks.js_event_callbacks:
        doc_json["callbacks"] = callbacks
    doc.models.flush_synced()
    return doc_json


def _render_model(model, comm=None) -> tuple[dict, dict]:
    """Panel 1.9's ``render_model`` (inline resources), its document serialized lean.

    Bokeh's ``standalone_docs_json_and_render_items`` for one model, less its walk of
    every model for Python callbacks (for a warning Panel suppresses).
    """
    from bokeh.core.json_encoder import serialize_json
    from bokeh.embed.elements import div_for_render_item
    from bokeh.embed.util import RenderItem
    from bokeh.util.serialization import make_globally_unique_css_safe_id, make_globally_unique_id
    from panel.config import panel_extension as pnext
    from panel.io.notebook import DOC_NB_JS, EXEC_MIME, mimebundle_to_html

    target = model.ref["id"]
    docid = make_globally_unique_id()
    roots = {model: make_globally_unique_css_safe_id()}
    docs_json = {docid: lean_json(model.document)}
    render_item = RenderItem(docid, roots=roots)
    div = div_for_render_item(render_item)
    render_json = render_item.to_json()
    requirements = [pnext._globals[ext] for ext in pnext._loaded_extensions
                    if ext in pnext._globals]  # fmt: skip
    ipywidget = "ipywidgets_bokeh" in sys.modules and "PANEL_IPYWIDGET" in os.environ
    script = DOC_NB_JS.render(
        docs_json=serialize_json(docs_json),
        render_items=serialize_json([render_json]),
        requirements=requirements,
        ipywidget=ipywidget,
    )
    html = f"<div id='{target}'>{div}</div>"
    data = {"text/html": html, "application/javascript": script}
    return ({"text/html": mimebundle_to_html(data), EXEC_MIME: ""}, {EXEC_MIME: {"id": target}})


def _lean_case() -> bool:
    """Whether Panel would make this output the way the patch repeats: a notebook output with
    Jupyter's comms, its resources inline, its extension loaded, no embedding, no Pyodide."""
    from panel.config import config, panel_extension
    from panel.io.state import state

    return (
        is_on("lean_display")
        and is_on("inline_once")
        and config.inline
        and not config.embed
        and config.comms == "default"
        and not state._is_pyodide
        and panel_extension._loaded
    )


class LeanDisplay:
    """Mixin for the explorer's view: its notebook output made in one pass (see the module)."""

    def _repr_mimebundle_(self, include=None, exclude=None):
        if not _lean_case():
            return super()._repr_mimebundle_(include, exclude)
        import functools as ft
        import uuid

        from bokeh.document import Document
        from panel.config import config
        from panel.io.notebook import JupyterCommManagerBinary as JupyterCommManager
        from panel.io.resources import set_resource_mode
        from panel.io.state import state
        from panel.models.comm_manager import CommManager

        # Panel 1.9's Viewable._repr_mimebundle_, its notebook case.
        try:
            from IPython import get_ipython

            assert get_ipython().kernel is not None
            state._comm_manager = JupyterCommManager
        except Exception:
            pass
        location = None
        if not state._views:  # the kernel's first output: Panel's global Location
            from panel.io.location import Location

            state._location = location = Location()
        doc = Document()
        comm = state._comm_manager.get_server_comm()
        with set_resource_mode("inline"):  # Viewable._render_model, less its add_to_doc
            model = self.get_root(doc, comm)
            if self._design and self._design.theme.bokeh_theme:
                doc.theme = self._design.theme.bokeh_theme
        reached = _take_out_and_inline(model)
        # MimeRenderMixin._render_mimebundle: the comm from the page and its manager.
        ref = model.ref["id"]
        manager = CommManager(comm_id=comm.id, plot_id=ref)
        client_comm = state._comm_manager.get_client_comm(
            on_msg=ft.partial(self._on_msg, ref, manager),
            on_error=ft.partial(self._on_error, ref),
            on_stdout=ft.partial(self._on_stdout, ref),
            on_open=lambda _: comm.init(),
        )
        self._comms[ref] = (comm, client_comm)
        manager.client_comm_id = client_comm.id
        _join(doc, model, reached, manager, location, comm)
        bundle = _render_model(model, comm)
        if config.console_output != "disable":
            from IPython.display import display

            handle = display(display_id=uuid.uuid4().hex)
            state._handles[ref] = (handle, [])
        return bundle


class LeanBokehPane:
    """Mixin for a ``pn.pane.Bokeh`` of the explorer's own figures, told the ``CustomJS``
    models its object reaches, so Panel need not walk the figure's models to find them.

    ``custom_js`` (a function of no arguments, called at each display) gives them, or
    None when it cannot (Panel's own walk then runs). Panel's ``Bokeh._get_model``
    rewrites the figure's id in each one's code to the output's root id;
    ``tests/explorer/test_notebook_lean.py`` holds the list to Panel's own search.
    """

    #: Never chosen by ``pn.panel`` for a Bokeh model (Panel's pane for it is its own).
    priority = False
    custom_js = None

    def _get_model(self, doc, root=None, parent=None, comm=None):
        given = self.custom_js() if self.custom_js is not None else None
        if root is None or given is None or not _lean_case() or (comm and self.autodispatch):
            return super()._get_model(doc, root, parent, comm)
        from bokeh.models import Spacer
        from panel.io.model import remove_root

        # Panel 1.9's Bokeh._get_model, the CustomJS models given, not searched for.
        model = Spacer() if self.object is None else self.object
        ref = root.ref["id"]
        for js in given:
            js.code = js.code.replace(model.ref["id"], ref)
        if model._document and doc is not model._document:
            remove_root(model, doc)
        self._models[ref] = (model, parent)
        self._design.apply_bokeh_theme_to_model(model, self.theme)
        return model


def _take_out_and_inline(model) -> set:
    """Panel's ``add_to_doc``'s ``remove_root`` and ``patch_inline_stylesheets``, in one walk.

    Every model of ``model`` is taken out of any document it was in, and its links to
    Panel's stylesheets inlined (:func:`~explorer.patches.inline_once.inline_stylesheets`;
    the sheet models are numbered in the walk's order, Panel's in the order of a set).
    Returns the models ``model`` reaches now: those walked, the sheet models replaced
    by their inline ones (sheets are reached only through ``stylesheets``).
    """
    from bokeh.model import Model
    from bokeh.model.util import collect_models
    from bokeh.models import UIElement
    from bokeh.models.css import StyleSheet

    from .inline_once import inline_stylesheets

    models = collect_models(model)
    for each in models:
        previous = each.document
        each._document = None
        if previous is not None:
            previous.remove_root(each)
    elements = [m for m in models if isinstance(m, UIElement)]
    inline_stylesheets(elements)
    sheets = {s for m in elements for s in m.stylesheets if isinstance(s, Model)}
    return {m for m in models if not isinstance(m, StyleSheet)} | sheets


def _join(doc, model, reached: set, manager, location, comm) -> None:
    """``render_mimebundle``'s roots: the view, its ``CommManager`` and the kernel's first
    ``Location`` join ``doc`` in Panel's order, the document held after the view as Panel
    holds it; its models then collected as Bokeh's ``recompute`` does, from ``reached``
    (the view's models, walked already) and the two others' (Panel: a walk a root)."""
    models = doc.models
    models._push_freeze()  # Bokeh's freeze, its recompute below
    try:
        doc.add_root(model)
        if doc.callbacks.hold_value is None:
            doc.hold()
        doc.add_root(manager)
        if location is not None:
            doc.add_root(location._get_model(doc, model, model, comm))
    finally:
        models._freeze_count -= 1
    for root in doc.roots:
        if root is not model:
            reached = reached | root.references()
    _recompute(models, reached)


def _recompute(manager, new_models: set) -> None:
    """Bokeh 3.9's ``DocumentModelManager.recompute``, the document's models given."""
    from bokeh.util.datatypes import MultiValuedDict

    document = manager._document()
    if document is None:
        return
    old_models = set(manager._models.values())
    to_detach = old_models - new_models
    to_attach = new_models - old_models
    recomputed = {}
    recomputed_by_name = MultiValuedDict()
    for mn in new_models:
        recomputed[mn.id] = mn
        if mn.name is not None:
            recomputed_by_name.add_value(mn.name, mn)
    for md in to_detach:
        manager._seen_model_ids.add(md.id)
        md._detach_document()
    for ma in to_attach:
        ma._attach_document(document)
        manager._new_models.add(ma)
    manager._models = recomputed
    manager._models_by_name = recomputed_by_name


register(
    Patch(
        name="lean_display",
        changes="panel.viewable.Viewable._repr_mimebundle_, overridden for the explorer's "
        "views only (LeanDisplay): Panel's steps (get_root, the comm and its manager, the "
        "document's roots, render_model) with the models walked once, the document "
        "recomputed once and serialized without working out dropped defaults",
        why="Panel 1.9 walks every model of an output about 13 times to display it, and "
        "Bokeh works out every default value before dropping it when serializing",
        buys="an explorer's notebook output made in 71 ms of CPU instead of 165 ms (the "
        "view's bundle, alternating on and off in one process); with the lesson files parsed "
        "once, the kernel's time to display an explorer 235 ms to 134 ms, 4.4x to 2.6x a "
        "plain pn.pane.Bokeh (docs/benchmarks.md)",
        checked={"panel": "1.9", "bokeh": "3.9"},
        needs=(
            "panel.viewable:Viewable.get_root",
            "panel.viewable:Viewable._on_msg",
            "panel.io.notebook:JupyterCommManagerBinary",
            "panel.io.notebook:DOC_NB_JS",
            "panel.io.notebook:EXEC_MIME",
            "panel.io.notebook:mimebundle_to_html",
            "panel.io.resources:set_resource_mode",
            "panel.io.state:state._handles",
            "panel.models.comm_manager:CommManager",
            "bokeh.embed.util:RenderItem",
            "bokeh.embed.elements:div_for_render_item",
            "bokeh.document.models:DocumentModelManager._push_freeze",
            "bokeh.util.datatypes:MultiValuedDict",
            "bokeh.models.css:StyleSheet",
            "bokeh.model.util:collect_models",
            "panel.io.model:remove_root",
            "panel.pane.plot:Bokeh._get_model",
        ),
        copies=(
            ("panel.viewable:Viewable._repr_mimebundle_", "7d841d8599abf0f0"),
            ("panel.viewable:Viewable._render_model", "a57e60a3f5d4d3a4"),
            ("panel.pane.plot:Bokeh._get_model", "b6d5f9150ecdf870"),
            ("panel.viewable:MimeRenderMixin._render_mimebundle", "54bbe74492cc2555"),
            ("panel.io.notebook:render_mimebundle", "1ff7ac5034c605c9"),
            ("panel.io.notebook:render_model", "efebc6cf6c986da5"),
            ("panel.io.model:add_to_doc", "07828d87e8a0a14c"),
            ("panel.io.model:remove_root", "8cb0864e76591a1d"),
            ("bokeh.document.models:DocumentModelManager.recompute", "cb3c609da144a707"),
            ("bokeh.document.models:DocumentModelManager._pop_freeze", "e4d0d26f1430bccb"),
            ("bokeh.embed.util:standalone_docs_json_and_render_items", "66202a87cdaefc23"),
            ("bokeh.document.document:Document.to_json", "6c14801bfde49329"),
            ("bokeh.model.model:Model.to_serializable", "22b00b286cc42244"),
            ("bokeh.core.has_props:HasProps.to_serializable", "253a7ed63b12906e"),
            ("bokeh.core.serialization:Serializer._encode_list", "7cfa20b6ba441d04"),
            ("bokeh.core.serialization:Serializer._encode_str", "7b7b9ee85d1b8d54"),
            ("bokeh.core.serialization:Serializer.encode", "0c63028ef5992b33"),
        ),
        upstream="pn.extension(); count bokeh.model.util.collect_models calls in "
        "pn.Column(*[pn.widgets.TextInput() for _ in range(30)])._repr_mimebundle_()",
    )
)
