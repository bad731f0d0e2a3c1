"""What a walk costs: the memory units (cache lines, sectors) a layout's walk reads.

An element at buffer position ``p`` of ``itemsize`` bytes lies in memory unit
``p * itemsize // unit`` (its first byte decides: a 64-byte cache line by
default, 32-byte GPU sectors and 128-byte lines as options). Walking a layout
in logical order (the order of `Layout.positions`), `walk_cost` counts:

- ``units``: the distinct units the walk touches;
- ``unit_entries``: the times the walk *enters* a unit: the first read enters
  one, and a unit left and entered again counts again. It is what a cache
  that holds a single line would fetch;
- ``bytes_moved`` (``unit_entries * unit``) against ``bytes_used`` (the
  distinct positions read, times ``itemsize``);
- with ``warp=w``, a GPU-style read: the walk is cut into groups of ``w``
  consecutive elements (the last may be shorter), and ``units_per_request``
  is the mean over the groups of the distinct units each touches (1.0 is a
  perfectly coalesced read of a small element, ``w`` the worst).

A contiguous 64x64 float32 walk enters each of its 256 cache lines once; its
transpose enters a line at every element:

>>> from candela import Layout
>>> Layout((64, 64)).cost(4).unit_entries, Layout((64, 64)).T.cost(4).unit_entries
(256, 4096)
>>> print(Layout((64, 64)).T.cost(4, warp=32))
reads 4096 elements from 256 cache lines, entering lines 4096 times: 262144 bytes moved for 16384 used; a warp of 32 touches 32.0 lines a request

Exact at any size, and without a loop over the elements: the walk is a
sequence of evenly spaced runs (the innermost axis, once axes that walk as
one are merged), and what a run costs depends only on where its start falls
inside a unit. So the counts are sums over the residues ``start mod unit``
of how many runs start there (built axis by axis in ``O(unit)`` each, with
``itemsize`` and ``unit`` first divided by their gcd) times what a run
starting there costs (a closed form). Distinct units are the unit entries of
the sorted walk, which is again such a walk whenever the axes nest (each
stride, sorted, is larger than the reach of the smaller ones), as every view
made by slicing, transposing and broadcasting does. Only what is left is
counted over explicit positions: the block of axes that interleave or
overlap (e.g. overlapping sliding windows: their offsets sorted, or
a bitmap of their span, whichever is smaller), and warps longer than the
innermost run of a walk of several runs (walked in chunks, O(len)). A warp
shorter than the run that does not divide it is counted per phase of the
groups against the runs. Units larger than ``2**21`` times ``gcd(unit,
itemsize)`` bytes are counted over the positions as well, and so are walks of
at most 4,096 elements (it is faster).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd
from typing import TYPE_CHECKING

import numpy as np

from . import tuples as T
from .errors import InvalidShape

if TYPE_CHECKING:
    from .layout import Layout

__all__ = ["Cost", "walk_cost"]

# Residue histograms are dense arrays of unit/gcd(unit, itemsize) counts: bounded here.
_DENSE_LIMIT = 2**21
# Walks up to this many elements are counted over their positions (faster than the residues).
_SMALL = 4096
# Straddling warp groups are counted per (group phase, residue) while this stays small.
_STRADDLE_LIMIT = 2**24
# Elements per chunk when groups are counted over explicit positions.
_CHUNK = 2**20


@dataclass(frozen=True)
class Cost:
    """The cost of a layout's walk in memory units: see the module's docstring.

    Every count is an exact int. ``requests`` (the number of warp groups) and
    ``request_units`` (the distinct units summed over them) are None without
    a warp; ``units_per_request`` is their ratio (0.0 for an empty walk).

    >>> from candela import Layout, s
    >>> c = Layout((4, 16)).slice(s[:, ::2]).cost(4, unit=32)  # every other float32
    >>> c.units, c.unit_entries, c.bytes_moved, c.bytes_used
    (8, 8, 256, 128)
    """

    units: int
    unit_entries: int
    bytes_moved: int
    bytes_used: int
    units_per_request: float | None
    elements: int
    distinct_positions: int
    itemsize: int
    unit: int
    warp: int | None
    requests: int | None
    request_units: int | None

    @property
    def unit_name(self) -> str:
        """What a unit is called: "cache line" (64 bytes), "sector" (32), else "N-byte unit"."""
        return {64: "cache line", 32: "sector", 128: "128-byte line"}.get(
            self.unit, f"{self.unit}-byte unit"
        )

    def words(self) -> str:
        """The totals in one sentence.

        >>> from candela import Layout
        >>> Layout(12).cost(4, unit=16).words()
        'reads 12 elements from 3 16-byte units, entering units 3 times: 48 bytes moved for 48 used'
        """
        name = self.unit_name
        short = name.split()[-1]
        text = (
            f"reads {T.count(self.elements, 'element', 'elements')} from "
            f"{T.count(self.units, name, name + 's')}, entering {short}s "
            f"{T.count(self.unit_entries, 'time', 'times')}: {self.bytes_moved} bytes moved "
            f"for {self.bytes_used} used"
        )
        if self.warp is not None:
            text += (
                f"; a warp of {self.warp} touches {self.units_per_request:.1f} {short}s a request"
            )
        return text

    def __str__(self) -> str:
        return self.words()


def walk_cost(layout: Layout, itemsize: int, unit: int = 64, warp: int | None = None) -> Cost:
    """The `Cost` of walking `layout` with elements of `itemsize` bytes, in units of `unit` bytes.

    `itemsize` and `unit` are positive integers (any unit: 32, 64 and 128
    are the usual; a 4096-byte unit counts pages); `warp` is a positive
    integer or None. Anything else is `InvalidShape`, naming the value. An
    empty layout costs nothing: every count 0 (and ``units_per_request``
    0.0 with a warp). A byte position or a byte count outside int64 is
    refused (`InvalidShape`), as candela refuses any number outside int64.

    >>> from candela import Layout
    >>> walk_cost(Layout((2, 8)), 8).units, walk_cost(Layout((2, 8)).T, 8).unit_entries
    (2, 16)
    >>> walk_cost(Layout(4), 0)
    Traceback (most recent call last):
    ...
    candela.errors.InvalidShape: cost itemsize must be a positive integer (bytes per element), got 0
    """
    itemsize = _positive(itemsize, "cost itemsize", "bytes per element")
    unit = _positive(unit, "cost unit", "bytes per memory unit")
    if warp is not None:
        warp = _positive(warp, "cost warp", "elements read at once")
    if layout.len == 0:
        none = None if warp is None else 0
        return Cost(0, 0, 0, 0, None if warp is None else 0.0, 0, 0, itemsize, unit, warp,
                    none, none)  # fmt: skip
    _check_bytes(layout, itemsize)
    isz, u = _reduced(itemsize, unit)
    if layout.len <= _SMALL or u > _DENSE_LIMIT:
        counts = _direct(layout, isz, u, warp)
    else:
        counts = _closed(layout, isz, u, warp)
    return _make(layout, itemsize, unit, warp, *counts)


# -- arguments and ranges -----------------------------------------------------


def _positive(value: object, what: str, meaning: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidShape(
            f"{what} must be a positive integer ({meaning}), got {value!r}", value=value
        )
    v = T.as_int(value, what)
    if v < 1:
        raise InvalidShape(f"{what} must be a positive integer ({meaning}), got {v}", value=v)
    return v


def _check_bytes(layout: Layout, itemsize: int) -> None:
    lo, hi = T.position_bounds(layout.shape, layout.stride, layout.offset)
    for p in (lo, hi):
        if not T.in_int64(p * itemsize):
            raise InvalidShape(
                f"layout {layout} reaches position {p}: with {itemsize}-byte elements that is "
                f"byte {p * itemsize}, outside the int64 range {T.INT64_MIN}..{T.INT64_MAX}",
                layout=layout,
                value=p * itemsize,
            )


def _reduced(itemsize: int, unit: int) -> tuple[int, int]:
    """Item size and unit divided by their gcd: ``p * i // u`` is unchanged."""
    g = gcd(itemsize, unit)
    return itemsize // g, unit // g


