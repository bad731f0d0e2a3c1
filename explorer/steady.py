"""Figures that repaint only when what they show changes (``steady.mjs`` in the browser).

Bokeh repaints every plot of a page in full whenever any part of the page is
laid out again; ``steady.mjs`` keeps that to the plots whose size, frame or
data really changed, for figures that carry :data:`TAG`. The script
(:data:`STEADY_JS`) runs as part of the explorer's keyboard component
(:class:`explorer.keys.Keys`), on every page an explorer is drawn on: a
component of its own would cost every session two Bokeh models more.
"""

from __future__ import annotations

from pathlib import Path

#: The tag a figure carries to be repainted only when it changes.
TAG = "candela-steady"
#: Defines ``steady(Bokeh)``, which installs the rule once per browser page.
STEADY_JS = Path(__file__).with_name("steady.mjs")
