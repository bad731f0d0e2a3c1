"""Every patch of ``explorer.patches`` is optional and safe.

On a Panel or Bokeh release other than the one a patch was checked against, or
with a framework name it needs missing, the patch leaves the framework alone and
logs one line; ``CANDELA_PLAIN=1`` turns them all off. Each case runs in a fresh
process (a patch, once applied, stays for the life of the process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import patches
from tests.explorer.fresh_process import run

ROOT = Path(__file__).resolve().parents[2]

#: In a fresh process: for each patch, apply it under argv[1] ("version": another
#: release of its first package; "missing": its first needed name deleted; "plain":
#: CANDELA_PLAIN set; "normal") and report, as JSON, whether it applied, the log lines,
#: and which needed names changed.
SCRIPT = r"""
import importlib, json, logging, os, sys, types

mode = sys.argv[1]
if mode == "plain":
    os.environ["CANDELA_PLAIN"] = "1"
import panel  # Panel changes some of Bokeh's names when imported (its RequestProxy)

import explorer.patches as P
from explorer.patches.pool_sessions import app_context

lines = []


class Note(logging.Handler):
    def emit(self, record):
        lines.append(f"{record.levelname} {record.getMessage()}")


log = logging.getLogger("candela-explorer")
log.addHandler(Note())
log.setLevel(logging.INFO)  # a patch off on another release says so at INFO
log.propagate = False


def resolve(need):
    # What the name is bound to, as stored: a classmethod read through getattr is a
    # new bound method each time, so a class's attribute is read from its __dict__.
    module, _, path = need.partition(":")
    obj = importlib.import_module(module)
    for part in filter(None, path.split(".")):
        if isinstance(obj, type):
            owner = next((k for k in obj.__mro__ if part in vars(k)), None)
            obj = vars(owner)[part] if owner is not None else getattr(obj, part)
        else:
            obj = getattr(obj, part)
    return obj


def owner_of(need):
    # (object the last name is defined on, that name)
    module, _, path = need.partition(":")
    parts = path.split(".")
    obj = importlib.import_module(module)
    for part in parts[:-1]:
        obj = getattr(obj, part)
    if isinstance(obj, type):
        obj = next(k for k in obj.__mro__ if parts[-1] in vars(k))
    return obj, parts[-1]


def as_checked(patch):
    # The installed releases read as those the patch was checked against, so that the
    # guard under test is the one that speaks (on another release, the version's would).
    # Returns the real reader, to put back.
    real = P._version
    P._version = lambda d: patch.checked[d].split()[0] + ".0" if d in patch.checked else real(d)
    return real


def fake_server():
    return types.SimpleNamespace(_tornado=types.SimpleNamespace(_applications={"/": object()}))


out = {}
for name, patch in P.patches().items():
    before = {need: resolve(need) for need in patch.needs}
    lines.clear()
    restore = None
    if mode == "version":
        distribution = next(iter(patch.checked))
        real = P._version
        P._version = lambda d, real=real, dist=distribution: "99.1.0" if d == dist else real(d)
        restore = lambda real=real: setattr(P, "_version", real)
    elif mode == "copied" and patch.copies:  # the framework's code it repeats has changed
        real, real_version = P.source_hash, as_checked(patch)
        P.source_hash = lambda need: "0" * 16

        def restore(real=real, real_version=real_version):
            P.source_hash, P._version = real, real_version
    elif mode == "missing" and patch.needs:
        obj, attr = owner_of(patch.needs[0])
        value = vars(obj)[attr]
        delattr(obj, attr)
        real_version = as_checked(patch)

        def restore(obj=obj, attr=attr, value=value, real_version=real_version):
            setattr(obj, attr, value)
            P._version = real_version
    applied = P.apply(name)
    server = fake_server()
    context = app_context(server) if name == "pool_sessions" else None
    module = P.browser_module((name,)) if patch.script else ""
    if restore is not None:
        restore()
    after = {need: resolve(need) for need in patch.needs}
    out[name] = {
        "applied": applied,
        "lines": list(lines),
        "changed": sorted(n for n in patch.needs if after[n] is not before[n]),
        "context": context is not None,
        "script": bool(patch.script),
        "stub": module.startswith(f"function {patch.entry}(Bokeh) {{}}") if patch.script else None,
    }
