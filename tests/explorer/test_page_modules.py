"""A notebook page holds the explorer's modules once; each output imports them by a stub.

Laws, in a real Chromium: a stub's module exports what its module does, the same
functions; a page script records each text exactly as it was, whatever it holds (an
exported page puts the script in a ``<script>`` element); a stub on a page without
the modules fails with a message that says so. And in Python: an output's HTML keeps
every text its page does not have, and every text whose exports a stub cannot name.
"""

from __future__ import annotations

import json

import pytest

from explorer.page_modules import GLOBAL, key, modules, page_script, shared, stub
from explorer.patches.browser import browser_patches

ORIGIN = "http://candela.test/"

#: The module's namespace as the page sees it: each export's name, type and source.
NAMESPACE = """async (text) => {
  const url = URL.createObjectURL(new Blob([text], {type: "text/javascript"}))
  const m = await import(url)
  return Object.keys(m).sort().map((k) => [k, typeof m[k], String(m[k])])
}"""

#: Why the module ``text`` failed to import, or None.
FAILURE = """async (text) => {
  try {
    await import(URL.createObjectURL(new Blob([text], {type: "text/javascript"})))
    return null
  } catch (e) {
    return String(e.message)
  }
}"""


@pytest.fixture
def blank(page):
    """A page of an http origin (a blob module needs one), with nothing on it."""
    page.route(
        ORIGIN + "**",
        lambda route: route.fulfill(
            body="<!doctype html><title>page</title>", content_type="text/html"
        ),
    )
    page.goto(ORIGIN)
    return page


def the_modules() -> tuple[str, ...]:
    browser_patches()  # as a notebook's first explorer has them
    return modules()


@pytest.mark.browser
def test_each_stub_exports_what_its_module_exports_from_the_pages_copy(blank):
    texts = the_modules()
    blank.add_script_tag(content=page_script(texts))
    for text in texts:
        direct = blank.evaluate(NAMESPACE, text)
        assert direct, "a module that exports nothing"
        assert blank.evaluate(NAMESPACE, stub(text)) == direct


ODD = [
    "export const a = '</script><script>alert(1)</script>'\n",
    'export const b = "quotes \\" and \\\\ backslashes"\n',
    "export const c = 'non-ASCII: é ✓ \u2028 \u2029 and a NUL-free line'\n",
    "export function d() { return `template ${1 + 1}` }\nexport default d\n",
]


@pytest.mark.browser
def test_a_page_script_in_a_script_element_records_each_text_as_it_was(blank):
    # As nbconvert's HTML holds it: one <script> element, which "</script>" would end.
    script = page_script(ODD)
    assert "</script" not in script.lower()
    blank.set_content(f"<!doctype html><script>{script}</script>")
    recorded = blank.evaluate(
        f"(names) => names.map((n) => globalThis.{GLOBAL}[n])", [key(t) for t in ODD]
    )
    assert recorded == ODD
    for text in ODD:
        assert blank.evaluate(NAMESPACE, stub(text)) == blank.evaluate(NAMESPACE, text)


@pytest.mark.browser
def test_a_stub_on_a_page_without_its_module_says_so(blank):
    text = the_modules()[0]
    # no record at all (the output that loaded Panel was cleared before saving)
    assert "candela" in blank.evaluate(FAILURE, stub(text))
    # a record without this text (another release of the explorer on the page)
    blank.add_script_tag(content=page_script(["export const other = 1\n"]))
    message = blank.evaluate(FAILURE, stub(text))
    assert key(text) in message and "not on this page" in message


def test_an_output_keeps_each_text_its_page_lacks_or_a_stub_cannot_name():
    texts = the_modules()
    unread = "const a = 1\nexport { a }\n"  # an export a stub does not name
    html = "<script>var docs_json = " + json.dumps({"esm": list(texts) + [unread]}) + "</script>"
    assert shared(html, ()) == html
    only_first = shared(html, texts[:1])
    assert json.dumps(texts[0]) not in only_first and json.dumps(stub(texts[0])) in only_first
    assert all(json.dumps(t) in only_first for t in texts[1:])
    everything = shared(html, [*texts, unread])
    assert not any(json.dumps(t) in everything for t in texts)
    assert json.dumps(unread) in everything and stub(unread) is None
    # what is left is a document still: the stubs are JSON strings where the texts were
    left = json.loads(everything.removeprefix("<script>var docs_json = ").removesuffix("</script>"))
    assert left["esm"] == [stub(t) for t in texts] + [unread]
