"""The widgets' and the layouts' sheets (``style.for_controls``, ``style.for_layouts``):
the rules of the whole sheet that can reach a widget's own elements, or a row's or
column's children, each as written, in the same order.

(Their law in a real page, that a widget or a layout looks the same with its sheet as
with the whole one, is ``test_style_browser.py``.)
"""

from __future__ import annotations

from explorer.style import CONTROL_CSS, CSS, LAYOUT_CSS, for_controls, for_layouts


def test_the_widgets_sheet_keeps_rules_for_a_widgets_own_elements_in_order():
    css = """
:host { color: red; }
.candela-fields td { padding: 0; }
:host(.candela-big) input, :host(.candela-big) .candela-title { font-size: 20px; }
:host(.candela-big) .candela-title { display: none; }
kbd { border: 1px solid; }
@media (max-width: 600px) {
  .candela-step-box { display: contents; }
  :host(.candela-answer) label { order: 2; }
}
@media (max-height: 820px) { :host(.candela-big) .candela-title { display: none; } }
"""
    kept = for_controls(css)
    for rule in (":host { color: red; }", "kbd { border: 1px solid; }",
                 ":host(.candela-big) input { font-size: 20px; }"):  # fmt: skip
        assert rule in kept  # (of a list of selectors, those that can match)
    assert kept.index(":host {") < kept.index("input") < kept.index("kbd")
    assert ".candela-fields" not in kept and ".candela-step-box" not in kept
    assert ":host(.candela-answer) label { order: 2; }" in kept  # inside its @media
    assert kept.count("@media") == 1  # the block with nothing for a widget is left out


def _rules(css: str) -> set[tuple[str, str, str]]:
    # (@-block, selector, body) for each selector of each rule of ``css``.
    from explorer.style import _blocks

    out = set()
    for prelude, body in _blocks(css):
        if prelude.startswith("@"):
            out |= {(prelude, sel, inner) for _, sel, inner in _rules(body)}
        else:
            out |= {("", sel.strip(), body.strip()) for sel in prelude.split(",")}
    return out


def test_the_explorers_widgets_and_layouts_sheets_are_parts_of_its_whole_sheet():
    # Every selector of them is one of the whole sheet's, with its rule's body, in its
    # @-block; and they are much smaller: the point of them.
    whole = _rules(CSS)
    for sheet in (CONTROL_CSS, LAYOUT_CSS):
        assert _rules(sheet) <= whole
        assert len(sheet) < len(CSS) / 3
    assert "font-family" in CONTROL_CSS and "select:not([multiple])" in CONTROL_CSS


def test_the_layouts_sheet_keeps_its_hosts_rules_and_its_childrens_order_on_a_phone():
    css = """
:host { color: red; }
.candela-fields td { padding: 0; }
:host(.candela-big), :host(.candela-big) .candela-title { font-size: 20px; }
kbd { border: 1px solid; }
.candela-title { font-size: 22px; }
@media (max-width: 600px) {
  .candela-lesson-text, .candela-steps div { order: 2; }
  :host(.candela-answer) label { order: 2; }
}
"""
    kept = for_layouts(css)
    assert kept.startswith(":host { color: red; }")
    assert ":host(.candela-big) { font-size: 20px; }" in kept  # one selector of the list
    assert ".candela-lesson-text { order: 2; }" in kept  # a child named by its class
    for gone in ("td", "kbd", "label", "candela-steps div", ".candela-title {"):
        assert gone not in kept, gone
    # The explorer's: its hosts' rules and the phone's order of a lesson's parts.
    assert len(LAYOUT_CSS) < len(CSS) / 4
    assert "font-family" in LAYOUT_CSS and "order: 2" in LAYOUT_CSS
