"""In a notebook, an explorer's output inlines its stylesheets in one pass, one sheet per file.

Patch ``inline_once`` (speed), for the explorer's own views only (a method it gives the
view's outermost box, ``explorer.app._Root``, when installed): with ``pn.config.inline`` on
(as the explorer sets it), Panel 1.9 displays an output by replacing, model by
model, every stylesheet link to its CDN with an ``InlineStyleSheet`` of the file's
text. It reads the file from disk for each link (128 reads for one explorer), makes
a sheet model for each (the same ``loading.css`` sent 40 times: 0.67 MB of HTML per
output), and each model's new stylesheets make Bokeh collect the whole document's
models again (48 times): most of the kernel's ~0.6 s to display an explorer.

Here the view's models are given their inline sheets once the view is built, before
Panel's own pass (which then finds nothing to change): the document frozen while they
change (its models collected once), each file read once per process, and one
``InlineStyleSheet`` model per file per output, shared by every model that links it
(BokehJS makes a ``<style>`` element per use from it). The explorer's panes redrawn
from the kernel (:mod:`explorer.patches.inline_panes`) use the same sheets. Off, Panel
inlines as it does.

Reproduction (for upstream): in a notebook, ``pn.extension(inline=True)``, then time
``pn.Column(*[pn.pane.HTML(str(i)) for i in range(40)])._repr_mimebundle_()`` and
count ``InlineStyleSheet`` models in its output: one per link, each a separate read
of the same file, and Bokeh's document recomputed after each model.
"""

from __future__ import annotations

import functools

from . import Patch, apply, is_on, register

__all__ = ["inline_once", "inline_stylesheets", "render_once"]


def inline_once() -> bool:
    """Turn the patch on (see the module), if it may be; the explorer's views then use it."""
    return apply("inline_once")


@functools.cache
def _file_text(url: str) -> str | None:
    """The text of Panel's own stylesheet ``url`` (a link to its CDN), read once; or None."""
    from panel.io.resources import CDN_DIST, DIST_DIR

    if not url.startswith(CDN_DIST):
        return None
    path = DIST_DIR / url.replace(CDN_DIST, "").split("?")[0]
    try:
        return path.read_text(encoding="utf-8")
    except OSError:  # not shipped with this Panel: the link stays, as Panel leaves it
        return None


def inline_stylesheets(models, doc=None) -> None:
    """Replace each of ``models``' links to Panel's stylesheets with the sheet's text inline.

    One ``InlineStyleSheet`` per file for the whole call, shared by every model that
    links it, and one per stylesheet given as text (the explorer's own, on most of its
    panes); ``doc`` (the models' document) collects its models once, at the end.
    """
    from contextlib import nullcontext

    from bokeh.models import ImportedStyleSheet, InlineStyleSheet

    sheets: dict[str, InlineStyleSheet] = {}

    def inline(sheet):
        if isinstance(sheet, str):  # a sheet's text: one model for every model that has it
            key = "css:" + sheet
            if key not in sheets:
                sheets[key] = InlineStyleSheet(css=sheet)
            return sheets[key]
        if not isinstance(sheet, ImportedStyleSheet):
            return sheet
        if sheet.url not in sheets:
            text = _file_text(sheet.url)
            sheets[sheet.url] = sheet if text is None else InlineStyleSheet(css=text)
        return sheets[sheet.url]

    with doc.models.freeze() if doc is not None else nullcontext():
        for model in models:
            old = model.stylesheets
            new = [inline(sheet) for sheet in old]
            if any(a is not b for a, b in zip(new, old)):
                model.stylesheets = new


def render_once(cls: type):
    """``cls._render_model``: displayed in a notebook (Panel's inline mode), the view's
    stylesheets are inlined in one pass (see the module)."""

    def _render_model(self, doc=None, comm=None):
        from panel.config import config
        from panel.io.state import state

        if doc is None or comm is None or not config.inline or state._is_pyodide:
            return super(cls, self)._render_model(doc, comm)
        if not is_on("inline_once"):
            return super(cls, self)._render_model(doc, comm)
        from bokeh.models import UIElement

        # The document collects its models once, when the view has joined it inlined.
        with doc.models.freeze():
            model = super(cls, self)._render_model(doc, comm)
            inline_stylesheets(model.select({"type": UIElement}))
        return model

    return _render_model


register(
    Patch(
        name="inline_once",
        changes="panel.viewable.Viewable._render_model, given to the explorer's views "
        "only (explorer.app._Root): Panel's own, then every link to Panel's stylesheets inlined in "
        "one pass, one sheet model per file, each file read once per process",
        why="Panel 1.9's inline mode reads a stylesheet file and makes a sheet model for "
        "each link of each model, and Bokeh collects the document's models after each",
        buys="an explorer displayed in a notebook: the kernel's time (about half of it) and "
        "its output's size (0.67 MB to about 0.2 MB)",
        checked={"panel": "1.9", "bokeh": "3.9"},
        needs=(
            "panel.io.resources:DIST_DIR",
            "panel.io.resources:CDN_DIST",
            "panel.viewable:Viewable._render_model",
            "bokeh.document.models:DocumentModelManager.freeze",
        ),
        copies=(("panel.io.notebook:replace_inline_css", "54e1eef03398eed9"),),
        upstream="pn.extension(inline=True); "
        "pn.Column(*[pn.pane.HTML(str(i)) for i in range(40)])._repr_mimebundle_()",
    )
)
