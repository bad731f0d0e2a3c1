"""How the figures paint in the browser: only when they change, and their cells quickly.

Two scripts patch Bokeh's painting, each only for the explorer's own models (by a
tag), so other Bokeh plots on a notebook page paint as Bokeh made them:

- ``steady.mjs``: Bokeh repaints every plot of a page in full whenever any part of
  the page is laid out again; figures tagged :data:`STEADY_TAG` repaint only when
  their size, frame or data really changed, and their layout and paint never read
  the page's computed style for CSS variables nobody sets (each read forced a style
  recalculation of the whole page after an edit).
- ``cells.mjs``: Bokeh paints a rectangle glyph one rectangle at a time (a path, a
  CSS colour and a fill each); glyphs tagged :data:`CELLS_TAG` are painted with one
  path and one fill per colour, the same pixels but for a shade at some cells' edges.

Both run as part of the explorer's keyboard component (:class:`explorer.keys.Keys`),
on every page an explorer is drawn on: a component of their own would cost every
session two Bokeh models more.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
#: The tag a figure carries to be repainted only when it changes.
STEADY_TAG = "candela-steady"
#: Defines ``steady(Bokeh)``, which installs the rule once per browser page.
STEADY_JS = HERE / "steady.mjs"
#: The tag a cells glyph carries to be painted one fill per colour.
CELLS_TAG = "candela-cells"
#: Defines ``cells(Bokeh)``, which installs the painter once per browser page.
CELLS_JS = HERE / "cells.mjs"
#: Both, as the first part of the keyboard component's module.
PAINTING_JS = "\n".join(p.read_text(encoding="utf-8") for p in (STEADY_JS, CELLS_JS))
