"""A student's answer to a lesson's question: the expected answer, grading, hints and units,
and the check that a step does not give its answer away before it is asked.

Answers are computed from candela (a ``candela.Layout``), never taken from the
lesson file: :func:`grade` compares what was typed with :func:`expected_answer`.
No Panel, no Bokeh.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..fields import DTYPE_BYTES
from .files import (
    _MAX_TYPED,
    ASKS,
    COST_ASKS,
    MAX_RANK,
    Answer,
    Question,
    Step,
    Verdict,
    _as_layout,
)

if TYPE_CHECKING:  # pragma: no cover - only for type hints
    from candela import Layout, Tensor


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
    if ask in COST_ASKS:
        cost = _cost(question, lay)
        if ask == "units":
            return cost.units
        if ask == "unit_entries":
            return cost.unit_entries
        per = cost.units_per_request
        if per is None or per != int(per):
            raise ValueError(
                f"a warp of {question.warp} touches {per} units a request on average, not a "
                "whole number: ask about another layout or warp"
            )
        return int(per)
    raise ValueError(f"unknown ask {ask!r}")


def _cost(question: Question, lay: Any):
    """The question's walk cost: its dtype's bytes, its memory unit and its warp."""
    if question.dtype not in DTYPE_BYTES:
        raise ValueError(f"a question about the cost needs a dtype, got {question.dtype!r}")
    unit = question.unit_bytes or 64
    return lay.cost(DTYPE_BYTES[question.dtype], unit=unit, warp=question.warp)


def _unit_words(question: Question) -> tuple[str, str]:
    """The question's memory unit, one and many: ``64-byte line``, ``32-byte sectors``."""
    unit = question.unit_bytes or 64
    name = {32: "sector", 64: "line", 128: "line"}.get(unit, "unit")
    return f"{unit}-byte {name}", f"{unit}-byte {name}s"


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
    if ask in COST_ASKS:
        _, many = _unit_words(question)
        if ask == "units":
            return f"the number of {many} the walk touches"
        if ask == "unit_entries":
            return f"the number of times the walk enters a {many[:-1]}"
        return f"the {many} one request of a warp of {question.warp} touches"
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
    if ask in COST_ASKS:
        return _explain_cost(question, lay)
    raise ValueError(f"unknown ask {ask!r}")


def _explain_cost(question: Question, lay: Any) -> str:
    # The count worked out: how many elements a unit holds, and how the walk meets them.
    cost = _cost(question, lay)
    size = DTYPE_BYTES[question.dtype or ""]
    one, many = _unit_words(question)
    unit = question.unit_bytes or 64
    holds = f"a {one} holds {unit}/{size} = {unit // size} {question.dtype} elements"
    if question.ask == "units":
        return (
            f"{holds}; the walk reads {cost.distinct_positions} distinct elements, which lie in "
            f"{cost.units} {many}: units = {cost.units}."
        )
    if question.ask == "unit_entries":
        return (
            f"{holds}; the walk reads {cost.elements} elements and moves into a new "
            f"{one} {cost.unit_entries} times: unit_entries = {cost.unit_entries}."
        )
    per = expected_answer(question, lay)
    return (
        f"{holds}; the walk is read {question.warp} elements at a time, {cost.requests} "
        f"requests touching {cost.request_units} {many} in all: {cost.request_units}/"
        f"{cost.requests} = {per} a request."
    )


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


#: What the answer box says while empty: the forms it reads, with no number in it (an
#: example such as "-7" or "(4, 3)" was the very answer of some questions).
ANSWER_HINT = "a number or a tuple"
#: The same for a challenge's box: an example pipeline could be its solution.
PIPELINE_HINT = "a pipeline of steps"


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
    # While a shape or count waits, the grid drawn is the tensor *before* the last step.
    "len": lambda q, lay: (
        "len counts the logical elements: the product of the shape. Work out the shape "
        "the last step leaves, then multiply its sizes."
    ),
    "shape": lambda q, lay: (
        "The shape is the size of each axis, outermost first (an axis of size 1 still "
        "counts). The grid drawn is the tensor before the last step: work out what that "
        "step does to each of its sizes."
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
        f"Count the logical elements whose index lands on buffer position {q.position}: "
        "offset plus index times stride. An axis with stride 0 reads the same cells again "
        "on every step."
    ),
    "is_contiguous": lambda q, lay: (
        "Work out the walk from the strides: is it one run, offset, offset+1, offset+2, ..., "
        "with no jump back, no repeat and no gap?"
    ),
    "flat_index": lambda q, lay: (
        "Start at the offset (where the first element sits) and add index times stride for "
        "each axis."
    ),
    "units": lambda q, lay: (
        f"Work out how many {q.dtype} elements fit in one {_unit_words(q)[0]}, then count the "
        f"{_unit_words(q)[1]} that the elements the walk reads fall in: each counts once, "
        "however often it is read."
    ),
    "unit_entries": lambda q, lay: (
        f"Go through the walk in order (from the strides): count 1 for its first element, "
        f"then 1 more every time the next "
        f"element lies in another {_unit_words(q)[0]} than the one before (the same one "
        "entered again counts again)."
    ),
    # (no number: the warp's size or the unit's may be the answer)
    "units_per_request": lambda q, lay: (
        "Take one request, the warp's consecutive elements of the walk read together, and "
        f"count the different {_unit_words(q)[1].split()[-1]} they lie in: how far apart "
        "are two neighbouring elements in bytes? Every request of this walk touches as many."
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
    if question.ask in COST_ASKS:  # the unit and the warp the question names
        named |= {question.unit_bytes or 64, question.warp}
        if question.dtype:
            named.add((question.unit_bytes or 64) // DTYPE_BYTES[question.dtype])
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


# --------------------------------------------------------------------------- helpers


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
