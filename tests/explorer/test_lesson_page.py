"""A lesson as one offline page: built for every shipped lesson, the command line, the
button, and the page itself in Chromium from file:// with every other request blocked.
"""

from __future__ import annotations

import json
import re

import pytest

from explorer import lessons as L
from explorer.cli import main
from explorer.lesson_page import (
    CHALLENGE_OFFLINE,
    download_button,
    export_lesson_html,
    lesson_page_data,
)
from explorer.testing import MARKS_JS

#: A lesson page stays well under this (Bokeh's scripts are most of it).
MAX_BYTES = 3_000_000


def assert_self_contained(page: str) -> None:
    assert not re.search(r"<script[^>]*\bsrc=", page), "every script inlined"
    assert not re.search(r"<link[^>]*href=", page), "no linked stylesheet or icon"
    assert "cdn.bokeh.org" not in page and "cdn.holoviz.org" not in page


def _document(page: str) -> dict:
    match = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S)
    assert match, "the page holds its Bokeh document"
    return json.loads(match.group(1))


def assert_no_answer_in_clear(page: str, data: dict) -> None:
    """No step's answer, verdict, reveal or answered fields in the page's source (as the
    JSON of its document holds text: escaped twice, once in the store, once in the page)."""

    def spelled(text: str) -> list[str]:
        once = json.dumps(text)[1:-1]
        return [text, once, json.dumps(once)[1:-1]]

    assert '"expected"' not in page and '\\"expected\\"' not in page
    assert '\\"accepted\\"' not in page  # (right_worked: a name in the code)
    clear_fields = {s["drawing"]["fields"] for s in data["steps"] if "drawing" in s and
                    s["question"] is None and s["challenge"] is None}  # fmt: skip
    for step in data["steps"]:
        secrets = [step["reveal"]]
        if step["question"] is not None:
            q = step["question"]
            secrets += [q["right"], q["shown"], q["right_worked"], q["shown_worked"]]
            value = q["expected"]
            answer = json.dumps(value, separators=(",", ":"))
            secrets += [f'"expected":{answer}', f'"accepted":[{answer}']
            if step["drawing"]["fields"] not in clear_fields:
                secrets.append(step["drawing"]["fields"])
        if step["challenge"] is not None:
            secrets += [step["challenge"]["shown"], step["challenge"]["shown_worked"]]
        for secret in filter(None, secrets):
            for form in spelled(secret):
                assert form not in page, f"in the clear: {secret[:80]!r}"


@pytest.mark.parametrize("lesson", L.list_lessons(), ids=lambda lesson: lesson.id)
def test_every_shipped_lesson_exports_as_one_small_page(lesson):
    page = export_lesson_html(lesson)
    assert_self_contained(page)
    assert len(page.encode("utf-8")) < MAX_BYTES
    assert_no_answer_in_clear(page, lesson_page_data(lesson))
    assert "args.frames.__candela" in page  # traverse.mjs: play, step, scrub and hover
    assert "store.__lesson" in page  # lesson_page.mjs: steps, answers and keys
    _document(page)
    data = lesson_page_data(lesson)
    assert len(data["steps"]) == len(lesson.steps)
    for step, got in zip(lesson.steps, data["steps"]):
        assert (got["question"] is None) == (step.question is None)
        assert (got["challenge"] is None) == (step.challenge is None)
        assert bool(got["error"]) == bool(step.expect_error)


def test_step_data_holds_the_expected_answer_and_hints_that_do_not_show_it():
    lesson = L.load_lesson("transpose")
    data = lesson_page_data(lesson)
    for step, got in zip(lesson.steps, data["steps"]):
        layout = L.step_layout(step)
        expected = L.expected_answer(step.question, layout)
        q = got["question"]
        assert q["expected"] == str(expected) and q["kind"] == "int"
        assert q["right"] == L.grade(step.question, layout, str(expected)).message
        assert q["shown"] == L.show_me(step.question, layout).message
        for typed, hint in q["hints"].items():
            assert hint == L.hint(step.question, layout, typed)
        assert q["method"] and q["method"] in L.hint(step.question, layout, str(expected + 100))
        # Before the answer the page shows the pipeline, not the layout (its strides).
        assert "stride" not in got["drawing"]["pipeline"] and "(" in got["drawing"]["layout"]


