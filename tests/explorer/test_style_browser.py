"""A widget's, a layout's and a pane of text's sheets in a real page: each looks as it
did with the whole sheet.

The explorer gives its widgets only the rules of its stylesheet that can reach a
widget's own elements (``style.CONTROL_CSS``, ``style.for_controls``), its rows and
columns those that can reach a layout's (``style.LAYOUT_CSS``, ``style.for_layouts``),
and each pane of text those for what it shows (``style.for_pane``).
The law, in Chromium: adding the whole sheet (``style.CSS``) to each such shadow root
changes no computed style of any element in it; on a laptop, a projector in presenter
mode, a phone, light and dark.
"""

from __future__ import annotations

import pytest

pytest.importorskip("playwright")

import explorer.app  # noqa: F401  (its panes' sheets: style.PANE_SHEETS)
from explorer.style import CONTROL_CSS, CSS, LAYOUT_CSS, PANE_SHEETS
from explorer.testing import open_served

#: What a person sees of an element: the properties the explorer's sheets set.
PROPS = [
    "color", "background-color", "background-image", "font-size", "font-weight",
    "font-family", "white-space", "overflow-wrap", "outline-style", "outline-width",
    "padding-left", "min-height", "width", "display", "flex-grow", "flex-shrink", "order",
    "border-top-width", "border-top-color", "border-radius",
]  # fmt: skip

SNAPSHOT_JS = """([parts, whole, props]) => {
  // Every shadow root styled with one of the sheets ``parts``, and a snapshot of its
  // elements.
  const roots = []
  const walk = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.shadowRoot) {
        const sheets = [...el.shadowRoot.querySelectorAll("style")].map((s) => s.textContent)
        if (sheets.some((sheet) => parts.includes(sheet))) roots.push(el.shadowRoot)
        walk(el.shadowRoot)
      }
    }
  }
  walk(document)
  const snap = () => roots.map((root) => [...root.querySelectorAll("*")]
    .filter((el) => el.tagName !== "STYLE" && el.tagName !== "LINK")
    .map((el) => {
      const st = getComputedStyle(el)
      return el.tagName + ":" + props.map((p) => st.getPropertyValue(p)).join("|")
    }))
  const before = snap()
  for (const root of roots) {
    const style = document.createElement("style")
    style.textContent = whole
    root.appendChild(style)
  }
  const after = snap()
  const changed = []
  before.forEach((els, i) => els.forEach((was, j) => {
    if (after[i][j] !== was) changed.push([roots[i].host.className, was, after[i][j]])
  }))
  return {roots: roots.length, changed}
}"""


@pytest.mark.parametrize(
    "query, width, height, scheme",
    [
        ("?shape=2,3,4&ops=.transpose(0, 2)", 1280, 800, "light"),
        ("?lesson=transpose&step=2", 1280, 800, "dark"),
        ("?lesson=transpose&step=2&presenter=true", 1024, 768, "light"),
        ("?lesson=slicing&step=1", 390, 844, "dark"),
    ],
)
@pytest.mark.parametrize(
    "sheets, least",
    [([CONTROL_CSS], 8), ([LAYOUT_CSS], 3), (sorted(PANE_SHEETS), 10)],
    ids=["widgets", "layouts", "panes"],
)
def test_every_widget_layout_and_pane_looks_the_same_with_its_sheet_as_with_the_whole_one(
    page, explorer_server, query, width, height, scheme, sheets, least
):
    page.emulate_media(color_scheme=scheme)
    page.set_viewport_size({"width": width, "height": height})
    open_served(page, explorer_server + query)
    page.locator(".candela-odometer").wait_for()
    page.wait_for_timeout(500)
    seen = page.evaluate(SNAPSHOT_JS, [sheets, CSS, PROPS])
    # the shape, pipeline and compare boxes, selects, buttons, the presenter checkbox...;
    # the controls' column, the lesson's, the cost's controls...
    assert seen["roots"] >= least, seen
    assert seen["changed"] == [], seen["changed"][:5]
