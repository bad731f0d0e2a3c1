"""The quick components send what Panel's own would, without working out the theme again.

They are Panel's HTML pane, select and text box with one private method each
replaced (:mod:`explorer.quick`): these tests hold them to Panel's own result,
and fail if Panel stops calling the replaced method (the theme is asked again).
"""

from __future__ import annotations

import panel as pn
import pytest
from bokeh.document import Document
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.quick import QuickHTML, QuickSelect
from explorer.style import CSS


def drawn(component):
    """``component`` and the model Panel drew it as, in a document of its own."""
    model = component.get_root(Document())
    return component, model


@pytest.fixture
def theme_asks(monkeypatch) -> list:
    """Every time a component asks its theme (Panel's design) for its styling."""
    from panel.theme.base import Design

    asks: list = []
    params = Design.params

    def counted(self, viewable, doc=None):
        asks.append(type(viewable).__name__)
        return params(self, viewable, doc)

    monkeypatch.setattr(Design, "params", counted)
    return asks


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=80))
def test_a_quick_html_pane_shows_any_text_as_panels_pane_does(text):
    quick, quick_model = drawn(QuickHTML("", stylesheets=[CSS], sizing_mode="stretch_width"))
    plain, plain_model = drawn(pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width"))
    quick.object = plain.object = text
    assert described(quick_model) == described(plain_model)


def test_a_quick_html_pane_still_changes_everything_else(theme_asks):
    quick, model = drawn(QuickHTML("<b>a</b>", stylesheets=[CSS]))
    quick.param.update(visible=False, css_classes=["candela-x"], width=123)
    assert (model.visible, model.css_classes, model.width) == (False, ["candela-x"], 123)


def described(model) -> dict:
    """A model's properties, its stylesheets as their addresses or text."""
    props = model.properties_with_values(include_defaults=True)
    props["stylesheets"] = [
        s if isinstance(s, str) else getattr(s, "url", None) or s.css for s in model.stylesheets
    ]
    return props


QUICK_AND_PANELS = [
    (QuickHTML, pn.pane.HTML, {"object": ""}, {"object": "<div>a & b</div>"}),
    (
        QuickSelect,
        pn.widgets.Select,
        {"options": {"(no steps yet)": 0}},
        {"options": {"1. .transpose()": 1}, "value": 1},
    ),
]


@pytest.mark.patched("quick_updates")
@pytest.mark.parametrize(("quick", "panels", "start", "change"), QUICK_AND_PANELS)
def test_a_quick_change_reaches_the_page_as_panels_does_without_asking_the_theme(
    theme_asks, quick, panels, start, change
):
    from explorer.patches.quick_updates import quick_updates

    assert quick_updates()  # as the server's and a notebook's entry points install it
    ours, our_model = drawn(quick(**start, stylesheets=[CSS]))
    theirs, their_model = drawn(panels(**start, stylesheets=[CSS]))
    theme_asks.clear()
    ours.param.update(**change)
    assert theme_asks == []
    theirs.param.update(**change)
    assert theme_asks  # the instrument works: Panel's own asks on every change
    mine, panel_s = described(our_model), described(their_model)
    assert mine == panel_s


def test_a_quick_stylesheet_change_gets_the_theme_as_panels_own_does():
    quick, quick_model = drawn(QuickSelect(options=["a"], stylesheets=[CSS]))
    plain, plain_model = drawn(pn.widgets.Select(options=["a"], stylesheets=[CSS]))
    sheet = ":host { color: red; }"
    quick.stylesheets = plain.stylesheets = [CSS, sheet]
    assert described(quick_model) == described(plain_model)
    assert sheet in described(quick_model)["stylesheets"]
