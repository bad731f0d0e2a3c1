"""Benchmark a led class: 30 students following a teacher, answering, on one or two servers.

Prints figures; not a test with a time limit (these machines are shared and
noisy). The explorer is served by the command line (``python -m explorer
--no-browser --class``) in subprocesses on 127.0.0.1; the class's links are read
from what it prints. Run: ``.venv/bin/python benchmarks/bench_class.py
[--students 30] [--rounds 5] [--only one|two]``.

The teacher and the students are WebSocket clients speaking Bokeh's protocol
(:class:`explorer.testing.BokehClient`: each GETs its page, pulls its document and
says it is drawn, as a browser does), not Chromium pages: 31 Chromium pages would
saturate the two cores and measure the browsers. A student "shows the step" when
its session's message changing the lesson header to the new step has arrived.

1. **Follow latency**: the teacher clicks ``next ▶`` (a click event on the teacher's
   session); for each student, the time until its page has the new step. Rounds
   of one click each; p50/p95/max over every student of every round.
2. **Answer-count latency**: the teacher opens the question; the students answer
   (a value in the answer box, then a click on ``check``): (a) one at a time, the
   time until the teacher's count includes it; (b) all at once, the time until
   the teacher's count reaches each k = 1..N.
3. **Memory**: the servers' resident memory (summed over each command's process
   and worker, from /proc) before the class and with the class connected.

Two setups: **one** server with the class in its process, and **two** servers
sharing a Redis (``--class-store``; a ``redis-server`` of its own on a free port),
the teacher on the first and the students split between both.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import html
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explorer.testing import (
    BokehClient,
    cpu_seconds,
    free_port,
    rss_mb,
    start_command,
    stop_command,
    tree_sum,
    wait_for_port,
    wait_for_url,
)

LESSON = "transpose"  # 5 steps: step 2 asks adj_stride[0] (-7)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = max(0, min(len(values) - 1, round(q * (len(values) - 1))))
    return values[k]


def summary(values: list[float]) -> str:
    return (
        f"p50 {pct(values, 0.5):6.0f} ms  p95 {pct(values, 0.95):6.0f} ms  "
        f"max {max(values):6.0f} ms  (n={len(values)})"
    )


def click_event(model_id: str) -> dict:
    values = {"type": "map", "entries": [["model", {"id": model_id}]]}
    event = {"type": "event", "name": "button_click", "values": values}
    return {"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": event}


class Page(BokehClient):
    """A class page: it keeps reading what its server sends and notes what it saw."""

    def __init__(self, port: int) -> None:
        super().__init__(port)
        self.seen_step: dict[int, float] = {}
        self.answered: dict[int, float] = {}
        self.reader: asyncio.Task | None = None

    def watch(self) -> None:
        self.reader = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        import re

        with contextlib.suppress(ConnectionError, asyncio.CancelledError):
            while True:
                header, content = await self.read()
                now = time.perf_counter()
                for event in content.get("events", []):
                    new = event.get("new")
                    if not isinstance(new, str):
                        continue
                    new = html.unescape(new)  # an HTML pane's text, escaped
                    for found in re.finditer(r"candela-lesson-step\">step (\d+) of", new):
                        self.seen_step.setdefault(int(found.group(1)), now)
                    for found in re.finditer(r'data-answered="(\d+)"', new):
                        self.answered.setdefault(int(found.group(1)), now)

    async def click(self, css: str) -> float:
        t0 = time.perf_counter()
        await self.send("PATCH-DOC", {"events": [click_event(self.model_id(css))]})
        return t0

    async def type_answer(self, text: str) -> float:
        box = self.model_id("candela-answer")
        change = {"kind": "ModelChanged", "model": {"id": box}, "attr": "value_input", "new": text}
        t0 = time.perf_counter()
        await self.send("PATCH-DOC", {"events": [change]})
        await self.send("PATCH-DOC", {"events": [click_event(self.model_id("candela-check"))]})
        return t0

    async def stop(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
        await self.close()


async def wait_until(check, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("the class did not get there in time")
        await asyncio.sleep(0.005)


async def open_page(port: int, path: str) -> Page:
    page = Page(port)
    await page.open(path)
    page.watch()
    return page


async def walkthrough(teacher_port, teacher_path, student_ports, student_path, n, rounds, pids):
    teacher = await open_page(teacher_port, teacher_path)
    students = []
    for i in range(n):  # a class arrives over a few seconds, not all in one instant
        students.append(await open_page(student_ports[i % len(student_ports)], student_path))
    await asyncio.sleep(1.0)
    follow: list[float] = []
    cpu0 = sum(tree_sum(cpu_seconds, pid) for pid in pids)
    # Rounds of next ▶ and ◀ previous between steps 1 and 2 (the lesson has 5).
    step = 1
    for r in range(rounds * 2):
        target = step + 1 if r % 2 == 0 else step - 1
        for page in [teacher, *students]:
            page.seen_step.pop(target, None)
        t0 = await teacher.click("candela-next" if target > step else "candela-prev")
        await wait_until(lambda: all(target in p.seen_step for p in students))
        follow += [(p.seen_step[target] - t0) * 1000 for p in students]
        step = target
        await asyncio.sleep(0.5)
    cpu = sum(tree_sum(cpu_seconds, pid) for pid in pids) - cpu0
    print(
        f"server CPU per student per step followed: {cpu * 1000 / (rounds * 2 * (n + 1)):.1f} ms "
        f"({cpu:.2f} s for {rounds * 2} steps, {n} students and the teacher)"
    )
    # At step 1, go to step 2 (a question), open it.
    if step != 2:
        await teacher.click("candela-next")
        await wait_until(lambda: all(2 in p.seen_step for p in students))
    await asyncio.sleep(0.5)
    await teacher.click("candela-class-open")
    await asyncio.sleep(0.5)
    # One at a time: each answer until the teacher's count says it.
    one: list[float] = []
    k = 0
    for page in students[: min(10, n)]:
        k += 1
        teacher.answered.pop(k, None)
        t0 = await page.type_answer("-7" if k % 3 else "4")
        await wait_until(lambda: k in teacher.answered)
        one.append((teacher.answered[k] - t0) * 1000)
        await asyncio.sleep(0.2)
    # All at once (those left; then everyone changes their answer: still n counted).
    rest = students[k:]
    burst: list[float] = []
    if rest:
        for j in range(k + 1, n + 1):
            teacher.answered.pop(j, None)
        starts = await asyncio.gather(*(p.type_answer("4") for p in rest))
        t0 = min(starts)
        await wait_until(lambda: n in teacher.answered)
        # (the teacher's page may go from 12 to 15 at once: its count is drawn per tick)
        seen = teacher.answered
        burst = [
            (min(t for c, t in seen.items() if c >= j) - t0) * 1000 for j in range(k + 1, n + 1)
        ]
    for page in [teacher, *students]:
        await page.stop()
    return follow, one, burst


def start_server(args: list[str], env=None):
    # No pages built ahead: a build (about 0.5 s of CPU) in a pause of the class would
    # land in the middle of a step's follow, and this measures the follow.
    proc = start_command(["--port", "0", "--ready", "0", *args], env=env)
    lines = wait_for_url(
        proc,
        timeout=120,
        until="  teacher's link" if "--class" in args else "Candela Explorer: http://",
    )
    return proc, lines


def read_links(lines: list[str]) -> tuple[int, str, str]:
    import re

    students = re.search(r"students open (http://\S+)", "".join(lines)).group(1)
    teacher = re.search(r"teacher's link, keep it secret: (http://\S+)", "".join(lines)).group(1)
    port = int(re.search(r":(\d+)/", students).group(1))
    return port, "/" + students.split("/", 3)[3], "/" + teacher.split("/", 3)[3]


def report(name: str, follow, one, burst, memory) -> dict:
    print(f"\n== {name}")
    print(f"follow (teacher's click -> a student's page has the step): {summary(follow)}")
    print(f"answer count, one at a time (a student's check -> the teacher's count): {summary(one)}")
    if burst:
        print(
            f"answer count, the rest at once (-> the teacher's count reaches each): {summary(burst)}"
        )
    for label, value in memory.items():
        print(f"memory {label}: {value:.0f} MB")
    return {
        "follow_p50": pct(follow, 0.5),
        "follow_p95": pct(follow, 0.95),
        "answer_one_p50": pct(one, 0.5),
        "answer_one_p95": pct(one, 0.95),
        "answer_burst_p95": pct(burst, 0.95) if burst else None,
        **{f"memory {k}": v for k, v in memory.items()},
    }


def run_one(n: int, rounds: int) -> dict:
    proc, lines = start_server(["--class"])
    try:
        port, student, teacher = read_links(lines)
        time.sleep(3)
        before = tree_sum(rss_mb, proc.pid)
        follow, one, burst = asyncio.run(
            walkthrough(port, teacher + f"&lesson={LESSON}", [port], student, n, rounds, [proc.pid])
        )
        during = tree_sum(rss_mb, proc.pid)
    except BaseException:
        print(stop_command(proc)[-3000:])
        raise
    finally:
        stop_command(proc)
    return report(
        f"one server, the class in its process: 1 teacher + {n} students",
        follow, one, burst, {"before the class": before, f"with {n + 1} pages": during},
    )  # fmt: skip


def run_two(n: int, rounds: int) -> dict | None:
    server = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not os.path.exists(server):
        print("\n(two servers: skipped, no redis-server)")
        return None
    rport = free_port()
    redis = subprocess.Popen(
        [server, "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{rport}/0"
    a = b = None
    try:
        wait_for_port(rport, timeout=60)
        a, lines = start_server(["--class", "--class-store", url])
        port_a, student, teacher = read_links(lines)
        port_b = free_port()
        b = start_command(["--port", str(port_b), "--ready", "0", "--class-store", url])
        wait_for_url(b, timeout=120)
        time.sleep(3)
        before = tree_sum(rss_mb, a.pid) + tree_sum(rss_mb, b.pid)
        follow, one, burst = asyncio.run(
            walkthrough(
                port_a,
                teacher + f"&lesson={LESSON}",
                [port_a, port_b],
                student,
                n,
                rounds,
                [a.pid, b.pid],
            )  # fmt: skip
        )
        during = tree_sum(rss_mb, a.pid) + tree_sum(rss_mb, b.pid)
        redis_mb = rss_mb(redis.pid)
    finally:
        for proc in (a, b):
            if proc is not None:
                stop_command(proc)
        redis.terminate()
        redis.wait(10)
    return report(
        f"two servers sharing Redis: the teacher on one, {n} students split between both",
        follow, one, burst,
        {"before the class (both servers)": before, f"with {n + 1} pages (both)": during,
         "redis-server": redis_mb},
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5, help="next/previous pairs")
    parser.add_argument("--only", choices=["one", "two"], default=None)
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; {args.students} students; {args.rounds * 2} steps followed")
    out = {}
    if args.only in (None, "one"):
        out["one"] = run_one(args.students, args.rounds)
    if args.only in (None, "two"):
        out["two"] = run_two(args.students, args.rounds)
    if out.get("one") and out.get("two"):
        ratio = out["two"]["follow_p95"] / out["one"]["follow_p95"]
        print(f"\nfollow p95, two servers over one: {ratio:.2f}")
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