print(json.dumps(out))
"""


def _run(mode: str) -> dict:
    return run(SCRIPT, mode, timeout=180)


@pytest.fixture(scope="module")
def normal() -> dict:
    return _run("normal")


def test_every_patch_declares_what_it_changes_why_and_what_it_buys():
    every = patches.patches()
    assert len(every) >= 12
    for name, patch in every.items():
        assert patch.name == name
        assert patch.changes and patch.why and patch.buys, name
        releases = [r for v in patch.checked.values() for r in v.split()]
        assert releases and all(r.count(".") <= 1 for r in releases), name
        assert (patch.script is None) == (patch.entry is None), name
        if patch.script:
            text = (Path(patches.__file__).parent / patch.script).read_text(encoding="utf-8")
            assert f"function {patch.entry}(Bokeh)" in text, name
        if "(a fix" in patch.buys:  # a framework bug: a reproduction to send upstream
            assert len(patch.upstream) > 40, name


def test_the_bokeh_behaviours_the_explorer_works_around_are_still_bokehs():
    # Their reproductions, run on the installed Bokeh: when one fails, Bokeh has changed and
    # the patch (own_origin_check) or the explorer's own shortening of an ERROR reply
    # (explorer.connection_bounds) may go.
    from bokeh.protocol import Protocol
    from bokeh.server.util import check_allowlist

    assert check_allowlist("localhost", ["localhost:80"])
    assert not check_allowlist("[::1]", ["[::1]:80"])  # an IPv6 host is not given port 80
    try:
        raise ValueError("a message that failed")
    except ValueError:
        reply = Protocol().create("ERROR", "1", "failed")
    assert "Traceback" in reply.content["traceback"]  # the server's traceback, to the page
    assert patches.get("own_origin_check").upstream


def test_on_the_checked_releases_every_patch_applies(normal):
    # The control for the tests below: the same script changes the framework. A patch
    # checked against other releases than those installed (Panel 1.9 patches on Panel
    # 1.10) is off here, as its guard says; every other one applies.
    off = {name: patches.skip_reason(patches.get(name)) for name in normal}
    on = {name: found for name, found in normal.items() if off[name] is None}
    if not on:
        pytest.skip(f"every patch is off here: {next(iter(off.values()))}")
    for name, found in normal.items():
        if name not in on:
            reason = off[name]
            assert found["applied"] is False and found["changed"] == [], (name, found)
            assert len(found["lines"]) == 1 and reason in found["lines"][0], (name, found)
    for name, found in on.items():
        assert found["applied"] is True, (name, found)
        assert found["lines"] == [], (name, found)
        if patches.get(name).install is not None:
            assert found["changed"], (name, found)  # it replaced what it names
        if found["script"]:
            assert found["stub"] is False, name  # the script itself goes into the page
    assert normal["pool_sessions"]["context"] == ("pool_sessions" in on)


@pytest.mark.parametrize("mode", ["version", "missing", "copied"])
def test_a_patch_on_another_release_or_missing_a_name_leaves_the_framework_alone(mode):
    found = _run(mode)
    assert set(found) == set(patches.patches())
    if mode == "copied":
        assert found["pool_sessions"]["applied"] is False  # it repeats Bokeh's steps
    for name, seen in found.items():
        if mode == "missing" and not patches.get(name).needs:
            continue  # a browser patch: its script checks each name itself, in the page
        if mode == "copied" and not patches.get(name).copies:
            continue
        assert seen["applied"] is False, (name, seen)
        assert seen["changed"] == [], (name, seen)  # nothing it names was replaced
        assert len(seen["lines"]) == 1 and name in seen["lines"][0], (name, seen)
        reason = {"version": "99.1.0", "missing": "missing", "copied": "is not the code"}[mode]
        assert reason in seen["lines"][0], (name, seen)
        # Off on another release is what is meant there (INFO: never in a notebook's
        # cell); a name missing or changed on a release it was checked against is news.
        level = "INFO" if mode == "version" else "WARNING"
        assert seen["lines"][0].startswith(level + " "), (name, seen)
        assert not seen["context"], (name, seen)
        if seen["script"]:
            assert seen["stub"] is True, name  # an empty function in place of the script


def test_candela_plain_turns_every_patch_off_and_says_so_once():
    found = _run("plain")
    for name, seen in found.items():
        assert seen["applied"] is False and seen["changed"] == [], (name, seen)
        assert not seen["context"], (name, seen)
    # Each patch says nothing on its own: the command says it once for all.
    assert all(seen["lines"] == [] for seen in found.values()), found


def test_candela_plain_values():
    for value, every in [
        ("1", True),
        ("yes", True),
        (" ALL ", True),
        ("", False),
        ("0", False),
        ("false", False),
        ("off", False),
    ]:
        assert patches.read_plain(value) == patches.Plain(every=every), value
    # Patch names turn only those off (to measure each).
    said = patches.read_plain("cells, one_write_per_message")
    assert not said.every and said.named == {"cells", "one_write_per_message"}
    # A word that is no patch is an error naming it, never "every patch off" (or none).
    for value in ("cells,nonsense", "nonsense", "2", "cels"):
        with pytest.raises(patches.PlainError) as caught:
            patches.read_plain(value)
        message = str(caught.value)
        assert "\n" not in message and "is not a patch" in message, message
        bad = [w for w in value.split(",") if w not in patches.patches()]
        assert all(repr(w) in message for w in bad), message


def test_candela_plain_is_read_once_and_names_skip_only_those(monkeypatch):
    monkeypatch.setattr(patches, "_SETTING", [patches.read_plain("cells,one_write_per_message")])
    # On the releases the patches were checked against (so that only CANDELA_PLAIN speaks).
    checked = {
        d: r.split()[0] + ".0" for p in patches.patches().values() for d, r in p.checked.items()
    }
    monkeypatch.setattr(patches, "_version", checked.get)
    monkeypatch.setenv("CANDELA_PLAIN", "1")  # read already: a later change is not seen
    assert not patches.plain()
    assert patches.skip_reason(patches.get("cells")) == "CANDELA_PLAIN names it"
    assert patches.skip_reason(patches.get("one_write_per_message")) == "CANDELA_PLAIN names it"
    assert patches.skip_reason(patches.get("steady")) is None


def test_a_mistyped_candela_plain_stops_the_command_in_one_line():
    env = {**os.environ, "CANDELA_PLAIN": "cells,nonsense"}
    done = subprocess.run(
        [sys.executable, "-m", "explorer", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "'nonsense' is not a patch" in lines[0], done.stderr


def _cdn_links_after_a_redraw(cls) -> list[str]:
    from bokeh.document import Document
    from bokeh.models import ImportedStyleSheet
    from pyviz_comms import Comm

    pane = cls("a")
    model = pane.get_root(Document(), comm=Comm())  # displayed in a notebook
    pane.object = "b"  # redrawn from the kernel
    return [m.url for m in model.select({"type": ImportedStyleSheet}) if "cdn." in m.url]


@pytest.mark.patched("inline_panes")
def test_in_a_notebook_only_the_explorers_panes_are_redrawn_inline(monkeypatch):
    # Panel 1.9 sends a redrawn pane's stylesheets as CDN links even with inline on;
    # the explorer's panes are kept inline, and every other pane is Panel's own.
    import panel as pn

    from explorer.patches.inline_panes import inline_pane_updates
    from explorer.text_pane import TextPane

    monkeypatch.setattr(pn.config, "inline", True)
    assert inline_pane_updates()
    assert _cdn_links_after_a_redraw(TextPane) == []
    # Not the explorer's: left as Panel made them (links, as Panel 1.9 sends them).
    assert _cdn_links_after_a_redraw(pn.pane.HTML)
    assert _cdn_links_after_a_redraw(pn.pane.Markdown)


def _explorer_output(monkeypatch) -> tuple[str, list]:
    """An explorer displayed in a notebook in Panel's inline mode: its HTML, its sheet models."""
    import panel as pn
    from bokeh.models import InlineStyleSheet
    from panel.config import panel_extension

    from explorer import Explorer

    monkeypatch.setattr(pn.config, "inline", True)
    monkeypatch.setattr(panel_extension, "_loaded", True)
    view = Explorer(shape=(3, 4))._create_view()
    data, _ = view._repr_mimebundle_()
    (model,) = view._models.values()
    return data["text/html"], list(model[0].select({"type": InlineStyleSheet}))


