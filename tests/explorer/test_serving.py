"""How the app is served: gzip when asked, only the Bokeh bundles the page uses, a valid document.

Plain HTTP against the app served in-process (as the command line serves
it) and against ``candela-explorer`` itself; no browser (that is
``test_serving_browser.py``).
"""

from __future__ import annotations

import gzip
import http.client
import os
import re
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import bokeh
import pytest

from explorer.testing import free_port

BOKEH_JS = Path(bokeh.__file__).parent / "server" / "static" / "js"
#: A module name only Bokeh's WebGL bundle defines.
GL_MARK = "models/glyphs/webgl/multi_marker"


def panel_needs_bokeh_tables() -> bool:
    """Whether Panel's bundle imports Bokeh's table module when it runs (Panel 1.9's does, for
    its Tabulator; Panel 1.10 loads that only with a table)."""
    import panel

    bundle = Path(panel.__file__).parent / "dist" / "panel.min.js"
    return "@bokehjs/models/widgets/tables" in bundle.read_text(encoding="utf-8")


def request(url: str, path: str, gzip_ok: bool = True) -> tuple[int, dict, bytes]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        headers = {"Accept-Encoding": "gzip, deflate"} if gzip_ok else {}
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def script_srcs(page: str) -> list[str]:
    return re.findall(r'<script[^>]+src="([^"]+)"', page)


def decoded(headers: dict, body: bytes) -> bytes:
    return gzip.decompress(body) if headers.get("content-encoding") == "gzip" else body


def test_page_and_bokeh_js_are_gzipped_when_the_browser_asks(explorer_server):
    status, headers, body = request(explorer_server, "/?shape=3,4")
    assert status == 200
    assert headers.get("content-encoding") == "gzip"
    page = gzip.decompress(body).decode()
    assert "<title>Candela Explorer</title>" in page

    (bokeh_js,) = [src for src in script_srcs(page) if "/bokeh.min.js" in src]
    on_disk = (BOKEH_JS / "bokeh.min.js").read_bytes()
    # Twice: the second answer comes from the compressed copy the server keeps.
    answers = [request(explorer_server, "/" + bokeh_js.lstrip("/")) for _ in range(2)]
    for status, headers, body in answers:
        assert status == 200
        assert headers.get("content-encoding") == "gzip"
        assert "accept-encoding" in headers.get("vary", "").lower()
        assert len(body) < len(on_disk) / 2
        assert gzip.decompress(body) == on_disk
    assert answers[0][2] == answers[1][2]
    assert int(answers[1][1]["content-length"]) == len(answers[1][2])


def test_a_browser_that_does_not_ask_for_gzip_gets_plain_bytes(explorer_server):
    status, headers, body = request(explorer_server, "/", gzip_ok=False)
    assert status == 200 and "content-encoding" not in headers
    (bokeh_js,) = [src for src in script_srcs(body.decode()) if "/bokeh.min.js" in src]
    request(explorer_server, "/" + bokeh_js.lstrip("/"))  # a compressed copy now exists
    status, headers, body = request(explorer_server, "/" + bokeh_js.lstrip("/"), gzip_ok=False)
    assert status == 200 and "content-encoding" not in headers
    assert body == (BOKEH_JS / "bokeh.min.js").read_bytes()


def test_the_static_gzip_cache_reads_no_private_name_of_tornado():
    # Every private name CompressStaticOnce reads on itself is one it sets: a Tornado release
    # that renames its transform's fields (_gzipping, _compressible_type) must leave static
    # files compressed as Tornado compresses them, not fail every page's scripts.
    import ast
    import inspect
    import textwrap

    from explorer.serving import CompressStaticOnce

    tree = ast.parse(textwrap.dedent(inspect.getsource(CompressStaticOnce)))
    own = {n.target.id for n in tree.body[0].body if isinstance(n, ast.AnnAssign)}
    own |= {n.name for n in tree.body[0].body if isinstance(n, ast.FunctionDef)}
    read = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            (own if isinstance(node.ctx, ast.Store) else read).add(node.attr)
    assert read and read <= own, sorted(read - own)


