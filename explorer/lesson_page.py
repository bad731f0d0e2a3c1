"""A lesson as one offline page: every step precomputed, its questions checked in the browser.

``export_lesson_html(lesson)`` (also ``candela-explorer --export-lesson ID PATH``
and the lesson panel's download button) writes one self-contained HTML file of
a whole lesson that any static web host, or a USB stick, can hand to any
number of students. Nothing runs behind it:

- each step's text, prompt and reveal are rendered here as safe Markdown;
- each step's grid, buffer, fields and traversal are drawn here, once: the page
  has one :class:`~explorer.figures.Figures` and ``lesson_page.mjs`` swaps the
  step's precomputed column data into it (one set of models stays small, and
  ``traverse.mjs`` plays, steps, scrubs and hovers it as in the live explorer);
- a question is checked in the browser: ``lesson_page.mjs`` reads a typed
  answer the way :func:`explorer.lessons.parse_typed` does (whole numbers with
  any minus sign, ``(4, 3)`` / ``4,3`` / ``4 3``, True / False / yes / no) and
  compares its salted hash with those of :func:`~explorer.lessons.expected_answer`
  (and every accepted form). The messages (right, wrong with a hint, "show me")
  are the ones :func:`~explorer.lessons.grade` and :func:`~explorer.lessons.show_me`
  give, computed here: a wrong answer's hint comes from :func:`~explorer.lessons.hint`
  for the values whose hint says something about them, else the hint's method alone;
- the page's source holds no answer and no reveal in the clear (:func:`seal_steps`):
  a step's verdicts, reveal and answered drawing are sealed, opened by the right
  answer or by "show me" (whose key the page holds, not in the clear). That stops a
  student reading view-source, not one who runs the page's code (docs/classroom.md);
- a challenge asks for a pipeline, which only the Python parser may read, so
  the page offers "show me" (the reference solution, drawn) and says that
  checking a typed pipeline needs the live explorer.

Previous / next and the keys (← → step the walk, space plays and pauses it,
n / p go to the next / previous step) run in the browser too.

One unit, as in the live explorer: a page exported with a byte ``unit`` (the
unit box when the lesson panel's button is pressed, ``--unit`` on the command
line) shows strides, jumps and offsets in bytes of that dtype in its fields,
odometer, verdicts and worked answers, says under each step's text that the
lesson's prose counts in elements, and takes a stride, adj_stride or offset
answer in bytes or in elements (:func:`~explorer.lessons.accepted_answers`).
"""

from __future__ import annotations

import html
import io
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from . import lessons as L
from .cost_view import cost_html
from .markup import inline_html

__all__ = [
    "CHALLENGE_OFFLINE",
    "download_button",
    "export_lesson_html",
    "export_lesson_main",
    "lesson_filename",
    "lesson_page_data",
    "save_lesson_html",
]

LESSON_PAGE_JS = Path(__file__).with_name("lesson_page.mjs")
#: Put before it: what a key pressed in a text box is (the live keyboard shares it).
TYPING_JS = Path(__file__).with_name("typing_keys.mjs")

CHALLENGE_OFFLINE = (
    "Checking a typed pipeline needs the live explorer (run candela-explorer); "
    'on this page, "show me" gives one pipeline that works.'
)
NOTE = (
    "An offline lesson from Candela Explorer: the questions are checked on this page, "
    "and play, step, scrub and hover work here. To change the shape or the pipeline, "
    "run candela-explorer."
)
KEYS_HELP = (
    "keys: <kbd>←</kbd> <kbd>→</kbd> step the walk · <kbd>space</kbd> play / pause · "
    "<kbd>n</kbd> <kbd>p</kbd> next / previous lesson step"
)
#: The width of the lesson column (the text, the question, the fields).
_WIDTH = 400
#: The width of the figures' column: the widest heading, figure or traversal row, and
#: no wider than a 1024 px screen leaves beside the lesson column (with the page's
#: padding, the gap and a scroll bar), so the figures stay beside the lesson there.
_FIGURES_WIDTH = 550
#: The sources of a Figures a step swaps in, by their argument name in lesson_page.mjs.
_SOURCES = (
    "logical_source",
    "buffer_source",
    "marks_logical",
    "marks_buffer",
    "frames_source",
    "units_source",
    "marks_cost",
)


# --------------------------------------------------------------------------- text


def _markdown(text: str) -> str:
    """Lesson Markdown as HTML that runs nothing (see :mod:`explorer.markup`)."""
    from .markup import lesson_html

    return lesson_html(text)


# --------------------------------------------------------------------------- data


