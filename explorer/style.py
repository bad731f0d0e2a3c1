"""The page's look: its stylesheets (``page.css``, ``presenter.css``) and its colours.

The stylesheets live in ``.css`` files beside this module; Panel gives each pane
and widget its own shadow root, so every one of them takes :data:`CSS`, and
presenter mode adds :data:`PRESENTER_CSS` to each and turns it on with a class.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from . import columns as C
from .shipped import shipped

_HERE = Path(__file__).parent

# Okabe-Ito blue and vermillion, darkened to 4.5:1 on white; the verdict also says
# "Right" or "Not quite" and carries a mark, so colour is never the only sign.
RIGHT_COLOR = "#005A8C"
WRONG_COLOR = "#A63C00"

#: What every page of the explorer (served, offline, a lesson's) adds to Panel's or
#: Bokeh's page template: a phone lays it out at its own width, not as a desktop page
#: shrunk to 40%. A template's text, extending the page's own (both have the block).
PAGE_TEMPLATE = (
    '{% block preamble %}<meta name="viewport" content="width=device-width, '
    'initial-scale=1"><style>'
    # The page around the explorer in its colours too (theme.css): black when dark.
    "@media (prefers-color-scheme: dark) { html:not(:has(.candela-light)) "
    "{ background: #000000; color-scheme: dark; } } "
    "html:has(.candela-dark) { background: #000000; color-scheme: dark; }"
    "</style>{{ super() }}{% endblock %}"
)


#: What a served page adds: a served page is drawn from a document its WebSocket brings,
#: so until that socket answers the page is empty. A line that appears after a few
#: seconds if nothing has been drawn yet, and goes once anything is (CSS alone: no
#: script, nothing from data), says so, and why it may stay: a proxy in front of the
#: server that does not pass WebSockets through is the usual cause.
SERVED_TEMPLATE = (
    "{% block postamble %}<style>"
    ".candela-waiting { position: fixed; top: 30%; left: 0; right: 0; margin: 0 auto;"
    " max-width: 36em; padding: 16px; font: 18px/1.5 sans-serif; text-align: center;"
    " color: #1f1f1f; visibility: hidden; animation: candela-waiting 0s linear 4s forwards; }"
    "@media (prefers-color-scheme: dark) { .candela-waiting { color: #f0f0f0; } }"
    "@keyframes candela-waiting { to { visibility: visible; } }"
    "body:has([data-root-id] > *) .candela-waiting { display: none; }"
    "</style>{{ super() }}{% endblock %}"
    '{% block contents %}<div class="candela-waiting" role="status">Opening Candela '
    "Explorer&hellip; If this stays, the page cannot reach its server: it is drawn from "
    "what the server sends over a WebSocket, and no answer has come. A proxy in front "
    "of the server must pass WebSockets through (see the classroom guide); otherwise "
    "reload the page.</div>{{ super() }}{% endblock %}"
)


@functools.cache
def panel_page_template(served: bool = False):
    """Panel's page template with :data:`PAGE_TEMPLATE` added: for saved pages, and
    (``served``) for served ones, with :data:`SERVED_TEMPLATE` too."""
    from panel.io.resources import BASE_TEMPLATE

    extra = SERVED_TEMPLATE if served else ""
    return BASE_TEMPLATE.environment.from_string(
        '{% extends "base.html" %}' + PAGE_TEMPLATE + extra
    )


#: The class presenter mode puts on every pane and widget of the page.
PRESENTER_CLASS = "candela-big"


def _scoped(css: str, host: str) -> str:
    # Each rule of ``css`` applied only inside hosts matching ``host``: ``:host`` becomes
    # ``:host(host)``, any other selector ``:host(host) selector``.
    rules = []
    for selectors, body in re.findall(
        r"([^{}]+)\{([^{}]*)\}", re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    ):
        scoped = [
            f":host({host})" + sel.strip()[len(":host") :]
            if sel.strip().startswith(":host")
            else f":host({host}) {sel.strip()}"
            for sel in selectors.split(",")
        ]
        rules.append(", ".join(scoped) + " {" + body + "}")
    return "\n".join(rules)


#: Presenter mode's rules, active only under :data:`PRESENTER_CLASS`. They are part of
#: :data:`CSS`, which every pane and widget has from the start, and the mode only
#: toggles the class: a stylesheet added to or removed from a drawn pane does not
#: reliably reach the browser, a class does.
PRESENTER_CSS = _scoped(shipped(_HERE / "presenter.css"), "." + PRESENTER_CLASS)

CSS = shipped(_HERE / "page.css") + (
    f".candela-verdict-right {{ color: var(--candela-right, {RIGHT_COLOR}); }}\n"
    f".candela-verdict-wrong {{ color: var(--candela-wrong, {WRONG_COLOR}); }}\n" + PRESENTER_CSS
)


def for_controls(css: str) -> str:
    """The rules of ``css`` that can style a widget: each selector that names no explorer
    class (``.candela-...``) but on the widget's own host (``:host(.candela-big)``),
    within its ``@media`` block.

    A widget's shadow root holds the widget's own elements (``label``, ``input``,
    ``.bk-btn``), never a pane's text, so the rest cannot match there. Every widget took
    the whole sheet: on Panel 1.10 a pane's CSS text is sent with each model that has
    it, 8 KB in each of an explorer's 17 widgets.
    """
    return _pick(css, lambda sel, nested: ".candela-" not in _inside(sel))


def for_layouts(css: str) -> str:
    """The rules of ``css`` that can style a layout (a row or column of panes): each
    selector of the layout's own host (``:host``, ``:host(.candela-big)``) and, within an
    ``@media`` block, each that names its children by their classes alone
    (``.candela-step-box``: the phone's order of a lesson's parts).

    A layout's shadow root holds its children's hosts, each with its own shadow root:
    no text, no widget's elements, so no other rule can match there.
    """
    single = re.compile(r"(?:\.[\w-]+)+")

    def keep(sel: str, nested: bool) -> bool:
        inside = _inside(sel)
        return not inside or bool(nested and single.fullmatch(inside))

    return _pick(css, keep)


#: The sheets of panes of text (:data:`TEXT_CSS` and each part :func:`for_pane` made): a
#: pane with one of them has its own.
PANE_SHEETS: set[str] = set()


def for_pane(*classes: str) -> list[str]:
    """A text pane's stylesheets, for a pane whose host and text have only the explorer's
    classes ``classes`` (``"candela-fields"``, ...): :data:`TEXT_CSS`, which every pane of
    text shares, and the rules of :data:`CSS` that name some of ``classes`` and no other
    explorer class but presenter mode's (:data:`PRESENTER_CLASS`).

    Each pane took the whole sheet: on Panel 1.10 a pane's CSS text is sent with each
    model that has it, 8 KB in each of an explorer's 13 panes of text, 0.1 MB of a
    notebook output. (Where one sheet is sent once for all the models that have it, as
    in a notebook on Panel 1.9, the part every pane shares is sent once too.) Which
    classes a pane shows is said where the pane is made; ``test_control_css.py`` holds
    each to what the pane shows in every state, and ``test_style_browser.py`` to the look
    the whole sheet gave it.
    """
    part = _pane_part(frozenset(name.removeprefix(".") for name in classes))
    return [TEXT_CSS, part] if part else [TEXT_CSS]


@functools.cache
def _pane_part(classes: frozenset[str]) -> str:
    def keep(sel: str, nested: bool) -> bool:
        named = set(explorer_classes(sel)) - {PRESENTER_CLASS}
        return bool(named) and named <= classes

    part = _pick(CSS, keep)
    PANE_SHEETS.add(part)
    return part


def explorer_classes(text: str) -> list[str]:
    """The explorer's classes (``candela-...``) that a selector or HTML ``text`` names."""
    return re.findall(r"candela-[\w-]+", text)


