"""Pages built ahead (``explorer.pool``): a request that takes one gets the page it would have built.

Served in-process (as the command line serves it), asked for over plain HTTP;
each page's explorer is read from its session's document on the server.
"""

from __future__ import annotations

import asyncio
import gc
import http.client
import json
import threading
import time
import weakref
from contextlib import contextmanager
from urllib.parse import quote, urlsplit

import pytest

from explorer.pool import _POOLS
from explorer.testing import BokehClient, http_get, run_in_thread, served_app, session_token

#: The URLs compared: ordinary, a lesson, units, presenter, and the hostile ones
#: the issue named (each must draw with a message, built ahead or not).
QUERIES = [
    "",
    "?shape=5,6&ops=.transpose()",
    "?shape=64,64",
    "?shape=2,3,4&ops=.permute((2,0,1)).slice(s[:, ::-1])&unit=float32",
    "?lesson=transpose&step=2",
    "?lesson=transpose&step=3&presenter=1",
    "?lesson=transpose&step=--2",
    "?ops=.view(" + "-" * 500 + "12)",
    "?ops=.broadcast(" + "(1,)" * 63 + "(3,4))",
    "?shape=0,1,1,1,1,1,1,9999999999999999999",
    "?shape=" + "9" * 5000,
    "?shape=²",
    "?shape=3,4&ops=.bogus()",
]


def get(url: str, query: str) -> int:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.request("GET", "/" + quote(query, safe="?=&,()[]:."))
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def open_session(url: str) -> str:
    """GET the page, as a browser does first; its session's token."""
    status, page = http_get(urlsplit(url).port)
    assert status == 200
    return session_token(page)


def pull_documents(url: str, token: str, seconds: float = 0.0, drawn: bool = False) -> None:
    """Open the session's WebSocket and ask for its document, as its page does; then talk to
    the server every 0.1 s until ``seconds`` have passed (ask for its info: a page asks for
    its whole document once, and asking again and again is a flood the server slows,
    explorer.connection_bounds); then, if ``drawn``, send what a page sends once its views
    are drawn (here: ask for the server's info)."""

    async def talk() -> None:
        client = BokehClient(urlsplit(url).port)
        await client.connect(token)
        end, n = time.monotonic() + seconds, 0
        await client.pull()
        while time.monotonic() < end:
            n += 1
            await client.request("SERVER-INFO-REQ", "SERVER-INFO-REPLY")
            await asyncio.sleep(0.1)
        if drawn:
            await client.request("SERVER-INFO-REQ", "SERVER-INFO-REPLY")
        await client.close()

    run_in_thread(talk, timeout=seconds + 60)


@contextmanager
def server(ready: int):
    """The app served with ``ready`` pages built ahead; yields (url, context, pool)."""
    from panel.io.state import state

    with served_app(ready=ready) as url:
        (context,) = [
            ctx
            for srv, *_ in list(state._servers.values())
            if f":{srv.port}/" in url
            for ctx in srv._tornado._applications.values()
        ]
        yield url, context, _POOLS.get(context)


