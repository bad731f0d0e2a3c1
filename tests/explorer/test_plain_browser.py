"""With every patch off (``CANDELA_PLAIN=1``) the command still serves a page that draws and edits.

The command runs in a process of its own (patches are per process), with pages
built ahead asked for: there is no pool then (its session hook is a patch), and
every page is built for its request. ``tests/run`` also runs every browser test
a second time so.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from explorer.testing import start_command, stop_command, wait_for_url

pytestmark = pytest.mark.browser


@pytest.fixture
def plain_command():
    """``candela-explorer`` with CANDELA_PLAIN=1 on a free port; yields (url, its stderr so far)."""
    proc = start_command(["--port", "0", "--ready", "2"], env={"CANDELA_PLAIN": "1"})
    try:
        lines = wait_for_url(proc)
        yield re.search(r"Candela Explorer: (http://\S+)", lines[-1]).group(1), lines
    finally:
        stop_command(proc)


def test_with_every_patch_off_the_command_serves_draws_and_edits(page, plain_command):
    url, said = plain_command
    assert any("CANDELA_PLAIN is set" in line for line in said), said  # it says so
    assert not any("left off" in line for line in said), said  # and nothing else about them
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"pageerror: {exc}"))
    page.goto(url.split("?")[0] + "?shape=3,4")
    page.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0"
        " && Bokeh.documents[0].get_model_by_name('frames-source') !== null"
    )
    expect(page.locator(".candela-shape")).to_have_text("(3, 4)")
    canvases = page.locator(".candela-views canvas")
    expect(canvases.first).to_be_visible()
    box = canvases.first.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100
    # The cells are drawn (Bokeh's own painting): the figures' canvases hold ink.
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    inked = canvases.evaluate_all(
        """cs => cs.map(c => {
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data
          let n = 0
          for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++
          return n
        })"""
    )
    assert sum(inked) > 1000, inked
    ops = page.locator(".candela-ops-input input")
    ops.fill(".transpose()")
    ops.press("Enter")
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")
    ops.fill(".transpose().view((12,))")
    ops.press("Enter")
    expect(page.locator(".candela-error")).to_contain_text("step 2 .view((12,))")
    expect(page.locator(".candela-error code")).to_have_text(".view((12,))")  # as code
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")  # the last good state
    # Panel's own Location parses every all-digit query value: past Python's 4,300 digits
    # it raised and the page was a 500; with every patch off it is still a page.
    from explorer.testing import http_get

    port = int(url.split(":")[2].split("/")[0])
    assert http_get(port, "/?x=" + "1" * 5000)[0] == 200
    # A lesson runs: its question is shown and checked.
    page.goto(url.split("?")[0] + "?lesson=row-major&step=1")
    expect(page.locator(".candela-lesson-step")).to_contain_text("step 1 of")
    assert problems == []
