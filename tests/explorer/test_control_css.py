"""The widgets' sheet (``style.for_controls``): the rules of the whole sheet that can
reach a widget's own elements, each as written, in the same order.

(Its law in a real page, that a widget looks the same with it as with the whole
sheet, is ``test_style_browser.py``.)
"""

from __future__ import annotations

from explorer.style import CONTROL_CSS, CSS, for_controls


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
                 ":host(.candela-big) input, :host(.candela-big) .candela-title"):  # fmt: skip
        assert rule in kept
    assert kept.index(":host {") < kept.index("input") < kept.index("kbd")
    assert ".candela-fields" not in kept and ".candela-step-box" not in kept
    assert ":host(.candela-answer) label { order: 2; }" in kept  # inside its @media
    assert kept.count("@media") == 1  # the block with nothing for a widget is left out


def test_the_explorers_widgets_sheet_is_a_part_of_its_whole_sheet():
    # Every line of it is a line of the whole sheet (or an @media's brace), and it is
    # much smaller: the point of it.
    lines = set(CSS.splitlines())
    for line in CONTROL_CSS.splitlines():
        assert line in lines or line.startswith("@media") or line == "}", line
    assert len(CONTROL_CSS) < len(CSS) / 2
    assert "font-family" in CONTROL_CSS and "select:not([multiple])" in CONTROL_CSS
