"""Errors at the right size: a page is told little, the teacher's console a lot, the log one line.

Each test runs the real command (``python -m explorer``) and talks to it as a
page would, over Bokeh's protocol (:class:`explorer.testing.BokehClient`).
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.lessons import LessonError, load_lesson_file
from explorer.testing import (
    BokehClient,
    free_port,
    run_in_thread,
    start_command,
    stop_command,
    wait_for_url,
)

pytestmark = pytest.mark.safety

ROOT = Path(__file__).resolve().parents[2]
SECRET = "do-not-show-this-key-7c1e"


def demo_lesson() -> dict:
    return {
        "id": "demo",
        "title": "Demo",
        "summary": "A lesson for the tests.",
        "steps": [
            {"shape": [3, 4], "ops": "", "text": "Plain."},
            {
                "shape": [3, 4],
                "ops": "",
                "text": "Challenge.",
                "challenge": {
                    "prompt": "p",
                    "target": {"shape": [4, 3], "stride": [1, 4], "offset": 0},
                    "solution": ".transpose()",
                    "why": "w",
                },
            },
        ],
    }


def test_a_challenge_whose_solution_is_not_a_pipeline_is_refused_naming_the_step(tmp_path):
    lesson = demo_lesson()
    lesson["steps"][1]["challenge"]["solution"] = "transpose it"
    path = tmp_path / "01-demo.json"
    path.write_text(json.dumps(lesson), encoding="utf-8")
    with pytest.raises(LessonError) as caught:
        load_lesson_file(path)
    assert caught.value.where == "steps[1].challenge.solution"
    assert "not a pipeline" in str(caught.value)
    lesson["steps"][1]["challenge"]["solution"] = ".transpose()"
    path.write_text(json.dumps(lesson), encoding="utf-8")
    assert load_lesson_file(path).steps[1].challenge.solution == ".transpose()"


def test_export_lesson_names_the_lesson_step_not_the_path(tmp_path):
    lesson = demo_lesson()
    lesson["steps"][1]["challenge"]["solution"] = "__import__('os')"
    (tmp_path / "01-demo.json").write_text(json.dumps(lesson), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "explorer", "--export-lesson", "demo", str(tmp_path / "x.html")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CANDELA_LESSONS": str(tmp_path)},
    )
    assert done.returncode == 2
    assert "steps[1].challenge.solution" in done.stderr and "cannot write" not in done.stderr
    assert not (tmp_path / "x.html").exists()


def test_lesson_file_problems_go_to_the_teacher_and_students_see_only_that_some_failed(tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "01-demo.json").write_text(json.dumps(demo_lesson()), encoding="utf-8")
    broken = copy.deepcopy(demo_lesson())
    broken["id"] = "broken"
    broken["steps"][0]["question"] = {"ask": [], "prompt": "p", "answer": 1, "why": "w"}
    (lessons / "02-broken.json").write_text(json.dumps(broken), encoding="utf-8")
    private = tmp_path / "private.json"
    private.write_text(json.dumps({SECRET: 1}), encoding="utf-8")
    (lessons / "03-link.json").symlink_to(private)  # a symlink to some other JSON file
    port = free_port()
    proc = start_command(
        ["--port", str(port), "--ready", "0"], env={"CANDELA_LESSONS": str(lessons)}
    )
    try:
        console = "".join(wait_for_url(proc))

        async def page_text() -> str:
            client = BokehClient(port)
            await client.open("/?lesson=demo&step=1")
            try:
                return json.dumps(client.document)
            finally:
                await client.close()

        document = run_in_thread(page_text)
    finally:
        console += stop_command(proc)
    assert "Some lessons could not be loaded" in document
    for detail in ("02-broken.json", "03-link.json", SECRET, "private.json"):
        assert detail not in document, detail
    # The teacher's console names each file and why, before any page was asked for.
    before_url = console.split("Candela Explorer: http://")[0]
    assert "02-broken.json" in before_url and "03-link.json" in before_url, console
    assert "Traceback" not in console


def test_a_failing_message_gets_a_short_answer_and_one_short_log_line():
    port = free_port()
    proc = start_command(["--port", str(port), "--ready", "0"])
    junk = "x" * 3_000  # within what a page may send: the message reaches Bokeh

    async def failing_message() -> tuple[dict, dict]:
        client = BokehClient(port)
        await client.open("/?shape=3,4")
        try:
            # A page event Bokeh cannot read: its handling fails inside Bokeh.
            bad = {"type": "event", "name": "button_click", "values": {"type": "map"}, junk: 1}
            event = {"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": bad}
            await client.send("PATCH-DOC", {"events": [event]})
            while True:
                header, content = await asyncio.wait_for(client.read(), 60)
                if header["msgtype"] == "ERROR":
                    return header, content
        finally:
            await client.close()

    try:
        wait_for_url(proc)
        header, content = run_in_thread(failing_message)
    finally:
        out = stop_command(proc)
    assert not content.get("traceback"), content
    text = content["text"]
    assert len(text) < 120 and "/" not in text and "site-packages" not in text, text
    assert "python" not in text.lower() and junk[:100] not in text
    assert junk[:100] not in out and "Traceback" not in out
    assert max(map(len, out.splitlines())) < 400, max(out.splitlines(), key=len)[:500]
