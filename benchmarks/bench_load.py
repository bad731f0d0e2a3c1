"""Benchmark the served explorer under a whole class at once: burst open, concurrent edits, soak.

Prints figures; it is not a test with a time limit (these machines are shared
and noisy). The app is served by the command line (``python -m explorer
--no-browser --port P``, i.e. ``candela-explorer``) in a subprocess on
127.0.0.1; nothing else is ever contacted. Run:
``.venv/bin/python benchmarks/bench_load.py [--quick] [--users N]``.

1. Burst open: N plain HTTP GETs of the page at once (each makes the server
   build a whole session, as a browser's first request does): time until the
   last page is served, per-request p50/p95, errors, and the server's CPU
   seconds per session (from /proc: steadier than the times on a shared
   machine). Repeated, medians. When
   the CLI offers ``--num-procs``, 1 and 2 processes are measured in
   alternation and their ratio printed.
2. Concurrent edits: N sessions each type a new pipeline at the same moment,
   in rounds. All but a few are WebSocket clients speaking Bokeh's protocol
   (pull the document as a browser does, then send the pipeline box's new
   value as a PATCH-DOC, time until the server's answer carrying the new
   column data arrives); the rest are Chromium pages, timed from the Enter to
   the frame after the last paint of both figures, as in bench_explorer.py.
   The same rounds with a single session give the baseline and the ratio,
   and with WebSocket clients only (no browser painting on the machine that
   serves), the server's answer alone. For each, the CPU the rounds took:
   the server's, this process's, and the rest of the machine's (the Chromium
   pages), so a figure on a small machine shows who it was waiting on.
   Then the same sessions editing at their own pace (``--pace S``): each
   edits again a random time after its last answer, S seconds on average
   (a class at work rather than all at the same instant).
3. Soak: open 200 sessions (GETs, 10 at a time), let the server's unused
   session expiry discard them (and its worker be recycled, if it grew), and read
   the server's RSS, summed over the command's process and its worker (from /proc), before
   (after 10 warm-up sessions have come and gone) and after; 5 rounds
   (``--soak-rounds``), 1,000 sessions, each round's RSS once its sessions
   expired printed over the warm size (goal: within 20 MB of it) and over round 1
   (what the allocators kept after the first busy moment).
   A worker that served a round keeps what Python's allocator grew to (arenas
   pinned by a few objects each) until it is recycled; memory that grows with
   sessions would grow in every later round as well (the mean of the later
   rounds is judged too).
   ``--soak-only`` runs just this.

Each session costs the server about a second on a loaded 2-core machine, so
the full run takes several minutes (most of it building sessions, the very
thing measured); ``--quick`` (5 users, no soak) takes about a minute.

Goals of the issue: 30 pages at once all served within 6 s, 30 sessions
editing at p95 <= 300 ms, 0 errors, no memory growth over 200 sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from explorer.patches.collect_at_a_pause import COLLECT_QUIET_S, COLLECT_WITHIN_S
from explorer.testing import (
    BokehClient,
    cpu_seconds,
    http_get,
    process_tree,
    pss_mb,
    rss_mb,
    tree_sum,
)

HOST = "127.0.0.1"
#: Bokeh's defaults: an unused session is kept 15 s and looked for every 17 s.
EXPIRY_WAIT_S = 36
GOALS = {"burst_s": 6.0, "edit_p95_ms": 300, "errors": 0}
#: Soak rounds of ``--soak`` sessions each, on one server (``--soak-rounds``).
SOAK_ROUNDS = 5
#: Every round must leave the server within this of its warm size once its sessions expired.
SOAK_WITHIN_MB = 20


def p(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def med(values) -> float:
    return statistics.median(values) if values else float("nan")


def goal(ok: bool) -> str:
    return "met" if ok else "NOT met"


# ---------------------------------------------------------------------- the server


def cli_options() -> str:
    return subprocess.run(
        [sys.executable, "-m", "explorer", "--help"], capture_output=True, text=True, check=True
    ).stdout


class Server:
    """``candela-explorer`` in a subprocess on a free port of 127.0.0.1."""

    def __init__(self, procs: int | None = None, extra: tuple[str, ...] = ()) -> None:
        from explorer.testing import free_port

        self.port = free_port()
        cmd = [sys.executable, "-m", "explorer", "--no-browser", "--port", str(self.port)]
        if procs is not None:
            cmd += ["--num-procs", str(procs)]
        self.procs = procs or 1
        self.proc = subprocess.Popen(
            [*cmd, *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True
        )
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited ({self.proc.returncode}): {cmd}")
            with contextlib.suppress(OSError):
                if http_get(self.port, timeout=60)[0] == 200:
                    break
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError("the server did not answer within 60 s")
            time.sleep(0.2)

    def wait_idle(self, quiet_s: float | None = None, timeout: float = 180.0) -> None:
        """Until the server has used (almost) no CPU for ``quiet_s``: nothing left to build.

        By default longer than the pool of pages built ahead may sit idle before it
        builds (a page served and never opened, as a plain GET's, holds it back for
        ``OPENING_S``; then it waits ``QUIET_S``), so the pool is full.
        """
        if quiet_s is None:
            from explorer import pool

            quiet_s = pool.OPENING_S + pool.QUIET_S + 1.5
        deadline = time.monotonic() + timeout
        last, since = self.cpu_s(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.25)
            now = self.cpu_s()
            if now - last > 0.02 * self.procs:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                return

    def cpu_s(self) -> float:
        """CPU seconds used so far by the server and any worker processes it forked."""
        return tree_sum(cpu_seconds, self.proc.pid)

    def rss_mb(self) -> float:
        """Resident memory of the server and any worker processes it forked, in MB."""
        return tree_sum(rss_mb, self.proc.pid)

    def pss_mb(self) -> float:
        """Proportional memory of the server and its workers (a shared page counted once)."""
        return tree_sum(pss_mb, self.proc.pid)

    def stop(self) -> None:
        for pid in reversed(process_tree(self.proc.pid)[1:]):
            with contextlib.suppress(OSError):
                os.kill(pid, 15)
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ---------------------------------------------------------------------- 1. burst open


def burst(port: int, n: int, path: str = "/") -> dict:
    """N GETs released at once; seconds until the last is served, latencies, errors."""
    barrier = threading.Barrier(n + 1)
    results: list = [None] * n

    def one(i: int) -> None:
        barrier.wait()
        t0 = time.perf_counter()
        try:
            ok = http_get(port, path, timeout=60)[0] == 200
        except Exception:  # a refused or dropped connection is an error, not a crash
            ok = False
        results[i] = (t0, time.perf_counter(), ok)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return {
        "all_s": max(r[1] for r in results) - start,
        "latencies": [r[1] - r[0] for r in results],
        "errors": sum(not r[2] for r in results),
    }


async def _burst_open(port: int, n: int) -> dict:
    clients = [BokehClient(port) for _ in range(n)]
    # Every GET in a thread of its own at once (asyncio's default pool has a few).
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=n + 4))

    async def one(client: BokehClient) -> tuple[float, float, bool]:
        t0 = time.perf_counter()
        try:
            await client.open("/")
            ok = True
        except Exception:
            ok = False
        return t0, time.perf_counter(), ok

    start = time.perf_counter()
    results = await asyncio.gather(*(one(c) for c in clients))
    for client in clients:
        with contextlib.suppress(Exception):
            await client.close()
    return {
        "all_s": max(r[1] for r in results) - start,
        "latencies": [r[1] - r[0] for r in results],
        "errors": sum(not r[2] for r in results),
    }


def burst_open(port: int, n: int) -> dict:
    """N pages opened at once as a browser opens one: the GET, then the document pulled."""
    return asyncio.run(_burst_open(port, n))


# ---------------------------------------------------------------------- 2. edits


async def _browser_edit(page, ops: str) -> float:
    from bench_explorer import QUIET_MS, SETTLED

    box = page.locator(".candela-ops-input input")
    await box.fill(ops)
    n = await page.evaluate("() => window.__input.t.length")
    await box.press("Enter")
    await page.wait_for_function(f"() => window.__input.t.length > {n}")
    t0 = await page.evaluate(f"() => window.__input.t[{n}]")
    # Whichever figures paint: a new walk of the same shape paints only the buffer.
    await page.wait_for_function(SETTLED, arg=[t0, QUIET_MS, []], polling=50)
    return await page.evaluate("() => window.__paints.frame") - t0


#: Counts the Bokeh messages a page sends the server (their content frames).
SENT_HOOK = """
(() => {
  window.__sent = 0
  const send = WebSocket.prototype.send
  WebSocket.prototype.send = function (data) {
    if (typeof data === "string" && data.startsWith('{"events"')) window.__sent += 1
    return send.call(this, data)
  }
})()
"""


async def typed_edits(server: Server, n: int) -> dict:
    """One Chromium page editing as a student does: ``.transpose()`` typed a key at a time
    (50 ms apart), Enter, then the box emptied (select all, Backspace, Enter); ``n`` edits.
    The server's CPU and the page's messages per edit, each edit's answer drawn and the
    page quiet before the next."""
    from bench_explorer import PAINT_HOOK, QUIET_MS, SETTLED
    from playwright.async_api import async_playwright

    from explorer.testing import CHROMIUM, CHROMIUM_ARGS

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = await browser.new_page(viewport={"width": 1400, "height": 1000})
        await page.add_init_script(PAINT_HOOK)
        await page.add_init_script(SENT_HOOK)
        await page.goto(f"http://{HOST}:{server.port}/?shape=64,64")
        await page.wait_for_function(SETTLED, arg=[0, QUIET_MS, []], polling=50)
        # The page it took from those built ahead is built again first (in a thread: the
        # wait blocks, and this loop drives the page).
        await asyncio.to_thread(server.wait_idle)
        await page.locator(".candela-ops-input input").click()
        cpu, sent = [], 0
        for i in range(n + 1):  # the first warms up
            c0, m0 = server.cpu_s(), await page.evaluate("() => window.__sent")
            await page.keyboard.press("Control+a")
            if i % 2 == 0:
                await page.keyboard.type(".transpose()", delay=50)
            else:
                await page.keyboard.press("Backspace")
            t0 = await page.evaluate("() => performance.now()")
            await page.keyboard.press("Enter")
            await page.wait_for_function(SETTLED, arg=[t0, QUIET_MS, []], polling=50)
            await asyncio.sleep(0.5)  # what the page sends after the paint (its new URL)
            if i:
                cpu.append((server.cpu_s() - c0) * 1000)
                sent += await page.evaluate("() => window.__sent") - m0
        await browser.close()
    # The mean, and the median: a session of someone else's expiring can land in one edit.
    return {"cpu_ms": statistics.mean(cpu), "cpu_median_ms": med(cpu), "messages": sent / n}


def machine_cpu_s() -> float:
    """CPU seconds the whole machine has been busy (all cores, from /proc/stat)."""
    with contextlib.suppress(OSError, ValueError):
        ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # - idle, iowait
    return float("nan")


async def edits(server: Server, users: int, pages: int, rounds: int) -> dict:
    """``rounds`` of every session editing at once; latencies of clients and pages, and the
    CPU the timed rounds took: the server's, this process's (the WebSocket clients and the
    pages' driver), and the rest of the machine's (the Chromium pages, and anything else)."""
    port = server.port
    from bench_explorer import FIGURES, INPUT_HOOK, PAINT_HOOK, QUIET_MS, SETTLED
    from playwright.async_api import async_playwright

    from explorer.testing import CHROMIUM, CHROMIUM_ARGS

    pages = min(pages, users)
    clients = [BokehClient(port) for _ in range(users - pages)]
    out = {"client_ms": [], "page_ms": [], "errors": 0}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        opened = []
        for _ in range(pages):
            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            await page.add_init_script(PAINT_HOOK)
            await page.add_init_script(INPUT_HOOK)
            await page.goto(f"http://{HOST}:{port}/?shape=64,64")
            await page.wait_for_function(SETTLED, arg=[0, QUIET_MS, list(FIGURES)], polling=50)
            opened.append(page)
        for i in range(0, len(clients), 10):  # open 10 at a time: opening is not what is timed
            await asyncio.gather(*(c.open() for c in clients[i : i + 10]))
        for r in range(rounds + 1):  # the first round warms up
            if r == 1:
                cpu0 = (server.cpu_s(), time.process_time(), machine_cpu_s())
            ops = ".transpose()" if r % 2 == 0 else ""
            results = await asyncio.gather(
                *(c.edit(ops) for c in clients),
                *(_browser_edit(pg, ops) for pg in opened),
                return_exceptions=True,
            )
            if r == 0:
                continue
            for k, res in enumerate(results):
                if isinstance(res, BaseException):
                    out["errors"] += 1
                    out.setdefault("first error", f"{type(res).__name__}: {res}"[:300])
                else:
                    out["client_ms" if k < len(clients) else "page_ms"].append(res)
        srv, me, machine = (server.cpu_s(), time.process_time(), machine_cpu_s())
        if rounds:
            out["cpu_s"] = {"server": srv - cpu0[0], "clients": me - cpu0[1]}
            out["cpu_s"]["rest"] = machine - cpu0[2] - sum(out["cpu_s"].values())
        for c in clients:
            await c.close()
        await browser.close()
    return out


def cpu_line(found: dict, users: int, rounds: int) -> str:
    """Where the timed rounds' CPU went, per edit: the server, the clients, the rest."""
    cpu = found.get("cpu_s")
    if not cpu:
        return ""
    per = {k: v / (users * rounds) * 1000 for k, v in cpu.items()}
    return (
        f"   CPU an edit during the rounds: server {per['server']:.1f} ms, this process "
        f"(WebSocket clients, pages' driver) {per['clients']:.1f} ms, the rest of the "
        f"machine (the Chromium pages, anything else) {per['rest']:.1f} ms"
    )


async def paced_edits(
    port: int, users: int, pace_s: float, seconds: float, leaving: int = 0
) -> dict:
    """``users`` sessions each editing at its own pace: the next edit a random time after
    the last answer (exponential, mean ``pace_s``), for ``seconds``; latencies. With
    ``leaving``, that many more pages are opened and closed as the editing starts (students
    who leave: their sessions end while the others edit)."""
    import random

    rng = random.Random(7)
    clients = [BokehClient(port) for _ in range(users + leaving)]
    for i in range(0, users + leaving, 10):
        await asyncio.gather(*(c.open() for c in clients[i : i + 10]))
    for c in clients[users:]:
        await c.close()
    clients = clients[:users]
    out: dict = {"client_ms": [], "errors": 0}
    end = time.perf_counter() + seconds

    async def student(c: BokehClient) -> None:
        n = 0
        await asyncio.sleep(rng.uniform(0, pace_s))
        while time.perf_counter() < end:
            try:
                out["client_ms"].append(await c.edit(".transpose()" if n % 2 == 0 else ""))
            except Exception:
                out["errors"] += 1
            n += 1
            await asyncio.sleep(rng.expovariate(1 / pace_s))

    await asyncio.gather(*(student(c) for c in clients))
    for c in clients:
        await c.close()
    return out


# ---------------------------------------------------------------------- 3. soak


def soak(server: Server, sessions: int, at_once: int = 10) -> dict:
    errors = 0
    for i in range(0, sessions, at_once):
        errors += burst(server.port, min(at_once, sessions - i))["errors"]
    return {"errors": errors}


# ---------------------------------------------------------------------- report


def soak_rounds(server: Server, soak_n: int, rounds: int, wait_s: float) -> None:
    """Rounds of ``soak_n`` sessions opened and left to expire; RSS per round against warm."""
    print(
        f"\n== soak: {soak_n} sessions opened (10 at a time), then left to expire; "
        f"{rounds} times, to tell memory the allocators keep from memory that grows"
    )
    # A first round of 10 grows the allocator's arenas; "before" is read after it.
    # Once the sessions have expired, Panel asks for their garbage to be collected
    # 5 s after the last; the server does it at the next pause of the pages and hands
    # the memory back (explorer.patches.collect_at_a_pause): read RSS once it has.
    # Then a worker that grew is replaced by a fresh one (explorer.recycling) and the
    # fresh one builds its pages ahead: read once the server is idle again.
    settle_s = wait_s + 5 + COLLECT_QUIET_S + 5

    def settled() -> tuple[float, float, list[int]]:
        time.sleep(settle_s)
        server.wait_idle()
        return server.rss_mb(), server.pss_mb(), process_tree(server.proc.pid)[1:]

    started = server.rss_mb()
    print(
        f"server once started (its pages built ahead), summed over the command's process and "
        f"its worker: RSS {started:.0f} MB (PSS {server.pss_mb():.0f} MB: each shared page "
        "counted once)"
    )
    print(f"waiting {settle_s:.0f} s for the warm-up sessions to expire ...", flush=True)
    soak(server, 10)
    warm, warm_pss, workers = settled()
    print(f"server after 10 warm-up sessions expired (warm): {warm:.0f} MB (PSS {warm_pss:.0f})")
    after = [warm]
    for n in range(1, rounds + 1):
        t0 = time.perf_counter()
        res = soak(server, soak_n)
        took = time.perf_counter() - t0
        peak = server.rss_mb()
        last, pss, now = settled()
        after.append(last)
        recycled = "recycled" if now != workers else "not recycled"
        workers = now
        # Sessions expire while later ones are still being opened: at the end of the
        # opening only those of the last ~15-32 s are alive, so `peak` is not 200
        # sessions' worth.
        print(
            f"round {n}: {soak_n} opened in {took:.0f} s ({took / soak_n:.2f} s each, "
            f"errors {res['errors']}); RSS at the end of opening {peak:.0f} MB; "
            f"once all expired (worker {recycled}) {after[-1]:.0f} MB (PSS {pss:.0f}): "
            f"{after[-1] - warm:+.0f} MB over warm, {after[-1] - after[1]:+.0f} MB over round 1",
            flush=True,
        )
    # A leak grows every round by the same; what the allocators keep after the
    # busiest moment goes up or down with the next round's peak: the mean of the
    # rounds after the first tells them apart.
    later = [b - a for a, b in zip(after[1:], after[2:], strict=False)]
    growth = sum(later) / len(later) if later else float("nan")
    print(
        f"goal no growth over {soak_n} sessions (rounds 2-{rounds}, once round 1 "
        f"has raised what the allocators keep: {', '.join(f'{g:+.0f}' for g in later)} "
        f"MB, mean {growth:+.1f} MB a round; above 5 MB counts): {goal(growth <= 5)}"
    )
    worst = max(a - warm for a in after[1:])
    print(
        f"goal every round within {SOAK_WITHIN_MB} MB of the warm size once its sessions "
        f"expired ({rounds * soak_n} sessions in all; worst {worst:+.0f} MB, per round "
        + ", ".join(f"{a - warm:+.0f}" for a in after[1:])
        + f" MB): {goal(worst <= SOAK_WITHIN_MB)}"
    )
    worst_1 = max(a - after[1] for a in after[1:])
    print(
        f"every later round within {SOAK_WITHIN_MB} MB of round 1 (the allocators' high "
        f"water raised once: worst {worst_1:+.0f} MB): {goal(worst_1 <= SOAK_WITHIN_MB)}"
    )


def cpu_name() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def load_line() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer users and rounds (~30 s)")
    parser.add_argument("--users", type=int, default=None, help="concurrent users (default 30)")
    parser.add_argument("--pages", type=int, default=2, help="of them, Chromium pages (max 4)")
    parser.add_argument("--soak", type=int, default=None, help="sessions in the soak (200)")
    parser.add_argument(
        "--soak-rounds", type=int, default=SOAK_ROUNDS, help=f"soak rounds ({SOAK_ROUNDS})"
    )
    parser.add_argument(
        "--soak-only", action="store_true", help="only the soak: no bursts, no edits"
    )
    parser.add_argument("--bursts", type=int, default=None, help="bursts per variant (2; 0: none)")
    parser.add_argument(
        "--edit-procs", type=int, default=1, help="server processes for the edits and soak (1)"
    )
    parser.add_argument(
        "--leaving",
        type=int,
        default=3,
        help="paced edits: pages closed as they start, whose sessions end meanwhile (3)",
    )
    parser.add_argument(
        "--pace",
        type=float,
        default=5.0,
        help="paced edits: mean seconds between one student's edits (5; 0: skip)",
    )
    args = parser.parse_args()
    users = args.users or (5 if args.quick else 30)
    soak_n = args.soak if args.soak is not None else (0 if args.quick else 200)
    bursts = args.bursts if args.bursts is not None else (1 if args.quick else 2)
    rounds = 2 if args.quick else 6
    pages = max(0, min(args.pages, 4))

    options = cli_options()
    multi = "--num-procs" in options
    # Shorter session expiry, if the CLI lets us set it (milliseconds, as `bokeh serve`).
    expiry: tuple[str, ...] = ()
    wait_s = EXPIRY_WAIT_S
    if "--unused-session-lifetime" in options and "--check-unused-sessions" in options:
        expiry = ("--unused-session-lifetime", "2000", "--check-unused-sessions", "1000")
        wait_s = 5
    print(
        f"machine: {os.cpu_count()} cores, {cpu_name()}, Python {platform.python_version()}; "
        f"load average at start {load_line()}"
    )
    print(
        f"server: `candela-explorer --no-browser --port P` in a subprocess; --num-procs "
        f"{'offered: comparing 1 and 2 processes' if multi else 'not offered: 1 process'}"
    )

    if args.soak_only:
        # The command's own session expiry (Bokeh's, 15 s looked for every 17 s): as a
        # class gets it, so as many sessions are alive at the busiest moment.
        server = Server()
        try:
            soak_rounds(server, soak_n or 200, args.soak_rounds, EXPIRY_WAIT_S)
        finally:
            server.stop()
        return

    # 1. Burst open, alternating the variants, a fresh server per burst.
    ready = "--ready" in options
    print(f"\n== burst open: {users} GETs of / at once")
    variants: dict[str, tuple[int | None, tuple[str, ...]]] = {"1 process": (None, ())}
    if ready:  # pages built ahead: none, then one for every student of the burst
        variants = {
            "1 process, --ready 0": (None, ("--ready", "0")),
            f"1 process, --ready {users}": (None, ("--ready", str(users))),
        }
    if multi:
        variants[f"2 processes{f', --ready {users}' if ready else ''}"] = (
            2,
            ("--ready", str(users)) if ready else (),
        )
    found: dict = {v: [] for v in variants}
    for b in range(bursts):
        for name in list(variants) if b % 2 == 0 else list(variants)[::-1]:
            procs, extra = variants[name]
            server = Server(procs=procs, extra=extra)
            try:
                burst(server.port, 2)  # warm: the first sessions import and build more
                server.wait_idle()  # and any pages built ahead are ready
                before, cpu = server.rss_mb(), server.cpu_s()
                found[name].append(burst(server.port, users))
                found[name][-1]["rss"] = (before, server.rss_mb())
                found[name][-1]["cpu"] = server.cpu_s() - cpu
                server.wait_idle()  # the pages built ahead again
                cpu = server.cpu_s()
                found[name][-1]["open"] = burst_open(server.port, users)
                found[name][-1]["open"]["cpu"] = server.cpu_s() - cpu
            finally:
                server.stop()
    for name, runs in found.items():
        if not runs:
            continue
        all_s = [r["all_s"] for r in runs]
        lat = [x for r in runs for x in r["latencies"]]
        errors = sum(r["errors"] for r in runs)
        print(
            f"{name}: last page served after median "
            f"{med(all_s):.1f} s ({', '.join(f'{x:.1f}' for x in all_s)}); per request "
            f"p50 {p(lat, 0.5):.1f} s, p95 {p(lat, 0.95):.1f} s; errors {errors}/{len(lat)}"
            f"   goal all within {GOALS['burst_s']:.0f} s: {goal(max(all_s) <= GOALS['burst_s'])}"
        )
        print(
            "  server CPU per session (less sensitive to other work on the machine than the"
            " times): " + ", ".join(f"{r['cpu'] / users:.2f} s" for r in runs)
        )
        opened = [r["open"] for r in runs]
        open_s = [o["all_s"] for o in opened]
        print(
            "  the same burst opening the page as a browser does (GET, then the document "
            f"pulled over the WebSocket): last page open after median {med(open_s):.1f} s "
            f"({', '.join(f'{x:.1f}' for x in open_s)}); errors "
            f"{sum(o['errors'] for o in opened)}; server CPU per session "
            + ", ".join(f"{o['cpu'] / users:.2f} s" for o in opened)
        )
        rss = [(a, b) for a, b in (r["rss"] for r in runs)]
        print(
            "  server RSS before / after the burst (a lower bound per session: a burst longer"
            " than 15 s may outlast the first sessions): "
            + ", ".join(f"{a:.0f} / {b:.0f} MB" for a, b in rss)
            + f"; {med([(b - a) * 1024 / users for a, b in rss]):.0f} KB per session"
        )
    names = [name for name, runs in found.items() if runs]
    if names:
        one = med([r["all_s"] for r in found[names[0]]])
        print(f"seconds per session ({names[0]}, last served / {users}): {one / users:.2f}")
    for name in names[1:]:
        print(f"ratio {name} / {names[0]}: {med([r['all_s'] for r in found[name]]) / one:.2f}x")

    # 2. and 3. on one server.
    edit_procs = args.edit_procs if multi and args.edit_procs > 1 else None
    server = Server(procs=edit_procs, extra=expiry)
    try:
        burst(server.port, 2)
        print(
            f"\n== concurrent edits at 64x64 ({rounds} rounds; a round = every session "
            f"types .transpose() or clears it at once); {edit_procs or 1} server process(es)"
        )
        if pages:
            typed = asyncio.run(typed_edits(server, rounds))
            print(
                f"1 Chromium page, edits as typed (`.transpose()` a key at a time and Enter, "
                f"then emptied): server CPU {typed['cpu_ms']:.0f} ms an edit (median "
                f"{typed['cpu_median_ms']:.0f}); the page sent "
                f"{typed['messages']:.1f} messages an edit"
            )
        solo = asyncio.run(edits(server, 1, 0, rounds))
        # Its session ends: when it expires Panel collects the garbage of the whole process
        # (0.1-0.5 s, more the more sessions are open), which must not fall in the rounds.
        print(f"(waiting {wait_s} s for that session to expire)", flush=True)
        time.sleep(wait_s)
        alone = None
        if pages:
            alone = asyncio.run(edits(server, users, 0, rounds))
            # Those sessions close together: their expiry must not fall in the next rounds.
            print(f"(waiting {wait_s} s for those sessions to expire)", flush=True)
            time.sleep(wait_s)
            server.wait_idle()
        many = asyncio.run(edits(server, users, pages, rounds))
        s, c, pg = solo["client_ms"], many["client_ms"], many["page_ms"]
        print(
            f"1 session (WebSocket client):      p50 {p(s, 0.5):5.0f} ms, p95 {p(s, 0.95):5.0f} ms"
        )
        if alone is not None:
            a = alone["client_ms"]
            print(
                f"{users} sessions, all WebSocket clients (no browser on this machine): "
                f"p50 {p(a, 0.5):5.0f} ms, p95 {p(a, 0.95):5.0f} ms, max "
                f"{max(a, default=float('nan')):.0f} ms; errors {alone['errors']}"
            )
            print(cpu_line(alone, users, rounds))
            print(
                f"   goal p95 <= {GOALS['edit_p95_ms']} ms, the server alone (as in a class, "
                f"where each page paints on its student's machine): "
                f"{goal(p(a, 0.95) <= GOALS['edit_p95_ms'] and not alone['errors'])}"
            )
        print(
            f"{users} sessions, {users - pages} WebSocket clients: p50 {p(c, 0.5):5.0f} ms, "
            f"p95 {p(c, 0.95):5.0f} ms, max {max(c, default=float('nan')):.0f} ms "
            f"(Enter is not involved: PATCH-DOC sent -> new column data in)"
        )
        if pg:
            print(
                f"{users} sessions, {pages} Chromium pages:   p50 {p(pg, 0.5):5.0f} ms, "
                f"p95 {p(pg, 0.95):5.0f} ms (Enter -> frame after the last paint)"
            )
        print(cpu_line(many, users, rounds))
        worst = p(c + pg, 0.95)
        print(
            f"ratio p95 {users} sessions / 1 session: {p(c, 0.95) / p(s, 0.95):.1f}x; errors "
            f"{many['errors'] + solo['errors']}   goal p95 <= {GOALS['edit_p95_ms']} ms"
            f"{', with the pages painting on this same machine' if pg else ''}: "
            f"{goal(worst <= GOALS['edit_p95_ms'])}"
        )
        if "first error" in many:
            print(f"   first error: {many['first error']}")

        if args.pace > 0:
            paced_s = 20 if args.quick else 60
            leaving = 0 if args.quick else max(0, args.leaving)
            if leaving:  # the closed pages' sessions end, and their garbage is collected, within
                paced_s = wait_s + 5 + COLLECT_WITHIN_S + 10
            print(
                f"\n== {users} sessions editing at their own pace: each edits again a random "
                f"time after its last answer (mean {args.pace:g} s), for {paced_s} s"
                + (
                    f"; {leaving} more pages close as they start: their sessions end "
                    "meanwhile, and the server collects their garbage"
                    if leaving
                    else ""
                )
            )
            # The sessions of the rounds above all close at once: not while this is timed.
            time.sleep(wait_s)
            server.wait_idle()
            paced = asyncio.run(paced_edits(server.port, users, args.pace, paced_s, leaving))
            c = paced["client_ms"]
            print(
                f"{len(c)} edits ({len(c) / paced_s:.1f} a second): p50 {p(c, 0.5):5.0f} ms, "
                f"p95 {p(c, 0.95):5.0f} ms, max {max(c, default=float('nan')):.0f} ms, "
                f"over 300 ms {sum(x > 300 for x in c)}; "
                f"errors {paced['errors']}   goal p95 <= {GOALS['edit_p95_ms']} ms: "
                f"{goal(p(c, 0.95) <= GOALS['edit_p95_ms'])}"
            )

        if soak_n:
            soak_rounds(server, soak_n, args.soak_rounds, wait_s)
        else:
            print("\n== soak: skipped (--quick or --soak 0; give --soak N to run it)")
    finally:
        server.stop()
    print(f"\nload average at the end {load_line()}")


if __name__ == "__main__":
    main()
