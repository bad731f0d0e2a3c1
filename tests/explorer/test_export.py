"""The offline page: ``Explorer.save_html``, the download button, ``--export``, and
the page itself in Chromium with every network request blocked.
"""

from __future__ import annotations

import re

import pytest

from candela import Layout
from explorer.app import Explorer
from explorer.cli import main
from explorer.export import export_html
from explorer.testing import MARKS_JS

FIELDS = ("shape", "stride", "adj-stride", "offset", "len", "is-contiguous", "is-transposed")
TRANSPOSED = ["(4, 3)", "(1, 4)", "(-7, 4)", "0", "12", "False", "True"]


def assert_self_contained(page: str) -> None:
    assert not re.search(r"<script[^>]*\bsrc=", page), "every script inlined"
    assert not re.search(r"<link[^>]*href=\"?https?:", page), "no linked stylesheet or icon"
    assert "cdn.holoviz.org/panel" not in page, "Panel's widget stylesheets inlined"
    assert '"name":"ImportedStyleSheet"' not in page and '"name":"InlineStyleSheet"' in page


def test_save_html_writes_one_self_contained_page(tmp_path):
    ex = Explorer(shape=(3, 4), ops=".transpose()")
    path = ex.save_html(tmp_path / "page.html")
    page = path.read_text(encoding="utf-8")
    assert_self_contained(page)
    assert "args.frames.__candela" in page  # traverse.mjs, for play, scrub and hover
    worked = "adj_stride[0] = 1 - 4*(3-1) = -7"
    assert "candela-adj-stride" in page and worked in re.sub(r"&amp;lt;.*?&amp;gt;", "", page)


def test_export_is_of_the_last_good_state_and_leaves_the_explorer_alone():
    ex = Explorer(shape=(3, 4), ops=".transpose()")
    with ex.typed():
        ex.ops = ".transpose().view((12,))"  # bad: the explorer keeps showing the transpose
    assert ex.error
    figure_doc = ex.figures.logical_figure.document
    page = export_html(ex)
    assert ".transpose()" in page and ".view((12,))" not in page
    # Built from a copy: the explorer's own figures still belong where they were.
    assert ex.figures.logical_figure.document is figure_doc
    assert ex.layout == Layout((3, 4)).transpose()


def test_the_page_is_made_with_no_lazy_loading_and_every_other_page_keeps_it():
    # Panel 1.10 names its CDN in a page that may load libraries later (lazy_resources);
    # the offline page is made with that off, for its own document only.
    import panel as pn
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from explorer.state import ExplorerState

    if "lazy_resources" not in pn.config.param:
        pytest.skip(f"Panel {pn.__version__} loads no library lazily")
    asking = Document()  # the served page whose download button was pressed
    with set_curdoc(asking):
        page = export_html(ExplorerState(shape=(2, 3)))
        assert pn.config.lazy_resources is True
    assert pn.config.lazy_resources is True
    assert "__panel_resources__.declare" not in page and "cdn.holoviz.org" not in page


def test_download_button_hands_out_the_current_state():
    ex = Explorer(shape=(2, 5), ops="")
    ex.ops = ".narrow(1, 1, 3)"
    data = ex.download_button.callback().getvalue().decode("utf-8")
    assert_self_contained(data)
    assert ".narrow(1, 1, 3)" in data
    # Named for the state at the click: the button was made before the edit.
    assert ex.download_button.filename == "candela-2x5-narrow.html"


def test_cli_export(tmp_path, capsys):
    path = tmp_path / "cli.html"
    assert main(["--export", str(path), "--shape", "3,4", "--ops", ".transpose()"]) == 0
    assert_self_contained(path.read_text(encoding="utf-8"))
    assert str(path) in capsys.readouterr().out
    bad = tmp_path / "bad.html"
    assert main(["--export", str(bad), "--shape", "3,-1"]) == 2
    assert "negative" in capsys.readouterr().err and not bad.exists()


# --------------------------------------------------------------------------- in Chromium

MODEL = "(name) => Bokeh.documents[0].get_model_by_name(name)"


def model_js(body: str) -> str:
    return f"() => {{ const m = {MODEL}; const mark = ({MARKS_JS})(m); {body} }}"


@pytest.fixture(scope="module")
def offline_page(tmp_path_factory):
    path = tmp_path_factory.mktemp("offline") / "transpose.html"
    assert main(["--export", str(path), "--shape", "3,4", "--ops", ".transpose()"]) == 0
    return path


@pytest.fixture
def offline(page, offline_page):
    """The exported page opened from file:// with every other request aborted and recorded."""
    pytest.importorskip("playwright")
    attempts = []

    def block(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            attempts.append(route.request.url)
            route.abort()

    page.route("**/*", block)
    errors = []  # a bundle the page needs but lacks (it has no WebGL one) would show here
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "request",
        lambda r: None if r.url.startswith(("file:", "data:")) else attempts.append(r.url),
    )
    page.goto(offline_page.as_uri())
    page.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0"
        " && Bokeh.documents[0].get_model_by_name('frames-source') !== null"
    )
    page.locator(".candela-shape").wait_for()
    yield page
    assert [u for u in attempts if u.startswith(("http:", "https:", "ws:", "wss:"))] == []
    assert errors == []


