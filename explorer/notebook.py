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
environment turns that off (smaller notebooks, but a network is needed), and so
does ``CANDELA_PLAIN=1`` (Panel's inline mode needs a patch for panes redrawn from
the kernel). Once
an explorer has been displayed, the kernel's other Panel outputs are inlined
too: the setting, and the fix for panes redrawn from the kernel
(:mod:`explorer.patches.inline_panes`), are Panel's, for the whole kernel.
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

    from .patches.inline_panes import inline_pane_updates

    if not in_notebook():
        return
    page = _page()
    if panel_extension._loaded and page in _pages:
        return
    # Bokeh and Panel's JavaScript go into the output itself, not a CDN link, and
    # stylesheets of models the kernel sends later are inlined too (Panel reads
    # the flag at every update). An explicit PANEL_INLINE still wins. Panel 1.9's
    # inline mode needs the fix for redrawn panes (explorer.patches.inline_panes): without
    # it a redrawn pane refers the page to stylesheets it was never sent, and the page
    # stops taking the kernel's changes. With the patch off, Panel's links stay.
    if inline_pane_updates() and "PANEL_INLINE" not in os.environ:
        pn.config.inline = True
    pn.extension()
    _pages.add(page)


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
