"""A change from a page is handled at once.

Patch ``no_debounce``, for a served page (in a notebook Panel does not wait): Panel
waits a widget's ``_debounce`` (50 ms) before handling the first change a page sends,
so that a burst (a slider dragged) is handled once. A text box, a list or a checkbox
sends one change per action: for them the wait was a fixed 50 ms on every edit. The
slider keeps it. Panel has no public setting.

(A second patch here, ``answer_at_once``, waited for the socket's write lock before
handling a change; once Bokeh's replies went out in one write
(:mod:`explorer.patches.one_write`) it bought nothing measurable, and went.)
"""

from __future__ import annotations

from . import Patch, apply, register

__all__ = ["immediate_changes"]


def immediate_changes() -> None:
    """In a served page, a change from the browser to a text box, list or checkbox is handled
    at once, not after Panel's 50 ms wait for more.

    Panel waits ``_debounce`` ms before handling the first change a page sends
    for a widget, so that a burst (a slider dragged) is handled once. These
    widgets send one change per action (Enter in a box, a choice in a list, a
    click), so the wait was a fixed 50 ms on every edit. The slider keeps it.
    Panel has no public setting for it; in a notebook Panel does not wait.
    """
    apply("no_debounce")


#: The widgets that send one change per action, by name in ``panel.widgets``.
WIDGETS = ("TextInput", "Select", "RadioButtonGroup", "Checkbox")


def _no_debounce() -> None:
    import panel as pn

    for name in WIDGETS:
        getattr(pn.widgets, name)._debounce = 0


register(
    Patch(
        name="no_debounce",
        changes="_debounce = 0 on panel.widgets." + ", ".join(WIDGETS),
        why="Panel waits 50 ms for more changes; these widgets send one per action",
        buys="50 ms of every edit made in a box, a list or a checkbox",
        checked={"panel": "1.9"},
        needs=tuple(f"panel.widgets:{name}._debounce" for name in WIDGETS),
        install=_no_debounce,
    )
)
