"""In a notebook page, the JavaScript an explorer's output carries runs once, not at every re-run.

Patch ``load_once`` (memory), for the loads the explorer itself makes
(:func:`explorer.notebook.ensure_extension`, inside :func:`loading_once`): Panel 1.9's
inline notebook load (``panel.io.notebook.load_notebook``, its
``autoload_panel_js.js``) evaluates the whole of BokehJS and Panel's JavaScript
(2.8 MB of source) every time its output is drawn, even in a page that already runs
that very bundle. The explorer sends that output again whenever the cell that carried
it runs again (so a notebook saved then still reopens drawn), and each evaluation left
a whole second copy of BokehJS and Panel alive in the page: the bundle's globals
(flatpickr's ``Date.prototype.fp_incr``, a ``MessageChannel`` handler) keep every
function of it, and its ~3 MB of source and compiled code, for the page's life.

Here the output's script runs the bundle only where the page has not run the same
bundle (by a digest of its text) before; it marks the page once it did. Reopened or in
a new page it runs as before. Other Panel outputs load as Panel makes them. Off, every
load of the explorer's runs the whole bundle again.

Reproduction (for upstream): in JupyterLab, ``pn.extension(inline=True)`` in a cell,
run it 5 times, force a garbage collection and take a heap snapshot: five
``system / Script`` objects of the 2.8 MB load script stay alive.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import threading

from . import Patch, apply, is_on, left_off, register

__all__ = ["loading_once"]

#: Panel 1.9's ``run_inline_js``: the line that evaluates the bundle's inline scripts...
RUN_LINE = "    if ((root.Bokeh !== undefined) || (force === true)) {\n"
#: ... and the end of that ``if``, before the function's last statement.
END_LINE = "    }\n    root._bokeh_is_initializing = false;\n  }\n"

_local = threading.local()


@contextlib.contextmanager
def loading_once():
    """Within, a Panel notebook load runs its bundle once per page (if the patch is on)."""
    if not apply("load_once"):
        yield
        return
    _local.on = True
    try:
        yield
    finally:
        _local.on = False


def once_per_page(js: str) -> str | None:
    """``js`` (Panel's load script) running its bundle only where it has not run; None if
    the script is not the one the patch was checked against."""
    if js.count(RUN_LINE) != 1 or js.count(END_LINE) != 1:
        return None
    key = hashlib.sha256(js.encode("utf-8")).hexdigest()[:16]
    ran = f'root.__candelaBundles["{key}"]'
    skip = (
        "    root.__candelaBundles = root.__candelaBundles || {};\n"
        f"    if (root.Bokeh !== undefined && {ran}) {{\n"
        "      // this page runs this very bundle already (explorer.patches.load_once)\n"
        "    } else " + RUN_LINE.lstrip()
    )
    mark = f"    }}\n    if (root.Bokeh !== undefined) {ran} = true;\n" + END_LINE[len("    }\n") :]
    return js.replace(RUN_LINE, skip).replace(END_LINE, mark)


def _install() -> None:
    from panel.io import notebook

    autoload = notebook._autoload_js
    if getattr(autoload, "_candela_once", False):
        return

    @functools.wraps(autoload)
    def _autoload_js(*args, **kwargs):
        js = autoload(*args, **kwargs)
        if not getattr(_local, "on", False) or not is_on("load_once"):
            return js
        guarded = once_per_page(js)
        if guarded is None:
            left_off("load_once", "Panel's notebook load script has no run_inline_js as checked")
            return js
        return guarded

    _autoload_js._candela_once = True
    notebook._autoload_js = _autoload_js


register(
    Patch(
        name="load_once",
        changes="panel.io.notebook._autoload_js (wrapped, for the explorer's own loads): "
        "the load script's run_inline_js skips a bundle the page already ran",
        why="Panel's inline notebook load evaluates all of BokehJS and Panel again each time "
        "its output is drawn; every copy stays alive in the page",
        buys="~3-5 MB of the page's JavaScript heap at each re-run of the cell whose explorer "
        "carried Panel's JavaScript",
        checked={"panel": "1.9"},
        needs=("panel.io.notebook:_autoload_js", "panel.io.notebook:AUTOLOAD_NB_JS"),
        install=_install,
        upstream="run pn.extension(inline=True) in a JupyterLab cell five times; a heap "
        "snapshot after a garbage collection holds five copies of the 2.8 MB load script "
        "(module docstring)",
    )
)
