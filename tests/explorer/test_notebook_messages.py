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

import html
import json
import re

import pytest

from tests.explorer import fresh_process

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

from explorer import Explorer, show
from explorer import notebook
from explorer.notebook import output_drawn
from tests.explorer.notebook_outputs import shown

notebook.in_notebook = lambda: True  # a kernel's outputs, as Panel makes them, below


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


def drawn(output):
    "The output, and the models its page drew with it."
    models = set()
    walk(output.doc.to_json().content, models, set())
    return output.doc, output.page, models


pn.extension()
first = show(np.arange(12, dtype=np.float32).reshape(3, 4).T)
second = Explorer(shape=(2, 3), ops=".transpose()")
outputs = [drawn(shown(first)), drawn(shown(second))]
changes = json.loads(sys.argv[1])
# "drawn": the page says it drew both outputs before the changes; "late": after them
# (the changes made as the page still builds the outputs: all held until it says so).
late = sys.argv[2] in ("late", "never")
notebook.DRAWN_WAIT_S = 0.3
if not late:
    for doc, _, _ in outputs:
        output_drawn(doc)
report = []
held = []


def check(change, before, in_order=False):
    "What each output got since ``before`` (its count of texts): the law's report."
    for output, ((doc, page, drawn), start) in enumerate(zip(outputs, before)):
        models = {m.id for m in doc.models}
        sent = []
        for text in page.texts[start:]:
            if not text.startswith('{"events"'):
                continue  # a header, metadata or a buffer's id
            defined, refs = set(), set()
            walk(json.loads(text), defined, refs)
            sent.append(defined)
            if in_order:  # sent one after another, each drawn before the next comes
                drawn |= defined
            report.append({
                "change": change,
                "output": output,
                "unknown": sorted((refs & models) - drawn - defined),
            })
        drawn |= set().union(*sent)  # the next change's messages come after these


for change in changes:
    before = [len(page.texts) for _, page, _ in outputs]
    with second.typed():  # as typed on the page: a refused op is shown, not raised
        second.param.update(**change)
    held.append([len(page.texts) - n for (_, page, _), n in zip(outputs, before)])
    if not late:
        check(change, before)
    else:  # a message from the page comes, as Panel's handler takes it: held, let go
        for doc, _, _ in outputs:
            policy = doc.callbacks.hold_value
            doc.hold()
            doc.unhold()
            doc.hold(policy)
if late and sys.argv[2] == "never":  # the page never says so: sent once the comm was
    import asyncio                     # open notebook.DRAWN_WAIT_S, by the kernel's loop
    from tornado.ioloop import IOLoop

    IOLoop.current().run_sync(lambda: asyncio.sleep(3 * notebook.DRAWN_WAIT_S + 1))
    check({"held": changes}, [0, 0], in_order=True)
elif late:
    for doc, _, _ in outputs:
        output_drawn(doc)
    check({"held": changes}, [0, 0], in_order=True)
print(json.dumps({"report": report, "shape": list(second.layout.shape),
                  "error": second.error, "held": held,
                  "texts": [page.texts for _, page, _ in outputs]}))
"""


def run(plain: str, drawn: str = "drawn") -> dict:
    return fresh_process.run(SCRIPT, json.dumps(CHANGES), drawn, plain=plain)


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


def strings(obj) -> list[str]:
    """Every string value in a decoded message."""
    if isinstance(obj, str):
        return [obj]
    values = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else []
    return [s for value in values for s in strings(value)]


@pytest.mark.parametrize("plain", ["1", ""], ids=["patches-off", "patches-on"])
@pytest.mark.parametrize("drawn", ["late", "never"], ids=["page-says-drawn", "page-silent"])
def test_changes_made_before_the_page_drew_the_output_reach_it_once_drawn_in_order(plain, drawn):
    # Panel's page side drops a message that comes before it has built the output (in
    # JupyterLab's "Run All" the cell after a display changes it as the page builds it):
    # nothing goes until the page says it drew the output, then everything held, in the
    # order it was made, though messages from the page came in between (Panel's handler
    # of one lets go of whatever the output's document held). A page that never says so
    # (its scripts failed, a front end that draws Panel's outputs some other way) gets
    # them once its comm has been open a while (explorer.notebook.DRAWN_WAIT_S).
    result = run(plain, drawn)
    assert result["held"] == [[0, 0]] * len(CHANGES), result["held"]
    report = result["report"]
    assert report and {r["output"] for r in report} == {1}, report  # the changed output only
    assert [r for r in report if r["unknown"]] == []
    # The last message carries the last state (the fields of (4, 5) transposed and
    # flipped): drawn last, it is what the page shows.
    texts = [t for t in result["texts"][1] if t.startswith('{"events"')]
    shapes = [
        m
        for text in texts
        for s in map(html.unescape, strings(json.loads(text)))
        for m in re.findall(r'candela-shape">([^<]*)<', s)
    ]
    assert shapes and shapes[-1] == "(5, 4)", shapes
    assert result["shape"] == [5, 4]
