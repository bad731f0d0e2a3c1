"""Benchmark the kernel's time to display an explorer in a notebook, against a plain Bokeh pane.

Prints figures; it is not a test with a time limit (these machines are shared
and noisy). A real kernel (this venv's Python, through jupyter_client) builds
each display's bundle the way a notebook front end asks for it, as the value
of a cell: an ``explorer.Explorer(shape=(3, 4))`` and, as the reference, a
``pn.pane.Bokeh`` of a figure with 12 rectangles. The two alternate, run after
run, in the same kernel; the first display of the session (Panel's extension
loaded with it) is reported on its own. The goal: an explorer within 3x the
plain pane (medians), the first display within 1 s. It measures the kernel
only: the browser's drawing time comes on top of it. Run:
``.venv/bin/python benchmarks/bench_notebook_display.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
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
    start = time.perf_counter()
    obj = make()
    get_ipython().display_formatter.format(obj)  # what a cell's value costs the kernel
    return time.perf_counter() - start
"""


def run(client, code: str) -> str:
    """Execute ``code``; return what it printed (raises on an error)."""
    out = []
    reply = client.execute_interactive(
        code,
        timeout=300,
        output_hook=lambda msg: (
            out.append(msg["content"].get("text", "")) if msg["msg_type"] == "stream" else None
        ),
    )
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{reply['content'].get('ename')}: {reply['content'].get('evalue')}")
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    # A kernelspec for this Python, in a temporary JUPYTER_PATH (the user's is untouched).
    home = Path(tempfile.mkdtemp(prefix="candela-bench-"))
    spec = home / "kernels" / "candela-bench"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(json.dumps({"argv": argv, "language": "python",
                                                        "display_name": "bench"}))  # fmt: skip
    os.environ["JUPYTER_PATH"] = str(home)
    manager, client = start_new_kernel(kernel_name="candela-bench")
    try:
        run(client, SETUP)
        first = json.loads(run(client, "print(timed(lambda: explorer.Explorer(shape=(3, 4))))"))
        explorer_times, plain_times = [], []
        for _ in range(args.runs):
            explorer_times.append(
                float(run(client, "print(timed(lambda: explorer.Explorer(shape=(3, 4))))"))
            )
            plain_times.append(float(run(client, "print(timed(plain))")))
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    e, p = statistics.median(explorer_times), statistics.median(plain_times)
    print(f"kernel time to display, median of {args.runs} runs each, alternating:")
    print(f"  first explorer of the session   {first * 1000:8.1f} ms   (goal <= 1000 ms)")
    print(f"  explorer                        {e * 1000:8.1f} ms")
    print(f"  pn.pane.Bokeh, 12 rectangles    {p * 1000:8.1f} ms")
    print(f"  ratio                           {e / p:8.1f} x   (goal <= 3 x)")


if __name__ == "__main__":
    main()
