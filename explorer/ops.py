"""The operations the explorer offers, each declared once.

An :class:`Op` says everything the rest of the explorer needs to know about one
operation: its name, its arguments (with their kinds and the argument boxes'
starting text), a one-line help, how NumPy and PyTorch spell it, the names
other libraries use for it, and how it applies to a ``candela.Tensor``. The
parser (:mod:`explorer.pipeline`), the argument boxes and the step text of the
page, the help and the lesson checks all read :data:`REGISTRY`, so adding an
operation means candela plus one :func:`register` call.

Argument kinds:

- ``int``: an integer literal, e.g. ``narrow``'s ``dim``;
- ``ints``: a tuple or list of integer literals, or one integer;
- ``slices``: an ``s[...]`` subscript (candela's `slice`: an integer keeps its axis);
- ``index``: a Python subscript ``[...]`` with NumPy's meaning (an integer drops its axis);
- ``order``: NumPy's memory order, a string literal: ``'C'``, ``'F'`` or ``'A'``.

An op whose first argument is a shape or a list of axes (``spread``) takes it
either way, as NumPy and PyTorch do: ``.reshape(2, 6)`` or ``.reshape((2, 6))``.
The arguments are kept as they were written, and candela reads both. An
argument answers to NumPy's and PyTorch's keyword names for it too (``Arg.also``:
``.flip(dims=(0,))``, ``.squeeze(dim=0)``), and an op to their other names for
exactly it (``Op.also``: PyTorch's ``.swapdims``, ``.broadcast_to``, NumPy's
``.copy()``); the step keeps the name the user typed.

>>> REGISTRY["narrow"].signature
'.narrow(dim, start, length)'
>>> REGISTRY["permute"].call_text(("1, 0",))
'.permute(1, 0)'
>>> REGISTRY["subscript"].call_text(("1:, ::-2",))
'[1:, ::-2]'
>>> suggestion("fliplr")
'`fliplr` is not a candela operation: NumPy and PyTorch `fliplr` is `.flip(axes)` here'
>>> find("swapdims").name, find("swapaxes").name, find("nope")
('swapaxes', 'swapaxes', None)
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "REGISTRY",
    "Arg",
    "Op",
    "find",
    "names",
    "register",
    "step_note",
    "suggestion",
    "unregister",
]

KINDS = ("int", "ints", "slices", "index", "order")


@dataclass(frozen=True)
class Arg:
    """One argument of an operation: its name, kind and the argument box's starting text."""

    name: str
    kind: str
    default: str = ""
    #: May be left out (only trailing arguments, and then every one after it too).
    optional: bool = False
    #: NumPy's and PyTorch's keyword names for it, where they differ (``dims=``, ``dim=``).
    also: tuple[str, ...] = ()
    #: The value both libraries give it when it is left out and a later argument is named
    #: (``diagonal(dim1=-2, dim2=-1)`` has offset 0); None: it must be given then.
    fill: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"argument {self.name!r}: kind {self.kind!r} is not one of {KINDS}")