def _inside(selector: str) -> str:
    # The selector less its :host part: what it names inside the shadow root.
    return re.sub(r":host(?:\([^)]*\))?", "", selector).strip()


def _pick(css: str, keep, nested: bool = False) -> str:
    # The selectors of ``css`` for which ``keep(selector, in an @-block)`` holds, each
    # rule with those of its selectors, in order; blocks left empty dropped. (A selector
    # list means each of its selectors alone.)
    out = []
    for prelude, body in _blocks(css):
        if prelude.startswith("@"):
            inner = _pick(body, keep, nested=True)
            if inner:
                out.append(f"{prelude} {{\n{inner}\n}}")
            continue
        kept = [sel.strip() for sel in prelude.split(",") if keep(sel.strip(), nested)]
        if kept:
            out.append(f"{', '.join(kept)} {{{body}}}")
    return "\n".join(out)


def _blocks(css: str) -> list[tuple[str, str]]:
    # The top-level rules and @-blocks of ``css`` (no comments): (prelude, body).
    out, depth, mark, start = [], 0, 0, 0
    for i, ch in enumerate(css):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                out.append((css[mark:start].strip(), css[start + 1 : i]))
                mark = i + 1
    return out


#: The rules of :data:`CSS` a widget can use (:func:`for_controls`): a widget's sheet.
CONTROL_CSS = for_controls(CSS)

#: The rules of :data:`CSS` a layout can use (:func:`for_layouts`): a layout's sheet.
LAYOUT_CSS = for_layouts(CSS)

#: The rules of :data:`CSS` every pane of text can use (:func:`for_pane`): those that
#: name no class of the explorer's but presenter mode's.
TEXT_CSS = _pick(CSS, lambda sel, nested: set(explorer_classes(sel)) <= {PRESENTER_CLASS})
PANE_SHEETS.add(TEXT_CSS)

#: The classes of a pane of headings (a heading and its note, :func:`for_pane`).
HEADING_CLASSES = ("candela-heading", "candela-legend")
#: The classes of a view's fields (:mod:`explorer.fields`) and its code
#: (:mod:`explorer.code_panel`).
FIELDS_CLASSES = (
    "candela-heading", "candela-legend", "candela-fields", "candela-adj-stride-work",
    "candela-term", "candela-reason", "candela-copy-note", "candela-code", "candela-code-head",
    "candela-copy",
)  # fmt: skip

#: The explorer's colours, light and dark (``theme.css``): the stylesheet of its
#: outermost box, whose custom properties every pane inside inherits.
THEME_CSS = shipped(_HERE / "theme.css")

#: The themes a page can be asked for; "" follows the system or the notebook.
THEMES = ("", "light", "dark")


#: The classes of the explorer's outermost box that choose a theme (theme.css).
THEME_CLASSES = ("candela-light", "candela-dark")


def theme_classes(theme: str) -> list[str]:
    """The classes of the explorer's outermost box that choose ``theme`` ("" for none)."""
    return [f"candela-{theme}"] if theme in THEMES[1:] else []


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
    # Each swatch stays on the line of its name: a line breaks between entries only.
    swatches = "".join(
        '<span class="candela-legend-item" style="white-space:nowrap">'
        f'<span class="candela-swatch" style="background:{color}"></span>{text}</span> '
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
