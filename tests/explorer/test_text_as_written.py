"""Text as written: inline code in questions, verdicts, hints and errors shows as code.

Prompts, verdicts, hints and error messages are plain text (only lesson ``text`` and
``reveal`` are Markdown), but they quote pipelines and calls between backticks:
:func:`explorer.markup.inline_html` shows those as code and everything else as
the text it is.
"""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.markup import inline_html

pytest.importorskip("panel")


@given(st.text(max_size=200))
def test_inline_html_is_the_text_itself_with_code_spans_and_no_other_markup(text):
    out = inline_html(text)
    # The only tags are <code> and </code>, and they pair up.
    tags = re.findall(r"<[^>]*>", out)
    assert set(tags) <= {"<code>", "</code>"}
    assert tags == ["<code>", "</code>"] * (len(tags) // 2)
    # Without its tags and unescaped, it reads as the text with the spans' backticks gone.
    spans = len(tags) // 2
    plain = html.unescape(re.sub(r"</?code>", "", out))
    expected = text.encode("utf-8", "replace").decode("utf-8")
    assert plain == re.sub(r"`([^`\n]+)`", r"\1", expected)
    assert plain.count("`") == expected.count("`") - 2 * spans


def test_a_question_a_verdict_and_an_error_show_their_code_as_code():
    from explorer.app import Explorer

    ex = Explorer(lesson="numpy-pytorch-words")
    cr = ex.classroom
    step = next(
        n for n, s in enumerate(cr.lesson.steps, 1) if s.question and "`" in s.question.prompt
    )
    ex.step = step
    assert "<code>" in cr.question_pane.object and "`" not in cr.question_pane.object
    # A challenge's verdict quotes the typed chain.
    ex.param.update(lesson="challenges", step=1)
    cr.check(".slice(s[::-1])")
    verdict = cr.verdict_pane.object
    assert "<code>.slice(s[::-1])</code>" in verdict and "`" not in verdict
    # A failing pipeline's message names the step in code.
    ex.param.update(lesson="", step=1)
    with ex.typed():
        ex.ops = ".view((5,))"
    assert ex.error and "<code>" in ex.error_pane.object and "`" not in ex.error_pane.object
