"""Benchmark the explorer page as a person sees it: paints, models, bytes, edits.

Prints figures; it is not a test with a time limit (these machines are shared
and noisy). Every browser figure is printed next to a reference measured in
the same run, interleaved, and the goals of the "Performance" issue are
printed beside them. Run:
``.venv/bin/python benchmarks/bench_explorer.py [--quick] [--no-browser]``.

1. Server side: the time from setting ``Explorer.ops`` to updated column data
   (parse, apply, columns, Bokeh source writes, fields) at 16, 256, 4,096,
   65,536 and 2,408,448 elements; median and p95. Above 4,096 the page draws
   NumPy's edge items of each axis and a binned buffer, so the 65,536 row also
   reports building the full columns.
2. First paint at 64x64 (``?shape=64,64``), cold cache: from navigation start
   to the animation frame after the last paint of both Bokeh figures (the
   logical grid and the memory buffer), against a minimal Panel app that
   draws the same 4,096 cells in one figure (``minimal_app`` below), loads
   alternating; and the explorer as the command serves it, from a page built
   ahead while the server was idle (``explorer.pool``). A paint is one
   ``PlotView._actual_paint`` (Bokeh 3.9), hooked on the prototype before any
   plot exists (``PAINT_HOOK``); "last" means no further paint for
   ``QUIET_MS``.
3. Bokeh models per session, by type: in the page (``Bokeh.documents[0]``)
   and server side (a document built from ``app()``), explorer vs minimal.
4. Bytes on first load: every HTTP response as sent (Playwright's
   ``request.sizes()``: headers + body on the wire, so compressed if
   ``Content-Encoding`` says so) plus WebSocket payloads both ways, those the
   server sent counted as compressed when it negotiated permessage-deflate
   (recomputed as Tornado compresses them: Playwright reports them
   decompressed); the five largest responses.
5. Edits at 4,096 cells: Enter in the pipeline box to the frame after the last
   paint, for a walk-only change (``.transpose()`` and back: the shape stays
   64x64) and a shape change (``.view((16, 256))`` and back), medians; each
   edit is followed by the same kind of change in the minimal app (its cells
   recoloured, or laid out 16x256 and the figure resized), in a page of its own,
   and the two are printed side by side with their ratio. A figure
   whose pixels the edit does not change need not paint (the buffer of a
   ``.view`` is the same buffer): the clock stops at the frame after the last
   paint of whichever figures painted, once none has painted for ``QUIET_MS``.
6. Repaints for edits that change no figure's layout (another op in the op
   chooser; another unit): paints per figure, split into full paints (the
   cells' canvas layer) and overlay-only paints (the cursor layer).
7. The 16x3x224x224 channels-last page (``CHANNELS_LAST``: 2.4 M elements) beside
   the 64x64 page: time to the frame after the last paint (cold loads, interleaved
   with the others), bytes on first load, Bokeh models in the page, and the peak
   resident memory building its state and columns adds to a fresh server process
   (``server_memory``), each with the ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SIZES = {16: (4, 4), 256: (16, 16), 4096: (64, 64), 65536: (256, 256), 2408448: (16, 3, 224, 224)}
#: The page of a real tensor measured beside the 64x64 page.
CHANNELS_LAST = "shape=16,3,224,224&ops=.permute(0,2,3,1)"


def channels_last_cells() -> int:
    """How many cells the channels-last page's grid draws (192: its edge items)."""
    from explorer import columns
    from explorer.state import evaluate

    return len(
        columns.columns_for(evaluate("16,3,224,224", ".permute(0,2,3,1)").tensor).logical["x"]
    )


FIGURES = ("logical-figure", "buffer-figure")
#: No paint for this long after an edit or a load: the page has settled.
QUIET_MS = 700

#: The goals of the "Performance" issue.
GOALS = {
    "first_paint_ratio": 1.5,
    "models": 100,
    "first_load_bytes": 1.2e6,
    "click_ms": 100,
    "shape_edit_ms": 150,
    "repaints": 0,
}

