"""The code panel: the pipeline as NumPy and PyTorch code, each with a copy button.

Two read-only text areas (the snippets of :mod:`explorer.code`) inside one
column with the class ``candela-code``; each copy button puts its snippet on
the clipboard in the browser (and, where the page may not write the
clipboard, selects the text so that Ctrl+C copies it). The explorer sets the
text after every good edit.
"""

from __future__ import annotations

import panel as pn

from .style import CSS

__all__ = ["CodePanel"]

#: Copies a text area's value: the clipboard where the page may write it, else the
#: selection and the browser's copy command. Runs in the browser, on a click.
COPY_JS = """
const text = area.value;
const done = () => { button.label = 'copied'; setTimeout(() => { button.label = 'copy'; }, 1500); };
const fallback = () => {
  const box = document.createElement('textarea');
  box.value = text;
  box.className = 'candela-copied-text';
  box.style.position = 'fixed';
  box.style.opacity = '0';
  document.body.appendChild(box);
  box.select();
  try { document.execCommand('copy'); } catch (e) {}
  box.remove();
  done();
};
if (navigator.clipboard && window.isSecureContext) {
  navigator.clipboard.writeText(text).then(done, fallback);
} else {
  fallback();
}
"""


class CodePanel:
    """``numpy`` and ``torch`` text areas with copy buttons, in ``panel`` (class candela-code)."""

    def __init__(self) -> None:
        self.areas: dict[str, pn.widgets.TextAreaInput] = {}
        self.buttons: dict[str, pn.widgets.Button] = {}
        rows = []
        for lib, label in (("numpy", "NumPy"), ("torch", "PyTorch")):
            area = pn.widgets.TextAreaInput(
                label=f"{label}: the pipeline as code",
                value="",
                rows=5,
                auto_grow=True,
                max_rows=14,
                css_classes=[f"candela-code-{lib}"],
                sizing_mode="stretch_width",
                stylesheets=[CSS],
            )
            button = pn.widgets.Button(
                label="copy",
                width=70,
                align="end",
                css_classes=[f"candela-copy-{lib}"],
                stylesheets=[CSS],
            )
            button.js_on_click(args={"area": area, "button": button}, code=COPY_JS)
            self.areas[lib], self.buttons[lib] = area, button
            rows.append(pn.Row(area, button, sizing_mode="stretch_width"))
        self.panel = pn.Column(
            pn.pane.HTML('<div class="candela-heading">code</div>', stylesheets=[CSS]),
            *rows,
            css_classes=["candela-code"],
            sizing_mode="stretch_width",
        )

    def show(self, numpy: str, torch: str) -> None:
        """Put new snippets in the boxes (only those that changed)."""
        for lib, text in (("numpy", numpy), ("torch", torch)):
            if self.areas[lib].value != text:
                self.areas[lib].value = text
