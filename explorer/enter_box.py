"""A text box the server hears from only when Enter (or leaving it) applies its text.

Panel's text box sends the server its text after every key (``value_input``) and,
on Enter, an event of its own, each a message and a few milliseconds of the
server's time: typing ``.transpose()`` and pressing Enter was 14 messages, more
of the server's time than the edit itself, and a class of 30 typing at once
queued them all. The explorer's boxes act on their ``value`` alone, which the box
sends on Enter or when it loses the focus. An :class:`EnterBox` is Panel's
``TextInput`` that

- keeps what is typed in the page (``patches/enter_box.mjs``, by :data:`ENTER_BOX_CLASS`;
  its ``value_input`` is not kept up to date on the server);
- does not ask for the Enter event when served: the page applies the text on Enter
  itself, also where a notebook takes Enter's keydown (and the box's change event) for
  its own. In a notebook it asks for it too: there a box can be typed into before the
  page's rule has loaded;
- is not counted as Panel's busy work (``pn.state.busy``, process-wide parameters
  updated for every change from a page): the explorer shows no busy indicator.
"""

from __future__ import annotations

import panel as pn

from .quick import Quick

#: The CSS class that keeps a box's typing in the page.
ENTER_BOX_CLASS = "candela-enter-box"


class EnterBox(Quick, pn.widgets.TextInput):
    """Panel's ``TextInput``, heard from on Enter or leaving it (see the module)."""

    _busy__ignore = ["value", "value_input"]

    def __init__(self, **params) -> None:
        params["css_classes"] = [*params.get("css_classes", []), ENTER_BOX_CLASS]
        super().__init__(**params)

    def _get_model(self, doc, root=None, parent=None, comm=None):
        if comm is not None:
            # A notebook takes Enter's keydown, so the box's change event does not come,
            # and the page's Enter rule is loaded with the explorer's scripts, seconds
            # after the boxes are drawn: until then Enter only works through the Enter
            # event. One message more an Enter, in a notebook with one user.
            return super()._get_model(doc, root, parent, comm)
        # TextInput's own adds its Enter event to the model its base class builds.
        return super(pn.widgets.TextInput, self)._get_model(doc, root, parent, comm)
