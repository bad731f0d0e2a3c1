"""NumPy as the oracle: the same layout as a strided view of ``np.arange``.

`as_numpy(layout)` is ``as_strided`` over ``np.arange(buffer_len)``, so each
element's value is its buffer position. The brute-force definitions here use
only the naive walk (``offset + sum(i * stride)`` for every multi-index in
``np.ndindex`` order), never candela's adj_stride, so they can disagree with
candela when candela is wrong.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from candela import Layout

ITEM = np.dtype(np.int64).itemsize


def buffer_len(layout: Layout) -> int:
    """Elements a buffer needs so that every position the layout reads exists."""
    if layout.len == 0:
        return layout.offset + 1
    hi = layout.offset + sum(max(st * (n - 1), 0) for n, st in zip(layout.shape, layout.stride))
    return hi + 1


def as_numpy(layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """``(base, view)``: the arange buffer and the layout as a NumPy view of it."""
    base = np.arange(buffer_len(layout), dtype=np.int64)
    view = as_strided(
        base[layout.offset :],
        shape=layout.shape,
        # an axis of size 0 or 1 never steps: NumPy gets 0 there, as it writes itself
        strides=tuple(st * ITEM if n > 1 else 0 for n, st in zip(layout.shape, layout.stride)),
        writeable=False,
    )
    return base, view


def numpy_fields(base: np.ndarray, view: np.ndarray) -> tuple[tuple, tuple, int]:
    """Shape, element strides and offset of a NumPy view of `base`."""
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // ITEM
    return view.shape, tuple(st // ITEM for st in view.strides), offset


def naive_walk(shape, stride, offset) -> list[tuple[tuple[int, ...], int]]:
    """Every element in logical order with ``offset + sum(i * stride)``."""
    return [(idx, offset + sum(i * st for i, st in zip(idx, stride))) for idx in np.ndindex(*shape)]


def stepped_axis(prev: tuple[int, ...], cur: tuple[int, ...]) -> int:
    """The axis that stepped between two consecutive multi-indices: the innermost that grew."""
    return max(d for d in range(len(cur)) if cur[d] > prev[d])


INT64_MAX = 2**63 - 1


def exact_walk_in_range(shape, stride, offset) -> bool:
    """Every number the layout holds fits int64 and every position it reads is in 0..2**63-1.

    Python ints throughout (no NumPy), so nothing here can wrap; adj_stride
    by the contract's formula, len as the product of the sizes.
    """
    fits = lambda v: -(2**63) <= v <= INT64_MAX  # noqa: E731
    count = 1
    for n in shape:
        count *= n
    adj = [
        st - sum(stride[k] * (shape[k] - 1) for k in range(d + 1, len(shape)))
        for d, st in enumerate(stride)
    ]
    if not all(fits(v) for v in (offset, count, *stride, *adj)):
        return False
    return all(0 <= p <= INT64_MAX for _, p in naive_walk(shape, stride, offset))


def brute_contiguous(shape, stride, offset=0) -> bool:
    """A flat walk visits offset, offset+1, ... in order."""
    positions = [p for _, p in naive_walk(shape, stride, offset)]
    return (
        positions == list(range(positions[0], positions[0] + len(positions))) if positions else True
    )


def brute_transposed_at(layout: Layout, axis: int) -> bool:
    """Some step of the walk where `axis` stepped moved backwards, on a non-broadcast axis."""
    if layout.stride[axis] == 0:
        return False
    walk = naive_walk(layout.shape, layout.stride, layout.offset)
    return any(stepped_axis(a[0], b[0]) == axis and b[1] - a[1] < 0 for a, b in zip(walk, walk[1:]))