def _make(layout, itemsize, unit, warp, units, entries, distinct, requests, request_units) -> Cost:
    moved, used = entries * unit, distinct * itemsize
    for name, v in (("bytes moved", moved), ("bytes used", used)):
        if not T.in_int64(v):
            raise InvalidShape(
                f"the walk of {layout} has {v} {name} (unit {unit}, itemsize {itemsize}), "
                f"outside the int64 range {T.INT64_MIN}..{T.INT64_MAX}",
                layout=layout,
                value=v,
            )
    per = None if warp is None else (request_units / requests if requests else 0.0)
    return Cost(units, entries, moved, used, per, layout.len, distinct, itemsize, unit, warp,
                requests, request_units)  # fmt: skip


# -- counting over explicit positions -------------------------------------------


def _unit_ids(pos: np.ndarray, isz: int, unit: int) -> np.ndarray:
    """Something equal exactly where ``pos * isz // unit`` is (``isz``, ``unit`` coprime).

    No int64 overflow: with ``isz >= unit`` the unit index is strictly
    increasing in the position, so the position itself will do.
    """
    if isz >= unit:
        return pos
    return (pos // unit) * isz + ((pos % unit) * isz) // unit


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    """The distinct values of `a`, sorted (by a sort: NumPy's `unique` can be far slower)."""
    out = np.sort(a)
    return out[np.concatenate(([True], out[1:] != out[:-1]))] if out.size else out


def _group_units(ids: np.ndarray, warp: int) -> int:
    """Distinct values summed over rows of `warp` consecutive ids (the last row may be shorter)."""
    full = ids.size // warp * warp
    total = 0
    if full:
        rows = np.sort(ids[:full].reshape(-1, warp), axis=1)
        total += rows.shape[0] + int(np.count_nonzero(rows[:, 1:] != rows[:, :-1]))
    if full < ids.size:
        total += int(_sorted_unique(ids[full:]).size)
    return total


def _direct(layout: Layout, isz: int, unit: int, warp: int | None):
    """All counts from `positions()` (memory: one int64 per element)."""
    pos = layout.positions()
    ids = _unit_ids(pos, isz, unit)
    entries = 1 + int(np.count_nonzero(ids[1:] != ids[:-1]))
    units = int(_sorted_unique(ids).size)
    distinct = int(_sorted_unique(pos).size)
    if warp is None:
        return units, entries, distinct, None, None
    return units, entries, distinct, -(-pos.size // warp), _group_units(ids, warp)


def _positions_range(shape, stride, offset: int, start: int, stop: int) -> np.ndarray:
    """Positions of the walk's elements ``start .. stop-1`` (row-major flat numbers)."""
    k = np.arange(start, stop, dtype=np.int64)
    pos = np.full(k.size, offset, dtype=np.int64)
    for n, st in zip(reversed(shape), reversed(stride)):
        k, i = np.divmod(k, n)
        pos += i * st
    return pos


# -- counting over residues ------------------------------------------------------


def _spread(x: np.ndarray, n: int, step: int, unit: int) -> np.ndarray:
    """``y[r] = sum(x[(r - i*step) % unit] for i in range(n))``: starts moved by 0..n-1 steps.

    O(unit): the multiples of `step` mod `unit` cycle with period ``P =
    unit / gcd``; ``n // P`` whole cycles add each coset's total, and the
    rest is a window sum along each cycle, taken from prefix sums.
    """
    s = step % unit
    g = gcd(s, unit)  # gcd(0, unit) = unit: every step lands on 0
    period = unit // g
    full, rem = divmod(n, period)
    idx = (np.arange(g)[:, None] + np.arange(period)[None, :] * s) % unit  # one cycle per row
    xr = x[idx]
    y = np.zeros_like(xr)
    if full:
        y += full * xr.sum(axis=1, keepdims=True)
    if rem:
        pre = np.zeros((g, period + 1), dtype=np.int64)
        np.cumsum(xr, axis=1, out=pre[:, 1:])
        j = np.arange(period)
        inside = j + 1 >= rem  # the window j-rem+1 .. j does not wrap
        back = np.where(inside, j + 1 - rem, 0)
        y += pre[:, j + 1] - pre[:, back]
        wrap = np.where(inside, period, period - (rem - j - 1))
        y += np.where(inside, 0, pre[:, [period]] - pre[:, wrap])
    out = np.empty(unit, dtype=np.int64)
    out[idx] = y
    return out


def _delta(r: int, unit: int) -> np.ndarray:
    x = np.zeros(unit, dtype=np.int64)
    x[r % unit] = 1
    return x


def _dot(a: np.ndarray, b: np.ndarray) -> int:
    # Exact: every product and sum is bounded by the number of elements (< 2**63).
    return int(np.dot(a, b))


def _run_changes(n: int, step: int, unit: int) -> np.ndarray:
    """Per start residue r: unit changes inside a run of n elements `step` bytes apart."""
    r = np.arange(unit, dtype=np.int64)
    if n <= 1 or step == 0:
        return np.zeros(unit, dtype=np.int64)
    if abs(step) >= unit:
        return np.full(unit, n - 1, dtype=np.int64)
    q, m = divmod((n - 1) * abs(step), unit)
    # Up: floor((r + q*unit + m) / unit); down: the boundaries crossed going below r.
    if step > 0:
        return q + (r >= unit - m).astype(np.int64)
    return q + (r < m).astype(np.int64)


def _block_changes(block: np.ndarray, unit: int) -> np.ndarray:
    """Per start residue r: unit changes inside the increasing byte offsets `block` moved by r.

    Two neighbours ``x < y`` fall in different units iff ``(r + x) % unit >=
    unit - (y - x)``: a cyclic interval of residues, added with a difference
    array (O(len(block) + unit)).
    """
    x, gaps = block[:-1], np.diff(block)
    always = int(np.count_nonzero(gaps >= unit))
    small = gaps < unit
    x, gaps = x[small], gaps[small]
    start = (unit - gaps - x) % unit
    diff = np.bincount(start, minlength=2 * unit + 1)[: 2 * unit + 1]
    diff -= np.bincount(start + gaps, minlength=2 * unit + 1)[: 2 * unit + 1]
    acc = np.cumsum(diff)[: 2 * unit]
    return acc[:unit] + acc[unit:] + always


def _leaves(delta: int, unit: int) -> np.ndarray:
    """Per residue r of an element: 1 where stepping `delta` bytes leaves its unit."""
    out = np.ones(unit, dtype=np.int64)
    lo, hi = max(0, -delta), min(unit, unit - delta)
    if lo < hi:
        out[lo:hi] = 0
    return out


def _walk_changes(start: int, outer, last: int, inner: np.ndarray, unit: int) -> int:
    """Unit changes of a walk of equal blocks: one block at each outer multi-index.

    `outer` is ``[(n, step), ...]`` outermost first (bytes), the blocks start at
    ``start + sum(i * step)`` in row-major order, each ends `last` bytes after
    its start, and ``inner[r]`` is the changes inside a block starting at
    residue r. Changes inside blocks, plus one per step between blocks that
    leaves the unit (per axis d that steps: the residue of the element left,
    and the delta the step adds).
    """
    prefix = [_delta(0, unit)]
    for n, step in outer:
        prefix.append(_spread(prefix[-1], n, step, unit))
    total = _dot(np.roll(prefix[-1], start % unit), inner)
    tail = last  # bytes from a block's start to the walk's element left by axis d's step
    for d in range(len(outer) - 1, -1, -1):
        n, step = outer[d]
        ends = np.roll(_spread(prefix[d], n - 1, step, unit), (start + tail) % unit)
        total += _dot(ends, _leaves(step - tail, unit))
        tail += (n - 1) * step
    return total


def _closed(layout: Layout, isz: int, unit: int, warp: int | None):
    """All counts over residues (see the module's docstring); O(rank**2 * unit) memory-light."""
    shape, stride = T.coalesce(layout.shape, layout.stride)
    start = layout.offset * isz
    outer = [(n, st * isz) for n, st in zip(shape[:-1], stride[:-1])]
    n, step = shape[-1], stride[-1] * isz
    changes = _run_changes(n, step, unit)
    entries = 1 + _walk_changes(start, outer, (n - 1) * step, changes, unit)
    units, distinct = _distinct(layout, isz, unit)
    if warp is None:
        return units, entries, distinct, None, None
    requests, request_units = _requests(layout, shape, stride, isz, unit, warp, units)
    return units, entries, distinct, requests, request_units


def _distinct(layout: Layout, isz: int, unit: int) -> tuple[int, int]:
    """Distinct units and distinct positions: the entries of the sorted walk, where the axes nest.

    Broadcast (stride 0) and size-1 axes add no position; a negative stride
    reads the same positions as its positive; sorted by stride, an axis
    whose stride exceeds the reach of all smaller ones puts its copies of
    them side by side, in order. The smaller axes up to the last that fails
    this form one block, counted explicitly (`_block_offsets`).
    """
    lo, _ = T.position_bounds(layout.shape, layout.stride, layout.offset)
    axes = sorted((abs(st), n) for n, st in zip(layout.shape, layout.stride) if n > 1 and st)
    if not axes:
        return 1, 1
    reach, last_fail = 0, -1
    for k, (t, n) in enumerate(axes):
        if t <= reach:
            last_fail = k
        reach += t * (n - 1)
    if last_fail < 0:  # every axis nests: the smallest stride is an evenly spaced run
        t, n = axes[0]
        changes, last, count = _run_changes(n, t * isz, unit), (n - 1) * t * isz, n
    else:
        block = _block_offsets(axes[: last_fail + 1]) * isz
        changes, last, count = _block_changes(block, unit), int(block[-1]), block.size
    outer = [(n, t * isz) for t, n in reversed(axes[max(last_fail, 0) + 1 :])]
    count *= T.prod([n for n, _ in outer])
    return 1 + _walk_changes(lo * isz, outer, last, changes, unit), count


def _block_offsets(axes) -> np.ndarray:
    """The distinct ``sum(i * t)`` of axes ``[(t, n), ...]`` (t > 0), sorted.

    By sorting the sums when they are fewer than their span, else by
    dilating a bitmap of the span axis by axis (O(span) each).
    """
    elements = T.prod([n for _, n in axes])
    span = 1 + sum(t * (n - 1) for t, n in axes)
    if elements <= span:
        sums = np.zeros(1, dtype=np.int64)
        for t, n in axes:
            sums = np.add.outer(np.arange(n, dtype=np.int64) * t, sums).reshape(-1)
        return _sorted_unique(sums)
    seen = np.zeros(span, dtype=bool)
    seen[0] = True
    for t, n in axes:
        rows = -(-span // t)
        grid = np.zeros(rows * t, dtype=bool)
        grid[:span] = seen
        pre = np.zeros((rows + 1, t), dtype=np.int64)
        np.cumsum(grid.reshape(rows, t), axis=0, out=pre[1:])
        j = np.arange(rows)
        seen = ((pre[j + 1] - pre[np.maximum(j + 1 - n, 0)]) > 0).reshape(-1)[:span]
    return np.flatnonzero(seen).astype(np.int64)


def _requests(layout, shape, stride, isz: int, unit: int, warp: int, units: int):
    """``(groups, distinct units summed over them)`` for groups of `warp` walk elements.

    Over residues when each group is one stretch of an innermost run (the
    warp divides the run, or the walk is a single run); one group holding
    the whole walk touches `units`; otherwise over positions, in chunks.
    """
    total_n = layout.len
    if warp >= total_n:
        return 1, units
    n, step = shape[-1], stride[-1] * isz
    start = layout.offset * isz
    per_group = 1 + _run_changes(warp, step, unit)  # a run is monotone: distinct = 1 + changes
    if n % warp == 0:
        x = _delta(start, unit)
        for m, st in zip(shape[:-1], stride[:-1]):
            x = _spread(x, m, st * isz, unit)
        x = _spread(x, n // warp, warp * step, unit)
        return total_n // warp, _dot(x, per_group)
    if len(shape) == 1:
        groups, rem = divmod(n, warp)
        total = _dot(_spread(_delta(start, unit), groups, warp * step, unit), per_group)
        if rem:
            total += 1 + int(_run_changes(rem, step, unit)[(start + groups * warp * step) % unit])
        return groups + (1 if rem else 0), total
    if warp < n and warp // gcd(n, warp) * unit * warp <= _STRADDLE_LIMIT:
        return _straddling(layout, shape, stride, isz, unit, warp)
    chunk = max(_CHUNK // warp, 1) * warp
    total = 0
    for a in range(0, total_n, chunk):
        pos = _positions_range(shape, stride, layout.offset, a, min(a + chunk, total_n))
        total += _group_units(_unit_ids(pos, isz, unit), warp)
    return -(-total_n // warp), total


def _spread2(x: np.ndarray, n: int, shift: tuple[int, int]) -> np.ndarray:
    """``sum(roll(x, i * shift) for i in range(n))`` over both axes, by doubling (O(log n) rolls)."""
    acc = np.zeros_like(x)
    block, size, done = x, 1, 0  # block: the sum of `size` consecutive shifts
    while n:
        if n & 1:
            acc += np.roll(block, (done * shift[0], done * shift[1]), axis=(0, 1))
            done += size
        n >>= 1
        if n:
            block = block + np.roll(block, (size * shift[0], size * shift[1]), axis=(0, 1))
            size *= 2
    return acc


def _straddling(layout, shape, stride, isz: int, unit: int, warp: int):
    """Warp groups over runs longer than the warp that it does not divide.

    Run ``j`` starts at walk element ``j * n``, so which groups lie inside it
    and where a group crosses into the next run depend on ``j mod p`` (``p =
    warp / gcd(n, warp)``) alone. Runs are counted by (``j mod p``, start
    residue), and so are the steps between runs for each axis that steps;
    the groups inside runs are evenly spaced stretches (closed form), and a
    group crossing into the next run is counted once per such state, over its
    `warp` offsets.
    """
    n, step = shape[-1], stride[-1] * isz
    start = layout.offset * isz
    outer = [(m, st * isz) for m, st in zip(shape[:-1], stride[:-1])]
    period = warp // gcd(n, warp)
    runs_after = [T.prod([m for m, _ in outer[k + 1 :]]) for k in range(len(outer))]
    base = np.zeros((period, unit), dtype=np.int64)
    base[0, start % unit] = 1
    prefix = [base]
    for (m, st), after in zip(outer, runs_after):
        prefix.append(_spread2(prefix[-1], m, (after % period, st % unit)))
    per_group = 1 + _run_changes(warp, step, unit)
    total = 0
    for jm in range(period):  # groups inside runs: they start (-j*n) % warp into the run
        first = (-jm * n) % warp
        inside = (n - first) // warp
        if inside:
            y = np.roll(_spread(prefix[-1][jm], inside, warp * step, unit), (first * step) % unit)
            total += _dot(y, per_group)
    count = layout.len
    last = count % warp
    if last:  # the walk's last, shorter group: inside the last run
        index, flat = [], count - last
        for m in reversed(shape):
            flat, i = divmod(flat, m)
            index.append(i)
        pos = layout.offset + sum(i * st for i, st in zip(reversed(index), stride))
        total += 1 + int(_run_changes(last, step, unit)[(pos * isz) % unit])
    residues = np.arange(unit, dtype=np.int64)[:, None]
    tail = (n - 1) * step  # bytes from a run's start to the element a step of axis d leaves
    for d in range(len(outer) - 1, -1, -1):
        m, st = outer[d]
        ends = np.zeros((period, unit), dtype=np.int64)
        ends[runs_after[d] % period, (start + tail) % unit] = 1  # the next run's j, the residue
        for k in range(d):
            ends = _spread2(ends, outer[k][0], (runs_after[k] % period, outer[k][1] % unit))
        ends = _spread2(ends, m - 1, (runs_after[d] % period, st % unit))
        for jm in range(period):
            before = (jm * n) % warp  # elements of the crossing group in the run left
            if before == 0 or not ends[jm].any():
                continue
            offsets = np.concatenate(
                [
                    (np.arange(before, dtype=np.int64) - (before - 1)) * step,
                    (st - tail) + np.arange(warp - before, dtype=np.int64) * step,
                ]
            )
            ids = np.sort((residues + offsets[None, :]) // unit, axis=1)
            distinct = 1 + np.count_nonzero(ids[:, 1:] != ids[:, :-1], axis=1)
            total += _dot(ends[jm], distinct)
        tail += (m - 1) * st
    return -(-count // warp), total
