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

That is a patch of Panel's internals (:mod:`explorer.patches.quick_updates`), which
gives these classes their methods when an entry point installs it (the server, a
notebook): until then, and off (``CANDELA_PLAIN``, another Panel), these are Panel's
components as they are.

The explorer's panes whose object changes (:class:`QuickHTML`, :class:`InlineMarkdown`)
keep their stylesheets inline when redrawn in a notebook
(:mod:`explorer.patches.inline_panes`, installed by the notebook's entry point); other
Panel panes are left as Panel made them.
"""

from __future__ import annotations

import panel as pn

from .patches import give
from .patches.inline_panes import inline_on_redraw
from .patches.quick_updates import quick_html, quick_properties

__all__ = ["InlineMarkdown", "QuickHTML", "QuickSelect"]


class QuickHTML(pn.pane.HTML):
    """Panel's ``HTML`` pane; a new ``object`` updates the model's text and nothing else."""


class QuickSelect(pn.widgets.Select):
    """Panel's ``Select``, quick to change (see the module)."""


class InlineMarkdown(pn.pane.Markdown):
    """Panel's ``Markdown`` pane, its stylesheets kept inline when redrawn in a notebook."""


# What the patches change of these classes once an entry point installs them.
give("quick_updates", QuickHTML, "_update_properties", quick_properties)
give("quick_updates", QuickHTML, "_update", quick_html)
give("quick_updates", QuickSelect, "_update_properties", quick_properties)
give("inline_panes", QuickHTML, "_update_object", inline_on_redraw)
give("inline_panes", InlineMarkdown, "_update_object", inline_on_redraw)
