"""Every figure readable on a projector and a phone, measured as a person sees them in
Debian's Chromium: cell sizes and label counts as drawn, boxes on the screen, the
contrast of pixels in a screenshot. Hostile URLs draw the page with a message."""

from __future__ import annotations

import io

import pytest

pytest.importorskip("playwright")
from contrast import contrast
from playwright.sync_api import expect

from explorer.testing import open_served

pytestmark = pytest.mark.browser


def _open(page, url, query, width, height, scheme="light"):
    page.emulate_media(color_scheme=scheme)
    page.set_viewport_size({"width": width, "height": height})
    open_served(page, url + query)
    page.locator(".candela-odometer").wait_for()
    return page


def pixel_contrast(png: bytes) -> float:
    """The contrast of a control's text with its background, from a screenshot of it: the
    commonest colour is the background, the pixel farthest from it in contrast the text."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    counts = img.getcolors(img.width * img.height)
    background = max(counts)[1]
    return max(contrast(colour, background) for _, colour in counts)


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_disabled_step_buttons_keep_3_to_1_in_either_theme(page, explorer_server, scheme):
    # A question that withholds the whole walk disables ◀ step and step ▶: Bokeh's own
    # disabled grey under the dark theme's light text read 1.04:1.
    _open(page, explorer_server, "?lesson=slicing&step=1&presenter=true", 1024, 768, scheme)
    for part in (".candela-back", ".candela-forward"):
        button = page.locator(f"{part} button")
        expect(button).to_be_disabled()
        ratio = pixel_contrast(button.screenshot())
        assert ratio >= 3, (scheme, part, round(ratio, 2))
    page.screenshot(path=f"/tmp/readable-disabled-{scheme}.png")


def test_the_going_on_note_is_readable_in_presenter_mode(page, explorer_server):
    _open(page, explorer_server, "?lesson=slicing&step=1&presenter=true", 1024, 768)
    note = page.locator(".candela-going-on")
    expect(note).to_be_visible()
    assert float(note.evaluate("e => getComputedStyle(e).fontSize")[:-2]) >= 17


def test_reset_in_a_lesson_restores_the_steps_pipeline(page, explorer_server):
    _open(page, explorer_server, "?lesson=transpose&step=2", 1280, 800)
    page.locator(".candela-answer input").fill("999")  # answered: the fields show
    page.locator(".candela-answer input").press("Enter")
    page.locator(".candela-show-me button").click()
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")
    ops = page.locator(".candela-ops-input input")
    start = ops.input_value()
    assert start.strip(), "the step has a pipeline"
    ops.fill(start + ".transpose()")
    ops.press("Enter")
    expect(page.locator(".candela-shape")).to_have_text("(3, 4)")
    page.locator(".candela-reset button").click()
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")
    expect(ops).to_have_value(start)


#: Hostile or broken query strings, each with what the page's message must say (None: a
#: value read leniently, nothing to say); every one must draw the page.
HOSTILE_URLS = [
    ("?lesson=transpose&step=--2", "--2"),
    ("?lesson=transpose&step=--2&presenter=true", "--2"),
    ("?lesson=transpose&step=0", "not 0"),
    ("?lesson=transpose&step=-1", "-1"),
    ("?lesson=transpose&step=99999999999999999999", "99999999999999999999"),
    ("?lesson=transpose&step=1e9", "1e9"),
    ("?lesson=transpose&step=%D9%A3", "٣"),  # an Arabic-Indic digit
    ("?lesson=transpose&step=999", "999"),
    ("?lesson=nope", "nope"),
    ("?lesson=..%2F..%2Fetc%2Fpasswd", "../../etc/passwd"),
    ("?lesson=%00&step=%ff", "no lesson"),
    ("?lesson=%3Cscript%3Ealert(1)%3C%2Fscript%3E", "no lesson"),
    ("?lesson=transpose&lesson=slicing&step=1&step=2", None),
    ("?lesson[]=x", None),
    ("?step=3", None),
    ("?shape=-1", "-1"),
    ("?shape=", "shape"),
    ("?shape=%E2%88%9E", "∞"),
    # digits that are not decimal: Panel 1.9 took them for a number, an HTTP 500 (with
    # every patch off too: explorer.serving.QueryDigits)
    pytest.param("?shape=%C2%B2", "shape ²: ² is not a whole number", marks=pytest.mark.safety),
    pytest.param("?shape=3,%E2%91%A0&step=%C2%B9", "① is not a whole", marks=pytest.mark.safety),
    pytest.param("?lesson=transpose&step=%C2%B2", "'²'", marks=pytest.mark.safety),
    ("?shape=" + ",".join(["1"] * 40), "rank 40"),
    ("?shape=0", None),
    ("?shape=3,,4", None),
    ("?shape=99999999,99999999", None),
    ("?ops=.transpose(", ".transpose("),
    ("?ops=__import__('os')", "__import__"),
    ("?ops=%5B", "pipeline ["),
    ("?ops=.view((-1,-1))", "-1"),
    ("?shape=3,4&ops=.as_strided((3,4),(100,1))", "outside the buffer"),
    ("?ops=" + ".T" * 2000, None),
    ("?lesson=transpose&step=2&compare=%5B", "compare"),
    ("?theme=%3Cscript%3E", "<script>"),
    ("?presenter=maybe", "maybe"),
    ("?unit=bogus", "bogus"),
]

#: The texts of the page's messages (lesson panel and error line), through shadow roots.
MESSAGES_JS = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll(".candela-lesson-message, .candela-error"))
      if (el.textContent.trim()) out.push(el.textContent);
    for (const el of root.querySelectorAll("*")) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  return out;
}"""


