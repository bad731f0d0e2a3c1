"""The browser files as sent: their comments emptied, their code exactly as written.

The laws: a file as sent has as many lines as the file (a browser's error names
the file's own line), every line that is not a comment is sent unchanged, and
nothing a comment line holds is; where a template literal could span lines the
file is sent whole. Checked on every browser file of the package and on made-up
ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import explorer
from explorer.shipped import shipped, without_comments

PACKAGE = Path(explorer.__file__).parent
FILES = sorted(p for p in PACKAGE.rglob("*") if p.suffix in (".mjs", ".css"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_file_as_sent_keeps_its_lines_and_its_code(path):
    text = path.read_text(encoding="utf-8")
    sent = shipped(path)
    assert sent.count("\n") == text.count("\n")
    if path.suffix == ".css":
        # The code is what is left once every comment is taken out of both.
        assert "/*" not in sent and "*/" not in sent
        assert "".join(sent.split()) == "".join(_css_code(text).split())
        return
    for was, now in zip(text.split("\n"), sent.split("\n")):
        if was.lstrip().startswith("//"):
            assert now in ("", was)  # emptied, or the whole file kept (a template)
        else:
            assert now == was


def _css_code(text: str) -> str:
    # The CSS outside comments, found by scanning (not by the module's pattern).
    out, i = [], 0
    while (start := text.find("/*", i)) >= 0:
        out.append(text[i:start])
        i = text.index("*/", start + 2) + 2
    return "".join(out) + text[i:]


def test_the_modules_every_page_and_notebook_output_carries_are_sent_without_comments():
    # The keys' and text boxes' modules and the traversal: each notebook output carried
    # their comment lines (about 23 KB). A template literal spanning lines in one of them
    # would send it whole again: this says so.
    for name in ("keys.mjs", "typing_keys.mjs", "enter_box.mjs", "traverse.mjs", "page.css"):
        path = PACKAGE / name
        text, sent = path.read_text(encoding="utf-8"), shipped(path)
        if path.suffix == ".css":
            comments = len(text) - len(_css_code(text))
        else:
            comments = sum(len(ln) for ln in text.split("\n") if ln.lstrip().startswith("//"))
        assert comments > 0 and len(sent) <= len(text) - comments + text.count("\n"), name


def test_a_comment_line_inside_a_template_literal_is_kept():
    text = "const help = `first line\n// not a comment: the text\nlast`\n// a comment\n"
    assert without_comments(text, ".mjs") == text


def test_a_css_comment_opening_inside_a_string_keeps_the_file():
    text = 'a::before { content: "/*" }\n/* a comment */\nb { color: red }\n'
    assert without_comments(text, ".css") == text


@given(
    st.lists(
        st.one_of(
            st.sampled_from(["// a comment", "  // indented", "//", "x = 1 // trailing"]),
            st.text(alphabet="abc =/;`'\"{}()\t ", max_size=20),
        ),
        max_size=12,
    )
)
def test_only_whole_comment_lines_go(lines):
    text = "\n".join(lines)
    sent = without_comments(text, ".mjs")
    assert sent.count("\n") == text.count("\n")
    odd = any(line.count("`") % 2 for line in lines if not line.lstrip().startswith("//"))
    for was, now in zip(lines, sent.split("\n")):
        gone = was.lstrip().startswith("//") and not odd
        assert now == ("" if gone else was)
