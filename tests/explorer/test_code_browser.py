"""The code panel in Chromium: it follows the pipeline, and its copy button copies."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_the_code_panel_follows_the_pipeline_and_copies_its_text(open_explorer, context):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = open_explorer("?shape=3,4&ops=.T[::2]")
    numpy_box = page.locator(".candela-code .candela-code-numpy textarea")
    expect(numpy_box).to_have_value(
        "import numpy as np\n\nx = np.arange(12).reshape(3, 4)\ny = x.T[::2]"
    )
    ops = page.locator(".candela-ops-input input")
    ops.fill(".flip(0)[1:, None]")
    ops.press("Enter")
    expect(page.locator(".candela-shape")).to_have_text("(2, 1, 4)")
    expect(numpy_box).to_have_value(
        "import numpy as np\n\nx = np.arange(12).reshape(3, 4)\ny = np.flip(x, 0)[1:, None]"
    )
    torch_box = page.locator(".candela-code .candela-code-torch textarea")
    expect(torch_box).to_have_value(
        "import torch\n\nx = torch.arange(12).reshape(3, 4)\ny = x.flip(0)[1:, None]"
    )
    page.locator(".candela-copy-torch button").click()
    expect(page.locator(".candela-copy-torch button")).to_have_text("copied")
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied == torch_box.input_value()
