"""The explorer's state as plain values: a shape and a pipeline, evaluated.

``evaluate(shape, ops)`` reads the shape (a tuple or text such as ``"3,4"``),
parses the pipeline and applies it to ``Tensor.arange(shape)`` (or a given
starting tensor), returning a :class:`Result` with every intermediate tensor.
Anything wrong raises :class:`StateError` with a message fit for the page;
nothing here knows about Panel, so the app keeps the last good ``Result``.
"""

from __future__ import annotations

import contextlib
import math
import re
import reprlib
from collections.abc import Callable
from dataclasses import dataclass

import param

from .columns import DETAIL_LIMIT, columns_for
from .cost_view import COST_UNITS, DEFAULT_COST_UNIT, WARPS, item_bytes
from .fields import UNITS
from .pipeline import (
    INT64_MAX,
    MAX_ELEMENTS,
    MAX_ELEMENTS_TEXT,
    MAX_RANK,
    PipelineError,
    Step,
    apply,
    format_pipeline,
    format_step,
    parse,
    positions_buffer,
)
from .style import THEMES

#: Longest pipeline text accepted, so a pasted novel cannot stall the parser.
MAX_OPS_CHARS = 2000
#: Longest shape text accepted (eight sizes need far less).
MAX_SHAPE_CHARS = 200
#: The most axes any state may have (NumPy's own limit): a broadcast or view
#: can add axes beyond :data:`MAX_RANK`, but never past what can be drawn.
MAX_STATE_RANK = 64

_SIZE_DIGITS = len(str(MAX_ELEMENTS))


