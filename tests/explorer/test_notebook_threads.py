"""A page's message about one output, handled while another thread changes the explorer.

With comms over subshells (JupyterLab's default, and Notebook 7's) the kernel handles
each output's messages on a thread of its own. One explorer shown in two cells and typed
into in the second: the change is made on the second output's thread while the first
output's page may send a message of its own (Panel's page side forwards each patch it
applies). Panel's handler of that message holds the first output's document and then
lets go of the hold, which handed whatever the document held to no one: the part of the
change held there for the first output was never sent, and it kept its old state (seen
in a real JupyterLab, ``test_jupyterlab_typing.py``, about one run in three).

Here the race is made to happen every time: the change is stopped just before it is
sent, the page's message comes on another thread, then the change goes on. The law: the
first output still receives the whole change. Each case runs in a fresh process, patches
on and off (the outputs made as Panel makes a notebook's: ``notebook_outputs.py``).
"""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

from tests.explorer.fresh_process import run

SCRIPT = r"""
import json, threading

import panel as pn
from panel.models.comm_manager import CommManager

from explorer import Explorer
from explorer import notebook
from explorer.notebook import output_drawn
from tests.explorer.notebook_outputs import shown

notebook.in_notebook = lambda: True  # a kernel's outputs, as Panel makes them, below

pn.extension()
ex = Explorer(shape=(3, 4))
outputs = [shown(ex.__panel__()), shown(ex.__panel__())]  # one explorer in two cells
for output in outputs:
    output_drawn(output.doc)

# The change stops just before it is sent (everything it changed held in each output's
# document), until the page's message has come on another thread.
stopped, go = threading.Event(), threading.Event()
send = notebook.push_drawn


def push_drawn(roots):
    stopped.set()
    go.wait(5)
    send(roots)


notebook.push_drawn = push_drawn
root, model, doc, page = outputs[0]
before = len(page.texts)
change = threading.Thread(target=lambda: setattr(ex, "ops", ".transpose()"))
change.start()
assert stopped.wait(30), "the change never came to be sent"
message = {  # a page's message about the first output: an empty patch, as Panel's
    "header": {"msgtype": "PATCH-DOC", "msgid": "page"},  # page side may send any time
    "metadata": {},
    "content": {"events": []},
    "_buffers": {},
}
ref = model.ref["id"]
page_thread = threading.Thread(
    target=lambda: root._on_msg(ref, CommManager(comm_id="page", plot_id=ref), message)
)
page_thread.start()
page_thread.join(1.0)  # it may wait for the change to be sent: in turn
go.set()
change.join(30)
page_thread.join(30)
print(json.dumps({
    "stride": list(ex.layout.stride),
    "sent": [t for t in page.texts[before:] if t.startswith('{"events"')],
    "alive": [change.is_alive(), page_thread.is_alive()],
}))
"""


@pytest.mark.parametrize("plain", ["1", ""], ids=["patches-off", "patches-on"])
def test_a_pages_message_on_another_thread_loses_no_part_of_a_change(plain):
    result = run(SCRIPT, plain=plain)
    assert result["alive"] == [False, False], "a thread never finished: a deadlock"
    assert result["stride"] == [1, 4]
    sent = "".join(result["sent"])
    # The first output got the change: its fields' stride and its pipeline box's text.
    assert "(1, 4)" in sent, sent[:2000]
    assert ".transpose()" in sent, sent[:2000]