def test_a_cached_file_is_still_answered_304_when_the_browser_has_it(explorer_server):
    _, _, body = request(explorer_server, "/", gzip_ok=False)
    (src,) = [s for s in script_srcs(body.decode()) if "/bokeh-widgets.min.js" in s]
    status, headers, _ = request(explorer_server, "/" + src.lstrip("/"))
    parts = urlsplit(explorer_server)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.request(
            "GET",
            "/" + src.lstrip("/"),
            headers={"Accept-Encoding": "gzip", "If-None-Match": headers["etag"]},
        )
        response = conn.getresponse()
        assert response.status == 304 and response.read() == b""
    finally:
        conn.close()


def test_the_websocket_is_compressed_for_a_browser_that_offers_it(explorer_server):
    import asyncio
    import concurrent.futures
    import json

    from tornado.websocket import websocket_connect

    _, headers, body = request(explorer_server, "/?shape=64,64")
    token = re.search(r'"token":\s*"([^"]+)"', decoded(headers, body).decode()).group(1)
    ws_url = explorer_server.replace("http://", "ws://") + "ws"

    async def pull(offer: bool) -> tuple[str, int]:
        options = {} if offer else None  # {} offers permessage-deflate, as browsers do
        ws = await websocket_connect(
            ws_url, subprotocols=["bokeh", token], compression_options=options
        )
        try:
            extensions = ws.headers.get("Sec-WebSocket-Extensions", "")
            assert json.loads(await ws.read_message())["msgtype"] == "ACK"
            await ws.read_message(), await ws.read_message()
            for part in ({"msgid": "1", "msgtype": "PULL-DOC-REQ"}, {}, {}):
                await ws.write_message(json.dumps(part))
            header = json.loads(await ws.read_message())
            assert header["msgtype"] == "PULL-DOC-REPLY"
            await ws.read_message()
            content = await ws.read_message()  # the whole document, decompressed
            return extensions, len(content)
        finally:
            ws.close()

    # Each on an event loop of its own thread: a browser test before this one may leave
    # Playwright's loop running in this thread, where asyncio.run refuses to start.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        offered, size = pool.submit(asyncio.run, pull(offer=True)).result()
        plain, plain_size = pool.submit(asyncio.run, pull(offer=False)).result()
    assert "permessage-deflate" in offered and size > 100_000
    assert plain == "" and plain_size == size


def test_the_page_loads_the_bokeh_bundles_it_needs(explorer_server):
    _, headers, body = request(explorer_server, "/")
    names = [Path(urlsplit(src).path).name for src in script_srcs(decoded(headers, body).decode())]
    assert "bokeh.min.js" in names and "bokeh-widgets.min.js" in names
    if panel_needs_bokeh_tables():  # Panel's own bundle needs it to load
        assert "bokeh-tables.min.js" in names


def test_the_offline_page_inlines_no_webgl_bundle():
    from explorer.export import export_html
    from explorer.state import ExplorerState

    page = export_html(ExplorerState(shape=(3, 4)))
    assert (BOKEH_JS / "bokeh-gl.min.js").read_text().count(GL_MARK) == 1
    assert GL_MARK not in page
    # The bundles it uses are still inline: widgets, and tables where Panel's bundle needs it.
    assert '"models/widgets/button"' in page
    if panel_needs_bokeh_tables():
        assert "models/widgets/tables/data_table" in page


def test_the_served_document_passes_bokehs_validation_the_server_skips():
    # The server skips Bokeh's per-session document validation (it only logs, and
    # walks every model of every session); the page is checked here instead.
    from bokeh.core.validation.check import check_integrity
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from explorer.app import app

    doc = Document()
    with set_curdoc(doc):
        app().server_doc(doc)
    models = set()
    for root in doc.roots:
        models |= root.references()
    issues = check_integrity(models)
    assert len(models) > 50
    assert issues.error == []
    # Panel's server silences EMPTY_LAYOUT itself: an empty column is a placeholder here.
    assert [w for w in issues.warning if w.name != "EMPTY_LAYOUT"] == []


