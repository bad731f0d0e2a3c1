"""How the figures paint in the browser: only when they change, and their cells quickly.

Two scripts patch Bokeh's painting (:mod:`explorer.patches.browser`), each only for the explorer's own models (by a
tag), so other Bokeh plots on a notebook page paint as Bokeh made them:

- ``patches/steady.mjs``: Bokeh repaints every plot of a page in full whenever any part of
  the page is laid out again; figures tagged :data:`STEADY_TAG` repaint only when
  their size, frame or data really changed, and their layout and paint never read
  the page's computed style for CSS variables nobody sets (each read forced a style
  recalculation of the whole page after an edit).
- ``patches/cells.mjs``: Bokeh paints a rectangle glyph one rectangle at a time (a path, a
  CSS colour and a fill each); glyphs tagged :data:`CELLS_TAG` are painted with one
  path and one fill per colour, the same pixels but for a shade at some cells' edges.

Both run as part of the explorer's keyboard component (:class:`explorer.keys.Keys`),
on every page an explorer is drawn on: a component of their own would cost every
session two Bokeh models more.
"""

from __future__ import annotations

#: The tag a figure carries to be repainted only when it changes (``patches/steady.mjs``).
STEADY_TAG = "candela-steady"
#: The tag a cells glyph carries to be painted one fill per colour (``patches/cells.mjs``).
CELLS_TAG = "candela-cells"

#: Bokeh's bundles a page of the explorer never uses: its figures draw on a canvas, not
#: with WebGL. A served page leaves them out (``serving.lean_resources``), and so does a
#: notebook's Panel load (``notebook.without_bundles``).
UNUSED_BUNDLES = ("bokeh-gl",)
