"""The notebook display glue of an explorer: offline, on every page, redrawn in place.

Panel needs ``pn.extension()`` before it can display anything in a notebook,
and its JavaScript in the page. :func:`ensure_extension` runs it lazily: at the
first use of ``explorer.Explorer``, ``show`` or ``compare`` in a notebook, before
the explorer's modules are imported (the page then loads Panel's JavaScript while
the kernel builds the explorer: a first display's time is the longer of the two,
not their sum), and whenever an explorer is displayed on a page that lacks it.
Importing ``explorer`` (or calling ``show`` outside a notebook) changes nothing in
Panel's configuration. It runs
once per front-end page, not once per kernel: a notebook reopened (or a
browser tab reloaded) on a kernel that is still running is a new page without
Bokeh or Panel, and Panel alone counts its extension as loaded for good. Pages
are told apart by the Jupyter session of the request being executed, which
each front-end connection to a kernel picks at random.

The JavaScript and stylesheets are inlined (``pn.config.inline``), so an
explorer renders with no network: by default Panel would fetch them from
cdn.bokeh.org and cdn.holoviz.org. ``PANEL_INLINE=false`` in the kernel's
environment turns that off (smaller notebooks, but a network is needed), and so
does ``CANDELA_PLAIN=1`` (Panel's inline mode needs a patch for panes redrawn from
the kernel). Panel's setting is turned on only while the explorer's own outputs are
made and changed (:func:`inline_resources`, Panel's ``pn.config.set``): the kernel's
other Panel outputs keep the kernel's setting, CDN links by default.
The explorer's own browser modules go with Panel's JavaScript, once a page, and each
output imports them from there (:mod:`explorer.page_modules`).

One change of an explorer reaches each of its outputs as one message
(:func:`one_message`), and only once the page has drawn that output. Panel sends a
notebook output's changes as soon as the output's comm is open, and the page opens
the comm before it has built the output's views; until they are built, Panel's page
side drops every message that comes (its receiver looks the output up among the
drawn ones and returns). A change made from Python in the cell after the one that
showed the explorer ("Run All") came in that gap, on a loaded machine often: it was
never drawn, or its first parts were dropped and the rest refused ("Expected text
fragment but received binary fragment"). Each output's changes are held in its
document until the explorer's keyboard component, drawn, says so
(:func:`output_drawn`), then sent at once; later ones go as they come. Held and sent
together, a change's references are also all to models drawn before or defined in
its own message (Panel sends one component's change at a time, each later, on a timer
of its own, while the comm is not open: overtaken, a change referred the page to a
stylesheet model it had not got).

A cell run again lets go of the explorer outputs it showed before (the front end
clears them): this module remembers which outputs each cell showed, and
:mod:`explorer.patches.forget_outputs` drops them from Panel's and pyviz_comms'
records (off with ``CANDELA_PLAIN``, Panel keeps them, as it keeps any output).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import threading
from collections.abc import Iterable, Iterator

from .patches.forget_outputs import forget_output

__all__ = [
    "ensure_extension",
    "in_notebook",
    "in_turn",
    "inline_resources",
    "one_message",
    "output_drawn",
    "push_drawn",
    "repr_mimebundle",
    "repr_text",
]


def in_notebook() -> bool:
    """True inside a Jupyter kernel (not a terminal IPython, not plain Python)."""
    import sys

    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


#: The front-end pages (Jupyter sessions) this kernel has sent Panel's extension to, each
#: with the explorer's modules sent with it (:mod:`explorer.page_modules`).
_pages: dict[str, tuple[str, ...]] = {}


def _page() -> str:
    """The Jupyter session of the front end whose request the kernel is executing."""
    from IPython import get_ipython

    kernel = get_ipython().kernel
    try:
        parent = kernel.get_parent()
    except Exception:  # pragma: no cover - an older ipykernel
        parent = getattr(kernel, "_parent_header", None) or {}
    return str((parent or {}).get("header", {}).get("session", ""))


def ensure_extension() -> None:
    """Load Panel's notebook extension, inlined, into the page that is displaying, once."""
    if not in_notebook():
        return
    import panel as pn
    from panel.config import panel_extension

    from .patches.browser import browser_patches
    from .patches.comm_stdout import apply as capture_per_thread
    from .patches.inline_once import inline_once
    from .patches.inline_panes import inline_pane_updates

    capture_per_thread()
    browser_patches()  # in its keyboard component's module
    _watch_cells()
    page = _page()
    # Panel's own record that its extension ran in this kernel (read, never written; a
    # Panel without it gets its extension loaded again, as if on a new page).
    if getattr(panel_extension, "_loaded", False) and page in _pages:
        return
    # Bokeh and Panel's JavaScript go into the output itself, not a CDN link, and
    # stylesheets of models the kernel sends later are inlined too (Panel reads the
    # flag at every update; it is on while the explorer's outputs are made and
    # changed: inline_resources). An explicit PANEL_INLINE still wins. Panel 1.9's
    # inline mode needs the fix for redrawn panes (explorer.patches.inline_panes): without
    # it a redrawn pane refers the page to stylesheets it was never sent, and the page
    # stops taking the kernel's changes. With the patch off, Panel's links stay.
    if inline_pane_updates() and "PANEL_INLINE" not in os.environ:
        _inline[0] = True
        inline_once()  # and the explorer's outputs inline their stylesheets in one pass
    from panel.io.state import state

    views = getattr(state, "_views", None)  # Panel's notebook views, read to remember outputs
    shown = set(views or ())
    from IPython.display import publish_display_data
    from IPython.utils.capture import capture_output

    from .page_modules import modules, page_script
    from .painting import UNUSED_BUNDLES
    from .patches.load_once import loading_once
    from .patches.notebook7_resources import live_in_notebook7

    # Panel's extension displays its JavaScript and a model of its own; shown again here
    # with their scripts inside a hidden element (hide_scripts), the same to a page
    # that runs them, and no screenful of script text where a sanitizer shows them.
    with capture_output(stdout=False, stderr=False) as captured:
        with inline_resources(), loading_once():  # the page runs the bundle once, however sent
            pn.extension()
    sent: tuple[str, ...] = ()
    for output in captured.outputs:
        data = dict(output.data)
        if isinstance(data.get("text/html"), str):
            data["text/html"] = hide_scripts(data["text/html"])
        script = data.get(JS_MIME)
        if isinstance(script, str) and data.get(LOAD_MIME) == script:
            # In Notebook 7 too, Panel 1.10 loads from the Jupyter server, not its CDN
            script = live_in_notebook7(script)
            # Bokeh's WebGL bundle (194 KB) is never run: every figure draws on a canvas
            # (the server leaves it out as well: painting.UNUSED_BUNDLES).
            data[JS_MIME] = without_bundles(script, UNUSED_BUNDLES)
            if not sent:  # with the first (the bundles), the explorer's modules, once
                sent = modules()  # a page: its outputs import them from here
                data[JS_MIME] += page_script(sent)
            # Panel sends its JavaScript (3 MB) as two types, the same text twice, and
            # a saved notebook stored both. One is enough: JupyterLab, Notebook 7 and
            # nbconvert's HTML all run application/javascript (in a trusted output),
            # and its loader is known by a marker of no size.
            del data[LOAD_MIME]
            data[LOADER_MIME] = {}
        publish_display_data(data, output.metadata, transient=output.transient)
    # Panel's extension displays outputs of its own (its browser_info model) in this
    # cell: forgotten with the cell's other outputs when it runs again.
    for ref in set(views or ()) - shown:
        _remember_output(ref)
    _pages[page] = sent
    _loader_cells[page] = _running_cell[0]


