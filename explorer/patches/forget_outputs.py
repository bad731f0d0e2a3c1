"""In a notebook, the explorer outputs of a cell run again are let go: views, comms, documents.

Patch ``forget_outputs`` (a pyviz_comms bug worked around): Panel drops an
output's view, its comms and its document when the page reports that the output
is gone, through pyviz_comms' JupyterLab extension. In JupyterLab 4 and Notebook
7 that extension (as shipped with pyviz_comms 3.0.6) never opens the comm it would
report on, so Panel kept every output's view and redrew it at every change from
Python, and the kernel kept its memory. The kernel does know when a cell runs
again, and that the front end clears that cell's outputs then:
:mod:`explorer.notebook` remembers which explorer outputs each cell showed and,
before the cell runs again, calls :func:`forget_output` for each. That removes the
output from Panel's records of notebook views (``state._views``, ``_handles``), runs
Panel's own cleanup of the view (and of its one ``Location``), closes its comms and
takes them out of pyviz_comms' registry of every comm (where each held its output's
whole view through its message handler), and clears its document.

Only the explorer's own outputs are let go: another Panel output of the kernel is
left as Panel keeps it. Off (``CANDELA_PLAIN``, another Panel or pyviz_comms, a name
gone), a re-run cell's explorers stay in the kernel as Panel keeps any output.

What it buys: over 20 re-runs of cells showing explorers, Panel's views and the
kernel's comms stay as many as the outputs on the page, and a change from Python
redraws only those; with IPython's output history slimmed and freed memory handed
back (:mod:`explorer.notebook`), the kernel grows about 0.16 MB a re-run, not 1.5 MB
(``tests/explorer/test_jupyterlab_cells.py::
test_rerunning_an_explorer_cell_drops_the_views_that_are_gone``).

Reproduction (for upstream): in JupyterLab 4.6 with pyviz_comms 3.0.6, run a cell
holding ``import panel as pn; pn.extension()``, then a cell ``pn.pane.Markdown("a")``
five times; then ``from panel.io.state import state; len(state._views)`` counts every
output shown (and ``pyviz_comms.JupyterCommManager._comms`` holds their comms), though
the page shows one: as seen with the explorer's outputs, which take Panel's path.
"""

from __future__ import annotations

from . import Patch, apply, register

__all__ = ["forget_output", "forget_outputs"]


def forget_outputs() -> bool:
    """Whether the patch is on (applied once, if it may be)."""
    return apply("forget_outputs")


def forget_output(ref: str) -> bool:
    """Drop the Panel output whose root model is ``ref``: its view, its comms, its document.

    False (and nothing changed) when the patch is off or Panel holds no view ``ref``.
    """
    if not forget_outputs():
        return False
    from panel.io.state import state

    entry = state._views.pop(ref, None)
    state._handles.pop(ref, None)
    if entry is None:
        return False
    viewable, model, doc, _ = entry
    # Panel's own cleanup closes these but leaves them in pyviz_comms' registry of every
    # comm, and there each holds its output's whole view through its message handler.
    comms = getattr(viewable, "_comms", {}).get(ref, ())
    try:
        viewable._cleanup(model)
        if state._location is not None:  # Panel's one Location keeps every output's root
            state._location._cleanup(model)
    except Exception:  # never break the user's cell over a view that is gone anyway
        pass
    for comm in comms:
        if comm is not None:
            _close(comm)
    try:
        doc.clear()
    except Exception:
        pass
    return True


def _close(comm) -> None:
    """Close one of Panel's comms, kernel side, and forget it everywhere it is kept."""
    from pyviz_comms import JupyterCommManager

    JupyterCommManager._comms.pop(comm.id, None)
    try:
        manager = getattr(comm, "manager", None)  # a client comm's target, opened or not
        if manager is not None:
            manager.targets.pop(comm.id, None)
        if getattr(comm, "_comm", None) is not None:
            if not getattr(comm._comm, "_closed", True):
                comm._comm.close()
            comm._comm = None
    except Exception:
        pass


register(
    Patch(
        name="forget_outputs",
        changes="Panel's records of notebook views (panel.io.state.state._views, _handles) and "
        "pyviz_comms' registry of comms (JupyterCommManager._comms): the explorer outputs "
        "of a cell run again are removed from them, their views cleaned up, comms closed",
        why="pyviz_comms 3.0.6's JupyterLab extension never tells Panel an output is gone, "
        "so Panel kept and redrew every explorer a re-run cell had shown",
        buys="Panel's views and the kernel's comms stay as many as the outputs on the page "
        "over 20 re-runs of explorer cells; a change from Python redraws only those (a fix)",
        checked={"panel": "1.9", "pyviz_comms": "3.0"},
        needs=(
            "panel.io.state:_state._views",
            "panel.io.state:_state._handles",
            "panel.io.state:_state._location",
            "panel.viewable:Viewable._cleanup",
            "pyviz_comms:JupyterCommManager._comms",
        ),
        upstream="JupyterLab 4.6, pyviz_comms 3.0.6: run a cell pn.pane.Markdown('a') five "
        "times; panel.io.state.state._views keeps every output though the page shows one "
        "(module docstring)",
    )
)
