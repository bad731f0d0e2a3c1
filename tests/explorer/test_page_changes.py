"""A page may change only what a person can change: the real command, hostile raw clients.

A raw client of Bokeh's protocol opens a page as a browser does, then sends what
no page of the explorer sends: columns streamed into a figure's data source, a
figure's title, a chooser's value that is not one of its options, an
oversized message. Each is refused before it is applied (the document the
client pulls again is unchanged), a message too large closes only that
connection, the server does not grow, another student's edits carry on, and the
log has one short line per refusal that quotes none of it.
"""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from explorer.page_changes import MAX_MESSAGE_BYTES
from explorer.testing import (
    BokehClient,
    free_port,
    rss_mb,
    run_in_thread,
    start_command,
    stop_command,
    tree_sum,
    wait_for_url,
)

pytestmark = pytest.mark.safety

MARK = "zq-hostile-zq"


def models_of(document: dict, name: str) -> list[dict]:
    found, stack = [], [document]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if x.get("type") == "object" and x.get("name") == name and "id" in x:
                found.append(x)
            stack += x.values()
        elif isinstance(x, list):
            stack += x
    return found


async def answer(client: BokehClient) -> tuple[dict, dict]:
    """The server's reply (OK or ERROR) to the message just sent."""
    while True:
        header, content = await asyncio.wait_for(client.read(), 60)
        if header["msgtype"] in ("OK", "ERROR"):
            return header, content


def hostile_changes(document: dict) -> list[dict]:
    source = models_of(document, "ColumnDataSource")[0]["id"]
    figure = models_of(document, "Figure")[0]["id"]
    select = models_of(document, "panel.models.widgets.CustomSelect")
    # A text box is the explorer's own component (explorer.enter_box): its value's data model.
    box = [m["id"] for m in _objects(document) if re.fullmatch(r"EnterBox\d*", m["name"])][0]
    streamed = {
        "kind": "ColumnsStreamed",
        "model": {"id": source},
        "attr": "data",
        "data": {"type": "map", "entries": [["x", [MARK] * 500]]},
        "rollover": None,
    }
    title = {"kind": "ModelChanged", "model": {"id": figure}, "attr": "title", "new": MARK}
    sizing = {"kind": "ModelChanged", "model": {"id": figure}, "attr": "inner_width", "new": -5}
    data = {
        "kind": "ModelChanged",
        "model": {"id": source},
        "attr": "data",
        "new": {"type": "map", "entries": [["x", [MARK] * 100]]},
    }
    long_text = {"kind": "ModelChanged", "model": {"id": box}, "attr": "value", "new": MARK * 999}
    root = {"kind": "RootAdded", "model": {"type": "object", "name": "Div", "id": "p9"}}
    # 60,000 characters into a server-side HTML pane: under the message limit, so judged
    html = models_of(document, "panel.models.markup.HTML")[0]["id"]
    text = MARK + "x" * 60_000
    markup = {"kind": "ModelChanged", "model": {"id": html}, "attr": "text", "new": text}
    choice = {"kind": "ModelChanged", "model": {"id": select[0]["id"]}, "attr": "value"}
    # The keyboard component's state is the server's: no count, no switch from the page.
    keys = [m["id"] for m in _objects(document) if re.fullmatch(r"Keys\d*", m["name"])]
    assert keys, "the page has no keyboard component"
    played = {"kind": "ModelChanged", "model": {"id": keys[0]}, "attr": "play_count", "new": 1e30}
    follow = {"kind": "ModelChanged", "model": {"id": keys[0]}, "attr": "follow_history"}
    return [
        streamed,
        title,
        sizing,
        data,
        long_text,
        root,
        markup,
        {**choice, "new": MARK},
        played,
        {**follow, "new": True},
    ]


def _objects(document: dict) -> list[dict]:
    found, stack = [], [document]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if x.get("type") == "object" and "id" in x and isinstance(x.get("name"), str):
                found.append(x)
            stack += x.values()
        elif isinstance(x, list):
            stack += x
    return found


