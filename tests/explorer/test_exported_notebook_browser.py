"""A notebook with explorers as others open it: exported by nbconvert, with no kernel.

The notebook is run by nbclient on a kernel of this Python, then exported to HTML
as ``jupyter nbconvert --to html`` does, and opened in Chromium from the file, with
every request off the file refused (a train, or an e-mail attachment).
"""

from __future__ import annotations

import json
import mimetypes
import sys

import pytest
from playwright.sync_api import expect
from test_jupyterlab_plain import cdn_file

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
nbconvert = pytest.importorskip("nbconvert")
pytest.importorskip("ipykernel")

pytestmark = [pytest.mark.browser]

CELLS = [
    "import explorer\nex = explorer.Explorer(shape=(3, 4), ops='.T')\nex",
    "import numpy as np\nx = np.arange(12).reshape(3, 4)\nexplorer.compare(x, x.T[::2])",
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook of :data:`CELLS`, run on a kernel of this Python."""
    root = tmp_path_factory.mktemp("kernel")
    spec = root / "kernels" / "candela-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "candela test kernel", "language": "python"})
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in CELLS])
    mp = pytest.MonkeyPatch()
    mp.setenv("JUPYTER_PATH", str(root))
    try:
        nbclient.NotebookClient(nb, kernel_name="candela-test", timeout=180).execute()
    finally:
        mp.undo()
    return nb


def exported(nb, path, **options) -> str:
    html, _ = nbconvert.HTMLExporter(**options).from_notebook_node(nb)
    path.write_text(html, encoding="utf-8")
    return path.as_uri()


def offline(page, cdn_from_disk: bool = False) -> list[str]:
    """Refuse every request off the file (but, with ``cdn_from_disk``, those to Bokeh's and
    Panel's CDNs, answered with the installed packages' files); the URLs refused."""
    refused: list[str] = []

    def route(r):
        path = cdn_file(r.request.url) if cdn_from_disk else None
        if r.request.url.startswith(("file:", "data:", "blob:")):
            r.continue_()
        elif path is not None and path.is_file():
            kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            r.fulfill(status=200, body=path.read_bytes(), headers={"Content-Type": kind})
        else:
            refused.append(r.request.url)
            r.abort()

    page.context.route("**/*", route)
    return refused


def test_an_exported_notebook_says_that_editing_needs_python_where_the_boxes_are(
    page, executed, tmp_path
):
    # Panel 1.9's export holds Panel's JavaScript (the explorer inlines it); Panel 1.10's,
    # or one made with every patch off, links its CDN: answered here from the installed
    # files, as the CDN would, so that the page draws on every release.
    offline(page, cdn_from_disk=True)
    page.goto(exported(executed, tmp_path / "plain.html"))
    explorers = page.locator(".candela-explorer")
    expect(explorers).to_have_count(2, timeout=30_000)
    for i in range(2):
        ex = explorers.nth(i)
        # The explorer draws (its walk and hover run in the page) ...
        expect(ex.locator(".candela-shape").first).to_be_visible(timeout=30_000)
        # ... and every box says it cannot be typed into, with a note a person reads.
        boxes = ex.locator(".candela-enter-box input")
        expect(boxes.first).to_be_disabled(timeout=30_000)
        assert all(boxes.evaluate_all("els => els.map(e => e.disabled)"))
        note = ex.locator(".candela-no-python-note")
        expect(note).to_have_count(1)
        expect(note).to_be_visible()
        expect(note).to_contain_text("No Python behind this page")


def test_a_sanitized_export_shows_each_explorers_still_picture_not_script_text(
    page, executed, tmp_path
):
    # nbviewer's and GitHub's way: the HTML sanitized, no script runs, no SVG kept. Each
    # explorer shows its grid (the buffer position each cell reads), its buffer and its
    # fields; for compare both views and the lane. No script's text shows anywhere.
    from candela import Layout

    offline(page)
    page.goto(exported(executed, tmp_path / "sanitized.html", sanitize_html=True))
    page.wait_for_timeout(1000)
    stills = page.locator(".candela-still-html")
    expect(stills).to_have_count(2)
    text = page.locator("body").inner_text()
    assert "docs_json" not in text and "<script" not in text and "function(" not in text
    assert page.evaluate("document.documentElement.scrollHeight") < 4000
    first, second = (stills.nth(i).inner_text() for i in range(2))
    transposed = Layout((3, 4)).transpose()
    rows = [line.split() for line in first.splitlines()]
    grid = [[int(v) for v in r] for r in rows if r and all(v.isdigit() for v in r)]
    assert grid == transposed.positions().reshape(4, 3).tolist(), first
    assert f"stride {transposed.stride}" in first and "memory buffer, 12 positions" in first
    b = Layout((3, 4)).transpose().slice((slice(None, None, 2),))
    assert "A: logical grid (3, 4)" in second and "B: logical grid (2, 3)" in second
    assert f"stride {b.stride}" in second and "0AB" in second and "1A" in second
    page.screenshot(path=str(tmp_path / "sanitized.png"))


def test_a_notebook_opened_untrusted_in_jupyterlab_shows_each_explorers_still_picture(
    browser, executed, tmp_path_factory
):
    # A notebook someone sends you: saved with its outputs, never run here, so JupyterLab
    # opens it untrusted (no script of it runs, its HTML sanitized). Each explorer shows
    # its still picture, not run-together text, and nothing is asked of the network.
    pytest.importorskip("jupyterlab")
    from tests.explorer.test_jupyterlab import Jupyter, Offline

    jupyter = Jupyter(tmp_path_factory.mktemp("untrusted"))
    offline = Offline(browser)
    try:
        nbformat.write(executed, str(jupyter.notebooks / "sent.ipynb"))  # unsigned
        page = offline.page()
        page.goto(f"{jupyter.url}/lab/tree/sent.ipynb?reset")
        outputs = page.locator(".jp-OutputArea-output")
        stills = page.locator(".jp-OutputArea-output .candela-still-html")
        expect(stills).to_have_count(2, timeout=60_000)
        expect(stills.first).to_be_visible()
        first, second = (stills.nth(i).inner_text() for i in range(2))
        assert "the buffer position each cell reads" in first and "stride (1, 4)" in first
        assert "A: logical grid (3, 4)" in second and "B: logical grid (2, 3)" in second
        text = " ".join(outputs.evaluate_all("els => els.map(e => e.innerText)"))
        assert "01234567891011" not in text.replace(" ", "").replace("\n", " ")
        assert "docs_json" not in text and "function(" not in text
        assert page.locator(".jp-OutputArea-output .candela-explorer").count() == 0
        assert offline.blocked == [], offline.blocked
        page.screenshot(path=str(tmp_path_factory.getbasetemp() / "untrusted.png"))
    finally:
        offline.close()
        jupyter.stop()


def test_each_outputs_picture_for_viewers_that_show_pictures_draws_every_view(executed):
    # GitHub and nbviewer may show an output's image/svg+xml: a compare's shows both views.
    svgs = [o["data"]["image/svg+xml"] for c in executed.cells for o in c.outputs
            if "image/svg+xml" in o.get("data", {})]  # fmt: skip
    assert len(svgs) == 2
    assert "logical grid (4, 3)" in svgs[0] and "B: logical grid" not in svgs[0]
    assert "A: logical grid (3, 4)" in svgs[1] and "B: logical grid (2, 3)" in svgs[1]
