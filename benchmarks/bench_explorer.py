"""Benchmark the explorer: server-side update time, browser click-to-repaint, animation rate.

Prints figures; it is not a test with a time limit (these machines are shared
and noisy). Run: ``.venv/bin/python benchmarks/bench_explorer.py [--no-browser]``.

1. Server side: the time from setting ``Explorer.ops`` to updated column data
   (parse, apply, columns, Bokeh source writes, fields) at 16, 256, 4,096 and
   65,536 elements; median and p95 of repeated changes. Above 4,096 the page
   shows a summary, so the 65,536 row also reports building the full columns.
2. Browser: click on "add step" to the next animation frame after the new
   data lands in the page, at 4,096 elements in Debian's Chromium (median of 10);
   and to the frame after the whole page (fields and step list too) is updated.
3. Animation: frames advanced per second with the speed set to 60 on 4,096
   cells, and the browser's own frame rate meanwhile.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SIZES = {16: (4, 4), 256: (16, 16), 4096: (64, 64), 65536: (256, 256)}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def bench_server(repeats: int = 40) -> list[tuple]:
    from candela import Tensor
    from explorer import columns as C
    from explorer.app import Explorer

    rows = []
    for n, shape in SIZES.items():
        ex = Explorer(shape=shape)
        times = []
        for i in range(repeats):
            ops = ".transpose()" if i % 2 == 0 else ".slice(s[::-1])"
            t0 = time.perf_counter()
            ex.ops = ops
            times.append((time.perf_counter() - t0) * 1000)
            assert ex.error is None
        rows.append(("ops change -> column data", n, statistics.median(times), p95(times)))
    t = Tensor.arange(SIZES[65536]).transpose()
    times = []
    for _ in range(10):
        t0 = time.perf_counter()
        C.columns_for(t, detail_limit=1 << 16)
        times.append((time.perf_counter() - t0) * 1000)
    rows.append(("full columns (no summary)", 65536, statistics.median(times), p95(times)))
    return rows


def bench_browser() -> dict:
    from playwright.sync_api import sync_playwright

    from explorer.testing import CHROMIUM, CHROMIUM_ARGS, served_app

    out: dict = {}
    with served_app() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url + "?shape=64,64")
        page.wait_for_function(
            "() => window.Bokeh && Bokeh.documents.length"
            " && Bokeh.documents[0].get_model_by_name('logical-source')?.data.x.length === 4096"
        )
        # Time from the click (pointerdown) to the animation frame after the new data;
        # and to the frame after the whole page has it (the step list's text is the
        # last thing the server rewrites), so nothing can arrive later unmeasured.
        page.evaluate("""() => {
            const doc = Bokeh.documents[0];
            const src = doc.get_model_by_name('logical-source');
            const steps = [...doc.all_models].find(
                (m) => (m.css_classes ?? []).includes('candela-steps'));
            const b = window.__bench = {clicks: [], paints: [], data: [], text: [], settled: []};
            document.addEventListener('pointerdown', () => b.clicks.push(performance.now()), true);
            const settle = () => {
                const i = b.clicks.length - 1;
                if (b.data.length > i && b.text.length > i)
                    requestAnimationFrame(() => b.settled[i] = performance.now());
            };
            src.connect(src.properties.data.change, () => {
                b.data.push(performance.now());
                requestAnimationFrame(() => b.paints.push(performance.now()));
                settle();
            });
            steps.connect(steps.change, () => { b.text.push(performance.now()); settle(); });
        }""")
        button = page.locator(".candela-add-step button")
        for i in range(10):
            button.click()
            page.wait_for_function(
                f"() => window.__bench.paints.length > {i} && window.__bench.settled[{i}]"
            )
        clicks, paints, settled = page.evaluate(
            "() => [window.__bench.clicks, window.__bench.paints, window.__bench.settled]"
        )
        out["click_to_repaint"] = [b - a for a, b in zip(clicks, paints)]
        out["click_to_settled"] = [b - a for a, b in zip(clicks, settled)]

        # Animation at speed 60 on 4,096 cells.
        page.evaluate("() => Bokeh.documents[0].get_model_by_name('speed-slider').value = 60")
        page.evaluate("""() => {
            window.__raf = 0;
            const tick = () => { window.__raf++; if (!window.__stopRaf) requestAnimationFrame(tick) };
            requestAnimationFrame(tick);
        }""")
        slider = "Bokeh.documents[0].get_model_by_name('frame-slider')"
        page.locator(".bk-btn", has_text="play").click()
        page.wait_for_function(f"() => {slider}.value > 0")
        v0, r0, t0 = page.evaluate(f"() => [{slider}.value, window.__raf, performance.now()]")
        page.wait_for_function(f"() => performance.now() > {t0} + 3000", polling=200)
        v1, r1, t1 = page.evaluate(f"() => [{slider}.value, window.__raf, performance.now()]")
        page.locator(".bk-btn", has_text="pause").click()
        secs = (t1 - t0) / 1000
        out["frames_per_s"] = (v1 - v0) / secs
        out["raf_per_s"] = (r1 - r0) / secs
        browser.close()
    return out


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-browser", action="store_true", help="server-side figures only")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, {cpu_name()}, Python {platform.python_version()}")
    print(f"{'measure':28} {'elements':>9} {'median ms':>10} {'p95 ms':>8}")
    for name, n, med, p in bench_server():
        print(f"{name:28} {n:>9,} {med:>10.1f} {p:>8.1f}")
    if args.no_browser:
        return
    b = bench_browser()
    clicks = b["click_to_repaint"]
    print(
        f"browser click-to-repaint at 4,096: median {statistics.median(clicks):.0f} ms "
        f"(min {min(clicks):.0f}, max {max(clicks):.0f}, n={len(clicks)})"
    )
    settled = b["click_to_settled"]
    print(
        f"browser click to whole page updated at 4,096: median {statistics.median(settled):.0f} ms "
        f"(min {min(settled):.0f}, max {max(settled):.0f}, n={len(settled)})"
    )
    print(
        f"animation at speed 60 on 4,096 cells: {b['frames_per_s']:.1f} frames/s advanced, "
        f"browser frame rate {b['raf_per_s']:.1f}/s"
    )


if __name__ == "__main__":
    main()
