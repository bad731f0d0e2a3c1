"""In Notebook 7, Panel's load takes Bokeh and Panel from the Jupyter server, as in JupyterLab.

Patch ``notebook7_resources`` (a Panel bug worked around), for the load the explorer
makes (:func:`explorer.notebook.ensure_extension`): Panel 1.10's notebook load script
takes its bundles from Panel's Jupyter server extension (``/panel-preview/``) only in
what it counts as a live notebook, a page with ``Jupyter.notebook`` (the classic
notebook) or a ``.jp-LabShell`` element (JupyterLab). Notebook 7 has neither, so
there every bundle is fetched from cdn.bokeh.org and cdn.holoviz.org instead: with
no network (a classroom behind a firewall, a train) no explorer is ever drawn, and
the page shows only the still pictures.

Here the script also counts a page that has Jupyter's own configuration element
(``#jupyter-config-data``, which JupyterLab and Notebook 7 serve and nbconvert's
static pages do not) as a live notebook. Off, Notebook 7 loads from the CDN, as
Panel makes it; a script of another shape is left as it is.

Reproduction (for upstream): Panel 1.10 in the Jupyter server's environment; open a
notebook in Notebook 7 (``/notebooks/…``), cut the network, run ``import panel as pn;
pn.extension(); pn.pane.Markdown("x")``: the page asks cdn.bokeh.org for
``bokeh-3.10.*.min.js`` and nothing is drawn; the same in JupyterLab asks
``/panel-preview/static/…`` and draws.
"""

from __future__ import annotations

from . import Patch, apply, left_off, register

__all__ = ["LIVE_TEST", "live_in_notebook7"]

#: How Panel 1.10's load script tells a live notebook page...
LIVE_TEST = "document.querySelector('.jp-LabShell') != null"
#: ... and how it tells it here: JupyterLab's shell, or Jupyter's configuration element.
LIVE_TEST_HERE = "document.querySelector('.jp-LabShell, #jupyter-config-data') != null"


def live_in_notebook7(js: str) -> str:
    """Panel's notebook load script ``js``, counting Notebook 7 as a live notebook (if the
    patch is on and the script has the test it was checked against once)."""
    if "__panel_live_notebook__" not in js or not apply("notebook7_resources"):
        return js  # a Panel whose load tells no live page from a static one (1.9)
    if js.count(LIVE_TEST) != 1:
        left_off("notebook7_resources", "Panel's load script tells a live notebook otherwise")
        return js
    return js.replace(LIVE_TEST, LIVE_TEST_HERE)


register(
    Patch(
        name="notebook7_resources",
        changes="the text of Panel's notebook load script (the explorer's own load): "
        "its test for a live notebook page also knows Notebook 7",
        why="Panel 1.10 takes Notebook 7 for a static page and loads every bundle from "
        "its CDN: offline, no explorer is drawn there",
        buys="explorers drawn in Notebook 7 with no network, and with one, no 3 MB "
        "fetched from a CDN (a fix)",
        checked={"panel": "1.10"},
        needs=("panel.io.notebook:load_notebook",),  # the script it makes
        upstream="open a notebook in Notebook 7 with Panel 1.10, cut the network, "
        "pn.extension(); pn.pane.Markdown('x'): the page asks cdn.bokeh.org for "
        "BokehJS and draws nothing (module docstring)",
    )
)
