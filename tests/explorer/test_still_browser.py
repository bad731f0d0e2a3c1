"""Where scripts do not run, an explorer's output still shows a picture of its layout.

A notebook with an explorer is executed on a real kernel (nbclient, this
process's Python) and exported by nbconvert to HTML. Opened in Chromium with
JavaScript disabled (as GitHub's and nbviewer's notebook views, or a mail
reader, show it), the output shows the still picture in its HTML: the grid's
cells as the positions candela computes here, and the fields (the bundle also
carries it as an SVG). With JavaScript the same file draws the live explorer
instead, and no picture.
"""

from __future__ import annotations

import json
import sys

import pytest
from playwright.sync_api import expect

from candela import Layout

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
nbconvert = pytest.importorskip("nbconvert")

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    return export(tmp_path_factory)


@pytest.fixture(scope="module")
def exported_linked(tmp_path_factory):
    """The same notebook with Panel's JavaScript linked, not in it (``PANEL_INLINE=false``
    in the kernel; Panel 1.10's own way): opened with no network, it cannot draw."""
    return export(tmp_path_factory, PANEL_INLINE="false")


def export(tmp_path_factory, **environ):
    """The notebook run on a kernel of this Python and exported: (its result, the file)."""
    root = tmp_path_factory.mktemp("still")
    spec = root / "kernels" / "candela-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "candela test kernel", "language": "python"})
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import explorer\nexplorer.Explorer(shape=(3, 4), ops='.transpose()')"
        )
    ]
    mp = pytest.MonkeyPatch()
    mp.setenv("JUPYTER_PATH", str(root))
    for name, value in environ.items():
        mp.setenv(name, value)
    try:
        nbclient.NotebookClient(nb, kernel_name="candela-test", timeout=180).execute()
    finally:
        mp.undo()
    (result,) = [o for o in nb.cells[0].outputs if o.output_type == "execute_result"]
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    path = root / "explorer.html"
    path.write_text(body)
    return result, path


def test_the_output_bundle_carries_a_still_svg(exported):
    result, _ = exported
    assert "application/vnd.holoviews_exec.v0+json" in result.data  # still live where it can be
    assert result.data["image/svg+xml"].startswith("<svg")
    html = result.data["text/html"]
    assert html.startswith('<div><div class="candela-still-html">')  # first, before the scripts
    assert 'class="candela-still"' not in html  # (the SVG: sanitizers keep its text only)


def test_without_javascript_the_exported_page_shows_the_layout(browser, exported):
    _, path = exported
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        still = page.locator(".candela-still-html")
        still.wait_for(state="visible", timeout=10_000)
        box = still.bounding_box()
        assert box["width"] > 100 and box["height"] > 100, box
        text = still.inner_text()
        layout = Layout((3, 4)).transpose()
        rows = [line.split() for line in text.splitlines()]
        grid = [int(v) for r in rows if r and all(v.isdigit() for v in r) for v in r]
        assert grid == [int(p) for p in layout.positions()], text
        assert f"stride {layout.stride}" in text, text
        assert "docs_json" not in page.locator("body").inner_text()  # the scripts stay hidden
        page.screenshot(path=str(path.with_suffix(".png")))
    finally:
        context.close()


# Drawn with no network only from Panel's files inline in the notebook, which needs the
# fix for redrawn panes (with CANDELA_PLAIN the page asks Panel's CDN for them).
@pytest.mark.patched("inline_panes")
def test_with_javascript_the_exported_page_draws_the_live_explorer(browser, exported):
    _, path = exported
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        page.locator(".candela-explorer .candela-shape").first.wait_for(timeout=60_000)
        expect(page.locator(".candela-still-html").first).to_be_hidden()  # once drawn
    finally:
        context.close()


def test_where_panels_javascript_cannot_be_loaded_the_page_shows_the_layout(
    browser, exported_linked
):
    # Scripts run, but the files they ask the network for never come (an exported
    # notebook opened on a train): no explorer can be drawn, and the still picture stays.
    _, path = exported_linked
    context = browser.new_context()
    refused: list[str] = []

    def route(r):
        if r.request.url.startswith(("file:", "data:", "blob:")):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_timeout(3000)  # what the scripts do meanwhile, they have done
        assert any("bokeh" in url or "panel" in url for url in refused), refused  # they ran
        assert page.locator(".candela-explorer").count() == 0
        still = page.locator(".candela-still-html")
        expect(still).to_be_visible()
        layout = Layout((3, 4)).transpose()
        rows = [line.split() for line in still.inner_text().splitlines()]
        grid = [int(v) for r in rows if r and all(v.isdigit() for v in r) for v in r]
        assert grid == [int(p) for p in layout.positions()], rows
    finally:
        context.close()
