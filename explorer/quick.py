"""Panel components that send a change without working out their theme again.

Panel answers every changed parameter of a widget or pane by asking its design
(theme) for all of the component's styling first, and a pane's new ``object`` by
working out every property of its model again (stylesheets, sizes, classes),
new Bokeh stylesheet models included, to find them all unchanged. On this
machine that was ~1 ms for each widget an edit changes and 2.4 ms for each HTML
pane, against 0.02 ms for setting the model's property itself: most of the
server's time for an edit that changes a step list and two panes. The
components here send the change alone and are otherwise Panel's own:

- :class:`Quick`: a changed parameter is sent as Panel would send it, without
  the theme's styling, which Panel uses only when the stylesheets change (they
  still go through Panel as before);
- :class:`QuickHTML`: Panel's HTML pane; a new ``object`` sets its model's text
  (escaped exactly as Panel does) and nothing else;
- :class:`QuickSelect`: Panel's select (the step list).

That is a patch of Panel's internals (:mod:`explorer.patches.quick_updates`): off
(``CANDELA_PLAIN``, another Panel), these are Panel's components as they are.

The explorer's panes whose object changes (:class:`QuickHTML`, :class:`InlineMarkdown`)
keep their stylesheets inline when redrawn in a notebook
(:mod:`explorer.patches.inline_panes`); other Panel panes are left as Panel made them.
"""

from __future__ import annotations

import panel as pn

from .patches.inline_panes import InlineOnRedraw
from .patches.quick_updates import QuickHTMLUpdates, quick_updates
from .patches.quick_updates import QuickUpdates as Quick

__all__ = ["InlineMarkdown", "Quick", "QuickHTML", "QuickSelect"]

quick_updates()  # on, unless CANDELA_PLAIN or another Panel says otherwise


class QuickHTML(InlineOnRedraw, QuickHTMLUpdates, pn.pane.HTML):
    """Panel's ``HTML`` pane; a new ``object`` updates the model's text and nothing else."""


class QuickSelect(Quick, pn.widgets.Select):
    """Panel's ``Select``, quick to change (see the module)."""


class InlineMarkdown(InlineOnRedraw, pn.pane.Markdown):
    """Panel's ``Markdown`` pane, its stylesheets kept inline when redrawn in a notebook."""
