"""The pipeline in NumPy's and PyTorch's words: runnable snippets of Python.

``numpy_code(result)`` and ``torch_code(result)`` turn an evaluated pipeline
(a :class:`explorer.state.Result`) into text a user can paste into a
notebook: the import, ``x = ...`` (the start tensor, e.g.
``np.arange(12).reshape(3, 4)``), then ``y = ...`` (the pipeline). Run by
NumPy, ``numpy_code`` makes ``y`` with the explorer's shape, strides, offset
and values (its buffer is ``x``'s, or a copy exactly where the explorer
copies). ``torch_code`` uses PyTorch's documented spellings; PyTorch has no
negative strides, so a flip there (``x.flip``) copies, and a negative slice
step is written as a flip and a positive step. Its ``as_strided`` counts in the
storage of the tensor it is called on and takes no negative stride: after a
flip it starts from the tensor that holds the explorer's buffer, and a
negative stride is walked forwards from the axis's far end and then flipped.

Each op's words are worked out from the layout before and after it (a
two-axis ``transpose`` is NumPy's ``swapaxes``, a flatten of
some axes is a ``reshape`` to the shape it made). An op without words of its
own here is written as it is in the pipeline, which is right for the ops
whose spelling the three libraries share.

>>> from explorer.state import evaluate
>>> print(numpy_code(evaluate((3, 4), ".T[::2].flip(0)")))
import numpy as np
<BLANKLINE>
x = np.arange(12).reshape(3, 4)
y = np.flip(x.T[::2], 0)
>>> print(torch_code(evaluate((3, 4), "[:, ::-2]")).splitlines()[-1])
y = x.flip(1)[:, ::2]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .pipeline import SliceSpec, Step, format_step, format_subscript

__all__ = ["numpy_code", "torch_code"]

ITEMSIZE = 8  # np.arange's int64, and torch.arange's


@dataclass
class _Writer:
    """What one snippet needs besides the expression: imports, named buffers, lines."""

    lib: str  # "np" or "torch"
    imports: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    #: The name of the flat buffer the current view reads: "buf", or a copy's name.
    buffer: str = "buf"
    needs_buf: bool = False
    copies: int = 0
    #: PyTorch: the tensor whose storage is the explorer's buffer ("x", or a copy's name),
    #: whether a flip has copied since (PyTorch has no negative strides), and whether that
    #: copy may start partway into its storage (made contiguous from a flip's copy).
    storage: str = "x"
    flipped: bool = False
    storage_shifted: bool = False

    def need(self, line: str) -> None:
        if line not in self.imports:
            self.imports.append(line)


def _t(values: Any) -> str:
    """A tuple as Python writes it: ``(3,)``, ``(2, 3)``."""
    values = tuple(values)
    return f"({values[0]},)" if len(values) == 1 else str(values)


def _args(values: tuple) -> str:
    return ", ".join(_t(v) if isinstance(v, tuple) else str(v) for v in values)


def _on_axis(axis: int, item: str) -> str:
    """A subscript that applies `item` to one axis: ``[:, :, 1:3]``."""
    return "[" + ", ".join([":"] * axis + [item]) + "]"


def _canonical(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _zero_d(expr: str, numpy_rank: int) -> str:
    # candela has no rank 0: where NumPy and PyTorch give a 0-d array, the explorer
    # shows one element of shape (1,)
    return f"{expr}.reshape(1)" if numpy_rank == 0 else expr


def _subscript_rank(items: tuple, rank: int) -> int:
    named = sum(1 for i in items if i is not None and i is not Ellipsis)
    kept = sum(1 for i in items if isinstance(i, slice) or i is None)
    return kept + (rank - named)


def _axis_items(items: tuple, rank: int) -> list[tuple[int | None, Any]]:
    """Each item of a NumPy subscript with the input axis it applies to (None: a new axis)."""
    named = sum(1 for i in items if i is not None and i is not Ellipsis)
    out: list[tuple[int | None, Any]] = []
    axis = 0
    for item in items:
        if item is None:
            out.append((None, item))
        elif item is Ellipsis:
            out.append((None, item))
            axis += rank - named
        else:
            out.append((axis, item))
            axis += 1
    return out


def _torch_key(items: tuple, shape: tuple[int, ...]) -> tuple[list[int], list]:
    """PyTorch has no negative steps: the axes to flip first, and the subscript after."""
    flips, out = [], []
    named = sum(1 for i in items if i is not None and i is not Ellipsis)
    for axis, item in _axis_items(items, len(shape)):
        if item is Ellipsis:
            # written out: a flipped axis's full slice after it is dropped as trailing,
            # and `...` would then move the items before it onto other axes
            out.extend([slice(None)] * (len(shape) - named))
            continue
        if axis is not None and isinstance(item, slice) and (item.step or 1) < 0:
            n = shape[axis]
            picked = range(n)[item]
            flips.append(axis)
            if not len(picked):
                out.append(slice(0, 0))
            else:  # element k of the flipped axis is element n-1-k
                first, step = n - 1 - picked.start, -picked.step
                stop = first + len(picked) * step
                out.append(
                    slice(first or None, stop if stop < n else None, step if step > 1 else None)
                )
        else:
            out.append(item)
    return flips, out


# --------------------------------------------------------------------------- each op's words

#: (expression, step, layout before, layout after, writer) -> the new expression.
Translate = Callable[[str, Step, Any, Any, _Writer], str]


def _transpose(e: str, step: Step, before, after, w: _Writer) -> str:
    rank, args = before.rank, step.args
    if not args:
        if w.lib == "np" or rank == 2:
            return f"{e}.T"
        return f"{e}.permute({_args(tuple(range(rank - 1, -1, -1)))})"
    if len(args) == 1 and isinstance(args[0], tuple) or len(args) == rank != 2:
        axes = args[0] if isinstance(args[0], tuple) else args
        word = "transpose" if w.lib == "np" else "permute"
        return f"{e}.{word}({_args(tuple(axes))})"
    # two separate axes: seed 003's and PyTorch's swap, on every rank
    word = "swapaxes" if w.lib == "np" else "transpose"
    return f"{e}.{word}({args[0]}, {args[1]})"


def _subscript(e: str, step: Step, before, after, w: _Writer) -> str:
    (spec,) = step.args
    items = spec.items
    rank = _subscript_rank(items, before.rank)
    if rank == 0 and Ellipsis not in items:
        items = (*items, Ellipsis)  # a 0-d view: NumPy's a[0] would be a scalar, a copy
    if w.lib == "np":
        return _zero_d(f"{e}{format_subscript(items)}", rank)
    flips, key = _torch_key(items, before.shape)
    if flips:
        e = f"{e}.flip({_args(tuple(flips))})"
        w.flipped = True
        while key and key[-1] == slice(None):  # x.flip(1)[:2], not x.flip(1)[:2, :]
            key.pop()
        if all(item is Ellipsis for item in key):
            return e  # a flip was all it did: x[::-1] is x.flip(0)
    return _zero_d(f"{e}{format_subscript(key)}", rank)


def _slice(e: str, step: Step, before, after, w: _Writer) -> str:
    # candela's rule: an integer keeps its axis, as NumPy's i:i+1 does
    (spec,) = step.args
    items = tuple(
        (slice(k, k + 1) if k != -1 else slice(-1, None)) if isinstance(k, int) else k
        for k in spec.items
    )
    return _subscript(e, Step("subscript", (SliceSpec(items),)), before, after, w)


def _narrow(e: str, step: Step, before, after, w: _Writer) -> str:
    dim, start, length = step.args
    axis = _canonical(dim, before.rank)
    begin = start + before.shape[axis] if start < 0 else start
    if w.lib == "torch":
        return f"{e}.narrow({axis}, {begin}, {length})"
    return f"{e}{_on_axis(axis, f'{begin}:{begin + length}')}"


def _reshape_to_after(e: str, step: Step, before, after, w: _Writer) -> str:
    return f"{e}.reshape({_args(after.shape)})"


def _flatten(e: str, step: Step, before, after, w: _Writer) -> str:
    if w.lib == "torch":
        return f"{e}.flatten({_args(step.args)})"
    return f"{e}.reshape(-1)" if after.rank == 1 else _reshape_to_after(e, step, before, after, w)


def _permute(e: str, step: Step, before, after, w: _Writer) -> str:
    word = "transpose" if w.lib == "np" else "permute"
    return f"{e}.{word}({_args(step.args)})"


def _moveaxis(e: str, step: Step, before, after, w: _Writer) -> str:
    if w.lib == "np":
        return f"np.moveaxis({e}, {_args(step.args)})"
    return f"{e}.{step.name}({_args(step.args)})"


def _select(e: str, step: Step, before, after, w: _Writer) -> str:
    dim, index = step.args
    if w.lib == "torch":
        return _zero_d(f"{e}.select({dim}, {index})", before.rank - 1)
    item = str(index) if before.rank > 1 else f"{index}, ..."  # a 0-d view, not a scalar
    return _zero_d(f"{e}{_on_axis(_canonical(dim, before.rank), item)}", before.rank - 1)


def _unfold(e: str, step: Step, before, after, w: _Writer) -> str:
    dim, size, hop = step.args
    if w.lib == "torch":
        return f"{e}.unfold({dim}, {size}, {hop})"
    w.need("from numpy.lib.stride_tricks import sliding_window_view")
    axis = _canonical(dim, before.rank)
    windows = f"sliding_window_view({e}, {size}, axis={axis})"
    return windows if hop == 1 else f"{windows}{_on_axis(axis, f'::{hop}')}"


def _torch_strided(e: str, layout, shift: str) -> str:
    """``e.as_strided(...)`` for `layout` over ``e``'s storage (``shift``: where it starts).

    PyTorch's as_strided takes no negative stride: such an axis is walked forwards
    from its last element's position, then flipped.
    """
    back = tuple(i for i, (n, st) in enumerate(zip(layout.shape, layout.stride)) if st < 0)
    offset = layout.offset + sum(
        (layout.shape[i] - 1) * layout.stride[i] for i in back if layout.shape[i]
    )
    stride = tuple(abs(st) for st in layout.stride)
    at = str(offset) if not shift else shift + (f" + {offset}" if offset else "")
    out = f"{e}.as_strided({_t(layout.shape)}, {_t(stride)}, {at})"
    return f"{out}.flip({_args(back)})" if back else out


def _as_strided(e: str, step: Step, before, after, w: _Writer) -> str:
    if w.lib == "torch":
        # PyTorch's as_strided counts in the storage of the tensor it is called on: after
        # a flip (a copy there) that is not the explorer's buffer, so start from the tensor
        # that holds it.
        if w.flipped or w.storage_shifted:
            shift = f"{w.storage}.storage_offset()" if w.storage_shifted else ""
            out = _torch_strided(w.storage, after, shift)
        else:
            out = _torch_strided(e, after, "")
        w.flipped = w.flipped or any(st < 0 for st in after.stride)  # flipped: a copy
        return out
    w.need("from numpy.lib.stride_tricks import as_strided")
    strides = _t(s * ITEMSIZE for s in after.stride)
    if after.offset == before.offset:  # NumPy starts where the array it is given starts
        return f"as_strided({e}, shape={_t(after.shape)}, strides={strides})"
    if w.buffer == "buf":
        w.needs_buf = True
    return f"as_strided({w.buffer}[{after.offset}:], shape={_t(after.shape)}, strides={strides})"


def _broadcast(e: str, step: Step, before, after, w: _Writer) -> str:
    if w.lib == "torch":
        word = "expand" if step.name == "expand" else "broadcast_to"
        return f"{e}.{word}({_args(step.args)})"
    return f"np.broadcast_to({e}, {_t(after.shape)})"


def _rotate(e: str, step: Step, before, after, w: _Writer) -> str:
    axis = _canonical(step.args[0], before.rank)
    perm = tuple(range(axis + 1, before.rank)) + tuple(range(axis + 1))
    word = "transpose" if w.lib == "np" else "permute"
    return f"{e}.{word}({_args(perm)})"


def _flip(e: str, step: Step, before, after, w: _Writer) -> str:
    args = step.args
    if w.lib == "np":
        if not args or args == (None,):
            return f"np.flip({e})"
        axes = args[0] if len(args) == 1 else args
        return f"np.flip({e}, {_t(axes) if isinstance(axes, tuple) else axes})"
    w.flipped = True  # PyTorch's flip copies
    if not args or args == (None,):
        return f"{e}.flip({_args(tuple(range(before.rank)))})"
    return f"{e}.flip({_args(args)})"


def _unsqueeze(e: str, step: Step, before, after, w: _Writer) -> str:
    if w.lib == "np":
        return f"np.expand_dims({e}, {step.args[0]})"
    return f"{e}.unsqueeze({step.args[0]})"


def _squeeze(e: str, step: Step, before, after, w: _Writer) -> str:
    if step.args:
        axes = step.args[0] if isinstance(step.args[0], tuple) else (step.args[0],)
        # PyTorch's squeeze(dim) leaves an axis whose size is not 1; NumPy's would refuse it
        ones = tuple(a for a in axes if before.shape[_canonical(a, before.rank)] == 1)
        if not ones:
            return e
        if w.lib == "np" and ones != axes:
            axes = ones
        dropped = len(axes)
        text = _args((axes if len(axes) > 1 else axes[0],))
        return _zero_d(f"{e}.squeeze({text})", before.rank - dropped)
    return _zero_d(f"{e}.squeeze()", sum(1 for n in before.shape if n != 1))


def _ravel(e: str, step: Step, before, after, w: _Writer) -> str:
    # NumPy's own ravel copies any array that is not C-contiguous; reshape(-1) is
    # NumPy's view-where-strides-allow, as candela's ravel is
    fortran = after.len > 1 and before.rank > 1 and step.args and _reads_fortran(step, before)
    if w.lib == "np":
        return f"{e}.reshape(-1, order='F')" if fortran else f"{e}.reshape(-1)"
    if fortran:  # PyTorch has no order: reverse the axes first
        e = _transpose(e, Step("transpose"), before, after, w)
    return f"{e}.ravel()"


def _reads_fortran(step: Step, before) -> bool:
    order = step.args[0]
    if order == "A":
        return not before.is_contiguous() and before.transpose().is_contiguous()
    return order == "F"


def _view(e: str, step: Step, before, after, w: _Writer) -> str:
    if not step.args:  # NumPy's a.view(): the same view again
        return f"{e}.view()" if w.lib == "np" else f"{e}[...]"  # PyTorch: a view, any strides
    return (
        _reshape_to_after(e, step, before, after, w)
        if w.lib == "np"
        else _same_text(e, step, before, after, w)
    )


def _mT(e: str, step: Step, before, after, w: _Writer) -> str:
    return f"{e}.mT"


def _copy(e: str, step: Step, before, after, w: _Writer) -> str:
    if w.lib == "np":
        expr = f"np.ascontiguousarray({e})" if step.name == "contiguous" else f"{e}.copy()"
    elif step.name == "contiguous":
        expr = f"{e}.contiguous()"
    else:
        expr = f"{e}.clone(memory_format=torch.contiguous_format)"
    if step.name == "contiguous" and before.is_contiguous():
        return _named(expr, w)  # the explorer's (and NumPy's) view itself: the same buffer
    return _new_buffer(expr, w)


def _named(expr: str, w: _Writer) -> str:
    w.copies += 1
    name = f"c{w.copies}" if w.copies > 1 else "c"
    w.lines.append(f"{name} = {expr}")
    return name


def _new_buffer(expr: str, w: _Writer) -> str:
    """A copy into a new buffer: named, so that a later as_strided can start from it."""
    name = _named(expr, w)
    w.buffer = f"{name}.reshape(-1)"
    # PyTorch's contiguous() of a flip's contiguous copy is that copy, which may start
    # partway into its storage
    w.storage, w.storage_shifted, w.flipped = name, w.flipped, False
    return name


def _same_text(e: str, step: Step, before, after, w: _Writer) -> str:
    return e + format_step(step, canonical=True)


WORDS: dict[str, Translate] = {
    "transpose": _transpose,
    "subscript": _subscript,
    "slice": _slice,
    "narrow": _narrow,
    "view": _view,
    "unflatten": lambda e, s, b, a, w: (
        _reshape_to_after(e, s, b, a, w) if w.lib == "np" else _same_text(e, s, b, a, w)
    ),
    "reshape": _same_text,
    "permute": _permute,
    "transpose_axes": _permute,
    "swapaxes": _same_text,
    "moveaxis": _moveaxis,
    "movedim": _moveaxis,
    "select": _select,
    "flatten": _flatten,
    "ravel": _ravel,
    "diagonal": _same_text,
    "unfold": _unfold,
    "as_strided": _as_strided,
    "broadcast": _broadcast,
    "expand": _broadcast,
    "rotate_axis_innermost": _rotate,
    "flip": _flip,
    "unsqueeze": _unsqueeze,
    "squeeze": _squeeze,
    "T": lambda e, s, b, a, w: _transpose(e, Step("transpose"), b, a, w),
    "t": lambda e, s, b, a, w: f"{e}.T" if w.lib == "np" else f"{e}.t()",
    "mT": _mT,
    "contiguous": _copy,
    "as_contiguous": _copy,
}


# --------------------------------------------------------------------------- snippets


def _start(result, w: _Writer) -> str:
    """``x = ...``: ``arange(n).reshape(shape)``, or a strided view of ``arange`` for a given start."""
    start = result.states[0]
    layout = start.layout
    n = start.buffer.shape[0]
    arange = f"{w.lib}.arange({n})"
    if layout.is_contiguous() and layout.offset == 0 and layout.len == n:
        return f"{arange}.reshape({_args(layout.shape)})" if w.lib else arange
    # a given tensor's own layout over a buffer of positions 0..n-1
    w.needs_buf = True
    if w.lib == "torch":
        w.storage = "buf"  # x itself may be a flip's copy
        w.flipped = any(st < 0 for st in layout.stride)
        return _torch_strided("buf", layout, "")
    w.need("from numpy.lib.stride_tricks import as_strided")
    strides = _t(s * ITEMSIZE for s in layout.stride)
    return f"as_strided(buf[{layout.offset}:], shape={_t(layout.shape)}, strides={strides})"


def _snippet(result, lib: str) -> str:
    w = _Writer(lib)
    w.need("import numpy as np" if lib == "np" else "import torch")
    x = _start(result, w)
    expr = "x"
    for step, before, after in zip(result.steps, result.states, result.states[1:]):
        words = WORDS.get(step.name, _same_text)
        expr = words(expr, step, before.layout, after.layout, w)
        if after.buffer is not before.buffer and words is not _copy:
            expr = _new_buffer(expr, w)  # a reshape strides cannot say copied, as NumPy's does
    body = []
    if w.needs_buf:
        body.append(f"buf = {lib}.arange({result.states[0].buffer.shape[0]})")
        if x.startswith(f"{lib}.arange("):
            x = "buf" + x[len(f"{lib}.arange({result.states[0].buffer.shape[0]})") :]
    body.append(f"x = {x}")
    body.extend(line for line in w.lines)
    body.append(f"y = {expr}")
    imports = sorted(w.imports, key=lambda line: (line.startswith("from"), line))
    return "\n".join(imports) + "\n\n" + "\n".join(body)


def numpy_code(result) -> str:
    """Runnable NumPy code that makes ``y``: the explorer's result, strides and offset too."""
    return _snippet(result, "np")


def torch_code(result) -> str:
    """Runnable PyTorch code that makes ``y`` with the explorer's shape and values."""
    return _snippet(result, "torch")