def repr_mimebundle(explorer, include=None, exclude=None):
    """``Explorer._repr_mimebundle_``: load the extension if needed, then Panel's bundle."""
    if not in_notebook():
        return {"text/plain": repr_text(explorer)}, {}
    ensure_extension()
    with inline_resources():
        bundle = explorer._create_view()._repr_mimebundle_(include, exclude)
    _share_modules(bundle)
    _add_still(explorer, bundle)
    if isinstance(bundle, tuple) and isinstance(bundle[0], dict):
        bundle[0]["text/plain"] = repr_text(explorer)  # one line, not Panel's repr of its models
    try:
        _remember_output(bundle[1][EXEC_MIME]["id"])
    except (TypeError, KeyError, IndexError):  # pragma: no cover - not Panel's usual bundle
        pass
    return bundle


def _share_modules(bundle) -> None:
    """The explorer's modules in the output as stubs that import the page's copies, where
    the page has them (:mod:`explorer.page_modules`)."""
    from .page_modules import shared

    texts = _pages.get(_page(), ())
    if texts and isinstance(bundle, tuple) and isinstance(bundle[0].get("text/html"), str):
        bundle[0]["text/html"] = shared(bundle[0]["text/html"], texts)


#: Panel's scripts and stylesheets in an output's HTML.
_SCRIPT = re.compile(r"<script\b.*?</script>|<style\b.*?</style>", re.S | re.I)
#: Classes that hide an element in JupyterLab and nbconvert's lab template (Lumino's) and
#: in the classic one: where a sanitizer keeps a script's text, it is hidden with them.
HIDDEN_CLASSES = "lm-Widget lm-mod-hidden hidden"