@pytest.mark.patched("inline_once")
def test_an_explorers_notebook_output_sends_each_stylesheet_once(monkeypatch):
    # Panel inlines a sheet model per link of each model (the same loading.css 40 times)
    # and the explorer's own stylesheet went as text in 28 models: 0.67 MB an output.
    from bokeh.models import ImportedStyleSheet, UIElement

    from explorer.patches.inline_once import inline_once
    from explorer.style import CONTROL_CSS, HEADING_CLASSES, LAYOUT_CSS, PANE_SHEETS, for_pane

    assert inline_once()
    html, sheets = _explorer_output(monkeypatch)
    texts = [sheet.css for sheet in sheets]
    assert len(texts) == len(set(texts)) >= 5  # one model per sheet, every sheet there
    assert len(PANE_SHEETS.intersection(texts)) >= 8 and "cdn.holoviz.org" not in html
    # the part every pane of text shares and the headings' part (style.for_pane), sent once
    every_pane, headings = for_pane(*HEADING_CLASSES)
    assert html.count(json.dumps(every_pane)[1:-1]) == 1
    assert html.count(json.dumps(headings)[1:-1]) == 1
    assert len(html) < 300_000  # 0.67 MB with a stylesheet per link
    # Every pane of text has the first, every pane of headings the second, each one model.
    (shared,) = [sheet for sheet in sheets if sheet.css == every_pane]
    (heading,) = [sheet for sheet in sheets if sheet.css == headings]
    (root,) = {sheet.document for sheet in sheets}
    elements = [m for m in root.models if isinstance(m, UIElement)]
    assert sum(shared in m.stylesheets for m in elements) >= 12
    assert sum(heading in m.stylesheets for m in elements) >= 3
    # and every widget the widgets' sheet, every layout the layouts', one model each
    (controls,) = [sheet for sheet in sheets if sheet.css == CONTROL_CSS]
    assert sum(controls in m.stylesheets for m in elements) >= 10
    (layouts,) = [sheet for sheet in sheets if sheet.css == LAYOUT_CSS]
    assert sum(layouts in m.stylesheets for m in elements) >= 3
    parts = {CONTROL_CSS, LAYOUT_CSS, *PANE_SHEETS}
    assert not [m for m in elements if parts & set(m.stylesheets)]  # no text copy
    assert not [s for m in elements for s in m.stylesheets if isinstance(s, ImportedStyleSheet)]


