"""The browser patches: Bokeh's and Panel's prototypes, changed for the explorer's models only.

Each ``.mjs`` file here defines one function ``name(Bokeh)`` that installs its
change once per browser page; the explorer's keyboard component
(:class:`explorer.keys.Keys`) carries them in its module
(:func:`explorer.patches.browser_module`) and its ``render()`` calls each: a
component of their own would cost every session two Bokeh models more. A patch
left off is an empty function there. Each acts only on models carrying the
explorer's tag or CSS class, so other Bokeh plots and Panel widgets on a notebook
page behave as Bokeh and Panel made them. The Python side sends a script only on the
releases it was checked against; in the page, each also checks that every method it
replaces is there, and if one is missing leaves the framework alone and logs one
console line ("candela: patch NAME left off: ...").

- ``steady`` (``steady.mjs``): a tagged figure (:data:`explorer.painting.STEADY_TAG`)
  repaints only when its size, frame or data changed, and never reads the page's
  computed style for CSS variables nobody sets.
- ``cells`` (``cells.mjs``): a tagged rectangle glyph (:data:`explorer.painting.CELLS_TAG`)
  is painted with one path and one fill per colour.
- ``notebook_comm`` (``notebook_comm.mjs``): in a notebook, a change Panel's comm held
  more than a second for the kernel's acknowledgement is sent on.
- ``keep_href`` (``keep_href.mjs``): on a served page whose explorer follows the
  history, Panel's Location keeps its new ``href`` in the page instead of sending it
  back to the server that wrote it. Its entry function returns the function to apply to
  a document (nothing when the patch is off).
- ``release_listeners`` (``release_listeners.mjs``): an explorer's view that is removed
  (a notebook output cleared) removes the listeners BokehJS added for it to the page's
  window, document and visual viewport, which otherwise keep its whole document alive;
  an output's removed root also takes its Panel CommManager out of ``PyViz.shared_views``.
"""

from __future__ import annotations

from . import Patch, apply, register

__all__ = ["BROWSER_PATCHES", "browser_patches"]

#: The browser patches, in the order the keyboard component's module holds them.
BROWSER_PATCHES = (
    "steady",
    "cells",
    "notebook_comm",
    "keep_href",
    "release_listeners",
)


def browser_patches() -> None:
    """Install the browser patches that may be (one call per entry point: the server, a
    notebook); the module of the component that carries them (:mod:`explorer.keys`, which
    declares it with :func:`~explorer.patches.give`) is then made again."""
    for name in BROWSER_PATCHES:
        apply(name)


#: BokehJS is Bokeh's Python package's own version; Panel's models come with Panel.
CHECKED = {"bokeh": "3.9", "panel": "1.9"}

register(
    Patch(
        name="steady",
        changes="BokehJS PlotView.prototype: invalidate_layout, _after_layout, _update_layout; "
        "VisualProperties.prototype._get_css_value (for tagged plots)",
        why="Bokeh repaints every plot in full on any layout of the page, and reads the "
        "computed style (a style recalculation of the page) on every layout and paint",
        buys="no repaint of both figures for a click elsewhere; ~20 ms of style "
        "recalculation an edit",
        checked=CHECKED,
        script="steady.mjs",
        entry="steady",
    )
)

register(
    Patch(
        name="cells",
        changes="BokehJS RectView.prototype._paint (for tagged glyphs drawn plainly)",
        why="Bokeh paints a rectangle glyph one rectangle at a time: a path, a parsed CSS "
        "colour and a fill each",
        buys="most of a figure's repaint at 4,096 cells",
        checked=CHECKED,
        script="cells.mjs",
        entry="cells",
    )
)

register(
    Patch(
        name="notebook_comm",
        changes="Panel's CommManager.prototype._document_changed (in a notebook)",
        why="in JupyterLab an acknowledgement of a message sent while Run All ran sometimes "
        "never came, and the changes Panel's comm held stayed unsent",
        buys="an edit typed while Run All runs reaches the kernel (a fix)",
        checked={"panel": "1.9"},
        script="notebook_comm.mjs",
        entry="notebookComm",
        upstream="JupyterLab: Run All on a notebook that displays a Panel TextInput and whose "
        "last cell runs for seconds; type into the box and press Enter meanwhile: sometimes "
        "the change stays in the page until the next one (the CommManager waits for an "
        "acknowledgement that never comes); tests/explorer/test_jupyterlab.py shows it "
        "with the patch off",
    )
)

register(
    Patch(
        name="keep_href",
        changes="the href property of Panel's Location model (on the instance, in the page), "
        "where the explorer's keyboard component follows the history: set without syncing",
        why="Panel's Location sends the server the whole new URL after the server itself "
        "wrote it: a message for a value nothing on the server reads",
        buys="one message an edit instead of two; 5-10 ms of the server's time an edit",
        checked=CHECKED,
        script="keep_href.mjs",
        entry="keepHref",
    )
)

register(
    Patch(
        name="release_listeners",
        changes="BokehJS PlotView.prototype.connect_signals, "
        "InputWidgetView.prototype._build_description_el (their listeners on the window, "
        "document and visualViewport written down, for an explorer's views) and "
        "View.prototype.remove (removes those; for an output's root, its document's Panel "
        "CommManager leaves window.PyViz.shared_views and drops its buffered changes)",
        why="BokehJS never removes a plot's visualViewport resize listener nor a described "
        "widget's document mousedown and window blur listeners, and Panel keeps every "
        "output's CommManager in PyViz.shared_views: a cleared notebook output's views, "
        "models and document stay in the page's memory",
        buys="a re-run notebook cell showing an explorer leaves the page's JavaScript heap "
        "flat instead of ~2 MB more a run",
        checked=CHECKED,
        script="release_listeners.mjs",
        entry="releaseListeners",
        upstream="BokehJS 3.9: show a figure, then remove its view (Bokeh.index[id].remove(), "
        "or clear a notebook output); visualViewport still has the PlotView's resize listener "
        "(DevTools getEventListeners(visualViewport)) and a heap snapshot keeps the view, its "
        "model and document. The same for a TextInput with a description: document "
        "mousedown and window blur listeners, one pair more at each render. Panel 1.9: "
        "comm_manager.ts adds each CommManager to PyViz.shared_views and never removes it",
    )
)