def _add_still(explorer, bundle) -> None:
    """A still picture of the layout, for viewers that run no scripts (:mod:`explorer.still`).

    ``image/svg+xml`` for viewers that show an output's picture; in the HTML, the same
    in tables (:func:`explorer.still.still_html`) first, and Panel's scripts after it,
    inside an element hidden by JupyterLab's and nbconvert's own classes: a sanitizer
    that keeps a script's text as text (nbconvert's) keeps it hidden, and where scripts
    run the live explorer draws and the tables are hidden.
    """
    from .still import still_html, still_svg

    try:
        data = bundle[0]
        lines = [repr_text(explorer), *_still_lines(explorer)]
        other = explorer.compare_result if not explorer.concealed else None
        second = other.layout if other else None
        second_lines = [f"B: {other.ops}", *_layout_lines(other.layout)] if other else []
        svg = still_svg(explorer.layout, lines, second, second_lines)
        tables = still_html(explorer.layout, lines, second, second_lines)
    except Exception:  # the live explorer matters more than its picture
        return
    data["image/svg+xml"] = svg
    if isinstance(data.get("text/html"), str):
        data["text/html"] = hide_scripts(data["text/html"], still=tables)


def without_bundles(js: str, names: Iterable[str]) -> str:
    """Panel's inline load script ``js`` without the bundles ``names`` (Bokeh's
    components, e.g. ``"bokeh-gl"``).

    Panel's notebook load inlines every bundle of Bokeh's ``INLINE`` resources, each the
    body of one function of its ``inline_js`` list (``function(Bokeh) {`` on Panel 1.9,
    ``function(Bokeh, define, module, exports) {`` on 1.10), between ``BEGIN`` and
    ``END`` comments. A bundle is cut with its function only where that shape is found
    once; otherwise the script is left as it is (a bundle too many costs bytes, never
    a page).
    """
    for name in names:
        begin, end = (f"/* {word} {name}.min.js */" for word in ("BEGIN", "END"))
        if js.count(begin) != 1 or js.count(end) != 1:
            continue
        found = re.search(
            r"function\(Bokeh[\w, ]*\)\s*\{\s*" + re.escape(begin) + ".*?" + re.escape(end)
            + r"\s*\},\s*(?=function\(Bokeh)",
            js,
            re.S,
        )  # fmt: skip
        if found is not None:
            js = js[: found.start()] + js[found.end() :]
    return js


def hide_scripts(page: str, still: str = "") -> str:
    """Panel's output HTML ``page`` with its scripts and stylesheets moved into an element
    hidden by JupyterLab's and nbconvert's own classes, after ``still`` (a still picture
    in HTML, which the live explorer hides once it is drawn: ``keys.mjs``).

    A script runs, and a stylesheet applies, wherever it sits in the page; a sanitizer
    that keeps a script's text as text (nbconvert's) keeps it hidden with them. Where
    scripts run but Panel's JavaScript cannot be loaded (a page that links a CDN, opened
    with no network), the still picture stays.
    """
    hidden = "".join(_SCRIPT.findall(page))
    shown = _SCRIPT.sub("", page)
    return f'<div>{still}{shown}<div class="{HIDDEN_CLASSES}">{hidden}</div></div>'


