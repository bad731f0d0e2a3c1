"""Explorers in a real JupyterLab, cells run one at a time as a person runs them.

``test_jupyterlab.py`` runs whole notebooks ("Run All"); here each cell is run
on its own with Shift+Enter, waiting for it and for what it draws before the
next, because what happens between changes (comm messages from the page
handled while the next cell runs) is what "Run All" hides. JupyterLab sends
comm messages on kernel subshells by default (``commsOverSubshells``); the
tests run with it on and off. The server, the kernelspec and the offline
browser context are ``test_jupyterlab.py``'s.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request

import pytest
from playwright.sync_api import expect
from test_jupyterlab import CANVAS_INK, LAB_LOAD, Jupyter, Offline, explorers, open_notebook

# Offline, as in test_jupyterlab: on Panel 1.9 the explorer's Panel files are inline
# only with the fix for redrawn panes (with CANDELA_PLAIN they come from Panel's CDN, cut
# off here); Panel 1.10 serves them from its Jupyter server extension.
pytestmark = [pytest.mark.browser, pytest.mark.patched(*LAB_LOAD)]

SETTINGS = "/lab/api/settings/@jupyterlab/apputils-extension:kernels-settings"


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory):
    server = Jupyter(tmp_path_factory.mktemp("jupyterlab-cells"))
    try:
        yield server
    finally:
        server.stop()


def set_comms_over_subshells(jupyter: Jupyter, value: str) -> None:
    raw = json.dumps({"raw": json.dumps({"commsOverSubshells": value})}).encode()
    request = urllib.request.Request(jupyter.url + SETTINGS, data=raw, method="PUT")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10):
        pass


def write_notebook(jupyter: Jupyter, name: str, sources: list[str]) -> str:
    cells = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": s}
        for s in sources
    ]
    nb = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "candela-test", "display_name": "candela test kernel",
                                    "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }  # fmt: skip
    (jupyter.notebooks / name).write_text(json.dumps(nb))
    return name


def saved_count(path, i: int) -> int | None:
    """Cell ``i``'s execution count in the saved file (None while it is being written)."""
    try:
        return json.loads(path.read_text())["cells"][i]["execution_count"]
    except (ValueError, KeyError, IndexError):
        return None


def kernel_idle(jupyter: Jupyter, name: str) -> bool:
    kernel = [s["kernel"] for s in jupyter.sessions() if s["path"] == name]
    return bool(kernel) and kernel[0]["execution_state"] == "idle"


