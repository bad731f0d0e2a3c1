"""Light and dark without a browser: the theme's URL key and parameter, and the figures'
own text against what it is drawn on, at least 4.5:1 whatever the page's colours."""

from __future__ import annotations

import numpy as np
import pytest
from contrast import contrast, hex_rgb

from candela import Tensor, s
from explorer import columns as C
from explorer.app import Explorer
from explorer.figures import Figures

WHITE, BLACK = (255, 255, 255), (0, 0, 0)


def _rgb(packed: int) -> tuple[int, int, int]:
    return ((packed >> 24) & 255, (packed >> 16) & 255, (packed >> 8) & 255)


@pytest.mark.parametrize(
    "tensor",
    [
        Tensor.arange((3, 4)).transpose(),
        Tensor.arange((2, 3, 4)).slice(s[:, 1:, ::2]),
        Tensor.arange((4,)).broadcast((3, 4)),
        Tensor.arange((16, 16)),
    ],
)
def test_every_label_is_legible_on_what_it_is_drawn_on(tensor):
    cols = C.columns_for(tensor)
    figures = Figures()
    figures.render(cols, tensor.layout)
    cells = {"logical": cols.logical, "buffer": cols.buffer}
    checked = 0
    for fig, data in (("logical", figures.labels_logical.data),
                      ("buffer", figures.labels_buffer.data)):  # fmt: skip
        xs, ys = np.asarray(cells[fig]["x"]), np.asarray(cells[fig]["y"])
        for text, colour, kind, x, y in zip(data["text"], data["color"], data["kind"],
                                            data["x"], data["y"]):  # fmt: skip
            if not text or kind == "offset_mark":  # the marker is a shape, not text
                continue
            if kind in ("tile", "offset"):  # on the page: white or black
                for page in (WHITE, BLACK):
                    assert contrast(hex_rgb(colour), page) >= 4.5, (kind, colour, page)
            else:  # on its cell: the nearest cell centre is the one it is drawn in
                k = int(np.argmin(np.abs(xs - x) + np.abs(ys - y)))
                fill = _rgb(int(cells[fig]["color"][k]))
                assert contrast(hex_rgb(colour), fill) >= 4.5, (fig, kind, text, colour, fill)
            checked += 1
    assert checked > 0


def test_the_theme_is_a_parameter_and_a_url_key():
    ex = Explorer(shape=(3, 4), theme="dark")
    assert "candela-dark" in ex._view.root.css_classes
    ex.theme = "light"
    assert "candela-light" in ex._view.root.css_classes
    assert "candela-dark" not in ex._view.root.css_classes
    ex.theme = ""
    assert not {"candela-light", "candela-dark"} & set(ex._view.root.css_classes)
    assert ex.open_url("?shape=3,4&theme=dark") is None and ex.theme == "dark"
    assert ex.url.location.search.endswith("&theme=dark")
    message = ex.open_url("?shape=3,4&theme=pink")
    assert "theme 'pink'" in message and ex.theme == ""
    assert "theme=" not in ex.url.location.search
    with pytest.raises(ValueError):
        Explorer(theme="pink")
