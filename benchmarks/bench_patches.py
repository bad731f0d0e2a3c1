"""What each patch of ``explorer.patches`` buys: its own measure with the patch on and off.

Each configuration serves the app with the command line (``python -m explorer``)
in a process of its own: every patch on, or one patch off
(``CANDELA_PLAIN=<name>``), or all off (``CANDELA_PLAIN=1``). The rounds
alternate the configurations, so each pair is measured minutes apart at most,
and the table gives each patch's measure on, off and their ratio. A patch that
buys less than a tenth on its own measure (ratio above 0.9 for a speed-up) is a
candidate to remove; a fix (``inline_panes``,
``notebook_comm``) is measured by its test, not here.

Measures (WebSocket clients speaking Bokeh's protocol, as ``bench_load.py``; no browser):

- ``open``: the server's CPU to open a 64x64 page (GET, document pulled) taken from the
  pool of pages built ahead, where serializing the document is most of it
  (``lean_serialization``);
- ``edit``: an edit's round trip, Enter to the new columns in, and the server's CPU an
  edit (``one_write_per_message``);
- ``choice``: a choice in a list (the step list), the choice sent to its pane's new text
  in (``no_debounce``: Panel waits 50 ms for more changes of a list, not of the ops box);
- ``pool``: a GET of the page once the pool is full (``--ready 3``; ``pool_sessions``).

The browser patches (``steady``, ``cells``) are measured by
``bench_explorer.py``, which serves in its own process:
``CANDELA_PLAIN=cells python benchmarks/bench_explorer.py --quick`` against the same
without it; ``--browser`` here runs those pairs and prints their edit figures.

Run: ``.venv/bin/python benchmarks/bench_patches.py [--rounds 2] [--edits 20] [--browser]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from explorer.pipeline import parse  # noqa: E402
from explorer.testing import BokehClient, http_get, process_tree, wait_for_port  # noqa: E402

#: The pipeline whose steps are chosen in turn in the step list (``choice``).
STEPS = ".transpose()[1:]"

#: Each measured patch: the measure it is judged by, and whether lower is better.
OWN_MEASURE = {
    "lean_serialization": "open CPU ms",
    "no_debounce": "choice ms",
    "one_write_per_message": "edit CPU ms",
    "pool_sessions": "pool GET ms",
}
BROWSER_PATCHES = ("steady", "cells")
#: Patches whose CPU figure is within the noise here, kept for what a test shows they buy.
KEPT_FOR_A_TEST = {
    "one_write_per_message": "test_serving.py::"
    "test_the_answer_to_an_edit_is_sent_without_waiting_for_the_websocket",
}


def cpu_s(pid: int) -> float:
    """CPU seconds the process ``pid`` (the command) and its workers have run so far, all
    their threads (nanosecond counts)."""
    total = 0
    for each in process_tree(pid):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            for task in Path(f"/proc/{each}/task").iterdir():
                try:
                    total += int((task / "schedstat").read_text().split()[0])
                except (FileNotFoundError, ProcessLookupError):
                    continue  # a thread that ended meanwhile
    return total / 1e9


class Server:
    """The command line serving the app with ``plain`` as CANDELA_PLAIN, on a free port."""

    def __init__(self, plain: str, ready: int = 0) -> None:
        env = {**os.environ, "CANDELA_PLAIN": plain, "PYTHONUNBUFFERED": "1"}
        cmd = [sys.executable, "-m", "explorer", "--no-browser", "--port", "0"]
        self.proc = subprocess.Popen(
            [*cmd, "--ready", str(ready)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output: list[str] = []
        self.port = 0
        for line in self.proc.stdout:
            self.output.append(line)
            found = re.search(r"Candela Explorer: http://[^:]+:(\d+)/", line)
            if found:
                self.port = int(found.group(1))
                break
        if not self.port:
            raise RuntimeError("the server did not start:\n" + "".join(self.output))
        # Keep reading what it prints, so that it never waits on a full pipe.
        threading.Thread(target=lambda: self.output.extend(self.proc.stdout), daemon=True).start()
        wait_for_port(self.port, timeout=60)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


async def sessions(port: int, pid: int, opens: int, edits: int) -> dict:
    """Open ``opens`` pages (server CPU each), then time ``edits`` edits on one of them."""
    clients, opened = [], []
    for _ in range(opens):
        client = BokehClient(port)
        before = cpu_s(pid)
        await client.open("/?shape=64,64")
        opened.append((cpu_s(pid) - before) * 1000)
        clients.append(client)
    found = {"open CPU ms": statistics.median(opened)}
    if edits:
        client = clients[-1]
        await client.edit(".transpose()")  # warm, and back: the timed edits start from none
        await client.edit("")
        times = []
        before = cpu_s(pid)
        for i in range(edits):
            times.append(await client.edit("" if i % 2 else ".transpose()"))
        found["edit CPU ms"] = (cpu_s(pid) - before) * 1000 / edits
        found["edit ms"] = statistics.median(times)
        await client.edit(STEPS)
        steps = [str(i) for i, _ in enumerate(parse(STEPS), 1)]  # the list's values
        chosen = [await client.choose("candela-step-select", steps[i % 2]) for i in range(edits)]
        found["choice ms"] = statistics.median(chosen)
    for c in clients:
        await c.close()
    return found


def measure(plain: str, edits: int) -> dict:
    server = Server(plain)
    try:
        found = asyncio.run(sessions(server.port, server.proc.pid, 1, edits))
    finally:
        server.stop()
    server = Server(plain, ready=3)
    try:
        time.sleep(12)  # the pool fills once the server is quiet
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            http_get(server.port, "/?shape=64,64")
            times.append((time.perf_counter() - t0) * 1000)
        found["pool GET ms"] = statistics.median(times)
        time.sleep(12)  # full again: what a page from the pool costs to open
        opened = asyncio.run(sessions(server.port, server.proc.pid, 3, 0))
        found["open CPU ms"] = opened["open CPU ms"]
    finally:
        server.stop()
    return found


def browser_pairs() -> None:
    """bench_explorer.py --quick with each browser patch off, next to all on."""
    for name in ("", *BROWSER_PATCHES):
        env = {**os.environ, "CANDELA_PLAIN": name}
        out = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "bench_explorer.py"), "--quick"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        ).stdout
        lines = [ln for ln in out.splitlines() if re.search(r"edit|repaint|messages", ln)]
        print(f"--- {name or 'every patch on'} off ---" if name else "--- every patch on ---")
        print("\n".join(lines[-8:]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--browser", action="store_true", help="also the browser patches")
    args = parser.parse_args(argv)

    configs = {"on": "", **{name: name for name in OWN_MEASURE}, "all off": "1"}
    runs: dict[str, list[dict]] = {k: [] for k in configs}
    for r in range(args.rounds):
        for key, plain in configs.items():
            runs[key].append(measure(plain, args.edits))
            print(f"round {r + 1}: {key}: {runs[key][-1]}", file=sys.stderr, flush=True)

    def median(key: str, what: str) -> float:
        return statistics.median(run[what] for run in runs[key])

    print("| patch | its measure | on | off | on / off | buys a tenth or more |")
    print("|---|---|---:|---:|---:|---|")
    for name, what in OWN_MEASURE.items():
        on, off = median("on", what), median(name, what)
        ratio = on / off if off else float("nan")
        verdict = "yes" if ratio <= 0.9 else "**no**"
        if ratio > 0.9 and name in KEPT_FOR_A_TEST:
            verdict += f" (kept for {KEPT_FOR_A_TEST[name]})"
        print(f"| `{name}` | {what} | {on:.1f} | {off:.1f} | {ratio:.2f} | {verdict} |")
    print()
    measures = sorted({*OWN_MEASURE.values()})
    print("| every patch | " + " | ".join(measures) + " |")
    print("|---|" + "---:|" * len(measures))
    for key in ("on", "all off"):
        cells = " | ".join(f"{median(key, w):.1f}" for w in measures)
        print(f"| {key} | {cells} |")
    if args.browser:
        browser_pairs()
    return 0


if __name__ == "__main__":
    sys.exit(main())
