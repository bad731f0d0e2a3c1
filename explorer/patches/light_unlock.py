"""Panel unlocks only a widget's locked parameters to apply a change from its page.

Patch ``light_unlock``: ``panel.reactive.edit_readonly`` (see :func:`light_unlock`).
"""

from __future__ import annotations

from . import Patch, apply, register

__all__ = ["light_unlock"]


def light_unlock() -> bool:
    """Panel unlocks only a widget's locked parameters to apply a change from its page.

    For every change a page sends, Panel makes each of the widget's parameters
    writable and then puts each back (``edit_readonly``): 28 parameters of a
    text box, each set four times, 0.4 ms of every message, to unlock none (the
    explorer's boxes have no locked parameter). Only those locked (read-only or
    constant) are unlocked and put back now, as before. ``edit_readonly`` is
    looked up in ``panel.reactive`` by name; if it moves, Panel's own is used.
    """
    return apply("light_unlock")


def _install() -> None:
    import contextlib

    from panel import reactive

    if getattr(reactive.edit_readonly, "_candela", False):
        return

    @contextlib.contextmanager
    def edit_readonly(parameterized):
        locked = [
            (p, p.readonly, p.constant)
            for p in parameterized.param.objects("existing").values()
            if p.readonly or p.constant
        ]
        for p, _, _ in locked:
            p.readonly = p.constant = False
        try:
            yield
        finally:
            for p, readonly, constant in locked:
                p.readonly, p.constant = readonly, constant

    edit_readonly._candela = True
    reactive.edit_readonly = edit_readonly


register(
    Patch(
        name="light_unlock",
        changes="panel.reactive.edit_readonly (the name panel.reactive looks up): "
        "unlocks only the read-only or constant parameters",
        why="for every change a page sends, Panel unlocked and locked again all of a "
        "widget's parameters (28 of a text box, each set four times)",
        buys="0.4 ms of every message from a page",
        checked={"panel": "1.9"},
        needs=("panel.reactive:edit_readonly",),
        install=_install,
    )
)
