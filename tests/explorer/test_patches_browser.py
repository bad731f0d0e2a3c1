"""The browser patches in Chromium: scoped to the explorer's own outputs.

In a notebook every Panel output has its own comm (a ``CommManager`` model in its
own document); ``notebook_comm.mjs`` may change only the timing of the outputs
that hold an explorer. Panel's model is stood in for by a class with the same
fields, so the scope is tested without a kernel (the whole path, in JupyterLab, is
``test_jupyterlab.py``).
"""

from __future__ import annotations

import pytest

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
