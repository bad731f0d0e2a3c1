"""Candela Explorer: a Panel + Bokeh dashboard that shows how a tensor's elements sit in memory.

Importing this package has no side effects: Panel is imported only when
:class:`Explorer` is first used. In a notebook that first use (``explorer.Explorer``,
``show``, ``compare``) also sends the page Panel's JavaScript, before the explorer's
own modules are imported: the page loads it while the kernel builds the explorer
(:func:`explorer.notebook.ensure_extension`). The pure parts — the pipeline parser
(:mod:`explorer.pipeline`), the state (:mod:`explorer.state`), the column data
(:mod:`explorer.columns`) and the fields' text (:mod:`explorer.fields`) — need no
Panel at all.
"""

from __future__ import annotations

import threading

__all__ = ["Explorer", "compare", "show"]


def __getattr__(name: str):
    if name in __all__ and threading.current_thread() is threading.main_thread():
        # A cell runs on the kernel's main thread; a server's or a user's thread of the
        # same kernel (pn.serve from a notebook) displays nothing in the notebook.
        from .notebook import ensure_extension

        ensure_extension()  # in a notebook, once per page; elsewhere nothing
    if name == "Explorer":
        from .app import Explorer

        return Explorer
    if name == "show":  # explorer.show(x) for Jupyter: explorer/jupyter.py
        from .jupyter import show

        return show
    if name == "compare":  # explorer.compare(a, b): two views of one buffer
        from .jupyter import compare

        return compare
    raise AttributeError(f"module 'explorer' has no attribute {name!r}")
