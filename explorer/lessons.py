"""Lessons for the classroom: load them, validate them, and check a student's answers.

A lesson is a JSON file in ``assets/lessons/`` named ``NN-<id>.json``; the numeric
prefix orders the lessons and ``<id>`` is the lesson's ``id`` (the name used in
the app's URL). Each lesson is an ordered list of steps; a step is a shape, a
pipeline applied to ``Tensor.arange(shape)`` (so every value is its original
buffer position), a short teaching text, and optionally a predict-then-reveal
question, a challenge, or the name of the candela error the pipeline must raise.

The file format, exactly::

    {"id": "row-major", "title": "...", "summary": "...",
     "steps": [{"shape": [3, 4], "ops": ".transpose()", "text": "markdown",
                "reveal": "markdown shown only after the answer",
                "question": {"ask": "adj_stride", "axis": 0, "prompt": "...",
                             "answer": -7, "why": "..."},
                "challenge": {"prompt": "...", "why": "...",
                              "target": {"shape": [4, 3], "stride": [1, 4],
                                         "offset": 0, "positions": [0, 4, ...]},
                              "solution": ".transpose()"},
                "expect_error": "NonContiguousView"}]}

``question``, ``challenge`` and ``expect_error`` are optional and at most one
is on a step; ``reveal`` needs a question or a challenge. The question's stored
``answer`` is what the lesson author believes; the app grades against
:func:`expected_answer`, computed from candela, and the tests prove the two
agree, so a lesson cannot teach a wrong number. :func:`verify_lesson` also
refuses a step whose title, text or prompt shows its answer before it is asked
(:func:`give_aways`): such a sentence belongs in ``reveal``.

What the page shows, and when
-----------------------------

A step with a question:

1. before an answer: ``step.text`` and ``question.prompt``; the fields stay
   hidden (and nothing else that holds the answer);
2. on "check": ``v = grade(question, layout, typed)``.
   ``v.correct``: show ``v.message`` and ``v.worked``, then ``step.reveal``,
   the fields, and play the traversal. Wrong but ``v.readable``: show
   ``v.message`` (what was typed, then ``v.hint``); keep the fields hidden,
   let the student try again, and offer "show me". Not ``v.readable``: show
   ``v.message`` (what to type). A wrong verdict never holds the right value
   (``v.expected`` is ``None``, ``v.worked`` is empty);
3. on "show me": ``v = show_me(question, layout)``, with ``v.revealed`` True:
   show it as after a right answer (message, worked, ``step.reveal``, fields,
   traversal), marked as shown rather than answered.

A step with a challenge: show ``step.text``, ``challenge.prompt`` and
:func:`describe_target` of ``challenge.target``; the student types a pipeline
that continues from the step's layout (:func:`challenge_start`). On "check",
``v = grade_challenge(step, typed)``: the resulting layout is compared with the
target, so any chain that reaches it is right; a wrong one says what differs
(shape, stride, offset, or where the walk leaves the target's) and never shows
the solution; text that is not a pipeline is refused, unread and unrun. On
"show me", :func:`show_solution` gives the reference solution and its layout.
After either, show ``step.reveal``.

This module is pure: it imports neither Panel nor Bokeh. Loading and
validating a file needs nothing but the standard library; computing answers
reads a ``candela.Layout``; running a step's pipeline goes through
``explorer.pipeline``, the one parser of pipeline text.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import candela.errors

from .fields import DTYPE_BYTES

if TYPE_CHECKING:  # pragma: no cover - only for type hints
    from candela import Layout, Tensor

__all__ = [
    "ASKS",
    "DTYPE_BYTES",
    "ERROR_NAMES",
    "IN_UNIT",
    "TARGET_KEYS",
    "Answer",
    "Challenge",
    "Lesson",
    "LessonError",
    "LessonNotFound",
    "Question",
    "Step",
    "Target",
    "Verdict",
    "accepted_answers",
    "byte_unit",
    "challenge_start",
    "check_answer",
    "describe",
    "describe_target",
    "expected_answer",
    "explain",
    "explain_in_bytes",
    "format_answer",
    "give_aways",
    "grade",
    "grade_challenge",
    "hint",
    "lesson_files",
    "lessons_dir",
    "list_lessons",
    "load_lesson",
    "load_lesson_file",
    "parse_lesson",
    "parse_lesson_json",
    "parse_typed",
    "run_step",
    "show_me",
    "show_solution",
    "state_answer",
    "step_layout",
    "unit_method",
    "unit_note",
    "verify_lesson",
]

#: What a student can be asked to type: an int, a tuple of ints, or a bool.
Answer = int | bool | tuple[int, ...]

#: Every kind of question, with the extra fields it needs and the kind of answer.
ASKS: dict[str, tuple[frozenset[str], type]] = {
    "stride": (frozenset({"axis"}), int),
    "adj_stride": (frozenset({"axis"}), int),
    "offset": (frozenset(), int),
    "len": (frozenset(), int),
    "shape": (frozenset(), tuple),
    "next_position": (frozenset({"after"}), int),
    "stride_bytes": (frozenset({"axis", "dtype"}), int),
    "shape_as_3d": (frozenset(), tuple),
    "read_count": (frozenset({"position"}), int),
    "is_contiguous": (frozenset(), bool),
    "flat_index": (frozenset({"index"}), int),
}

#: The candela error classes a step may declare in ``expect_error``.
ERROR_NAMES: frozenset[str] = frozenset(candela.errors.__all__)

#: A lesson must draw in full detail, so its tensors stay small.
MAX_RANK = 8
MAX_ELEMENTS = 4096

#: Limits on a lesson file, so a broken or hostile one is refused before it costs much:
#: its size in bytes, how deep its JSON nests, how long a text and a whole number are.
MAX_FILE_BYTES = 1_000_000
MAX_JSON_DEPTH = 32
MAX_TEXT_CHARS = 20_000
MAX_TITLE_CHARS = 200
MAX_OPS_CHARS = 2000
MAX_INT_DIGITS = 19
_INT64 = 2**63 - 1

log = logging.getLogger(__name__)

_LESSON_KEYS = frozenset({"id", "title", "summary", "steps"})
_STEP_KEYS = frozenset({"shape", "ops", "text", "question", "expect_error", "reveal", "challenge"})
_QUESTION_KEYS = frozenset(
    {"ask", "prompt", "answer", "why", "axis", "after", "dtype", "position", "index"}
)
_CHALLENGE_KEYS = frozenset({"prompt", "target", "solution", "why"})
#: What a challenge's target may fix; every field it gives must match.
TARGET_KEYS: tuple[str, ...] = ("shape", "stride", "offset", "positions")
_FILE_NAME = re.compile(r"([0-9]{1,9})-([a-z0-9]+(?:-[a-z0-9]+)*)\.json")
_MAX_TYPED = 200


# --------------------------------------------------------------------------- model


class LessonError(ValueError):
    """A lesson file that cannot be used; the message names the file, the field and why."""

    def __init__(self, source: str, where: str, reason: str) -> None:
        self.source = source
        self.where = where
        self.reason = reason
        place = f"{source}: {where}" if where else source
        super().__init__(f"{place}: {reason}")


class LessonNotFound(LookupError):
    """No lesson has the requested id; the message lists the ids there are."""

    def __init__(self, lesson_id: str, known: Sequence[str]) -> None:
        self.lesson_id = lesson_id
        self.known = tuple(known)
        super().__init__(f"no lesson {lesson_id!r}; the lessons are: {', '.join(self.known)}")


@dataclass(frozen=True)
class Question:
    """A predict-then-reveal question about the layout a step ends with."""

    ask: str
    prompt: str
    answer: Answer
    why: str
    axis: int | None = None
    after: int | None = None
    dtype: str | None = None
    position: int | None = None
    index: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Target:
    """What a challenge asks for: any of shape, stride, offset and the walk's positions."""

    shape: tuple[int, ...] | None = None
    stride: tuple[int, ...] | None = None
    offset: int | None = None
    positions: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Challenge:
    """Reach ``target`` from the step's layout with a pipeline; ``solution`` is one that does."""

    prompt: str
    target: Target
    solution: str
    why: str


@dataclass(frozen=True)
class Step:
    """One step of a lesson: ``ops`` applied to ``Tensor.arange(shape)``, and its text.

    ``text`` is shown at once; ``reveal`` (markdown, optional) only after the
    step's question or challenge is answered right or shown.
    """

    shape: tuple[int, ...]
    ops: str
    text: str
    question: Question | None = None
    expect_error: str | None = None
    reveal: str = ""
    challenge: Challenge | None = None