def _page_json(query: str) -> dict:
    """The document a browser pulls for the page at ``query``, with ids by first appearance."""
    import json

    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from explorer.app import Explorer

    doc = Document()
    with set_curdoc(doc):
        ex = Explorer()
        ex.open_url(query)
        ex.__panel__().server_doc(doc)
    sent = doc.to_json()  # Bokeh's Serialized: the JSON, with binary buffers in place
    text = json.dumps(sent.content, sort_keys=True, default=lambda b: b.to_bytes().hex())
    ids: dict[str, str] = {}
    for found in re.findall(r'"id": "([^"]+)"', text):
        ids.setdefault(found, f"m{len(ids)}")
    text = re.sub(
        r'"(id": "|__ref:)([^"]+)"', lambda m: f'"{m.group(1)}{ids.get(m.group(2), "?")}"', text
    )
    # Panel names each of its objects after a process-wide counter ("Row00152").
    return json.loads(re.sub(r'"name": "(\w+?)\d{5}"', r'"name": "\1#"', text))


@pytest.mark.parametrize(
    "query",
    [
        "",
        "?shape=64,64",
        "?shape=2,3,4&ops=.permute((2,0,1)).slice(s[:, ::-1])",
        "?lesson=transpose&step=2&unit=float32&presenter=1",
    ],
)
def test_lean_serialization_sends_the_document_bokeh_would(query):
    # The server sends a page without working out values left at their defaults
    # (explorer.patches.lean_serialization); a browser must receive the same document.
    from explorer.patches.lean_serialization import set_lean

    set_lean(False)
    try:
        bokehs = _page_json(query)
    finally:
        set_lean(True)
    try:
        lean = _page_json(query)
    finally:
        set_lean(False)
    assert len(bokehs["roots"]) >= 2
    assert lean == bokehs


def test_the_command_line_server_sends_gzip():
    import subprocess

    root = Path(__file__).resolve().parents[2]
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", "--no-browser", "--port", str(port)],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                status, headers, body = request(url, "/")
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("candela-explorer did not answer within 60 s")
                time.sleep(0.2)
        assert status == 200 and headers.get("content-encoding") == "gzip"
        srcs = script_srcs(gzip.decompress(body).decode())
        (bokeh_js,) = [s for s in srcs if "/bokeh.min.js" in s]
        status, headers, body = request(url, "/" + bokeh_js.lstrip("/"))
        assert status == 200 and headers.get("content-encoding") == "gzip"
        assert gzip.decompress(body) == (BOKEH_JS / "bokeh.min.js").read_bytes()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.mark.parametrize(
    ("css_class", "value"),
    [
        ("candela-ops-input", ".transpose()"),
        ("candela-shape-input", "4,5"),
        ("candela-unit-select", "float32"),
    ],
)
@pytest.mark.patched("no_debounce")
def test_a_change_from_the_page_is_handled_at_once(explorer_server, monkeypatch, css_class, value):
    # Panel holds a change from the page for 50 ms in case more follow (a slider dragged):
    # a fixed 50 ms on every edit. The explorer's lists send one change per action, so
    # theirs are handled at once: no waiting callback is scheduled for them. A text box
    # sends its text, then an event (explorer/enter_box.mjs), on which Panel handles the
    # waiting change at once: handled before any waiting callback is due.
    from bokeh.document import Document

    from explorer.enter_box import EnterBox
    from explorer.testing import BokehClient, run_in_thread

    waits: list = []
    order: list = []
    add = Document.add_timeout_callback
    handle = EnterBox._change_event

    def add_timeout_callback(self, callback, timeout_milliseconds):
        waits.append(timeout_milliseconds)

        def due(*args, **kwargs):
            order.append("due")
            return callback(*args, **kwargs)

        return add(self, due, timeout_milliseconds)

    def change_event(self, doc):
        if self._events:
            order.append("handled")
        return handle(self, doc)

    monkeypatch.setattr(Document, "add_timeout_callback", add_timeout_callback)
    monkeypatch.setattr(EnterBox, "_change_event", change_event)
    port = urlsplit(explorer_server).port
    box = css_class != "candela-unit-select"

    async def change() -> dict:
        client = BokehClient(port)
        await client.open("/?shape=3,4")
        waits.clear()
        if box:  # its text, then its event, as the page's box sends them
            await client.enter(css_class, value)
        else:
            model = client.model_id(css_class)
            event = {"kind": "ModelChanged", "model": {"id": model}, "attr": "value", "new": value}
            await client.send("PATCH-DOC", {"events": [event]})
        got: dict = {}
        while "fields" not in got:  # until the fields panel shows the change
            header, content = await client.read()
            for ev in content.get("events", []):
                if ev.get("attr") == "text" and "candela-fields" in str(ev.get("new")):
                    got["fields"] = ev["new"]
        await client.close()
        return got

    fields = run_in_thread(change)["fields"]
    assert {"candela-ops-input": "(4, 3)", "candela-shape-input": "(4, 5)"}.get(
        css_class, "bytes (float32)"
    ) in fields
    if box:
        assert order and order[0] == "handled", (order, waits)
    else:
        assert waits and max(waits) == 0, waits


