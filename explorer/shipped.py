"""The explorer's browser files (``*.mjs``, ``*.css``) as they are sent to a page.

Their comments are for the people who read this repository, not for the browser:
every page, every notebook output and every saved notebook carried them. A
notebook's explorer sent about 23 KB of comment lines in its modules (its keys, its
four text boxes, its traversal) and 8 KB in its stylesheets. :func:`shipped` gives a
file's text with its comments emptied, each comment's lines kept as empty lines so
that a line number in a browser's error is the file's own.

Only what cannot change the code's meaning goes: a JavaScript line that is a ``//``
comment and nothing else, and a CSS ``/* */`` comment. A JavaScript file in which a
template literal might span lines (a line with an odd number of backticks outside a
comment line) is sent as it is, since a line beginning ``//`` inside one is text.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

__all__ = ["shipped", "without_comments"]

_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)


@functools.cache
def shipped(path: Path) -> str:
    """The text of the browser file ``path`` (``.mjs``, ``.js`` or ``.css``) to send,
    its comments emptied (:func:`without_comments`); read once."""
    path = Path(path)
    return without_comments(path.read_text(encoding="utf-8"), path.suffix)


def without_comments(text: str, suffix: str) -> str:
    """``text``, of a file ending ``suffix``, with its comments emptied, each line of
    one kept as an empty line; unchanged where that could change what it means."""
    if suffix == ".css":
        if '"/*' in text or "'/*" in text:  # a comment's opening inside a string
            return text
        return _CSS_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
    if suffix not in (".js", ".mjs"):
        return text
    lines = text.split("\n")
    comment = [line.lstrip().startswith("//") for line in lines]
    if any(line.count("`") % 2 for line, c in zip(lines, comment) if not c):
        return text  # a template literal may span lines: a "//" line may be its text
    return "\n".join("" if c else line for line, c in zip(lines, comment))