def console_errors(page) -> list[str]:
    """A list that fills with the page's console errors and uncaught exceptions."""
    errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    return errors


@pytest.mark.parametrize(("query", "said"), HOSTILE_URLS, ids=lambda v: str(v)[:40])
def test_every_hostile_url_draws_the_page_with_a_message(page, explorer_server, query, said):
    errors = console_errors(page)
    _open(page, explorer_server, query, 1024, 768)
    # Drawn: the title, the grid with cells, the traversal's odometer.
    # (a short projector's presenter mode gives the title's line to the figures)
    page.locator(".candela-title").wait_for(state="attached")
    expect(page.locator(".candela-lesson-select select")).to_be_visible()
    grid = page.locator(".bk-Figure").first
    expect(grid).to_be_visible()
    box = grid.bounding_box()
    assert box["width"] > 0 and box["height"] > 0
    expect(page.locator(".candela-odometer")).to_be_visible()
    if said is not None:
        messages = page.evaluate(MESSAGES_JS)
        assert any(said in m for m in messages), (query, messages)
    page.wait_for_timeout(300)  # anything the page's scripts throw once it settles
    assert errors == [], (query, errors)


from explorer import lessons as L  # noqa: E402

#: Each figure's cells as a person sees them: the figure's box width over the cells it
#: spans (px), how many cells it draws, and how many of them show their value in type
#: of 12 px or more.
CELLS_JS = """() => {
  const doc = Bokeh.documents[0], out = {};
  for (const name of ["logical", "buffer"]) {
    const f = doc.get_model_by_name(name + "-figure");
    const box = Bokeh.index.find_one(f).el.getBoundingClientRect();
    const lab = doc.get_model_by_name("labels-" + name + "-source").data;
    const shown = lab.text.filter((t, i) => t && lab.kind[i] === "value_label"
      && parseFloat(lab.size[i]) >= 12);
    // a copy's cells, unlabelled while a question waits (its order would answer it)
    const blank = lab.text.filter((t, i) => !t && lab.kind[i] === "value_label");
    out[name] = {cell: (box.width - 8) / (f.x_range.end - f.x_range.start), bottom: box.bottom,
      right: box.right, n: doc.get_model_by_name(name + "-source").data.x.length,
      labelled: shown.length, blank: blank.length};
  }
  return out;
}"""


@pytest.mark.sweep
@pytest.mark.parametrize("lesson", L.list_lessons(), ids=lambda lesson: lesson.id)
def test_presenter_mode_at_1024_by_768_draws_lesson_grids_of_up_to_24_cells_at_40_px(
    page, explorer_server, lesson
):
    # Each step as a projector shows it before the answer, walked as a teacher walks a
    # lesson (next ▶, which before an answer is "show me" for the step it leaves): a grid
    # of up to 24 cells has cells of 40 px or more, every one showing its label, the
    # buffer under it keeping its own; the page logs no console error on any step.
    errors = console_errors(page)
    short = []
    _open(page, explorer_server, f"?lesson={lesson.id}&step=1&presenter=true", 1024, 768)
    for n in range(1, len(lesson.steps) + 1):
        if n > 1:
            page.locator(".candela-next button").click()
        expect(page.locator(".candela-lesson-step")).to_have_text(
            f"step {n} of {len(lesson.steps)}"
        )
        page.wait_for_timeout(400)  # the room measured, the cells sized to it
        seen = page.evaluate(CELLS_JS)
        grid, lane = seen["logical"], seen["buffer"]
        assert grid["right"] <= 1024 and lane["right"] <= 1024, (n, seen)
        assert lane["bottom"] <= 768 or grid["n"] > 24, (n, seen)
        if grid["n"] > 24:
            continue
        if grid["cell"] < 40 or grid["labelled"] < grid["n"]:
            short.append((n, seen))
        if lane["n"] <= 24:
            # every cell labelled, but for a copy's cells while its question waits
            waiting = (
                page.locator(".candela-question").count() > 0
                and page.locator(".candela-verdict-right, .candela-verdict-wrong").count() == 0
            )
            withheld = lane["blank"] if waiting else 0
            assert lane["labelled"] + withheld == lane["n"], (n, seen)
    assert short == [], short
    assert errors == [], errors


