"""In a notebook, a pane redrawn from the kernel keeps its stylesheets inline.

Patch ``inline_panes`` (a Panel bug worked around): Panel 1.9 inlines stylesheets
when a view is first displayed and when a layout's children change, but a pane
whose object changes (every HTML pane of the explorer, at every change of shape or
ops) sends its stylesheets again as links to cdn.holoviz.org (``loading.css`` and
the theme's ``default.css`` and ``native.css``): offline they fail, and the browser
is sent references to stylesheet models it was never given. ``Pane._update_object``
is given to the explorer's own panes (:class:`explorer.text_pane.TextPane`) when the
patch is installed, to patch the redrawn model before
Panel sends it, replacing those links with the
inlined sheets, as Panel does for layouts. It acts only with ``pn.config.inline``
on, in a notebook (a comm), as the explorer sets it, and never on another Panel
pane of the kernel.

Reproduction (for upstream): in a notebook, ``pn.extension(inline=True)``;
``p = pn.pane.HTML("a"); p``; then ``p.object = "b"``: the patch message sent to
the page lists ``https://cdn.holoviz.org/panel/.../loading.css`` among the
pane's stylesheets.
"""

from __future__ import annotations

from . import Patch, apply, is_on, register

__all__ = ["inline_on_redraw", "inline_pane_updates"]


def inline_pane_updates() -> bool:
    """Install the patch (see the module), if it may be: the explorer's panes then use it."""
    return apply("inline_panes")


def inline_on_redraw(cls: type):
    """``cls._update_object``: Panel's own, then the redrawn model's stylesheets inline. Only
    the explorer's panes: every other Panel pane of the kernel is redrawn as Panel redraws it."""

    def _update_object(self, ref, doc, root, parent, comm) -> None:
        super(cls, self)._update_object(ref, doc, root, parent, comm)
        if comm is None or not is_on("inline_panes"):
            return
        from panel.config import config
        from panel.io.notebook import patch_inline_stylesheets
        from panel.io.state import state

        if not config.inline or state._is_pyodide or ref not in self._models:
            return
        from bokeh.models import UIElement

        models = self._models[ref][0].select({"type": UIElement})
        if is_on("inline_once"):  # each file read once, one sheet per file, one collection
            from .inline_once import inline_stylesheets

            inline_stylesheets(models, doc)
            return
        for model in models:
            patch_inline_stylesheets(model)

    return _update_object


register(
    Patch(
        name="inline_panes",
        changes="panel.pane.base.Pane._update_object, given to the explorer's panes only "
        "(explorer.text_pane): Panel's own, then the redrawn model's stylesheets inlined "
        "(with pn.config.inline, in a notebook)",
        why="Panel 1.9 sends a redrawn pane's stylesheets as CDN links even when inline",
        buys="an explorer in a notebook with no network keeps its styles (a fix)",
        checked={"panel": "1.9"},
        needs=(
            "panel.pane.base:Pane._update_object",
            "panel.io.notebook:patch_inline_stylesheets",
            "panel.io.state:state._is_pyodide",
        ),
        upstream="pn.extension(inline=True); p = pn.pane.HTML('a'); p; p.object = 'b'",
    )
)