def _plain(value: Any) -> Any:
    """Column data as JSON: NumPy arrays and scalars to lists and numbers."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _drawing(
    result, figs, unit: str = "elements", question: L.Question | None = None, step=None
) -> dict:
    """What one state draws: the figures' data and sizes, fields and headings (JSON).

    ``figs`` is a scratch :class:`~explorer.figures.Figures` to draw it in first;
    strides, jumps and offsets are in ``unit``. With a ``question``, what the page
    draws while it waits (:mod:`explorer.lessons.withholding`): no fields, no
    layout line, the walk up to the asked jump, cells lettered, the buffer one colour.
    """
    from .fields import fields_html, headings_html, layout_line
    from .labels import POSITION_LABELS

    cols, tensor = _drawn_columns(result, question)
    waiting = L.grid_drawn(question, len(result.states) - 1)
    figs.concealed = question is not None
    figs.render(cols, tensor.layout, unit)
    cost = _step_cost(result, unit, step, withheld=question is not None)
    figs.render_cost(cost)
    sources = {name: _plain(dict(getattr(figs, name).data)) for name in _SOURCES}

    def size(fig) -> list:
        return [fig.x_range.start, fig.x_range.end, fig.y_range.start, fig.y_range.end,
                fig.width, fig.height]  # fmt: skip

    blocks = figs.label_blocks(cols, figs.cells, question is not None)
    layout = result.layout
    copied = result.copied and tensor is result.tensor
    logical_heading, buffer_heading = headings_html(
        tensor.layout.shape, len(tensor.buffer), cols.buffer_cols, copied, waiting
    )
    return {
        "sources": sources,
        # The labels as blocks: lesson_page.mjs joins them, and drops the position labels
        # while a question waits, as labels.label_rows does.
        "labels": _plain(blocks),
        "position_labels": sorted(POSITION_LABELS),
        "tags": figs.frames_source.tags,
        "logical_size": size(figs.logical_figure),
        "buffer_size": size(figs.buffer_figure),
        "cost_size": size(figs.cost_figure),
        "cost_visible": bool(figs.cost_figure.visible),
        "cost": cost_html(cost),
        "slider": {"end": figs.frame_slider.end, "disabled": figs.frame_slider.disabled},
        "odometer": figs.odometer.text,
        "fields": "" if question is not None else fields_html(layout, unit, copied=result.copied),
        # Before the answer only the pipeline: the layout line holds the strides.
        "pipeline": (
            f"Tensor.arange ({html.escape(', '.join(map(str, result.shape)))})"
            f'<code class="candela-export-ops">{html.escape(result.ops)}</code>'
        ),
        "layout": "" if question is not None else f" → {html.escape(layout_line(layout, unit))}",
        "logical_heading": logical_heading,
        "buffer_heading": buffer_heading,
    }


def _step_cost(result, unit: str, step=None, withheld: bool = False):
    """The cost panel of a step's state: its own unit, memory unit and warp when it sets
    them (a lesson about cost), else the page's unit and 64-byte cache lines."""
    from .cost_view import DEFAULT_COST_UNIT, cost_view, item_bytes
    from .fields import DTYPE_BYTES

    unit = (getattr(step, "unit", "") or unit) if step is not None else unit
    cols = None if withheld else _drawn_columns(result)[0]
    tensor = result.tensor
    return cost_view(
        result.layout,
        item_bytes(unit, tensor),
        getattr(step, "cost", None) or DEFAULT_COST_UNIT,
        getattr(step, "warp", None),
        positions=None if cols is None or cols.overview else cols.frames["pos"],
        buffer_len=len(tensor.buffer),
        dtype=unit if unit in DTYPE_BYTES else tensor.buffer.dtype.name,
        withheld=withheld,
    )


def _drawn_columns(result, question: L.Question | None = None) -> tuple:
    """``(columns, tensor)`` a state draws: in full, or what ``question`` lets it show."""
    from . import columns as C

    tensor = result.tensor
    if question is None:
        return C.columns_for(tensor), tensor
    if L.draws_before(question):
        tensor = result.states[-2] if len(result.states) > 1 else result.states[0]
        return C.withheld_columns(C.columns_for(tensor), 0), tensor
    return C.withheld_columns(C.columns_for(tensor), L.walk_limit(question, tensor.layout)), tensor


def _step_state(step: L.Step):
    """The state a step shows and the error it is meant to raise (``""`` if none)."""
    from .pipeline import PipelineError, format_pipeline, parse
    from .state import StateError, evaluate

    if not step.expect_error:
        return evaluate(step.shape, step.ops), ""
    try:
        evaluate(step.shape, step.ops)
    except StateError as exc:
        error = str(exc)
    else:  # pragma: no cover - verify_lesson refuses such a lesson
        error = ""
    try:
        good = format_pipeline(parse(step.ops)[:-1])
    except PipelineError:
        good = ""
    return evaluate(step.shape, good), error


