"""What a waiting question withholds, per kind of question, and what is drawn instead.

One rule for every channel: until the student answers (or asks to be shown),
the page shows, lets the student do, and receives nothing computed from the
asked quantity. :data:`WITHHELD` says, for each kind of question the grader
knows (:data:`~explorer.lessons.files.ASKS`), what the figures draw while it
waits:

- ``grid``: ``"asked"`` draws the grid of the layout the question is about;
  ``"before"`` draws the tensor *before* the step's last operation (a
  question about the shape or the count may not show the grid it asks for),
  or the start tensor when there is no operation (its shape is in the shape box);
- ``walk``: how far the traversal may go: ``"none"`` (no walk at all),
  ``"to_axis"`` (up to, not into, the first element the asked axis steps
  into), ``"to_after"`` (up to walk step ``after``, not the jump out of it),
  ``"to_index"`` (up to, not into, the asked element).

Whatever the kind, while a question waits the grid's cells are labelled by a
letter in walk order (on an ``arange`` start a cell's value *is* the buffer
position it reads), the buffer is one colour with no read counts and no
offset marker, the fields and the step list are empty and hover names no
position. ``docs/classroom.md`` holds the same table for teachers; a test
keeps the two, and :data:`ASKS`, in step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .files import ASKS, Question

__all__ = ["WITHHELD", "Withheld", "draws_before", "grid_drawn", "walk_limit"]


@dataclass(frozen=True)
class Withheld:
    """What one kind of question withholds while it waits, and what is drawn instead."""

    grid: str  # "asked" or "before"
    walk: str  # "none", "to_axis", "to_after" or "to_index"
    drawn: str  # in words, for the table in docs/classroom.md


WITHHELD: dict[str, Withheld] = {
    "stride": Withheld(
        "asked",
        "to_axis",
        "the grid (cells lettered); the walk up to the asked axis's first step",
    ),
    "stride_bytes": Withheld(
        "asked",
        "to_axis",
        "the grid (cells lettered); the walk up to the asked axis's first step",
    ),
    "adj_stride": Withheld(
        "asked",
        "to_axis",
        "the grid (cells lettered); the walk up to the asked axis's first step",
    ),
    "offset": Withheld("asked", "none", "the grid (cells lettered); no walk, no offset marker"),
    "next_position": Withheld(
        "asked",
        "to_after",
        "the grid (cells lettered); the walk up to step `after`",
    ),
    "flat_index": Withheld(
        "asked",
        "to_index",
        "the grid (cells lettered); the walk up to the asked element",
    ),
    "shape": Withheld("before", "none", "the tensor before the last operation; no walk"),
    "shape_as_3d": Withheld("before", "none", "the tensor before the last operation; no walk"),
    "len": Withheld("before", "none", "the tensor before the last operation; no walk"),
    "read_count": Withheld("asked", "none", "the grid (cells lettered); no walk, no read counts"),
    "is_contiguous": Withheld("asked", "none", "the grid (cells lettered); no walk"),
    # The cost panel (its words and its units) is withheld for every question; for these
    # the walk is too (its jumps are the entries counted).
    "units": Withheld("asked", "none", "the grid (cells lettered); no walk, no cost"),
    "unit_entries": Withheld("asked", "none", "the grid (cells lettered); no walk, no cost"),
    "units_per_request": Withheld("asked", "none", "the grid (cells lettered); no walk, no cost"),
}

assert set(WITHHELD) == set(ASKS), "every kind of question says what it withholds"


def draws_before(question: Question) -> bool:
    """True when, while ``question`` waits, the grid drawn is the tensor before the last op."""
    return WITHHELD[question.ask].grid == "before"


def grid_drawn(question: Question | None, steps: int) -> str:
    """What the grid's heading says is drawn while ``question`` waits, on a step with
    ``steps`` operations: ``""`` (no question waits), ``"asked"`` (the layout asked
    about) or ``"before"`` (the tensor before the last operation). A question about the
    shape of a step with no operation draws the start tensor: the layout asked about.
    """
    if question is None:
        return ""
    grid = WITHHELD[question.ask].grid
    return "asked" if grid == "before" and steps == 0 else grid


def walk_limit(question: Question, layout: Any) -> int:
    """How many elements of ``layout``'s walk may be shown while ``question`` waits.

    The walk stops before the jump the question asks about (or is not shown at
    all, 0). A question that does not fit the layout shows no walk.
    """
    how = WITHHELD[question.ask].walk
    shape = tuple(int(n) for n in layout.shape)
    total = 1
    for n in shape:
        total *= n
    if how == "none" or total == 0:
        return 0
    if how == "to_after":
        after = question.after if question.after is not None else -1
        return after + 1 if 0 <= after < total - 1 else 0
    if how == "to_index":
        index = tuple(question.index or ())
        if len(index) != len(shape) or not all(0 <= i < n for i, n in zip(index, shape)):
            return 0
        k = 0
        for i, n in zip(index, shape):
            k = k * n + i
        return k
    # "to_axis": the first element axis d steps into is (0, .., 0, 1, 0, .., 0), with the
    # 1 at d; every element before it has only axes inside d moving.
    rank = len(shape)
    axis = question.axis
    if axis is None or not -rank <= axis < rank:
        return 0
    d = axis % rank
    if shape[d] < 2:
        return total  # the axis never steps: the walk never takes its jump
    inner = 1
    for n in shape[d + 1 :]:
        inner *= n
    return inner