def _layout_lines(layout) -> list[str]:
    return [
        f"shape {layout.shape}  stride {layout.stride}  adj_stride {layout.adj_stride}",
        f"offset {layout.offset}  len {layout.len}",
    ]


def _still_lines(explorer) -> list[str]:
    from .cost_view import totals_line

    lines = _layout_lines(explorer.layout)
    if not explorer.concealed:  # (a waiting question's answer may be a cost)
        lines.append(totals_line(explorer))
    return lines


#: Whether the explorer's outputs carry Panel's resources inline (set with the extension).
_inline: list[bool] = [False]


@contextlib.contextmanager
def inline_resources() -> Iterator[None]:
    """Panel's inline mode (``pn.config.inline``) inside, if the explorer's outputs use it.

    Panel reads the setting when it makes an output and whenever it redraws a part of
    one; the explorer's are made and changed inside this (:func:`repr_mimebundle`,
    :func:`one_message`), so every other Panel output of the kernel keeps the kernel's
    own setting. Held with :data:`_sending`: ``pn.config.set`` puts the old values back
    on leaving, which must not happen while another thread is inside.
    """
    if not _inline[0]:
        yield
        return
    import panel as pn

    with _sending, pn.config.set(inline=True):
        yield


#: The roots of the :func:`one_message` blocks open on each thread, outermost first.
_holding = threading.local()
#: Held while a change is made and sent, while a page's word that it drew an output is
#: acted on, and while a page's message about an output is applied (:func:`in_turn`): the
#: kernel handles a page's messages on threads of their own (comms over subshells), and
#: one output's messages must not be sent from two threads at once.
_sending = threading.RLock()


def in_turn() -> contextlib.AbstractContextManager:
    """The context a page's message about an explorer's output is applied in: in turn
    with every other thread's change of an explorer and its sending.

    With comms over subshells (JupyterLab's default, and Notebook 7's) each output's
    messages are handled on a thread of their own. Panel's handler holds the output's
    document while it applies a message and then lets go of the hold, which hands
    whatever the document holds to no one: a change another thread was making of the
    same explorer (one explorer in two cells, typed into in the second) lost its part
    held there, and the first output kept its old state.
    """
    return _sending


#: The outputs (Panel's ids of their roots) a page has said it drew.
_drawn: set[str] = set()
#: The messages made for each output before its page drew it, oldest first.
_waiting: dict[str, list] = {}


@contextlib.contextmanager
def one_message(roots: Iterable) -> Iterator[None]:
    """Send what changes inside as one message to each drawn notebook output of ``roots``.

    ``roots`` are Panel components shown in outputs. Panel's ``block_comm`` keeps every
    change in its output's document (Panel holds a notebook output's document) and
    :func:`push_drawn` sends each document's held changes at the end, to the outputs a
    page has drawn; the others keep them until it has (:func:`output_drawn`). Nested
    blocks (on one thread) send when the outermost ends (``block_comm`` is Panel's, one
    flag for the process). Outside a notebook it does nothing: a served page's
    components have no comm, and their changes go as Panel sends them (no process-wide
    lock or hold on a server's edits).
    """
    import panel as pn

    if not in_notebook():
        yield
        return
    holding = _holding.__dict__.setdefault("roots", [])
    holding.append(list(roots))
    with _sending, inline_resources():
        try:
            if len(holding) > 1:
                yield
                return
            with pn.io.block_comm():
                yield
        finally:
            if len(holding) == 1:
                push_drawn(root for held in holding for root in held)
            holding.pop()


def _outputs() -> dict:
    """Panel's notebook outputs: root id -> (component, root model, document, comm)."""
    from panel.io.state import state

    return getattr(state, "_views", None) or {}  # Panel's registry, read only


def push_drawn(roots: Iterable) -> None:
    """Send each output of ``roots`` its changes; keep them for an output not drawn yet.

    A change for an output the page has not said it drew is taken out of the output's
    document as Panel's message, at once (Panel's handler of a message from the page
    lets go of whatever a document holds), and kept, in order, until it has.
    """
    from panel.io.model import diff
    from panel.io.notebook import push

    outputs = _outputs()
    with _sending:
        for root in roots:
            for ref in list(getattr(root, "_models", ())):  # Panel's: the root's outputs
                output = outputs.get(ref)
                if output is None or output[3] is None:
                    continue  # not a notebook output (a served page's model)
                if ref in _drawn:
                    push(output[2], output[3])
                elif (message := diff(output[2])) is not None:
                    first = ref not in _waiting
                    _waiting.setdefault(ref, []).append(message)
                    if first:
                        _send_anyway_later(ref)