LANE_JS = """() => {
  const doc = Bokeh.documents[0], f = doc.get_model_by_name("compare-lane-figure");
  const box = Bokeh.index.find_one(f).el.getBoundingClientRect();
  const text = f.renderers.map((r) => r.glyph).find((g) => g.type === "Text" || g.text);
  const data = doc.get_model_by_name("compare-lane-source").data;
  return {cell: (box.width - 8) / (f.x_range.end - f.x_range.start), right: box.right,
          left: box.left, n: data.x.length, font: parseFloat(text.text_font_size.value ??
          text.text_font_size), both: data.label.filter((t) => t === "A B").length};
}"""


@pytest.mark.parametrize("presenter", ["&presenter=true", ""])
def test_the_compare_lane_is_whole_and_its_a_b_labels_legible(page, explorer_server, presenter):
    # aliasing 3: a 16-cell lane beside the first grid once answered; its cells were 17 px
    # with "A B" in 11 px type running into the next cell's, the lane past the column.
    _open(page, explorer_server, f"?lesson=aliasing&step=3{presenter}", 1024, 768)
    page.locator(".candela-answer input").fill("999")
    page.locator(".candela-answer input").press("Enter")
    page.locator(".candela-show-me button").click()
    page.wait_for_function(
        "() => (Bokeh.documents[0].get_model_by_name('compare-lane-source')?.data.x.length"
        " ?? 0) >= 16"
    )
    page.wait_for_timeout(1500)  # the room measured again with the second view beside
    lane = page.evaluate(LANE_JS)
    assert lane["both"] > 0 and lane["n"] >= 16, lane
    assert lane["left"] >= 0 and lane["right"] <= 1024, lane
    assert lane["font"] >= (12 if presenter else 11), lane
    # "A B" is about 1.8 of its font wide: whole inside its cell's colour.
    assert 1.8 * lane["font"] <= 0.9 * lane["cell"], lane
    assert page.evaluate("document.documentElement.scrollWidth") <= 1024
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=f"/tmp/readable-lane{presenter.replace('&', '-')}.png")


@pytest.mark.sweep
@pytest.mark.parametrize("lesson", L.list_lessons(), ids=lambda lesson: lesson.id)
def test_on_a_phone_a_lessons_question_and_grid_are_on_the_first_screen(
    page, explorer_server, lesson
):
    # 390x844: the question, then the grid, whole on the first screen (the figures were
    # two screens down, under the editing tools, and the question after them).
    _open(page, explorer_server, f"?lesson={lesson.id}&step=1", 390, 844)
    page.wait_for_function("() => document.documentElement.scrollWidth <= 390")
    page.wait_for_timeout(400)
    first = lesson.steps[0]
    asks = first.question is not None or first.challenge is not None
    asked = page.locator(".candela-question" if asks else ".candela-lesson-text").first
    asked = asked.bounding_box()
    grid = page.locator(".bk-Figure").first.bounding_box()
    assert asked["y"] >= 0 and asked["y"] + asked["height"] <= 844, asked
    if asks:
        answer = page.locator(".candela-answer input").bounding_box()
        assert answer["y"] + answer["height"] <= grid["y"], (answer, grid)
    # A grid of up to 24 cells whole; a larger one at least 200 px of it.
    cells = page.evaluate(CELLS_JS)["logical"]["n"]
    seen = grid["height"] if cells <= 24 else min(grid["height"], 200)
    assert grid["y"] + seen <= 844, (cells, grid)
    if lesson.id == "slicing":
        page.screenshot(path="/tmp/readable-phone-slicing.png")


@pytest.mark.parametrize(("width", "height"), [(1920, 1080), (1280, 1024), (1024, 768)])
def test_presenter_controls_and_fields_read_apart_on_a_projector(
    page, explorer_server, width, height
):
    # The speed slider's label ended where the scrub slider's began ("speed (frames/s): 3
    # frame: 0"), and each field's reason wrapped two words a line in the value's cell
    # beside a name in enlarged type.
    _open(page, explorer_server, "?shape=3,4&ops=.T&presenter=true", width, height)
    frame = page.locator(".candela-frame-slider").bounding_box()
    buttons = page.locator(".candela-forward").bounding_box()
    assert frame["y"] < buttons["y"] + buttons["height"], "the scrub slider beside the buttons"
    speed = page.locator(".candela-speed .bk-slider-title")
    if height > 820:  # the speed slider is shown: its label ends well before "frame" starts
        box = speed.bounding_box()
        title = page.locator(".candela-frame-slider .bk-slider-title").bounding_box()
        assert title["x"] - (box["x"] + box["width"]) >= 16, (box, title)
    else:  # a short projector gives the speed slider's line to the figures
        expect(speed).to_be_hidden()
    column = page.locator(".candela-fields").bounding_box()
    for reason in page.locator(".candela-fields .candela-reason").all():
        box = reason.bounding_box()
        assert box["width"] >= 0.8 * column["width"], (box, column)
        size = float(reason.evaluate("e => getComputedStyle(e).lineHeight")[:-2])
        assert size <= 1.6 * float(reason.evaluate("e => getComputedStyle(e).fontSize")[:-2])
