"""The browser patches in Chromium: scoped to the explorer's own outputs.

In a notebook every Panel output has its own comm (a ``CommManager`` model in its
own document); ``notebook_comm.mjs`` may change only the timing of the outputs
that hold an explorer. Panel's model is stood in for by a class with the same
fields, so the scope is tested without a kernel (the whole path, in JupyterLab, is
``test_jupyterlab.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer import patches
from explorer.patches import browser_module, get, skip_reason

pytest.importorskip("playwright")

pytestmark = pytest.mark.browser

#: A stand-in for Panel's CommManager (its fields and its _document_changed, as in
#: Panel 1.9's comm_manager.ts with debouncing on), and two outputs: one with an
#: explorer's keyboard component, one with only a Panel slider.
PAGE = """
(source) => {
  class CommManager {
    constructor(models) {
      this.document = {_all_models: new Map(models.map((m, i) => [String(i), m]))}
      this._event_buffer = []
      this._blocked = false
      this._timeout = 0
      this.timeout = 5000
      this.debounce = 50
      this.sent = []
    }
    _document_changed(event) {
      this._event_buffer.push(event)
      if (!this._blocked || Date.now() > this._timeout) {
        setTimeout(() => this.process_events(), this.debounce)
        this._blocked = true
        this._timeout = Date.now() + this.timeout
      }
    }
    process_events() {
      this.sent.push(...this._event_buffer)
      this._event_buffer = []
      // the acknowledgement that unblocks never comes (as in JupyterLab during Run All)
    }
  }
  const Bokeh = {Models: {get: (name) =>
    name === "panel.models.comm_manager.CommManager" ? CommManager : undefined}}
  new Function("Bokeh", source + "\\nnotebookComm(Bokeh)")(Bokeh)
  const explorer = new CommManager([{css_classes: ["candela-keys-help"]}, {css_classes: []}])
  const other = new CommManager([{css_classes: ["bk-slider"]}])
  window.managers = {explorer, other}
  for (const m of [explorer, other]) {
    m._document_changed("first")   // sent after the debounce; the comm is then blocked
  }
  setTimeout(() => { for (const m of [explorer, other]) m._document_changed("second") }, 200)
}
"""


def test_only_an_explorers_output_sends_on_what_its_comm_held(page):
    if skip_reason(get("notebook_comm")):
        pytest.skip("the patch is off here")
    page.set_content("<html><body></body></html>")
    page.evaluate(PAGE, browser_module(("notebook_comm",)))
    page.wait_for_timeout(1800)  # the held change waits ~1 s, then goes
    sent = page.evaluate(
        "() => ({explorer: window.managers.explorer.sent, other: window.managers.other.sent})"
    )
    assert sent["explorer"] == ["first", "second"]
    assert sent["other"] == ["first"]  # Panel's own: held until an acknowledgement


#: Each browser patch run twice on a stand-in of Bokeh whose view lacks one method the patch
#: replaces (as a release that renamed it would): which methods changed, what was logged.
MISSING = """
([source, entry]) => {
  const warnings = []
  const warn = console.warn
  console.warn = (...parts) => warnings.push(parts.join(" "))
  const viewClass = (methods) => {
    class View {}
    for (const name of methods) View.prototype[name] = function () { return name }
    return View
  }
  const views = {
    Plot: viewClass(["_update_layout", "invalidate_layout"]),  // no _after_layout
    Rect: viewClass([]),  // no _paint
    TextInput: viewClass(["change_input_value"]),
    "panel.models.widgets.TextInput": viewClass([]),  // no _keyup
  }
  class CommManager {}
  CommManager.prototype._document_changed = function () {}  // no process_events
  const models = {
    ...Object.fromEntries(Object.entries(views).map(
      ([name, view]) => [name, {prototype: {default_view: view}}])),
    "panel.models.comm_manager.CommManager": CommManager,
  }
  const Bokeh = {Models: {get: (name) => models[name]}}
  const methods = () => [...Object.values(views).map((v) => v.prototype), CommManager.prototype]
    .map((p) => Object.fromEntries(Object.entries(p).filter(([, f]) => typeof f === "function")))
  const before = methods()
  try {
    const run = new Function("Bokeh", source + `\\n${entry}(Bokeh)\\n${entry}(Bokeh)`)
    run(Bokeh)
  } finally {
    console.warn = warn
  }
  const after = methods()
  const changed = after.some((p, i) => Object.keys(p).length !== Object.keys(before[i]).length
    || Object.entries(p).some(([name, f]) => before[i][name] !== f))
  return {changed, warnings}
}
"""


@pytest.mark.parametrize("name", ["steady", "cells", "notebook_comm", "release_listeners"])
def test_a_browser_patch_missing_a_name_leaves_the_framework_alone_and_says_so_once(page, name):
    # The script's own guard, in the page: run wherever the patch is on or off here (off, the
    # page gets an empty function instead, see test_patches.py).
    patch = get(name)
    source = (Path(patches.__file__).parent / patch.script).read_text(encoding="utf-8")
    page.set_content("<html><body></body></html>")
    found = page.evaluate(MISSING, [source, patch.entry])
    assert found["changed"] is False, found
    assert len(found["warnings"]) == 1 and f"patch {name} left off" in found["warnings"][0], found


def test_on_a_served_page_no_browser_patch_says_it_is_left_off(page, explorer_server):
    # The control for the test above: on the releases they were checked against, every name
    # each browser patch replaces is there.
    from explorer.testing import open_served

    said: list[str] = []
    page.on("console", lambda msg: said.append(msg.text))
    open_served(page, explorer_server + "?shape=3,4")
    page.locator(".candela-shape").wait_for()
    assert not [line for line in said if "left off" in line], said


def _load_script(guarded: bool) -> str:
    """Panel's notebook load script around a stand-in bundle that counts its runs."""
    from types import SimpleNamespace

    from panel.io.notebook import AUTOLOAD_NB_JS
    from panel.io.resources import CDN_DIST

    from explorer.patches.load_once import once_per_page

    bundle = SimpleNamespace(
        js_urls=[], js_modules=[], js_module_exports={}, js_module_tags=[], css_urls=[],
        css_raw=[],
        js_raw=["window.Bokeh = window.Bokeh || {version: 'x', Panel: {}}; window.runs += 1;"],
    )  # fmt: skip
    js = AUTOLOAD_NB_JS.render(
        bundle=bundle, force=True, reloading=False, timeout=5000,
        config={"packages": {}, "paths": {}, "shim": {}}, requirements={}, exports={},
        skip_imports={}, ipywidget=False, version="x",
        # and what Panel 1.10's notebook load gives its template besides (1.9's ignores them)
        cdn_dist=CDN_DIST, cdn_map=[], require_stages=[], global_suffix="",
        error_id="load-error", require_skip=[], check_extension=False,
    )  # fmt: skip
    return once_per_page(js) if guarded else js