def _canon(value: L.Answer) -> Any:
    # What lesson_page.mjs compares a typed answer with.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return [str(int(v)) for v in value]
    return str(int(value))


def _int_candidates(layout, size: int = 1) -> list[int]:
    # Numbers a student might type: the layout's own numbers (strides, jumps and offset
    # also in bytes, `size` to an element), and every buffer position.
    numbers = {*layout.shape, *layout.stride, *layout.adj_stride, layout.offset, layout.len}
    numbers |= {v * size for v in (*layout.stride, *layout.adj_stride, layout.offset)}
    # A hint names a stride, a jump, a position, or a position plus a stride.
    last = int(max(layout.positions(), default=0))
    reach = min(last + max(abs(n) for n in numbers) + 2, 400)
    return list(range(-reach, reach + 1))


def _hints(
    question: L.Question, layout, expected: L.Answer, unit: str = "elements"
) -> tuple[str, dict[str, str]]:
    """The method hint and, for typed values that draw a hint of their own, that hint."""
    found: dict[str, str] = {}
    if isinstance(expected, bool):
        wrong = not expected
        return L.hint(question, layout, str(wrong), unit), {}
    if isinstance(expected, tuple):
        m = len(expected)
        for n in range(1, L.MAX_RANK + 1):
            if n != m:
                found[f"len:{n}"] = L.hint(question, layout, str((1,) * n), unit)
        for mask in range(1, 2**m):
            off = [k for k in range(m) if mask >> k & 1]
            given = tuple(v + 1 if k in off else v for k, v in enumerate(expected))
            found["off:" + ",".join(map(str, off))] = L.hint(question, layout, str(given), unit)
        method = Counter(found.values()).most_common(1)[0][0] if found else ""
        return method, found
    accepted = L.accepted_answers(question, layout, unit)
    for value in _int_candidates(layout, L.byte_unit(unit) or 1):
        if value not in accepted:
            found[str(value)] = L.hint(question, layout, str(value), unit)
    method = Counter(found.values()).most_common(1)[0][0]
    return method, {k: v for k, v in found.items() if v != method}


def _question_data(question: L.Question, layout, unit: str = "elements") -> dict:
    accepted = L.accepted_answers(question, layout, unit)
    expected = accepted[0]
    right = L.grade(question, layout, L.format_answer(expected), unit)
    shown = L.show_me(question, layout, unit)
    kind = L.ASKS[question.ask][1]
    method, hints = _hints(question, layout, expected, unit)
    return {
        "kind": {int: "int", tuple: "tuple", bool: "bool"}[kind],
        "prompt": _markdown(question.prompt),
        "expected": _canon(expected),
        # Every answer taken: in a byte unit a stride is right in bytes or in elements.
        "accepted": [_canon(value) for value in accepted],
        "right": right.message,
        "right_worked": right.worked,
        "shown": shown.message,
        "shown_worked": shown.worked,
        "method": method,
        "hints": hints,
    }


def step_data(lesson: L.Lesson, index: int, figs=None, unit: str = "elements") -> dict:
    """Everything the page needs for step ``index`` (from 0) of ``lesson``, as JSON.

    Strides, jumps and offsets are in ``unit`` (elements or a dtype's bytes).
    """
    from .figures import Figures
    from .state import evaluate

    figs = Figures() if figs is None else figs
    step = lesson.steps[index]
    result, error = _step_state(step)
    text = step.text
    if step.expect_error:
        text += (
            f"\n\n*This step is meant to fail: candela raises `{step.expect_error}`. "
            "The message is under the fields, and the last good state stays.*"
        )
    data: dict[str, Any] = {
        "header": (
            f'<div class="candela-lesson-title">{html.escape(lesson.title)}</div>'
            f'<div class="candela-lesson-step">step {index + 1} of {len(lesson.steps)}</div>'
        ),
        "text": _markdown(text) + _unit_note(unit, step),
        "reveal": _markdown(step.reveal) if step.reveal else "",
        "error": inline_html(error),
        "drawing": _drawing(result, figs, unit, step=step),
        "question": None,
        "challenge": None,
    }
    if step.question is not None:
        data["question"] = _question_data(step.question, result.layout, unit)
        # What the page draws until the question is answered or shown.
        data["withheld"] = _drawing(result, figs, unit, step.question, step)
    elif step.challenge is not None:
        challenge = step.challenge
        solved = L.show_solution(step, unit)
        data["challenge"] = {
            "prompt": _markdown(challenge.prompt),
            "target": inline_html(L.describe_target(challenge.target, unit=unit)),
            "shown": solved.message,
            "shown_worked": solved.worked,
            "drawing": _drawing(
                evaluate(step.shape, step.ops + challenge.solution.strip()),
                figs,
                unit,
                step=step,
            ),
        }
    return data