@pytest.mark.patched("one_write_per_message")
def test_the_answer_to_an_edit_is_sent_without_waiting_for_the_websocket(
    explorer_server, monkeypatch
):
    # Bokeh writes its reply to each message frame by frame under the WebSocket's write
    # lock. A change handled in a gap between those frames found the lock held when its
    # answer was ready, and Panel then sent the answer after a 10 ms sleep. Every edit's
    # answer must go out without that retry.
    import asyncio
    import types

    import panel.io.document as panel_document

    from explorer.testing import BokehClient, run_in_thread

    sleeps: list[float] = []

    async def sleep(delay, *args, **kwargs):
        sleeps.append(delay)
        return await asyncio.sleep(delay, *args, **kwargs)

    # Only Panel's document module sees the recording sleep (its write retries).
    spy = types.SimpleNamespace(**{k: getattr(asyncio, k) for k in dir(asyncio) if k[0] != "_"})
    spy.sleep = sleep
    monkeypatch.setattr(panel_document, "asyncio", spy)
    port = urlsplit(explorer_server).port

    async def edits() -> list[float]:
        client = BokehClient(port)
        await client.open("/?shape=64,64")
        sleeps.clear()
        times = [await client.edit(ops) for ops in (".transpose()", "", ".flip(0)", "")]
        await client.close()
        return times

    times = run_in_thread(edits)
    assert len(times) == 4  # each edit's new column data came back
    assert sleeps == [], sleeps


@pytest.mark.patched("one_write_per_message")
def test_each_message_to_the_page_goes_to_the_socket_in_one_write(explorer_server, monkeypatch):
    # Bokeh's protocol sends a message as several WebSocket frames (at 64x64 an edit's
    # answer carries five binary columns: 13 frames; Bokeh's reply to the page's message
    # is 3), and each was its own write to the socket. Each message is one write now.
    from tornado.iostream import IOStream

    from explorer.testing import BokehClient, run_in_thread

    writes: list[int] = []  # frames in each write
    write = IOStream.write

    def counted(self, data, *args, **kwargs):
        data = bytes(data)
        if len(data) > 1 and data[0] & 0x0F in (1, 2) and not data[1] & 0x80:
            writes.append(len(frames_in(data)))  # from the server (a client's are masked)
        return write(self, data, *args, **kwargs)

    monkeypatch.setattr(IOStream, "write", counted)
    port = urlsplit(explorer_server).port

    async def edits() -> list[list[int]]:
        client = BokehClient(port)
        await client.open("/?shape=64,64")
        each = []
        for ops in (".transpose()", "", ".flip(0)"):
            await client.drain(0.3)
            writes.clear()
            await client.edit(ops)  # returns once the new column data is in, decoded
            await client.drain(0.3)
            each.append(list(writes))
        await client.close()
        return each

    for frames in run_in_thread(edits):
        # Bokeh's reply to each of the page's two messages (the box's text, its event),
        # then the whole answer: the answer's header, metadata, content and each column's
        # name and bytes.
        assert len(frames) == 3, frames
        assert sorted(frames)[:2] == [3, 3] and max(frames) >= 3 + 2 * 2, frames


