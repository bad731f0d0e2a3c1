"""The explorer in Jupyter: ``explorer.show(x)`` (the display glue is in :mod:`explorer.notebook`).

``show(x)`` opens the explorer on a real layout instead of ``Tensor.arange``:
a ``candela.Layout`` or ``candela.Tensor``, a NumPy array (its own buffer,
strides and offset, through ``Tensor.from_numpy``) or anything duck-typed like
a PyTorch tensor (``.shape``, ``.stride()`` and ``.storage_offset()``, strides
in elements). The pipeline then applies on top of that tensor. ``compare(a, b)`` shows two
views of one buffer side by side.
"""

from __future__ import annotations

import numpy as np

from .app import Explorer
from .notebook import ensure_extension, in_notebook

__all__ = ["as_tensor", "compare", "ensure_extension", "in_notebook", "show"]


def _layout_tensor(layout):
    # Each buffer value is its own position, as Tensor.arange has it: made only when small
    # enough to draw cell by cell, else a buffer never made (its values are its positions).
    from candela import InvalidShape, Tensor
    from candela import tuples as T

    from .columns import DETAIL_LIMIT
    from .pipeline import positions_buffer

    if layout.len == 0:
        return Tensor(np.arange(0, dtype=np.int64), layout)
    lo, hi = T.position_bounds(layout.shape, layout.stride, layout.offset)
    if lo < 0:
        raise InvalidShape(
            f"layout {layout} reads position {lo}, before the buffer's start; "
            "give it an offset of at least " + str(-lo + layout.offset),
            layout=layout,
        )
    if hi + 1 > DETAIL_LIMIT:
        return Tensor(positions_buffer(hi + 1), layout)
    return Tensor(np.arange(hi + 1, dtype=np.int64), layout)


def _dtype_unit(name: str, itemsize: int) -> str | None:
    """``name`` if the explorer can show strides in its bytes, else None (elements)."""
    from .fields import DTYPE_BYTES

    return name if DTYPE_BYTES.get(name) == itemsize else None