@pytest.mark.parametrize("guarded, runs", [(True, 1), (False, 3)])
def test_the_explorers_load_runs_panels_bundle_once_per_page(page, guarded, runs):
    # Panel's load evaluates its whole bundle at each output drawn (every copy then stays
    # in the page); guarded by load_once it runs where the page has not run it.
    if guarded and skip_reason(get("load_once")):
        pytest.skip("the patch is off here")
    page.set_content("<html><body></body></html>")
    page.evaluate("() => { window.runs = 0 }")
    script = _load_script(guarded)
    # The output drawn three times (re-runs of the cell that carries it). The script loads
    # in a timer of 100 ms; one set after it fires after it.
    for _ in range(3):
        page.evaluate(
            "(js) => { new Function(js)(); return new Promise((r) => setTimeout(r, 150)) }", script
        )
    assert page.evaluate("() => window.runs") == runs


def test_a_changed_load_script_is_left_as_panel_made_it():
    from explorer.patches.load_once import once_per_page

    assert once_per_page("(function(root) { run() })(window)") is None
    assert once_per_page(_load_script(False)) == _load_script(True)


#: Stand-ins for BokehJS's views that add page-wide listeners they never remove (as
#: Bokeh 3.9's PlotView and InputWidgetView do), for a figure and a described box inside
#: an explorer and outside, and a Panel CommManager of the explorer's output.
LISTENERS = """
(source) => {
  window.heard = {explorer: 0, other: 0}
  const hear = (who) => () => { window.heard[who] += 1 }
  class View {
    constructor(model, parent) { this.model = model; this.parent = parent }
    remove() { this.removed = true }
  }
  class PlotView extends View {
    connect_signals() { visualViewport.addEventListener("resize", hear(this.model.who)) }
  }
  class InputWidgetView extends View {
    _build_description_el() {
      document.addEventListener("mousedown", hear(this.model.who))
      window.addEventListener("blur", hear(this.model.who))
    }
  }
  class TextInputView extends InputWidgetView {}
  const models = {
    Plot: {prototype: {default_view: PlotView}},
    TextInput: {prototype: {default_view: TextInputView}},
  }
  new Function("Bokeh", source + "\\nreleaseListeners(Bokeh)")({Models: {get: (n) => models[n]}})
  const manager = {type: "panel.models.comm_manager.CommManager", plot_id: "p1",
                   _event_buffer: ["a change"]}
  const explorerBox = {css_classes: ["candela-explorer"]}
  explorerBox.document = {all_models: new Set([explorerBox, manager])}
  window.PyViz = {shared_views: new Map([["p1", [manager]], ["p2", [{}]]])}
  const roots = {explorer: new View(explorerBox, null), other: new View({css_classes: []}, null)}
  const views = []
  for (const who of ["explorer", "other"]) {
    const plot = new PlotView({who}, roots[who])
    const box = new TextInputView({who}, roots[who])
    plot.connect_signals()
    box._build_description_el()
    box._build_description_el()  // rendered again
    views.push(plot, box, roots[who])
  }
  for (const view of views) view.remove()
  visualViewport.dispatchEvent(new Event("resize"))
  document.dispatchEvent(new Event("mousedown"))
  window.dispatchEvent(new Event("blur"))
  return {heard: window.heard, removed: views.every((v) => v.removed),
          shared: [...window.PyViz.shared_views.keys()], buffer: manager._event_buffer.length,
          own: Object.getOwnPropertyNames(window).includes("addEventListener")}
}
"""


def test_a_removed_explorer_view_drops_the_listeners_bokeh_left_on_the_page(page):
    if skip_reason(get("release_listeners")):
        pytest.skip("the patch is off here")
    page.set_content("<html><body></body></html>")
    found = page.evaluate(LISTENERS, browser_module(("release_listeners",)))
    assert found["removed"], found  # Bokeh's own remove still runs
    # The explorer's views heard nothing once removed; the others are Bokeh's (5 listeners).
    assert found["heard"] == {"explorer": 0, "other": 5}, found
    # The explorer output's CommManager left Panel's registry, its buffered change dropped.
    assert found["shared"] == ["p2"] and found["buffer"] == 0, found
    assert found["own"] is False, found  # the page's own addEventListener, as it was
