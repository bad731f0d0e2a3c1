"""A text box Python hears from only when Enter (or leaving it) applies its text.

Panel's ``TextInput`` sends its text after every key (``value_input``): in a
notebook Panel's comm sends every change of a model's synced property, so each
key was a kernel message, and an explorer shown in two outputs had each key
copied into the other output's box, which sent it back (characters lost, stale
text swapped for seconds). Served, each key was a message and a few
milliseconds of the server's time. An :class:`EnterBox` is the explorer's own
component (Panel's public ``JSComponent``, ``enter_box.mjs``): what is typed
stays in the page's ``<input>``; Enter, or leaving the box with its text
changed, sets ``value`` and then sends a small event, on which Panel handles the
change outside Bokeh's document lock (so what it causes goes back as one message
on Panel 1.10 too, see ``enter_box.mjs``). A ``value`` set from Python is shown
in every output of the box.

``disabled`` greys it out; ``note`` is what it says (as its tooltip) when
disabled, e.g. why nothing can be typed there. Where no Python is behind the page (a
notebook's output exported by nbconvert, or shown without its kernel: Panel found no
comm to a kernel for it) every box is greyed out, and a box with an ``offline_note``
shows it under itself, so a person sees why typing does nothing.
"""

from __future__ import annotations

from pathlib import Path

import param
from panel.custom import JSComponent

from .shipped import shipped

#: The CSS class every box carries (tests and stylesheets find the boxes by it).
ENTER_BOX_CLASS = "candela-enter-box"

#: The box's own look. The input's rules name its class: Bokeh's ``.bk-input`` rule (its
#: light theme's text colour) outranked a bare ``input`` and drew dark text on the dark box.
BOX_CSS = """
:host { display: block; }
label { display: flex; flex-direction: column; gap: 3px; margin: 0; }
.candela-box-label { font-size: 13px; color: var(--candela-fg, #1a1a1a); white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }
input.candela-box-input { font: inherit; font-size: 14px; height: 31px; width: 100%; box-sizing: border-box;
  padding: 0 8px; border: 1px solid var(--candela-border, #999999); border-radius: 4px;
  background: var(--candela-bg, #ffffff); color: var(--candela-fg, #1a1a1a); }
input::placeholder { color: var(--candela-muted, #444444); font-style: italic; opacity: 0.8; }
.candela-no-python-note { font-size: 13px; color: var(--candela-warn, #8a4b00); margin-top: 3px; }
input.candela-box-input:disabled { background: var(--candela-code-bg, #f3f3f3); color: var(--candela-fg, #1a1a1a);
  cursor: not-allowed; }
"""


class EnterBox(JSComponent):
    """A labelled text box; its ``value`` changes on Enter or when it is left (see the module)."""

    value = param.String(default="", allow_None=True, doc="The text applied (on Enter).")
    label = param.String(default="", doc="The words above the box.")
    placeholder = param.String(default="", doc="Shown in the empty box.")
    disabled = param.Boolean(default=False, doc="Greyed out: nothing can be typed.")
    note = param.String(default="", doc="Said (as a tooltip) while the box is disabled.")
    offline_note = param.String(
        default="",
        doc="Shown under the box where no Python is behind the page (an nbconvert HTML "
        "export of a notebook, a notebook viewed without its kernel): the box is greyed out.",
    )

    _esm = shipped(Path(__file__).with_name("enter_box.mjs"))
    #: Panel's 50 ms wait for more changes of a component is kept: the event the box sends
    #: right after its ``value`` (``enter_box.mjs``) comes within it, and has Panel handle
    #: the change at once, outside Bokeh's document lock (see there).
    #: Nor is a box's change Panel's busy work (``pn.state.busy``, process-wide, updated
    #: for every change from a page): the explorer shows no busy indicator.
    _busy__ignore = ["value"]
    _stylesheets = [BOX_CSS]

    def __init__(self, **params) -> None:
        params["css_classes"] = [*params.get("css_classes", []), ENTER_BOX_CLASS]
        params.setdefault("margin", (5, 10))
        super().__init__(**params)
