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

The explorer's panes whose object changes (:class:`QuickHTML`, :class:`InlineMarkdown`)
keep their stylesheets inline when redrawn in a notebook
(:mod:`explorer.patches.inline_panes`); other Panel panes are left as Panel made them.
"""

from __future__ import annotations

import panel as pn

from .patches.inline_panes import InlineOnRedraw

__all__ = ["InlineMarkdown", "Quick", "QuickHTML", "QuickSelect"]


class Quick:
    """Mixin for a Panel component: changes reach its model without the theme's styling."""

    def _update_properties(self, *events, doc):
        if any(event.name == "stylesheets" for event in events):
            return super()._update_properties(*events, doc=doc)
        return self._process_param_change({event.name: event.new for event in events})


class QuickHTML(InlineOnRedraw, Quick, pn.pane.HTML):
    """Panel's ``HTML`` pane; a new ``object`` updates the model's text and nothing else."""

    def _update(self, ref: str, model) -> None:
        model.update(**self._process_param_change({"object": self.object}))


class QuickSelect(Quick, pn.widgets.Select):
    """Panel's ``Select``, quick to change (see the module)."""


class InlineMarkdown(InlineOnRedraw, pn.pane.Markdown):
    """Panel's ``Markdown`` pane, its stylesheets kept inline when redrawn in a notebook."""