@pytest.mark.safety
def test_a_query_value_of_digits_that_are_not_decimal_is_served():
    # '²'.isdigit() is True and int('²') raises: Panel 1.9's query parse made it an HTTP
    # 500 (explorer.serving.QueryDigits, on with every patch off).
    from explorer.testing import http_get, served_app

    with served_app(ready=0) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        status, _ = http_get(port, "/?shape=%C2%B2")
    assert status == 200


@pytest.mark.safety
def test_a_pages_report_of_its_url_with_digits_that_are_not_decimal_is_read_as_text():
    # The browser reports its URL as the page opens, as in its address bar: Panel 1.9 took
    # the ² of ?shape=%C2%B2 for an int as it applied that (ValueError), and the page said
    # "that did not work" in place of what is wrong with the shape (seen once in CI, when
    # the report came; explorer.page_changes.parseable_location, on with every patch off).
    import asyncio
    import contextlib

    from explorer.testing import BokehClient, run_in_thread, served_app

    async def report(port: int) -> tuple[str, list]:
        client = BokehClient(port)
        await client.open("/?shape=%C2%B2")
        opened = json.dumps(client.document)
        (location,) = [i for i, name in client.models().items() if name.endswith(".Location")]
        event = {"kind": "ModelChanged", "model": {"id": location}, "attr": "search"}
        for search in ("?shape=%C2%B2", "?shape=%E2%91%A0&ops=.T"):  # ², then ①
            await client.send("PATCH-DOC", {"events": [{**event, "new": search}]})
        answers = []
        with contextlib.suppress(asyncio.TimeoutError):
            while True:
                header, content = await asyncio.wait_for(client.read(), 2)
                answers.append((header["msgtype"], json.dumps(content)))
        await client.close()
        return opened, answers

    with served_app(ready=0) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        opened, answers = run_in_thread(lambda: report(port))
    assert "is not a whole number" in opened  # what the page says of the shape ²
    assert answers and not [kind for kind, _ in answers if kind == "ERROR"], answers
    assert not [text for _, text in answers if "did not work" in text], answers


