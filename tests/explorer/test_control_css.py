"""The parts of the sheet: the widgets', the layouts' and each pane of text's
(``style.for_controls``, ``style.for_layouts``, ``style.for_pane``): the rules of the
whole sheet that can reach a widget's own elements, a row's or column's children, or
what a pane shows, each as written, in the same order.

(Their law in a real page, that each looks the same with its sheet as with the whole
one, is ``test_style_browser.py``.)
"""

from __future__ import annotations

import pytest

from explorer import lessons as L
from explorer.style import (
    CONTROL_CSS,
    CSS,
    LAYOUT_CSS,
    PANE_SHEETS,
    TEXT_CSS,
    explorer_classes,
    for_controls,
    for_layouts,
    for_pane,
)


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


def test_a_panes_sheets_keep_the_rules_of_its_classes_and_of_no_other():
    shared, part = for_pane("candela-fields")
    assert shared == TEXT_CSS and for_pane("candela-heading")[0] is TEXT_CSS
    whole = _rules(CSS)
    assert _rules(shared) <= whole and _rules(part) <= whole
    for at, sel, body in whole:
        named = set(explorer_classes(sel)) - {"candela-big"}
        # every pane's: a rule for no class of the explorer's (but presenter mode's); this
        # pane's: for the fields (in presenter mode too); none for another class
        assert ((at, sel, body) in _rules(shared)) == (not named), sel
        assert ((at, sel, body) in _rules(part)) == (named == {"candela-fields"}), sel
    assert len(shared + part) < len(CSS) / 3  # the point of it


def _panes(ex) -> list:
    """The explorer's panes of text: each with a sheet of its own (``for_pane``)."""
    return [o for o in ex._styled_objects() if PANE_SHEETS.intersection(o.stylesheets)]


def _states():
    """(name, a way to bring an explorer to a state): the page, a bad edit, two views in
    bytes with the cost panel's choices, presenter mode, and every lesson's every step
    with its question waiting, answered wrong, answered and shown."""
    from explorer.app import Explorer

    def typed(ex, **values):
        with ex.typed():
            ex.param.update(**values)
        assert ex.error  # shown on the page
        return ex

    yield "the page", lambda: Explorer()
    yield (
        "steps and a bad edit",
        lambda: typed(Explorer(shape=(3, 4), ops=".transpose()[1:]"), ops=".view((5,))"),
    )
    yield (
        "two views in bytes",
        lambda: Explorer(
            shape=(2, 3, 4), ops=".T", compare=".transpose(0, 2)", unit="float32", warp=32
        ),
    )
    yield "presenter mode", lambda: Explorer(ops=".T", presenter=True)
    for lesson in L.list_lessons():
        for n in range(1, len(lesson.steps) + 1):
            yield (
                f"{lesson.id} step {n}",
                lambda lesson=lesson, n=n: Explorer(lesson=lesson.id, step=n),
            )


def _answered(ex):
    room = ex.classroom
    yield ex
    for typed in ("0", "(3, 4)", "x"):
        room.check(typed)
        yield ex
    room.show_me()
    yield ex


@pytest.mark.parametrize("make", [m for _, m in _states()], ids=[n for n, _ in _states()])
def test_each_pane_of_text_has_every_rule_for_what_it_shows(make):
    # A pane's sheet is named where the pane is made: whatever it shows in any state (its
    # host's classes and its text's), it has every rule of the whole sheet that names only
    # those classes (and presenter mode's).
    ex = make()
    assert len(_panes(ex)) >= 15
    for state in _answered(ex):
        for pane in _panes(state):
            shown = {*explorer_classes(str(getattr(pane, "object", None) or "")), *pane.css_classes}
            has = set().union(*(_rules(s) for s in pane.stylesheets if s in PANE_SHEETS))
            missing = set().union(*map(_rules, for_pane(*shown))) - has
            assert not missing, (pane.css_classes, sorted(shown), sorted(missing)[:3])