@pytest.mark.browser
def test_offline_page_renders_styled_with_no_network(offline):
    from playwright.sync_api import expect

    page = offline
    for name, value in zip(FIELDS, TRANSPOSED):
        expect(page.locator(f".candela-{name}")).to_have_text(value)
    shape = page.locator(".candela-shape")
    assert shape.is_visible()
    # Panel's theme stylesheet (inlined) defines its variables on the pane's host...
    assert (
        shape.evaluate("e => getComputedStyle(e).getPropertyValue('--panel-primary-color').trim()")
        == "#0072b5"
    )
    # ...and the explorer's own stylesheet styles the fields.
    assert shape.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(243, 243, 243)"
    # The bokeh canvas drew the grid: the figure has a laid-out size.
    assert (
        page.evaluate(
            model_js(
                "const v = Bokeh.index.find_one(m('logical-figure'));"
                " return v.canvas_view.el.getBoundingClientRect().width"
            )
        )
        > 50
    )


@pytest.mark.browser
def test_offline_page_plays_scrubs_and_hovers(offline):
    from playwright.sync_api import expect

    page = offline
    positions = page.evaluate(model_js("return Array.from(m('frames-source').data.pos)"))
    assert positions == list(Layout((3, 4)).transpose().positions())
    page.wait_for_function(model_js("return mark('logical', 'cursor').k[0] === 0"))
    # Record every frame the page draws (cursor index and buffer position), in the page.
    page.evaluate(
        model_js("""
        window.__seen = [];
        const tick = () => {
            const k = mark('logical', 'cursor').k[0];
            const last = window.__seen[window.__seen.length - 1];
            if (last === undefined || last[0] !== k)
                window.__seen.push([k, mark('buffer', 'cursor').pos[0]]);
            requestAnimationFrame(tick);
        };
        tick();""")
    )
    page.evaluate(model_js("m('speed-slider').value = 10"))
    page.locator(".bk-btn", has_text="play").click()
    page.wait_for_function(
        "() => window.__seen.length > 0 && window.__seen[window.__seen.length - 1][0] === 11"
    )
    seen = page.evaluate("() => window.__seen")
    ks = [k for k, _ in seen]
    assert ks[0] == 0 and ks[-1] == 11 and len(ks) >= 4, "several frames drawn on the way"
    assert ks == sorted(ks), "the highlight only moves forward while playing"
    assert all(pos == positions[k] for k, pos in seen), "logical and buffer cells together"
    # The walk has ended: the play/pause button offers play again.
    expect(page.locator(".candela-toggle .bk-btn")).to_have_text("▶ play")
    # Scrub to frame 3: the walk's first backward jump (-7).
    page.evaluate(model_js("m('frame-slider').value = 3"))
    page.wait_for_function(model_js("return mark('logical', 'cursor').k[0] === 3"))
    expect(page.locator(".candela-odometer-delta")).to_have_text("−7")
    assert page.evaluate(model_js("return mark('buffer', 'cursor').pos[0]")) == positions[3]
    # Hover logical cell 5: its buffer cell lights up.
    x, y = page.evaluate(model_js("const d = m('logical-source').data; return [d.x[5], d.y[5]]"))
    px, py = page.evaluate(
        """([x, y]) => {
            const v = Bokeh.index.find_one(Bokeh.documents[0].get_model_by_name('logical-figure'));
            const r = v.canvas_view.el.getBoundingClientRect();
            return [r.left + v.frame.x_scale.compute(x), r.top + v.frame.y_scale.compute(y)];
        }""",
        [x, y],
    )
    page.mouse.move(px, py)
    page.wait_for_function(model_js("return mark('buffer', 'hover').x.length === 1"))
    assert page.evaluate(
        model_js(
            "const d = m('buffer-source').data, h = mark('buffer', 'hover');"
            f" return h.x[0] === d.x[{positions[5]}] && h.y[0] === d.y[{positions[5]}]"
        )
    )


@pytest.mark.browser
def test_download_button_in_the_served_app(open_explorer):
    from playwright.sync_api import expect

    page = open_explorer("?shape=2,3")
    ops = page.locator(".candela-ops-input input")
    ops.fill(".transpose()")
    ops.press("Enter")  # the page is named for the state at the click, not when it opened
    expect(page.locator(".candela-shape")).to_have_text("(3, 2)")
    with page.expect_download() as info:
        page.locator(".candela-download button, .candela-download a").first.click()
    download = info.value
    assert download.suggested_filename == "candela-2x3-transpose.html"  # what it shows
    text = download.path().read_text(encoding="utf-8")
    assert_self_contained(text)
    assert "adj_stride[0] = 1 - 3*(2-1) = -2" in re.sub(r"&amp;lt;.*?&amp;gt;", "", text)
