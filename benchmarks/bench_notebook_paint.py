"""Benchmark an explorer's display in JupyterLab as a person sees it: cell run to last paint.

Prints figures; it is not a test with a time limit (these machines are shared
and noisy). A real JupyterLab (this venv's, network cut off as in the notebook
tests) and Chromium: a notebook whose first cell imports and loads Panel's
extension, then a cell whose value is ``explorer.Explorer(shape=(3, 4))`` and
one whose value is a ``pn.pane.Bokeh`` of a figure with 12 rectangles. Each run
scrolls a cell to the top, selects it and presses Ctrl+Enter (run in place);
the clock runs from that key press (the page's own time, stamped before
JupyterLab sees the key) to the animation frame after the last paint of the
output's Bokeh figures (``PlotView._actual_paint``, hooked as in
``bench_explorer.py``), "last" meaning no further paint for ``QUIET_MS``; the
figures must be the output's own (the explorer's grid and buffer, the pane's
figure). The two cells alternate, run after run; medians and their ratio are
printed (the goal: the explorer within 3x the pane). The first explorer of the
session is timed on its own, in a fresh kernel and page, from its cell's key press
to its last paint (the goal: within 1 s, and within 1.5x Panel's own first display,
``pn.extension(inline=True)`` and the pane, timed the same way beside it), two ways:
the imports done in an earlier cell (Panel's extension not yet loaded: the output
carries Panel's JavaScript), and ``import explorer`` in the explorer's own cell (the
cell before it imports nothing of Panel's), as a person's first cell often is.

This measures what the kernel's work (``bench_notebook_display.py``) comes to on
the screen: the kernel's time, the message, JupyterLab putting the output in the
page, Bokeh building and laying out the views, and painting. Run:
``.venv/bin/python benchmarks/bench_notebook_paint.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_explorer import PAINT_HOOK  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from explorer.testing import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.explorer.test_jupyterlab import Jupyter, Offline, open_notebook  # noqa: E402

#: No paint for this long after the output's last one: the output has settled.
QUIET_MS = 700

#: A pane of a figure with 12 rectangles: Panel's own display, to measure against.
PLAIN_PANE = """
def plain():
    fig = figure(width=300, height=200, toolbar_location=None, name="plain-figure")
    fig.rect(x=[i % 4 for i in range(12)], y=[i // 4 for i in range(12)], width=0.9, height=0.9)
    return pn.pane.Bokeh(fig)
"""
PANEL_IMPORTS = "import panel as pn\nfrom bokeh.plotting import figure\n"
SETUP = (
    PANEL_IMPORTS + "import explorer\nfrom explorer.jupyter import ensure_extension\n" + PLAIN_PANE
)
LOAD = "ensure_extension()  # Panel's JavaScript, in this cell's output"
#: Panel's own first display, for reference: its extension (inline, as the explorer's,
#: so that it draws offline) and the pane, in one cell.
FIRST_PLAIN = "pn.extension(inline=True)\nplain()"
EXPLORER = "explorer.Explorer(shape=(3, 4))"
PLAIN = "plain()"
#: A first display whose imports share its cell, as a person's first cell often does:
#: the explorer's, and Panel's own (the same figure and pane).
FIRST_EXPLORER_ALONE = "import explorer\nexplorer.Explorer(shape=(3, 4))"
FIRST_PLAIN_ALONE = PANEL_IMPORTS + PLAIN_PANE + "\npn.extension(inline=True)\nplain()"
#: The cell run before a first display whose imports share its cell: it starts the
#: kernel and imports nothing of Panel's, Bokeh's or the explorer's.
NOTHING = "import sys"
#: The figures each kind of output paints (their Bokeh names).
FIGURES = {EXPLORER: ["logical-figure", "buffer-figure"], PLAIN: ["plain-figure"]}
#: The first display of a session, each way: (the cell before it, its cell, what it paints).
FIRSTS = {
    "imports in an earlier cell": {
        "explorer": (SETUP, EXPLORER, FIGURES[EXPLORER]),
        "Panel": (SETUP, FIRST_PLAIN, FIGURES[PLAIN]),
    },
    "imports in the same cell": {
        "explorer": (NOTHING, FIRST_EXPLORER_ALONE, FIGURES[EXPLORER]),
        "Panel": (NOTHING, FIRST_PLAIN_ALONE, FIGURES[PLAIN]),
    },
}

# Marks the time of each Ctrl+Enter, in the capture phase (before JupyterLab sees it), and
# of each output JupyterLab puts in the page (an output area's child).
KEY_HOOK = """
(() => {
  const k = window.__keys = [], o = window.__outputs = [];
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.ctrlKey) k.push(performance.now());
  }, true);
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes)
      if (n.classList?.contains("jp-OutputArea-child")) o.push(performance.now());
  }).observe(document, {childList: true, subtree: true});
})();
"""

# The key press's time, and the frame after the last paint of each of `names` after it,
# once none has painted for `quiet` ms (null until then).
SETTLED = """([since, quiet, names]) => {
  const r = window.__paints, keys = window.__keys;
  const t0 = keys.filter((t) => t > since).at(-1);
  if (t0 === undefined || !r || r.error) return r && r.error ? {error: r.error} : null;
  const log = r.log.filter((p) => p.t0 > t0);
  const last = Math.max(...log.map((p) => p.t1));
  if (!names.every((n) => log.some((p) => p.name === n))) return null;
  if (performance.now() - r.last < quiet || r.frame < r.last) return null;
  const output = window.__outputs.find((t) => t > t0);
  return {t0, output, first: Math.min(...log.map((p) => p.t0)), frame: r.frame};
}"""


def notebook(cells: list[str], kernel: str) -> dict:
    """A notebook of code cells, on kernelspec ``kernel``."""
    return {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
             "outputs": [], "source": source}
            for i, source in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"name": kernel, "display_name": kernel, "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }  # fmt: skip


def add_kernel(jupyter: Jupyter, name: str, checkout: Path) -> str:
    """A kernelspec ``name`` for ``checkout``'s ``explorer``: its own venv's Python, or, in
    a checkout without one (``git worktree add``), this Python with the checkout first
    on its path; returns the name."""
    spec = Path(jupyter.root) / "jupyter" / "path" / "kernels" / name
    spec.mkdir(parents=True, exist_ok=True)
    python = checkout / ".venv" / "bin" / "python"
    kernel = {"display_name": name, "language": "python"}
    if not python.exists():
        python = Path(sys.executable)
        kernel["env"] = {"PYTHONPATH": str(checkout)}
    kernel["argv"] = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(json.dumps(kernel))
    return name


def run_cell(page, index: int, names: list[str], timeout: float = 120) -> dict[str, float]:
    """Run cell ``index`` in place (Ctrl+Enter); ms from the key press to the frame after
    the last paint of its output's figures ``names`` ("shown"), to the output put in the
    page ("output") and to the start of the first paint ("first paint")."""
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.evaluate("e => e.scrollIntoView({block: 'start'})")
    cell.locator(".jp-InputPrompt").click()  # selects the cell, in command mode
    since = page.evaluate("() => performance.now()")
    page.keyboard.press("Control+Enter")
    deadline = time.monotonic() + timeout
    while True:
        settled = page.evaluate(SETTLED, [since, QUIET_MS, names])
        if settled and "error" in settled:
            raise RuntimeError(f"paint hook failed: {settled['error']}")
        if settled:
            t0 = settled["t0"]
            return {
                "shown": settled["frame"] - t0,
                "output": (settled.get("output") or float("nan")) - t0,
                "first paint": (settled.get("first") or float("nan")) - t0,
            }
        if time.monotonic() > deadline:
            raise RuntimeError(f"cell {index}: figures {names} not painted in {timeout} s")
        page.wait_for_timeout(100)


def wait_idle(jupyter: Jupyter, name: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while jupyter.kernel_of(name)["execution_state"] != "idle":
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name}: kernel busy after {timeout} s")
        time.sleep(0.1)


def shut_down(jupyter: Jupyter, name: str) -> None:
    """Shut down notebook ``name``'s kernel (a first display's: it is not used again)."""
    url = f"{jupyter.url}/api/kernels/{jupyter.kernel_of(name)['id']}"
    with urllib.request.urlopen(urllib.request.Request(url, method="DELETE"), timeout=30):
        pass


def session(browser, jupyter: Jupyter, name: str, cells: list[str], kernel: str):
    """A fresh page (its own context) on notebook ``name`` of ``cells``, its kernel started."""
    (jupyter.notebooks / name).write_text(json.dumps(notebook(cells, kernel)))
    offline = Offline(browser)
    offline.context.add_init_script(PAINT_HOOK)
    offline.context.add_init_script(KEY_HOOK)
    page = open_notebook(offline, jupyter, name)
    wait_idle(jupyter, name)
    run_cell(page, 0, [])  # the imports (and Panel's extension, if asked): nothing painted
    wait_idle(jupyter, name)
    return offline, page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--first-runs",
        type=int,
        default=3,
        help="fresh kernels and pages for the first display (median)",
    )
    parser.add_argument("--against", type=Path, help="another checkout, measured alongside")
    args = parser.parse_args()
    checkouts = {"this checkout": ROOT}
    if args.against:
        checkouts[f"against {args.against}"] = args.against.resolve()
    errors: list[str] = []
    blocked: list[str] = []
    with tempfile.TemporaryDirectory(prefix="candela-bench-") as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        jupyter = Jupyter(Path(tmp))
        try:
            kernels = {label: add_kernel(jupyter, f"bench-{i}", path)
                       for i, (label, path) in enumerate(checkouts.items())}  # fmt: skip
            # The first display of a session, each way (imports in an earlier cell or in
            # its own): a fresh kernel and page, the cell before it run, then its cell. The
            # explorer's (each checkout's) alternates with Panel's own.
            first: dict[tuple[str, str], list] = {}
            for _ in range(args.first_runs):
                for way, cases in FIRSTS.items():
                    runs = [(label, kernel, cases["explorer"]) for label, kernel in kernels.items()]
                    runs.append(("Panel", kernels["this checkout"], cases["Panel"]))
                    for label, kernel, (before, cell, names) in runs:
                        done = first.setdefault((way, label), [])
                        name = f"first-{len(done)}-{abs(hash((way, label)))}.ipynb"
                        offline, page = session(browser, jupyter, name, [before, cell], kernel)
                        done.append(run_cell(page, 1, names))
                        errors += offline.errors
                        blocked += offline.blocked
                        offline.close()
                        shut_down(jupyter, name)
            # Then the two cells alternating in one page per checkout, Panel's extension
            # loaded by a cell above them; the checkouts alternate too.
            pages = {}
            for label, kernel in kernels.items():
                name = f"alternate-{kernel}.ipynb"
                pages[label] = (name, *session(browser, jupyter, name,
                                               [SETUP + LOAD, EXPLORER, PLAIN], kernel))  # fmt: skip
            times = {label: {EXPLORER: [], PLAIN: []} for label in checkouts}
            for i in range(args.runs + 1):  # the first of each warms up, and is dropped
                for label, (name, _, page) in pages.items():
                    page.bring_to_front()  # a page behind others gets its frames late
                    for index, code in ((1, EXPLORER), (2, PLAIN)):
                        took = run_cell(page, index, FIGURES[code])
                        wait_idle(jupyter, name)
                        if i:
                            times[label][code].append(took)
            for _, offline, _ in pages.values():
                errors += offline.errors
                blocked += offline.blocked
                offline.close()
        finally:
            jupyter.stop()
            browser.close()
    print(f"The first display of a session on screen, median of {args.first_runs} fresh kernels "
          f"(the goal: the explorer's within 1.5 x Panel's own, pn.extension(inline=True) and "
          f"the pane in one cell):")  # fmt: skip
    for way in FIRSTS:
        plain_first = statistics.median(r["shown"] for r in first[(way, "Panel")])
        print(f"  {way}: Panel's own {plain_first:.1f} ms")
        for label in checkouts:
            shown = statistics.median(r["shown"] for r in first[(way, label)])
            print(f"    explorer, {label}: {shown:.1f} ms, {shown / plain_first:.2f} x Panel's")
    for label in checkouts:
        report(label, first[("imports in an earlier cell", label)], times[label], args.runs)
    if errors:
        print(f"page errors ({len(errors)}): {sorted(set(errors))[:5]}")
    if blocked:  # the plain pane links Panel's stylesheets from its CDN, cut off here
        print(f"requests off this machine, refused: {len(blocked)}, e.g. {blocked[0]}")


def report(label: str, first: list[dict], times: dict[str, list[dict]], runs: int) -> None:
    def median(runs: list[dict], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    print(f"{label}: JupyterLab, Chromium: cell run (Ctrl+Enter) to the frame after the "
          f"output's last paint, medians")  # fmt: skip
    print(
        f"  first explorer of the session (median of {len(first)} fresh kernels) "
        f"{median(first, 'shown'):7.1f} ms (goal <= 1000 ms): output in the page at "
        f"{median(first, 'output'):.0f} ms, first paint at {median(first, 'first paint'):.0f} ms"
    )
    for name, code in (("explorer", EXPLORER), ("pn.pane.Bokeh, 12 rectangles", PLAIN)):
        got = times[code]
        print(
            f"  {name:29s} {median(got, 'shown'):7.1f} ms (min {min(r['shown'] for r in got):.0f}"
            f", max {max(r['shown'] for r in got):.0f}; {runs} runs): output in the page at "
            f"{median(got, 'output'):.0f} ms, first paint at {median(got, 'first paint'):.0f} ms"
        )
    ratio = median(times[EXPLORER], "shown") / median(times[PLAIN], "shown")
    print(f"  ratio {ratio:4.1f} x (goal <= 3 x)")


if __name__ == "__main__":
    main()