@dataclass(frozen=True)
class Op:
    """One operation of the pipeline.

    ``apply(tensor, args)`` runs it; by default it calls the candela method of
    the same name (``method`` when that differs) with the parsed arguments,
    ``s[...]`` items turned into slice ranges, and a lone ``ints`` argument
    spread into positions when ``spread`` is set (``permute(1, 0)``).
    """

    name: str
    args: tuple[Arg, ...] = ()
    help: str = ""
    numpy: str = ""
    torch: str = ""
    #: Other libraries' names for this operation; typing one names this op in the message.
    foreign: tuple[str, ...] = ()
    #: NumPy's or PyTorch's other names for exactly this operation: typed, they are it.
    also: tuple[str, ...] = ()
    #: ``permute(1, 0)`` and ``permute((1, 0))`` both accepted (candela reads both).
    spread: bool = False
    #: Keywords that name a spread op's positions one by one, in order (PyTorch's
    #: ``transpose(dim0=0, dim1=1)``).
    position_keywords: tuple[str, ...] = ()
    #: Written as a Python subscript, ``[1:, ::-2]``, not as a method call.
    bracket: bool = False
    #: Written without parentheses, as a property: ``.T``.
    attribute: bool = False
    #: Makes a new buffer (``as_contiguous``): positions then index the copy.
    copies: bool = False
    method: str | None = None
    run: Callable[[Any, tuple], Any] | None = None
    #: The argument counts a call may have, when not every count in between is allowed.
    counts: tuple[int, ...] | None = None
    #: Keywords that belong to the library whose meaning is candela's own, where ``run``
    #: follows the other one: typed, the step runs the candela method (NumPy's
    #: ``squeeze(axis=1)`` refuses an axis of size 3; PyTorch's ``squeeze(1)`` leaves it).
    strict: tuple[str, ...] = ()
    #: ``note(layout, args, keywords)``: a line for the step list where NumPy and PyTorch
    #: would disagree on this step, naming the library followed; None where they agree.
    note: Callable[[Any, tuple, tuple], str | None] | None = None

    @property
    def arities(self) -> tuple[int, ...]:
        """The argument counts a call may have (optional arguments trail)."""
        if self.counts is not None:
            return self.counts
        required = sum(not a.optional for a in self.args)
        return tuple(range(required, len(self.args) + 1))

    @property
    def signature(self) -> str:
        """``.narrow(dim, start, length)``; optional arguments in brackets; ``.T`` for a property."""
        if self.attribute:
            return f".{self.name}"
        if self.bracket:
            return "[" + ", ".join(a.name for a in self.args) + "]"
        parts = [f"[{a.name}]" if a.optional else a.name for a in self.args]
        return f".{self.name}(" + ", ".join(parts) + ")"

    def apply(self, tensor: Any, args: tuple, keywords: tuple[str, ...] = ()) -> Any:
        """Apply to a candela ``Tensor`` (or ``Layout``) with parsed arguments; ``keywords``
        are the keyword names typed (see ``strict``)."""
        if self.run is not None and not set(keywords) & set(self.strict):
            return self.run(tensor, args)
        target = getattr(tensor, self.method or self.name)
        if self.attribute:
            return target
        return target(*(_candela_value(a) for a in args))

    def call_text(self, texts: tuple[str, ...] | list[str]) -> str:
        """The step's text from the argument boxes' texts, e.g. ``.narrow(0, 1, 2)``.

        A box's text is only pasted into the pipeline text, which the parser then
        checks: nothing typed in an argument box is evaluated either. Empty boxes
        of optional arguments are left out.
        """
        if self.attribute:
            return f".{self.name}"
        if self.bracket:
            inner = str(texts[0]).strip().removeprefix("[").removesuffix("]")
            return f"[{inner}]"
        parts = []
        for arg, text in zip(self.args, texts):
            text = str(text).strip()
            if not text and arg.optional:
                break
            if arg.kind == "ints" and not self.spread:
                inner = text.strip("()[]").strip().rstrip(",")
                text = f"({inner})" if "," in inner else (inner or "()")
            elif arg.kind == "ints":
                text = text.strip("()[]").strip().rstrip(",")
            elif arg.kind == "slices":
                text = "s[" + text.removeprefix("s[").removesuffix("]") + "]"
            elif arg.kind == "order":
                text = repr(text.strip("'\""))
            parts.append(text)
        return f".{self.name}(" + ", ".join(parts) + ")"


def _candela_value(value: Any) -> Any:
    # An ``s[...]`` argument is parsed to plain items; candela takes them through ``s``.
    items = getattr(value, "items", None)
    if items is not None and not isinstance(value, dict):
        from candela import s

        return s[items]
    return value


#: Every operation, in the order the page offers them.
REGISTRY: dict[str, Op] = {}
# A name other libraries use -> the op that does it here.
_FOREIGN: dict[str, str] = {}
# Another name for exactly an op -> the op.
_ALSO: dict[str, str] = {}


def register(op: Op) -> Op:
    """Add an operation (or replace one of the same name); returns it."""
    REGISTRY[op.name] = op
    for name in op.foreign:
        _FOREIGN[name] = op.name
    for name in op.also:
        _ALSO[name] = op.name
    return op


def unregister(name: str) -> None:
    """Remove an operation and its foreign names (tests add throwaway ones)."""
    op = REGISTRY.pop(name)
    for table, spellings in ((_FOREIGN, op.foreign), (_ALSO, op.also)):
        for spelling in spellings:
            if table.get(spelling) == name:
                del table[spelling]


def find(name: str) -> Op | None:
    """The operation a typed name is: its own, or another library's name for it."""
    return REGISTRY.get(name) or REGISTRY.get(_ALSO.get(name, ""))


def names() -> tuple[str, ...]:
    """The operation names, in the order the page offers them."""
    return tuple(REGISTRY)


