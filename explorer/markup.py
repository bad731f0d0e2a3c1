"""Lesson text as safe HTML: Markdown rendered here, with no raw HTML and no script links.

Lesson packs are shared between teachers (``$CANDELA_LESSONS`` points at any
folder of lesson files), so their text is untrusted. A Markdown pane in the
browser would pass raw HTML through (``<script>``, ``<img onerror>``,
``<a href="javascript:...">``), and Panel's HTML pane runs the scripts it is
given. :func:`lesson_html` renders the Markdown on the server instead, with
raw HTML turned off (it shows as text) and every link and image checked: only
``http``, ``https`` and relative addresses survive, anything else stays the
plain text it was written as. The result is plain elements and escaped text,
fit for an HTML pane.

>>> lesson_html("**stride** `(4, 1)`")
'<p><strong>stride</strong> <code>(4, 1)</code></p>\\n'
>>> lesson_html("<script>alert(1)</script>")
'<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\\n'
>>> lesson_html("[go](javascript:alert(1))")
'<p>[go](javascript:alert(1))</p>\\n'
"""

from __future__ import annotations

import functools
import re
from urllib.parse import urlsplit

__all__ = ["MAX_CHARS", "inline_html", "lesson_html", "safe_url"]

#: Longer text is cut (and says so): a lesson step is a paragraph or two.
MAX_CHARS = 20_000

_SAFE_SCHEMES = frozenset({"http", "https"})
# Anything a browser might read as a scheme: letters, digits, +, -, . before a colon,
# ignoring the control characters and spaces browsers strip from a URL.
_SCHEME_LIKE = re.compile(r"^[\x00-\x20]*([^/?#]*?):")


def safe_url(url: str) -> bool:
    """True for an ``http(s)`` address or a relative one; False for any other scheme.

    >>> [safe_url(u) for u in ("https://a.example/x", "?lesson=transpose", "#top", "../x")]
    [True, True, True, True]
    >>> [safe_url(u) for u in ("javascript:alert(1)", " JaVaScRiPt:x", "data:text/html,x")]
    [False, False, False]
    """
    if not isinstance(url, str):
        return False
    cleaned = "".join(ch for ch in url if ch > " " and ch != "\x7f")
    match = _SCHEME_LIKE.match(cleaned)
    if match is None:
        return True  # no colon before the path: relative
    try:
        scheme = urlsplit(cleaned).scheme.lower()
    except ValueError:
        return False
    return scheme in _SAFE_SCHEMES and match.group(1).lower() == scheme


@functools.lru_cache(maxsize=1)
def _renderer():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False})
    md.validateLink = safe_url  # links, images, autolinks and reference definitions
    return md


def lesson_html(text: str) -> str:
    """Render lesson Markdown to HTML that runs nothing: raw HTML is shown as text.

    Links keep only ``http``, ``https`` or relative targets (any other stays
    text); a link to another site opens in a new tab with no opener. Text longer than :data:`MAX_CHARS` is cut.
    A text is rendered once per process (a led class's 30 pages show the same step).
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    return _lesson_html(text)


@functools.lru_cache(maxsize=512)
def _lesson_html(text: str) -> str:
    cut = len(text) > MAX_CHARS
    if cut:
        text = text[:MAX_CHARS]
    # Lone surrogates cannot be sent to the browser; show a replacement character.
    text = text.encode("utf-8", "replace").decode("utf-8")
    md = _renderer()
    tokens = md.parse(text)
    for token in tokens:
        for child in token.children or ():
            href = child.attrGet("href") if child.type == "link_open" else None
            if isinstance(href, str) and urlsplit(href).scheme:  # another site: a new tab
                child.attrSet("rel", "noopener noreferrer")
                child.attrSet("target", "_blank")
    out = md.renderer.render(tokens, md.options, {})
    if cut:
        out += "<p><em>(the rest of this text is too long to show)</em></p>\n"
    return out


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def inline_html(text: object) -> str:
    """One line of plain text as HTML, its `` `code` `` spans as code: nothing else is markup.

    For the texts that are not Markdown (a question's prompt, a verdict, a hint, an
    error message): everything is escaped first, so only the backticks mean anything.

    >>> inline_html("step 1 `.view((12,))`: <b>no</b>")
    'step 1 <code>.view((12,))</code>: &lt;b&gt;no&lt;/b&gt;'
    """
    import html

    text = "" if text is None else str(text)
    text = text.encode("utf-8", "replace").decode("utf-8")[:MAX_CHARS]
    return _CODE_SPAN.sub(r"<code>\1</code>", html.escape(text, quote=False))
