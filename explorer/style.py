"""The page's look: its stylesheets (``page.css``, ``presenter.css``) and its colours.

The stylesheets live in ``.css`` files beside this module; Panel gives each pane
and widget its own shadow root, so every one of them takes :data:`CSS`, and
presenter mode adds :data:`PRESENTER_CSS` to each.
"""

from __future__ import annotations

from pathlib import Path

from . import columns as C

_HERE = Path(__file__).parent

# Okabe-Ito blue and vermillion, darkened to 4.5:1 on white; the verdict also says
# "Right" or "Not quite" and carries a mark, so colour is never the only sign.
RIGHT_COLOR = "#005A8C"
WRONG_COLOR = "#A63C00"

CSS = (_HERE / "page.css").read_text(encoding="utf-8") + (
    f".candela-verdict-right {{ color: {RIGHT_COLOR}; }}\n"
    f".candela-verdict-wrong {{ color: {WRONG_COLOR}; }}\n"
)
PRESENTER_CSS = (_HERE / "presenter.css").read_text(encoding="utf-8")

#: The marks of the figures, in the legend's order.
LEGEND = (
    (C.CURSOR, "current element"),
    (C.FORWARD, "forward jump"),
    (C.BACKWARD, "backward jump"),
    (C.OFFSET, "offset"),
    (C.HOVER, "hover link"),
    (C.GREY, "not read"),
)


def legend_html() -> str:
    """The legend of the figures' marks, as HTML."""
    swatches = "".join(
        f'<span class="candela-swatch" style="background:{color}"></span>{text}'
        for color, text in LEGEND
    )
    return f'<div class="candela-legend">{swatches}</div>'


def title_html(note: str = "") -> str:
    """The page's title line (and an optional note under it, already HTML)."""
    return (
        '<div class="candela-title">Candela Explorer '
        '<span class="candela-subtitle">— how a tensor\'s elements sit in memory</span></div>'
        + note
    )
