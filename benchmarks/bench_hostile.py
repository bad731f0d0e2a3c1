"""Benchmark one hostile connection against a class server: its memory and a student's edits.

Prints figures; it is not a test with a time limit (these machines are shared and
noisy). Serves the command (``python -m explorer --no-browser``) on 127.0.0.1 and
measures, in alternating phases of one run:

- **quiet**: one student edits (a raw Bokeh client, as ``bench_load.py``'s), p50/p95;
- **under attack**: the same student's edits while a hostile client does one of
  - ``buffers``: declares ``num_buffers: 10**9`` and sends 60 KB binary frames
    (each under a frame's limit): before the bound, Bokeh kept every frame;
  - ``flood``: sends cheap requests (``SERVER-INFO-REQ``) as fast as it can,
    never reading the answers;
  - ``pulls``: asks for its whole 64x64 document again and again (~50 ms of the
    server's CPU each);
  - ``pages``: GETs the 64x64 page again and again from 16 connections at once,
    never opening its WebSocket (each page a session built, ~50 ms of CPU): the
    server runs ``--behind-proxy`` and each request names its address in
    ``X-Real-IP``, as the proxy in ``docs/classroom.md`` does, so the hostile address
    meets the page budget (60 at once, then one a second) and the student's does not.
    Its "closed after" is when its first request was refused (429).

For each attack: the worker's memory before and after (from ``/proc``, the command's
process tree), whether and when the hostile connection was closed, the student's p95
over quiet (goal: within 1.5x) and the memory grown (goal: within 20 MB). The load of
the machine is printed with the figures. Run:
``.venv/bin/python benchmarks/bench_hostile.py [--rounds N] [--attack-s S]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time

from explorer.testing import (
    BokehClient,
    free_port,
    rss_mb,
    run_in_thread,
    start_command,
    stop_command,
    tree_sum,
    wait_for_url,
)

OPS = [".transpose()", ".T[1:]", ".transpose()[:, ::2]", ".flip(0)", ".T.flip(1)"]


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def student_edits(student: BokehClient, n: int) -> list[float]:
    times = []
    for i in range(n):
        times.append(await student.edit(OPS[i % len(OPS)]))
        await asyncio.sleep(0.2)
    return times


HOSTILE_ADDRESS = "203.0.113.66"  # a documentation address (RFC 5737)
PAGE_CONNECTIONS = 16  # the ``pages`` attack's connections at once


def _get_pages(port: int, until: float, found: dict) -> None:
    # One of the ``pages`` attack's connections: GET the page until the time is up.
    import http.client

    started = time.monotonic()
    while time.monotonic() < until:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            conn.request("GET", "/?shape=64,64", headers={"X-Real-IP": HOSTILE_ADDRESS})
            status = conn.getresponse().status
        except OSError:
            status = 0
        finally:
            conn.close()
        found.setdefault("answers", []).append(status)
        if status == 429 and found.get("closed_after_s") is None:
            found["closed_after_s"] = round(time.monotonic() - started, 1)


async def attack(kind: str, port: int, seconds: float, found: dict) -> None:
    if kind == "pages":
        # Threads of its own: the loop's default pool has min(32, cores + 4) (6 here), and
        # the rest would start only as the first ones end, each for its own time again.
        from concurrent.futures import ThreadPoolExecutor

        found["closed_after_s"] = None
        until = time.monotonic() + seconds
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(PAGE_CONNECTIONS) as pool:
            await asyncio.gather(
                *(
                    loop.run_in_executor(pool, _get_pages, port, until, found)
                    for _ in range(PAGE_CONNECTIONS)
                )
            )
        return
    hostile = BokehClient(port)
    await hostile.open("/?shape=64,64")
    started = time.monotonic()
    found["closed_after_s"] = None

    async def drain() -> None:
        try:
            while True:
                await hostile._frame()
        except Exception:
            found["closed_after_s"] = round(time.monotonic() - started, 1)

    reader = asyncio.ensure_future(drain())
    try:
        if kind == "buffers":
            header = {"msgid": "h1", "msgtype": "PATCH-DOC", "num_buffers": 10**9}
            for part in (header, {}, {"events": []}):
                await hostile.ws.write_message(json.dumps(part))
            chunk = b"\0" * 60_000
            i = 0
            while time.monotonic() - started < seconds and not reader.done():
                await hostile.ws.write_message(json.dumps({"id": str(i)}))
                await hostile.ws.write_message(chunk, binary=True)
                i += 1
                if i % 50 == 0:
                    await asyncio.sleep(0)
        else:
            msgtype = "SERVER-INFO-REQ" if kind == "flood" else "PULL-DOC-REQ"
            while time.monotonic() - started < seconds and not reader.done():
                await hostile.send(msgtype, {})
                await asyncio.sleep(0.001)
    except Exception:
        pass  # closed by the server
    finally:
        await asyncio.sleep(0.5)
        reader.cancel()
        await hostile.close()


async def measure(port: int, pid: int, kinds: list[str], rounds: int, seconds: float) -> dict:
    student = BokehClient(port)
    await student.open("/?shape=32,32")
    await student_edits(student, 5)  # warm
    figures: dict = {"quiet": []}
    for kind in kinds:
        figures[kind] = {"edits": [], "grown_mb": [], "closed_after_s": []}
    for _ in range(rounds):
        figures["quiet"] += await student_edits(student, 15)
        for kind in kinds:
            before = tree_sum(rss_mb, pid)
            found: dict = {}
            hostile = asyncio.ensure_future(attack(kind, port, seconds, found))
            await asyncio.sleep(1.0)
            edits = await student_edits(student, 15)
            await hostile
            after = tree_sum(rss_mb, pid)
            figures[kind]["edits"] += edits
            figures[kind]["grown_mb"].append(after - before)
            figures[kind]["closed_after_s"].append(found.get("closed_after_s"))
            if "answers" in found:  # the pages attack: how many pages it was given
                answers = found["answers"]
                figures[kind].setdefault("served", []).append(answers.count(200))
                figures[kind].setdefault("refused", []).append(answers.count(429))
            await asyncio.sleep(2.0)  # the next phase starts quiet
            figures["quiet"] += await student_edits(student, 5)
    await student.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--attack-s", type=float, default=20.0)
    parser.add_argument("--attacks", default="buffers,flood,pulls,pages")
    args = parser.parse_args()
    kinds = [k for k in args.attacks.split(",") if k]
    port = free_port()
    # --behind-proxy: the ``pages`` attack names its address as a proxy would; the
    # student's requests name none and come from the loopback address, not counted.
    proc = start_command(["--port", str(port), "--ready", "0", "--behind-proxy"])
    try:
        wait_for_url(proc)
        load_before = os.getloadavg()[0]
        figures = run_in_thread(
            lambda: measure(port, proc.pid, kinds, args.rounds, args.attack_s), timeout=3600
        )
        load_after = os.getloadavg()[0]
    finally:
        stop_command(proc)
    quiet = figures["quiet"]
    print(
        f"load average {load_before:.1f} at the start, {load_after:.1f} at the end; "
        f"{os.cpu_count()} cores; {args.rounds} rounds, attacks of {args.attack_s:g} s"
    )
    print(
        f"{'phase':<10} {'edits':>5} {'p50 ms':>8} {'p95 ms':>8} {'p95/quiet':>10} "
        f"{'grown MB (max)':>15} {'closed after s':>16}"
    )
    print(f"{'quiet':<10} {len(quiet):>5} {statistics.median(quiet):>8.0f} {p95(quiet):>8.0f}")
    for kind in kinds:
        edits = figures[kind]["edits"]
        grown = max(figures[kind]["grown_mb"])
        closed = ", ".join("-" if c is None else f"{c:g}" for c in figures[kind]["closed_after_s"])
        print(
            f"{kind:<10} {len(edits):>5} {statistics.median(edits):>8.0f} {p95(edits):>8.0f} "
            f"{p95(edits) / p95(quiet):>9.2f}x {grown:>15.1f} {closed:>16}"
        )
        if "served" in figures[kind]:
            print(
                f"{'':<10} pages served to the hostile address each round: "
                f"{figures[kind]['served']}, refused (429): {figures[kind]['refused']}"
            )
    print("goals: p95/quiet <= 1.5x, grown <= 20 MB, every hostile connection closed")


if __name__ == "__main__":
    main()