# Names NumPy and PyTorch use for what is not a view of the same memory: what each is, said
# once per kind, and what to write instead. A did-you-mean by spelling alone would send a
# user from `.mean(0)` to `.expand`, from `.float()` to `.flatten`, from `.split(2)` to `.slice`.
_VALUES = "computes new values from the elements, into a new buffer: not a view of this memory"
_NOT_VIEWS: dict[str, str] = {
    **dict.fromkeys(
        "sum mean max min prod std var median amax amin argmax argmin any all norm cumsum "
        "cumprod count_nonzero nansum nanmean logsumexp mode".split(),
        f"is a reduction: it {_VALUES}",
    ),
    **dict.fromkeys(
        "add sub subtract mul multiply div divide abs exp log sqrt neg negative pow power clip "
        "clamp round floor ceil sin cos tanh sigmoid relu softmax matmul dot mm bmm einsum "
        "sort argsort where nonzero unique topk masked_select".split(),
        f"{_VALUES}",
    ),
    **dict.fromkeys(
        "astype float double half int long bool byte char short bfloat16 type to".split(),
        "converts the element type: a copy of the elements as another dtype (a dtype view, "
        "`.view(dtype)`, reads the same bytes as another type); the explorer draws where one "
        "element type sits, whatever it is",
    ),
    **dict.fromkeys(
        "chunk split unbind tensor_split array_split hsplit vsplit dsplit".split(),
        "returns a tuple of tensors (views of this memory); the explorer follows one tensor: "
        "write the piece you want, e.g. `[0:2]` or `.narrow(dim, start, length)` for a chunk, "
        "`.select(dim, i)` for `unbind(dim)[i]`",
    ),
    **dict.fromkeys(
        "repeat tile repeat_interleave".split(),
        "copies the elements into a new, larger buffer: no strides over this memory say it; "
        "`.expand(sizes)` is the view that repeats without copying (stride 0)",
    ),
    "clone": "copies into a new buffer and keeps a dense tensor's strides (PyTorch's "
    "`x.T.clone()` has stride (1, 4)); the explorer's copies pack in logical order: "
    "`.contiguous()`, or `.copy()`",
    **dict.fromkeys(
        "cat concatenate stack hstack vstack dstack column_stack".split(),
        "joins several tensors into a new buffer; the explorer follows one tensor's memory",
    ),
}


def suggestion(name: str) -> str:
    """The message for a name that is not an operation: what it is, or the operation it
    names elsewhere, or the one it is a slip of the keyboard for."""
    if name in _NOT_VIEWS:
        return f"`{name}` {_NOT_VIEWS[name]}"
    if name in _FOREIGN and _FOREIGN[name] in REGISTRY:
        op = REGISTRY[_FOREIGN[name]]
        return (
            f"`{name}` is not a candela operation: NumPy and PyTorch `{name}` is "
            f"`{op.signature}` here"
        )
    # a did-you-mean only for a slip of the keyboard: close in letters and in length
    close = difflib.get_close_matches(name, [*REGISTRY, *_ALSO], n=1, cutoff=0.8)
    if close:
        near = find(close[0])
        if near is not None:
            return (
                f"`{name}` is not an operation the explorer knows: did you mean `{near.signature}`?"
            )
    return (
        f"`{name}` is not an operation the explorer knows: it offers views of one memory, "
        "the operation buttons list them"
    )


def _t(tensor: Any, args: tuple) -> Any:
    # PyTorch's t(): a transpose of at most two axes, refused above (where .T reverses all)
    if tensor.layout.rank > 2:
        from candela import NotEnoughAxes

        raise NotEnoughAxes(
            f"t() transposes at most 2 axes, but shape {tuple(tensor.layout.shape)} has "
            f"{tensor.layout.rank}: use .mT (the last two) or .permute(...)",
            rank=tensor.layout.rank,
        )
    return tensor.transpose()


def _view(tensor: Any, args: tuple) -> Any:
    # NumPy's a.view() with no argument: a new view of the same memory, the same layout.
    # With a shape, PyTorch's view: wherever strides can say the new shape over the same
    # elements (candela's seed view asks for a contiguous layout; NumPy's reshape is it).
    if not args:
        return tensor
    from candela import NonContiguousView
    from candela import tuples as T

    try:
        return tensor.view(*args)
    except NonContiguousView:
        layout = getattr(tensor, "layout", tensor)
        dims = T.check_view_shape(T.one_or_many(args), layout.len)
        stride = T.nocopy_reshape_strides(layout.shape, layout.stride, dims) if layout.len else None
        if stride is None:
            raise
        return tensor.as_strided(dims, stride, layout.offset)