def lesson_page_data(lesson: L.Lesson, unit: str = "elements") -> dict:
    """The whole lesson as the page's data: one entry per step (see :func:`step_data`)."""
    # A NaN left in the data would not parse in the browser: refuse it here.
    return json.loads(json.dumps(_lesson_data(lesson, unit), allow_nan=False))


def _lesson_data(lesson: L.Lesson, unit: str) -> dict:
    from .figures import Figures

    figs = Figures()  # one scratch set of models draws every step in turn
    return {
        "id": lesson.id,
        "title": lesson.title,
        "unit": unit if L.byte_unit(unit) else "elements",
        "challenge_note": CHALLENGE_OFFLINE,
        "steps": [step_data(lesson, i, figs, unit) for i in range(len(lesson.steps))],
    }


# --------------------------------------------------------------------------- sealing

#: What a question step keeps sealed until it is answered right or shown: its verdicts,
#: its reveal and its whole drawing (the fields, the walk, every label).
_SEALED_QUESTION = ("expected", "accepted", "right", "right_worked", "shown", "shown_worked")


def _sha(*parts: bytes | str) -> bytes:
    import hashlib

    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8") if isinstance(part, str) else part)
    return digest.digest()


def _canon_text(value: Any) -> str:
    # A canonical answer (_canon) as the one string both sides hash: "-7", "4,3", "true".
    return ",".join(value) if isinstance(value, list) else value


def _answer_key(salt: str, index: int, canon: str) -> bytes:
    """The key material of one answer to step ``index``: what a typed answer must hash to."""
    return _sha(f"candela-lesson\x00{salt}\x00{index}\x00{canon}")


def _show_key(salt: str, index: int) -> bytes:
    """What "show me" unlocks a step with: in the page for anyone who reads its code."""
    return _sha(f"candela-show\x00{salt}\x00{index}")


def _part(salt: str, index: int, k: Any, value: Any) -> str:
    # One entry of a tuple answer (or its length, k = "n"), hashed: which entries are off.
    return _sha(f"candela-part\x00{salt}\x00{index}\x00{k}\x00{value}").hex()[:16]


def _xor(data: bytes, key: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, key))


