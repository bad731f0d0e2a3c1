"""The explorer's panes and widgets send a change without working out their theme again.

Patch ``quick_updates``, for the explorer's own components only (the methods it gives
:mod:`explorer.quick`'s classes when installed; until then, and off, they are Panel's
own classes as they are): Panel answers every
changed parameter of a widget or pane by asking its design (theme) for all of
the component's styling first, and a pane's new ``object`` by working out every
property of its model again (stylesheets, sizes, classes), new Bokeh stylesheet
models included, to find them all unchanged: ~1 ms for each widget an edit
changes and 2.4 ms for each HTML pane, against 0.02 ms for setting the model's
property. Here a changed parameter is sent as Panel would send it without the
theme's styling (which Panel uses only when the stylesheets change: those still
go through Panel), and an HTML pane's new ``object`` sets its model's text
(escaped exactly as Panel does) and nothing else. Off, they are Panel's own.

Off, in a notebook, the first pane Panel redraws makes a new stylesheet model
(``loading.css``, under another URL than the one drawn first) that the panes redrawn
after it refer to. That is safe because the explorer sends an output its changes in the
order they were made (:func:`explorer.notebook.one_message`): Panel's separate messages
could arrive out of order, and Bokeh refused one referring to a model not yet received.
"""

from __future__ import annotations

from . import Patch, apply, is_on, register

__all__ = ["quick_html", "quick_properties", "quick_updates"]


def quick_updates() -> bool:
    """Install the patch (see the module), if it may be: one call per entry point."""
    return apply("quick_updates")


def quick_properties(cls: type):
    """``cls._update_properties``: a changed parameter reaches the model without the theme."""

    def _update_properties(self, *events, doc):
        if not is_on("quick_updates") or any(event.name == "stylesheets" for event in events):
            return super(cls, self)._update_properties(*events, doc=doc)
        return self._process_param_change({event.name: event.new for event in events})

    return _update_properties


def quick_html(cls: type):
    """``cls._update`` (an HTML pane): a new ``object`` updates the model's text alone."""

    def _update(self, ref: str, model) -> None:
        if not is_on("quick_updates"):
            return super(cls, self)._update(ref, model)
        model.update(**self._process_param_change({"object": self.object}))

    return _update


register(
    Patch(
        name="quick_updates",
        changes="_update_properties of the explorer's components and _update of its HTML "
        "panes (given to explorer.quick's classes): the change alone, without the theme's styling",
        why="Panel works out a component's whole styling for every changed parameter",
        buys="~1 ms for each widget and 2.4 ms for each HTML pane an edit changes, of the "
        "server's ~10 ms an edit",
        checked={"panel": "1.9"},
        needs=(
            "panel.reactive:Syncable._update_properties",
            "panel.reactive:Syncable._process_param_change",
            "panel.pane.markup:HTMLBasePane._update",
        ),
    )
)