# Runs before any page script: wraps Bokeh's PlotView paint as soon as Bokeh loads.
# `_actual_paint` is one paint of a plot's canvas; `_paint_primary` runs inside it when
# the cells' layer is redrawn (otherwise only the overlay layer, e.g. the cursor).
PAINT_HOOK = """
(() => {
  const rec = window.__paints = {log: [], last: 0, frame: 0, error: null};
  function patch(B) {
    try {
      const P = B.require("models/plots/plot").PlotView;
      if (P.prototype.__benchHooked) return;
      P.prototype.__benchHooked = true;
      const paint = P.prototype._actual_paint, primary = P.prototype._paint_primary;
      P.prototype._paint_primary = function (ctx) {
        this.__benchPrimary = true;
        return primary.call(this, ctx);
      };
      P.prototype._actual_paint = function () {
        this.__benchPrimary = false;
        const t0 = performance.now();
        const out = paint.call(this);
        const t1 = performance.now();
        rec.log.push({name: this.model.name, t0, t1, primary: this.__benchPrimary});
        rec.last = t1;
        requestAnimationFrame(() => { rec.frame = performance.now() });
        return out;
      };
    } catch (e) { rec.error = String(e) }
  }
  // Each WebSocket frame's time and size, stamped before Bokeh's own handler runs.
  const WS = window.WebSocket;
  rec.ws = [];
  const size = (d) => d.length ?? d.byteLength ?? d.size ?? 0;
  window.WebSocket = class extends WS {
    constructor(...a) {
      super(...a);
      this.addEventListener("message", (e) => rec.ws.push({t: performance.now(), dir: "in", n: size(e.data)}));
    }
    send(d) {
      rec.ws.push({t: performance.now(), dir: "out", n: size(d)});
      return super.send(d);
    }
  };
  let bokeh;
  Object.defineProperty(window, "Bokeh", {
    configurable: true,
    get() { return bokeh },
    set(v) { bokeh = v; if (v && v.require) patch(v) },
  });
})();
"""

# Marks the time of each Enter or pointerdown (capture phase: before any widget sees it).
INPUT_HOOK = """
(() => {
  const b = window.__input = {t: []};
  const mark = (e) => { if (e.type !== "keydown" || e.key === "Enter") b.t.push(performance.now()) };
  document.addEventListener("keydown", mark, true);
  document.addEventListener("pointerdown", mark, true);
})();
"""

# True once some paint came after `since`, none for QUIET_MS, and the frame after it ran,
# and every figure in `names` painted (a load paints both; an edit, those it changed).
SETTLED = """([since, quiet, names]) => {
  const r = window.__paints;
  if (!r || r.last <= since || performance.now() - r.last < quiet || r.frame < r.last) return false;
  const painted = new Set(r.log.filter((p) => p.t0 > since).map((p) => p.name));
  return names.every((n) => painted.has(n));
}"""


def _pool_of(context):
    """The pool of pages built ahead for Bokeh's application ``context`` (None: none)."""
    if context is None:
        return None
    try:
        from explorer.pool import _POOLS
    except ImportError:  # a checkout from before the pool kept its own registry
        return getattr(context, "_candela_pool", None)
    return _POOLS.get(context)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def med(values) -> float:
    return statistics.median(values) if values else float("nan")


# ---------------------------------------------------------------------- the reference