def test_step_text_is_safe_markdown():
    lesson = L.parse_lesson(
        {
            "id": "hostile",
            "title": "<b>t</b>",
            "summary": "s",
            "steps": [
                {
                    "shape": [3, 4],
                    "ops": "",
                    "text": "**bold** <script>alert(1)</script> [x](javascript:alert(1)) "
                    "[ok](https://example.org/)",
                }
            ],
        }
    )
    text = lesson_page_data(lesson)["steps"][0]["text"]
    assert "<strong>bold</strong>" in text
    assert "<script" not in text and "&lt;script&gt;" in text
    assert 'href="javascript' not in text and 'href="https://example.org/"' in text
    assert "<b>" not in lesson_page_data(lesson)["steps"][0]["header"]
    page = export_lesson_html(lesson)
    assert "<b>t</b>" not in page and "<script>alert(1)" not in page


def test_a_challenge_says_it_needs_the_live_explorer():
    lesson = L.load_lesson("challenges")
    data = lesson_page_data(lesson)
    assert data["challenge_note"] == CHALLENGE_OFFLINE
    first = data["steps"][0]
    assert first["question"] is None and first["challenge"]["shown"].startswith(
        "One pipeline that works"
    )
    assert first["challenge"]["drawing"]["sources"]["frames_source"]["pos"]


def test_a_step_meant_to_fail_shows_the_last_good_state_and_the_error():
    lesson = L.load_lesson("slicing")
    index = next(i for i, s in enumerate(lesson.steps) if s.expect_error)
    got = lesson_page_data(lesson)["steps"][index]
    assert got["error"] and "meant to fail" in got["text"]
    assert lesson.steps[index].expect_error in got["text"]


def test_download_button_follows_the_lesson():
    from explorer.state import ExplorerState

    st = ExplorerState(lesson="transpose")
    button = download_button(st)
    assert button.filename == "candela-lesson-transpose.html"
    page = button.callback().getvalue().decode("utf-8")
    assert_self_contained(page)
    assert "Transpose and backward jumps" in page
    st.lesson = "slicing"
    assert button.filename == "candela-lesson-slicing.html"


def test_classroom_panel_offers_the_download():
    import panel as pn

    from explorer.app import Explorer

    ex = Explorer(lesson="transpose", step=1)
    buttons = [
        w
        for w in ex.classroom.panel.select(pn.widgets.FileDownload)
        if "candela-lesson-download" in w.css_classes
    ]
    assert len(buttons) == 1 and buttons[0].filename == "candela-lesson-transpose.html"


def test_a_page_in_a_byte_unit_states_strides_jumps_and_offsets_in_bytes():
    lesson = L.load_lesson("transpose")
    data = lesson_page_data(lesson, "float32")
    assert data["unit"] == "float32"
    step = data["steps"][1]  # adj_stride[0]: -7 elements, -28 bytes
    q = step["question"]
    assert q["expected"] == "-28" and q["accepted"] == ["-28", "-7"]
    assert "adj_stride[0] is -28 bytes of float32 (-7 elements)" in q["shown"]
    assert "= -28 bytes of float32" in q["shown_worked"] and q["right"] == q["shown"].replace(
        "The answer:", "Right:"
    )
    assert '<code class="candela-adj-stride">(-28, 16)</code>' in step["drawing"]["fields"]
    tags = step["drawing"]["tags"][0]  # the odometer's unit
    assert (tags["scale"], tags["unit"]) == (4, "float32")
    assert "candela-unit-note" in step["text"] and "bytes of float32" in step["text"]
    for hint in [q["method"], *q["hints"].values()]:
        assert "-28" not in hint and "-7" not in hint
    # In elements nothing changes, and a unit that is not a dtype counts as elements.
    plain = lesson_page_data(lesson)["steps"][1]
    assert plain["question"]["accepted"] == ["-7"] and "candela-unit-note" not in plain["text"]
    assert lesson_page_data(lesson, "bogus")["unit"] == "elements"