def _torch_storage(x) -> np.ndarray | None:
    """The whole storage a PyTorch tensor views, as a flat NumPy array of its own values:
    zero-copy on the CPU (a copy from another device, or of a dtype NumPy has not, as
    float32); None for a tensor-like object without a storage to read."""
    storage = getattr(x, "untyped_storage", None)
    if not (callable(storage) and callable(getattr(x, "new_empty", None))):
        return None
    storage = storage()
    itemsize = int(x.element_size())
    whole = x.new_empty(0).set_(storage, 0, (storage.nbytes() // itemsize,), (1,)).detach()
    whole = whole.cpu()
    try:
        return whole.numpy()
    except (TypeError, RuntimeError):  # bfloat16 and the like: NumPy has no such dtype
        return whole.float().numpy()


def as_tensor(x) -> tuple[object, str | None]:
    """The ``candela.Tensor`` to explore for ``x``, and the stride unit it counts in.

    The unit is the NumPy dtype's name for arrays (NumPy counts strides in
    bytes), ``None`` (elements) for everything else (PyTorch counts elements).
    A PyTorch tensor's values are its own, read from its storage (zero-copy on
    the CPU); a tensor-like object without a storage shows its buffer positions.

    >>> a = np.arange(12, dtype=np.int32).reshape(3, 4)
    >>> t, unit = as_tensor(a.T[::2])
    >>> t.shape, t.stride, t.offset, unit
    ((2, 3), (2, 4), 0, 'int32')
    """
    from candela import Layout, Tensor

    if isinstance(x, Tensor):
        return x, None
    if isinstance(x, Layout):
        return _layout_tensor(x), None
    if isinstance(x, np.ndarray):
        return Tensor.from_numpy(x), x.dtype.name
    stride, offset = getattr(x, "stride", None), getattr(x, "storage_offset", None)
    if hasattr(x, "shape") and callable(stride) and callable(offset):
        # A torch.Tensor or alike: strides and offset in elements of its storage.
        layout = Layout.from_strided(
            tuple(int(v) for v in x.shape), tuple(int(v) for v in stride()), int(offset())
        )
        values = _torch_storage(x)
        if values is None or values.size == 0:
            return _layout_tensor(layout), None
        return Tensor(values, layout), None
    if hasattr(x, "__array_interface__") or hasattr(x, "__array__"):
        array = np.asarray(x)
        return Tensor.from_numpy(array), array.dtype.name
    raise TypeError(
        f"explorer.show() takes a candela Layout or Tensor, a NumPy array, or a tensor with "
        f".shape, .stride() and .storage_offset() (like torch.Tensor); got {type(x).__name__}"
    )


def _given_name(x) -> str:
    """How ``show``'s argument is named in messages: "a NumPy array", "a candela Layout"..."""
    from candela import Layout, Tensor

    if isinstance(x, np.ndarray):
        return "a NumPy array"
    if isinstance(x, (Layout, Tensor)):
        return f"a candela {type(x).__name__}"
    return f"a {type(x).__module__.split('.')[0]} {type(x).__name__}"


def show(x, ops: str = "", unit: str | None = None, **params):
    """An :class:`~explorer.app.Explorer` that starts from ``x``; it displays itself.

    ``x`` is a ``candela.Layout`` (buffer values are positions), a
    ``candela.Tensor``, a NumPy array (zero-copy: its base buffer, its strides
    and its offset in that buffer, shown in bytes of its dtype) or anything
    with ``.shape``, ``.stride()`` and ``.storage_offset()`` such as a
    ``torch.Tensor`` (strides in elements). ``ops`` is a pipeline applied on
    top, e.g. ``".transpose()"``. Like any Panel object, the returned explorer
    is drawn when it is a cell's last expression (or passed to ``display``);
    keep it in a variable to read or change it from later cells
    (``ex.ops = ".slice(s[::2])"``, ``ex.unit = "elements"``, ``ex.layout``).
    Its shape is ``x``'s and cannot change: setting ``ex.shape`` to another
    shape, or a ``lesson`` (lessons start from their own shapes), raises a
    ``ValueError`` saying so; ``ex.start = tensor`` swaps the tensor, and the
    shape follows it. Outside a notebook, ``show(x).show()`` serves it in a
    browser tab.
    """
    tensor, dtype = as_tensor(x)
    if dtype is not None:
        dtype = _dtype_unit(dtype, np.dtype(dtype).itemsize)
    chosen = unit if unit is not None else (dtype or "elements")
    size = _element_size(x, tensor)
    if size is not None:
        params.setdefault("given_itemsize", size)
    return Explorer(start=tensor, ops=ops, unit=chosen, given=_given_name(x), **params)


def _element_size(x, tensor) -> int | None:
    """A PyTorch tensor's bytes per element when its values were read as another dtype
    (bfloat16 as float32): the cost panel counts the tensor's own; else None."""
    size = getattr(x, "element_size", None)
    if not callable(size):
        return None
    try:
        size = int(size())
    except (TypeError, ValueError, RuntimeError):
        return None
    return size if size != tensor.buffer.dtype.itemsize else None


def _tuple_text(values) -> str:
    values = tuple(int(v) for v in values)
    return f"({values[0]},)" if len(values) == 1 else str(values)


def _strided_text(tensor) -> str:
    """The pipeline step that makes ``tensor``'s layout over its whole buffer."""
    return (
        f".as_strided({_tuple_text(tensor.shape)}, {_tuple_text(tensor.stride)}, {tensor.offset})"
    )


def _described(x, tensor) -> str:
    """``x`` for a message: what it is and the memory it reads."""
    buffer = tensor.buffer
    return f"{_given_name(x)} over {buffer.size:,} {buffer.dtype.name} elements"


def _address(buffer: np.ndarray) -> int:
    return int(buffer.__array_interface__["data"][0])


def _one_buffer(a, b):
    """The flat buffer two views share, as one candela Tensor each over it; or ValueError.

    Two NumPy arrays, PyTorch tensors or candela Tensors, in any mix, share a
    buffer when their memory overlaps (``torch.from_numpy(x)`` and ``x.T`` do);
    both views are then drawn over the memory from the lower start to the higher
    end, with their own values. Two candela Layouts are views of one buffer of
    positions. Anything else is refused, naming both.
    """
    from candela import Layout, Tensor

    if isinstance(a, Layout) or isinstance(b, Layout):
        if not (isinstance(a, Layout) and isinstance(b, Layout)):
            raise ValueError(
                "explorer.compare(a, b) shows two views of one memory: a candela Layout has "
                f"none of its own, so it cannot share {_given_name(b if isinstance(a, Layout) else a)}'s"
                " (compare two Layouts, or two arrays or tensors)"
            )
        ta, tb = _layout_tensor(a), _layout_tensor(b)
        size = max(len(ta.buffer), len(tb.buffer))
        buffer = np.arange(size, dtype=np.int64)  # positions of the buffer both read
        return Tensor(buffer, a), Tensor(buffer, b), None
    (ta, unit_a), (tb, unit_b) = as_tensor(a), as_tensor(b)
    same_storage = callable(getattr(a, "untyped_storage", None)) and callable(
        getattr(b, "untyped_storage", None)
    )
    if same_storage and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr():
        # one storage (on any device): read once, both views over it
        return ta, Tensor(ta.buffer, tb.layout), None
    bufa, bufb = ta.buffer, tb.buffer
    lo_a, lo_b = _address(bufa), _address(bufb)
    hi_a, hi_b = lo_a + bufa.nbytes, lo_b + bufb.nbytes
    if bufa is not bufb and (not bufa.size or not bufb.size or lo_a >= hi_b or lo_b >= hi_a):
        raise ValueError(
            "explorer.compare(a, b) shows two views of one memory: these do not share any "
            f"(a: {_described(a, ta)}; b: {_described(b, tb)})"
        )
    if bufa.dtype != bufb.dtype:
        raise ValueError(
            "explorer.compare(a, b) shows two views of one memory read as one element type: "
            f"a reads it as {bufa.dtype.name}, b as {bufb.dtype.name} (a dtype view)"
        )
    item = bufa.itemsize
    if (lo_b - lo_a) % item:
        raise ValueError(
            "explorer.compare(a, b): the two views share memory but their elements do not line "
            f"up (b starts {(lo_b - lo_a) % item} bytes into an element of a)"
        )
    start = min(lo_a, lo_b)
    lower = bufa if lo_a == start else bufb
    # one allocation holds both (their memory overlaps): view it from the lower start
    # to the higher end, without a copy
    whole = np.lib.stride_tricks.as_strided(
        lower, shape=((max(hi_a, hi_b) - start) // item,), strides=(item,), writeable=False
    )

    def moved(t, lo):
        shift = (lo - start) // item
        return Tensor(whole, Layout.from_strided(t.shape, t.stride, t.offset + shift))

    unit = unit_a if unit_a == unit_b else None
    return moved(ta, lo_a), moved(tb, lo_b), unit


def compare(a, b, unit: str | None = None, **params):
    """An :class:`~explorer.app.Explorer` of two views of one buffer, side by side.

    ``a`` and ``b`` are NumPy arrays, PyTorch tensors or candela Tensors, in any
    mix, whose memory overlaps (or two candela Layouts); anything else is
    refused with a ``ValueError`` naming both. The explorer starts from the whole buffer as a
    flat tensor; its pipeline is ``a``'s layout (``.as_strided(...)``) and its
    ``compare`` pipeline ``b``'s, so the lane under the grids shows which
    cells each reads, which both read (aliasing) and which neither.

    >>> x = np.arange(12).reshape(3, 4)
    >>> ex = compare(x, x.T[::2])
    >>> ex.ops, ex.compare
    ('.as_strided((3, 4), (4, 1), 0)', '.as_strided((2, 3), (2, 4), 0)')
    """
    from candela import Layout, Tensor

    ta, tb, dtype = _one_buffer(a, b)
    if dtype is not None:
        dtype = _dtype_unit(dtype, np.dtype(dtype).itemsize)
    chosen = unit if unit is not None else (dtype or "elements")
    start = Tensor(ta.buffer, Layout(len(ta.buffer)))
    return Explorer(
        start=start,
        ops=_strided_text(ta),
        compare=_strided_text(tb),
        unit=chosen,
        given="the buffer both views read",
        **params,
    )