def test_a_query_value_of_5000_digits_is_served():
    # Panel parses every all-digit query value into an int, past Python's 4,300-digit
    # limit: HTTP 500 unless the server lets Python read numbers as long as a request
    # (explorer.serving.long_query_numbers, on with every patch off).
    from explorer.testing import http_get, served_app

    with served_app(ready=0) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        status, _ = http_get(port, "/?x=" + "1" * 5000)
        try:  # past the longest head Tornado reads: it closes the connection unanswered
            long_status = http_get(port, "/?x=" + "1" * 70_000)[0]
        except ConnectionError:
            long_status = "closed"
        after, _ = http_get(port, "/?x=" + "1" * 60_000)  # and still serves
    assert status == 200 and after == 200
    assert long_status in (400, 431, "closed"), long_status  # never a 500


#: In a fresh process, with CANDELA_PLAIN as given: whether displaying an explorer in a
#: notebook turns Panel's inline mode on (the kernel and Panel's extension stood in for).
NOTEBOOK_INLINE = r"""
import panel as pn
from explorer import notebook

notebook.in_notebook = lambda: True
notebook._page = lambda: "page"
pn.extension = lambda *args, **kwargs: None
notebook.ensure_extension()
with notebook.inline_resources():
    print(pn.config.inline)  # the explorer's outputs
print(pn.config.inline)  # the kernel's others
"""


@pytest.mark.parametrize("plain, inline", [("", ["True", "False"]), ("1", ["False", "False"])])
def test_a_notebook_is_inlined_only_with_the_fix_for_redrawn_panes(plain, inline, monkeypatch):
    # Panel 1.9's inline mode sends a redrawn pane's stylesheets as references the page
    # never got (so does 1.10): without the inline_panes patch (off with CANDELA_PLAIN, or
    # on a release it was not checked against), the explorer keeps Panel's CDN links.
    # Either way the kernel's other Panel outputs keep Panel's own setting.
    import os

    monkeypatch.setattr(patches, "_SETTING", [patches.read_plain(plain)])
    if patches.skip_reason(patches.get("inline_panes")) is not None:
        inline = ["False", "False"]

    env = {k: v for k, v in os.environ.items() if k not in ("CANDELA_PLAIN", "PANEL_INLINE")}
    done = subprocess.run(
        [sys.executable, "-c", NOTEBOOK_INLINE],
        cwd=ROOT,
        env={**env, "CANDELA_PLAIN": plain},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-2:] == inline


