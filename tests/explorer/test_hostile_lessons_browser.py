"""A shared lesson pack is untrusted: in Chromium, a pack with script in every text field
runs nothing, and a malformed file beside good ones leaves the page drawn and named.

The pack is a folder pointed to by ``$CANDELA_LESSONS``, which the served app reads
for each new page. Waits on state, never on time.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

# Each payload, if it ran, would set window.__pwned or open a dialog.
PAYLOADS = [
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "<details open ontoggle=\"window.__pwned = 'details'\">d</details>",
    "<iframe srcdoc=\"<script>parent.__pwned = 'iframe'</script>\"></iframe>",
    "<svg onload=\"window.__pwned = 'svg'\"></svg>",
    "[click me](javascript:window.__pwned='link')",
    "<a href=\"javascript:window.__pwned='anchor'\">click me too</a>",
    "<script>alert(1)</script>",
]
HOSTILE = " ".join(PAYLOADS)


def hostile_lesson() -> dict:
    return {
        "id": "evil",
        "title": "Evil " + HOSTILE[:180],
        "summary": HOSTILE,
        "steps": [
            {
                "shape": [3, 4],
                "ops": "",
                "text": "Strides. " + HOSTILE,
                "question": {
                    "ask": "stride",
                    "axis": 0,
                    "prompt": "Predict stride[0]. " + HOSTILE,
                    "answer": 4,
                    "why": "Because. " + HOSTILE,
                },
                "reveal": "Revealed. " + HOSTILE,
            },
            {"shape": [2, 3], "ops": ".transpose()", "text": "Next. " + HOSTILE},
        ],
    }


def good_lesson() -> dict:
    return {
        "id": "good",
        "title": "A good lesson",
        "summary": "Fine.",
        "steps": [{"shape": [2, 3], "ops": "", "text": "Row-major strides."}],
    }


@pytest.fixture
def pack(tmp_path, monkeypatch):
    (tmp_path / "01-evil.json").write_text(json.dumps(hostile_lesson()), encoding="utf-8")
    (tmp_path / "02-good.json").write_text(json.dumps(good_lesson()), encoding="utf-8")
    broken = good_lesson() | {"id": "broken"}
    broken["steps"] = [dict(broken["steps"][0], question={"ask": [], "answer": 1})]
    (tmp_path / "03-broken.json").write_text(json.dumps(broken), encoding="utf-8")
    (tmp_path / "04-deep.json").write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    monkeypatch.setenv("CANDELA_LESSONS", str(tmp_path))
    return tmp_path


# Every element of the page, through Panel's shadow roots.
ALL_ELEMENTS = """() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      out.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return out;
}"""

LIVE_MARKUP = f"""() => {{
  const all = ({ALL_ELEMENTS})();
  const found = [];
  for (const el of all) {{
    const tag = el.tagName.toLowerCase();
    if (tag === 'script' && /__pwned|alert\\(/.test(el.textContent)) found.push('script');
    if (['iframe', 'svg', 'details'].includes(tag) && el.closest('.candela-classroom, [class*="candela-lesson"]'))
      found.push(tag);
    for (const attr of el.getAttributeNames()) {{
      const value = el.getAttribute(attr) || '';
      if (/^on/i.test(attr) && /__pwned|alert/.test(value)) found.push(tag + '[' + attr + ']');
      if (/^(href|src|srcdoc)$/i.test(attr) && /^\\s*javascript:|__pwned/i.test(value))
        found.push(tag + '[' + attr + ']');
    }}
  }}
  return found;
}}"""


def test_a_hostile_lesson_pack_runs_nothing(page, explorer_server, pack):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(explorer_server + "?lesson=evil&step=1")
    page.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0"
        " && Bokeh.documents[0].get_model_by_name('frames-source') !== null"
    )
    text = page.locator(".candela-lesson-text")
    expect(text).to_contain_text("Strides.")
    expect(text).to_contain_text("<img src=x onerror=")  # shown as text, not run
    expect(page.locator(".candela-question")).to_contain_text("<script>")
    # Grade an answer so the lesson's reason (why) reaches the page too.
    answer = page.locator(".candela-answer input")
    answer.fill("4")
    answer.press("Enter")
    expect(page.locator(".candela-verdict")).to_contain_text("Because.")
    expect(page.locator(".candela-reveal")).to_contain_text("Revealed. <script>")
    # Click every link the lesson text shows: none may run script.
    links = text.locator("a")
    for i in range(links.count()):
        href = links.nth(i).get_attribute("href") or ""
        assert href.startswith(("http://", "https://", "?", "#", "/")) or ":" not in href, href
    # Click the text of each link that was refused: it is text now, not a link.
    text.get_by_text("[click me](javascript:", exact=False).first.click()
    page.locator(".candela-next").click()
    expect(page.locator(".candela-lesson-step")).to_have_text("step 2 of 2")
    expect(text).to_contain_text("Next.")
    # One more round trip, so any handler step 2's markup could fire has had its chance.
    page.locator(".candela-prev").click()
    expect(page.locator(".candela-lesson-step")).to_have_text("step 1 of 2")
    assert page.evaluate("() => window.__pwned === undefined"), page.evaluate(
        "() => window.__pwned"
    )
    assert dialogs == []
    assert page.evaluate(LIVE_MARKUP) == []


def test_a_malformed_lesson_file_beside_good_ones_is_noted_not_named_and_the_page_draws(
    page, explorer_server, pack
):
    page.goto(explorer_server + "?lesson=good")
    page.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0"
        " && Bokeh.documents[0].get_model_by_name('frames-source') !== null"
    )
    expect(page.locator(".candela-shape")).to_have_text("(2, 3)")
    message = page.locator(".candela-lesson-message")
    # Which files and why is for the teacher's console and log, not every student's page.
    expect(message).to_contain_text("Some lessons could not be loaded")
    expect(message).not_to_contain_text("03-broken.json")
    expect(message).not_to_contain_text("04-deep.json")
    expect(page.locator(".candela-lesson-text")).to_contain_text("Row-major strides.")
