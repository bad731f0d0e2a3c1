"""The code panel in Chromium: it follows the pipeline, and its copy buttons copy."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_the_code_panel_follows_the_pipeline_and_copies_its_text(open_explorer, context):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = open_explorer("?shape=3,4&ops=.T[::2]")
    numpy_code = page.locator(".candela-code .candela-code-numpy")
    expect(numpy_code).to_have_text(
        "import numpy as np\n\nx = np.arange(12).reshape(3, 4)\ny = x.T[::2]"
    )
    ops = page.locator(".candela-ops-input input")
    ops.fill(".flip(0)[1:, None]")
    ops.press("Enter")
    expect(page.locator(".candela-shape")).to_have_text("(2, 1, 4)")
    expect(numpy_code).to_have_text(
        "import numpy as np\n\nx = np.arange(12).reshape(3, 4)\ny = np.flip(x, 0)[1:, None]"
    )
    torch_code = page.locator(".candela-code .candela-code-torch")
    expected = "import torch\n\nx = torch.arange(12).reshape(3, 4)\ny = x.flip(0)[1:, None]"
    expect(torch_code).to_have_text(expected)
    page.locator(".candela-copy-torch").click()
    expect(page.locator(".candela-copy-torch")).to_have_text("copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == expected
    page.locator(".candela-copy-numpy").click()
    page.wait_for_function("async () => (await navigator.clipboard.readText()).includes('np.flip')")
