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
from test_jupyterlab import Jupyter, Offline, explorers, open_notebook

pytestmark = pytest.mark.browser

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