def _view_note(layout: Any, args: tuple, keywords: tuple) -> str | None:
    if not args or layout.is_contiguous():
        return None
    return (
        "PyTorch's view: these strides say the new shape over the same elements, so no copy "
        "is needed (candela's own view, as seed 002 has it, asks for a contiguous layout)"
    )


def _ravel(tensor: Any, args: tuple) -> Any:
    # NumPy's order: 'C' reads the last axis fastest, 'F' the first (a.ravel('F') is
    # a.T.ravel()), 'A' as 'F' where the layout is Fortran-contiguous and not C-contiguous
    order = args[0] if args else "C"
    if order == "A":
        layout = getattr(tensor, "layout", tensor)  # a Tensor's, or a bare Layout
        fortran = layout.transpose().is_contiguous() and not layout.is_contiguous()
        order = "F" if fortran else "C"
    return tensor.transpose().ravel() if order == "F" else tensor.ravel()


def _squeeze(tensor: Any, args: tuple) -> Any:
    # PyTorch's squeeze(dim): an axis whose size is not 1 is left as it is
    if not args:
        return tensor.squeeze()
    from candela import tuples as T

    layout = getattr(tensor, "layout", tensor)  # a Tensor's, or a bare Layout
    axes = T.check_axes(args[0], layout.rank, "squeeze axis")
    ones = tuple(a for a in axes if layout.shape[a] == 1)
    return tensor.squeeze(ones) if ones else tensor


def _squeeze_note(layout: Any, args: tuple, keywords: tuple) -> str | None:
    if not args or "axis" in keywords:
        return None
    from candela import tuples as T

    try:
        axes = T.check_axes(args[0], layout.rank, "squeeze axis")
    except ValueError:
        return None
    kept = [a for a in axes if layout.shape[a] != 1]
    if not kept:
        return None
    sizes = ", ".join(f"axis {a} has size {layout.shape[a]}" for a in kept)
    return (
        f"PyTorch's squeeze: {sizes}, so it stays (NumPy's squeeze(axis=...) refuses an axis "
        "whose size is not 1)"
    )


def _transpose_note(layout: Any, args: tuple, keywords: tuple) -> str | None:
    if len(args) != 2 or layout.rank != 2 or isinstance(args[0], tuple):
        return None
    if [a % 2 for a in args] != [0, 1]:  # (1, 0) is a swap to NumPy too
        return None
    return (
        "two axes: swapped, as seed 003 and PyTorch's transpose(dim0, dim1) do (NumPy's "
        "a.transpose(0, 1) lists every axis in place, so a matrix stays as it is; its swap is "
        "a.swapaxes(0, 1))"
    )


def step_note(step: Any, layout: Any) -> str | None:
    """The step list's line where NumPy and PyTorch disagree on ``step`` applied to
    ``layout``, naming the library followed; None where they agree."""
    op = REGISTRY.get(step.name)
    if op is None or op.note is None:
        return None
    return op.note(layout, step.args, getattr(step, "keywords", ()))


def _slice(tensor: Any, args: tuple) -> Any:
    from candela import s

    (spec,) = args
    return tensor.slice(s[spec.items])


def _subscript(tensor: Any, args: tuple) -> Any:
    (spec,) = args
    return tensor.subscript(spec.items)


# --------------------------------------------------------------------------- the operations