def frames_in(data: bytes) -> list[bytes]:
    """The payloads of the unmasked WebSocket frames ``data`` holds, whole, in order."""
    out, at = [], 0
    while at < len(data):
        size, at = data[at + 1] & 0x7F, at + 2
        if size >= 126:
            width = 2 if size == 126 else 8
            size, at = int.from_bytes(data[at : at + width], "big"), at + width
        out.append(data[at : at + size])
        at += size
    assert at == len(data), "a write ends inside a frame"
    return out


def test_an_edit_from_the_page_flips_panels_busy_state_once_at_most(explorer_server):
    # Panel counts each change from a page as busy work, through process-wide parameters
    # (``pn.state.busy``): about 0.8 ms a flip, a tenth of an edit's server time. The
    # explorer shows no busy indicator, so its boxes' changes are not counted; the box's
    # event after its text (explorer/enter_box.mjs) is, as every event is: once an edit.
    import panel as pn

    from explorer.testing import BokehClient, run_in_thread

    flips: list[bool] = []
    watcher = pn.state.param.watch(lambda e: flips.append(e.new), "busy")
    port = urlsplit(explorer_server).port

    async def edits() -> list[float]:
        client = BokehClient(port)
        await client.open("/?shape=3,4")
        times = [await client.edit(ops) for ops in (".transpose()", "", ".flip(0)")]
        await client.enter("candela-shape-input", "4,5")
        await client.drain(0.5)
        await client.close()
        return times

    try:
        times = run_in_thread(edits)
    finally:
        pn.state.param.unwatch(watcher)
    assert len(times) == 3  # each edit's new column data came back
    assert len(flips) <= 2 * 4 and flips == [True, False] * (len(flips) // 2), flips


#: The "Performance" issue's budget of Bokeh models a session sends its page: each one is
#: built, serialised, sent and turned into views on every page load. 100, and 15 for the
#: cost panel (a figure of its own: its units, the unit lit, their hover; two choices),
#: and 4 for the text boxes, each a component and its data (explorer.enter_box: no
#: message per key, served or in a notebook).
MODEL_BUDGET = 119


def test_a_served_page_stays_within_its_budget_of_models(explorer_server):
    # Counted as the page receives them (its pulled document), so the models Panel adds
    # to a served page (the URL's, the browser report's) count too.
    from collections import Counter

    from explorer.testing import BokehClient, run_in_thread

    port = urlsplit(explorer_server).port

    async def pull() -> dict:
        client = BokehClient(port)
        await client.open("/?shape=64,64")
        await client.close()
        return client.models()

    models = run_in_thread(pull)
    kinds = Counter(models.values())
    assert len(models) <= MODEL_BUDGET, kinds.most_common()
    # Models that hold no per-source state are shared by each figure's renderers: one
    # scale for both figures, one filter; a view per source drawn (the browser sizes a
    # view's row mask to its source), and the frames source draws nothing.
    assert kinds["LinearScale"] == 1 and kinds["AllIndices"] == 1, kinds
    assert kinds["CDSView"] == kinds["ColumnDataSource"] - 1, kinds
    assert "BrowserInfo" not in str(kinds), kinds


#: Prints, in a fresh process, each per-process change of ``explorer.serving.lean_process`` as
#: in force or not.
PROCESS_STATE = """
import json, sys
import panel as pn
from bokeh.core.has_props import HasProps
from bokeh.protocol.message import Message
from bokeh.settings import settings
from panel.io import document

from explorer import serving
from explorer.patches.lean_serialization import _query_properties_with_values

if sys.argv[1] == "app":  # as `panel serve explorer/app.py` runs the file
    import runpy

    runpy.run_path("explorer/app.py", run_name="bokeh_app_candela")
elif sys.argv[1] == "lean":
    serving.lean_process()
marked = lambda f: bool(getattr(f, "_candela", False))
print(json.dumps({
    "validation": settings.perform_document_validation(),
    "browser_info": pn.config.browser_info,
    "lean_serialization": HasProps.query_properties_with_values
    is _query_properties_with_values,
    "long_query_numbers": sys.get_int_max_str_digits(),
    "no_debounce": pn.widgets.TextInput._debounce == 0,
    "one_write": marked(document.dispatch_tornado) and Message.send.__name__ == "send_at_once",
    "collect_at_a_pause": marked(document._garbage_collect),
}))
"""


@pytest.mark.patched("lean_serialization")
def test_panel_serve_of_the_app_file_makes_every_change_the_command_line_makes():
    # `panel serve explorer/app.py` has no prepare_server: its block in app.py once
    # listed the changes one by one and missed one, so its sessions answered each edit
    # in 13 writes where the command line's take one.
    import json
    import subprocess

    root = Path(__file__).resolve().parents[2]

    def state(how: str) -> dict:
        out = subprocess.run(
            [sys.executable, "-c", PROCESS_STATE, how],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
        return json.loads(out.strip().splitlines()[-1])

    bare, lean, app = state("bare"), state("lean"), state("app")
    assert all(bare[k] != lean[k] for k in lean), (bare, lean)  # each change shows
    assert app == lean


@pytest.fixture
def collections_seen(monkeypatch):
    """``.ask()`` asks for a collection as Panel does; ``.seen``, each full collection
    :func:`explorer.patches.collect_at_a_pause.collect_at_a_pause` runs then, and each trim, in order, with
    when (``time.monotonic()``); nothing collected for real. Only those
    run in the thread that asks first: a server another test left running may end a
    session meanwhile, and Panel asks for its collection in that server's thread."""
    import threading
    import types

    from explorer.patches import collect_at_a_pause as collection

    seen: list[tuple[str, float]] = []
    asker: list[int] = []

    def note(what: str, when: float) -> None:
        if asker and threading.get_ident() == asker[0]:
            seen.append((what, when))

    ask = collection._garbage_collect

    def first_ask() -> None:
        asker[:] = asker or [threading.get_ident()]
        ask()

    fake_gc = types.SimpleNamespace(collect=lambda: note("collect", time.monotonic()))
    monkeypatch.setattr(collection, "gc", fake_gc)
    monkeypatch.setattr(collection, "_malloc_trim", lambda: lambda _pad: note("trim", 0.0))
    seen_and_ask = types.SimpleNamespace(seen=seen, ask=first_ask)
    monkeypatch.setitem(collection._COLLECTION, "asked", None)
    return seen_and_ask


@pytest.mark.parametrize(
    "talk_s, session_ended_s_ago, collections",
    [
        # all quiet: at once; asked again 0.3 s later (another session ended), again
        (0.0, 10.0, 2),
        # pages talking: once they stop, after the pause; asked again while it waits: once
        (0.6, 10.0, 1),
        (3.0, 10.0, 1),  # they never stop: at the latest, 1.5 s after asked
        (0.0, 0.0, 1),  # a session just ended (another may follow): Panel's 0.5 s
    ],
)
def test_ended_sessions_are_collected_at_a_pause_of_the_pages(
    collections_seen, monkeypatch, talk_s, session_ended_s_ago, collections
):
    # A full collection holds the server for ~13 ms a session open (0.46 s with 30):
    # Panel ran it 5 s after a session ended, whoever was editing then.
    import asyncio

    from explorer.patches import collect_at_a_pause as collection
    from explorer.testing import run_in_thread

    quiet_s, within_s, debounce_s = 0.25, 1.5, 0.5
    monkeypatch.setattr(collection, "COLLECT_QUIET_S", quiet_s)
    monkeypatch.setattr(collection, "COLLECT_WITHIN_S", within_s)
    start = time.monotonic()
    ended = start - session_ended_s_ago
    # Panel's rule (5 s after the last session ended, here 0.5 s) and this test's pages:
    # the servers other tests left running end sessions and get messages meanwhile.
    monkeypatch.setattr(collection, "_session_ended", lambda: ended + debounce_s)
    talked = [-1e9]
    monkeypatch.setattr(collection, "last_message", lambda: talked[0])

    def talk() -> None:
        if time.monotonic() - start < talk_s:
            talked[0] = time.monotonic()  # a page's message

    async def go() -> None:
        talk()
        collections_seen.ask()  # as Panel asks
        asked_again = False
        while time.monotonic() - start < 2.5:
            talk()
            if not asked_again and time.monotonic() - start >= 0.3:
                collections_seen.ask()
                asked_again = True
            await asyncio.sleep(0.05)

    run_in_thread(go)
    seen = collections_seen.seen
    assert [what for what, _ in seen] == ["collect", "trim"] * collections
    due = min(max(start, talked[0] + quiet_s, ended + debounce_s), start + within_s)
    assert due - 0.01 <= seen[0][1] <= due + 0.3, (
        seen[0][1] - start,
        due - start,
    )


@pytest.mark.parametrize("waiting_for_s, collects", [(1.0, False), (40.0, True)])
def test_a_collection_left_waiting_by_a_stopped_server_does_not_stop_the_next(
    collections_seen, monkeypatch, waiting_for_s, collects
):
    # One collection waits at a time, on the loop of the server that asked; a server
    # stopped meanwhile never runs it, and every later ask found one waiting.
    from explorer.patches import collect_at_a_pause as collection
    from explorer.testing import run_in_thread

    monkeypatch.setattr(collection, "last_message", lambda: 0.0)
    monkeypatch.setattr(collection, "_session_ended", lambda: 0.0)
    monkeypatch.setitem(collection._COLLECTION, "asked", time.monotonic() - waiting_for_s)

    async def go() -> None:
        collections_seen.ask()

    run_in_thread(go)
    assert [what for what, _ in collections_seen.seen] == (["collect", "trim"] if collects else [])


@pytest.mark.patched("collect_at_a_pause")
def test_a_closed_pages_session_is_freed_at_the_next_pause_of_the_pages(monkeypatch):
    # Served for real: Panel's own clean-up of an ended session reaches the collection,
    # which waits while another page edits, then frees the whole session.
    import asyncio
    import gc
    import weakref

    import panel as pn
    import panel.io.document as panel_document

    from explorer.app import app
    from explorer.patches import collect_at_a_pause as collection
    from explorer.testing import BokehClient, run_in_thread, served_app

    monkeypatch.setattr(collection, "COLLECT_QUIET_S", 0.5)
    # A page of another test's server still open may talk meanwhile (messages are the
    # process's): then it runs at the latest, 3 s after Panel asked, after the edits.
    monkeypatch.setattr(collection, "COLLECT_WITHIN_S", 3.0)
    monkeypatch.setattr(panel_document, "GC_DEBOUNCE", 0.2)
    monkeypatch.setitem(collection._COLLECTION, "asked", None)  # none waiting from another test
    now = time.monotonic
    # Panel schedules one collection of a name for the whole process, on the loop of the
    # server whose session ended: as if a server stopped since had one waiting (which
    # stopped every later collection in the process), the ended session must still go.
    monkeypatch.setitem(pn.state._scheduled, f"{os.getpid()}_gc.collect", (iter(()), print))
    documents: list = []

    def make():
        documents.append(weakref.ref(pn.state.curdoc))
        return app()

    done = collection._COLLECTION["done"]  # the last few collections (when, ms)

    def count() -> int:  # collections so far in the process
        return collection._COLLECTION["count"]

    with served_app(
        make, unused_session_lifetime_milliseconds=100, check_unused_sessions_milliseconds=100
    ) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))

        async def go() -> dict:
            leaving, staying = BokehClient(port), BokehClient(port)
            await leaving.open("/?shape=4,3")
            await staying.open("/?shape=4,3")
            before = count()
            await leaving.close()
            t0, n = time.monotonic(), 0
            while time.monotonic() - t0 < 2.0:  # the session ends meanwhile (~0.3 s)
                n += 1
                await staying.edit(".transpose()" if n % 2 else "")
                await asyncio.sleep(0.1)
            stopped = time.monotonic()
            while_editing = count() - before
            while count() == before and time.monotonic() - stopped < 6:
                await asyncio.sleep(0.05)
            found = {"while editing": while_editing, "after": count() - before}
            found["waited"] = done[-1][0] - stopped if count() > before else None
            # (what it waited on, if it did not run)
            found["asked s ago"] = (
                collection._COLLECTION["asked"] and now() - collection._COLLECTION["asked"]
            )
            found["last message s ago"] = now() - collection.last_message()
            found["panel scheduled"] = [k for k in pn.state._scheduled if "gc.collect" in k]
            await staying.close()
            return found

        found = run_in_thread(go)
    assert found["while editing"] == 0, found
    assert found["after"] == 1, f"{found}"
    assert found["waited"] >= 0.4, found  # a pause of the pages, not the end of an edit
    gc.collect()
    assert documents[0]() is None  # nothing of the closed page's session is left


