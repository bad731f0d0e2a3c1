"""A change made to an explorer from Python reaches its notebook output as a valid message.

Panel sends a notebook output's changes over a comm; while the page has not yet
opened it (a cell changing an explorer right after the cell that showed it, in
"Run All") Panel sends each message later, on a timer of its own, so messages
can arrive in another order than they were made. The law, then: every model a
message of a change refers to is one the page drew with the output, one the message
itself defines, or one a message of an earlier change defined; never one another
message of the same change defines. Bokeh refuses a whole message that breaks it
("reference ... isn't known") and the change is not drawn.

Each case runs in a fresh kernel-like process, with the patches off
(``CANDELA_PLAIN=1``: Panel's own update path, which made the stylesheet model
later messages referred to) and on: two explorers shown as Panel shows a notebook
output (its own ``_render_model``, the document held, its JSON sent first), a
recording comm in place of the page's, then changes from Python.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The changes made from Python, one after another, to the second explorer.
CHANGES = [
    {"ops": ""},
    {"ops": ".flip(0)"},
    {"shape": "4,5"},
    {"ops": ".nonsense()"},  # refused: an error line, the last good state kept
    {"ops": ".transpose().flip(1)"},
]

SCRIPT = r"""
import json, sys

import numpy as np
import panel as pn
from bokeh.document import Document
from panel.io.model import add_to_doc
from panel.io.resources import set_resource_mode

from explorer import Explorer, show


class Page:
    "The page's end of an output's comm: the messages it receives, in order."

    def __init__(self):
        self._comm = True  # open: Panel sends at once
        self.id = "comm"
        self.texts = []

    def send(self, data=None, buffers=None):
        if data is not None:
            self.texts.append(data)


def walk(obj, defined, refs):
    if isinstance(obj, dict):
        if obj.get("type") == "object" and "id" in obj:
            defined.add(obj["id"])
        if set(obj) == {"id"}:
            refs.add(obj["id"])
        for value in obj.values():
            walk(value, defined, refs)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            walk(value, defined, refs)


def shown(explorer):
    "An output as Panel makes one in a notebook (Panel's files from its CDN)."
    doc, page = Document(), Page()
    with set_resource_mode("cdn"):
        model = pn.panel(explorer)._render_model(doc, page)
    add_to_doc(model, doc, True)  # Panel holds an output's document
    drawn = set()
    walk(doc.to_json().content, drawn, set())
    return doc, page, drawn


pn.extension()
first = show(np.arange(12, dtype=np.float32).reshape(3, 4).T)
second = Explorer(shape=(2, 3), ops=".transpose()")
outputs = [shown(first), shown(second)]
changes = json.loads(sys.argv[1])
report = []
for change in changes:
    before = [len(page.texts) for _, page, _ in outputs]
    second.param.update(**change)
    for output, ((doc, page, drawn), start) in enumerate(zip(outputs, before)):
        models = {m.id for m in doc.models}
        sent = []
        for text in page.texts[start:]:
            if not text.startswith('{"events"'):
                continue  # a header, metadata or a buffer's id
            defined, refs = set(), set()
            walk(json.loads(text), defined, refs)
            sent.append(defined)
            report.append({
                "change": change,
                "output": output,
                "unknown": sorted((refs & models) - drawn - defined),
            })
        drawn |= set().union(*sent)  # the next change's messages come after these
print(json.dumps({"report": report, "shape": list(second.layout.shape),
                  "error": second.error}))
"""


def run(plain: str) -> dict:
    env = {k: v for k, v in __import__("os").environ.items() if k != "CANDELA_PLAIN"}
    if plain:
        env["CANDELA_PLAIN"] = plain
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(CHANGES)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("plain", ["1", ""], ids=["patches-off", "patches-on"])
def test_every_reference_in_a_change_from_python_is_to_a_model_the_page_has(plain):
    result = run(plain)
    report = result["report"]
    # Every change reached the output it changed; the other output heard nothing.
    assert {json.dumps(r["change"]) for r in report if r["output"] == 1} == {
        json.dumps(change) for change in CHANGES
    }, report
    assert [r for r in report if r["output"] == 0] == []
    # The law: every model a message refers to, the page drew or the message defines.
    assert [r for r in report if r["unknown"]] == []
    # The changes themselves were made: the last shape, and the refused op left no error.
    assert result["shape"] == [5, 4]
    assert result["error"] is None
