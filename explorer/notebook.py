"""The notebook display glue of an explorer: offline, on every page, redrawn in place.

Panel needs ``pn.extension()`` before it can display anything in a notebook,
and its JavaScript in the page. :func:`ensure_extension` runs it lazily, when
an :class:`Explorer` is displayed, so importing ``explorer`` (or calling
``show`` outside a notebook) changes nothing in Panel's configuration. It runs
once per front-end page, not once per kernel: a notebook reopened (or a
browser tab reloaded) on a kernel that is still running is a new page without
Bokeh or Panel, and Panel alone counts its extension as loaded for good. Pages
are told apart by the Jupyter session of the request being executed, which
each front-end connection to a kernel picks at random.

The JavaScript and stylesheets are inlined (``pn.config.inline``), so an
explorer renders with no network: by default Panel would fetch them from
cdn.bokeh.org and cdn.holoviz.org. ``PANEL_INLINE=false`` in the kernel's
environment turns that off (smaller notebooks, but a network is needed). Once
an explorer has been displayed, the kernel's other Panel outputs are inlined
too: the setting, and the fix for panes redrawn from the kernel
(:func:`_inline_pane_updates`), are Panel's, for the whole kernel.
"""

from __future__ import annotations

import os

__all__ = ["ensure_extension", "in_notebook", "repr_mimebundle", "repr_text"]


def in_notebook() -> bool:
    """True inside a Jupyter kernel (not a terminal IPython, not plain Python)."""
    import sys

    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


#: The front-end pages (Jupyter sessions) this kernel has sent Panel's extension to.
_pages: set[str] = set()


def _page() -> str:
    """The Jupyter session of the front end whose request the kernel is executing."""
    from IPython import get_ipython

    kernel = get_ipython().kernel
    try:
        parent = kernel.get_parent()
    except Exception:  # pragma: no cover - an older ipykernel
        parent = getattr(kernel, "_parent_header", None) or {}
    return str((parent or {}).get("header", {}).get("session", ""))


def ensure_extension() -> None:
    """Load Panel's notebook extension, inlined, into the page that is displaying, once."""
    import panel as pn
    from panel.config import panel_extension

    if not in_notebook():
        return
    # TODO: register in explorer.patches once that package has its registry.
    from .patches import comm_stdout

    comm_stdout.apply()
    page = _page()
    if panel_extension._loaded and page in _pages:
        return
    # Bokeh and Panel's JavaScript go into the output itself, not a CDN link, and
    # stylesheets of models the kernel sends later are inlined too (Panel reads
    # the flag at every update). An explicit PANEL_INLINE still wins.
    if "PANEL_INLINE" not in os.environ:
        pn.config.inline = True
    _inline_pane_updates()
    pn.extension()
    _pages.add(page)


def _inline_pane_updates() -> None:
    """Keep stylesheets inline when a displayed pane is redrawn from the kernel.

    Panel 1.9 inlines stylesheets when a view is first displayed and when a
    layout's children change, but a pane whose object changes (every HTML pane
    of the explorer, at every change of shape or ops) sends its stylesheets
    again as links to cdn.holoviz.org (``loading.css`` and the theme's
    ``default.css`` and ``native.css``): offline they fail, and the browser is
    sent references to stylesheet models it was never given. Patching the
    redrawn model before Panel sends it replaces those links with the inlined
    sheets, as Panel does for layouts.
    """
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


def repr_mimebundle(explorer, include=None, exclude=None):
    """``Explorer._repr_mimebundle_``: load the extension if needed, then Panel's bundle."""
    if not in_notebook():
        return {"text/plain": repr_text(explorer)}, {}
    ensure_extension()
    return explorer._create_view()._repr_mimebundle_(include, exclude)


def repr_text(explorer) -> str:
    """A one-line text form for terminals: the current layout and the pipeline."""
    from .fields import layout_line

    ops = f" ops={explorer.ops!r}" if explorer.ops else ""
    return f"Explorer({layout_line(explorer.layout)}{ops})"