@dataclass(frozen=True)
class Lesson:
    """An ordered list of steps, with the title and summary the lesson picker shows."""

    id: str
    title: str
    summary: str
    steps: tuple[Step, ...]
    source: str = ""


@dataclass(frozen=True)
class Verdict:
    """How a typed answer (or pipeline) fared.

    ``readable`` is False when the text was not an answer at all. A verdict
    that is not ``correct`` and not ``revealed`` never holds the right value:
    ``expected`` is ``None`` and ``message``, ``hint`` and ``worked`` do not
    show it. ``revealed`` marks the verdict of :func:`show_me` or
    :func:`show_solution`, the student's "show me".
    """

    correct: bool
    readable: bool
    message: str
    expected: Answer | None
    given: Answer | None
    worked: str = ""
    hint: str = ""
    revealed: bool = False


# --------------------------------------------------------------------------- files


def lessons_dir() -> Path:
    """The folder of lesson files.

    ``$CANDELA_LESSONS`` if set; else the repository's ``assets/lessons`` (a
    checkout or an editable install); else ``share/candela-explorer/lessons``
    under the Python prefix, where a wheel installs them.
    """
    override = os.environ.get("CANDELA_LESSONS")
    if override:
        return Path(override)
    in_repo = Path(__file__).resolve().parent.parent / "assets" / "lessons"
    installed = Path(sys.prefix) / "share" / "candela-explorer" / "lessons"
    return in_repo if in_repo.is_dir() or not installed.is_dir() else installed


def lesson_files(directory: Path | None = None) -> list[Path]:
    """The lesson files in ``directory`` (default :func:`lessons_dir`), in lesson order."""
    folder = lessons_dir() if directory is None else Path(directory)
    try:
        return sorted(folder.glob("*.json"), key=_file_order)
    except OSError as exc:  # an unreadable folder has no lessons, and says why once
        _log_once(f"cannot list lesson files in {_shown(str(folder))}: {exc.strerror or exc}")
        return []


def list_lessons(directory: Path | None = None) -> list[Lesson]:
    """Every lesson, loaded and validated, in order; a bad file raises :class:`LessonError`."""
    return [load_lesson_file(path) for path in lesson_files(directory)]


def load_lesson(lesson_id: str, directory: Path | None = None) -> Lesson:
    """The lesson whose id is ``lesson_id``; :class:`LessonNotFound` if there is none."""
    files = lesson_files(directory)
    for path in files:
        match = _FILE_NAME.fullmatch(path.name)
        if match and match.group(2) == lesson_id:
            return load_lesson_file(path)
    raise LessonNotFound(lesson_id, [_id_of(p) for p in files])


def load_lesson_file(path: Path | str) -> Lesson:
    """Read and validate one lesson file; its name must be ``NN-<id>.json``.

    Anything wrong with the file, however broken, raises :class:`LessonError`
    naming the file and the reason, which is also logged (once per process).
    """
    path = Path(path)
    try:
        return _load_lesson_file(path)
    except LessonError as exc:
        _log_once(f"lesson file skipped: {exc}")
        raise


def _load_lesson_file(path: Path) -> Lesson:
    source = _shown(path.name, 120) if not path.name.isprintable() else path.name
    match = _FILE_NAME.fullmatch(path.name)
    if match is None:
        raise LessonError(
            source, "", "file name must be NN-<id>.json, e.g. 01-row-major.json (lowercase id)"
        )
    try:
        if not path.is_file():  # a folder, a pipe or a device: never read it
            raise LessonError(source, "", "is not a regular file")
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise LessonError(source, "", f"cannot read the file ({exc.strerror or exc})") from exc
    lesson = parse_lesson_json(raw, source)
    if lesson.id != match.group(2):
        raise LessonError(
            source, "id", f"is {lesson.id!r} but the file name says {match.group(2)!r}"
        )
    return lesson


