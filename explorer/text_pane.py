"""The explorer's text pane: Panel's own HTML pane, kept inline when redrawn in a notebook.

Every heading, field list, message and lesson text an explorer shows, in a page or
a notebook, is a :class:`TextPane` (the offline page of :mod:`explorer.export`, which
no kernel redraws, uses Panel's pane as it is). It is Panel's ``HTML`` pane as it is, until a notebook's entry
point installs the patch ``inline_panes`` (:mod:`explorer.patches.inline_panes`):
then a pane whose object changes keeps its stylesheets inline when it is redrawn
from the kernel, as Panel does for a view it first displays. Panel's other panes
of the kernel are left as Panel made them.
"""

from __future__ import annotations

import panel as pn

from .patches import give
from .patches.inline_panes import inline_on_redraw

__all__ = ["TextPane"]


class TextPane(pn.pane.HTML):
    """Panel's ``HTML`` pane, its stylesheets kept inline when redrawn in a notebook."""


# What the patch changes of this class once an entry point installs it.
give("inline_panes", TextPane, "_update_object", inline_on_redraw)