register(
    Op(
        "transpose",
        (Arg("axes", "ints", "", optional=True),),
        help="no axes: reverse every axis; two axes: swap them (PyTorch, on every rank); "
        "one tuple, or every axis of a 3-D or larger tensor: NumPy's permutation",
        numpy="a.T / a.transpose(2, 0, 1)",
        torch="x.transpose(d0, d1) / x.permute(2, 0, 1)",
        spread=True,
        position_keywords=("dim0", "dim1"),
        note=_transpose_note,
    )
)
register(
    Op(
        "subscript",
        (Arg("key", "index", "1:, ::-1"),),
        help="a Python subscript with NumPy's meaning: an integer drops its axis ([1], [:, 2]), "
        "a slice keeps it, None adds an axis of size 1, ... stands for the rest "
        "(.slice(s[...]) keeps every axis instead)",
        numpy="a[1:, ::-1]",
        torch="x[1:] (no negative steps: x.flip)",
        foreign=("getitem", "index"),
        bracket=True,
        run=_subscript,
    )
)
register(
    Op(
        "slice",
        (Arg("ranges", "slices", "0:2, ::-1"),),
        help="candela's slice: ranges of the leading axes, keeping the rank (an integer keeps "
        "its axis with size 1, unlike x[1]); a negative step flips",
        numpy="a[0:2, ::-1] (a[1:2] for s[1])",
        torch="x[0:2] (no negative steps)",
        foreign=("index_select", "take"),
        run=_slice,
    )
)
register(
    Op(
        "narrow",
        (Arg("dim", "int", "0"), Arg("start", "int", "0"), Arg("length", "int", "1")),
        help="length elements of axis dim from start",
        numpy="a[:, start:start+length]",
        torch="x.narrow(dim, start, length)",
    )
)
register(
    Op(
        "view",
        (Arg("shape", "ints", "4, 3", optional=True),),
        help="the same elements in another shape, where strides can say it without a copy "
        "(PyTorch's view; one size may be -1); no shape: the same view again (NumPy's a.view())",
        numpy="a.view() with a.shape = ...",
        torch="x.view(shape)",
        foreign=("view_as",),
        spread=True,
        run=_view,
        note=_view_note,
    )
)
register(
    Op(
        "reshape",
        (Arg("shape", "ints", "-1"),),
        help="another shape: a view where strides can say it, else a packed copy",
        numpy="a.reshape(shape)",
        torch="x.reshape(shape)",
        foreign=("reshape_as",),
        spread=True,
    )
)
register(
    Op(
        "permute",
        (Arg("axes", "ints", "1, 0", also=("dims",)),),
        help="reorder the axes: axis i of the result is axis axes[i]",
        numpy="a.transpose(axes)",
        torch="x.permute(axes)",
        spread=True,
    )
)
register(
    Op(
        "swapaxes",
        (
            Arg("axis1", "int", "0", also=("axis0", "dim0")),
            Arg("axis2", "int", "1", also=("dim1",)),
        ),
        help="swap two axes (PyTorch's two-axis transpose)",
        numpy="a.swapaxes(a1, a2)",
        torch="x.swapaxes(a1, a2) / x.transpose(a1, a2)",
        also=("swapdims",),
    )
)
register(
    Op(
        "moveaxis",
        (Arg("source", "ints", "0"), Arg("destination", "ints", "-1")),
        help="move axes to new places; the others keep their order",
        numpy="np.moveaxis(a, source, destination)",
        torch="x.moveaxis(source, destination)",
        foreign=("rollaxis",),
    )
)
register(
    Op(
        "movedim",
        (Arg("source", "ints", "-1"), Arg("destination", "ints", "0")),
        help="PyTorch's name for moveaxis",
        numpy="np.moveaxis(a, source, destination)",
        torch="x.movedim(source, destination)",
    )
)
register(
    Op(
        "select",
        (Arg("dim", "int", "0"), Arg("index", "int", "0")),
        help="the slice at index of axis dim, that axis dropped: .select(1, 2) is [:, 2]",
        numpy="a[:, index] (index on axis dim)",
        torch="x.select(dim, index)",
    )
)
register(
    Op(
        "flatten",
        (
            Arg("start_dim", "int", "", optional=True, fill=0),
            Arg("end_dim", "int", "", optional=True, fill=-1),
        ),
        help="axes start_dim..end_dim (all) merged into one: a view where strides allow, "
        "else a packed copy",
        numpy="a.reshape(-1) (a.flatten() always copies)",
        torch="x.flatten(start_dim, end_dim)",
    )
)
register(
    Op(
        "ravel",
        (Arg("order", "order", "", optional=True),),
        help="every axis merged into one: a view where strides allow, else a packed copy; "
        "order='F' reads the first axis fastest (a.T.ravel())",
        run=_ravel,
        numpy="a.ravel()",
        torch="x.ravel()",
    )
)
register(
    Op(
        "unflatten",
        (Arg("dim", "int", "1"), Arg("sizes", "ints", "2, -1", also=("unflattened_size",))),
        help="axis dim split into several of these sizes (one may be -1): always a view",
        numpy="a.reshape(a.shape[:dim] + sizes + a.shape[dim + 1:])",
        torch="x.unflatten(dim, sizes)",
    )
)
register(
    Op(
        "diagonal",
        (
            Arg("offset", "int", "", optional=True, fill=0),
            Arg("dim1", "int", "", optional=True, also=("axis1",), fill=0),
            Arg("dim2", "int", "", optional=True, also=("axis2",), fill=1),
        ),
        help="the diagonal of axes dim1, dim2 as a last axis of stride stride[dim1] + stride[dim2]",
        numpy="a.diagonal(offset, dim1, dim2)",
        torch="x.diagonal(offset, dim1, dim2)",
        foreign=("diag", "trace"),
    )
)
register(
    Op(
        "unfold",
        (
            Arg("dim", "int", "0", also=("dimension",)),
            Arg("size", "int", "2"),
            Arg("step", "int", "1"),
        ),
        help="sliding windows: axis dim becomes (n - size)//step + 1 windows, a last axis of size",
        numpy="sliding_window_view(a, size, axis=dim) (then [::step] on dim)",
        torch="x.unfold(dim, size, step)",
        foreign=("sliding_window_view", "windows"),
    )
)
register(
    Op(
        "as_strided",
        (
            Arg("shape", "ints", "3, 3", also=("size",)),
            Arg("stride", "ints", "1, 1"),
            Arg("offset", "int", "", optional=True, also=("storage_offset",)),
        ),
        help="any shape and stride over the same buffer, from offset (refused past its ends)",
        numpy="as_strided(a, shape, strides in bytes)",
        torch="x.as_strided(shape, stride, offset)",
    )
)
register(
    Op(
        "transpose_axes",
        (Arg("axes", "ints", "1, 0"),),
        help="reorder the axes (candela's name for permute)",
        numpy="a.transpose(axes)",
        torch="x.permute(axes)",
    )
)
register(
    Op(
        "flip",
        (Arg("axes", "ints", "0", also=("axis", "dims")),),
        help="reverse the given axes: a negative stride, the offset at the old last element",
        numpy="np.flip(a, axes)",
        torch="x.flip(axes)",
        foreign=("flipud", "fliplr"),
        spread=True,
    )
)
register(
    Op(
        "unsqueeze",
        (Arg("axis", "int", "0", also=("dim",)),),
        help="insert an axis of size 1",
        numpy="np.expand_dims(a, axis)",
        torch="x.unsqueeze(axis)",
        foreign=("expand_dims",),
    )
)
register(
    Op(
        "squeeze",
        (Arg("axes", "ints", "", optional=True, also=("axis", "dim")),),
        help="drop axes of size 1 (all of them, or the given ones; PyTorch's squeeze(dim) "
        "leaves an axis of another size, NumPy's squeeze(axis=...) refuses it)",
        numpy="a.squeeze(axes)",
        torch="x.squeeze(axes)",
        run=_squeeze,
        strict=("axis",),
        note=_squeeze_note,
    )
)
register(
    Op(
        "broadcast",
        (Arg("shape", "ints", "2, 3, 4"),),
        help="NumPy's broadcast to a shape: repeats are stride 0",
        numpy="np.broadcast_to(a, shape)",
        torch="x.broadcast_to(shape)",
        also=("broadcast_to",),
    )
)
register(
    Op(
        "expand",
        (Arg("sizes", "ints", "2, -1, -1"),),
        help="PyTorch's broadcast: -1 keeps an axis's size",
        numpy="np.broadcast_to(a, shape)",
        torch="x.expand(sizes)",
        foreign=("expand_as",),
        spread=True,
    )
)
register(
    Op(
        "rotate_axis_innermost",
        (Arg("axis", "int", "0"),),
        help="axes after `axis` move out, `axis` becomes the innermost",
        numpy="np.moveaxis(a, ..., -1)",
        torch="x.movedim(..., -1)",
    )
)
register(
    Op(
        "T",
        help="every axis reversed (the same as .transpose())",
        numpy="a.T",
        torch="x.T",
        attribute=True,
    )
)
register(
    Op(
        "t",
        help="PyTorch's transpose of a matrix: at most 2 axes (a 1-D tensor stays as it is)",
        numpy="a.T",
        torch="x.t()",
        run=_t,
    )
)
register(
    Op(
        "mT",
        help="the last two axes swapped (.transpose(-2, -1)); .mH, the conjugate transpose, "
        "has the same layout",
        numpy="np.matrix_transpose(a)",
        torch="x.mT",
        attribute=True,
        foreign=("matrix_transpose",),
        also=("mH",),
    )
)
register(
    Op(
        "contiguous",
        help="the tensor itself when contiguous, else a packed copy",
        numpy="np.ascontiguousarray(a)",
        torch="x.contiguous()",
        foreign=("ascontiguousarray",),
        copies=True,
    )
)
register(
    Op(
        "as_contiguous",
        help="a packed copy in logical order: positions then index the copy",
        numpy="a.copy()",
        torch="x.clone(memory_format=torch.contiguous_format)",
        also=("copy",),
        copies=True,
    )
)
