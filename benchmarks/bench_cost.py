"""The cost model (`Layout.cost`) beside the time a real read in the walk's order takes.

For each view of one large float32 matrix (4096 x 4096, 64 MiB: larger than
the last-level cache), the copy ``np.copyto(dst, view)`` into a C-contiguous
``dst`` is timed. NumPy orders a copy by its destination, so the source is
read in the view's logical order: the walk `Layout.cost` counts. Printed
beside the model's figures (never fitted to them):

- cache lines (64 bytes) entered per element: ``unit_entries / elements``;
- 4 KiB pages entered per element (the same model with ``unit=4096``: a
  hint of what the TLB sees);
- bytes moved / bytes used;
- the measured time per element, relative to the contiguous copy's.

Each round times every view once, in turn (so a slow spell of the shared
machine hits them all alike), after one untimed warm-up round; the figure
is the median over the rounds. ``dst`` is allocated and touched before
timing, so page faults are not timed.

Run: ``python benchmarks/bench_cost.py [--quick] [--rounds N] [--size N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from bench_candela import machine

from candela import Tensor


def views(a: np.ndarray) -> list[tuple[str, np.ndarray]]:
    n = a.shape[0]
    out = [
        ("contiguous", a),
        ("rows reversed a[::-1]", a[::-1]),
        ("columns reversed a[:, ::-1]", a[:, ::-1]),
        ("transposed a.T", a.T),
    ]
    out += [(f"a[:, ::{k}]", a[:, ::k]) for k in (2, 4, 8, 16, 32, 64)]
    out += [
        ("16 columns a[:, :16]", a[:, :16]),
        ("a[::2] (every other row)", a[::2]),
        ("a[::16].T (columns of 256 rows)", a[::16].T),
        ("broadcast row a[0] to (n, n)", np.broadcast_to(a[0], (n, n))),
    ]
    return out


def time_copies(pairs, rounds: int) -> list[float]:
    dsts = [np.ones(v.shape, dtype=v.dtype) for _, v in pairs]  # touched: no page faults timed
    times: list[list[float]] = [[] for _ in pairs]
    for r in range(rounds + 1):
        order = range(len(pairs)) if r % 2 else reversed(range(len(pairs)))
        for i in order:
            view, dst = pairs[i][1], dsts[i]
            t0 = time.perf_counter()
            np.copyto(dst, view)
            elapsed = time.perf_counter() - t0
            if r:  # round 0 warms up
                times[i].append(elapsed)
    return [statistics.median(t) for t in times]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1024 x 1024, 3 rounds (a smoke run)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--size", type=int, default=4096)
    args = parser.parse_args(argv)
    n, rounds = (1024, 3) if args.quick else (args.size, args.rounds)
    a = np.arange(n * n, dtype=np.float32).reshape(n, n)
    pairs = views(a)
    print(f"machine: {machine()}\ndate: {time.strftime('%Y-%m-%d')}")
    print(f"source: {n} x {n} float32 ({a.nbytes / 2**20:.0f} MiB); median of {rounds} rounds\n")
    medians = time_copies(pairs, rounds)
    base = medians[0] / a.size
    print(
        "| view | elements | lines entered / element | pages entered / element "
        "| bytes moved / used | ns / element | time / element vs contiguous |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for (name, view), t in zip(pairs, medians):
        tensor = Tensor.from_numpy(view)
        lines, pages = tensor.cost(), tensor.cost(unit=4096)
        per = t / view.size
        print(
            f"| {name} | {view.size:,} | {lines.unit_entries / view.size:.4f} "
            f"| {pages.unit_entries / view.size:.4f} "
            f"| {lines.bytes_moved / lines.bytes_used:.2f} | {per * 1e9:.2f} "
            f"| {per / base:.2f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
