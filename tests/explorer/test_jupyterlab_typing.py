"""One explorer shown in two cells of a real JupyterLab (and Notebook 7), typed into as a
person types.

Each key stays in the box it was typed in: no kernel message goes per key, the other
output's box is left as it was, and Enter applies the text once, after which both
outputs show the one state. The server, the kernelspec and the offline browser context
are ``test_jupyterlab.py``'s; cells run one at a time (``test_jupyterlab_cells.py``).
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect
from test_jupyterlab import LAB_LOAD, Jupyter, Offline, explorers, in_view
from test_jupyterlab_cells import run_cell, set_comms_over_subshells, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.patched(*LAB_LOAD)]  # as test_jupyterlab's


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory):
    server = Jupyter(tmp_path_factory.mktemp("jupyterlab-typing"))
    try:
        yield server
    finally:
        server.stop()


def comm_messages(frames: list) -> list:
    """The frames the page sent its kernel that are comm messages about a box's text (a
    change of a ``value``), not the keyboard component's own (the room the page has, which
    a loaded machine may send late) nor the event a box sends after its text on Enter
    (``"applied"``, explorer/enter_box.mjs)."""
    found = []
    own = (b'"room"', b'"shown"', b'"applied"')
    for frame in frames:
        data = frame if isinstance(frame, bytes) else str(frame).encode()
        if b"comm_msg" in data and not any(mark in data for mark in own):
            found.append(data)
    return found


@pytest.mark.parametrize(
    "app, subshells",
    [
        # JupyterLab's default: each output's messages handled on a thread of its own,
        # where the first output once lost its part of the change (test_notebook_threads)
        ("lab", "perCommTarget"),
        ("lab", "disabled"),
        # Notebook 7: JupyterLab's notebook in a page of its own (comms over subshells
        # there too, whatever the setting the test writes)
        ("notebook7", "disabled"),
    ],
    ids=lambda value: value,
)
def test_typing_into_the_second_of_two_outputs_sends_nothing_per_key_and_echoes_nowhere(
    browser, jupyter, app, subshells
):
    set_comms_over_subshells(jupyter, subshells)
    name = write_notebook(
        jupyter,
        f"typing-{app}-{subshells}.ipynb",
        ["import explorer\nex = explorer.Explorer(shape=(3, 4))\nex", "ex"],
    )
    offline = Offline(browser)
    sent: list = []
    try:
        page = offline.page()
        page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
        page.goto(f"{jupyter.url}/lab/tree/{name}?reset" if app == "lab" else
                  f"{jupyter.url}/notebooks/{name}")  # fmt: skip
        page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
        deadline = time.monotonic() + 60
        while not any(s["path"] == name for s in jupyter.sessions()):
            assert time.monotonic() < deadline, f"{name}: no kernel session"
            page.wait_for_timeout(200)
        for i in range(2):
            run_cell(page, jupyter, name, i)
        expect(explorers(page)).to_have_count(2, timeout=60_000)
        boxes = [explorers(page).nth(i).locator(".candela-ops-input input") for i in range(2)]
        for box in boxes:
            expect(box).to_be_editable(timeout=60_000)
        second = in_view(explorers(page).nth(1))
        boxes[1].click()
        page.wait_for_timeout(1500)  # whatever the page says as it settles is said by now
        sent.clear()
        boxes[1].press_sequentially(".transpose()", delay=30)
        page.wait_for_timeout(1000)  # what each key would have sent is out by now
        assert comm_messages(sent) == [], comm_messages(sent)[:3]
        expect(boxes[1]).to_have_value(".transpose()")  # every character, in order
        expect(boxes[0]).to_have_value("")  # the other output is left alone
        page.keyboard.press("Enter")
        for i in range(2):  # the one state, in both outputs
            ex = explorers(page).nth(i)
            expect(ex.locator(".candela-stride").first).to_have_text("(1, 4)", timeout=30_000)
            expect(boxes[i]).to_have_value(".transpose()")
        page.wait_for_timeout(1500)
        settled = len(comm_messages(sent))
        page.wait_for_timeout(3000)  # no echo: nothing goes back and forth afterwards
        after = comm_messages(sent)
        assert len(after) == settled, f"{settled} messages, then {len(after)}"
        # Enter's one change; Panel's page side sends back what the kernel sent each
        # output (its CommManager applies the kernel's patch and forwards it), once.
        typed = [m for m in after if b'"attr":"value","new":".transpose()"' in m]
        assert 1 <= len(typed) <= 2 and len(after) <= 4, [m[-300:] for m in after]
        for i in range(2):
            expect(boxes[i]).to_have_value(".transpose()")
        assert second.locator(".candela-error").first.text_content().strip() == ""
        assert not [e for e in offline.errors if "not iterable" in e], offline.errors
    finally:
        offline.close()
