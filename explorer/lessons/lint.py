"""The lesson linter: a step must not give its own answer away while its question waits.

``python -m explorer.lessons.lint [FILE ...]`` checks every lesson file (default: every
file in :func:`~explorer.lessons.lessons_dir`) and prints one line per problem; it exits
1 when it finds any. The tests run it on every shipped lesson.

What a student sees on a step before answering is worked out here from the same code
the page draws with (:mod:`explorer.lessons.withholding`, ``explorer.columns``,
``explorer.fields``): a :class:`Shown`. The answer is computed by the lesson's own
grading code (:func:`~explorer.lessons.expected_answer`). A problem is one of:

- ``states``: the step's title, text or prompt writes the answer (in any of its obvious
  spellings: ``(1, 4)``, ``[1,4]``, ``= -7``, ``back by 7``, ``6 cells``, ...; a
  stride of one element or of none in words: "side by side", "the same cell every time");
- ``picture``: what the page draws while the question waits decides the answer: the
  grid's heading (its shape, "a new packed copy": a packed layout of that shape), the
  walk drawn so far (its positions and jumps, the odometer's ``element 1 of N``);
- ``neighbour``: the step before or after, as it first shows (waiting for its own
  answer, or whole when it asks nothing), writes or draws this step's answer, which
  ◀ / ▶ would show while the question waits;
- ``withheld``: the text, the prompt or the hint a wrong answer gets points at
  something withheld while the question waits (hover, the walk, the second view, read
  counts, greyed gaps, the fields, the cost; the grid of the result when the tensor
  before the last operation is drawn);
- ``elimination``: the walk drawn leaves one element undrawn, so the answer is the one
  buffer cell nothing has read.

Imports neither Panel nor Bokeh.
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..fields import DTYPE_BYTES
from .files import Lesson, LessonError, Question, Step, lesson_files, load_lesson_file, step_layout
from .grading import (
    _scalar_pattern,
    _tuple_pattern,
    expected_answer,
    format_answer,
    give_aways,
    hint,
)
from .withholding import WITHHELD, grid_drawn, walk_limit

__all__ = ["Problem", "Shown", "lint_lesson", "lint_paths", "main", "shown_while_waiting"]


@dataclass(frozen=True)
class Problem:
    """One way a lesson gives an answer away: the step (from 1), the kind, and what."""

    source: str
    step: int
    kind: str  # "states", "picture", "neighbour", "withheld", "elimination"
    message: str

    def __str__(self) -> str:
        return f"{self.source}: step {self.step}: {self.kind}: {self.message}"


@dataclass(frozen=True)
class Shown:
    """What a page shows on one step before its question is answered or shown.

    ``words`` are the texts a student reads, as ``(where, plain text)``; ``layout`` is
    the layout the figures draw, of which a student sees the ``shape`` (the heading),
    the walk's first ``walked`` elements (their positions and jumps, the odometer) and,
    when ``copied``, that it is a new packed copy. ``whole`` is True when nothing is
    withheld (a step that asks nothing: the fields, the walk, every label).
    """

    words: tuple[tuple[str, str], ...]
    layout: Any
    walked: int
    copied: bool
    whole: bool
    compare: bool  # a second view is drawn
    buffer_size: int = 0  # the cells of the buffer lane


def _plain(markup: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def _result(step: Step):
    from ..state import evaluate

    ops = step.ops
    if step.expect_error:  # the page shows the last good state
        from ..pipeline import format_pipeline, parse

        ops = format_pipeline(parse(ops)[:-1])
    return evaluate(step.shape, ops)


def shown_while_waiting(lesson: Lesson, index: int) -> Shown:
    """What step ``index`` (from 0) of ``lesson`` shows as it opens (see :class:`Shown`)."""
    from ..columns import columns_for, withheld_columns
    from ..fields import fields_html, headings_html

    step = lesson.steps[index]
    result = _result(step)
    question = step.question
    asks = question is not None or step.challenge is not None
    tensor = result.tensor
    if question is not None and WITHHELD[question.ask].grid == "before":
        tensor = result.states[-2] if len(result.states) > 1 else result.states[0]
    cols = columns_for(tensor)
    walked = tensor.layout.len
    if question is not None:
        walked = (
            0 if WITHHELD[question.ask].grid == "before" else walk_limit(question, tensor.layout)
        )
        cols = withheld_columns(cols, walked)
    # The headings exactly as the page writes them while the question waits.
    waiting = grid_drawn(question, len(result.states) - 1)
    grid, lane = headings_html(
        tensor.layout.shape,
        len(tensor.buffer),
        cols.buffer_cols,
        result.copied and tensor is result.tensor,
        waiting,
    )
    copied = "packed copy" in lane
    words = [("title", lesson.title), ("text", step.text)]
    if question is not None:
        words.append(("prompt", question.prompt))
    if step.challenge is not None:
        words.append(("prompt", step.challenge.prompt))
    words += [("grid heading", _plain(grid)), ("buffer heading", _plain(lane))]
    words += [("odometer", line) for line in _odometer(tensor.layout, walked)]
    if not asks:
        words.append(
            ("fields", _plain(fields_html(result.layout, "elements", copied=result.copied)))
        )
    # A copy's buffer cells labelled by their values: the source's walk order.
    labels = cols.buffer_labels
    if any(v != p for v, p in zip(labels["value_label"], labels["pos_label"])):
        words.append(("buffer values", ", ".join(map(str, labels["value_label"][:64]))))
    return Shown(
        words=tuple(words),
        layout=tensor.layout,
        walked=walked,
        copied=copied,
        whole=not asks,
        compare=bool(step.compare) and not asks,
        buffer_size=len(tensor.buffer),
    )


def _odometer(layout: Any, walked: int) -> list[str]:
    # The odometer's words at each element of the walk drawn (traverse.mjs writes them).
    lines = []
    total = layout.len
    prev = None
    for k, (index, pos, axis, delta) in enumerate(layout.walk()):
        if k >= walked:
            break
        where = f"element {k + 1} of {total} · index {tuple(int(i) for i in index)} · "
        if k == 0:
            where += f"start at the offset: position {int(pos)}"
        else:
            sign = "+" if delta >= 0 else "-"
            where += (
                f"axis {axis} stepped · {sign}{abs(int(delta))} = adj_stride[{axis}] · "
                f"position {prev} → {int(pos)}"
            )
        prev = int(pos)
        lines.append(where)
    return lines


# --------------------------------------------------------------------------- what decides it


def _same_layout(a: Any, b: Any) -> bool:
    return (tuple(a.shape), tuple(a.stride), a.offset) == (
        tuple(b.shape),
        tuple(b.stride),
        b.offset,
    )


def _packed(shape: Sequence[int]) -> Any:
    from candela import Layout

    return Layout(tuple(shape))


def decided(question: Question, asked: Any, shown: Shown) -> tuple[Any, str] | None:
    """``(answer, why)`` when what ``shown`` draws decides ``question`` about ``asked``
    (the layout the question is about); ``None`` when it leaves the answer open."""
    lay = shown.layout
    if not _same_layout(lay, asked):
        return None
    ask = question.ask
    if shown.whole:
        return expected_answer(question, asked), "everything is shown (the step asks nothing)"
    if shown.copied:
        packed = _packed(lay.shape)
        try:
            value = expected_answer(question, packed)
        except (ValueError, IndexError):
            value = None
        if value == expected_answer(question, asked):
            return value, (
                f"the heading says a new packed copy: a packed layout of shape {tuple(lay.shape)}"
            )
    walk = list(_prefix(asked, shown.walked))
    rest = asked.len - shown.walked
    if 0 < rest == 1 and _reads_each_cell_once(asked, shown.buffer_size) and ask in _WALKED:
        return expected_answer(question, asked), (
            f"the walk shows {shown.walked} of {asked.len} elements, each reading its own "
            "cell: the last reads the one cell left"
        )
    if not walk:
        return None
    if ask == "offset":
        return walk[0][1], f"the walk starts at position {walk[0][1]}"
    if ask == "next_position" and question.after is not None and question.after + 1 < len(walk):
        return walk[question.after + 1][1], "the walk drawn already takes that step"
    if ask == "flat_index" and question.index is not None:
        k = _row_major_k(question.index, asked.shape)
        if k is not None and k < len(walk):
            return walk[k][1], "the walk drawn already reaches that element"
    if ask in ("stride", "adj_stride", "stride_bytes") and question.axis is not None:
        d = question.axis % asked.rank
        if any(axis == d for _, _, axis, _ in walk[1:]):
            return expected_answer(question, asked), f"the walk drawn already steps axis {d}"
    return None


_WALKED = frozenset(
    {"offset", "next_position", "flat_index", "stride", "adj_stride", "stride_bytes"}
)


def _prefix(layout: Any, walked: int) -> Iterable[tuple[tuple[int, ...], int, Any, int]]:
    for k, (index, pos, axis, delta) in enumerate(layout.walk()):
        if k >= walked:
            return
        yield tuple(int(i) for i in index), int(pos), axis, int(delta)


def _reads_each_cell_once(layout: Any, cells: int) -> bool:
    # Every buffer cell read exactly once: the one element left reads the one cell left.
    positions = sorted(int(p) for p in layout.positions())
    return positions == list(range(cells))


def _row_major_k(index: Sequence[int], shape: Sequence[int]) -> int | None:
    if len(index) != len(shape) or not all(0 <= i < n for i, n in zip(index, shape)):
        return None
    k = 0
    for i, n in zip(index, shape):
        k = k * n + i
    return k


# --------------------------------------------------------------------------- spellings


def answer_patterns(question: Question, layout: Any) -> list[tuple[str, re.Pattern[str]]]:
    """The answer to ``question`` as prose might write it: ``(label, pattern)`` pairs."""
    value = expected_answer(question, layout)
    out: list[tuple[str, re.Pattern[str]]] = []
    if isinstance(value, bool):
        word = str(value)
        out.append((word, re.compile(rf"(?:\bis|=|:|\breturns|\bgives)\s*[`*]*{word}\b")))
    elif isinstance(value, tuple):
        out.append((format_answer(value), _tuple_pattern(value)))
    else:
        out.append((str(value), _scalar_pattern(value)))
        if value < 0:  # "back by 7", "a backward jump of 7", "7 back"
            # (a number at the end of a sentence: a full stop after it is no decimal point)
            n = rf"(?<![\w.]){-value}(?!\d|\.\d|\w)"
            out.append(
                (
                    str(value),
                    re.compile(
                        rf"\bback(?:wards?)?\s+(?:by\s+|of\s+)?[`*]*{n}|\bbackward\s+jump\s+of\s+{n}"
                        rf"|{n}\s+(?:cells?\s+|elements?\s+|positions?\s+)?back\b",
                        re.IGNORECASE,
                    ),
                )
            )
        if question.ask == "len":
            out.append((str(value), re.compile(rf"\bof\s+{value}(?!\d|\.\d|\w)")))
        out += _in_words(question, value)
    return out


#: A step of one cell, said in words: the elements along the axis are neighbours.
_ONE_APART = (
    r"\bside[- ]by[- ]side\b|\bnext to (?:each other|one another)\b|\badjacent\b"
    r"|\bback[- ]to[- ]back\b|\bone after (?:the )?(?:an)?other\b|\bconsecutive(?:ly)?\b"
    r"|\bneighbou?rs in (?:memory|the buffer)\b|\ball ones\b|\bevery (?:step|jump) is \+?1\b"
    r"|\bone cell apart\b"
)
#: A step of no cells, said in words: every element along the axis reads the same cell.
_NONE_APART = (
    r"\b(?:the )?same cell (?:again|over and over|every time)\b|\bnever moves?\b"
    r"|\bdoes not move\b|\bstays? put\b|\ball zeros\b|\bno cells? apart\b"
)


def _in_words(question: Question, value: int) -> list[tuple[str, re.Pattern[str]]]:
    # A stride of one element (or of one element's bytes) and a stride of none have
    # names in prose: "a pixel's channels side by side" is the answer 1.
    if question.ask not in ("stride", "adj_stride", "stride_bytes"):
        return []
    one = DTYPE_BYTES[question.dtype or ""] if question.ask == "stride_bytes" else 1
    if value == one:
        return [(f"{value} in words", re.compile(_ONE_APART, re.IGNORECASE))]
    if value == 0:
        return [("0 in words", re.compile(_NONE_APART, re.IGNORECASE))]
    return []


def _found(patterns, words: Iterable[tuple[str, str]]) -> list[str]:
    hits = []
    for where, text in words:
        for label, pattern in patterns:
            match = pattern.search(text)
            if match:
                hits.append(f"the {where} writes the answer {label}: {match.group(0)!r}")
                break
    return hits


# --------------------------------------------------------------------------- withheld

#: Words that point at something a waiting question withholds, whatever its kind.
_ALWAYS_WITHHELD = (
    (r"\bhover", "hover names no position while a question waits"),
    (r"\bread counts?\b|×\s*n\b", "read counts are not drawn while a question waits"),
    (r"\bgr[ae]y(?:ed)?\b", "the buffer is one colour while a question waits (no greyed gaps)"),
    (r"\boffset marker\b", "the offset marker is not drawn while a question waits"),
    (
        r"\b(?:in|see|read|check) the fields\b|\bthe fields (?:show|say)\b",
        "the fields are empty while a question waits",
    ),
    (
        r"\bcost panel\b|\bthe cost (?:panel|shows|says)\b",
        "the cost is withheld while a question waits",
    ),
)
#: ... while a question waits on a step with a second view (not drawn until the answer).
_COMPARE_WITHHELD = (
    r"\b(?:right|second) (?:grid|view|lane)\b|\bon the right\b|\bview B\b",
    "the second view is not drawn while the question waits",
)
#: ... when the walk is not drawn at all.
_WALK_WITHHELD = (
    r"\b(?:follow|watch|play|step through) the walk\b|\bthe walk (?:shows|plays)\b|\bthe odometer\b",
    "the walk is not drawn while this question waits",
)
#: ... when the grid drawn is the tensor before the last operation.
_BEFORE_WITHHELD = (
    r"\bcount the grid\b|\bthe grid's (?:rows|columns|cells)\b|\bcells of the grid\b",
    "the grid drawn is the tensor before the last operation, not the one asked about",
)


def _withheld_rules(step: Step, question: Question, layout: Any) -> list[tuple[str, str]]:
    rules = list(_ALWAYS_WITHHELD)
    if step.compare:
        rules.append(_COMPARE_WITHHELD)
    kind = WITHHELD[question.ask]
    if kind.grid == "before" or walk_limit(question, layout) == 0:
        rules.append(_WALK_WITHHELD)
    if kind.grid == "before" and step.ops.strip():
        rules.append(_BEFORE_WITHHELD)
    return rules


#: A sentence that says it is about the page once the question is answered.
_LATER = re.compile(
    r"\b(?:once|after|when) (?:you (?:have )?answer(?:ed)?|answered|it is answered)", re.IGNORECASE
)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def _wrong(question: Question, layout: Any) -> str:
    # An answer the grader calls wrong and has nothing particular to say about: its hint
    # is the method alone.
    value = expected_answer(question, layout)
    if isinstance(value, bool):
        return str(not value)
    if isinstance(value, tuple):
        return str(tuple(v + 977 for v in value))
    return str(value + 977)


# --------------------------------------------------------------------------- lint


def lint_lesson(lesson: Lesson) -> list[Problem]:
    """Every way ``lesson`` shows an answer before it is asked; empty when honest."""
    source = lesson.source or lesson.id
    problems: list[Problem] = []
    shown: dict[int, Shown] = {}

    def shown_at(i: int) -> Shown | None:
        if i not in shown:
            try:
                shown[i] = shown_while_waiting(lesson, i)
            except Exception:  # a step that does not run: verify_lesson says so
                return None
        return shown[i]

    for i, step in enumerate(lesson.steps):
        try:
            layout = step_layout(step)
        except Exception:
            continue
        add = lambda kind, message, i=i: problems.append(Problem(source, i + 1, kind, message))  # noqa: E731
        if step.challenge is not None:
            for message in give_aways(step, layout, lesson.title):
                add("states", message)
            continue
        question = step.question
        if question is None:
            continue
        own = shown_at(i)
        if own is None:
            continue
        patterns = answer_patterns(question, layout)
        prose = [(w, t) for w, t in own.words if w in ("title", "text", "prompt")]
        said = _found(patterns, prose) + [m for m in give_aways(step, layout, lesson.title)]
        for message in dict.fromkeys(said):
            add("states", message)
        # The headings and the odometer write a shape and a count: read for the answer to
        # a question about them (their other numbers are the exercise's own).
        literal = isinstance(expected_answer(question, layout), tuple) or question.ask == "len"
        pictures = [(w, t) for w, t in own.words if w not in ("title", "text", "prompt")]
        if literal:
            for message in _found(patterns, pictures):
                add("picture", message)
        got = decided(question, layout, own)
        if got is not None and got[0] == expected_answer(question, layout):
            kind = "elimination" if "cell left" in got[1] else "picture"
            add(
                kind,
                f"while the question waits, {got[1]}: that is the answer {format_answer(got[0])}",
            )
        for j, side in ((i - 1, "previous"), (i + 1, "next")):
            if not 0 <= j < len(lesson.steps):
                continue
            other = shown_at(j)
            if other is None:
                continue
            # Its words are about this layout only when it draws this layout (or asks
            # about it): a number in a text about another layout is no answer to this one.
            try:
                same = _same_layout(step_layout(lesson.steps[j]), layout) or _same_layout(
                    other.layout, layout
                )
            except Exception:
                same = False
            words = [
                (f"{side} step's {w}", t)
                for w, t in other.words
                if same and (w in ("text", "prompt") or (literal and w != "title"))
            ]
            for message in _found(patterns, words):
                add("neighbour", message)
            got = decided(question, layout, other)
            if got is not None and got[0] == expected_answer(question, layout):
                add("neighbour", f"on the {side} step, {got[1]}: that is this step's answer "
                    f"{format_answer(got[0])}")  # fmt: skip
        texts = [("text", step.text), ("prompt", question.prompt)]
        texts.append(("hint", hint(question, layout, _wrong(question, layout))))
        for pattern, why in _withheld_rules(step, question, layout):
            for where, text in texts:
                for sentence in _sentences(text):
                    match = re.search(pattern, sentence, re.IGNORECASE)
                    if match and not _LATER.search(sentence):
                        add("withheld", f"the {where} says {match.group(0)!r}, but {why}")
    # One line for each place a step gives itself away.
    seen: set[tuple[int, str, str]] = set()
    unique = []
    for p in problems:
        key = (p.step, p.kind, p.message.split(":")[0])
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def lint_paths(paths: Iterable[Path | str]) -> list[str]:
    """The problems of every lesson file in ``paths``, as lines (a file that does not
    load is one line saying why)."""
    lines: list[str] = []
    for path in paths:
        try:
            lesson = load_lesson_file(path)
        except LessonError as exc:
            lines.append(str(exc))
            continue
        lines += [str(p) for p in lint_lesson(lesson)]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m explorer.lessons.lint [FILE ...]``: print each problem; 1 if any."""
    args = list(sys.argv[1:] if argv is None else argv)
    paths = [Path(a) for a in args] if args else lesson_files()
    lines = lint_paths(paths)
    for line in lines:
        print(line)
    checked = len(paths)
    print(f"{checked} lesson file{'s' if checked != 1 else ''} checked, {len(lines)} problem"
          f"{'s' if len(lines) != 1 else ''}", file=sys.stderr)  # fmt: skip
    return 1 if lines else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
