"""Benchmark the kernel's time to display an explorer in a notebook, against a plain Bokeh pane.

Prints figures; it is not a test with a time limit (these machines are shared
and noisy). A real kernel (this venv's Python, through jupyter_client) builds
each display's bundle the way a notebook front end asks for it, as the value
of a cell: an ``explorer.Explorer(shape=(3, 4))`` and, as the reference, a
``pn.pane.Bokeh`` of a figure with 12 rectangles. The two alternate, run after
run, in the same kernel; the first display of the session (Panel's extension
loaded with it) is reported on its own. The goal: an explorer within 3x the
plain pane (medians), the first display within 1 s. It measures the kernel
only: the browser's drawing time comes on top of it. Each figure is given as wall
time and as the kernel's CPU time (less disturbed by other work on a shared machine).
``--against DIR`` runs a second kernel in another checkout (with its ``.venv``), in the
same alternation, to compare two versions side by side. Run:
``.venv/bin/python benchmarks/bench_notebook_display.py [--runs N] [--against DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from jupyter_client.manager import start_new_kernel

SETUP = """
import time
import panel as pn
from bokeh.plotting import figure
import explorer

def plain():
    fig = figure(width=300, height=200, toolbar_location=None)
    fig.rect(x=[i % 4 for i in range(12)], y=[i // 4 for i in range(12)], width=0.9, height=0.9)
    return pn.pane.Bokeh(fig)

def timed(make):
    start, cpu = time.perf_counter(), time.process_time()
    obj = make()
    get_ipython().display_formatter.format(obj)  # what a cell's value costs the kernel
    return [time.perf_counter() - start, time.process_time() - cpu]
"""

EXPLORER = "print(timed(lambda: explorer.Explorer(shape=(3, 4))))"
PLAIN = "print(timed(plain))"


def run(client, code: str) -> str:
    """Execute ``code``; return what it printed (raises on an error)."""
    out = []
    reply = client.execute_interactive(
        code,
        timeout=300,
        output_hook=lambda msg: (
            out.append(msg["content"].get("text", ""))
            if msg["msg_type"] == "stream" and msg["content"].get("name") == "stdout"
            else None  # (a patch left off on another release says so on stderr)
        ),
    )
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{reply['content'].get('ename')}: {reply['content'].get('evalue')}")
    return "".join(out)


ROOT = Path(__file__).resolve().parents[1]


def start_kernel(home: Path, checkout: Path):
    """A kernel in ``checkout`` (its ``explorer``, its venv's Python), from a kernelspec in
    ``home`` (a temporary JUPYTER_PATH)."""
    python = str(checkout / ".venv" / "bin" / "python")
    name = f"candela-bench-{len(list(home.glob('kernels/*')))}"
    spec = home / "kernels" / name
    spec.mkdir(parents=True)
    argv = [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(json.dumps({"argv": argv, "language": "python",
                                                        "display_name": "bench"}))  # fmt: skip
    # The kernel's working directory comes first on its sys.path: its checkout's explorer.
    return start_new_kernel(kernel_name=name, cwd=str(checkout))


def report(label: str, first: list, explorer_times: list, plain_times: list) -> None:
    print(f"{label}: kernel time to display, median of {len(plain_times)} runs each, alternating")
    for i, kind in enumerate(("wall", "CPU")):
        e = statistics.median(t[i] for t in explorer_times)
        p = statistics.median(t[i] for t in plain_times)
        print(f"  {kind}: first explorer of the session {first[i] * 1000:7.1f} ms (goal <= 1000 ms)"
              f"   explorer {e * 1000:6.1f} ms   pn.pane.Bokeh, 12 rectangles {p * 1000:6.1f} ms"
              f"   ratio {e / p:4.1f} x (goal <= 3 x)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--against", type=Path, help="another checkout, measured alongside")
    args = parser.parse_args()
    # Kernelspecs in a temporary JUPYTER_PATH (the user's is untouched).
    home = Path(tempfile.mkdtemp(prefix="candela-bench-"))
    os.environ["JUPYTER_PATH"] = str(home)
    checkouts = {"this checkout": ROOT}
    if args.against:
        checkouts[f"against {args.against}"] = args.against.resolve()
    kernels = {label: start_kernel(home, path) for label, path in checkouts.items()}
    try:
        times = {}
        for label, (_, client) in kernels.items():
            run(client, SETUP)
            times[label] = (json.loads(run(client, EXPLORER)), [], [])
        for _ in range(args.runs):
            for label, (_, client) in kernels.items():
                times[label][1].append(json.loads(run(client, EXPLORER)))
                times[label][2].append(json.loads(run(client, PLAIN)))
    finally:
        for manager, client in kernels.values():
            client.stop_channels()
            manager.shutdown_kernel(now=True)
    for label, (first, explorer_times, plain_times) in times.items():
        report(label, first, explorer_times, plain_times)


if __name__ == "__main__":
    main()