def parse_lesson_json(raw: bytes | str, source: str = "<lesson>") -> Lesson:
    """Decode a lesson file's contents (UTF-8 JSON) and validate it; :class:`LessonError` if bad.

    The size, the nesting depth and the length of every whole number are checked
    before the JSON is decoded, so no file can exhaust the stack or the CPU.
    """
    if isinstance(raw, (bytes, bytearray)):
        if len(raw) > MAX_FILE_BYTES:
            raise LessonError(source, "", f"larger than {MAX_FILE_BYTES:,} bytes")
        try:
            text = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LessonError(
                source, "", f"not UTF-8 text (byte {exc.start} cannot be decoded)"
            ) from None
    elif isinstance(raw, str):
        text = raw
    else:
        raise LessonError(source, "", f"must be text or bytes, got {type(raw).__name__}")
    if len(text) > MAX_FILE_BYTES:
        raise LessonError(source, "", f"longer than {MAX_FILE_BYTES:,} characters")
    depth = _json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise LessonError(
            source, "", f"JSON nested {depth} deep; a lesson nests at most {MAX_JSON_DEPTH}"
        )
    try:
        data = json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise LessonError(
            source, "", f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except _TooLong as exc:
        raise LessonError(source, "", str(exc)) from None
    except (ValueError, RecursionError) as exc:  # pragma: no cover - the checks above stop these
        raise LessonError(source, "", f"not valid JSON ({type(exc).__name__})") from None
    return parse_lesson(data, source)


class _TooLong(ValueError):
    """A JSON number with more digits than any lesson needs."""


# A JSON string (escapes included), so brackets inside text are not counted as nesting.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


def _json_depth(text: str) -> int:
    depth = deepest = 0
    for bracket in re.findall(r"[\[\]{}]", _JSON_STRING.sub("", text)):
        depth = depth + 1 if bracket in "[{" else depth - 1
        deepest = max(deepest, depth)
    return deepest


def _json_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _TooLong(
            f"the number {digits[:12]}… has {len(digits.lstrip('-')):,} digits; "
            f"a lesson's numbers have at most {MAX_INT_DIGITS}"
        )
    return int(digits)


_logged: set[str] = set()


def _log_once(message: str) -> None:
    # A page per student reads the catalogue: say each problem once, on one line.
    line = " ".join(message.split())
    if line not in _logged and len(_logged) < 1000:
        _logged.add(line)
        log.warning("%s", line)


def _shown(value: Any, limit: int = 60) -> str:
    """A short, safe ``repr`` of any decoded JSON value, for messages."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() > 64:  # never format a huge number in full
            return f"a number of about {int(value.bit_length() * 0.30103) + 1:,} digits"
        return repr(value)
    if isinstance(value, str):
        text = repr(value[: limit + 1])
    elif isinstance(value, (list, tuple)):
        parts = [
            _shown(item, 20) if not isinstance(item, (list, tuple, dict)) else "[…]"
            for item in value[:8]
        ]
        more = ", …" if len(value) > 8 else ""
        text = "[" + ", ".join(parts) + more + "]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(_shown(k, 20) for k in list(value)[:6]) + ": …}"
    else:
        text = type(value).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _file_order(path: Path) -> tuple[int, str]:
    match = _FILE_NAME.fullmatch(path.name)
    return (int(match.group(1)), path.name) if match else (10**9, path.name)


def _id_of(path: Path) -> str:
    match = _FILE_NAME.fullmatch(path.name)
    return match.group(2) if match else path.stem


# --------------------------------------------------------------------------- validation


def parse_lesson(data: Any, source: str = "<lesson>") -> Lesson:
    """Build a :class:`Lesson` from decoded JSON, or raise :class:`LessonError`."""
    obj = _require_object(data, source, "")
    _reject_unknown(obj, _LESSON_KEYS, source, "")
    lesson_id = _require_text(obj, "id", source, "", MAX_TITLE_CHARS)
    if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", lesson_id):
        raise LessonError(
            source, "id", f"must be lowercase words joined by '-', got {_shown(lesson_id)}"
        )
    title = _require_text(obj, "title", source, "", MAX_TITLE_CHARS)
    summary = _require_text(obj, "summary", source, "")
    raw_steps = obj.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise LessonError(source, "steps", "must be a non-empty list of steps")
    steps = tuple(_parse_step(raw, source, f"steps[{i}]") for i, raw in enumerate(raw_steps))
    return Lesson(id=lesson_id, title=title, summary=summary, steps=steps, source=source)


def _parse_step(raw: Any, source: str, where: str) -> Step:
    obj = _require_object(raw, source, where)
    _reject_unknown(obj, _STEP_KEYS, source, where)
    shape = _parse_shape(obj.get("shape"), source, f"{where}.shape")
    ops = obj.get("ops")
    if not isinstance(ops, str):
        raise LessonError(source, f"{where}.ops", "must be a pipeline string ('' for none)")
    _check_text(ops, source, f"{where}.ops", MAX_OPS_CHARS)
    text = _require_text(obj, "text", source, where)
    expect_error = obj.get("expect_error")
    if expect_error is not None and not (
        isinstance(expect_error, str) and expect_error in ERROR_NAMES
    ):
        raise LessonError(
            source,
            f"{where}.expect_error",
            f"{_shown(expect_error)} is not a candela error; "
            f"use one of {', '.join(sorted(ERROR_NAMES))}",
        )
    question = None
    if obj.get("question") is not None:
        if expect_error is not None:
            raise LessonError(
                source,
                f"{where}.question",
                "a step that expects an error has no layout to ask about",
            )
        question = _parse_question(obj["question"], source, f"{where}.question")
    challenge = None
    if obj.get("challenge") is not None:
        if expect_error is not None or question is not None:
            raise LessonError(
                source,
                f"{where}.challenge",
                "a challenge step has no question and expects no error",
            )
        challenge = _parse_challenge(obj["challenge"], source, f"{where}.challenge")
    reveal = ""
    if "reveal" in obj:
        reveal = _require_text(obj, "reveal", source, where)
        if question is None and challenge is None:
            raise LessonError(
                source,
                f"{where}.reveal",
                "is shown after an answer, and this step asks nothing: put it in text",
            )
    return Step(
        shape=shape,
        ops=ops,
        text=text,
        question=question,
        expect_error=expect_error,
        reveal=reveal,
        challenge=challenge,
    )


def _parse_shape(raw: Any, source: str, where: str) -> tuple[int, ...]:
    if not isinstance(raw, list) or not all(_is_int(n) for n in raw):
        raise LessonError(source, where, f"must be a list of whole numbers, got {_shown(raw)}")
    if not 1 <= len(raw) <= MAX_RANK:
        raise LessonError(source, where, f"rank must be 1 to {MAX_RANK}, got {len(raw)}")
    if any(n < 1 for n in raw):
        raise LessonError(source, where, f"sizes must be at least 1, got {_shown(raw)}")
    if any(n > MAX_ELEMENTS for n in raw):
        raise LessonError(
            source,
            where,
            f"{_shown(raw)} has more than the {MAX_ELEMENTS} elements a lesson may use",
        )
    count = 1
    for n in raw:
        count *= n
    if count > MAX_ELEMENTS:
        raise LessonError(
            source, where, f"{count} elements; a lesson may use at most {MAX_ELEMENTS}"
        )
    return tuple(raw)


def _parse_question(raw: Any, source: str, where: str) -> Question:
    obj = _require_object(raw, source, where)
    _reject_unknown(obj, _QUESTION_KEYS, source, where)
    ask = obj.get("ask")
    if not isinstance(ask, str) or ask not in ASKS:
        raise LessonError(source, f"{where}.ask", f"{_shown(ask)} is not one of {', '.join(ASKS)}")
    needs, kind = ASKS[ask]
    for extra in ("axis", "after", "dtype", "position", "index"):
        if extra in needs and extra not in obj:
            raise LessonError(source, f"{where}.{extra}", f"is required when ask is {ask!r}")
        if extra not in needs and extra in obj:
            raise LessonError(source, f"{where}.{extra}", f"does not apply when ask is {ask!r}")
    for extra in ("axis", "after", "position"):
        if extra in obj and not _is_int(obj[extra]):
            raise LessonError(
                source, f"{where}.{extra}", f"must be a whole number, got {_shown(obj[extra])}"
            )
    if "axis" in obj and not -MAX_RANK <= obj["axis"] < MAX_RANK:
        raise LessonError(
            source,
            f"{where}.axis",
            f"must be from {-MAX_RANK} to {MAX_RANK - 1}, got {_shown(obj['axis'])}",
        )
    for extra in ("after", "position"):
        if extra in obj and not 0 <= obj[extra] <= _INT64:
            raise LessonError(
                source, f"{where}.{extra}", f"must be 0 or more, got {_shown(obj[extra])}"
            )
    dtype = obj.get("dtype")
    if "dtype" in obj and not (isinstance(dtype, str) and dtype in DTYPE_BYTES):
        raise LessonError(
            source, f"{where}.dtype", f"{_shown(dtype)} is not one of {', '.join(DTYPE_BYTES)}"
        )
    index = None
    if "index" in obj:
        raw_index = obj["index"]
        if (
            not isinstance(raw_index, list)
            or not 1 <= len(raw_index) <= MAX_RANK
            or not all(_is_int(n) and abs(n) <= _INT64 for n in raw_index)
        ):
            raise LessonError(
                source,
                f"{where}.index",
                f"must be a list of whole numbers (1 to {MAX_RANK}), got {_shown(raw_index)}",
            )
        index = tuple(raw_index)
    if "answer" not in obj:
        raise LessonError(source, f"{where}.answer", "is required")
    answer = _parse_stored_answer(obj["answer"], kind, source, f"{where}.answer")
    return Question(
        ask=ask,
        prompt=_require_text(obj, "prompt", source, where),
        answer=answer,
        why=_require_text(obj, "why", source, where),
        axis=obj.get("axis"),
        after=obj.get("after"),
        dtype=dtype,
        position=obj.get("position"),
        index=index,
    )


def _parse_challenge(raw: Any, source: str, where: str) -> Challenge:
    obj = _require_object(raw, source, where)
    _reject_unknown(obj, _CHALLENGE_KEYS, source, where)
    if "target" not in obj:
        raise LessonError(source, f"{where}.target", "is required")
    target = _parse_target(obj["target"], source, f"{where}.target")
    return Challenge(
        prompt=_require_text(obj, "prompt", source, where),
        target=target,
        solution=_require_text(obj, "solution", source, where, MAX_OPS_CHARS),
        why=_require_text(obj, "why", source, where),
    )


def _parse_target(raw: Any, source: str, where: str) -> Target:
    obj = _require_object(raw, source, where)
    _reject_unknown(obj, frozenset(TARGET_KEYS), source, where)
    if not obj:
        raise LessonError(source, where, f"give at least one of {', '.join(TARGET_KEYS)}")
    shape = _parse_shape(obj["shape"], source, f"{where}.shape") if "shape" in obj else None
    stride = None
    if "stride" in obj:
        stride = _parse_ints(obj["stride"], source, f"{where}.stride")
        if shape is None or len(stride) != len(shape):
            raise LessonError(
                source, f"{where}.stride", "needs a shape of the same length beside it"
            )
    offset = obj.get("offset")
    if "offset" in obj and (not _is_int(offset) or not 0 <= offset <= _INT64):
        raise LessonError(
            source, f"{where}.offset", f"must be a whole number >= 0, got {_shown(offset)}"
        )
    positions = None
    if "positions" in obj:
        positions = _parse_ints(obj["positions"], source, f"{where}.positions")
        if any(p < 0 for p in positions) or len(positions) > MAX_ELEMENTS:
            raise LessonError(
                source,
                f"{where}.positions",
                f"must be at most {MAX_ELEMENTS} buffer positions, each 0 or more",
            )
        if shape is not None and len(positions) != _count(shape):
            raise LessonError(
                source,
                f"{where}.positions",
                f"lists {len(positions)} positions but the shape has {_count(shape)} elements",
            )
    return Target(shape=shape, stride=stride, offset=offset, positions=positions)


def _parse_ints(raw: Any, source: str, where: str) -> tuple[int, ...]:
    if (
        not isinstance(raw, list)
        or not 1 <= len(raw) <= MAX_ELEMENTS
        or not all(_is_int(n) and abs(n) <= _INT64 for n in raw)
    ):
        raise LessonError(
            source, where, f"must be a non-empty list of whole numbers, got {_shown(raw)}"
        )
    return tuple(raw)


def _count(shape: Sequence[int]) -> int:
    count = 1
    for n in shape:
        count *= n
    return count


def _parse_stored_answer(raw: Any, kind: type, source: str, where: str) -> Answer:
    if kind is bool:
        if not isinstance(raw, bool):
            raise LessonError(source, where, f"must be true or false, got {_shown(raw)}")
        return raw
    if kind is int:
        if not _is_int(raw) or abs(raw) > _INT64:
            raise LessonError(
                source, where, f"must be a whole number in 64 bits, got {_shown(raw)}"
            )
        return raw
    if (
        not isinstance(raw, list)
        or not 1 <= len(raw) <= MAX_RANK
        or not all(_is_int(n) and abs(n) <= _INT64 for n in raw)
    ):
        raise LessonError(
            source,
            where,
            f"must be a non-empty list of whole numbers (at most {MAX_RANK}), got {_shown(raw)}",
        )
    return tuple(raw)


def _require_object(raw: Any, source: str, where: str) -> Mapping[str, Any]:
    if not isinstance(raw, dict):
        raise LessonError(source, where, f"must be a JSON object, got {type(raw).__name__}")
    return raw


def _require_text(
    obj: Mapping[str, Any], key: str, source: str, where: str, limit: int = MAX_TEXT_CHARS
) -> str:
    value = obj.get(key)
    field = f"{where}.{key}" if where else key
    if not isinstance(value, str) or not value.strip():
        raise LessonError(source, field, "is required and must be non-empty text")
    _check_text(value, source, field, limit)
    return value


def _check_text(value: str, source: str, field: str, limit: int) -> None:
    if len(value) > limit:
        raise LessonError(source, field, f"is {len(value):,} characters; at most {limit:,}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a JSON escape cannot reach a page
        raise LessonError(source, field, "contains an unpaired \\u escape (not text)") from None


def _reject_unknown(
    obj: Mapping[str, Any], allowed: frozenset[str], source: str, where: str
) -> None:
    unknown = sorted(str(key) for key in set(obj) - allowed)
    if unknown:
        name = unknown[0] if unknown[0].isprintable() and len(unknown[0]) <= 40 else "?"
        field = f"{where}.{name}" if where else name
        raise LessonError(
            source, field, f"unknown field; expected only {', '.join(sorted(allowed))}"
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --------------------------------------------------------------------------- running steps


def run_step(step: Step) -> Tensor:
    """Apply the step's pipeline to ``Tensor.arange(step.shape)``.

    Raises candela's own ``OpError`` unchanged for an op the layout rejects
    (``expect_error`` names its class), and ``explorer.pipeline.PipelineError``
    for text the pipeline parser refuses.
    """
    from candela import Tensor
    from explorer.pipeline import apply_step, parse

    tensor = Tensor.arange(step.shape)
    for op in parse(step.ops):
        tensor = apply_step(tensor, op)
    return tensor


def step_layout(step: Step) -> Layout:
    """The layout a step ends with (see :func:`run_step`)."""
    return _as_layout(run_step(step))


def verify_lesson(lesson: Lesson) -> list[str]:
    """Every way the lesson disagrees with candela, as readable lines; empty when sound.

    A step's pipeline must run (or fail with exactly its ``expect_error``), and
    each question must be answerable and its stored answer equal the computed one.
    """
    import candela

    problems: list[str] = []
    for i, step in enumerate(lesson.steps):
        where = f"{lesson.source or lesson.id}: steps[{i}]"
        try:
            layout = step_layout(step)
        except Exception as exc:
            name = type(exc).__name__
            expected = getattr(candela, step.expect_error, None) if step.expect_error else None
            if expected is None or not isinstance(exc, expected):
                problems.append(f"{where}: {step.ops!r} on {step.shape} raised {name}: {exc}")
            continue
        if step.expect_error is not None:
            problems.append(
                f"{where}: {step.ops!r} on {step.shape} should raise {step.expect_error} but ran"
            )
            continue
        if step.challenge is not None:
            problems += _verify_challenge(step, f"{where}.challenge")
        if step.question is None:
            problems += [f"{where}: {p}" for p in give_aways(step, layout, lesson.title)]
            continue
        try:
            computed = expected_answer(step.question, layout)
        except (ValueError, IndexError) as exc:
            problems.append(f"{where}.question: cannot be asked of {layout!r}: {exc}")
            continue
        if computed != step.question.answer or type(computed) is not type(step.question.answer):
            problems.append(
                f"{where}.question: stored answer {format_answer(step.question.answer)} "
                f"but candela computes {format_answer(computed)}"
            )
        problems += [f"{where}: {p}" for p in give_aways(step, layout, lesson.title)]
    return problems


def _verify_challenge(step: Step, where: str) -> list[str]:
    # The reference solution must reach the target, and doing nothing must not.
    challenge = _challenge_of(step)
    problems = []
    solved = grade_challenge(step, challenge.solution)
    if not solved.correct:
        problems.append(f"{where}.solution: does not reach the target: {solved.message}")
    if not _difference(challenge.target, step_layout(step)):
        problems.append(f"{where}.target: the start already is the target")
    return problems


# --------------------------------------------------------------------------- answers


def expected_answer(question: Question, layout: Layout | Tensor) -> Answer:
    """The true answer to ``question`` about ``layout``, computed from candela.

    Raises ``IndexError`` for an axis, walk step or buffer position the layout
    does not have.
    """
    lay = _as_layout(layout)
    ask = question.ask
    if ask == "stride":
        return lay.stride[_axis(question, lay)]
    if ask == "adj_stride":
        return lay.adj_stride[_axis(question, lay)]
    if ask == "stride_bytes":
        return lay.stride[_axis(question, lay)] * DTYPE_BYTES[question.dtype or ""]
    if ask == "offset":
        return lay.offset
    if ask == "len":
        return lay.len
    if ask == "shape":
        return tuple(lay.shape)
    if ask == "shape_as_3d":
        return tuple(lay.shape_as_3d())
    if ask == "is_contiguous":
        return bool(lay.is_contiguous())
    if ask == "next_position":
        return _walk_steps(question, lay)[1][1]
    if ask == "read_count":
        return _read_count(question, lay)
    if ask == "flat_index":
        return int(lay.flat_index(_index_of(question, lay)))
    raise ValueError(f"unknown ask {ask!r}")


def describe(question: Question, layout: Layout | Tensor | None = None) -> str:
    """What the question asks for, in a few words: ``adj_stride[0]``, ``the offset``."""
    axis = question.axis
    if layout is not None and axis is not None:
        axis = _axis(question, _as_layout(layout))
    ask = question.ask
    if ask in ("stride", "adj_stride"):
        return f"{ask}[{axis}]"
    if ask == "stride_bytes":
        return f"stride[{axis}] in bytes for {question.dtype}"
    if ask == "next_position":
        return f"the buffer position after {walk_element(question.after)}"
    if ask == "read_count":
        return f"the read count of buffer position {question.position}"
    if ask == "flat_index":
        return f"the buffer position element {_bracket(question.index or ())} reads"
    if ask == "is_contiguous":
        return "is_contiguous()"
    if ask == "shape_as_3d":
        return "shape_as_3d()"
    return f"the {ask}"


def explain(question: Question, layout: Layout | Tensor, unit: str = "elements") -> str:
    """The answer worked out in numbers from the layout, e.g. ``adj_stride[0] = 1 - 4*(3-1) = -7.``

    Computed, never stored, so it is always true of ``layout``. With a byte
    ``unit`` (a dtype name), strides, jumps and offsets are worked in bytes of
    it, as the page's fields show them (:func:`explain_in_bytes`).
    """
    lay = _as_layout(layout)
    ask = question.ask
    if byte_unit(unit) and ask in _WORKED_IN_BYTES:
        return explain_in_bytes(question, lay, unit)
    shape, stride = tuple(lay.shape), tuple(lay.stride)
    if ask == "stride":
        d = _axis(question, lay)
        cells = "cell" if abs(stride[d]) == 1 else "cells"
        return f"one step along axis {d} moves {stride[d]} {cells} in the buffer: stride[{d}] = {stride[d]}."
    if ask == "adj_stride":
        d = _axis(question, lay)
        terms = "".join(f" - {_num(stride[k])}*({shape[k]}-1)" for k in range(d + 1, len(shape)))
        return f"adj_stride[{d}] = {stride[d]}{terms} = {lay.adj_stride[d]}."
    if ask == "stride_bytes":
        d = _axis(question, lay)
        size = DTYPE_BYTES[question.dtype or ""]
        return (
            f"stride[{d}] = {stride[d]} elements, times {size} bytes per {question.dtype} "
            f"element = {stride[d] * size} bytes."
        )
    if ask == "offset":
        return (
            f"the first element, index {_index(0, len(shape))}, reads buffer position {lay.offset}."
        )
    if ask == "len":
        if len(shape) == 1:
            return f"len = {lay.len}, the size of the one axis."
        return f"len = {'*'.join(map(str, shape))} = {lay.len}, the product of the shape."
    if ask == "shape":
        return f"the shape is {format_answer(tuple(shape))}."
    if ask == "shape_as_3d":
        batch, rows, cols = tuple(lay.shape_as_3d())
        if len(shape) < 3:
            return f"rank {len(shape)} is padded with leading ones to ({batch}, {rows}, {cols})."
        fold = "*".join(map(str, shape[:-2]))
        return (
            f"the last two axes are the rows and cols ({rows}, {cols}); the axes above fold "
            f"into the batch, {fold} = {batch}: ({batch}, {rows}, {cols})."
        )
    if ask == "is_contiguous":
        shown = ", ".join(str(int(p)) for p in list(lay.positions()[:6]))
        more = ", ..." if lay.len > 6 else ""
        if lay.is_contiguous():
            return f"the walk visits {shown}{more}: one run, in order, so True."
        return f"the walk visits {shown}{more}: not one run in order, so False."
    if ask == "next_position":
        (_, here, _, _), (index, there, axis, delta) = _walk_steps(question, lay)
        return (
            f"{walk_element(question.after, lay)} reads position {here}; the next index {index} steps "
            f"axis {axis}, so add adj_stride[{axis}] = {delta}: {here} {_signed(delta)} = {there}."
        )
    if ask == "read_count":
        return (
            f"{_read_count(question, lay)} of the {lay.len} logical elements read buffer "
            f"position {question.position}."
        )
    if ask == "flat_index":
        index = _index_of(question, lay)
        terms = " + ".join(f"{i}*{_num(st)}" for i, st in zip(index, stride))
        return (
            f"element {_bracket(index)} reads offset + index times stride, summed: "
            f"{lay.offset} + {terms} = {lay.flat_index(index)}."
        )
    raise ValueError(f"unknown ask {ask!r}")


def grade(
    question: Question, layout: Layout | Tensor, typed: str, unit: str = "elements"
) -> Verdict:
    """Grade what a student typed against the answer candela computes.

    Right: the message says so, names the value and gives the lesson's one-line
    reason, and ``worked`` is the answer worked out in numbers (:func:`explain`).
    Wrong: the message repeats what was typed and gives a :func:`hint`; it never
    shows the right value (``expected`` is ``None``, ``worked`` is empty), so
    the student can try again. Not an answer at all (``abc``): ``readable`` is
    False and the message says what to type.

    ``unit`` is the unit the page shows strides in: with a byte unit, a stride,
    adj_stride or offset is right in bytes of it or in elements
    (:func:`accepted_answers`), and the verdict states it in bytes.
    """
    accepted = accepted_answers(question, layout, unit)
    try:
        given = parse_typed(question, typed)
    except ValueError as exc:
        return Verdict(False, False, str(exc), None, None)
    if given in accepted:
        what = describe(question, layout)
        message = f"Right: {what} is {state_answer(question, layout, unit)}. {question.why}"
        return Verdict(True, True, message, accepted[0], given, explain(question, layout, unit))
    advice = hint(question, layout, typed, unit)
    message = f"Not quite: you said {format_answer(given)}. {advice}"
    return Verdict(False, True, message, None, given, hint=advice)


def show_me(question: Question, layout: Layout | Tensor, unit: str = "elements") -> Verdict:
    """The "show me" after a wrong try: the right value, the reason and the working.

    ``revealed`` is True and ``correct`` False. The page then shows the step's
    ``reveal`` text and the fields, and plays the traversal, as after a right
    answer. With a byte ``unit`` the value and the working are in bytes of it.
    """
    what = describe(question, layout)
    expected = accepted_answers(question, layout, unit)[0]
    message = f"The answer: {what} is {state_answer(question, layout, unit)}. {question.why}"
    return Verdict(
        False, True, message, expected, None, explain(question, layout, unit), revealed=True
    )


# --------------------------------------------------------------------------- units

#: The asks whose answer is a stride, a jump or an offset: the numbers the page
#: shows in bytes once a byte unit is chosen. Positions (``next_position``,
#: ``flat_index``) number the buffer's cells, as the buffer lane and the odometer
#: do, so they stay in cells; ``stride_bytes`` names its own dtype.
IN_UNIT = frozenset({"stride", "adj_stride", "offset"})
_WORKED_IN_BYTES = IN_UNIT | {"next_position", "flat_index"}


def byte_unit(unit: str) -> int:
    """Bytes per element when ``unit`` is a dtype name (``float32``: 4), else 0 (elements).

    Anything that is not a known dtype counts as elements, so a bad unit never fails.
    """
    return DTYPE_BYTES.get(unit, 0) if isinstance(unit, str) else 0


def accepted_answers(
    question: Question, layout: Layout | Tensor, unit: str = "elements"
) -> tuple[Answer, ...]:
    """The answers graded right, the one in the page's unit first.

    With a byte ``unit``, a question about a stride, an adj_stride or an offset
    is right in bytes of that dtype (what the fields show) and in elements (what
    a lesson's prose and formulas count in). Every other question has one answer.

    >>> q = Question("stride", "What is stride[0]?", 4, "", axis=0)
    >>> from candela import Layout
    >>> accepted_answers(q, Layout((3, 4))), accepted_answers(q, Layout((3, 4)), "float32")
    ((4,), (16, 4))
    """
    value = expected_answer(question, layout)
    size = byte_unit(unit)
    if not size or question.ask not in IN_UNIT or isinstance(value, (bool, tuple)):
        return (value,)
    return (value * size, value) if size != 1 else (value,)


def state_answer(question: Question, layout: Layout | Tensor, unit: str = "elements") -> str:
    """The answer as a verdict states it: ``-7``, or ``-28 bytes of float32 (-7 elements)``."""
    value = expected_answer(question, layout)
    size = byte_unit(unit)
    if not size or question.ask not in IN_UNIT or isinstance(value, (bool, tuple)):
        return format_answer(value)
    return f"{value * size} bytes of {unit} ({_elements(value)})"


def explain_in_bytes(question: Question, layout: Layout | Tensor, unit: str) -> str:
    """:func:`explain` with strides, jumps, offsets and positions in bytes of ``unit`` (a
    position beside its cell, the number a position question takes).

    >>> from candela import Layout
    >>> q = Question("adj_stride", "", -7, "", axis=0)
    >>> explain_in_bytes(q, Layout((3, 4)).transpose(), "float32")
    'adj_stride[0] = 4 - 16*(3-1) = -28 bytes of float32 (-7 elements).'
    """
    lay = _as_layout(layout)
    size = byte_unit(unit) or 1
    of = f"bytes of {unit}"
    shape = tuple(lay.shape)
    stride = tuple(v * size for v in lay.stride)
    ask = question.ask
    if ask == "stride":
        d = _axis(question, lay)
        steps = lay.stride[d]
        cells = "cell" if abs(steps) == 1 else "cells"
        return (
            f"one step along axis {d} moves {steps} {cells} in the buffer, {_num(steps)}*{size} "
            f"{of}: stride[{d}] = {stride[d]} {of}."
        )
    if ask == "adj_stride":
        d = _axis(question, lay)
        terms = "".join(f" - {_num(stride[k])}*({shape[k]}-1)" for k in range(d + 1, len(shape)))
        adj = lay.adj_stride[d]
        return f"adj_stride[{d}] = {stride[d]}{terms} = {adj * size} {of} ({_elements(adj)})."
    if ask == "offset":
        return (
            f"the first element, index {_index(0, len(shape))}, reads buffer position "
            f"{lay.offset}, {lay.offset}*{size} {of} in: offset = {lay.offset * size} {of}."
        )
    if ask == "next_position":
        (_, here, _, _), (index, there, axis, delta) = _walk_steps(question, lay)
        return (
            f"{walk_element(question.after, lay)} reads position {here * size} {of} (cell "
            f"{here}); the next index {index} steps axis {axis}, so add adj_stride[{axis}] = "
            f"{delta * size} {of}: {here * size} {_signed(delta * size)} = {there * size} "
            f"{of}, cell {there * size}/{size} = {there}."
        )
    if ask == "flat_index":
        index = _index_of(question, lay)
        terms = " + ".join(f"{i}*{_num(st)}" for i, st in zip(index, stride))
        at = int(lay.flat_index(index))
        return (
            f"element {_bracket(index)} reads offset + index times stride, summed, in {of}: "
            f"{lay.offset * size} + {terms} = {at * size}, so buffer position "
            f"{at * size}/{size} = {at}."
        )
    return explain(question, lay)


def unit_method(question: Question, unit: str) -> str:
    """What a hint adds in a byte unit: the unit the answer is expected in ("" in elements)."""
    size = byte_unit(unit)
    if not size or question.ask not in IN_UNIT:
        return ""
    return (
        f"The page counts bytes of {unit}, {size}-byte elements: multiply by {size}, or "
        "answer in elements."
    )


def unit_note(unit: str, step: Step | None = None) -> str:
    """What a page in a byte unit says under a lesson's text ("" in elements).

    A lesson's prose is written by hand in elements and cannot be converted;
    the note says so, and in which units the step's answer is taken.
    """
    if not byte_unit(unit):
        return ""
    note = (
        "This lesson's text counts strides, offsets and jumps in elements; the fields, the "
        f"odometer and the worked answers here count them in bytes of {unit}. Buffer "
        "positions still number cells."
    )
    if step is not None and step.question is not None and step.question.ask in IN_UNIT:
        note += f" Type your answer in bytes of {unit} or in elements: both count."
    elif step is not None and step.challenge is not None:
        note += " The target's stride and offset are in bytes too."
    return note


def _elements(value: int) -> str:
    return f"{value} element" if abs(value) == 1 else f"{value} elements"


def _cells(value: int) -> str:
    return f"{value} cell" if abs(value) == 1 else f"{value} cells"


def check_answer(question: Question, layout: Layout | Tensor, typed_text: str) -> tuple[bool, str]:
    """``(correct, message)`` for what a student typed; the message gives the reason.

    A wrong answer's message gives a hint, never the expected value; text that
    is not an answer at all (``abc``) is not correct and the message says what
    to type (see :func:`grade` to tell the two apart).
    """
    verdict = grade(question, layout, typed_text)
    return verdict.correct, verdict.message


def parse_typed(question: Question, typed: str) -> Answer:
    """Read a typed answer without evaluating it: ``-7``, ``(4, 1)``, ``4 1``, ``yes``.

    Raises ``ValueError`` with a message saying what to type instead.
    """
    _, kind = ASKS[question.ask]
    text = _normalise(typed)
    shown = typed.strip()[:40]
    if kind is bool:
        words = {
            "true": True,
            "yes": True,
            "y": True,
            "t": True,
            "false": False,
            "no": False,
            "n": False,
            "f": False,
        }
        if text.lower() in words:
            return words[text.lower()]
        raise ValueError(f"Could not read {shown!r} as yes or no: type True or False.")
    if kind is int:
        value = _read_int(text)
        if value is None:
            raise ValueError(
                f"Could not read {shown!r} as a whole number: type one, like -7 or 12."
            )
        return value
    inner = text
    if len(inner) >= 2 and (inner[0], inner[-1]) in (("(", ")"), ("[", "]")):
        inner = inner[1:-1]
    tokens = [t for t in re.split(r"[,\s]+", inner) if t]
    values = [_read_int(t) for t in tokens]
    if not values or any(v is None for v in values) or len(values) > MAX_RANK:
        raise ValueError(f"Could not read {shown!r} as a shape: type whole numbers, like (4, 3).")
    return tuple(v for v in values if v is not None)


def format_answer(value: Answer) -> str:
    """An answer as Python prints it: ``-7``, ``(4, 3)``, ``(5,)``, ``True``."""
    if isinstance(value, tuple):
        return repr(tuple(int(v) for v in value))
    return repr(value)


# --------------------------------------------------------------------------- hints


def hint(question: Question, layout: Layout | Tensor, typed: str, unit: str = "elements") -> str:
    """What is wrong with a typed answer, and how to find the right one, without giving it.

    It may say what the typed value *is* (``4 is stride[1], the stride of axis
    1``) and which entries of a shape are off, and then how to work the answer
    out; it never names the right value, nor anything that pins it down (such
    as "right size, wrong sign"). Empty for a right answer; for text that is
    not an answer, the message saying what to type. With a byte ``unit``, what
    it says of the typed value holds in bytes of it (or in elements), and it
    names the unit the answer is expected in.
    """
    lay = _as_layout(layout)
    accepted = accepted_answers(question, lay, unit)
    expected = expected_answer(question, lay)
    try:
        given = parse_typed(question, typed)
    except ValueError as exc:
        return str(exc)
    if given in accepted:
        return ""
    method = " ".join(
        p for p in (_METHODS[question.ask](question, lay), unit_method(question, unit)) if p
    )
    noticed = ""
    if len(accepted) > 1:  # the typed value read in bytes first, then in elements
        noticed = _notice(question, _InBytes(lay, byte_unit(unit)), given, accepted[0])
    noticed = noticed or _notice(question, lay, given, expected)
    text = f"{noticed} {method}" if noticed else method
    # A safety net: a hint that would show the answer falls back to the method alone.
    allowed = _allowed_numbers(question) | ({byte_unit(unit)} if len(accepted) > 1 else set())
    if any(_shows_value(text, value, allowed) for value in accepted):
        text = method
    return text


class _InBytes:
    """A layout's strides, jumps, offset and positions in bytes: what a byte unit shows."""

    def __init__(self, lay: Any, size: int) -> None:
        self._lay, self._size = lay, size
        self.shape, self.rank, self.len = tuple(lay.shape), lay.rank, lay.len
        self.stride = tuple(v * size for v in lay.stride)
        self.adj_stride = tuple(v * size for v in lay.adj_stride)
        self.offset = lay.offset * size

    def positions(self) -> list[int]:
        return [int(p) * self._size for p in self._lay.positions()]


def _notice(question: Question, lay: Any, given: Answer, expected: Answer) -> str:
    # What the typed value is, or which entries are off: facts about the attempt.
    ask = question.ask
    shape, stride, adj = tuple(lay.shape), tuple(lay.stride), tuple(lay.adj_stride)
    if isinstance(expected, tuple) and isinstance(given, tuple):
        if len(given) != len(expected):
            return f"You typed {len(given)} entries; the answer has {len(expected)}."
        off = [k for k, (g, e) in enumerate(zip(given, expected)) if g != e]
        if len(off) == len(expected):
            return "Every entry is off."
        if len(off) == 1:
            return f"Right length, but entry {off[0]} is off."
        return f"Right length, but entries {_and(off)} are off."
    if isinstance(expected, bool):
        return ""
    if ask in ("stride", "adj_stride", "stride_bytes"):
        d = _axis(question, lay)
        if ask == "stride_bytes" and given == stride[d]:
            return f"{given} counts elements, but the question asks for bytes."
        if ask == "adj_stride" and given == stride[d] and d < len(shape) - 1:
            return (
                f"{given} is stride[{d}], the plain stride: adj_stride also takes back how "
                "far the inner axes walked before they wrapped."
            )
        if ask == "stride" and given == adj[d] and adj[d] != stride[d]:
            return (
                f"{given} is the walk's jump when axis {d} steps (adj_stride[{d}]), not the stride."
            )
        others = [k for k in range(len(shape)) if k != d and stride[k] == given]
        if ask == "stride" and others:
            k = others[0]
            return (
                f"{given} is stride[{k}], the stride of axis {k}; the question is about axis {d}."
            )
    if ask == "next_position":
        (_, here, _, _), (_, _, axis, _) = _walk_steps(question, lay)
        if given == here + stride[axis] and stride[axis] != adj[axis]:
            return (
                f"{given} is {here} plus stride[{axis}]: but when the inner axes wrap, the walk "
                "adds the jump adj_stride, not the stride."
            )
    if ask == "offset" and lay.len > 1 and given == int(lay.positions()[-1]):
        return f"{given} is where the last element sits; the offset is where the first one does."
    if ask == "flat_index":
        index = _index_of(question, lay)
        fresh = sum(i * st for i, st in zip(index, _row_major(shape)))
        if given == fresh and fresh != expected:
            return (
                f"{given} is where {_bracket(index)} would sit in a fresh row-major tensor of "
                "this shape; this layout has its own strides and offset."
            )
    return ""


def _row_major(shape: Sequence[int]) -> tuple[int, ...]:
    # Contiguous strides: each the product of the sizes to its right.
    strides, run = [], 1
    for n in reversed(shape):
        strides.append(run)
        run *= n
    return tuple(reversed(strides))


def _and(items: Sequence[int]) -> str:
    words = [str(i) for i in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _method_stride(question: Question, lay: Any) -> str:
    d = _axis(question, lay)
    unit = tuple(1 if k == d else 0 for k in range(lay.rank))
    return (
        f"Count how many buffer cells one step along axis {d} moves: compare the cells that "
        f"elements {_bracket((0,) * lay.rank)} and {_bracket(unit)} read."
    )


def _method_adj(question: Question, lay: Any) -> str:
    d = _axis(question, lay)
    if d == lay.rank - 1:
        return (
            "For the last axis the jump is the stride itself: how far does one step along it move?"
        )
    return (
        f"adj_stride[{d}] = stride[{d}] minus, for each axis k inside it, "
        "stride[k]*(shape[k]-1): put in this layout's numbers and do the subtraction."
    )


def _method_bytes(question: Question, lay: Any) -> str:
    dtype = question.dtype or ""
    article = "an" if dtype[:1] in ("a", "e", "i", "o") else "a"
    return (
        f"Take stride[{_axis(question, lay)}] in elements and multiply by the item size: "
        f"{article} {dtype} element is {DTYPE_BYTES[dtype]} bytes."
    )


_METHODS: dict[str, Any] = {
    "stride": _method_stride,
    "adj_stride": _method_adj,
    "stride_bytes": _method_bytes,
    "offset": lambda q, lay: (
        "The offset is the buffer position of the first element, "
        f"{_bracket((0,) * lay.rank)}: which cell does it read? Positions count from 0."
    ),
    "len": lambda q, lay: (
        "len counts the logical elements: the cells of the grid, the product of the shape."
    ),
    "shape": lambda q, lay: (
        "The shape is the size of each axis, outermost first: count the grid's rows and "
        "columns (an axis of size 1 still counts)."
    ),
    "shape_as_3d": lambda q, lay: (
        "The last two axes are the rows and columns; multiply every axis above them into "
        "one batch count, and pad with leading 1s below rank 3."
    ),
    "next_position": lambda q, lay: (
        "Find the axis that steps next (the innermost one that does not wrap) and add its "
        f"adj_stride to the position {walk_element(q.after)} reads."
    ),
    "read_count": lambda q, lay: (
        f"Count the logical cells that read buffer position {q.position}: hover it in the "
        "buffer lane. An axis with stride 0 reads the same cells again on every step."
    ),
    "is_contiguous": lambda q, lay: (
        "Follow the walk: is it one run, offset, offset+1, offset+2, ..., with no jump back, "
        "no repeat and no gap?"
    ),
    "flat_index": lambda q, lay: (
        "Start at the offset (where the first element sits) and add index times stride for "
        "each axis."
    ),
}


def _allowed_numbers(question: Question) -> set[int]:
    # Numbers a hint may name because the question itself names them.
    named = {question.axis, question.after, question.position, *(question.index or ())}
    if question.after is not None:  # "element N of M", as the odometer counts
        named.add(question.after + 1)
    named |= set(range(MAX_RANK))  # axis numbers and entry numbers
    if question.dtype:
        named.add(DTYPE_BYTES[question.dtype])
    return {n for n in named if isinstance(n, int)}


def _shows_value(text: str, value: Answer, allowed: set[int]) -> bool:
    # True when `text` names `value`: a tuple in any spacing, or a number that is not
    # one of the `allowed` ones the question itself names (an axis, a walk step).
    if isinstance(value, bool):
        return bool(re.search(rf"\b{value}\b", text))
    if isinstance(value, tuple):
        return _tuple_pattern(value).search(text) is not None
    if value in allowed:
        return _scalar_pattern(value).search(text) is not None
    return re.search(_number(value), text) is not None


# --------------------------------------------------------------------------- give-aways


def give_aways(step: Step, layout: Layout | Tensor, title: str = "") -> list[str]:
    """Where a step's text shown before answering gives its answer away; empty when honest.

    Checks the title, ``text`` and the question's ``prompt`` (not ``why`` or
    ``reveal``, which show only after the answer) for the answer written as a
    result: a tuple answer in any spacing (``(1, 4)``, ``[1,4]``, ``1, 4``); a
    number after ``=``, ``is``, ``becomes``, ``stride``, ``offset``,
    ``position`` and the like, or before ``elements``, ``cells``, ``bytes`` or
    ``times``, but not at the start of an expression to work out (``= 1 -
    4*(3-1)`` is the exercise); for a stride or adj_stride question, the whole
    tuple it belongs to; for ``next_position``, the pair of positions written
    one after the other. For a challenge, its reference solution.
    """
    shown = "\n".join(part for part in (title, step.text) if part)
    if step.challenge is not None:
        shown += "\n" + step.challenge.prompt
        solution = step.challenge.solution.strip()
        return [f"shows the reference solution {solution!r}"] if solution in shown else []
    question = step.question
    if question is None:
        return []
    shown += "\n" + question.prompt
    lay = _as_layout(layout)
    value = expected_answer(question, lay)
    patterns: list[tuple[str, re.Pattern[str]]] = []
    if isinstance(value, bool):
        word = str(value)
        patterns.append((word, re.compile(rf"(?:\bis|=|:|\breturns|\bgives)\s*[`*]*{word}\b")))
    elif isinstance(value, tuple):
        patterns.append((format_answer(value), _tuple_pattern(value)))
    else:
        patterns.append((str(value), _scalar_pattern(value)))
    if question.ask in ("stride", "adj_stride", "stride_bytes") and lay.rank > 1:
        whole = tuple(lay.adj_stride if question.ask == "adj_stride" else lay.stride)
        if question.ask == "stride_bytes":
            whole = tuple(v * DTYPE_BYTES[question.dtype or ""] for v in whole)
        patterns.append((format_answer(whole), _tuple_pattern(whole)))
    if question.ask == "next_position":
        (_, here, _, _), (_, there, _, _) = _walk_steps(question, lay)
        pair = rf"(?<![\d.]){_number(here)}\s*(?:,|→|->|then|to)\s*{_number(there)}"
        patterns.append((f"{here}, {there}", re.compile(pair)))
    found = []
    for label, pattern in patterns:
        match = pattern.search(shown)
        if match:
            found.append(f"shows the answer {label} before it is asked: {match.group(0)!r}")
    return found


_LEADS = (
    r"=|→|->|\bis|\bare|\bbecomes?|\bequals?|\bgives?|\bbe|\bstride|\badj_stride|\boffset"
    r"|\bpositions?|\bgets|\bto|\bat|\breads?|\bvisits?"
)
_TAILS = r"elements?|cells?|bytes?|times"


def _number(value: int) -> str:
    # `value` as a whole number token; a minus may be typographic.
    digits = str(abs(value))
    sign = r"[-\u2212]" if value < 0 else r"(?<![-\u2212])"
    return rf"(?<![\w.]){sign}{digits}(?![\d.]|\w)"


def _scalar_pattern(value: int) -> re.Pattern[str]:
    # The number stated as a result, not as the first term of an expression to work out.
    number = _number(value)
    not_expression = r"(?!\s*[-+*/×−]\s*[\d(])"
    decor = r"[\s`*(]*"
    stated = rf"(?:{_LEADS}){decor}{number}{not_expression}"
    counted = rf"{number}\s*[`*]*\s+(?:{_TAILS})\b"
    return re.compile(rf"{stated}|{counted}", re.IGNORECASE)


def _tuple_pattern(value: tuple[int, ...]) -> re.Pattern[str]:
    # A tuple in any spacing: (1, 4), (1,4), [1, 4], (12,), and bare 1, 4 for two or more.
    parts = [_number(v) for v in value]
    inner = r"\s*,\s*".join(parts)
    bracketed = rf"[(\[]\s*{inner}\s*,?\s*[)\]]"
    if len(value) < 2:
        return re.compile(bracketed)
    return re.compile(rf"{bracketed}|{inner}")


# --------------------------------------------------------------------------- challenges


def challenge_start(step: Step) -> Tensor:
    """The tensor a challenge starts from: the step's ``ops`` on ``Tensor.arange(shape)``."""
    return run_step(step)


def describe_target(target: Target, limit: int = 24, unit: str = "elements") -> str:
    """The target in words, for the page to show beside the challenge's prompt.

    Its stride and offset are in bytes of ``unit`` when that is a dtype name;
    the walk's positions number cells.

    >>> describe_target(Target(shape=(4, 3), positions=(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11)))
    'shape (4, 3); the walk visits 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11'
    """
    parts = []
    if target.shape is not None:
        parts.append(f"shape {format_answer(target.shape)}")
    if target.stride is not None:
        parts.append(f"stride {_in_unit(target.stride, unit)}")
    if target.offset is not None:
        parts.append(f"offset {_in_unit(target.offset, unit)}")
    if target.positions is not None:
        shown = ", ".join(str(p) for p in target.positions[:limit])
        more = f", ... ({len(target.positions)} in all)" if len(target.positions) > limit else ""
        parts.append(f"the walk visits {shown}{more}")
    return "; ".join(parts)


def grade_challenge(step: Step, typed: str, unit: str = "elements") -> Verdict:
    """Grade a typed pipeline against the step's challenge: the layout it reaches counts.

    The text is parsed by :func:`explorer.pipeline.parse` (never evaluated) and
    applied to :func:`challenge_start` through :func:`explorer.state.evaluate`;
    any chain that reaches the target is right. Text that is not a pipeline
    (or is too long) is not ``readable`` and the message says what to type. A
    pipeline that runs but misses says what differs: the shape, the stride,
    the offset, or where the walk first leaves the target's. A pipeline that
    copies (``as_contiguous``) is refused: the target is a view of the same
    buffer. A wrong verdict never shows a solution. Strides and offsets are
    stated in ``unit``, as the page shows them.
    """
    from explorer.pipeline import PipelineError, format_pipeline, parse
    from explorer.state import MAX_OPS_CHARS, StateError, evaluate

    challenge = _challenge_of(step)
    text = clean_pipeline(typed)
    if not text:
        return Verdict(False, False, _TYPE_A_PIPELINE, None, None)
    if len(text) > MAX_OPS_CHARS:
        return Verdict(
            False,
            False,
            f"Could not read that: {len(text):,} characters is more than the "
            f"{MAX_OPS_CHARS:,} a pipeline may have. {_TYPE_A_PIPELINE}",
            None,
            None,
        )
    try:
        steps = parse(text)
    except PipelineError as exc:
        message = f"Could not read that as a pipeline: {exc}. {_TYPE_A_PIPELINE}"
        return Verdict(False, False, message, None, None)
    start = challenge_start(step)
    try:
        result = evaluate(None, text, start=start)
    except StateError as exc:
        return _miss(f"candela refuses it: {exc}.")
    chain = format_pipeline(steps) or "(no operations)"
    if result.copied or result.tensor.buffer is not start.buffer:
        return _miss(
            f"`{chain}` copies the elements into a new buffer; the target is a view of "
            "the same buffer, so reach it without a copy."
        )
    difference = _difference(challenge.target, result.layout, unit)
    if difference:
        return _miss(f"`{chain}` {difference}.")
    return Verdict(
        True,
        True,
        f"Right: `{chain}` reaches the target. {challenge.why}",
        None,
        None,
        _summary(result.layout, unit),
    )


def show_solution(step: Step, unit: str = "elements") -> Verdict:
    """The "show me" of a challenge: the reference solution, its reason and its layout."""
    from explorer.state import evaluate

    challenge = _challenge_of(step)
    layout = evaluate(None, challenge.solution, start=challenge_start(step)).layout
    message = f"One pipeline that works: `{challenge.solution.strip()}`. {challenge.why}"
    return Verdict(False, True, message, None, None, _summary(layout, unit), revealed=True)


_TYPE_A_PIPELINE = (
    "Type a chain of operations such as .transpose().slice(s[::-1]); it is read, never run as code."
)


def _challenge_of(step: Step) -> Challenge:
    if step.challenge is None:
        raise ValueError("this step has no challenge")
    return step.challenge


def clean_pipeline(typed: Any) -> str:
    if not isinstance(typed, str):
        return ""
    text = typed.strip()
    for dash in ("\u2212", "\u2013", "\u2014", "\ufe63", "\uff0d"):
        text = text.replace(dash, "-")
    return text


def _miss(reason: str) -> Verdict:
    return Verdict(False, True, f"Not quite: {reason}", None, None, hint=reason)


def _difference(target: Target, lay: Any, unit: str = "elements") -> str:
    # What first differs between the layout and the target, in words; "" when it matches.
    shape, stride = tuple(lay.shape), tuple(lay.stride)
    if target.shape is not None and shape != target.shape:
        return (
            f"gives shape {format_answer(shape)}, but the target's shape is "
            f"{format_answer(target.shape)}"
        )
    if target.positions is not None:
        walk = [int(p) for p in lay.positions()]
        for k, (mine, theirs) in enumerate(zip(walk, target.positions)):
            if mine != theirs and k == 0:
                return f"starts its walk at {mine}, but the target's walk starts at {theirs}"
            if mine != theirs:
                cells = "cell" if k == 1 else f"{k} cells"
                return (
                    f"follows the target's walk for its first {cells}, then visits {mine} "
                    f"where the target visits {theirs} ({walk_element(k, lay)})"
                )
        if len(walk) != len(target.positions):
            return f"walks {len(walk)} cells, but the target's walk has {len(target.positions)}"
    if target.stride is not None and stride != target.stride:
        return (
            f"has the target's shape but stride {_in_unit(stride, unit)}, not "
            f"{_in_unit(target.stride, unit)}"
        )
    if target.offset is not None and lay.offset != target.offset:
        return (
            f"starts at offset {_in_unit(lay.offset, unit)}, but the target starts at offset "
            f"{_in_unit(target.offset, unit)}"
        )
    return ""


def _summary(lay: Any, unit: str = "elements") -> str:
    walk = ", ".join(str(int(p)) for p in lay.positions()[:12])
    more = ", ..." if lay.len > 12 else ""
    return (
        f"shape {format_answer(tuple(lay.shape))}, stride {_in_unit(tuple(lay.stride), unit)}, "
        f"offset {_in_unit(lay.offset, unit)}; the walk visits {walk}{more}."
    )


def _in_unit(value: int | tuple[int, ...], unit: str) -> str:
    # A stride or an offset as the page shows it: in elements, or in bytes of a dtype.
    size = byte_unit(unit)
    if not size:
        return format_answer(value) if isinstance(value, tuple) else str(value)
    if isinstance(value, tuple):
        return f"{format_answer(tuple(v * size for v in value))} bytes of {unit}"
    return f"{value * size} bytes of {unit}"


# --------------------------------------------------------------------------- helpers


def _as_layout(value: Any) -> Any:
    # A Tensor carries its layout; a Layout is its own.
    layout = getattr(value, "layout", None)
    return value if layout is None or callable(layout) else layout


def _axis(question: Question, layout: Any) -> int:
    rank = len(layout.shape)
    axis = question.axis
    if axis is None or not -rank <= axis < rank:
        raise IndexError(f"axis {axis} is out of range for a rank-{rank} layout")
    return axis % rank


def walk_element(k: int | None, layout: Any = None) -> str:
    """Walk step ``k`` (from 0) as the odometer counts it: ``element k+1 of n`` (from 1).

    >>> from candela import Layout
    >>> walk_element(5, Layout((3, 4)))
    'element 6 of 12'
    """
    k = -1 if k is None else k
    if layout is None:
        return f"element {k + 1} of the walk"
    return f"element {k + 1} of {_as_layout(layout).len}"


def _walk_steps(question: Question, layout: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    # The walk's step `after` and its successor, each (index, position, axis, delta).
    after = question.after if question.after is not None else -1
    if not 0 <= after < layout.len - 1:
        raise IndexError(f"walk step {after} has no successor in a walk of {layout.len} steps")
    previous = None
    for k, step in enumerate(layout.walk()):
        index, position, axis, delta = tuple(step)
        current = (tuple(int(i) for i in index), int(position), axis, delta)
        if k == after + 1:
            assert previous is not None
            return previous, current
        previous = current
    raise IndexError(f"walk step {after} has no successor")  # pragma: no cover


def _index_of(question: Question, layout: Any) -> tuple[int, ...]:
    index = tuple(question.index or ())
    if len(index) != len(layout.shape) or not all(0 <= i < n for i, n in zip(index, layout.shape)):
        raise IndexError(f"index {index} is not an element of shape {tuple(layout.shape)}")
    return index


def _bracket(index: Sequence[int]) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]"


def _read_count(question: Question, layout: Any) -> int:
    position = question.position if question.position is not None else -1
    return sum(1 for p in layout.strided_indices() if p == position)


def _normalise(typed: str) -> str:
    if not isinstance(typed, str):
        return ""
    text = typed.strip()[:_MAX_TYPED]
    # Slides and phones type a real minus sign or a dash; read them as '-'.
    for dash in ("\u2212", "\u2013", "\u2014", "\ufe63", "\uff0d"):
        text = text.replace(dash, "-")
    return text


def _read_int(token: str) -> int | None:
    match = re.fullmatch(r"([+-]?)\s*(\d{1,18})", token.strip())
    if match is None:
        return None
    value = int(match.group(2))
    return -value if match.group(1) == "-" else value


def _num(value: int) -> str:
    return f"({value})" if value < 0 else str(value)


def _signed(value: int) -> str:
    return f"- {-value}" if value < 0 else f"+ {value}"


def _index(value: int, rank: int) -> str:
    return repr(tuple([value] * rank))