def test_sessions_opened_and_closed_leave_nothing_behind():
    # A class opens and closes hundreds of sessions: each must take all it held with it.
    # Rounds of the same 8 pages (opened, edited, closed), after the first has filled what
    # is kept for every session (explorer.kept): with each page's explorer kept by mistake,
    # each round left ~32,000 blocks a session behind (250,000-270,000); as it is, 22-96.
    import asyncio
    import gc

    import panel as pn

    from explorer.testing import BokehClient, run_in_thread, served_app

    with served_app(
        ready=0, unused_session_lifetime_milliseconds=100, check_unused_sessions_milliseconds=100
    ) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        server = next(s for s, *_ in pn.state._servers.values() if s.port == port)

        async def one_round() -> None:
            for _ in range(2):
                clients = [BokehClient(port) for _ in range(4)]
                await asyncio.gather(*(c.open("/?shape=8,6") for c in clients))
                for n, c in enumerate(clients):
                    await c.edit(".transpose()" if n % 2 else ".slice(s[1:])")
                for c in clients:
                    await c.close()
            deadline = time.monotonic() + 30
            while server.get_sessions() and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.3)

        blocks = []
        for _ in range(4):
            run_in_thread(one_round)
            assert not server.get_sessions()
            gc.collect()
            blocks.append(sys.getallocatedblocks())
    grown = [b - a for a, b in zip(blocks[1:], blocks[2:], strict=False)]
    assert max(grown) < 8 * 2_000, (blocks, grown)  # less than a sixteenth of a session each


FREEZE = """
import gc, json
import explorer.app  # as prepare_server has it imported
from explorer import serving

serving.freeze_lasting()
first = gc.get_freeze_count()
later = [[] for _ in range(1000)]  # as a session's objects, made after the server starts
serving.freeze_lasting()
print(json.dumps({"first": first, "again": gc.get_freeze_count()}))
"""


def test_what_the_process_holds_before_it_serves_is_frozen_once():
    # ~146,000 objects (modules, classes) walked by every full collection: 130 ms each
    # time. Frozen again later, an open session's garbage would never be collected.
    import json
    import subprocess

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", FREEZE], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["first"] > 100_000, found  # Panel, Bokeh, NumPy and the explorer
    assert found["again"] == found["first"], found


def test_glibcs_trim_is_found_and_runs_here():
    from explorer.patches.collect_at_a_pause import _malloc_trim

    trim = _malloc_trim()
    assert trim is not None  # these machines run glibc: the server's memory can go back
    assert trim(0) in (0, 1)