#: How long an output's comm may be open with no word from the page that it drew the
#: output before what was held for it is sent anyway (a page whose scripts failed, a
#: front end that draws Panel's outputs some other way): seconds.
DRAWN_WAIT_S = 10.0
#: How long the kernel looks for the comm of an output held for at all (no page opened
#: it, as when nbclient runs a notebook with no page): seconds.
OPEN_WAIT_S = 600.0


def _send_anyway_later(ref: str, opened: float | None = None, since: float | None = None) -> None:
    """Send ``ref``'s held changes once its comm has been open :data:`DRAWN_WAIT_S`."""
    import time

    from tornado.ioloop import IOLoop

    now = time.monotonic()
    since = now if since is None else since
    output = _outputs().get(ref)
    if ref in _drawn or ref not in _waiting or output is None:
        return
    if getattr(output[3], "_comm", True) is not None:  # pyviz_comms': set once it opened
        opened = now if opened is None else opened
        if now - opened >= DRAWN_WAIT_S:
            _send_held(ref, output)
            return
    elif now - since >= OPEN_WAIT_S:
        return  # never opened: what was held goes with the output when it is forgotten
    try:
        later = min(1.0, DRAWN_WAIT_S / 4)
        IOLoop.current().call_later(later, lambda: _send_anyway_later(ref, opened, since))
    except Exception:  # no event loop to wait on: sent when the page says it drew it
        pass


def _send_held(ref: str, output) -> None:
    """Send what was held for the output ``ref``, in order, then anything newer."""
    from panel.io.notebook import push

    with _sending:
        _drawn.add(ref)
        for message in _waiting.pop(ref, []):  # in the order they were made
            push(output[2], output[3], msg=message)
        push(output[2], output[3])


def output_drawn(doc) -> None:
    """A page says it drew the notebook output whose document is ``doc``: send its changes.

    The explorer's keyboard component says so in a task after its render: by then the
    page has built the whole output and Panel's page side takes its messages.
    """
    if doc is None or doc.session_context is not None:  # a served page: no comm
        return
    with _sending:
        for ref, output in list(_outputs().items()):
            if output[2] is doc and output[3] is not None:
                _send_held(ref, output)


# ---------------------------------------------------------------- outputs that are gone

EXEC_MIME = "application/vnd.holoviews_exec.v0+json"
#: Panel's output that loads its JavaScript, as Panel sends it ...
LOAD_MIME = "application/vnd.holoviews_load.v0+json"
#: ... the one type of it the explorer keeps, and the marker it is known by.
JS_MIME = "application/javascript"
LOADER_MIME = "application/vnd.candela.panel-load+json"
#: The root model ids of the explorer outputs each notebook cell (by its id) displayed.
_outputs_of_cell: dict[str, list[str]] = {}
#: The cell whose output carried Panel's JavaScript to each page (Jupyter session).
_loader_cells: dict[str, str | None] = {}
#: The cell the kernel is running now, as the front end named it.
_running_cell: list[str | None] = [None]


def _remember_output(ref: str) -> None:
    cell = _running_cell[0]
    if cell is not None:
        _outputs_of_cell.setdefault(cell, []).append(ref)


def _on_pre_run_cell(info) -> None:
    """A cell runs again: its earlier outputs are cleared in the page, so forget them here."""
    cell = getattr(info, "cell_id", None)
    _running_cell[0] = cell
    # The output that carried Panel's JavaScript to this page is cleared too: the next
    # explorer displayed carries it again, so a notebook saved now still draws.
    for page, loader in list(_loader_cells.items()):
        if cell is not None and loader == cell:
            _pages.pop(page, None)
            del _loader_cells[page]
    for ref in _outputs_of_cell.pop(cell, []) if cell is not None else []:
        # Panel keeps them otherwise (explorer.patches.forget_outputs, a pyviz_comms bug).
        _drawn.discard(ref)
        _waiting.pop(ref, None)
        if forget_output(ref):
            _let_go[0] = True


