"""Every door text comes in by: hostile input is accepted or refused with the documented
error and a message, in bounded time, and lesson text reaches the page as inert HTML."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.markup import lesson_html, safe_url

FAST = settings(
    max_examples=int(os.environ.get("DOORS_EXAMPLES", "150")),
    deadline=2000,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)

# --------------------------------------------------------------------------- lesson text

HOSTILE_TEXTS = [
    "<script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned = 1">',
    '<details open ontoggle="window.__pwned = 1">x</details>',
    '<iframe srcdoc="<script>parent.__pwned = 1</script>"></iframe>',
    "[click](javascript:window.__pwned=1)",
    "[click](JaVaScRiPt:window.__pwned=1)",
    "[click](&#106;avascript:window.__pwned=1)",
    "[click]( javascript:window.__pwned=1 )",
    "<javascript:window.__pwned=1>",
    "![x](javascript:window.__pwned=1)",
    "[r]: javascript:window.__pwned=1\n\n[click][r]",
    "[click](data:text/html,<script>parent.__pwned=1</script>)",
    "[click](vbscript:x)",
    "<svg onload=window.__pwned=1>",
    "<a href='javascript:window.__pwned=1'>click</a>",
]

# A tag as HTML would read it, or an event-handler attribute, or a script URL in an attribute.
LIVE = re.compile(
    r"<\s*(script|img|iframe|details|svg|object|embed|style|form|input|math)\b"
    r"|<[a-z]+[^>]*\son\w+\s*=|(href|src)\s*=\s*\"\s*(javascript|data|vbscript):",
    re.IGNORECASE,
)


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_lesson_text_renders_no_live_html(text):
    out = lesson_html(text)
    assert not LIVE.search(out), out
    for href in re.findall(r'(?:href|src)="([^"]*)"', out):
        assert safe_url(href), out


def test_lesson_markdown_still_renders():
    out = lesson_html("**bold** `code` [docs](https://example.org/x) and [next](?lesson=a&step=2)")
    assert "<strong>bold</strong>" in out and "<code>code</code>" in out
    assert '<a href="https://example.org/x" rel="noopener noreferrer" target="_blank">' in out
    assert '<a href="?lesson=a&amp;step=2">next</a>' in out


MARKUP = "<>\"'=&#;:/()[]!`*_\\ \n\tjavascriptonerrorimgh"


@FAST
@given(st.text(st.sampled_from(list(MARKUP)), max_size=300) | st.text(max_size=300))
def test_any_lesson_text_renders_to_inert_html(text):
    out = lesson_html(text)
    assert isinstance(out, str)
    assert not re.search(r"<\s*(script|iframe|svg|details)\b", out, re.IGNORECASE), out
    assert not re.search(r"<[a-z]+[^>]*\son\w+\s*=", out, re.IGNORECASE), out
    for href in re.findall(r'(?:href|src)="([^"]*)"', out):
        assert safe_url(href), out


# --------------------------------------------------------------------------- lesson files


def valid_lesson() -> dict:
    return {
        "id": "demo",
        "title": "Demo",
        "summary": "A lesson for the tests.",
        "steps": [
            {
                "shape": [3, 4],
                "ops": ".transpose()",
                "text": "Transposed.",
                "question": {"ask": "stride", "axis": 0, "prompt": "p", "answer": 1, "why": "w"},
            },
            {"shape": [2], "ops": "", "text": "Plain.", "expect_error": None},
            {
                "shape": [3, 4],
                "ops": "",
                "text": "Flat.",
                "question": {
                    "ask": "flat_index", "index": [1, 2], "prompt": "p", "answer": 6, "why": "w"
                },
                "reveal": "Revealed.",
            },
            {
                "shape": [3, 4],
                "ops": "",
                "text": "Challenge.",
                "challenge": {
                    "prompt": "p",
                    "target": {"shape": [4, 3], "stride": [1, 4], "offset": 0,
                               "positions": [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]},
                    "solution": ".transpose()",
                    "why": "w",
                },
            },
        ],
    }  # fmt: skip


LESSON_KEYS = [
    "id", "title", "summary", "steps", "shape", "ops", "text", "question", "expect_error",
    "ask", "prompt", "answer", "why", "axis", "after", "dtype", "position", "index", "reveal",
    "challenge", "target", "stride", "offset", "positions", "solution",
]  # fmt: skip
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([4400, 5000, -400]).map(lambda n: 10**n if n > 0 else -(10**-n))
    | st.sampled_from([2**63, -(2**63) - 1])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(
        ["stride", "shape", "float32", "NonContiguousView", "", "\ud800", "x" * 30000]
    )
)
JSON_LIKE = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(LESSON_KEYS) | st.text(max_size=4), inner, max_size=5)
    ),
    max_leaves=12,
)


def _containers(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _containers(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _containers(item, (*path, i))


def _set(value, path, new):
    if not path:
        return new
    target = value
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return value


def _assert_lesson_or_error(call):
    from explorer.lessons import Lesson, LessonError

    try:
        result = call()
    except LessonError as exc:
        assert str(exc).startswith("01-demo.json"), exc
        assert len(str(exc)) < 600 and "\n" not in str(exc), exc
        return None
    assert isinstance(result, Lesson)
    return result


@FAST
@given(st.data())
def test_a_lesson_with_any_field_replaced_is_loaded_or_refused_with_a_lesson_error(data):
    from explorer.lessons import parse_lesson

    lesson = valid_lesson()
    path = data.draw(st.sampled_from(list(_containers(lesson))))
    lesson = _set(lesson, path, data.draw(JSON_LIKE))
    _assert_lesson_or_error(lambda: parse_lesson(lesson, "01-demo.json"))


@FAST
@given(JSON_LIKE)
def test_any_json_like_value_is_a_lesson_or_a_lesson_error(value):
    from explorer.lessons import parse_lesson

    _assert_lesson_or_error(lambda: parse_lesson(value, "01-demo.json"))


def _hostile_bytes():
    import json

    good = json.dumps(valid_lesson()).encode()
    spliced = st.tuples(st.integers(0, len(good)), st.binary(max_size=12)).map(
        lambda cut: good[: cut[0]] + cut[1] + good[cut[0] :]
    )
    deep = st.integers(1, 6000).map(lambda n: b'{"id": ' + b"[" * n + b"]" * n + b"}")
    digits = st.integers(1, 6000).map(lambda n: good.replace(b"[3, 4]", b"[" + b"9" * n + b"]"))
    return st.binary(max_size=200) | spliced | deep | digits


@FAST
@given(_hostile_bytes())
def test_any_bytes_are_a_lesson_or_a_lesson_error(raw):
    from explorer.lessons import parse_lesson_json

    _assert_lesson_or_error(lambda: parse_lesson_json(raw, "01-demo.json"))


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda t: t.replace('"ask": "stride"', '"ask": []'), "is not one of"),
        (lambda t: t.replace("[3, 4]", "[" + "9" * 5000 + "]"), "5,000 digits"),
        (lambda t: t.replace('"Demo"', "[" * 5000 + "]" * 5000), "nested 5001 deep"),
        (lambda t: t.replace('"Demo"', '"\\ud800"'), "unpaired"),
        (lambda t: t.replace('"answer": 1', '"answer": 9223372036854775808'), "64 bits"),
        (lambda t: t.replace('"Transposed."', '"' + "x" * 30000 + '"'), "at most 20,000"),
        (lambda t: "\ufeff" + t, "not valid JSON"),
    ],
    ids=["ask list", "5000 digits", "5000 deep", "surrogate", "int64", "long text", "bom"],
)
def test_a_malformed_file_is_refused_naming_file_and_reason(tmp_path, edit, reason):
    import json

    from explorer.lessons import LessonError, load_lesson_file

    path = tmp_path / "01-demo.json"
    path.write_text(edit(json.dumps(valid_lesson())), encoding="utf-8")
    with pytest.raises(LessonError) as caught:
        load_lesson_file(path)
    assert str(caught.value).startswith("01-demo.json: ") and reason in str(caught.value)


def test_a_folder_a_pipe_or_a_huge_file_named_like_a_lesson_is_refused(tmp_path):
    import os

    from explorer.lessons import MAX_FILE_BYTES, LessonError, load_lesson_file

    (tmp_path / "01-folder.json").mkdir()
    os.mkfifo(tmp_path / "02-pipe.json")  # reading it would block forever
    (tmp_path / "03-huge.json").write_bytes(b" " * (MAX_FILE_BYTES + 10))
    for name, reason in [
        ("01-folder.json", "not a regular file"),
        ("02-pipe.json", "not a regular file"),
        ("03-huge.json", "larger than"),
    ]:
        with pytest.raises(LessonError, match=reason):
            load_lesson_file(tmp_path / name)


def test_one_bad_file_is_skipped_named_and_logged_once_and_the_others_load(
    tmp_path, monkeypatch, caplog
):
    import json

    pytest.importorskip("panel")
    from explorer.classroom import read_catalogue

    good = valid_lesson()
    (tmp_path / "01-demo.json").write_text(json.dumps(good), encoding="utf-8")
    bad = dict(good, id="broken")
    bad["steps"] = [dict(good["steps"][0], question=dict(good["steps"][0]["question"], ask=[]))]
    (tmp_path / "02-broken.json").write_text(json.dumps(bad), encoding="utf-8")
    (tmp_path / "03-deep.json").write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    (tmp_path / "²-odd.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("CANDELA_LESSONS", str(tmp_path))
    caplog.set_level("WARNING", logger="explorer.lessons")
    for _ in range(2):  # a page per student
        lessons, problems = read_catalogue()
        assert [lesson.id for lesson in lessons] == ["demo"]
        assert any("02-broken.json" in p and "ask" in p for p in problems), problems
        assert any("03-deep.json" in p and "nested" in p for p in problems), problems
    logged = [r.getMessage() for r in caplog.records if "02-broken.json" in r.getMessage()]
    assert len(logged) == 1 and "\n" not in logged[0]


# --------------------------------------------------------------------------- shape and pipeline text

SHAPE_PIECES = ["0", "1", "3", "4", "12", "-1", "+2", "²", "٣", "9" * 19, "9" * 5000, "1048577"]
SHAPE_TEXT = st.lists(
    st.sampled_from(SHAPE_PIECES) | st.text(max_size=3), min_size=0, max_size=70
).map(",".join) | st.text(max_size=300)

#: Query values a page's URL may carry, digits that are not decimal (``²``, ``①``) among them.
QUERY_VALUES = st.sampled_from(
    [*SHAPE_PIECES[:-3], "①", "²³", "1²", "[1:]", "true", "1.5"]
) | st.text(max_size=6)
QUERY_KEYS = st.sampled_from(["shape", "ops", "step", "lesson", "unit", "compare", "x"])


@FAST
@given(st.lists(st.tuples(QUERY_KEYS, QUERY_VALUES), max_size=4))
def test_every_query_reaches_panel_in_a_form_it_parses_and_reads_as_it_was(pairs):
    # Panel 1.9's Location parses a page's query whether anything is synced to it or not,
    # and took every value of which str.isdigit() holds for an int: `?shape=²` was an HTTP
    # 500. Before the page's handler runs (explorer.serving.QueryDigits), such a value gets
    # a space: then Panel's own parse never raises, and the explorer reads what it would
    # have read (the same state, the same messages).
    from urllib.parse import urlencode

    from panel.util import parse_query
    from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

    from explorer.serving import QueryDigits
    from explorer.state import ExplorerState
    from explorer.url import read_query

    query = urlencode(pairs)
    line = RequestStartLine("GET", "/app?" + query, "HTTP/1.1")
    request = HTTPServerRequest(start_line=line, headers=HTTPHeaders({"Host": "localhost"}))
    QueryDigits(request)
    assert request.path == "/app" and request.uri == "/app?" + request.query
    parse_query("?" + request.query)  # raises on Panel 1.9 for the value as it came
    start = ExplorerState().start
    (before, said_before), (after, said_after) = (
        read_query("?" + q, start) for q in (query, request.query)
    )
    assert (after, said_after) == (before, said_before)
    if not any(v.isdigit() and not v.isdecimal() for _, v in pairs):
        assert request.query == query  # nothing else changes


OPS_PIECES = [
    ".view(", ".slice(s[", ".broadcast((", ".narrow(", ".transpose(", ".transpose_axes((",
    ".rotate_axis_innermost(", ".as_contiguous(", ".__class__(", ")", "(", "]", "[", ",", ":",
    "-", "+", "~", "not ", "s", ".", "0", "1", "2", "3", "-1", "9223372036854775807",
    "9223372036854775808", "0x" + "f" * 20, "9" * 5000, "-" * 500, "(" * 250, "s" + "[0]" * 50,
    "1" + "-1" * 60, "1_000", "1e400", "'x'", "lambda: 0", "**", "\x00", "\ud800",
]  # fmt: skip
OPS_TEXT = st.lists(st.sampled_from(OPS_PIECES), max_size=30).map("".join) | st.text(max_size=200)


def _evaluate_or_state_error(shape, ops):
    from explorer import columns as C
    from explorer.state import Result, StateError, evaluate

    try:
        result = evaluate(shape, ops)
    except StateError as exc:
        assert str(exc) and len(str(exc)) < 3000
        return None
    assert isinstance(result, Result)
    C.columns_for(result.tensor)  # what is accepted also draws
    return result


@FAST
@given(SHAPE_TEXT)
def test_any_shape_text_is_a_shape_or_a_state_error(text):
    _evaluate_or_state_error(text, "")


@FAST
@given(st.sampled_from(["3,4", "2,3,4", "0", "1"]), OPS_TEXT)
def test_any_pipeline_text_is_a_result_or_a_state_error(shape, ops):
    _evaluate_or_state_error(shape, ops)


@FAST
@given(OPS_TEXT)
def test_the_parser_raises_only_pipeline_errors(ops):
    from explorer.pipeline import PipelineError, parse

    try:
        parse(ops)
    except PipelineError as exc:
        assert str(exc)


@pytest.mark.parametrize(
    ("shape", "ops", "words"),
    [
        ("3,4", ".view(" + "-" * 500 + "12)", "nests more than"),
        ("3,4", ".view((" + "9" * 1500 + ",))", "1,500 digits"),
        ("3,4", ".slice(s[::9223372036854775808])", "9223372036854775808 is outside the 64-bit"),
        ("3,4", ".slice(s[::9223372036854775807])", "36893488147419103228"),
        ("3,4", ".broadcast((" + "1," * 63 + "3, 4))", "65 axes"),
        ("0", ".broadcast((9223372036854775807, 0))", "more than the 576,460,752,303,423,488"),
        ("²", "", "`²` is not a whole number"),
        ("0,1,1,1,1,1,1,9999999999999999999", "", "has 19 digits"),
        ("9" * 5000, "", "at most 200"),
        (",".join(["1"] * 65), "", "rank 65"),
        ((10**5000,), "", "5,001 digits"),
    ],
    ids=[
        "500 signs", "1500 digits", "int64 step", "stride overflow", "rank 65", "huge axis",
        "superscript two", "19-digit size", "5000-digit shape", "65 axes", "huge int",
    ],
)  # fmt: skip
def test_hostile_shapes_and_pipelines_are_state_errors_naming_the_value(shape, ops, words):
    from explorer.state import StateError, evaluate

    with pytest.raises(StateError) as caught:
        evaluate(shape, ops)
    assert words in str(caught.value)


# --------------------------------------------------------------------------- export paths and arguments

PAGE = "<!doctype html><title>stub</title>"


@pytest.fixture
def quick_pages(monkeypatch):
    """The page and the explorer stubbed: these tests are about where the page goes."""
    pytest.importorskip("panel")
    from candela import Layout
    from explorer import export, state

    class Stub:
        error = None
        layout = Layout((3, 4))

        def __init__(self, **params):
            pass

    monkeypatch.setattr(export, "export_html", lambda ex, title="": PAGE)
    monkeypatch.setattr(state, "ExplorerState", Stub)


def _export(capsys, path, *more):
    from explorer.cli import main

    try:
        code = main([f"--export={path}", "--shape", "3,4", *more])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _leftovers(folder):
    return [p.name for p in folder.rglob("*.part")]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("missing/page.html", "does not exist"),
        (".", "folder"),
        ("", "empty"),
        ("   ", "empty"),
        ("file.txt/page.html", "not a folder"),
        ("x\0y.html", "NUL"),
        ("n" * 300 + ".html", "File name too long"),
    ],
    ids=["missing folder", "a folder", "empty", "blank", "file as folder", "nul", "too long"],
)
def test_a_bad_export_path_exits_2_naming_it_in_one_line(
    tmp_path, monkeypatch, capsys, quick_pages, name, words
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file.txt").write_text("x")
    code, out, err = _export(capsys, name)
    assert code == 2, (out, err)
    assert repr(name) in err and words in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_an_unwritable_path_exits_2_and_leaves_nothing(tmp_path, monkeypatch, capsys, quick_pages):
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path))

    target = tmp_path / "page.html"
    target.write_text("old page")
    if os.geteuid() == 0:  # root writes anywhere: refuse the way a read-only folder would
        monkeypatch.setattr(tempfile, "mkstemp", refuse)
    else:
        tmp_path.chmod(0o555)
    try:
        code, out, err = _export(capsys, str(target))
    finally:
        tmp_path.chmod(0o755)
    assert code == 2 and repr(str(target)) in err and "Permission denied" in err, err
    assert target.read_text() == "old page" and not _leftovers(tmp_path)


def test_a_failed_write_never_leaves_half_a_file(tmp_path, monkeypatch, capsys, quick_pages):
    target = tmp_path / "page.html"
    target.write_text("old page")

    def disk_full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    code, out, err = _export(capsys, str(target))
    assert code == 2 and "No space left on device" in err and repr(str(target)) in err
    assert target.read_text() == "old page" and not _leftovers(tmp_path)


def test_a_symlink_at_the_path_is_replaced_not_written_through(tmp_path, capsys):
    pytest.importorskip("panel")
    elsewhere = tmp_path / "precious.txt"
    elsewhere.write_text("do not touch")
    link = tmp_path / "page.html"
    link.symlink_to(elsewhere)
    code, out, err = _export(capsys, str(link), "--ops", ".transpose()")
    assert code == 0, err
    assert not link.is_symlink() and "<html" in link.read_text(encoding="utf-8").lower()
    assert elsewhere.read_text() == "do not touch"
    assert oct(link.stat().st_mode & 0o777) != oct(0o600)  # a normal file, not mkstemp's
    assert not _leftovers(tmp_path)


PATH_PIECES = ["", " ", ".", "..", "a", "page.html", "\0", "é", "-", "~", "x" * 300, "dir", "f"]


@settings(
    max_examples=int(os.environ.get("DOORS_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
@given(
    st.lists(st.sampled_from(PATH_PIECES), max_size=4).map("".join)
    | st.text(st.characters(blacklist_characters="/"), max_size=40)
    | st.sampled_from(["dir/", "dir/x.html", "f/x.html", "nope/x.html", "link", "dirlink"])
)
def test_any_export_path_is_written_or_refused_with_exit_2(capsys, quick_pages, path):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "dir").mkdir()
        (root / "f").write_text("file")
        (root / "link").symlink_to(root / "f")
        (root / "dirlink").symlink_to(root / "dir")
        before = os.getcwd()
        os.chdir(root)
        try:
            started = time.monotonic()
            code, out, err = _export(capsys, path)
        finally:
            os.chdir(before)
        assert time.monotonic() - started < 30
        assert code in (0, 2), (code, err)
        if code == 0:
            assert (root / path).read_text() == PAGE and not (root / path).is_symlink()
        else:
            assert len(err.strip().splitlines()) == 1 and repr(path) in err, err
        if path != "f":  # a symlink to it is replaced, never written through
            assert (root / "f").read_text() == "file"
        assert not _leftovers(root)


ARG_PIECES = [
    "--port", "--address", "--allow-origin", "--num-procs", "--ready", "--shape", "--ops",
    "--no-browser",
    "--bogus", "0", "5006", "65536", "-1", "127.0.0.1", "localhost", "0.0.0.0", "::1", "",
    "999.1.1.1", "\0", "*", "http://a.example:1", "javascript:x", "a" * 300, "9" * 5000, "²",
    "--", "--export=--", "--address=--", "--shape=--", "--ops=--", "--port=--", "--num-procs=--",
    "--allow-origin=--", "--ready=--",
]  # fmt: skip


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    database=None,
)
@given(st.lists(st.sampled_from(ARG_PIECES) | st.text(max_size=12), max_size=8))
def test_any_arguments_are_served_or_refused_in_one_line(monkeypatch, capsys, argv):
    from explorer import cli

    seen = []
    safe = {"127.0.0.1", "localhost", "0.0.0.0", "::1", ""}
    real_resolve = cli.resolve_port

    def resolve(address, port):  # no name lookups from a test: only addresses known here
        if address not in safe:
            raise OSError(f"not looked up in tests: {address!r}")
        return real_resolve(address, port)

    monkeypatch.setattr(cli, "resolve_port", resolve)
    monkeypatch.setattr(cli, "serve", lambda args, kwargs: seen.append(kwargs) or 0)
    monkeypatch.setattr(cli, "export", lambda args: 0)
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse: --help, or a bad argument
        code = exc.code
    err = capsys.readouterr().err
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err
    for kwargs in seen:
        assert "*" not in kwargs["websocket_origin"] or "*" in argv
        assert 0 < kwargs["port"] <= 65535
