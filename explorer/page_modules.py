"""The explorer's browser modules in a notebook: sent once a page, not once an output.

Every explorer output carried the text of the same modules: its keyboard component's
(with the browser patches), its four text boxes' and its traversal's, 42 KB of an
output's 140 KB, and a saved notebook stored them with each. In a notebook the page
gets them once, in the output that loads Panel (:func:`explorer.notebook.ensure_extension`
adds :func:`page_script` to it); each output then carries, for each of them, a stub of
a few lines (:func:`stub`) that imports the page's copy and exports what it exports
(:func:`shared`). The output that loads Panel runs before any output can draw (each
waits for Panel), so the page has them first. Where a text is not on the page, or its
exports are not of a form :func:`stub` knows, the output keeps the whole text: a few
bytes more, never a page that does not draw. Served pages and exported files, where
nothing is saved per output, keep the whole texts.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable

__all__ = ["GLOBAL", "key", "modules", "page_script", "shared", "stub"]

#: The page's record of the modules' texts, by :func:`key`.
GLOBAL = "candelaModules"

#: A line that exports: ``export default``, or a declaration's name.
_EXPORT = re.compile(
    r"^export\s+(?:default\b|(?:async\s+)?function\*?\s+(\w+)|(?:const|let|var|class)\s+(\w+))"
)


def modules() -> tuple[str, ...]:
    """The texts the explorer's outputs share, as their models send them: the keyboard
    component's module (with the browser patches installed when it is asked), a text
    box's module and the traversal's."""
    from .enter_box import EnterBox
    from .figures import TRAVERSE_JS
    from .keys import Keys
    from .shipped import shipped

    return (Keys._esm, EnterBox._esm, shipped(TRAVERSE_JS))


def key(text: str) -> str:
    """The name of ``text`` on a page: from its content, so two kernels (or releases of
    the explorer) on one page never take each other's."""
    return "m" + hashlib.sha256(text.encode()).hexdigest()[:16]


def page_script(texts: Iterable[str]) -> str:
    """A script that records ``texts`` on the page (once; again is the same), and the
    function its outputs' stubs import one with (``load``: a module of its own each time,
    as Panel and Bokeh make one of each model's text)."""
    entries = ",".join(f"{json.dumps(key(t))}:{json.dumps(t)}" for t in texts)
    # "</" cannot end the script element an exported page holds this in
    entries = entries.replace("</", "<\\/")
    return (
        f"\nObject.assign(globalThis.{GLOBAL} ??= {{}}, {{{entries}}}, {{load(name) {{\n"
        "  const text = this[name]\n"
        "  if (text == null) return Promise.reject(new Error(`candela: module ${name} is not "
        "on this page (the output that loaded Panel is gone)`))\n"
        '  const url = URL.createObjectURL(new Blob([text], {type: "text/javascript"}))\n'
        "  return import(url).finally(() => URL.revokeObjectURL(url))\n"
        "}});\n"
    )


def _exports(text: str) -> list[str] | None:
    """The names ``text`` exports (``"default"`` for its default), or None where a line
    exports in a form this does not read (``export {…}``, ``export *``)."""
    names = []
    for line in text.splitlines():
        if not line.startswith("export"):
            continue
        found = _EXPORT.match(line)
        if found is None:
            return None
        names.append(found.group(1) or found.group(2) or "default")
    return names


def stub(text: str) -> str | None:
    """A module that imports the page's copy of ``text`` and exports what it exports;
    None where its exports are not read (:func:`_exports`)."""
    names = _exports(text)
    if not names:
        return None
    missing = f'Promise.reject(new Error("candela: no {GLOBAL} on this page"))'
    lines = [f"const m = await (globalThis.{GLOBAL}?.load({json.dumps(key(text))}) ?? {missing})"]
    for export in names:
        if export == "default":
            lines.append("export default m.default")
        else:
            lines.append(f"export const {export} = m.{export}")
    return "\n".join(lines) + "\n"


def shared(html: str, texts: Iterable[str]) -> str:
    """An output's ``html`` with each of ``texts`` (those its page has) that its models
    carry replaced by its :func:`stub`, as Bokeh writes a string in a document."""
    for text in texts:
        short = stub(text)
        if short is not None:
            html = html.replace(json.dumps(text), json.dumps(short))
    return html