def run_cell(page, jupyter: Jupyter, name: str, i: int, timeout: float = 120) -> None:
    """Select cell ``i``, press Shift+Enter, wait until it has run and the kernel is idle."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(i)
    prompt = cell.locator(".jp-InputPrompt")
    before = prompt.text_content().strip()
    prompt.click()
    page.keyboard.press("Shift+Enter")
    deadline = time.monotonic() + timeout
    while True:
        now = prompt.text_content().strip()
        if now != before and re.fullmatch(r"\[\d+\]:?", now) and kernel_idle(jupyter, name):
            return
        assert time.monotonic() < deadline, f"cell {i}: prompt {now!r}"
        page.wait_for_timeout(200)


def output_text(page, i: int) -> str:
    cell = page.locator(".jp-Notebook .jp-Cell").nth(i)
    return cell.locator(".jp-OutputArea").text_content()


@pytest.mark.parametrize("subshells", ["perCommTarget", "disabled"])
@pytest.mark.patched("comm_stdout")
def test_print_still_prints_after_an_explorer_shown_twice_is_changed_cell_by_cell(
    browser, jupyter, subshells
):
    set_comms_over_subshells(jupyter, subshells)
    name = write_notebook(
        jupyter,
        f"print-{subshells}.ipynb",
        [
            "import sys\nimport explorer\nex = explorer.Explorer(shape=(3, 4))\nex",
            "ex",
            'ex.ops = ".transpose()"',
            'ex.ops = ".transpose().transpose()"',
            'ex.ops = ""',
            'print("printed", 6 * 7)\nprint("to stderr", file=sys.stderr)',
        ],
    )
    offline = Offline(browser)
    try:
        page = open_notebook(offline, jupyter, name)
        for i in range(5):
            run_cell(page, jupyter, name, i)
            if i < 2:
                expect(explorers(page)).to_have_count(i + 1, timeout=60_000)
                expect(explorers(page).nth(i).locator("canvas").first).to_be_attached()
            page.wait_for_timeout(1000)  # a person reads what changed; the page talks meanwhile
        expect(explorers(page).nth(1).locator(".candela-shape").first).to_have_text("(3, 4)")
        run_cell(page, jupyter, name, 5)
        expect(
            page.locator(".jp-Notebook .jp-Cell").nth(5).locator(".jp-OutputArea")
        ).to_contain_text("printed 42", timeout=10_000)
        assert "to stderr" in output_text(page, 5)
        assert offline.blocked == []
    finally:
        offline.close()


MEMORY_CELLS = [
    "import gc, sys\nimport explorer\nfrom comm import get_comm_manager\nfrom panel.io.state import state\n"
    "ex = explorer.Explorer(shape=(3, 4))\n"
    "def rss_mb():\n"
    "    gc.collect()\n"
    "    with open('/proc/self/status') as f:\n"
    "        line = next(line for line in f if line.startswith('VmRSS'))\n"
    "    return int(line.split()[1]) / 1024",
    "ex",
    # A new explorer at each run; displayed, not the cell's value, which IPython would keep
    # (Out, _, _N) as it keeps any value.
    "display(explorer.Explorer(shape=(3, 4)))",
    "print('views', len(ex._views), 'panel', len(state._views),\n"
    "      'comms', len(get_comm_manager().comms), 'rss', round(rss_mb(), 2))",
]


def read_counts(page, jupyter, name) -> dict[str, float]:
    run_cell(page, jupyter, name, 3)
    out = page.locator(".jp-Notebook .jp-Cell").nth(3).locator(".jp-OutputArea")
    expect(out).to_contain_text("rss")
    text = out.text_content()
    print(text)
    words = text[text.index("views") :].split("\n")[0].split()[:8]
    return {k: float(v) for k, v in zip(words[::2], words[1::2])}


@pytest.mark.patched("forget_outputs", "load_once", "release_listeners")
def test_rerunning_an_explorer_cell_drops_the_views_that_are_gone(browser, jupyter):
    # Cell 1 shows the same explorer again at every run, cell 2 a new one. The page
    # clears a cell's outputs when it runs again; the kernel must stop drawing them,
    # and the page must let go of them. Cell 1's explorer carries Panel's JavaScript,
    # sent again at each of its runs (so a notebook saved then reopens drawn).
    set_comms_over_subshells(jupyter, "perCommTarget")
    name = write_notebook(jupyter, "memory.ipynb", MEMORY_CELLS)
    offline = Offline(browser)
    try:
        page = open_notebook(offline, jupyter, name)
        run_cell(page, jupyter, name, 0)

        def rerun(times, cells):
            for _ in range(times):
                for i in cells:
                    run_cell(page, jupyter, name, i)
                    cell = page.locator(".jp-Notebook .jp-Cell").nth(i)
                    drawn = cell.locator(".candela-explorer canvas").first
                    expect(drawn).to_be_attached(timeout=60_000)

        cdp = page.context.new_cdp_session(page)

        def heap_mb() -> float:
            cdp.send("HeapProfiler.collectGarbage")
            return cdp.send("Runtime.getHeapUsage")["usedSize"] / 2**20

        rerun(5, (1, 2))  # the allocators of kernel and page settle in (a few MB, once)
        before = read_counts(page, jupyter, name)
        heap = heap_mb()
        runs = 10  # each cell: 20 re-runs of a cell showing an explorer
        rerun(runs, (1, 2))
        after = read_counts(page, jupyter, name)
        heap_after = heap_mb()
        # One view of `ex` is shown; it keeps at most the one it was built with besides.
        assert after["views"] == before["views"] <= 2, (before, after)
        assert after["panel"] == before["panel"], (before, after)  # Panel's views
        assert after["comms"] == before["comms"], (before, after)  # the kernel's comms
        # Cleared outputs redraw nothing, and their HTML is not kept (IPython's history
        # of output bundles keeps only their text and still picture).
        growth = (after["rss"] - before["rss"]) / (2 * runs)
        page_growth = (heap_after - heap) / (2 * runs)
        print(f"kernel +{growth:.2f} MB a run; page heap {heap:.1f} -> {heap_after:.1f} MB")
        assert growth <= 0.5, f"the kernel grows {growth:.2f} MB a run"
        # The page runs Panel's JavaScript once however often it is sent
        # (explorer.patches.load_once), and a cleared output's views drop the listeners
        # BokehJS left on the window (explorer.patches.release_listeners).
        assert page_growth <= 0.5, f"the page's JavaScript heap grows {page_growth:.2f} MB a run"
    finally:
        offline.close()


@pytest.mark.parametrize(
    "order, loader",
    [((0, 1, 2, 1, 3), 1), ((0, 2, 1, 3), 2)],
    ids=["first-explorer-cell-again", "lower-explorer-cell-first"],
)
def test_a_notebook_saved_after_cells_ran_in_any_order_reopens_drawn(
    browser, jupyter, order, loader
):
    # The first explorer a page displays carries Panel's JavaScript. Running that cell
    # again clears it (the next explorer carries it again); an explorer cell run after a
    # lower one sits above the output that carries it. Saved then and reopened with no
    # kernel running, every output must draw, another Panel output's too.
    set_comms_over_subshells(jupyter, "perCommTarget")
    name = write_notebook(
        jupyter,
        f"saved-{len(order)}.ipynb",
        [
            "import explorer",
            "ex1 = explorer.Explorer(shape=(3, 4))\nex1",
            "ex2 = explorer.Explorer(shape=(2, 3), ops='.transpose()')\nex2",
            "import panel as pn\npn.pane.Markdown('another **Panel** output')",
        ],
    )
    offline = Offline(browser)
    try:
        page = open_notebook(offline, jupyter, name)
        for i in order:
            run_cell(page, jupyter, name, i)
        expect(explorers(page)).to_have_count(2, timeout=60_000)
        page.locator(".jp-Notebook .jp-Cell").nth(0).locator(".jp-InputPrompt").click()
        page.keyboard.press("Control+s")
        path = jupyter.notebooks / name
        deadline = time.monotonic() + 30
        while saved_count(path, order[-1]) != len(order):
            assert time.monotonic() < deadline, "the notebook was not saved"
            page.wait_for_timeout(200)
        # The cell whose output carries Panel's JavaScript: in the second order, below
        # the explorer cell run last.
        saved = json.loads(path.read_text())["cells"]
        carriers = {
            i
            for i, cell in enumerate(saved)
            for output in cell.get("outputs", [])
            if "application/vnd.candela.panel-load+json" in output.get("data", {})
        }
        assert carriers == {loader}, carriers
        page.close()
        for session in jupyter.sessions():
            request = urllib.request.Request(
                f"{jupyter.url}/api/sessions/{session['id']}", method="DELETE"
            )
            urllib.request.urlopen(request, timeout=20).close()
    finally:
        offline.close()
    offline = Offline(browser)
    try:
        page = offline.page()
        page.goto(f"{jupyter.url}/lab/tree/{name}?reset")
        expect(explorers(page)).to_have_count(2, timeout=60_000)
        for i, shape in enumerate(("(3, 4)", "(3, 2)")):
            ex = explorers(page).nth(i)
            expect(ex.locator(".candela-shape").first).to_have_text(shape, timeout=30_000)
            inks = [c.evaluate(CANVAS_INK) for c in ex.locator("canvas").all()]
            assert len(inks) >= 2 and min(inks) >= 2, f"explorer {i + 1}: canvas colours {inks}"
        expect(
            page.locator(".jp-OutputArea-output p", has_text="another Panel output")
        ).to_be_visible(timeout=30_000)
        # Only the other output's stylesheets are asked of Panel's CDN, as Panel links them
        # by default: the explorer's own are inline.
        assert all(
            url.startswith("https://cdn.holoviz.org/panel/") and ".css" in url
            for url in offline.blocked
        ), offline.blocked
        missing = [e for e in offline.errors if "Bokeh" in e or "Panel" in e]
        assert missing == [], missing
    finally:
        offline.close()
