"""While a question waits, nothing in the browser answers it: one lesson question per kind.

In Debian's Chromium, for the first question of each kind in the lessons: the
document's data (every Bokeh model's JSON, as the page holds it), the visible
text, the odometer at every press of ``step ▶`` and of the arrow keys through
the whole walk, play, and the scrubber; then after "show me", everything back.
Waits on state, never on time. (``len`` is asked by no lesson: its rule is proven
without a browser in ``test_withholding.py``.)
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from explorer import lessons as L
from explorer.classroom import read_catalogue
from explorer.fields import adj_stride_work, layout_line
from explorer.testing import MARKS_JS

pytestmark = pytest.mark.browser

MODEL = "(name) => Bokeh.documents[0].get_model_by_name(name)"


def model_js(body: str) -> str:
    return f"() => {{ const m = {MODEL}; const mark = ({MARKS_JS})(m); {body} }}"


def first_of_each_kind() -> dict:
    found = {}
    for lesson in read_catalogue()[0]:
        for n, step in enumerate(lesson.steps, 1):
            if step.question is not None and step.question.ask not in found:
                found[step.question.ask] = (lesson.id, n, step)
    return found


FIRST = first_of_each_kind()


@pytest.fixture
def open_lesson(page, explorer_server):
    def open_(query: str):
        page.goto(explorer_server + query)
        page.wait_for_function(
            "() => window.Bokeh && Bokeh.documents.length > 0"
            " && Bokeh.documents[0].get_model_by_name('frames-source') !== null"
        )
        page.locator(".candela-keys").wait_for()
        return page

    return open_


#: Every string any model of the page holds (its properties, a source's columns, a dict's
#: values): the document's data as the page has it.
DOCUMENT_TEXT = """() => {
  const out = []
  const walk = (v, depth) => {
    if (v == null || depth > 5) return
    if (typeof v === "string") out.push(v)
    else if (Array.isArray(v)) v.forEach((x) => walk(x, depth + 1))
    else if (v instanceof Map) v.forEach((x) => walk(x, depth + 1))
    else if (typeof v === "object" && !ArrayBuffer.isView(v) && v.properties == null)
      Object.values(v).forEach((x) => walk(x, depth + 1))
  }
  for (const m of Bokeh.documents[0].all_models) {
    for (const p of m) if (!p.is_unset) walk(p.get_value(), 0)
  }
  return out.join("\\n")
}"""


def element_numbers(text: str) -> list[int]:
    return [int(k) for k in re.findall(r"element (\d+) of", text)]


def walk_everything(
    page, total: int, presses: tuple[str, ...] = ("button", "key")
) -> tuple[list[int], list[str]]:
    """Press step ▶, then the right arrow, ``total + 1`` times; each cursor and odometer."""
    seen, texts = [], []
    odometer = page.locator(".candela-odometer").first
    forward = page.locator(".candela-forward button, button.candela-forward").first
    for press in presses:
        page.evaluate(model_js("m('frame-slider').value = 0"))
        for _ in range(total + 1):
            if press == "button":
                forward.click()
            else:
                page.locator("body").click(position={"x": 1, "y": 1})
                page.keyboard.press("ArrowRight")
            texts.append(odometer.inner_text())
            seen.append(page.evaluate(model_js("return mark('logical', 'cursor').k[0] ?? -1")))
    return seen, texts


@pytest.mark.parametrize("kind", sorted(FIRST), ids=str)
def test_a_waiting_question_leaks_through_no_channel_in_the_browser(open_lesson, kind):
    lesson_id, n, step = FIRST[kind]
    q = step.question
    layout = L.step_layout(step)
    positions = [int(p) for p in layout.positions()]
    limit = 0 if L.draws_before(q) else L.walk_limit(q, layout)
    answer = L.expected_answer(q, layout)
    page = open_lesson(f"?lesson={lesson_id}&step={n}")
    expect(page.locator(".candela-lesson-step")).to_contain_text(f"step {n} of")

    # The document's data: the walk only up to the asked jump; no fields, no step layouts.
    frames = page.evaluate(model_js("return Array.from(m('frames-source').data.pos)"))
    assert frames == positions[:limit]
    doc = page.evaluate(DOCUMENT_TEXT)
    for secret in [layout_line(layout), *adj_stride_work(layout)]:
        assert secret not in doc, secret
    colours = page.evaluate(model_js("return new Set(m('buffer-source').data.color).size"))
    assert colours <= 1
    labels = page.evaluate(model_js("return Array.from(m('labels-logical-source').data.text)"))
    assert not any(re.fullmatch(r"@?-?\d+", t) for t in labels)

    # The visible text: no fields, no tuple answer, the odometer at the start at most.
    expect(page.locator(".candela-stride")).to_have_count(0)
    if isinstance(answer, tuple):
        assert str(answer) not in page.locator("body").inner_text()

    # The scrubber reaches no further than the walk sent; step ▶, the keys and play stop.
    end, disabled = page.evaluate(
        model_js("const s = m('frame-slider'); return [s.end, s.disabled]")
    )
    assert disabled == (limit <= 1) and (limit <= 1 or end == limit - 1)
    if limit > 1:
        seen, texts = walk_everything(page, len(positions))
        assert max(seen) == limit - 1
        assert max(k for t in texts for k in element_numbers(t)) == limit
        assert "the next step shows once the question is answered" in texts[-1]
        page.evaluate(model_js("m('frame-slider').value = 0; m('speed-slider').value = 60"))
        page.locator(".candela-toggle button, button.candela-toggle").first.click()
        page.wait_for_function(model_js("return m('play-button').label.includes('play')"))
        assert page.evaluate(model_js("return mark('logical', 'cursor').k[0]")) == limit - 1
    elif limit == 0:
        expect(page.locator(".candela-odometer").first).to_contain_text(
            "the walk plays once the question is answered"
        )

    # "show me": the whole walk, the colours and the fields come back, and it plays.
    if isinstance(answer, bool):
        wrong = str(not answer)
    elif isinstance(answer, tuple):
        wrong = str(tuple(v + 1000 for v in answer))
    else:
        wrong = str(answer + 1000)
    box = page.locator(".candela-answer input")
    box.fill(wrong)
    box.press("Enter")
    expect(page.locator(".candela-verdict-wrong")).to_be_visible()
    assert page.evaluate(model_js("return m('frames-source').data.pos.length")) == limit
    page.locator(".candela-show-me button").click()
    expect(page.locator(".candela-verdict-shown")).to_be_visible()
    page.wait_for_function(
        model_js(f"return m('frames-source').data.pos.length === {len(positions)}")
    )
    # (a step with a second view shows its fields too: the first is the asked layout's)
    expect(page.locator(".candela-stride").first).to_be_visible()
    if len(set(positions)) > 1:
        colours = page.evaluate(model_js("return new Set(m('buffer-source').data.color).size"))
        assert colours > 1


# ---------------------------------------------------------------- the offline lesson page


@pytest.fixture(scope="module")
def lesson_pages(tmp_path_factory):
    from explorer.lesson_page import save_lesson_html

    folder = tmp_path_factory.mktemp("withheld-pages")
    ids = sorted({lesson_id for lesson_id, _, _ in FIRST.values()})
    return {i: save_lesson_html(i, folder / f"{i}.html") for i in ids}


@pytest.mark.parametrize("kind", sorted(FIRST), ids=str)
def test_the_offline_lesson_page_withholds_a_waiting_question_too(page, lesson_pages, kind):
    lesson_id, n, step = FIRST[kind]
    q = step.question
    layout = L.step_layout(step)
    positions = [int(p) for p in layout.positions()]
    limit = 0 if L.draws_before(q) else L.walk_limit(q, layout)
    page.goto(lesson_pages[lesson_id].as_uri())
    page.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0"
        f" && ({MODEL})('lesson-data')?.__lesson != null"
    )
    for _ in range(n - 1):
        page.locator(".candela-next button").click()
    expect(page.locator(".candela-lesson-step")).to_contain_text(f"step {n} of")
    frames = page.evaluate(model_js("return Array.from(m('frames-source').data.pos)"))
    assert frames == positions[:limit]
    expect(page.locator(".candela-stride")).to_be_hidden()
    assert layout_line(layout) not in page.locator("body").inner_text()
    colours = page.evaluate(model_js("return new Set(m('buffer-source').data.color).size"))
    assert colours <= 1
    if limit > 1:  # step ▶ and the keys, past the asked jump (the live test walks it all)
        seen, texts = walk_everything(page, limit + 1)
        assert max(seen) == limit - 1
        assert max(k for t in texts for k in element_numbers(t)) == limit
    # A wrong answer keeps it so; "show me" brings the whole walk back.
    answer = L.expected_answer(q, layout)
    box = page.locator(".candela-answer input")
    box.fill(str(not answer) if isinstance(answer, bool) else "999")
    box.press("Enter")
    assert page.evaluate(model_js("return m('frames-source').data.pos.length")) == limit
    page.locator(".candela-show-me button").click()
    page.wait_for_function(
        model_js(f"return m('frames-source').data.pos.length === {len(positions)}")
    )
    expect(page.locator(".candela-stride").first).to_be_visible()  # (a second view has its own)