def _minimal_cells(rows: int, cols: int, turn: int) -> dict:
    """The minimal app's cells: ``rows`` x ``cols`` of them, coloured by ``turn``.

    Positions are NumPy arrays, which Bokeh sends as binary, as the explorer's are.
    """
    import numpy as np

    n = rows * cols
    return {
        "x": np.arange(n) % cols,
        "y": -(np.arange(n) // cols),
        "color": [f"#{40 + (i * 7 + turn * 53) % 200:02x}80c0" for i in range(n)],
    }


def minimal_app():
    """The reference page: one Panel pane, one Bokeh figure, the same 4,096 cells, canvas.

    It has a text box as the explorer has, and answers Enter with the same kind of
    data change: text that names a walk (``.transpose()``) recolours every cell in
    place (the shape stays 64x64), text with ``view`` lays the cells out 16x256
    and sizes the figure to them, and an empty box goes back to 64x64.
    """
    import panel as pn
    from bokeh.models import ColumnDataSource, Range1d
    from bokeh.plotting import figure

    source = ColumnDataSource(_minimal_cells(64, 64, 0), name="cells-source")
    fig = figure(
        name="minimal-figure",
        width=560,
        height=560,
        x_range=Range1d(-0.5, 63.5),
        y_range=Range1d(-63.5, 0.5),
        toolbar_location=None,
        tools="",
        output_backend="canvas",
    )
    fig.axis.visible = False
    fig.grid.visible = False
    fig.rect("x", "y", width=0.94, height=0.94, source=source, fill_color="color")
    box = pn.widgets.TextInput(name="pipeline", css_classes=["minimal-input"], width=300)
    turn = [0]

    def enter(event) -> None:
        turn[0] += 1
        rows, cols = (16, 256) if "view" in event.new else (64, 64)
        source.data = _minimal_cells(rows, cols, turn[0] if "transpose" in event.new else 0)
        side = 560 * 64 // max(rows, cols)  # the same cell size at either shape
        fig.update(width=max(cols * side // 64, 100), height=max(rows * side // 64, 100))
        fig.x_range.update(start=-0.5, end=cols - 0.5)
        fig.y_range.update(start=-(rows - 0.5), end=0.5)

    box.param.watch(enter, "value")
    return pn.Column(box, pn.pane.Bokeh(fig))


# ---------------------------------------------------------------------- server side


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
        rows.append(("ops change -> column data", n, med(times), p95(times)))
    t = Tensor.arange(SIZES[65536]).transpose()
    times = []
    for _ in range(max(3, repeats // 4)):
        t0 = time.perf_counter()
        C.columns_for(t, detail_limit=1 << 16)
        times.append((time.perf_counter() - t0) * 1000)
    rows.append(("full columns (no overview)", 65536, med(times), p95(times)))
    return rows


#: Run in a fresh interpreter: the peak resident memory an explorer's state and columns add
#: to the server, over what the imports already hold (MB).
MEMORY_PROBE = """
import re, sys
from explorer.state import ExplorerState
import explorer.app  # noqa: F401 (what a server holds before any page)
def status(key):
    return int(re.search(key + r":\\s+(\\d+)", open("/proc/self/status").read()).group(1)) / 1024
open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) starts again from here
before = status("VmRSS")
ExplorerState(shape=tuple(map(int, sys.argv[1].split(","))), ops=sys.argv[2])
print(status("VmHWM") - before)
"""


def server_memory() -> dict[str, float]:
    """The peak resident memory (MB) building an explorer's state and columns adds to a
    fresh server process: 64x64, and the channels-last image batch. Resident, so a buffer
    the system gives as untouched pages (the never-made ``arange``) counts as what it is."""
    import subprocess

    out = {}
    for name, shape, ops in (
        ("64x64", "64,64", ""),
        ("channels last", "16,3,224,224", ".permute(0,2,3,1)"),
    ):
        run = subprocess.run(
            [sys.executable, "-c", MEMORY_PROBE, shape, ops],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        out[name] = float(run.stdout.split()[-1])
    return out


def server_models() -> dict[str, dict[str, int]]:
    """Models in a document built from each page, counted by type (no browser, no session)."""
    from collections import Counter

    from bokeh.document import Document

    from explorer.app import app

    out = {}
    for name, make in (("explorer", app), ("minimal", minimal_app)):
        doc = Document()
        doc.add_root(make().get_root(doc))
        out[name] = dict(Counter(type(m).__name__ for m in doc.models))
    return out


# ---------------------------------------------------------------------- browser


@contextlib.contextmanager
def served_pages():
    """The explorer at ``/`` (pages built ahead, as the command serves it) and at ``/cold``
    (each built on request), and the minimal app at ``/minimal``, in one server thread.

    Yields the base URL and the pool of pages built ahead (``None`` on a checkout
    without one).
    """
    import panel as pn
    from panel.io.state import state

    from explorer.app import app
    from explorer.testing import free_port, wait_for_port

    try:  # served as the command line serves the app (gzip, the bundles it uses)
        from explorer.serving import server_settings
        from explorer.testing import prepare_threaded
    except ImportError:  # an older checkout: Panel's defaults
        server_settings, prepare_threaded = dict, (lambda server, **kw: None)

    port = free_port()
    server = pn.serve(
        {"/": lambda: app(), "/cold": lambda: app(), "/minimal": lambda: minimal_app()},
        port=port,
        address="127.0.0.1",
        threaded=True,
        show=False,
        title="Candela Explorer",
        **server_settings(),
    )
    try:
        prepare_threaded(server, ready=2)
    except TypeError:  # a checkout without pages built ahead
        prepare_threaded(server)
    wait_for_port(port)
    pool = None
    for srv, *_ in list(state._servers.values()):
        if srv.port == port:
            context = srv._tornado._applications.get("/")
            pool = _pool_of(context)
    try:
        yield f"http://127.0.0.1:{port}/", pool
    finally:
        server.stop()


def load_once(browser, url: str, names: tuple[str, ...], source: str, cells: int = 4096) -> dict:
    """Open ``url`` in a fresh context (cold cache); paints, bytes and models of the load."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(PAINT_HOOK)
    responses, failed, ws = [], [], {"in": 0, "out": 0, "frames": 0, "in_sent": 0}
    page.on("response", lambda r: responses.append(r))
    page.on("requestfailed", lambda r: failed.append(r.url))
    # Playwright reports WebSocket payloads decompressed. When the server negotiated
    # permessage-deflate, what it sent is recomputed exactly as Tornado compresses: one
    # raw-deflate stream per connection at the server's level, each message flushed
    # with Z_SYNC_FLUSH and its 4-byte tail dropped.
    handshakes: list[str] = []
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.on(
        "Network.webSocketHandshakeResponseReceived",
        lambda e: handshakes.append(
            {k.lower(): v for k, v in e["response"]["headers"].items()}.get(
                "sec-websocket-extensions", ""
            )
        ),
    )

    def on_ws(sock):
        deflate: list = []

        def count(direction):
            def f(payload):
                data = payload.encode() if isinstance(payload, str) else payload
                ws[direction] += len(data)
                ws["frames"] += 1
                if direction == "in":
                    if not deflate and handshakes and "permessage-deflate" in handshakes[-1]:
                        try:
                            from explorer.serving import WEBSOCKET_COMPRESSION_LEVEL as level
                        except ImportError:
                            level = 6
                        deflate.append(zlib.compressobj(level, zlib.DEFLATED, -15, 8))
                    if deflate:
                        sent = deflate[0].compress(data) + deflate[0].flush(zlib.Z_SYNC_FLUSH)
                        ws["in_sent"] += len(sent) - 4
                    else:
                        ws["in_sent"] += len(data)

            return f

        sock.on("framereceived", count("in"))
        sock.on("framesent", count("out"))

    page.on("websocket", on_ws)
    page.goto(url, wait_until="commit")
    page.wait_for_function(
        f"() => window.Bokeh?.documents?.[0]?.get_model_by_name('{source}')?.data.x.length"
        f" === {cells}"
    )
    page.wait_for_function(SETTLED, arg=[0, QUIET_MS, list(names)], polling=50)
    rec = page.evaluate("() => window.__paints")
    if rec["error"]:
        raise RuntimeError(f"paint hook failed: {rec['error']}")
    timeline = page.evaluate("""() => {
        const nav = performance.getEntriesByType("navigation")[0];
        const r = window.__paints;
        const first = r.log.length ? r.log[0] : {t0: NaN, t1: NaN};
        const inbound = r.ws.filter((w) => w.dir === "in");
        const before = inbound.filter((w) => w.t < first.t0);
        return {
            "HTML received": nav.responseEnd,
            "DOMContentLoaded (scripts run)": nav.domContentLoadedEventEnd,
            "first WebSocket frame in": inbound[0]?.t ?? NaN,
            "last frame in before the first paint": before.at(-1)?.t ?? NaN,
            "first paint starts": first.t0,
            "first paint ends": first.t1,
            "last paint ends": r.last,
            "frame after the last paint": r.frame,
        };
    }""")
    models = page.evaluate("""() => {
        const counts = {};
        for (const m of Bokeh.documents[0].all_models) counts[m.type] = (counts[m.type] ?? 0) + 1;
        return counts;
    }""")
    http = []
    for r in responses:
        try:
            s = r.request.sizes()
        except Exception:  # a response without a body (e.g. the WebSocket upgrade)
            continue
        http.append(
            {
                "url": r.url,
                "bytes": s["responseHeadersSize"] + max(0, s["responseBodySize"]),
                "body": max(0, s["responseBodySize"]),
                "encoding": r.headers.get("content-encoding", ""),
            }
        )
    context.close()
    paints = {n: [p for p in rec["log"] if p["name"] == n] for n in names}
    return {
        "last_frame": rec["frame"],
        "last_paint": rec["last"],
        "paints": {n: len(v) for n, v in paints.items()},
        "primary": {n: sum(p["primary"] for p in v) for n, v in paints.items()},
        "paint_ms": sum(p["t1"] - p["t0"] for p in rec["log"]),
        "timeline": timeline,
        "models": models,
        "http": http,
        "failed": failed,
        "ws": ws,
    }


def edit_times(page, edits: list[str], input_css: str) -> tuple[list[float], list[dict], list]:
    """Type each pipeline and press Enter; ms from the Enter to the frame after the last paint.

    Also each edit's phases (ms after the Enter) and its paints per figure.
    """
    box = page.locator(f"{input_css} input")
    times, paints, phases = [], [], []
    for ops in edits:
        box.fill(ops)
        n = page.evaluate("() => window.__input.t.length")
        box.press("Enter")
        page.wait_for_function(f"() => window.__input.t.length > {n}")
        t0 = page.evaluate(f"() => window.__input.t[{n}]")
        page.wait_for_function(SETTLED, arg=[t0, QUIET_MS, []], polling=50)
        rec = page.evaluate(
            """(t0) => {
                const r = window.__paints;
                const log = r.log.filter((p) => p.t0 > t0);
                const ws = r.ws.filter((w) => w.t > t0);
                const inbound = ws.filter((w) => w.dir === "in" && w.t < r.last);
                return [r.frame, log, {
                    "first frame sent": ws.find((w) => w.dir === "out")?.t - t0,
                    "first frame received": inbound[0]?.t - t0,
                    "last frame received before the last paint": inbound.at(-1)?.t - t0,
                    "first paint starts": log[0].t0 - t0,
                    "last paint ends": r.last - t0,
                    "time inside paints": log.reduce((a, p) => a + p.t1 - p.t0, 0),
                }];
            }""",
            t0,
        )
        times.append(rec[0] - t0)
        paints.append(count_paints(rec[1]))
        phases.append(rec[2])
    return times, paints, phases


def count_paints(log: list[dict]) -> dict:
    return {
        n: (sum(p["primary"] for p in log if p["name"] == n),
            sum(not p["primary"] for p in log if p["name"] == n))
        for n in FIGURES
    }  # fmt: skip


def quiet_edit(page, act) -> dict:
    """Paints per figure (full, overlay only) in the settled window after ``act()``."""
    t0 = page.evaluate("() => performance.now()")
    act()
    # The server's answer has arrived once the page has been quiet for a while.
    page.wait_for_function(
        f"() => performance.now() - Math.max({t0}, window.__paints.last) > {2 * QUIET_MS}",
        polling=50,
    )
    log = page.evaluate(f"() => window.__paints.log.filter((p) => p.t0 > {t0})")
    return count_paints(log)


def bench_browser(quick: bool) -> dict:
    from playwright.sync_api import sync_playwright

    from explorer.testing import CHROMIUM, CHROMIUM_ARGS

    loads = 2 if quick else 4
    n_edits = 4 if quick else 10
    out: dict = {"loads": {"explorer": [], "minimal": [], "built ahead": [], "channels last": []}}
    with served_pages() as (base, pool), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pages = {
            "explorer": (base + "cold?shape=64,64", FIGURES, "logical-source"),
            "minimal": (base + "minimal", ("minimal-figure",), "cells-source"),
            # A real tensor: 16 images of 3x224x224 in channels-last order, 2.4 M elements
            # drawn as NumPy's edge items of each axis and a buffer overview.
            "channels last": (
                base + "cold?" + CHANNELS_LAST,
                FIGURES,
                "logical-source",
                channels_last_cells(),
            ),
        }
        if pool is not None:
            pages["built ahead"] = (base + "?shape=64,64", FIGURES, "logical-source")
        # One warm-up of each (the server's first session imports and builds more).
        for page_args in pages.values():
            load_once(browser, *page_args)
        for i in range(loads):
            order = list(pages) if i % 2 == 0 else list(pages)[::-1]
            for name in order:
                if name == "built ahead":  # as a student finds it: the pool has refilled
                    deadline = time.monotonic() + 60
                    while len(pool.ready) < pool.size and time.monotonic() < deadline:
                        time.sleep(0.1)
                out["loads"][name].append(load_once(browser, *pages[name]))
        out["pool"] = None if pool is None else {"taken": pool.taken, "built": pool.built}

        # Edits, in one page of the explorer at 64x64.
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.add_init_script(PAINT_HOOK)
        page.add_init_script(INPUT_HOOK)
        ws_in = []
        page.on(
            "websocket",
            lambda s: s.on("framereceived", lambda pl: ws_in.append(len(pl))),
        )
        page.goto(pages["explorer"][0])
        page.wait_for_function(
            "() => window.Bokeh?.documents?.[0]?.get_model_by_name('logical-source')"
            "?.data.x.length === 4096"
        )
        page.wait_for_function(SETTLED, arg=[0, QUIET_MS, list(FIGURES)], polling=50)
        ops = ".candela-ops-input"
        # The minimal app beside it, in a page of its own, edited in turn with it.
        mini = context.new_page()
        mini.add_init_script(PAINT_HOOK)
        mini.add_init_script(INPUT_HOOK)
        mini.goto(pages["minimal"][0])
        mini.wait_for_function(
            "() => window.Bokeh?.documents?.[0]?.get_model_by_name('cells-source')"
            "?.data.x.length === 4096"
        )
        mini.wait_for_function(SETTLED, arg=[0, QUIET_MS, ["minimal-figure"]], polling=50)
        box = ".minimal-input"
        # A page in the background gets its animation frames late: each is brought to
        # the front for its own edits.
        for where, css in ((page, ops), (mini, box)):  # warm-up
            where.bring_to_front()
            edit_times(where, [".transpose()", "", ".view((16, 256))", ""], css)
        for key, edit in (("walk", ".transpose()"), ("shape", ".view((16, 256))")):
            mark = len(ws_in)
            runs = {"explorer": ([], [], []), "minimal": ([], [], [])}
            for i in range(n_edits):
                text = edit if i % 2 == 0 else ""
                for name, where, css in (("explorer", page, ops), ("minimal", mini, box)):
                    where.bring_to_front()
                    for got, more in zip(runs[name], edit_times(where, [text], css)):
                        got.extend(more)
            out[f"{key}_ms"], out[f"{key}_paints"], out[f"{key}_phases"] = runs["explorer"]
            out[f"{key}_minimal_ms"] = runs["minimal"][0]
            out[f"{key}_ws"] = sum(ws_in[mark:]) / n_edits
        mini.close()
        page.bring_to_front()

        # Edits that change no figure's layout.
        chooser = page.locator(".candela-ops .bk-btn")
        out["quiet"] = {
            "op chooser: slice": quiet_edit(page, lambda: chooser.nth(1).click()),
            "op chooser: transpose": quiet_edit(page, lambda: chooser.nth(0).click()),
            "unit: float32": quiet_edit(
                page, lambda: page.locator(".candela-unit-select select").select_option("float32")
            ),
            "unit: elements": quiet_edit(
                page, lambda: page.locator(".candela-unit-select select").select_option("elements")
            ),
        }
        context.close()
        browser.close()
    return out


# ---------------------------------------------------------------------- report


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def goal(ok: bool) -> str:
    return "met" if ok else "NOT met"


def report_browser(b: dict, server: dict) -> None:
    ex, mi = b["loads"]["explorer"], b["loads"]["minimal"]
    fe, fm = med([r["last_frame"] for r in ex]), med([r["last_frame"] for r in mi])
    pairs = [a["last_frame"] / m["last_frame"] for a, m in zip(ex, mi)]
    print(
        "\n== first paint at 64x64 (navigation start -> frame after the last paint), cold cache;"
        " explorer: its page built on request"
    )
    for name, runs, m in (("explorer", ex, fe), ("minimal", mi, fm)):
        each = ", ".join(f"{r['last_frame']:.0f}" for r in runs)
        print(f"{name + ':':9} median {m:.0f} ms  ({each})")
    ratio = fe / fm
    print(
        f"ratio explorer/minimal: {ratio:.2f}x (per pair: {', '.join(f'{x:.2f}' for x in pairs)})"
        f"   goal <= {GOALS['first_paint_ratio']}x: {goal(ratio <= GOALS['first_paint_ratio'])}"
    )
    paints = ex[-1]["paints"]
    print(
        "paints during the load (explorer, last run): "
        + ", ".join(f"{n} {paints[n]} ({ex[-1]['primary'][n]} full)" for n in FIGURES)
        + f"; minimal: {mi[-1]['paints']['minimal-figure']}; "
        f"time inside paints {med([r['paint_ms'] for r in ex]):.0f} ms vs "
        f"{med([r['paint_ms'] for r in mi]):.0f} ms"
    )

    ahead = b["loads"].get("built ahead") or []
    if ahead:
        fa = med([r["last_frame"] for r in ahead])
        each = ", ".join(f"{r['last_frame']:.0f}" for r in ahead)
        pairs_a = [a["last_frame"] / m["last_frame"] for a, m in zip(ahead, mi)]
        print(
            f"built ahead (the explorer at /, served as the command serves it, a page built "
            f"while the server was idle): median {fa:.0f} ms  ({each})"
        )
        print(
            f"ratio built ahead/minimal: {fa / fm:.2f}x (per pair: "
            f"{', '.join(f'{x:.2f}' for x in pairs_a)})   goal <= "
            f"{GOALS['first_paint_ratio']}x: {goal(fa / fm <= GOALS['first_paint_ratio'])}; "
            f"pages taken from the pool: {b.get('pool')}"
        )
    print(
        "load timeline, ms after navigation start (medians): explorer | minimal"
        + (" | built ahead" if ahead else "")
    )
    for key in ex[-1]["timeline"]:
        a, m = med([r["timeline"][key] for r in ex]), med([r["timeline"][key] for r in mi])
        w = f" | {med([r['timeline'][key] for r in ahead]):7.0f}" if ahead else ""
        print(f"  {key:40} {a:7.0f} | {m:7.0f}{w}")

    print("\n== Bokeh models per session")
    me, mm = sum(ex[-1]["models"].values()), sum(mi[-1]["models"].values())
    se, sm = sum(server["explorer"].values()), sum(server["minimal"].values())
    print(f"in the page:  explorer {me}, minimal {mm}, ratio {me / mm:.1f}x")
    print(f"server side:  explorer {se}, minimal {sm}, ratio {se / sm:.1f}x")
    print(f"goal <= {GOALS['models']}: {goal(me <= GOALS['models'])}")
    top = sorted(ex[-1]["models"].items(), key=lambda kv: -kv[1])[:12]
    print("largest types (page): " + ", ".join(f"{t} {n}" for t, n in top))

    print("\n== bytes on first load at 64x64 (HTTP as sent + WebSocket payloads)")
    for name, runs in (("explorer", ex), ("minimal", mi)):
        r = runs[-1]
        http = sum(x["bytes"] for x in r["http"])
        enc = {x["encoding"] for x in r["http"] if x["encoding"]} or {"none"}
        ws = r["ws"]["in"] + r["ws"]["out"]
        sent = r["ws"]["in_sent"] + r["ws"]["out"]
        total = http + sent
        deflated = f", {r['ws']['in_sent'] / 1e3:.0f} KB in as sent" if sent != ws else ""
        line = (
            f"{name:9} HTTP {http / 1e3:8.0f} KB in {len(r['http'])} responses "
            f"(compression: {', '.join(sorted(enc))}); WebSocket {ws / 1e3:.0f} KB "
            f"({r['ws']['in'] / 1e3:.0f} KB in{deflated}, {r['ws']['out'] / 1e3:.0f} KB out, "
            f"{r['ws']['frames']} frames); total as sent {total / 1e6:.2f} MB"
        )
        if name == "explorer":
            line += f"   goal <= 1.2 MB: {goal(total <= GOALS['first_load_bytes'])}"
        print(line)
        if r["failed"]:
            print(f"  failed requests: {r['failed'][:5]}")
    ratio = (
        sum(x["bytes"] for x in ex[-1]["http"]) + ex[-1]["ws"]["in_sent"] + ex[-1]["ws"]["out"]
    ) / (sum(x["bytes"] for x in mi[-1]["http"]) + mi[-1]["ws"]["in_sent"] + mi[-1]["ws"]["out"])
    print(f"ratio explorer/minimal: {ratio:.2f}x")
    print("five largest HTTP responses (explorer):")
    for x in sorted(ex[-1]["http"], key=lambda x: -x["bytes"])[:5]:
        url = x["url"].split("/", 3)[-1]
        print(f"  {x['bytes'] / 1e3:8.0f} KB  {x['encoding'] or 'identity':8} /{url[:110]}")

    report_channels_last(b)

    print("\n== edits at 4,096 cells (Enter in the pipeline box -> frame after the last paint)")
    for key, label, limit in (
        ("walk", "walk only (.transpose() / back)", GOALS["click_ms"]),
        ("shape", "shape change (.view((16, 256)) / back)", GOALS["shape_edit_ms"]),
    ):
        t = b[f"{key}_ms"]
        full = [sum(p[n][0] for n in FIGURES) for p in b[f"{key}_paints"]]
        over = [sum(p[n][1] for n in FIGURES) for p in b[f"{key}_paints"]]
        print(
            f"{label:40} median {med(t):4.0f} ms, p95 {p95(t):4.0f} "
            f"(min {min(t):.0f}, max {max(t):.0f}, n={len(t)}); "
            f"paints per edit: {med(full):.0f} full + {med(over):.0f} overlay; "
            f"{b[f'{key}_ws'] / 1e3:.0f} KB received"
            f"   goal <= {limit} ms: {goal(med(t) <= limit)}"
        )
        m = b[f"{key}_minimal_ms"]
        pairs = [a / r for a, r in zip(t, m)]
        print(
            f"{'  minimal app, the same kind of change':40} median {med(m):4.0f} ms, "
            f"p95 {p95(m):4.0f} (n={len(m)}); ratio explorer/minimal {med(t) / med(m):.2f}x "
            f"(per pair: median {med(pairs):.2f}x)"
        )
        for phase in b[f"{key}_phases"][0]:
            print(f"    {phase:45} median {med([x[phase] for x in b[f'{key}_phases']]):5.0f} ms")
    ratio = med(b["shape_ms"]) / med(b["walk_ms"])
    print(f"ratio shape change / walk only: {ratio:.2f}x")

    print("\n== repaints for edits that change no figure's layout (full + overlay-only paints)")
    worst = 0
    for label, counts in b["quiet"].items():
        parts = ", ".join(f"{n} {f} + {o}" for n, (f, o) in counts.items())
        worst = max(worst, *(f + o for f, o in counts.values()))
        print(f"{label:24} {parts}")
    print(f"goal {GOALS['repaints']} repaints: {goal(worst == 0)}")


def report_channels_last(b: dict) -> None:
    ex, cl = b["loads"]["explorer"], b["loads"]["channels last"]
    if not cl:
        return
    memory = b.get("memory", {})

    def total(r):
        return sum(x["bytes"] for x in r["http"]) + r["ws"]["in_sent"] + r["ws"]["out"]

    rows = (
        ("time to last paint (ms, median)", med([r["last_frame"] for r in ex]),
         med([r["last_frame"] for r in cl]), 2.0),
        ("bytes on first load (MB)", total(ex[-1]) / 1e6, total(cl[-1]) / 1e6, 1.0),
        ("Bokeh models in the page", sum(ex[-1]["models"].values()),
         sum(cl[-1]["models"].values()), 1.0),
        ("server memory, state + columns (MB)", memory.get("64x64", float("nan")),
         memory.get("channels last", float("nan")), 1.0),
    )  # fmt: skip
    print(f"\n== the 16x3x224x224 channels-last page ({CHANNELS_LAST}) beside the 64x64 page")
    print(f"  {'':38} {'64x64':>10} {'channels last':>14} {'ratio':>7}  goal")
    for label, a, c, limit in rows:
        ratio = c / a if a else float("nan")
        print(
            f"  {label:38} {a:10.2f} {c:14.2f} {ratio:6.2f}x  <= {limit:g}x: {goal(ratio <= limit)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-browser", action="store_true", help="server-side figures only")
    parser.add_argument("--quick", action="store_true", help="fewer repeats (about 30 s)")
    args = parser.parse_args()
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores, {cpu_name()}, Python {platform.python_version()}; "
        f"load average at start {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
    )
    print(f"{'measure':28} {'elements':>9} {'median ms':>10} {'p95 ms':>8}")
    for name, n, m, p in bench_server(10 if args.quick else 40):
        print(f"{name:28} {n:>9,} {m:>10.1f} {p:>8.1f}")
    if args.no_browser:
        return
    server = server_models()
    b = bench_browser(args.quick)
    b["memory"] = server_memory()
    report_browser(b, server)
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    main()