def test_the_download_follows_the_unit_on_screen():
    from explorer.state import ExplorerState

    st = ExplorerState(lesson="transpose", unit="float64")
    button = download_button(st)
    assert button.filename == "candela-lesson-transpose-float64.html"
    page = button.callback().getvalue().decode("utf-8")
    assert "bytes of float64" in page
    st.unit = "elements"
    assert button.filename == "candela-lesson-transpose.html"


# --------------------------------------------------------------------------- command line


def test_cli_export_lesson_writes_the_page(tmp_path, capsys):
    path = tmp_path / "transpose.html"
    assert main(["--export-lesson", "transpose", str(path)]) == 0
    page = path.read_text(encoding="utf-8")
    assert_self_contained(page)
    out = capsys.readouterr().out
    assert str(path) in out and "5 steps" in out
    assert [p.name for p in tmp_path.iterdir()] == ["transpose.html"]  # no temporary left


def test_cli_export_lesson_refuses_a_unit_that_is_not_a_dtype(tmp_path, capsys):
    path = tmp_path / "page.html"
    assert main(["--export-lesson", "transpose", str(path), "--unit", "float33"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--unit" in err and "float32" in err
    assert not path.exists()


def test_cli_export_lesson_refuses_an_unknown_id(tmp_path, capsys):
    path = tmp_path / "nope.html"
    assert main(["--export-lesson", "nope", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "no lesson 'nope'" in err and "transpose" in err and "row-major" in err
    assert not path.exists()


def test_cli_export_lesson_refuses_an_unwritable_path(tmp_path, capsys):
    path = tmp_path / "missing-folder" / "page.html"
    assert main(["--export-lesson", "transpose", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot write" in err
    assert not path.exists()


# --------------------------------------------------------------------------- in Chromium

MODEL = "(name) => Bokeh.documents[0].get_model_by_name(name)"


@pytest.fixture(scope="module")
def lesson_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lessons")
    paths = {}
    for lesson_id in ("transpose", "slicing", "view-or-reshape", "challenges"):
        paths[lesson_id] = folder / f"{lesson_id}.html"
        assert main(["--export-lesson", lesson_id, str(paths[lesson_id])]) == 0
    paths["transpose-float32"] = folder / "transpose-float32.html"
    command = ["--export-lesson", "transpose", str(paths["transpose-float32"])]
    assert main([*command, "--unit", "float32"]) == 0
    return paths


@pytest.fixture
def open_lesson(page, lesson_files):
    """Open an exported lesson from file:// with every other request blocked and counted."""
    pytest.importorskip("playwright")
    blocked: list[str] = []
    errors: list[str] = []

    def block(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", block)
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    def open_(lesson_id: str):
        page.goto(lesson_files[lesson_id].as_uri())
        page.wait_for_function(
            f"() => window.Bokeh && Bokeh.documents.length > 0"
            f" && ({MODEL})('lesson-data')?.__lesson != null"
        )
        page.locator(".candela-lesson-step").wait_for()
        return page

    yield open_
    assert blocked == [], "the page asked the network for something"
    assert errors == []


def _cursor(page) -> int:
    return page.evaluate(f"() => ({MARKS_JS})({MODEL})('logical', 'cursor').k[0]")


def _answer(page, text: str) -> None:
    box = page.locator(".candela-answer input")
    box.fill(text)
    box.press("Enter")


@pytest.mark.browser
def test_offline_lesson_walks_with_the_keyboard_and_checks_answers(open_lesson):
    from playwright.sync_api import expect

    page = open_lesson("transpose")
    step = page.locator(".candela-lesson-step")
    verdict = page.locator(".candela-verdict").first
    reveal = page.locator(".candela-reveal")
    stride = page.locator(".candela-stride")
    expect(step).to_have_text("step 1 of 5")
    expect(page.locator(".candela-question")).to_contain_text("stride[0]")
    expect(stride).to_be_hidden()  # the fields would answer it
    expect(reveal).to_be_hidden()

    # The arrows step the traversal cursor; n and p step the lesson.
    page.locator("body").click(position={"x": 1, "y": 1})
    assert _cursor(page) == 0
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => ({MARKS_JS})({MODEL})('logical', 'cursor').k[0] === 1")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"() => ({MARKS_JS})({MODEL})('logical', 'cursor').k[0] === 1")

    # A wrong answer: a hint, never the answer; the fields stay hidden.
    _answer(page, "4")
    wrong = page.locator(".candela-verdict-wrong")
    expect(wrong).to_contain_text("Not quite: you said 4.")
    expect(wrong).to_contain_text("4 is stride[1]")
    assert "Right" not in wrong.inner_text() and "(1, 4)" not in wrong.inner_text()
    expect(stride).to_be_hidden()
    expect(reveal).to_be_hidden()
    expect(page.locator(".candela-show-me")).to_be_visible()

    # Text that is not a number says what to type.
    _answer(page, "(4, 3)")
    expect(page.locator(".candela-verdict-unread")).to_contain_text("as a whole number")

    # The right answer: a tick, the reasoning, the reveal, the fields, and the walk plays.
    _answer(page, "1")
    right = page.locator(".candela-verdict-right")
    expect(right).to_contain_text("✓ Right: stride[0] is 1.")
    expect(reveal).to_be_visible()
    expect(reveal).to_contain_text("becomes (1, 4)")
    expect(stride).to_have_text("(1, 4)")
    page.wait_for_function(f"() => ({MARKS_JS})({MODEL})('logical', 'cursor').k[0] > 1")

    # n: the next step, its question asked afresh.
    page.locator("body").click(position={"x": 1, "y": 1})
    page.keyboard.press("n")
    expect(step).to_have_text("step 2 of 5")
    expect(verdict).to_have_text("")
    expect(stride).to_be_hidden()
    expect(page.locator(".candela-answer input")).to_have_value("")
    page.wait_for_function(f"() => ({MARKS_JS})({MODEL})('logical', 'cursor').k[0] === 0")
    _answer(page, "3")
    wrong_text = page.locator(".candela-verdict-wrong").inner_text()
    assert "-7" not in wrong_text and "−7" not in wrong_text
    _answer(page, "\u22127")  # a typographic minus reads as '-'
    expect(page.locator(".candela-verdict-right")).to_contain_text("adj_stride[0] is -7")
    expect(page.locator(".candela-adj-stride")).to_have_text("(-7, 4)")

    # The button goes on too; "show me" gives the answer after a wrong try.
    page.locator(".candela-next button").click()
    expect(step).to_have_text("step 3 of 5")
    _answer(page, "10")
    expect(page.locator(".candela-verdict-wrong")).to_be_visible()
    page.locator(".candela-show-me button").click()
    shown = page.locator(".candela-verdict-shown")
    expect(shown).to_contain_text(
        "→ The answer: the buffer position after element 3 of the walk is 1."
    )
    expect(reveal).to_contain_text("0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11")

    # p: back a step, asked afresh; space plays the walk up to the asked jump (adj_stride[0]:
    # the first step of axis 0, into element 3) and no further.
    page.locator("body").click(position={"x": 1, "y": 1})
    page.keyboard.press("p")
    expect(step).to_have_text("step 2 of 5")
    page.keyboard.press(" ")
    page.wait_for_function(f"() => ({MARKS_JS})({MODEL})('logical', 'cursor').k[0] === 2")
    odometer = page.locator(".candela-odometer")
    expect(odometer).to_contain_text("the next step shows once the question is answered")
    page.keyboard.press("ArrowRight")
    expect(odometer).to_contain_text("element 3 of 12")
    assert _cursor(page) == 2

    # Hover links a cell of the grid to the buffer position it reads.
    plot = page.locator(".bk-Figure").first
    box = plot.bounding_box()
    page.mouse.move(box["x"] + 30, box["y"] + 30)
    page.wait_for_function(f"() => ({MARKS_JS})({MODEL})('buffer', 'hover').x.length === 1")


@pytest.mark.browser
def test_offline_lesson_reads_every_answer_form(open_lesson):
    from playwright.sync_api import expect

    page = open_lesson("slicing")
    lesson = L.load_lesson("slicing")
    index = next(i for i, s in enumerate(lesson.steps) if s.question and s.question.ask == "shape")
    shape = L.expected_answer(lesson.steps[index].question, L.step_layout(lesson.steps[index]))
    for _ in range(index):
        page.locator(".candela-next button").click()
    expect(page.locator(".candela-lesson-step")).to_have_text(f"step {index + 1} of 6")
    _answer(page, ", ".join(str(v + 1) for v in shape))
    expect(page.locator(".candela-verdict-wrong")).to_contain_text("Every entry is off.")
    _answer(page, ",".join(str(v) for v in shape))  # 4,3 without brackets
    expect(page.locator(".candela-verdict-right")).to_contain_text(f"is {shape}")
    _answer(page, "(0, 0)")
    expect(page.locator(".candela-verdict-wrong")).to_be_visible()
    fullwidth = str.maketrans("0123456789", "０１２３４５６７８９")  # as a phone's IME types
    _answer(page, "[" + " ".join(str(v).translate(fullwidth) for v in shape) + "]")
    expect(page.locator(".candela-verdict-right")).to_contain_text(f"is {shape}")

    page = open_lesson("view-or-reshape")
    _answer(page, "maybe")
    expect(page.locator(".candela-verdict-unread")).to_contain_text("type True or False")
    question = L.load_lesson("view-or-reshape").steps[0].question
    truth = L.expected_answer(question, L.step_layout(L.load_lesson("view-or-reshape").steps[0]))
    _answer(page, "yes" if truth else "no")
    expect(page.locator(".candela-verdict-right")).to_contain_text(f"is {truth}")


@pytest.mark.browser
def test_offline_challenge_offers_show_me_only(open_lesson):
    from playwright.sync_api import expect

    page = open_lesson("challenges")
    expect(page.locator(".candela-offline-note")).to_contain_text("needs the live explorer")
    expect(page.locator(".candela-answer input")).to_be_hidden()
    page.locator(".candela-show-me button").click()
    expect(page.locator(".candela-verdict-shown")).to_contain_text("One pipeline that works")


@pytest.mark.browser
def test_offline_lesson_in_bytes_takes_bytes_or_elements_and_reveals_bytes(open_lesson):
    from playwright.sync_api import expect

    page = open_lesson("transpose-float32")
    expect(page.locator(".candela-unit-note")).to_contain_text("bytes of float32")
    _answer(page, "1")  # stride[0] in elements
    expect(page.locator(".candela-verdict-right")).to_contain_text("4 bytes of float32")
    page.locator(".candela-next button").click()
    expect(page.locator(".candela-lesson-step")).to_have_text("step 2 of 5")
    _answer(page, "3")
    expect(page.locator(".candela-verdict-wrong")).to_contain_text("bytes of float32")
    _answer(page, "-28")
    expect(page.locator(".candela-verdict-right")).to_contain_text(
        "adj_stride[0] is -28 bytes of float32 (-7 elements)"
    )
    expect(page.locator(".candela-adj-stride")).to_have_text("(-28, 16)")
    expect(page.locator(".candela-odometer")).to_contain_text("bytes")


@pytest.mark.browser
def test_offline_lesson_shows_a_verdict_code_as_code(open_lesson):
    from playwright.sync_api import expect

    page = open_lesson("challenges")
    page.locator(".candela-show-me button").click()
    shown = page.locator(".candela-verdict-shown")
    expect(shown.locator("code").first).to_have_text(".t()")  # the solution, as code
    assert "`" not in shown.inner_text()


@pytest.mark.browser
@pytest.mark.parametrize(("width", "height"), [(1280, 800), (1024, 768)])
def test_offline_lesson_keeps_its_figures_in_view_after_a_right_answer(open_lesson, width, height):
    # A laptop and a small projector: the figures and the traversal's controls beside the
    # lesson, on the first screen, once the fields have made the lesson column long.
    from playwright.sync_api import expect

    page = open_lesson("transpose")
    page.set_viewport_size({"width": width, "height": height})
    _answer(page, "1")
    expect(page.locator(".candela-verdict-right")).to_be_visible()
    expect(page.locator(".candela-stride")).to_be_visible()  # the fields: the lesson grew
    page.wait_for_function(f"() => ({MARKS_JS})({MODEL})('logical', 'cursor').k[0] > 1")
    page.evaluate("window.scrollTo(0, 0)")
    # (the cost panel is under the traversal, scrolled to: its figure is left out)
    figures = page.locator(".bk-Figure:not(.candela-cost-figure)")
    parts = [*figures.all(), page.locator(".candela-forward").first]
    for part in parts:
        box = part.bounding_box()
        assert box["x"] > 400, box  # beside the lesson, not under it
        assert box["x"] + box["width"] <= width and box["y"] + box["height"] <= height, box
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize(
    "lesson_id, unit",
    [("transpose", "elements"), ("transpose", "float32"), ("slicing", "elements"),
     ("contiguity", "elements"), ("challenges", "elements")],
)  # fmt: skip
def test_a_sealed_step_opens_with_every_accepted_answer_or_show_me_and_nothing_else(
    lesson_id, unit
):
    from explorer.lesson_page import _canon_text, _part, open_step, seal_steps

    data = lesson_page_data(L.load_lesson(lesson_id), unit)
    salt = "5a" * 16
    steps, drawings = seal_steps(data["steps"], salt)
    for i, (plain, sealed) in enumerate(zip(data["steps"], steps)):
        if plain["question"] is None and plain["challenge"] is None:
            assert "sealed" not in sealed and sealed["drawing"] == plain["drawing"]
            continue
        # (a challenge's start is drawn whole; its solution is sealed)
        assert "reveal" not in sealed and ("drawing" in sealed) == (plain["question"] is None)
        shown = open_step(sealed, salt, i, None, drawings)
        assert shown["reveal"] == plain["reveal"]
        if plain["challenge"] is not None:
            assert shown["challenge_drawing"] == plain["challenge"]["drawing"]
            assert shown["challenge_shown"] == plain["challenge"]["shown"]
            continue
        q = plain["question"]
        assert shown["shown"] == q["shown"] and shown["drawing"] == plain["drawing"]
        for value in q["accepted"]:
            right = open_step(sealed, salt, i, _canon_text(value), drawings)
            assert right["right"] == q["right"] and right["drawing"] == plain["drawing"]
        if q["kind"] == "bool":
            wrong = ["false" if q["expected"] == "true" else "true"]
        elif q["kind"] == "int":
            wrong = [str(v) for v in range(-40, 41) if str(v) not in q["accepted"]]
        else:
            expected = [int(v) for v in q["expected"]]
            wrong = [
                ",".join(map(str, expected[::-1] + [1])),
                ",".join(str(v + 1) for v in expected),
            ]
            parts = sealed["question"]["parts"]
            assert len(parts) == L.MAX_RANK  # its length says nothing of the rank
            assert [_part(salt, i, k, v) for k, v in enumerate(q["expected"])] == parts[
                : len(expected)
            ]
        for typed in wrong:
            with pytest.raises(ValueError):
                open_step(sealed, salt, i, typed, drawings)
        # The salt is the page's own: another page's salt opens nothing.
        with pytest.raises(ValueError):
            open_step(sealed, "00" * 16, i, _canon_text(q["expected"]), drawings)


@pytest.mark.browser
def test_offline_page_opens_a_step_only_with_the_right_answer_or_show_me(open_lesson, lesson_files):
    from playwright.sync_api import expect

    source = lesson_files["slicing"].read_text(encoding="utf-8")
    assert_no_answer_in_clear(source, lesson_page_data(L.load_lesson("slicing")))
    page = open_lesson("slicing")
    step = page.locator(".candela-lesson-step")
    reveal = page.locator(".candela-reveal")
    stride = page.locator(".candela-stride")
    for _ in range(3):
        page.locator(".candela-next button").click()
    expect(step).to_have_text("step 4 of 6")  # the shape of s[-1]: (1, 5)
    # Wrong: a hint from the hashed entries, nothing opened.
    _answer(page, "(4, 5)")
    wrong = page.locator(".candela-verdict-wrong")
    expect(wrong).to_contain_text("Right length, but entry 0 is off.")
    _answer(page, "(1, 5, 1)")
    expect(wrong).to_contain_text("You typed 3 entries; the answer has 2.")
    expect(stride).to_be_hidden()
    assert "(1, 5)" not in wrong.inner_text()
    # Right: opened, the fields and the walk drawn.
    _answer(page, "1 5")
    expect(page.locator(".candela-verdict-right")).to_contain_text("(1, 5)")
    expect(stride).to_have_text("(5, 1)")
    # Show me: opened and marked as shown, not answered.
    page.locator(".candela-next button").click()
    expect(step).to_have_text("step 5 of 6")
    expect(stride).to_be_hidden()
    _answer(page, "3")
    expect(page.locator(".candela-verdict-wrong")).to_be_visible()
    expect(stride).to_be_hidden()
    page.locator(".candela-show-me button").click()
    shown = page.locator(".candela-verdict-shown")
    expect(shown).to_contain_text("→ The answer")
    expect(page.locator(".candela-verdict-right")).to_have_count(0)
    expect(stride).to_be_visible()
    expect(reveal).to_be_hidden()  # this step has no reveal


@pytest.mark.browser
def test_the_live_pages_lesson_download_while_a_question_waits_is_the_sealed_page(
    page, explorer_server, tmp_path
):
    from playwright.sync_api import expect

    page.goto(explorer_server + "?lesson=transpose&step=2")  # adj_stride[0], waiting
    page.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0"
        " && Bokeh.documents[0].get_model_by_name('frames-source') !== null"
    )
    expect(page.locator(".candela-question")).to_contain_text("adj_stride[0]")
    expect(page.locator(".candela-show-me")).to_be_hidden()  # nothing answered yet
    with page.expect_download() as info:
        page.locator(".candela-lesson-download button, .candela-lesson-download a").first.click()
    download = info.value
    assert download.suggested_filename == "candela-lesson-transpose.html"
    text = download.path().read_text(encoding="utf-8")
    assert_self_contained(text)
    assert_no_answer_in_clear(text, lesson_page_data(L.load_lesson("transpose")))
    # Nor as text a person reads: the page's words outside its scripts, styles and tags (whose
    # attributes hold random ids such as "d5892553-7223-…").
    words = re.sub(r"<[^>]*>", " ", re.sub(r"<(script|style).*?</\1>", "", text, flags=re.S))
    assert not re.search(r"[-−]\s*7(?![0-9])", words), words
    # The question still waits on the live page: downloading answered nothing.
    expect(page.locator(".candela-verdict-shown")).to_have_count(0)
    expect(page.locator(".candela-stride")).to_be_hidden()
    # The file works: its own answer opens its own step.
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    offline = page.context.new_page()
    offline.goto(saved.as_uri())
    offline.wait_for_function(
        f"() => window.Bokeh && Bokeh.documents.length > 0"
        f" && ({MODEL})('lesson-data')?.__lesson != null"
    )
    offline.locator(".candela-next button").click()
    expect(offline.locator(".candela-lesson-step")).to_have_text("step 2 of 5")
    _answer(offline, "-7")
    expect(offline.locator(".candela-verdict-right")).to_contain_text("adj_stride[0] is -7")
