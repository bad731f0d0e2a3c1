"""Lesson files: where they are, their format, loading and validating them, running a step.

The format and what a page shows are described in :mod:`explorer.lessons`.
Loading and validating a file needs nothing but the standard library; running a
step's pipeline goes through ``explorer.pipeline``, the one parser of pipeline
text. No Panel, no Bokeh.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import candela.errors

from ..fields import DTYPE_BYTES

if TYPE_CHECKING:  # pragma: no cover - only for type hints
    from candela import Layout, Tensor

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
    # The cost of the walk (candela.cost), counted with the step's own `unit` (a dtype),
    # `cost` (bytes per memory unit, 64 by default) and, for requests, `warp`.
    "units": (frozenset(), int),
    "unit_entries": (frozenset(), int),
    "units_per_request": (frozenset(), int),
}
#: The asks about what a walk costs: their step says the dtype (``unit``) they count with.
COST_ASKS: frozenset[str] = frozenset({"units", "unit_entries", "units_per_request"})
#: What a step's ``cost`` and ``warp`` may be (the explorer's choices).
COST_UNITS: tuple[int, ...] = (32, 64, 128)
WARPS: tuple[int, ...] = (32, 64)

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
_STEP_KEYS = frozenset(
    {
        "shape", "ops", "text", "question", "expect_error", "reveal", "challenge", "compare",
        "unit", "cost", "warp",
    }
)  # fmt: skip
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
    #: A cost question's memory unit in bytes and warp: its step's ``cost`` and ``warp``
    #: (``dtype`` is its step's ``unit``).
    unit_bytes: int | None = None
    warp: int | None = None


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
    #: A second pipeline over the same tensor, drawn beside the first ("" for none).
    compare: str = ""
    #: What the page counts in on this step, as the URL's keys: ``unit`` (a dtype: strides
    #: in its bytes, and the cost's item size), ``cost`` (bytes per memory unit) and
    #: ``warp`` (elements read at once). Unset: the page keeps its own.
    unit: str = ""
    cost: int | None = None
    warp: int | None = None


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
    in_repo = Path(__file__).resolve().parents[2] / "assets" / "lessons"
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
    lesson = _parsed(raw, source)
    if lesson.id != match.group(2):
        raise LessonError(
            source, "id", f"is {lesson.id!r} but the file name says {match.group(2)!r}"
        )
    return lesson


@functools.lru_cache(maxsize=256)
def _parsed(raw: bytes, source: str) -> Lesson:
    """:func:`parse_lesson_json`, once per file contents: every explorer reads every lesson
    file, and a lesson (frozen, all the way down) can be shared. A file that does not
    parse raises each time (nothing kept)."""
    return parse_lesson_json(raw, source)


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
    compare = obj.get("compare", "")
    if not isinstance(compare, str):
        raise LessonError(source, f"{where}.compare", "must be a pipeline string ('' for none)")
    _check_text(compare, source, f"{where}.compare", MAX_OPS_CHARS)
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
    unit = obj.get("unit", "")
    if "unit" in obj and not (isinstance(unit, str) and unit in DTYPE_BYTES):
        raise LessonError(
            source, f"{where}.unit", f"{_shown(unit)} is not one of {', '.join(DTYPE_BYTES)}"
        )
    cost, warp = obj.get("cost"), obj.get("warp")
    for key, value, allowed in (("cost", cost, COST_UNITS), ("warp", warp, WARPS)):
        if key in obj and not (_is_int(value) and value in allowed):
            raise LessonError(
                source, f"{where}.{key}",
                f"{_shown(value)} is not one of {', '.join(map(str, allowed))}",
            )  # fmt: skip
    question = None
    if obj.get("question") is not None:
        if expect_error is not None:
            raise LessonError(
                source,
                f"{where}.question",
                "a step that expects an error has no layout to ask about",
            )
        question = _parse_question(obj["question"], source, f"{where}.question")
        if question.ask in COST_ASKS:
            if not unit:
                raise LessonError(
                    source, f"{where}.unit",
                    f"is required when the question asks {question.ask!r}: the dtype whose "
                    "bytes the cost counts",
                )  # fmt: skip
            if question.ask == "units_per_request" and warp is None:
                raise LessonError(
                    source, f"{where}.warp",
                    "is required when the question asks 'units_per_request'",
                )  # fmt: skip
            question = replace(question, dtype=unit, unit_bytes=cost or COST_UNITS[1], warp=warp)
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
        compare=compare,
        unit=unit,
        cost=cost,
        warp=warp,
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
        solution=_require_pipeline(obj, "solution", source, where),
        why=_require_text(obj, "why", source, where),
    )


def _require_pipeline(obj: Mapping, key: str, source: str, where: str) -> str:
    """``obj[key]``, text that parses as a pipeline (never run here); else a LessonError."""
    from ..pipeline import PipelineError, parse

    text = _require_text(obj, key, source, where, MAX_OPS_CHARS)
    try:
        parse(text)
    except PipelineError as exc:
        raise LessonError(source, f"{where}.{key}", f"is not a pipeline: {exc}") from None
    return text


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


def _as_layout(value: Any) -> Any:
    # A Tensor carries its layout; a Layout is its own.
    layout = getattr(value, "layout", None)
    return value if layout is None or callable(layout) else layout
