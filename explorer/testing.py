"""Serving the app in-process and launching Debian's Chromium, for tests, benchmarks and screenshots.

One place for what the browser-driving code shares: where Chromium is, the
flags it needs on a machine with no network but package registries (without
the background-networking flags it keeps dialling closed addresses), a free
port, and the app served on it. Importing this module imports no Panel.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: The project's folder: the command runs from there, as from a checkout.
ROOT = Path(__file__).resolve().parents[1]

#: Debian's Chromium (Playwright cannot download its own browser here).
CHROMIUM = os.environ.get("CANDELA_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


#: A browser-side function ``(m) => (figure, mark) => cells``: given a model finder
#: ``m(name)``, the cells a mark (``"cursor"``, ``"hover"``) frames in a figure
#: (``"logical"``, ``"buffer"``), as columns ``x``, ``y``, ``k``, ``pos`` with one
#: entry per cell (a marks source has a row per ring).
MARKS_JS = """(m) => (fig, kind) => {
  const d = m(`marks-${fig}-source`).data, out = {x: [], y: [], k: [], pos: []};
  for (let i = 0; i < d.mark.length; i++) {
    if (d.mark[i] !== kind || d.ring[i] !== 0) continue;
    for (const key of Object.keys(out)) out[key].push(d[key][i]);
  }
  return out;
}"""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def served_app(make=None, ready: int | None = None, **serve: Any) -> Iterator[str]:
    """The explorer (or the page ``make()`` builds) served in a thread on a free port.

    As the command line serves it: the explorer with ``ready`` pages built
    ahead (:mod:`explorer.pool`; default 2), another page with none (it may
    well show one object in every session); ``serve``, more keyword arguments
    for :func:`panel.serve`. Yields its base URL, then stops the server.
    """
    import panel as pn

    from explorer.app import app
    from explorer.serving import server_settings

    ready = (2 if make is None else 0) if ready is None else ready
    make = make or app

    port = free_port()
    server = pn.serve(
        {"/": lambda: make()},  # a function: Panel serves other callables as objects
        port=port,
        address="127.0.0.1",
        threaded=True,
        show=False,
        title="Candela Explorer",
        **server_settings(),  # served as the command line serves it
        **serve,
    )
    prepare_threaded(server, ready=ready)
    wait_for_port(port)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.stop()
        # Its thread ended: nothing of it runs into what follows (a server thread shares
        # Bokeh's global curdoc() with the tests after it).
        server.join(timeout=60)
        if server.is_alive():
            raise RuntimeError(
                f"the server on port {port} was still running 60 s after it was stopped"
            )


def prepare_threaded(thread, timeout: float = 20.0, ready: int = 0) -> None:
    """:func:`explorer.cli.prepare` for a server ``pn.serve(threaded=True)`` starts.

    The server is built in its thread; this waits until it exists, before any
    request is made.
    """

    from panel.io.state import state

    from explorer.cli import prepare

    deadline = time.monotonic() + timeout
    while thread.server_id not in state._servers:  # Panel's registry of its servers
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server thread did not start a server")
        time.sleep(0.02)
    prepare(state._servers[thread.server_id][0], ready=ready)


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    """Return once something accepts connections on 127.0.0.1:``port`` (a server in a thread)."""

    deadline = time.monotonic() + timeout
    while True:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f} s")
        time.sleep(0.05)


def start_command(
    args: list[str], env: dict | None = None, program: list[str] | None = None
) -> subprocess.Popen:
    """``python -m explorer --no-browser ARGS`` as a person starts it, in the project's folder
    (or ``program`` + ARGS, e.g. the ``candela-explorer`` script or ``panel serve``).

    Its output (both streams, unbuffered) is read as text lines from ``.stdout``;
    ``env`` adds to the environment. Stop it with :func:`stop_command`. Ctrl+C
    (SIGINT) reaches it as in a terminal even when the tests themselves were
    started in the background, where the shell has them ignore it.
    """
    return subprocess.Popen(
        [*(program or [sys.executable, "-m", "explorer", "--no-browser"]), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "BROWSER": "true", **(env or {})},
        preexec_fn=_as_in_a_terminal if os.name == "posix" else None,
    )


def _as_in_a_terminal() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_url(
    proc: subprocess.Popen, timeout: float = 90, until: str = "Candela Explorer: http://"
) -> list[str]:
    """The command's lines up to the one that prints its URL (or starts with ``until``).

    An AssertionError, with what it printed, if none comes within ``timeout`` s; the
    command is then killed, so a command that hangs without printing cannot hang the
    caller. The lines are read in a thread, which ends at that line or at the output's end;
    what follows is left in the pipe for the caller (e.g. :func:`stop_command`).
    """
    import queue
    import threading

    lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()

    def read() -> None:
        # A byte at a time from the pipe itself: nothing after the URL's line is read
        # ahead into a buffer that stop_command's reading of the pipe would not see.
        fd, line = proc.stdout.fileno(), bytearray()
        while byte := os.read(fd, 1):
            line += byte
            if byte == b"\n":
                text = line.decode(errors="replace").replace("\r\n", "\n")
                line.clear()
                lines.put(text)
                if text.startswith(until):
                    return
        lines.put(None)  # the output ended

    threading.Thread(target=read, daemon=True, name="wait-for-url").start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if line.startswith(until):
            return seen
    if proc.poll() is None:
        proc.kill()
    raise AssertionError(f"the command printed no URL within {timeout:g} s:\n" + "".join(seen))


def stop_command(proc: subprocess.Popen, timeout: float = 30) -> str:
    """Stop the command as a service manager would (SIGTERM; killed if it will not stop),
    and give what it printed."""
    if proc.poll() is None:
        proc.terminate()
    try:
        return proc.communicate(timeout=timeout)[0] or ""
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate(timeout=10)[0] or ""


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB, from ``/proc`` (Linux)."""
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def pss_mb(pid: int) -> float:
    """A process's proportional memory in MB (``/proc``, Linux): each page it shares with
    other processes (a worker with the process it was forked from) counted as its share."""
    with open(f"/proc/{pid}/smaps_rollup") as handle:
        for line in handle:
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used, user and system, from ``/proc`` (Linux)."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        fields = handle.read().decode().rsplit(")", 1)[-1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process it started, and theirs (``/proc``, Linux): the command and
    its workers."""
    out, todo = [], [pid]
    while todo:
        parent = todo.pop()
        out.append(parent)
        for task in Path(f"/proc/{parent}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo += [int(child) for child in task.read_text().split()]
    return out


def tree_sum(read, pid: int) -> float:
    """``read(p)`` summed over :func:`process_tree` of ``pid`` (e.g. :func:`rss_mb`)."""
    # A worker may end between listing the tree and reading it (or be a zombie, with no
    # memory to read): it counts nothing.
    total = 0.0
    for each in process_tree(pid):
        with contextlib.suppress(OSError, ValueError):
            value = read(each)
            total += value if value == value else 0.0  # NaN: nothing to read
    return total


def open_served(page, url: str) -> None:
    """Open a served explorer page at ``url`` in Playwright's ``page`` and return once it
    is drawn and has heard back from its server (:func:`wait_connected`)."""
    page.goto(url)
    page.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0"
        " && Bokeh.documents[0].get_model_by_name('frames-source') !== null"
    )
    wait_connected(page)


def wait_connected(page, explorers: int = 1, timeout: float = 30_000) -> None:
    """Return once every explorer on ``page`` has heard back from its server.

    Each explorer, once drawn and its keyboard component running, sends the room
    its figures have; the server answers by tagging the explorer's frames source
    with it. Until then a click can land while the figures are laid out again, and
    a server that goes away leaves the page nothing that listens for the loss.
    """
    page.wait_for_function(
        """(count) => {
            const sources = [...(globalThis.Bokeh?.documents ?? [])]
                .flatMap((doc) => [...doc.all_models])
                .filter((m) => m.name === 'frames-source')
            return sources.length === count && sources.every((m) => m.tags[0]?.room != null)
        }""",
        arg=explorers,
        timeout=timeout,
    )


class BokehClient:
    """One session of the app at ``127.0.0.1:port``, spoken to over Bokeh's WebSocket protocol.

    Enough to open a page as a browser does (GET it, pull its document, say it
    is drawn) and edit it; for tests and benchmarks that need many sessions
    and no browser. Like a browser, it sends each frame at once (``TCP_NODELAY``):
    without it, the frames of one message wait for the server's delayed
    acknowledgement of the first, about 40 ms an edit. Like every browser, it
    offers permessage-deflate, so the server compresses what it sends as it does
    for a page (about 1.4 ms of its CPU an edit at 64x64).
    """

    def __init__(self, port: int) -> None:
        self.port = port
        self.document: dict = {}
        self._ids: dict[str, str] = {}
        #: Headers the WebSocket's upgrade request carries (e.g. a proxy's cookie).
        self.headers: dict[str, str] = {}

    async def open(self, path: str = "/?shape=64,64") -> None:
        """GET the page, pull its document and say it is drawn, as a browser opens it."""
        import asyncio

        status, body = await asyncio.to_thread(http_get, self.port, path)
        if status != 200:
            raise RuntimeError(f"GET {path} answered {status}")
        await self.start(session_token(body))

    async def start(self, token: str) -> None:
        """Open the session ``token`` names, pull its document and say it is drawn."""
        await self.connect(token)
        await self.pull()
        # As a browser does once the page is drawn: Panel runs its onload callbacks and
        # from then on sends changes made in callbacks (e.g. column data) at once.
        ready = {"type": "event", "name": "document_ready", "values": {"type": "map"}}
        event = {"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": ready}
        await self.send("PATCH-DOC", {"events": [event]})
        await self.drain()

    async def connect(self, token: str) -> None:
        """Open the WebSocket of the session ``token`` names (a page's, already served)."""
        import asyncio

        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        # Tornado's 20 s default is shorter than the server's queue of sessions being
        # built when 10 open at once on a loaded machine.
        url = HTTPRequest(
            f"ws://127.0.0.1:{self.port}/ws",
            headers=self.headers,
            connect_timeout=120,
            request_timeout=120,
        )
        self.ws = await websocket_connect(
            url,
            subprotocols=["bokeh", token],
            max_message_size=1 << 28,
            compression_options={},  # permessage-deflate, offered as browsers do
        )
        self.ws.protocol.set_nodelay(True)
        # Whole messages are read by a task of their own into a queue: a read given up
        # (``drain``'s timeout) then never leaves half a message read, nor loses one.
        self._messages: asyncio.Queue = asyncio.Queue()
        self._reader = asyncio.ensure_future(self._read_messages())
        await self.read()  # ACK

    async def pull(self) -> dict:
        """Ask for the session's document, as a page does before it draws."""
        self.document = await self.request("PULL-DOC-REQ", "PULL-DOC-REPLY")
        return self.document

    async def request(self, msgtype: str, reply: str, content: dict | None = None) -> dict:
        """Send ``msgtype`` and read until the server's ``reply``; its content."""
        await self.send(msgtype, content or {})
        while True:
            header, answer = await self.read()
            if header["msgtype"] == reply:
                return answer

    def _with_class(self, css_class: str) -> dict:
        """The model with ``css_class`` in the document pulled, as its JSON."""
        for model in _model_dicts(self.document):
            if css_class in (model.get("attributes", {}).get("css_classes") or []):
                return model
        raise LookupError(f"no model with css class {css_class!r} in the document")

    def model_id(self, css_class: str) -> str:
        """The id of the model with ``css_class`` in the document pulled; for one of the
        explorer's text boxes (an ESM component, :mod:`explorer.enter_box`) the id of its
        data model, whose ``value`` the page sets."""
        if css_class not in self._ids:
            model = self._with_class(css_class)
            attributes = model.get("attributes", {})
            data = attributes.get("data")
            boxed = "candela-enter-box" in attributes.get("css_classes") and isinstance(data, dict)
            self._ids[css_class] = data["id"] if boxed else model["id"]
        return self._ids[css_class]

    def value(self, css_class: str) -> Any:
        """The ``value`` of the model with ``css_class`` in the document pulled."""
        wanted = self.model_id(css_class)
        for model in _model_dicts(self.document):
            if model.get("id") == wanted:
                return model.get("attributes", {}).get("value")
        raise LookupError(css_class)

    def models(self) -> dict[str, str]:
        """Every model the document pulled defines, by id: its type name."""
        return {
            m["id"]: m["name"]
            for m in _model_dicts(self.document)
            if m.get("type") == "object" and "name" in m
        }

    async def drain(self, quiet: float = 0.3) -> None:
        """Read whatever the server sends until it is quiet for ``quiet`` seconds."""
        import asyncio

        with contextlib.suppress(asyncio.TimeoutError):
            while True:
                await asyncio.wait_for(self.read(), quiet)

    async def send(self, msgtype: str, content: dict) -> None:
        import json
        import uuid

        header = {"msgid": uuid.uuid4().hex, "msgtype": msgtype}
        for part in (header, {}, content):
            await self.ws.write_message(json.dumps(part))

    async def read(self) -> tuple[dict, dict]:
        """The next whole message from the server: its header and content. A
        ConnectionError once the server has closed the WebSocket."""
        item = await self._messages.get()
        if isinstance(item, BaseException):
            self._messages.put_nowait(item)  # and again for every later read
            raise item
        return item

    async def _read_messages(self) -> None:
        """Each message (header, metadata, content, then its buffers) into the queue."""
        import json

        try:
            while True:
                header = json.loads(await self._frame())
                await self._frame()
                content = json.loads(await self._frame())
                for _ in range(2 * header.get("num_buffers", 0)):
                    await self._frame()
                self._messages.put_nowait((header, content))
        except Exception as exc:
            self._messages.put_nowait(exc)

    async def _frame(self):
        frame = await self.ws.read_message()
        if frame is None:
            raise ConnectionError("the server closed the WebSocket")
        return frame

    async def enter(self, css_class: str, text: str) -> None:
        """Press Enter in the text box ``css_class`` holding ``text``, as the page's box does
        (:mod:`explorer.enter_box`): its ``value``, then its event."""
        box = self.model_id(css_class)
        event = {"kind": "ModelChanged", "model": {"id": box}, "attr": "value", "new": text}
        await self.send("PATCH-DOC", {"events": [event]})
        # The event is the component's own, not its data model's.
        entries = [["model", {"id": self._with_class(css_class)["id"]}], ["data", "applied"]]
        data = {
            "type": "event",
            "name": "data_event",
            "values": {"type": "map", "entries": entries},
        }
        applied = {"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": data}
        await self.send("PATCH-DOC", {"events": [applied]})

    async def edit(self, ops: str) -> float:
        """Set the pipeline box; ms until the answer with new column data is in."""
        await self.drain(0.1)  # what is left of the last edit's answer
        t0 = time.perf_counter()
        await self.enter("candela-ops-input", ops)
        await self._changed(
            lambda kinds, attrs: bool(
                {"ColumnDataChanged", "ColumnsStreamed"} & kinds or "data" in attrs
            ),
            f"new column data for the edit {ops!r}",
        )
        return (time.perf_counter() - t0) * 1000

    async def choose(self, css_class: str, value: str, answer: str = "text") -> float:
        """Choose ``value`` (an option's value, as the page's list holds it: for Panel's
        ``Select`` of a dict, the value's text) in the list ``css_class``, as a page does; ms
        until the server's answer sets a model's ``answer`` property (a pane's text)."""
        await self.drain(0.1)
        event = {
            "kind": "ModelChanged",
            "model": {"id": self.model_id(css_class)},
            "attr": "value",
            "new": value,
        }
        t0 = time.perf_counter()
        await self.send("PATCH-DOC", {"events": [event]})
        await self._changed(lambda kinds, attrs: answer in attrs, f"the choice {value!r}")
        return (time.perf_counter() - t0) * 1000

    async def _changed(self, done: Callable[[set, set], bool], what: str) -> None:
        """Read until a ``PATCH-DOC`` whose events' kinds and changed attributes make
        ``done`` true; a TimeoutError naming ``what`` if none comes within 60 s."""
        import asyncio

        while True:
            try:
                header, content = await asyncio.wait_for(self.read(), 60)
            except asyncio.TimeoutError:
                raise TimeoutError(f"no answer within 60 s: {what}") from None
            events = content.get("events", [])
            kinds = {e.get("kind") for e in events}
            attrs = {e.get("attr") for e in events}
            if header["msgtype"] == "PATCH-DOC" and done(kinds, attrs):
                return

    async def close(self) -> None:
        self.ws.close()


def _model_dicts(document: dict):
    """Every dict with an ``id`` in a pulled document's JSON: its models (whole, or as
    references)."""
    stack: list = [document]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if "id" in x:
                yield x
            stack += x.values()
        elif isinstance(x, list):
            stack += x


def http_get(port: int, path: str = "/", timeout: float = 120) -> tuple[int, bytes]:
    """GET ``path`` of the server on 127.0.0.1:``port``: its status and body."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def session_token(page: bytes) -> str:
    """The session token in a served page (its WebSocket's credential)."""
    import re

    found = re.search(rb'"token":\s*"([^"]+)"', page)
    if found is None:
        raise LookupError("no session token in the page")
    return found.group(1).decode()


def run_in_thread(coroutine_function, timeout: float = 120):
    """``coroutine_function()`` run to its end on an event loop in a thread of its own; its
    result (or its exception, raised here). A browser test before may have left an event
    loop running in the calling thread."""
    import asyncio
    import threading

    out: dict = {}

    def run() -> None:
        try:
            out["result"] = asyncio.run(coroutine_function())
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimeoutError(f"the client did not finish within {timeout:.0f} s")
    if "error" in out:
        raise out["error"]
    return out.get("result")