def _keystream(key: bytes, nonce: bytes, size: int) -> bytes:
    # SHA-256 in counter mode: block j is SHA-256(key || nonce || j), j as 4 bytes.
    blocks = [_sha(key, nonce, j.to_bytes(4, "big")) for j in range((size + 31) // 32)]
    return b"".join(blocks)[:size]


def _seal_bytes(plain: bytes, key: bytes) -> dict:
    import base64

    nonce = os.urandom(12)
    stream = _keystream(key, nonce, len(plain))
    # XOR as whole numbers: a byte at a time is slow for a 64x64 drawing.
    cipher = (int.from_bytes(plain, "big") ^ int.from_bytes(stream, "big")).to_bytes(
        len(plain), "big"
    )
    return {
        "nonce": nonce.hex(),
        "data": base64.b64encode(cipher).decode("ascii"),
        "tag": _sha(key, b"tag", nonce, cipher).hex(),
    }


def _open_bytes(sealed: dict, key: bytes) -> bytes:
    """:func:`_seal_bytes` undone (what ``lesson_page.mjs`` does); ``ValueError`` for a wrong
    key."""
    import base64

    nonce, cipher = bytes.fromhex(sealed["nonce"]), base64.b64decode(sealed["data"])
    if _sha(key, b"tag", nonce, cipher).hex() != sealed["tag"]:
        raise ValueError("wrong key")
    stream = _keystream(key, nonce, len(cipher))
    return (int.from_bytes(cipher, "big") ^ int.from_bytes(stream, "big")).to_bytes(
        len(cipher), "big"
    )


def _seal_json(text: str, key: bytes) -> dict:
    # Compressed first (zlib, which the browser's DecompressionStream("deflate") reads):
    # a sealed drawing does not compress, and a 64x64 one is half a megabyte.
    import zlib

    return _seal_bytes(zlib.compress(text.encode("utf-8"), 9), key)


def _open_json(sealed: dict, key: bytes) -> Any:
    import zlib

    return json.loads(zlib.decompress(_open_bytes(sealed, key)))


def seal_steps(steps: list[dict], salt: str) -> tuple[list[dict], list[dict]]:
    """The steps as the page holds them: no answer and no reveal in the clear.

    A step that asks (a question or a challenge) keeps, in the clear, only what it shows
    while it waits. Everything else (the verdicts, the reveal, the drawing after the
    answer, a challenge's solution) is one JSON sealed with a random key ``K``
    (SHA-256 in counter mode, a SHA-256 tag over the ciphertext). ``K`` is stored once
    for each accepted answer, XORed with a key derived from that answer and the page's
    salt (so only the right answer opens it), beside the salted hash that checks the
    answer; and once for "show me", XORed with a key derived from the salt alone. That
    stops a student who reads the page's source; it cannot stop one who runs its code
    (every answer is a small number, and "show me" must work offline): see
    docs/classroom.md. Drawings repeated in the clear are sent once (:func:`_shared`);
    each sealed drawing once too, with its own key, which the secrets that draw it
    hold; a sealed drawing may refer to a clear one. Returns the steps and the sealed
    drawings.
    """
    out = json.loads(json.dumps(steps))
    secrets: dict[int, dict] = {}
    for i, step in enumerate(out):
        q, ch = step.get("question"), step.get("challenge")
        if q is None and ch is None:
            continue
        secret = {"reveal": step.pop("reveal", "")}
        if q is not None:  # (a challenge's start is drawn whole: its solution is sealed)
            secret["drawing"] = step.pop("drawing")
            for key in _SEALED_QUESTION:
                secret[key] = q.pop(key)
        else:
            for key in ("shown", "shown_worked", "drawing"):
                secret["challenge_" + key] = ch.pop(key)
        secrets[i] = secret
    seen = _shared_seen(out)
    # Each sealed drawing once, with a key of its own that the secrets of the steps that
    # draw it hold (steps about one layout draw one thing once answered).
    drawings: dict[str, int] = {}
    sealed_drawings: list[dict] = []
    for secret in secrets.values():
        for name in ("drawing", "challenge_drawing"):
            if not secret.get(name):
                continue
            sources = secret[name].get("sources", {})
            for source, data in sources.items():
                text = json.dumps(data, sort_keys=True, default=str)
                if len(seen.get(text, ())) == 3 and len(text) > 1000:  # a clear source
                    sources[source] = {"same": seen[text]}
            text = json.dumps(secret[name], separators=(",", ":"), sort_keys=True)
            if text not in drawings:
                drawings[text] = len(sealed_drawings)
                dkey = os.urandom(32)
                sealed_drawings.append({**_seal_json(text, dkey), "key": dkey})
            at = drawings[text]
            secret[name] = {"sealed": at, "key": sealed_drawings[at]["key"].hex()}
    for i, secret in secrets.items():
        key = os.urandom(32)
        step = out[i]
        sealed = _seal_json(json.dumps(secret, separators=(",", ":")), key)
        sealed["show"] = _xor(key, _show_key(salt, i)).hex()
        q = step.get("question")
        if q is not None:
            checks = []
            for value in secret["accepted"]:
                material = _answer_key(salt, i, _canon_text(value))
                checks.append(
                    {"hash": _sha(b"check", material).hex(),
                     "wrap": _xor(key, _sha(b"key", material)).hex()}
                )  # fmt: skip
            q["checks"] = checks
            expected = secret["expected"]
            if isinstance(expected, list):
                # Which entries of a tuple are off, without the tuple: each entry hashed,
                # padded to the largest rank so the list's length says nothing.
                parts = [_part(salt, i, k, v) for k, v in enumerate(expected)]
                parts += [os.urandom(8).hex() for _ in range(L.MAX_RANK - len(parts))]
                q["parts"] = parts
                q["count"] = _part(salt, i, "n", len(expected))
        step["sealed"] = sealed
    for sealed in sealed_drawings:
        del sealed["key"]
    return out, sealed_drawings


def open_step(
    step: dict, salt: str, index: int, typed_canon: str | None = None, drawings=()
) -> dict:
    """A sealed step's secret, opened with an answer (canonical text) or by "show me"
    (``None``), its drawings opened from ``drawings``; ``ValueError`` for a wrong answer.
    For the tests: the page does this in ``lesson_page.mjs``."""
    sealed = step["sealed"]
    if typed_canon is None:
        key = _xor(bytes.fromhex(sealed["show"]), _show_key(salt, index))
    else:
        material = _answer_key(salt, index, typed_canon)
        check = _sha(b"check", material).hex()
        match = [c for c in step["question"]["checks"] if c["hash"] == check]
        if not match:
            raise ValueError("not the answer")
        key = _xor(bytes.fromhex(match[0]["wrap"]), _sha(b"key", material))
    secret = _open_json(sealed, key)
    for name in ("drawing", "challenge_drawing"):
        ref = secret.get(name)
        if ref and drawings:
            secret[name] = _open_json(drawings[ref["sealed"]], bytes.fromhex(ref["key"]))
    return secret


def _shared_seen(steps: list[dict]) -> dict[str, list]:
    seen: dict[str, list] = {}
    _shared(steps, seen)
    return seen


def _shared(steps: list[dict], seen: dict[str, list] | None = None) -> list[dict]:
    """Each drawing that an earlier one repeats (steps of one state: a question, then the
    next about the same layout) replaced by ``{"same": [step, key]}``, and each large
    source by ``{"same": [step, key, name]}``: a 64×64 drawing is half a megabyte, and
    ``lesson_page.mjs`` puts the first back in its place."""
    seen = {} if seen is None else seen
    for i, step in enumerate(steps):
        places = [(step, "drawing"), (step, "withheld")]
        if step.get("challenge") and "drawing" in step["challenge"]:
            places.append((step["challenge"], "drawing"))
        for owner, key in places:
            if key not in owner:
                continue
            text = json.dumps(owner[key], sort_keys=True, default=str)
            where = [i, key if owner is step else "challenge"]
            if text in seen:
                owner[key] = {"same": seen[text]}
                continue
            seen[text] = where
            # ... and each source an earlier drawing holds (the grid of one shape, the
            # buffer of one colour while questions wait): {"same": [step, key, name]}.
            sources = owner[key]["sources"]
            for name, data in sources.items():
                text = json.dumps(data, sort_keys=True, default=str)
                if text in seen and len(text) > 1000:
                    sources[name] = {"same": seen[text]}
                else:
                    seen.setdefault(text, [*where, name])
    return steps


def _unit_note(unit: str, step: L.Step) -> str:
    note = L.unit_note(unit, step)
    return f'<div class="candela-unit-note" role="note">{html.escape(note)}</div>' if note else ""


# --------------------------------------------------------------------------- page


def _stylesheet():
    from bokeh.models import InlineStyleSheet

    from .style import CSS

    return InlineStyleSheet(css=CSS)


class _Page:
    """The models of the lesson page and the callbacks that run ``lesson_page.mjs``."""

    def __init__(self, lesson: L.Lesson, unit: str = "elements") -> None:
        from bokeh.layouts import column, row
        from bokeh.models import Button, ColumnDataSource, CustomJS, Div, TextInput

        from .figures import Figures

        sheet = _stylesheet()  # one model for every Div: the page carries the CSS once

        def _div(text: str = "", name: str = "", cls: str = "", **params) -> Div:
            return Div(text=text, name=name or None, css_classes=[cls] if cls else [],
                       stylesheets=[sheet], **params)  # fmt: skip

        data = lesson_page_data(lesson, unit)
        first = data["steps"][0]
        self.figures = f = Figures()
        # Sealed (no answer, reveal or answered drawing in the clear), each repeated
        # drawing sent once (seal_steps); the data above stays whole.
        salt = os.urandom(16).hex()
        steps, drawings = seal_steps(data["steps"], salt)
        sent = {**data, "salt": salt, "steps": steps, "drawings": drawings}
        self.store = ColumnDataSource(
            {}, name="lesson-data", tags=[json.dumps(sent, separators=(",", ":"))]
        )
        w = _WIDTH
        self.header = _div(first["header"], "lesson-header", width=w)
        self.prev = Button(label="◀ previous", name="lesson-prev", width=w // 2 - 5,
                           css_classes=["candela-prev"], disabled=True)  # fmt: skip
        self.next = Button(label="next ▶", name="lesson-next", width=w // 2 - 5,
                           css_classes=["candela-next"], button_type="primary")  # fmt: skip
        self.text = _div(first["text"], "lesson-text", "candela-lesson-text", width=w)
        self.question = _div("", "lesson-question", width=w)
        self.answer = TextInput(
            title="your answer (press Enter to check)", placeholder=L.ANSWER_HINT,
            name="lesson-answer", css_classes=["candela-answer"], width=w - 90,
        )  # fmt: skip
        self.check = Button(label="check", name="lesson-check", button_type="primary",
                            css_classes=["candela-check"], width=80, align="end")  # fmt: skip
        self.verdict = _div('<div class="candela-verdict"></div>', "lesson-verdict", width=w)
        self.show_me = Button(label="show me", name="lesson-show-me", width=90,
                              css_classes=["candela-show-me"], visible=False)  # fmt: skip
        self.reveal = _div("", "lesson-reveal", "candela-reveal", width=w, visible=False)
        for widget in (self.prev, self.next, self.check, self.show_me, self.answer):
            widget.stylesheets = [f.themed]  # light or dark, as the traversal's widgets
        self.answer_row = row(self.answer, self.check)
        self.lesson_panel = column(
            self.header,
            row(self.prev, self.next),
            self.question,
            self.answer_row,
            self.verdict,
            self.show_me,
            self.reveal,
            self.text,
            _div(f'<div class="candela-keys">{KEYS_HELP}</div>', width=w),
            name="lesson-panel",
            css_classes=["candela-classroom"],
        )
        heading = '<div class="candela-heading">{}</div>'
        self.state = _div("", "lesson-state", width=w)
        self.fields_heading = _div(heading.format("fields"), width=w, visible=False)
        self.fields = _div("", "lesson-fields", width=w, visible=False)
        self.error = _div("", "lesson-error", width=w)
        self.info = column(self.state, self.fields_heading, self.fields, self.error)
        self.logical_heading = _div("", "logical-heading", width=560)
        self.buffer_heading = _div("", "buffer-heading", width=600)
        self.cost = _div("", "lesson-cost", "candela-cost-text", width=_FIGURES_WIDTH - 10)
        f.concealed = lesson.steps[0].question is not None
        f.render(*_first_columns(lesson, unit))
        first_step = lesson.steps[0]
        f.render_cost(
            _step_cost(_step_state(first_step)[0], unit, first_step, first_step.question is not None
                       or first_step.challenge is not None)
        )  # fmt: skip
        args = dict(
            **f.script_args(),
            store=self.store,
            **{name: getattr(f, name) for name in _SOURCES},
            jump_source=f.jump_source,
            # Hover names no position while a question waits (see Figures.tooltips).
            tooltips={str(c).lower(): f.tooltips(c) for c in (False, True)},
            forward=f.buttons["forward"],
            labels_logical=f.labels_logical,
            labels_buffer=f.labels_buffer,
            header=self.header,
            prev=self.prev,
            next=self.next,
            text=self.text,
            question=self.question,
            answer=self.answer,
            answer_row=self.answer_row,
            check=self.check,
            verdict=self.verdict,
            show_me=self.show_me,
            reveal=self.reveal,
            state=self.state,
            fields=self.fields,
            fields_heading=self.fields_heading,
            error=self.error,
            logical_heading=self.logical_heading,
            buffer_heading=self.buffer_heading,
            cost=self.cost,
            cost_figure=f.cost_figure,
        )

        # One callback for every control (it tells them apart by the caller): the
        # module's code is in the page once.
        self.ready = CustomJS(
            code="\n".join(p.read_text(encoding="utf-8") for p in (TYPING_JS, LESSON_PAGE_JS)),
            args=args,
        )
        for button in (self.prev, self.next, self.check, self.show_me):
            button.js_on_click(self.ready)
        self.answer.js_on_change("value", self.ready)

    def layout(self):
        """The page as one Bokeh layout: the lesson and the fields beside the figures."""
        from bokeh.layouts import column, row
        from bokeh.models import Div

        from .style import legend_html, title_html

        f = self.figures
        sheet = self.fields.stylesheets
        note = f'<div class="candela-legend">{html.escape(NOTE)}</div>'
        title = Div(text=title_html(note), stylesheets=sheet, sizing_mode="stretch_width")
        views = column(
            self.logical_heading,
            f.logical_figure,
            self.buffer_heading,
            f.buffer_figure,
            Div(text=legend_html(), stylesheets=sheet),
            f.traversal,
            # The cost of the walk: its words and its units (explorer.cost_view).
            column(self.cost, f.cost_figure, css_classes=["candela-cost"]),
            # Its own width: the odometer stretched the column to the whole page, which
            # put the figures under the lesson, below the fold, once its text grew.
            width=_FIGURES_WIDTH,
        )
        lesson = column(self.lesson_panel, self.info, width=_WIDTH + 10)
        body = row(lesson, views, styles={"flex-wrap": "wrap", "gap": "8px 24px"})
        from bokeh.models import InlineStyleSheet

        from .style import THEME_CSS

        return column(
            title,
            body,
            css_classes=["candela-explorer", "candela-export", "candela-lesson-page"],
            stylesheets=[InlineStyleSheet(css=THEME_CSS)],  # light or dark (theme.css)
            styles={"padding": "8px"},
        )


def _first_columns(lesson: L.Lesson, unit: str = "elements"):
    # The first step as the page shows it before its script runs: withheld, if it asks.
    step = lesson.steps[0]
    result, _ = _step_state(step)
    cols, tensor = _drawn_columns(result, step.question)
    return cols, tensor.layout, unit


def export_lesson_html(lesson: L.Lesson | str, unit: str = "elements") -> str:
    """The offline page of ``lesson`` (a :class:`~explorer.lessons.Lesson` or its id).

    A pure Bokeh document (no Panel models, so none of Panel's scripts), saved
    with Bokeh's scripts inline: under 2 MB, and no network request. Strides,
    jumps and offsets are in ``unit``: elements, or the bytes of a dtype name
    (anything else counts as elements).
    """
    from bokeh.document import Document

    if isinstance(lesson, str):
        lesson = L.load_lesson(lesson)
    unit = unit if L.byte_unit(unit) else "elements"
    page = _Page(lesson, unit)
    doc = Document()
    doc.add_root(page.layout())
    doc.js_on_event("document_ready", page.ready)
    return _standalone_html(doc, title=f"{lesson.title} — Candela Explorer")


def _standalone_html(doc, title: str) -> str:
    """``bokeh.embed.file_html`` with every script inline and no file linked.

    Bokeh leaves out the bundles the document does not use (WebGL, tables,
    MathJax), but links the scripts every *imported* extension's models declare
    (Panel's ES module shim, once Panel is imported): this page uses none, so
    none is linked.
    """
    from bokeh.embed.bundle import bundle_for_objs_and_resources
    from bokeh.embed.elements import html_page_for_render_items
    from bokeh.embed.util import standalone_docs_json_and_render_items
    from bokeh.resources import INLINE

    docs_json, render_items = standalone_docs_json_and_render_items(doc)
    bundle = bundle_for_objs_and_resources([doc], INLINE)
    bundle.js_files, bundle.css_files = [], []
    from .style import PAGE_TEMPLATE

    return html_page_for_render_items(
        bundle, docs_json, render_items, title=title, template=PAGE_TEMPLATE
    )


def lesson_filename(lesson_id: str, unit: str = "elements") -> str:
    """The file name of a lesson's page, e.g. ``candela-lesson-transpose.html``.

    A page in bytes says its dtype: ``candela-lesson-transpose-float32.html``.
    """
    return f"candela-lesson-{lesson_id}{'-' + unit if L.byte_unit(unit) else ''}.html"


def save_lesson_html(
    lesson: L.Lesson | str, path: str | os.PathLike, unit: str = "elements"
) -> Path:
    """Write the lesson's page to ``path`` whole or not at all; return the path written.

    A path that cannot be written raises (``OSError`` or ``ValueError``) before
    the page is built.
    """
    from .export import check_export_path, write_atomically

    target = check_export_path(path)
    write_atomically(target, export_lesson_html(lesson, unit).encode("utf-8"))
    return target


def export_lesson_main(lesson_id: str, path: str, unit: str = "elements") -> int:
    """``candela-explorer --export-lesson ID PATH``: write the page, or say in one line why not."""
    try:
        lesson = L.load_lesson(lesson_id)
    except (L.LessonNotFound, L.LessonError) as exc:
        print(f"candela-explorer: cannot export lesson: {exc}", file=sys.stderr)
        return 2
    try:
        written = save_lesson_html(lesson, path, unit)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        print(f"candela-explorer: cannot write {path!r}: {reason}", file=sys.stderr)
        return 2
    size = written.stat().st_size
    print(f"wrote {written} ({size:,} bytes): lesson {lesson.id!r}, {len(lesson.steps)} steps")
    return 0


def download_button(state, **params):
    """A ``FileDownload`` button that hands the browser the offline page of ``state``'s lesson."""
    import panel as pn

    def page() -> io.BytesIO:
        return io.BytesIO(export_lesson_html(state.lesson, state.unit).encode("utf-8"))

    defaults = {
        "label": "download this lesson as one page",
        "filename": lesson_filename(state.lesson or "lesson", state.unit),
        "color": "light",
        "css_classes": ["candela-lesson-download"],
        "sizing_mode": "stretch_width",
        "embed": False,
    }
    button = pn.widgets.FileDownload(callback=page, **{**defaults, **params})

    def rename(event) -> None:
        button.filename = lesson_filename(state.lesson or "lesson", state.unit)

    state.param.watch(rename, ["lesson", "unit"])
    return button
