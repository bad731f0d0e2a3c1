"""Benchmarks for candela: each figure measured side by side with its reference in one run.

1. ``Layout.positions()`` against NumPy's ``as_strided(np.arange(n), ...).ravel()``
   at 10^4, 10^6 and 10^7 elements, for a contiguous, a transposed, a
   sliced-with-step and a broadcast layout; with the ratio and the peak memory
   of ``positions()`` relative to its output.
2. The adj_stride walk (``strided_indices``) against a naive walk that
   recomputes ``offset + sum(i * stride)`` per element, both pure Python, with
   the ratio and the multiplications each does per element.
3. ``Tensor.as_contiguous()`` against ``np.ascontiguousarray``.

Run: ``python benchmarks/bench_candela.py [--quick]``. Figures are medians of
several repeats; the machine is shared, so read the ratios, not the absolutes.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import statistics
import sys
import time
import tracemalloc

import numpy as np
from numpy.lib.stride_tricks import as_strided

from candela import Layout, Tensor, s


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def peak_bytes(fn) -> tuple[int, object]:
    tracemalloc.start()
    tracemalloc.reset_peak()
    out = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, out


def buffer_len(layout: Layout) -> int:
    lo = hi = layout.offset
    for n, st in zip(layout.shape, layout.stride):
        if st < 0:
            lo += st * (n - 1)
        else:
            hi += st * (n - 1)
    return hi + 1


def numpy_positions(layout: Layout) -> np.ndarray:
    """The reference: NumPy's strided view of an arange, flattened in logical order."""
    base = np.arange(buffer_len(layout), dtype=np.int64)
    view = as_strided(base[layout.offset :], layout.shape, tuple(8 * st for st in layout.stride))
    return view.ravel()


def layouts_of(n: int) -> dict[str, Layout]:
    cols = 1000
    rows = n // cols
    return {
        "contiguous": Layout((rows, cols)),
        "transposed": Layout((cols, rows)).transpose(),
        "sliced ::2, ::-2": Layout((2 * rows, 2 * cols)).slice(s[::2, ::-2]),
        "broadcast": Layout((cols,)).broadcast((rows, cols)),
    }


def bench_positions(sizes: list[int]) -> list[str]:
    lines = [
        "| elements | layout | positions() ms | NumPy ms | ratio | peak / output |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    for n in sizes:
        repeats = 15 if n <= 10**6 else 5
        for name, layout in layouts_of(n).items():
            assert np.array_equal(layout.positions(), numpy_positions(layout))
            ours = median_time(layout.positions, repeats)
            theirs = median_time(lambda: numpy_positions(layout), repeats)
            peak, out = peak_bytes(layout.positions)
            lines.append(
                f"| {n:,} | {name} | {ours * 1e3:.2f} | {theirs * 1e3:.2f} | "
                f"{ours / theirs:.2f}x | {peak / out.nbytes:.2f} |"
            )
            print(lines[-1], flush=True)
    return lines


def naive_walk(layout: Layout):
    """Recompute the whole position for every element: rank multiplies each."""
    offset, stride = layout.offset, layout.stride
    for idx in itertools.product(*(range(n) for n in layout.shape)):
        yield offset + sum(i * st for i, st in zip(idx, stride))


def bench_walk(n: int) -> list[str]:
    lines = [
        "| layout | elements | rank | adj_stride walk ms | naive walk ms | ratio naive/adj | multiplies per element (adj / naive) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    print("\n".join(lines), flush=True)
    cases = {
        "contiguous (50, 40, n/2000)": Layout((50, 40, n // 2000)),
        "transposed (n/2000, 40, 50)": Layout((50, 40, n // 2000)).transpose(),
        "sliced + flipped, rank 4": Layout((10, 10, 20, n // 1000)).slice(s[::2, :, ::-1]),
    }
    for name, layout in cases.items():
        assert list(layout.strided_indices()) == list(naive_walk(layout))
        adj = median_time(lambda: sum(1 for _ in layout.strided_indices()), 5)
        naive = median_time(lambda: sum(1 for _ in naive_walk(layout)), 5)
        lines.append(
            f"| {name} | {layout.len:,} | {layout.rank} | {adj * 1e3:.1f} | {naive * 1e3:.1f} | "
            f"{naive / adj:.2f}x | 0 / {layout.rank} ({layout.rank * layout.len:,} in all) |"
        )
        print(lines[-1], flush=True)
    return lines


def bench_as_contiguous(sizes: list[int]) -> list[str]:
    lines = [
        "| elements | source | as_contiguous ms | np.ascontiguousarray ms | ratio |",
        "|---:|---|---:|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    for n in sizes:
        t = Tensor.from_numpy(np.arange(n, dtype=np.float64).reshape(1000, n // 1000))
        for name, src in {"transposed": t.transpose(), "sliced ::-2": t.slice(s[:, ::-2])}.items():
            arr = src.to_numpy()
            assert np.array_equal(src.as_contiguous().to_numpy(), np.ascontiguousarray(arr))
            ours = median_time(src.as_contiguous, 7)
            theirs = median_time(lambda: np.ascontiguousarray(arr), 7)
            lines.append(
                f"| {n:,} | {name} | {ours * 1e3:.2f} | {theirs * 1e3:.2f} | {ours / theirs:.2f}x |"
            )
            print(lines[-1], flush=True)
    return lines


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, NumPy {np.__version__}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    args = parser.parse_args(argv)
    sizes = [10**4, 10**5] if args.quick else [10**4, 10**6, 10**7]
    print(f"machine: {machine()}\ndate: {time.strftime('%Y-%m-%d')}\n")
    print("## positions() against NumPy's as_strided(np.arange(n)).ravel()\n")
    bench_positions(sizes)
    print("\n## adj_stride walk against the naive walk (pure Python)\n")
    bench_walk(2 * 10**4 if args.quick else 2 * 10**5)
    print("\n## as_contiguous against np.ascontiguousarray\n")
    bench_as_contiguous([10**4, 10**5] if args.quick else [10**6, 10**7])


if __name__ == "__main__":
    main()