def wait_for(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the pool did not get there")
        time.sleep(0.05)


def page_state(context, before: set) -> dict:
    """What the page of the one session made since ``before`` shows, as plain data."""
    from explorer.app import page_of

    (session,) = [s for sid, s in context._sessions.items() if sid not in before]
    ex = page_of(session.document)
    figures = ex.figures
    return {
        "params": {
            k: repr(v)
            for k, v in ex.param.values().items()
            if k in ("shape", "ops", "unit", "lesson", "step", "presenter", "concealed")
        },
        "error": ex.error,
        "url": ex.url.location.search if ex.url else None,
        "fields": ex.fields_pane.object,
        "boxes": [ex.editor.shape_input.value, ex.editor.ops_input.value],
        "lesson text": [getattr(p, "object", None) for p in ex.classroom.step_parts],
        "frames": json.dumps(
            {k: list(map(str, v)) for k, v in figures.frames_source.data.items()}, sort_keys=True
        ),
    }


def visit(url, context, query: str) -> dict:
    before = set(context._sessions)
    assert get(url, query) == 200
    return page_state(context, before)


@pytest.mark.patched("pool_sessions")
def test_a_page_built_ahead_shows_what_a_page_built_on_request_shows():
    with server(ready=0) as (cold_url, cold_ctx, none):
        assert none is None
        cold = [visit(cold_url, cold_ctx, q) for q in QUERIES]
    with server(ready=len(QUERIES)) as (url, context, pool):
        wait_for(lambda: len(pool.ready) == len(QUERIES))
        warm = [visit(url, context, q) for q in QUERIES]
        assert pool.taken == len(QUERIES)  # every page here was one built ahead
    for query, a, b in zip(QUERIES, cold, warm):
        assert b == a, query
    # The hostile ones drew with a message naming what was wrong, the good ones without.
    errors = dict(zip(QUERIES, (s["error"] for s in warm)))
    assert errors[""] is None and errors["?shape=5,6&ops=.transpose()"] is None
    assert "9999999999999999999" in errors["?shape=0,1,1,1,1,1,1,9999999999999999999"]
    assert "bogus" in errors["?shape=3,4&ops=.bogus()"]


@pytest.mark.patched("pool_sessions")
def test_the_pool_fills_again_once_requests_stop(monkeypatch):
    from explorer import pool as P

    # These pages are never opened (no browser asks for their documents): the pool
    # waits this long for them (10 s when served).
    monkeypatch.setattr(P, "OPENING_S", 1.0)
    with server(ready=3) as (url, context, pool):
        wait_for(lambda: len(pool.ready) == 3)
        for _ in range(5):  # two more than are ready: those are built on request
            assert get(url, "?shape=4,4") == 200
        assert pool.taken == 3 and len(pool.ready) == 0
        wait_for(lambda: len(pool.ready) == 3)
        assert pool.built == 6


@pytest.mark.patched("pool_sessions")
def test_a_lesson_file_added_while_serving_shows_on_the_next_page(tmp_path, monkeypatch):
    from tests.explorer.test_hostile_lessons_browser import good_lesson

    (tmp_path / "01-good.json").write_text(json.dumps(good_lesson()), encoding="utf-8")
    monkeypatch.setenv("CANDELA_LESSONS", str(tmp_path))
    with server(ready=2) as (url, context, pool):
        wait_for(lambda: len(pool.ready) == 2)
        built = [weakref.ref(doc) for doc, _ in pool.ready]
        second = good_lesson() | {"id": "second", "title": "A second lesson"}
        (tmp_path / "02-second.json").write_text(json.dumps(second), encoding="utf-8")
        shown = visit(url, context, "?lesson=second")
        assert pool.discarded == 2 and pool.taken == 0  # both were built without it
        assert shown["params"]["lesson"] == repr("second")
        assert shown["error"] is None
        gc.collect()
        assert [ref() for ref in built] == [None, None]  # and are let go


@pytest.mark.patched("pool_sessions")
def test_the_pool_builds_nothing_while_a_page_talks_to_the_server(monkeypatch):
    # A page pulling its document or sending edits is the server at work: a build
    # then would delay it. Here one page talks to the server every 0.1 s.
    from explorer import pool as P

    # Quiet means 2 s without a message: room for a loaded machine to open the WebSocket
    # after the last page was taken. And a page not yet opened holds the pool back for
    # 0.5 s only (10 s when served), so what holds it back while the page talks is its
    # talking.
    monkeypatch.setattr(P, "QUIET_S", 2.0)
    monkeypatch.setattr(P, "OPENING_S", 0.5)

    with server(ready=2) as (url, context, pool):
        wait_for(lambda: len(pool.ready) == 2)
        token = open_session(url)
        assert get(url, "") == 200  # the second page built ahead is taken too
        assert len(pool.ready) == 0
        built = pool.built
        pull_documents(url, token, seconds=3.0)
        assert pool.built == built  # nothing was built while the page talked
        wait_for(lambda: len(pool.ready) == 2)  # and once it stopped, the pool filled


@pytest.mark.parametrize("ready", [0, 3])
def test_a_closed_sessions_page_is_let_go(ready):
    # 200 students a day must not leave 200 pages in memory: once Bokeh discards a
    # session (its browser gone), nothing of the explorer may keep its page alive.
    from bokeh.document import Document

    from explorer.app import Explorer

    def alive() -> tuple[int, int]:
        gc.collect()
        objects = gc.get_objects()
        return (
            sum(isinstance(o, Document) for o in objects),
            sum(isinstance(o, Explorer) for o in objects),
        )

    with server(ready=ready) as (url, context, pool):

        def discard_all() -> None:
            done = threading.Event()

            async def go() -> None:
                for session in list(context._sessions.values()):
                    await context._discard_session(session, lambda s: True)
                done.set()

            context._loop.add_callback(go)
            assert done.wait(30)

        def settled() -> tuple[int, int]:
            if pool is not None:
                wait_for(lambda: len(pool.ready) == ready)
            return alive()

        assert get(url, "") == 200
        discard_all()
        before = settled()
        for _ in range(8):
            assert get(url, "?shape=4,4") == 200
        assert alive()[1] >= before[1] + 8 - ready  # the pages are alive while open
        discard_all()
        assert settled() == before


@pytest.mark.patched("pool_sessions")
def test_the_pool_waits_while_a_page_served_is_still_opening(monkeypatch):
    # Between its page and asking for its document a browser loads the scripts, about
    # a second with nothing sent: a build then would hold the document back. Between
    # the document and its first change it builds the views and asks for their
    # stylesheets, another second with nothing sent: a build then would hold the
    # stylesheets back, and Panel's text stays hidden until they come.
    from explorer import pool as P

    monkeypatch.setattr(P, "DRAWING_S", 30.0)  # 4 s when served: here, time never lets go
    with server(ready=1) as (url, context, pool):
        wait_for(lambda: len(pool.ready) == 1)
        token = open_session(url)
        assert pool.taken == 1 and len(pool.ready) == 0
        time.sleep(P.QUIET_S + 1.5)  # quiet, but the page has not been opened
        assert pool.built == 1
        pull_documents(url, token)  # as the browser does: ask for the document
        time.sleep(P.QUIET_S + 1.5)  # quiet, but the page is not yet drawn
        assert pool.built == 1
        pull_documents(url, token, drawn=True)  # drawn: its first change
        wait_for(lambda: len(pool.ready) == 1, timeout=P.DRAWING_S - 10)  # not by time
