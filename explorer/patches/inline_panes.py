"""In a notebook, a pane redrawn from the kernel keeps its stylesheets inline.

Patch ``inline_panes`` (a Panel bug worked around): Panel 1.9 inlines stylesheets
when a view is first displayed and when a layout's children change, but a pane
whose object changes (every HTML pane of the explorer, at every change of shape or
ops) sends its stylesheets again as links to cdn.holoviz.org (``loading.css`` and
the theme's ``default.css`` and ``native.css``): offline they fail, and the browser
is sent references to stylesheet models it was never given. ``Pane._update_object``
then patches the redrawn model before Panel sends it, replacing those links with
the inlined sheets, as Panel does for layouts. It acts only with
``pn.config.inline`` on, in a notebook (a comm), as the explorer sets it.

Reproduction (for upstream): in a notebook, ``pn.extension(inline=True)``;
``p = pn.pane.HTML("a"); p``; then ``p.object = "b"``: the patch message sent to
the page lists ``https://cdn.holoviz.org/panel/.../loading.css`` among the
pane's stylesheets.
"""

from __future__ import annotations

from . import Patch, apply, register

__all__ = ["inline_pane_updates"]


def inline_pane_updates() -> bool:
    """Install the patch (see the module), if it is on."""
    return apply("inline_panes")


def _install() -> None:
    from panel.config import config
    from panel.io.notebook import patch_inline_stylesheets
    from panel.io.state import state
    from panel.pane.base import Pane

    update = Pane._update_object
    if getattr(update, "_candela_inline", False):
        return

    def _update_object(self, ref, doc, root, parent, comm):
        update(self, ref, doc, root, parent, comm)
        if comm is None or not config.inline or state._is_pyodide or ref not in self._models:
            return
        from bokeh.models import UIElement

        for model in self._models[ref][0].select({"type": UIElement}):
            patch_inline_stylesheets(model)

    _update_object._candela_inline = True
    Pane._update_object = _update_object


register(
    Patch(
        name="inline_panes",
        changes="panel.pane.base.Pane._update_object: Panel's own, then the redrawn model's "
        "stylesheets inlined (with pn.config.inline, in a notebook)",
        why="Panel 1.9 sends a redrawn pane's stylesheets as CDN links even when inline",
        buys="an explorer in a notebook with no network keeps its styles (a fix)",
        checked={"panel": "1.9"},
        needs=(
            "panel.pane.base:Pane._update_object",
            "panel.io.notebook:patch_inline_stylesheets",
            "panel.io.state:state._is_pyodide",
        ),
        install=_install,
        upstream="pn.extension(inline=True); p = pn.pane.HTML('a'); p; p.object = 'b'",
    )
)
