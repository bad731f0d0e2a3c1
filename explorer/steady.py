"""Figures that repaint only when what they show changes (``steady.mjs`` in the browser).

Bokeh repaints every plot of a page in full whenever any part of the page is
laid out again; :class:`Steady` keeps that to the plots whose size, frame or
data really changed. Put one anywhere on a page whose figures carry
:data:`TAG`. It draws nothing.
"""

from __future__ import annotations

from pathlib import Path

from panel.custom import JSComponent

#: The tag a figure carries to be repainted only when it changes.
TAG = "candela-steady"


class Steady(JSComponent):
    """Installs ``steady.mjs`` once per browser page; shows nothing."""

    _esm = Path(__file__).with_name("steady.mjs")

    def __init__(self, **params) -> None:
        params.setdefault("width", 0)
        params.setdefault("height", 0)
        params.setdefault("margin", 0)
        super().__init__(**params)