class _ShortRepr(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 64:  # converting it in full could take long, or fail
            return f"<a number of about {int(x.bit_length() * 0.30103) + 1:,} digits>"
        return super().repr_int(x, level)


_short_repr = _ShortRepr()


def _shown(value: object) -> str:
    # A short repr that never fails: no huge number is converted, no deep list walked.
    if isinstance(value, str):  # a lone surrogate could not be sent to the page
        value = value[:61].encode("utf-8", "backslashreplace").decode("utf-8")
        return value if len(value) <= 60 else value[:59] + "…"
    try:
        return _short_repr.repr(value)
    except (ValueError, RecursionError):
        return f"a {type(value).__name__}"


class StateError(ValueError):
    """Input the explorer cannot show; the message says which input and why."""

    def _render_traceback_(self) -> list[str]:
        """How IPython shows it: the user's own line and the message, one line each.

        The frames inside the explorer and param (the setter that checked the value)
        say nothing to the person who typed ``ex.ops = ...``.
        """
        import traceback
        from pathlib import Path

        ours = (Path(__file__).parent, Path(param.__file__).parent)
        lines = []
        for frame in traceback.extract_tb(self.__traceback__):
            where = Path(frame.filename)
            if not any(where.is_relative_to(p) for p in ours) and frame.line:
                lines = [f"----> {frame.lineno} {frame.line}"]  # the last one outside
        return [*lines, f"{type(self).__name__}: {self}"]


def parse_shape(value: object) -> tuple[int, ...]:
    """Read a shape from a tuple/list of ints, an int, or text like ``"3,4"``.

    >>> parse_shape("3, 4")
    (3, 4)
    >>> parse_shape("(2, 3, 4)")
    (2, 3, 4)
    >>> parse_shape("3,-1")
    Traceback (most recent call last):
    ...
    explorer.state.StateError: shape `3,-1`: size -1 of axis 1 is negative
    """
    shown = _shown(value)
    if isinstance(value, str):
        if len(value) > MAX_SHAPE_CHARS:
            raise StateError(
                f"shape `{shown}`: is {len(value):,} characters; at most {MAX_SHAPE_CHARS}"
            )
        text = value.strip().strip("()[]").strip()
        parts = [p for p in re.split(r"[,\s]+", text) if p]
        if not parts:
            raise StateError(f"shape `{shown}`: give one size per axis, e.g. 3,4")
        if len(parts) > MAX_RANK:
            raise StateError(f"shape `{shown}`: rank {len(parts)} is outside 1..{MAX_RANK}")
        sizes = []
        for axis, p in enumerate(parts):
            if not re.fullmatch(r"[+-]?[0-9]+", p):  # ASCII digits only: int("²") fails
                raise StateError(
                    f"shape `{shown}`: `{_shown(p)}` is not a whole number (digits 0-9)"
                )
            digits = p.lstrip("+-").lstrip("0")
            if len(digits) > _SIZE_DIGITS:  # never convert a number of thousands of digits
                raise StateError(
                    f"shape `{shown}`: size `{_shown(p)[:20]}` of axis {axis} has "
                    f"{len(digits):,} digits; a size is at most {MAX_ELEMENTS:,}"
                )
            sizes.append(int(p))
    elif isinstance(value, bool):
        raise StateError(f"shape `{shown}`: a shape is a tuple of ints, not a bool")
    elif isinstance(value, int):
        sizes = [value]
    elif isinstance(value, (tuple, list)):
        if len(value) > MAX_RANK:
            raise StateError(f"shape `{shown}`: rank {len(value)} is outside 1..{MAX_RANK}")
        sizes = list(value)
        for v in sizes:
            if isinstance(v, bool) or not isinstance(v, int):
                raise StateError(f"shape `{shown}`: sizes must be ints, got {_shown(v)}")
    else:
        raise StateError(f"shape `{shown}`: a shape is a tuple of ints or text like 3,4")
    for axis, size in enumerate(sizes):
        if size < 0:
            raise StateError(f"shape `{shown}`: size {_shown(size)} of axis {axis} is negative")
        if size > MAX_ELEMENTS:
            raise StateError(
                f"shape `{shown}`: size {_shown(size)} of axis {axis} is more than the "
                f"{MAX_ELEMENTS_TEXT} elements the explorer handles"
            )
    if not 1 <= len(sizes) <= MAX_RANK:
        raise StateError(f"shape `{shown}`: rank {len(sizes)} is outside 1..{MAX_RANK}")
    if math.prod(sizes) > MAX_ELEMENTS:
        raise StateError(
            f"shape `{shown}`: {math.prod(sizes):,} elements is more than the "
            f"{MAX_ELEMENTS_TEXT} the explorer handles"
        )
    return tuple(sizes)


def shape_text(shape: tuple[int, ...]) -> str:
    """The URL and input-box form of a shape: ``3,4``."""
    return ",".join(str(v) for v in shape)


@dataclass(frozen=True, eq=False)
class Result:
    """A shape and pipeline that evaluated cleanly, with every state along the way."""

    shape: tuple[int, ...]
    steps: tuple[Step, ...]
    states: tuple  # candela.Tensor per state, the start first

    @property
    def ops(self) -> str:
        return format_pipeline(self.steps)

    @property
    def tensor(self):
        return self.states[-1]

    @property
    def layout(self):
        return self.states[-1].layout

    @property
    def copied(self) -> bool:
        """True when a step (``as_contiguous``, a ``reshape`` strides cannot say) made a new buffer."""
        import numpy as np

        first, last = self.states[0].buffer, self.states[-1].buffer
        return last is not first and not np.may_share_memory(first, last)


def evaluate(shape: object, ops: str, start=None) -> Result:
    """Evaluate a shape and a pipeline; raise :class:`StateError` saying what is wrong.

    ``start`` is a tensor to begin from instead of ``Tensor.arange(shape)``. A start
    too large to draw cell by cell is an ``arange`` whose buffer is never made (its
    values are its positions: :func:`explorer.columns.positions_buffer`).
    """
    from candela import Layout, OpError, Tensor

    if start is None:
        size = parse_shape(shape)
        try:
            if math.prod(size) > DETAIL_LIMIT:
                start = Tensor(positions_buffer(math.prod(size)), Layout(size))
            else:
                start = Tensor.arange(size)
        except (OpError, ValueError) as exc:
            raise StateError(f"shape `{shape_text(size)}`: {exc}") from exc
    else:
        size = tuple(start.layout.shape)
    if not isinstance(ops, str):
        raise StateError(f"pipeline must be text, got {type(ops).__name__}")
    if len(ops) > MAX_OPS_CHARS:
        raise StateError(f"pipeline is {len(ops):,} characters; at most {MAX_OPS_CHARS:,}")
    try:
        steps = parse(ops)
        states = apply(steps, start)
    except PipelineError as exc:
        raise StateError(str(exc)) from exc
    for number, state in enumerate(states[1:], 1):
        shape = tuple(state.layout.shape)
        step = f"step {number} `{format_step(steps[number - 1])}`"
        if len(shape) > MAX_STATE_RANK:  # NumPy's limit: drawing it would fail later
            raise StateError(
                f"{step}: gives rank {len(shape)}; the explorer draws at most {MAX_STATE_RANK} axes"
            )
        if any(n > MAX_ELEMENTS for n in shape):  # possible when another axis is 0
            raise StateError(
                f"{step}: an axis of size {max(shape):,} is more than the "
                f"{MAX_ELEMENTS_TEXT} the explorer handles"
            )
        layout = state.layout
        numbers = (*layout.stride, *layout.adj_stride, layout.offset)
        if any(abs(v) > INT64_MAX for v in numbers):  # a huge slice step: drawing needs int64
            raise StateError(
                f"{step}: gives stride {tuple(layout.stride)}, beyond the 64-bit integers "
                "the explorer draws with"
            )
    return Result(size, tuple(steps), tuple(states))


DEFAULT_SHAPE = (3, 4)


class _FromPython:
    """A parameter a Python user sets (``ex.ops = ...``): a bad value raises a one-line
    :class:`StateError` (a ``ValueError``) naming it, before anything is set, so the
    last good state stays on screen and in the parameter.

    Typed input (a box on the page, the URL, a lesson's step) is not checked here: it
    comes in :meth:`ExplorerState.typed`, and a bad value is shown as ``error`` on the
    page (:meth:`ExplorerState._evaluate_now`). Whatever a change sets in turn (its
    watchers) is the explorer's own doing and is not checked either.
    """

    def __set__(self, obj, val):
        __tracebackhide__ = True  # IPython shows the user's line, not this one
        if not isinstance(obj, ExplorerState):
            super().__set__(obj, val)
            return
        if obj._typing == 0:
            message = obj._why_not(self.name, val)
            if message is not None:
                raise StateError(message)
        obj._typing += 1
        try:
            super().__set__(obj, val)
        finally:
            obj._typing -= 1


class _Shape(_FromPython, param.Parameter):
    """``shape``: refused before it is set when the start tensor has another shape."""

    def __set__(self, obj, val):
        __tracebackhide__ = True
        start = getattr(obj, "start", None) if isinstance(obj, param.Parameterized) else None
        if start is not None and not _same_shape(val, tuple(start.shape)):
            raise StateError(
                f"this explorer shows {obj.given} of shape {tuple(start.shape)}: its shape "
                f"cannot become {val!r}. Reshape it in the pipeline (e.g. ops = '.view(...)'), "
                "or show another one: explorer.show(...)"
            )
        super().__set__(obj, val)


class _Lesson(_FromPython, param.String):
    """``lesson``: refused when the explorer starts from a given tensor."""

    def __set__(self, obj, val):
        __tracebackhide__ = True
        if isinstance(obj, param.Parameterized) and val and getattr(obj, "start", None) is not None:
            raise StateError(
                f"this explorer shows {obj.given}; a lesson starts from its own shapes. "
                f"Open it in explorer.Explorer(lesson={val!r})"
            )
        super().__set__(obj, val)


class _Pipeline(_FromPython, param.String):
    """``ops`` and ``compare``: a pipeline that does not apply raises when set from Python."""


class _Choice(param.Selector):
    """A choice of names (``unit``, ``theme``): another value raises a one-line
    ``ValueError`` naming it and the choices, before anything is set."""

    def __set__(self, obj, val):
        __tracebackhide__ = True
        if val not in self.objects:
            choices = ", ".join(repr(o) for o in self.objects)
            shown = repr(_shown(val)) if isinstance(val, str) else _shown(val)
            raise StateError(f"{self.name} cannot be {shown}: it is one of {choices}")
        super().__set__(obj, val)


def _same_shape(value: object, shape: tuple[int, ...]) -> bool:
    try:
        return parse_shape(value) == shape
    except StateError:
        return False


class ExplorerState(param.Parameterized):
    """One explorer's state, apart from any page: inputs in, a checked result out.

    ``shape``, ``ops``, ``start`` and ``unit`` are the inputs (``lesson``,
    ``step`` and ``presenter`` say which lesson step is on show). Whenever an
    input changes, everything is worked out first — the pipeline evaluated and
    the columns to draw computed — and only then committed to ``result`` and
    ``columns`` in one update, with ``error`` cleared. A bad input typed on the
    page (:meth:`typed`: a box, the URL, a lesson) sets ``error`` to a message
    and leaves ``result`` and ``columns`` at the last good state, so whatever
    watches them always shows one state. Set from Python (``st.ops = ...``, or
    the constructor), a bad value raises a one-line :class:`StateError` (a
    ``ValueError``) naming it, and nothing changes.

    >>> st = ExplorerState(shape="3,4", ops=".transpose()")
    >>> st.shape, st.result.layout.adj_stride, st.error
    ((3, 4), (-7, 4), None)
    >>> st.ops = ".transpose().view((12,))"  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    explorer.state.StateError: ops '.transpose().view((12,))': step 2 `.view((12,))`: ...
    >>> st.ops, st.result.ops, st.error
    ('.transpose()', '.transpose()', None)
    >>> with st.typed():
    ...     st.ops = ".transpose().view((12,))"
    >>> st.result.ops, st.error.split(":")[0]
    ('.transpose()', 'step 2 `.view((12,))`')
    """

    #: Above zero while a change comes from the page, or is made by another change:
    #: then a bad value is shown as ``error``, not raised (see :class:`_FromPython`).
    _typing = 0

    shape = _Shape(
        default=DEFAULT_SHAPE,
        doc="The starting tensor's shape, Tensor.arange(shape): a tuple of ints or text like 3,4;"
        " with a start tensor, its shape (another one raises).",
    )
    ops = _Pipeline(
        default="",
        doc='The pipeline in method-chain syntax, e.g. ".transpose().slice(s[0:2, ::-1])".',
    )
    unit = _Choice(
        default="elements",
        objects=list(UNITS),
        doc="Strides in elements, or in bytes of this dtype.",
    )
    start = param.Parameter(
        default=None, doc="A candela.Tensor to begin from instead of Tensor.arange(shape)."
    )
    lesson = _Lesson(default="", doc='The id of the lesson on show, e.g. "transpose"; "" for none.')
    step = param.Integer(default=1, doc="The step of the lesson on show, counted from 1.")
    presenter = param.Boolean(
        default=False, doc="Presenter mode: large type and cells for a projector."
    )
    concealed = param.Boolean(
        default=False, doc="A lesson question waits for its answer: hide what would give it away."
    )
    compare = _Pipeline(
        default="",
        doc="A second pipeline over the same start tensor, drawn beside the first over one "
        'buffer (e.g. ".T"); "" for none.',
    )
    compare_result = param.Parameter(
        default=None, doc="The last good Result of the compare pipeline, or None (read only)."
    )
    theme = _Choice(
        default="",
        objects=list(THEMES),
        doc='"light" or "dark"; "" follows the system or the notebook.',
    )
    cost_unit = param.Selector(
        default=DEFAULT_COST_UNIT,
        objects=list(COST_UNITS),
        doc="The memory unit the cost panel counts, in bytes: 32 (a GPU sector), 64 (a CPU "
        "cache line) or 128 (a GPU line).",
    )
    warp = param.Selector(
        default=None,
        objects=list(WARPS),
        doc="Elements a GPU warp reads at once for the cost panel's requests; None for none.",
    )

    result = param.Parameter(default=None, doc="The last good Result (read only).")
    columns = param.Parameter(default=None, doc="What to draw for result (read only).")
    error = param.String(default=None, allow_None=True, doc="The message for the inputs, or None.")

    #: How messages name the start tensor ("a NumPy array"); ``explorer.show`` sets it.
    given = "a given tensor"
    #: The bytes of an element of the tensor shown, when its buffer's dtype does not say
    #: (a PyTorch bfloat16 tensor, read as float32); ``explorer.show`` sets it.
    given_itemsize: int | None = None

    def __init__(
        self, given: str | None = None, given_itemsize: int | None = None, **params
    ) -> None:
        __tracebackhide__ = True
        start = params.pop("start", None)
        later = {k: params.pop(k) for k in ("shape", "lesson") if k in params and start is not None}
        if start is not None:
            params["shape"] = tuple(start.shape)
        self._typing = 1  # the values are checked together, once all are set
        super().__init__(start=start, **params)
        if given is not None:
            self.given = given
        if given_itemsize:
            self.given_itemsize = int(given_itemsize)
        self.param.update(**later)  # checked against the start: a shape or lesson may raise
        self.history: list[tuple[tuple[int, ...], str]] = []
        self._restoring: tuple | None = None
        self._evaluate()
        self._typing = 0
        if self.result is None or self.error is not None:  # made from Python: say so, here
            raise StateError(self._named(self.error or "cannot be shown"))

    @contextlib.contextmanager
    def typed(self):
        """The context a change typed on the page is made in (a box, the URL, a lesson):
        a bad value is shown as ``error``, with the last good state, and never raised.
        Outside it (a Python user's ``ex.ops = ...``) a bad value raises."""
        self._typing += 1
        try:
            yield
        finally:
            self._typing -= 1

    def _named(self, message: str) -> str:
        """``message`` (the page's, for the inputs as they are) naming the input it is about."""
        if message.startswith("shape "):
            return message
        if message.startswith("compare: "):
            return f"compare {_shown(self.compare)!r}: {message[len('compare: ') :]}"
        return f"ops {_shown(self.ops)!r}: {message}"

    def _why_not(self, name: str, val: object) -> str | None:
        """Why ``name`` cannot be set to ``val`` from Python (one line), or None if it can."""
        if self.result is None:  # still being made: the constructor checks all at once
            return None
        shown = repr(_shown(val)) if isinstance(val, str) else _shown(val)
        try:
            if name == "shape":
                parse_shape(val)  # its own message names the shape
                try:
                    evaluate(val, self.ops, self.start)
                except StateError as exc:
                    return (
                        f"shape {shown}: the pipeline {_shown(self.ops)!r} does not fit it: {exc}"
                    )
            elif name == "ops":
                if not isinstance(val, str):
                    return f"ops cannot be {shown}: a pipeline is text, e.g. '.T'"
                evaluate(self.shape, val, self.start)
            elif name == "compare":
                if not isinstance(val, str):
                    return f"compare cannot be {shown}: a pipeline is text, e.g. '.T'"
                if val.strip():
                    self._compare_result(val, self.result.states[0])
            elif name == "lesson":
                return self._lesson_problem(val)
        except StateError as exc:
            text = str(exc)
            return text if text.startswith(f"{name} ") else f"{name} {shown}: {text}"
        return None

    def _lesson_problem(self, lesson: object) -> str | None:
        """Why ``lesson`` is not a lesson id (a page with lessons knows them), or None."""
        if not isinstance(lesson, str):
            return f"lesson cannot be {_shown(lesson)}: it is a lesson's id, e.g. 'transpose'"
        return None

    # ------------------------------------------------------------------ reading

    @property
    def layout(self):
        """The current ``candela.Layout`` (the last good one when the input is bad)."""
        return self.result.layout

    @property
    def tensor(self):
        """The current ``candela.Tensor``."""
        return self.result.tensor

    @property
    def itemsize(self) -> int:
        """The bytes of one element, as the cost counts them: the dtype of a byte ``unit``,
        else the shown tensor's own (``np.arange``'s int64 for a tensor made here)."""
        return item_bytes(self.unit, self.result.tensor, self.given_itemsize)

    @property
    def cost(self):
        """What the walk on show costs (a ``candela.Cost``), in ``cost_unit``-byte units of
        memory with ``itemsize``-byte elements (and requests of ``warp`` elements).

        Raises candela's ``InvalidShape`` when a count would leave int64.

        >>> st = ExplorerState(shape="64,64", ops=".T", unit="float32")
        >>> st.cost.units, st.cost.unit_entries
        (256, 4096)
        """
        return self.layout.cost(self.itemsize, unit=self.cost_unit, warp=self.warp)

    def shows(self, shape: object, ops: str) -> bool:
        """True when ``shape`` and ``ops`` are what the result on show was made from."""
        try:
            return (
                self.start is None
                and parse_shape(shape) == self.result.shape
                and (ops == self.result.ops or format_pipeline(parse(ops)) == self.result.ops)
            )
        except (StateError, PipelineError):
            return False

    # ------------------------------------------------------------------ editing

    def undo(self) -> None:
        """Go back to the state before the last change that worked.

        After a bad edit, undo first drops the edit (back to the state on show).
        """
        if self.error is not None and not self.shows(self.shape, self.ops):
            target = (self.result.shape, self.result.ops)
        elif self.history:
            target = self.history.pop()
        else:
            return
        self._restoring = target
        try:
            with self.typed():
                self.param.update(shape=target[0], ops=target[1])
        finally:
            self._restoring = None

    def reset(self) -> None:
        """Clear the pipeline (kept in the undo history)."""
        with self.typed():
            self.ops = ""

    def add_step(self, text: str) -> None:
        """Append one step's text (e.g. ``.narrow(0, 1, 2)``) to the pipeline on show.

        After a bad edit the step goes onto the last good state, the one drawn,
        not onto the text that failed.
        """
        with self.typed():  # the page's tool: a step that does not apply is shown, not raised
            if self.error is None:
                self.ops = self.result.ops + text
            else:
                self.param.update(shape=self.result.shape, ops=self.result.ops + text)

    def show_error(self, message: str | None) -> None:
        """Show a message from outside the inputs (a widget, the URL); the state stays."""
        self.error = message

    # ------------------------------------------------------------------ evaluation

    @param.depends("compare", "result", watch=True)
    def _evaluate_compare(self) -> None:
        """The second view: the compare pipeline over the start the first one reads.

        A bad compare pipeline sets ``error`` (naming it) and keeps the last good
        second view, as a bad first pipeline does.
        """
        with self._batch(), self.typed():
            self._evaluate_compare_now()

    def _evaluate_compare_now(self) -> None:
        text = self.compare if isinstance(self.compare, str) else ""
        ours = self.error is not None and self.error.startswith("compare: ")
        if not text.strip():
            self.param.update(compare_result=None, **({"error": None} if ours else {}))
            return
        start = self.result.states[0]
        old = self.compare_result
        if old is not None and old.states[0] is start and old.ops == text:
            return
        try:
            result = self._compare_result(text, start)
        except StateError as exc:
            kept = old if old is not None and old.states[0] is start else None
            if kept is None and old is not None:
                # the first pipeline changed under a bad compare text: the last good second
                # view, over the new start, stays on screen and in the URL
                try:
                    kept = evaluate(None, old.ops, start)
                except StateError:
                    kept = None
            self.param.update(compare_result=kept, error=f"compare: {exc}")
            return
        self.param.update(compare_result=result, **({"error": None} if ours else {}))

    @staticmethod
    def _compare_result(text: str, start) -> Result:
        """The second view's result for the pipeline ``text`` over ``start``, or StateError."""
        if len(start.buffer) > DETAIL_LIMIT:  # the shared lane draws every buffer cell
            raise StateError(
                f"two views share a lane of every buffer cell, at most {DETAIL_LIMIT:,}; "
                f"this buffer has {len(start.buffer):,}"
            )
        return evaluate(None, text, start)

    def watch_batched(self, handler: Callable[..., object], names: list[str]) -> None:
        """Run ``handler(*events)`` when any of ``names`` changes, in one :meth:`_batch`.

        Every watcher that redraws part of the page on a change of this state is
        registered so: a change made from Python (``ex.ops = ...`` in a notebook) then
        reaches each output in as few messages as a typed edit, and only once the page
        has drawn it (:func:`explorer.notebook.one_message`).
        """

        def run(*events):
            with self._batch(), self.typed():  # what a change sets in turn is not checked
                return handler(*events)

        self.param.watch(run, names)

    def _batch(self):
        """The context one change of the inputs and everything it redraws is made in.

        Here nothing; a page (:class:`explorer.app.Explorer`) holds its document's
        events in it, so an edit reaches the browser as one message.
        """
        return contextlib.nullcontext()

    @param.depends("shape", "ops", "start", watch=True)
    def _evaluate(self) -> None:
        with self._batch(), self.typed():
            self._evaluate_now()

    def _evaluate_now(self) -> None:
        if self.start is not None and not _same_shape(self.shape, tuple(self.start.shape)):
            with param.discard_events(self):  # a new start tensor brings its own shape
                self.shape = tuple(self.start.shape)
        old = self.result
        if (
            old is not None
            and self.error is None
            and self.start is old.states[0]
            and (self.shows(self.shape, self.ops) if self.start is None else self.ops == old.ops)
        ):
            return  # nothing new: e.g. the shape normalised from "3,4" to (3, 4)
        try:
            result = evaluate(self.shape, self.ops, self.start)
            columns = columns_for(result.tensor)
        except StateError as exc:
            self.error = str(exc)
            return
        except Exception as exc:  # a bug must not take the page down: say so, keep state
            self.error = f"unexpected {type(exc).__name__}: {exc}"
            return
        if old is not None and (old.shape, old.ops) != (result.shape, result.ops):
            if self._restoring is None:
                self.history.append((old.shape, old.ops))
        self._commit(result, columns)

    def _commit(self, result: Result, columns=None) -> None:
        updates = {
            "result": result,
            "columns": columns if columns is not None else columns_for(result.tensor),
            "error": None,
        }
        if self.shape != result.shape:
            updates["shape"] = result.shape
        self.param.update(**updates)
