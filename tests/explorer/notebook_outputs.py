"""Notebook outputs as Panel makes them, without a notebook: for tests that run a script
in a fresh kernel-like process (``fresh_process.run``) and look at what each output was
sent.

In the script, :func:`shown` makes an output of an explorer as Panel makes one in a
notebook: Panel's own ``_render_model`` into a document it holds, with a recording comm
(:class:`Page`) in place of the page's end, Panel's files from its CDN.
"""

from __future__ import annotations

from typing import NamedTuple


class Page:
    "The page's end of an output's comm: the texts it receives, in order."

    def __init__(self):
        self._comm = True  # open: Panel sends at once
        self.id = "comm"
        self.texts = []

    def send(self, data=None, buffers=None):
        if data is not None:
            self.texts.append(data)


class Output(NamedTuple):
    root: object  # the Panel object shown
    model: object  # its Bokeh model on the page
    doc: object  # the output's document
    page: Page


def shown(obj) -> Output:
    "An output of ``obj`` as Panel makes one in a notebook."
    import panel as pn
    from bokeh.document import Document
    from panel.io.model import add_to_doc
    from panel.io.resources import set_resource_mode

    root, doc, page = pn.panel(obj), Document(), Page()
    with set_resource_mode("cdn"):
        model = root._render_model(doc, page)
    add_to_doc(model, doc, True)  # Panel holds an output's document
    return Output(root, model, doc, page)