def _shown_in_a_cell(monkeypatch, cell: str):
    """A Panel output as a notebook cell shows it: Panel's view record, its comm, its cell."""
    import panel as pn
    from bokeh.document import Document
    from panel.io.state import state
    from pyviz_comms import Comm

    from explorer import notebook

    pane = pn.pane.Markdown("a")
    doc = Document()
    comm = Comm()
    model = pane.get_root(doc, comm=comm)
    doc.add_root(model)  # as Panel's notebook display adds it
    ref = model.ref["id"]
    monkeypatch.setitem(state._views, ref, (pane, model, doc, comm))
    monkeypatch.setitem(notebook._outputs_of_cell, cell, [ref])
    return pane, doc, ref


@pytest.mark.patched("forget_outputs")
def test_a_cell_run_again_lets_go_of_the_outputs_it_showed(monkeypatch):
    import types

    from panel.io.state import state

    from explorer import notebook

    pane, doc, ref = _shown_in_a_cell(monkeypatch, "cell-1")
    notebook._on_pre_run_cell(types.SimpleNamespace(cell_id="cell-1"))
    assert ref not in state._views and ref not in pane._models
    assert doc.roots == []
    assert "cell-1" not in notebook._outputs_of_cell


def test_with_forget_outputs_off_panel_keeps_a_rerun_cells_outputs(monkeypatch):
    # Off (CANDELA_PLAIN, another Panel): Panel's records are left as Panel keeps them.
    import types

    from panel.io.state import state

    from explorer import notebook

    monkeypatch.setitem(patches._STATE, "forget_outputs", "off for this test")
    pane, doc, ref = _shown_in_a_cell(monkeypatch, "cell-2")
    notebook._on_pre_run_cell(types.SimpleNamespace(cell_id="cell-2"))
    assert ref in state._views and ref in pane._models
    assert doc.roots != []


ENTRY_POINT = r"""
import json, sys
from explorer import Explorer, patches
from explorer.patches import _GIVEN

def given():
    # each declared change: set on its class (the class's own attribute is the patch's),
    # or the class is Panel's there (no such attribute of its own)
    out = {}
    for name, changes in _GIVEN.items():
        for cls, attribute, make in changes:
            own = vars(cls).get(attribute)
            if attribute == "_esm":
                set_ = own is not None and f"patch {name}: off" not in own
            else:
                set_ = own is not None
            out[f"{name}:{cls.__name__}.{attribute}"] = set_
    return out

ex = Explorer(shape=(3, 4), ops=".T")
ex.__panel__().get_root()  # built and drawn, as a page or an output is
before = {"applied": patches.applied(), "given": given()}
if sys.argv[1] == "serve":
    from explorer.serving import lean_process
    lean_process()
print(json.dumps({"before": before, "applied": patches.applied(), "given": given()}))
"""


@pytest.mark.parametrize("plain", ["", "1"])
def test_patches_are_installed_by_an_entry_point_never_by_an_import(plain):
    # Importing the explorer and building and drawing one installs no patch, and no
    # class of the explorer has a patch's method: they are Panel's classes as they are.
    # The server's entry point installs its patches, and each that is on sets every
    # change declared for it (explorer.patches.give), and only those.
    found = run(ENTRY_POINT, "serve", plain=plain, timeout=180)
    before = found["before"]
    assert before["applied"] == {}
    assert before["given"] and not any(before["given"].values()), before["given"]
    from explorer.patches.browser import BROWSER_PATCHES
    from explorer.serving import SERVER_PATCHES

    assert set(found["applied"]) >= {*SERVER_PATCHES, *BROWSER_PATCHES}
    on = {name for name, state in found["applied"].items() if state is True}
    for change, is_set in found["given"].items():
        name = change.split(":")[0]
        if name in found["applied"]:  # the server installs what a notebook's output needs not
            assert is_set == (name in on), (change, found["applied"][name])
    if plain:
        assert on == set()
