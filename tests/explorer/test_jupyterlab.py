"""Explorers in a real JupyterLab and Notebook 7, in Chromium, with the network cut off.

One Jupyter server for the module, started from this venv with a kernelspec
for this test process's own Python (in a temporary ``JUPYTER_PATH``, and every
other Jupyter directory temporary too, so the user's Jupyter configuration is
never read or written). Every request from the page to anything but 127.0.0.1
is aborted and counted: an explorer must need none of them. The notebook
(``data/two_explorers.ipynb``) shows one explorer from
``explorer.show(ndarray)`` and one displayed ``Explorer``, without a
``pn.extension()`` call, then changes the second one from Python.

The expensive steps (open and run all, reopen, restart) are module fixtures,
each done once; the tests read what they left on the page.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import panel
import pytest

from explorer.testing import free_port

IN_CI = os.environ.get("CI", "").lower() == "true"
if not IN_CI:  # under CI a missing package fails the run, never skips it
    pytest.importorskip("jupyterlab")
    pytest.importorskip("notebook")
    pytest.importorskip("playwright")
from playwright.sync_api import expect  # noqa: E402

import explorer  # noqa: E402

# What an explorer's notebook load stands on with no network, by Panel's release. On
# Panel 1.9 the explorer inlines Panel's JavaScript and stylesheets, and only with the
# fix for redrawn panes (inline_panes): off (CANDELA_PLAIN) it uses Panel's links to its
# CDN, which this module cuts off. Panel 1.10 serves them from its Jupyter server
# extension, in Notebook 7 only with notebook7_resources (off: from its CDN).
PANEL_19 = panel.__version__.startswith("1.9.")
LAB_LOAD = ("inline_panes",) if PANEL_19 else ()
NOTEBOOK7_LOAD = ("inline_panes",) if PANEL_19 else ("notebook7_resources",)
pytestmark = [pytest.mark.browser, pytest.mark.patched(*LAB_LOAD)]
# Panel 1.9's comm held a typed edit while it waited for an acknowledgement that did not
# come (notebook_comm.mjs sends it on); Panel 1.10's passes the same tests by itself.
COMM_FIX = ("notebook_comm",) if PANEL_19 else ()

NOTEBOOK = Path(__file__).parent / "data" / "two_explorers.ipynb"
KERNEL = "candela-test"
FIELDS = ("shape", "stride", "adj-stride", "offset", "len", "is-contiguous", "is-transposed")
START_TIMEOUT = 60


@functools.cache
def expected_fields() -> list[list[str]]:
    """What the notebook's two explorers show at the end, computed here, not copied."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    shown = explorer.show(x.T)
    plain = explorer.Explorer(shape=(2, 3), ops=".transpose()")
    plain.ops = ""  # the notebook's last cell
    rows = []
    for ex in (shown, plain):
        html = ex.fields_pane.object
        rows.append([re.search(rf'class="candela-{n}">([^<]*)<', html)[1] for n in FIELDS])
    return rows


def _get(url: str, timeout: float = 5) -> object:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.load(response)


def _post(url: str, timeout: float = 10) -> None:
    request = urllib.request.Request(url, data=b"", method="POST")
    with urllib.request.urlopen(request, timeout=timeout):
        pass