#: The MIME types of Panel's notebook outputs: a view, and the output loading its JavaScript.
PANEL_MIMES = (EXEC_MIME, LOAD_MIME, LOADER_MIME)
#: What IPython's output history keeps of a Panel output: its text and the still picture.
KEPT_MIMES = ("text/plain", "image/svg+xml")


def _on_post_run_cell(result=None) -> None:
    """Keep only the text and still picture of the cell's Panel outputs in IPython's history.

    IPython 9 records the whole bundle of every output in memory
    (``history_manager.outputs``, for exporting a session as a notebook): for an
    explorer its HTML and JavaScript, about 0.6 MB each time a cell shows one (and
    Panel's JavaScript, about 6 MB, each time it is loaded). The page has them;
    the kernel never uses them again, and a Panel output's HTML cannot draw
    without the comms of the kernel that made it.
    """
    from IPython import get_ipython

    outputs = getattr(getattr(get_ipython(), "history_manager", None), "outputs", None)
    if not isinstance(outputs, dict):
        return
    try:
        from IPython.core.history import HistoryOutput
    except ImportError:  # pragma: no cover - IPython before 9 keeps no bundles
        return
    # The cell's outputs are under its execution count, or the one before (displays
    # published while IPython posts the cell): the newest few keys.
    for count in itertools.islice(reversed(outputs), 3):  # not a copy of every key
        kept = outputs[count]
        for i, output in enumerate(kept):
            bundle = getattr(output, "bundle", None)
            if isinstance(bundle, dict) and any(m in bundle for m in PANEL_MIMES):
                slim = {m: bundle[m] for m in KEPT_MIMES if m in bundle}
                kept[i] = HistoryOutput(output_type=output.output_type, bundle=slim)
                _let_go[0] = True
    if _let_go[0]:
        _let_go[0] = False
        _give_back_memory()


#: Whether the cell that ran let go of an output (its view or its bundle).
_let_go: list[bool] = [False]


def _give_back_memory() -> None:
    """Hand the C library's freed memory back to the system (glibc's ``malloc_trim``).

    A display builds and frees megabytes of small objects and strings on the
    kernel's threads; glibc keeps the freed pages in its arenas, so the kernel's
    memory only ever grew, by about 0.4 MB each time a cell showing an explorer ran
    again, though nothing of it was still in use. Elsewhere than glibc: nothing.
    """
    from .patches.collect_at_a_pause import _malloc_trim

    trim = _malloc_trim()  # looked up once; None where the C library is not glibc
    if trim is not None:
        trim(0)


def _watch_cells() -> None:
    """Run :func:`_on_pre_run_cell` before every cell and :func:`_on_post_run_cell` after it."""
    from IPython import get_ipython

    shell = get_ipython()
    if getattr(shell, "events", None) is None:
        return
    if _on_post_run_cell not in shell.events.callbacks["post_run_cell"]:
        shell.events.register("post_run_cell", _on_post_run_cell)
    if _on_pre_run_cell not in shell.events.callbacks["pre_run_cell"]:
        shell.events.register("pre_run_cell", _on_pre_run_cell)
        # Registered while a cell runs, after its own pre_run_cell: name it from the request.
        try:
            parent = shell.kernel.get_parent()
        except Exception:  # pragma: no cover - an older ipykernel
            parent = getattr(shell.kernel, "_parent_header", None) or {}
        _running_cell[0] = (parent or {}).get("metadata", {}).get("cellId")


def repr_text(explorer) -> str:
    """One line, as a Python user would write the explorer: ``Explorer(shape=(3, 4), ops='.T')``,
    with the second pipeline, the lesson and step, and the stride unit where set."""
    parts = [f"shape={tuple(explorer.result.shape)}"]
    for name in ("ops", "compare", "lesson"):
        value = getattr(explorer, name)
        if value:
            parts.append(f"{name}={value!r}")
    if explorer.lesson:
        parts.append(f"step={explorer.step}")
    if explorer.unit != "elements":
        parts.append(f"unit={explorer.unit!r}")
    return f"{type(explorer).__name__}({', '.join(parts)})"