def test_a_page_changes_only_what_a_person_can_and_big_messages_close_it():
    port = free_port()
    # Repeated log lines are counted once a window: a short one, so the count is written.
    proc = start_command(["--port", str(port), "--ready", "0"], env={"CANDELA_LOG_WINDOW_S": "0.5"})
    refused = []

    async def scenario() -> dict:
        student, hostile = BokehClient(port), BokehClient(port)
        await student.open("/?shape=3,4")
        await hostile.open("/?shape=3,4")
        try:
            figures = {}
            # A person's edit is applied.
            assert await student.edit(".transpose()") < 60_000
            for change in hostile_changes(hostile.document):
                await hostile.send("PATCH-DOC", {"events": [change]})
                header, content = await answer(hostile)
                assert header["msgtype"] == "ERROR", change["kind"]
                assert not content.get("traceback") and MARK not in content["text"]
                refused.append(content["text"])
            # A harmless change sent along with a refused one: refused whole.
            await hostile.send("PATCH-DOC", {"events": hostile_changes(hostile.document)[:2]})
            assert (await answer(hostile))[0]["msgtype"] == "ERROR"
            again = await hostile.request("PULL-DOC-REQ", "PULL-DOC-REPLY")
            assert MARK not in json.dumps(again), "a refused change was applied"
            keyboard = [m for m in _objects(again) if re.fullmatch(r"Keys\d*", m["name"])]
            assert keyboard and "1e+30" not in json.dumps(keyboard), "play_count was set"
            # Messages larger than the explorer ever sends close that connection, unread.
            figures["rss_before"] = tree_sum(rss_mb, proc.pid)
            source = models_of(hostile.document, "ColumnDataSource")[0]["id"]
            column = [0.5] * 700_000  # ~5.5 MB as JSON
            big = {
                "kind": "ColumnsStreamed",
                "model": {"id": source},
                "attr": "data",
                "data": {"type": "map", "entries": [["x", column]]},
                "rollover": None,
            }
            closed = 0
            for _ in range(3):
                intruder = BokehClient(port)
                await intruder.open("/?shape=3,4")
                try:
                    await intruder.send("PATCH-DOC", {"events": [big]})
                    await asyncio.wait_for(intruder.read(), 30)
                except (ConnectionError, asyncio.TimeoutError):
                    closed += 1
                else:
                    pass
                finally:
                    await intruder.close()
            figures["closed"] = closed
            # The other student's edits carry on, promptly.
            figures["edit_ms"] = await student.edit(".transpose().as_contiguous()")
            figures["rss_after"] = tree_sum(rss_mb, proc.pid)
            return figures
        finally:
            await student.close()
            await hostile.close()

    try:
        wait_for_url(proc)
        figures = run_in_thread(scenario, timeout=300)
        time.sleep(1.5)  # past the log's window: repeated lines counted
    finally:
        out = stop_command(proc)
    assert figures["closed"] == 3, figures
    # Three such messages accepted used to grow the server by ~135 MB.
    assert figures["rss_after"] - figures["rss_before"] < 30, figures
    assert figures["edit_ms"] < 5_000, figures
    assert MARK not in out and "Traceback" not in out, out[-2000:]
    lines = [line for line in out.splitlines() if "refused a change" in line]
    # Each refusal one line, the one repeated counted: "1 more like it ...".
    counts = [re.match(r"(\d+) more like it", line) for line in lines]
    assert sum(int(m.group(1)) if m else 1 for m in counts) == len(refused) + 1, lines
    assert all(len(line) < 300 for line in lines), lines
    assert max(map(len, out.splitlines())) < 400


def test_the_limit_leaves_room_for_the_longest_text_a_box_takes():
    from explorer.page_changes import MAX_TEXT

    # A pipeline box's text, every character escaped as JSON does at worst (\\uXXXX).
    longest = json.dumps({"events": [{"new": "\u0101" * MAX_TEXT}]}, ensure_ascii=True)
    assert len(longest) < MAX_MESSAGE_BYTES