class Jupyter:
    """A Jupyter server (JupyterLab and Notebook 7) on 127.0.0.1 serving a temporary folder."""

    def __init__(self, root: Path, env_extra: dict | None = None):
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        home = root / "jupyter"
        spec = home / "path" / "kernels" / KERNEL
        spec.mkdir(parents=True)
        spec.joinpath("kernel.json").write_text(
            json.dumps(
                {
                    "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                    "display_name": "candela test kernel",
                    "language": "python",
                }
            )
        )
        self.notebooks = root / "notebooks"
        self.notebooks.mkdir()
        env = {
            **os.environ,
            "JUPYTER_PATH": str(home / "path"),
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "IPYTHONDIR": str(home / "ipython"),
            "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        }
        for name in ("PANEL_INLINE", "PANEL_COMMS", "VSCODE_PID", "VSCODE_CWD"):
            env.pop(name, None)
        env.update(env_extra or {})
        self.log = open(root / "server.log", "wb")  # closed in stop()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyterlab",
                "--allow-root",
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={self.port}",
                "--IdentityProvider.token=",
                "--ServerApp.password=",
                "--ServerApp.disable_check_xsrf=True",
                f"--notebook-dir={self.notebooks}",
                "--LabApp.news_url=",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                _get(f"{self.url}/api/status", timeout=2)
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("jupyter lab did not start:\n" + self.server_log()) from None
                time.sleep(0.2)

    def server_log(self) -> str:
        if not self.log.closed:
            self.log.flush()
        return (self.root / "server.log").read_text(errors="replace")[-4000:]

    def notebook(self, name: str) -> str:
        """A fresh copy of the fixture notebook under ``name``; returns its file name."""
        shutil.copy(NOTEBOOK, self.notebooks / name)
        return name

    def kernels(self) -> list[dict]:
        return _get(f"{self.url}/api/kernels")

    def sessions(self) -> list[dict]:
        return _get(f"{self.url}/api/sessions")

    def kernel_of(self, name: str) -> dict:
        (session,) = [s for s in self.sessions() if s["path"] == name]
        return session["kernel"]

    def stop(self) -> None:
        """Shut down the kernels and the server; kill them if they do not go."""
        if self.process.poll() is None:
            try:
                _post(f"{self.url}/api/shutdown")
                self.process.wait(timeout=20)
            except (OSError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(timeout=10)
        self.log.close()


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory):
    server = Jupyter(tmp_path_factory.mktemp("jupyterlab"))
    try:
        yield server
    finally:
        server.stop()


class Offline:
    """A browser context whose every request off 127.0.0.1 is aborted and recorded."""

    def __init__(self, browser):
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.context.route("**/*", self._route)

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(("data:", "blob:")) or urlparse(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort("internetdisconnected")

    def page(self):
        page = self.context.new_page()
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc} {exc.stack}"))
        page.on(
            "console",
            lambda msg: self.errors.append(f"console: {msg.text}") if msg.type == "error" else None,
        )
        return page

    def close(self) -> None:
        self.context.close()


def open_notebook(offline: Offline, jupyter: Jupyter, name: str, app: str = "lab"):
    """Open ``name`` in JupyterLab (``app="lab"``) or Notebook 7 and wait for its kernel."""
    page = offline.page()
    path = f"/lab/tree/{name}?reset" if app == "lab" else f"/notebooks/{name}"
    page.goto(jupyter.url + path)
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
    deadline = time.monotonic() + 60
    while not any(s["path"] == name for s in jupyter.sessions()):
        assert time.monotonic() < deadline, f"{name}: no kernel session"
        page.wait_for_timeout(200)
    return page


def run_all(page, jupyter: Jupyter, name: str, menu=("Run", "Run All Cells")) -> None:
    """Pick ``menu`` (the "Run" menu's "Run All Cells"), then wait until every cell has run."""
    top, item = menu
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{top}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click()
    if item.endswith("…"):  # a restart asks first
        page.locator(".jp-Dialog-button.jp-mod-accept").click()
    # The kernel needs seconds to import Panel: the queued prompts show first.
    page.locator(".jp-InputPrompt", has_text="[*]").first.wait_for(timeout=30_000)
    cells = len(json.loads(NOTEBOOK.read_text())["cells"])
    deadline = time.monotonic() + 150
    while True:
        kernel = [s["kernel"] for s in jupyter.sessions() if s["path"] == name]
        state = kernel[0]["execution_state"] if kernel else "starting"
        # textContent, not innerText: a cell scrolled out of view renders no text.
        prompts = page.locator(".jp-InputPrompt").evaluate_all("els => els.map(e => e.textContent)")
        done = [p for p in prompts if re.fullmatch(r"\[\d+\]:?", p.strip())]
        if state == "idle" and len(done) == cells:
            return
        assert time.monotonic() < deadline, f"kernel {state}, prompts {prompts}"
        page.wait_for_timeout(250)


def explorers(page):
    return page.locator(".jp-OutputArea-output .candela-explorer")


def in_view(ex):
    """``ex`` scrolled to the top of the notebook's view and drawn, as a student scrolls to it.

    JupyterLab does not render a cell out of view (``content-visibility: auto``): its text
    is in the page (``textContent``) but ``innerText`` reads ''. After "Run All" the notebook
    shows its last cell, and an explorer higher up (each is taller than the window) is out
    of view, or only its bottom is. The browser renders it again in the
    frames after the scroll: two animation frames are waited for.
    """
    ex.evaluate(
        """e => new Promise(done => {
            e.scrollIntoView({block: "start"})
            requestAnimationFrame(() => requestAnimationFrame(done))
        })"""
    )
    return ex


def fields(ex) -> list[str]:
    """The fields as a student reads them (Panel shows a pane's text once its styles are in)."""
    in_view(ex)
    expect(ex.locator(".candela-fields").first).to_be_visible()
    return [ex.locator(f".candela-{name}").first.inner_text() for name in FIELDS]


def odometers(page) -> list[str]:
    return [
        in_view(explorers(page).nth(i)).locator(".candela-odometer").first.inner_text()
        for i in range(explorers(page).count())
    ]


CANVAS_INK = """(canvas) => {
    const ctx = canvas.getContext('2d');
    if (!ctx || canvas.width === 0 || canvas.height === 0) return 0;
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const colors = new Set();
    for (let i = 0; i < data.length; i += 4 * 5) {
        if (data[i + 3] > 0) colors.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
        if (colors.size > 3) break;
    }
    return colors.size;
}"""


def assert_drawn(page) -> None:
    """Both explorers on the page, with their fields as text and no blank canvas."""
    expected = expected_fields()
    expect(explorers(page)).to_have_count(len(expected), timeout=60_000)
    for i, want in enumerate(expected):
        ex = explorers(page).nth(i)
        expect(ex.locator(".candela-shape").first).to_have_text(want[0], timeout=30_000)
        expect(ex.locator(".candela-odometer").first).to_contain_text("element")
        assert fields(ex) == want, f"explorer {i + 1}"
        canvases = ex.locator("canvas")
        expect(canvases.first).to_be_attached()
        # Colours besides the background: drawn cells, not an empty canvas.
        inks = [canvas.evaluate(CANVAS_INK) for canvas in canvases.all()]
        assert len(inks) >= 2 and min(inks) >= 2, f"explorer {i + 1}: canvas colours {inks}"
    # Each output's still picture (for a page where the explorer cannot draw) is hidden
    # by its explorer, drawn: the page shows each layout once.
    stills = page.locator(".jp-OutputArea-output .candela-still-html")
    expect(stills).to_have_count(len(expected))
    for i in range(len(expected)):
        expect(stills.nth(i)).to_be_hidden()


def assert_offline_and_clean(offline: Offline) -> None:
    assert offline.blocked == [], f"{len(offline.blocked)} requests off 127.0.0.1"
    assert offline.errors == []


# --------------------------------------------------------------------- fixtures
# One notebook, one kernel, three runs (each "Run All Cells" costs tens of seconds):
# first in JupyterLab; then a restart in that page; then the page closed and the
# notebook opened again, in Notebook 7, on the kernel that is still running.


@pytest.fixture(scope="module")
def lab(browser, jupyter):
    """The notebook opened in JupyterLab and run: (context, page, notebook name)."""
    offline = Offline(browser)
    name = jupyter.notebook("explorers.ipynb")
    page = open_notebook(offline, jupyter, name)
    run_all(page, jupyter, name)
    try:
        yield offline, page, name
    finally:
        offline.close()


@pytest.fixture(scope="module")
def restarted(lab, jupyter):
    """Explorer 1 stepped twice, then "Restart Kernel and Run All Cells…": odometers before."""
    offline, page, name = lab
    offline.blocked.clear()  # the earlier tests have read these
    offline.errors.clear()
    forward = explorers(page).nth(0).locator(".bk-btn", has_text="step ▶").first
    forward.click()
    forward.click()
    before = odometers(page)
    kernel = jupyter.kernel_of(name)["id"]
    run_all(page, jupyter, name, menu=("Kernel", "Restart Kernel and Run All Cells…"))
    assert jupyter.kernel_of(name)["id"] == kernel, "a restart keeps the kernel's id"
    return offline, page, before


@pytest.fixture(scope="module")
def reopened(restarted, jupyter):
    """The page closed, the notebook opened in Notebook 7 on the same running kernel, run."""
    offline, page, _ = restarted
    name = jupyter.sessions()[0]["path"]
    kernel = jupyter.kernel_of(name)["id"]
    page.close()
    jupyter.notebook(name)  # whether outputs were saved must not matter: none are
    page = open_notebook(offline, jupyter, name, app="notebook")
    assert jupyter.kernel_of(name)["id"] == kernel, "the kernel was not kept"
    # Notebook 7's own code reports one error while it loads its settings, before
    # any cell runs (it does so for an empty notebook too): not the explorer's.
    assert all("/static/notebook/" in e for e in offline.errors), offline.errors
    offline.blocked.clear()
    offline.errors.clear()
    run_all(page, jupyter, name)
    return offline, page, name


# --------------------------------------------------------------------- tests


def test_lab_draws_both_explorers_with_the_network_cut_off(lab):
    offline, page, _ = lab
    assert_drawn(page)
    assert_offline_and_clean(offline)


def test_each_explorer_fits_its_output_area_with_no_sideways_scroll(lab):
    _, page, _ = lab
    for i in range(2):
        ex = explorers(page).nth(i)
        # The output area's width (about 950 px in a 1280 px window) bounds the explorer.
        area = ex.evaluate("e => e.closest('.jp-OutputArea-output').getBoundingClientRect().width")
        width = ex.evaluate("e => e.getBoundingClientRect().width")
        overflow = ex.evaluate(
            "e => { const o = e.closest('.jp-OutputArea-output'); return o.scrollWidth - o.clientWidth }"
        )
        assert width <= area + 1 and overflow <= 1, (i, width, area, overflow)


#: Where an explorer's parts are on the screen: its top, its pipeline box and its two
#: figures (the grid and the buffer: the first and last of its figures but the cost's).
PARTS_JS = """e => {
  const find = (root, cls, all) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.classList && el.classList.contains(cls)) all.push(el);
      if (el.shadowRoot) find(el.shadowRoot, cls, all);
    }
    return all;
  };
  const box = (el) => el.getBoundingClientRect().toJSON();
  // (the cost panel's units are a figure too, under the traversal: not one of the two)
  const figures = find(e.shadowRoot || e, "bk-Figure", [])
    .filter((f) => !f.classList.contains("candela-cost-figure"));
  return {top: box(e).top, right: box(e).right, ops: box(find(e.shadowRoot || e, "candela-ops-input", [])[0]),
          figures: [box(figures[0]), box(figures[figures.length - 1])]};
}"""


def test_in_an_840_px_output_the_figures_are_on_the_first_screen(lab):
    # JupyterLab in a 1280 px window: an output about 840 px wide. Scrolled to, an
    # explorer shows its grid and its buffer beside its pipeline box, whole, on the first
    # screen (they were under the controls, ~800 px down).
    _, page, _ = lab
    page.set_viewport_size({"width": 1280, "height": 800})
    try:
        ex = explorers(page).nth(0)
        area = ex.evaluate("e => e.closest('.jp-OutputArea-output').clientWidth")
        assert 780 <= area <= 900, area
        in_view(ex)
        page.wait_for_function(
            f"e => {{ const p = ({PARTS_JS})(e); return p.figures[1].bottom - p.top <= 800"
            " && p.figures.every((f) => f.right <= p.right) }",
            arg=ex.element_handle(),
        )
        parts = ex.evaluate(PARTS_JS)
        for figure in parts["figures"]:
            assert figure["left"] >= parts["ops"]["right"], parts  # beside the boxes
            assert figure["top"] - parts["top"] < 800 and figure["right"] <= parts["right"], parts
        page.screenshot(path="/tmp/jupyterlab-840.png")
    finally:
        page.set_viewport_size({"width": 1400, "height": 1000})


def press_right_in(page, i: int) -> list[str]:
    """Click inside explorer ``i``'s figure, press ArrowRight; the odometers before."""
    before = odometers(page)
    # Bokeh's event layer lies over the canvases: it is what a click lands on.
    explorers(page).nth(i).locator(".bk-events").first.click(timeout=10_000)
    page.keyboard.press("ArrowRight")
    return before


def element(text: str) -> int:
    return int(re.match(r"element (\d+) of", text)[1])


def test_a_key_moves_only_the_explorer_it_was_pressed_in(lab):
    offline, page, _ = lab
    before = press_right_in(page, 0)
    assert [element(t) for t in before] == [1, 1], before
    odometer = explorers(page).nth(0).locator(".candela-odometer").first
    expect(odometer).to_contain_text("element 2 of", timeout=10_000)
    assert odometers(page)[1] == before[1]
    assert_offline_and_clean(offline)


@pytest.mark.patched(*COMM_FIX)
def test_a_pipeline_typed_in_a_notebook_applies_on_enter(lab):
    # The boxes keep what is typed in the page (explorer/enter_box.mjs): the kernel hears the text
    # on Enter, through the notebook's comm as a server would through its WebSocket.
    # Both explorers: the first one's boxes are drawn before any explorer's scripts run.
    # Typed at once after "Run All": Panel's comm could still be holding changes for an
    # acknowledgement from the kernel that never came, and held the typed text with them
    # until some later change (2 of 3 runs here); notebook_comm.mjs sends them on.
    offline, page, _ = lab
    for i in range(explorers(page).count()):
        ex = explorers(page).nth(i)
        shape = ex.locator(".candela-shape").first
        was = shape.inner_text()
        box = ex.locator(".candela-ops-input input").first
        for text in (".transpose()", ""):
            box.click()
            box.press("Control+a")
            page.keyboard.type(text or "x", delay=20)
            if not text:
                page.keyboard.press("Backspace")
            expect(box).to_have_value(text)
            page.keyboard.press("Enter")
            want = was if not text else "(" + ", ".join(reversed(was[1:-1].split(", "))) + ")"
            # Sooner than Panel's 5 s: a change it held is sent on after 1 s, not with
            # whatever change comes next after its timeout.
            expect(shape).to_have_text(want, timeout=4_000)
    assert_offline_and_clean(offline)


#: Every Panel comm of the page as if its last message's acknowledgement were lost.
LOSE_ACKS = """() => {
  let n = 0
  for (const views of window.PyViz.shared_views.values()) {
    for (const manager of views) {
      manager._blocked = true
      manager._timeout = Date.now() + manager.timeout
      n += 1
    }
  }
  return n
}"""


@pytest.mark.patched(*COMM_FIX)
def test_an_edit_held_for_a_lost_acknowledgement_still_reaches_the_kernel(lab):
    # Panel holds a change while it waits for the kernel to acknowledge its last
    # message; one acknowledgement sometimes never came while Run All ran, and the typed
    # text then stayed in the page until some later change after Panel's 5 s timeout.
    offline, page, _ = lab
    assert page.evaluate(LOSE_ACKS) >= 2  # one comm an explorer
    ex = explorers(page).nth(1)
    shape = ex.locator(".candela-shape").first
    was = shape.inner_text()
    box = ex.locator(".candela-ops-input input").first
    box.click()
    box.press("Control+a")
    page.keyboard.type(".transpose()", delay=20)
    page.keyboard.press("Enter")
    want = "(" + ", ".join(reversed(was[1:-1].split(", "))) + ")"
    expect(shape).to_have_text(want, timeout=4_000)  # sent on after 1 s, not never
    box.click()
    box.press("Control+a")
    page.keyboard.press("Backspace")
    page.keyboard.press("Enter")
    expect(shape).to_have_text(was, timeout=10_000)
    assert_offline_and_clean(offline)


def test_in_jupyterlab_dark_every_box_shows_its_text(lab):
    # JupyterLab's dark theme, switched to live: the shape and pipeline boxes drew their
    # text in Bokeh's light-theme colour (.bk-input) on the explorer's dark box, 1.1:1.
    from contrast import low_contrast_boxes

    offline, page, _ = lab
    try:
        for menu in ("Settings", "Theme", "JupyterLab Dark"):
            page.locator(".lm-MenuBar-itemLabel, .lm-Menu-itemLabel", has_text=menu).first.click()
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
        page.wait_for_timeout(500)
        assert not low_contrast_boxes(page)
    finally:
        for menu in ("Settings", "Theme", "JupyterLab Light"):
            page.locator(".lm-MenuBar-itemLabel, .lm-Menu-itemLabel", has_text=menu).first.click()
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")


def test_restart_and_run_all_draws_everything_again(restarted):
    offline, page, _ = restarted
    assert_drawn(page)
    assert_offline_and_clean(offline)


def test_restart_and_run_all_starts_the_traversal_from_the_first_element(restarted):
    _, page, before = restarted
    assert element(before[0]) > 1, before  # the steps did move it
    after = odometers(page)
    assert len(after) == 2 and all(text.startswith("element 1 of") for text in after), after


def test_after_a_restart_a_key_moves_only_the_explorer_it_was_pressed_in(restarted):
    offline, page, _ = restarted
    before = press_right_in(page, 1)
    assert [element(t) for t in before] == [1, 1], before
    odometer = explorers(page).nth(1).locator(".candela-odometer").first
    expect(odometer).to_contain_text("element 2 of", timeout=10_000)
    assert odometers(page)[0] == before[0]
    assert_offline_and_clean(offline)


@pytest.mark.patched(*NOTEBOOK7_LOAD)
def test_notebook7_reopened_on_the_running_kernel_draws_everything_offline(reopened):
    offline, page, _ = reopened
    assert_drawn(page)
    assert_offline_and_clean(offline)
