"""A led class started from the page: ``POST class/new``, what it may cost, where it is refused.

The store's bound and its forgetting are laws over any sequence of starts, pages
coming and going and time passing; the route is tried with raw HTTP requests against
a served explorer (and the command with two workers), and the button in Chromium
(test_class_start_browser.py).
"""

from __future__ import annotations

import http.client
import re
import urllib.parse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from explorer import class_start
from explorer import class_store as cs
from explorer.connection_bounds import AddressBuckets
from explorer.recycling import IDLE_S, Recycler, busy
from explorer.testing import free_port, start_command, stop_command, wait_for_url


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --------------------------------------------------------------------------- the store

#: One step of a store's life: a page starts a class (False) or the command line does
#: (True); a page opens class k; page k closes; time passes (s).
STEPS = hs.one_of(
    hs.tuples(hs.just("create"), hs.booleans()),
    hs.tuples(hs.just("open"), hs.integers(0, 80)),
    hs.tuples(hs.just("close"), hs.integers(0, 80)),
    hs.tuples(hs.just("wait"), hs.sampled_from([1.0, 300.0, cs.UNOPENED_S, cs.QUIET_S, 9e4])),
)


@settings(max_examples=60, deadline=None)
@given(steps=hs.lists(STEPS, max_size=150))
def test_a_store_never_holds_more_than_its_bound_and_forgets_only_quiet_classes_from_pages(steps):
    clock = Clock()
    store = cs.MemoryStore(clock=clock)
    made: list[tuple[str, bool]] = []  # (code, lasting), in the order made
    pages: dict[int, list] = {}  # a made class's number -> its open pages' stops
    last_seen: dict[str, float] = {}  # code -> when it last had no page (None: has one)
    ever_opened: set[str] = set()
    for kind, arg in steps:
        if kind == "create":
            live = sum(1 for code, _ in made if store.exists(code))
            try:
                code, token = store.create(lasting=arg)
            except cs.ClassError as exc:
                # Refused only to a page, at the bound, once quiet classes are gone.
                from_pages = sum(1 for code, lasting in made if store.exists(code) and not lasting)
                assert not arg and from_pages == cs.MAX_CLASSES, (live, exc)
                assert str(cs.MAX_CLASSES) in str(exc)
                continue
            assert store.is_teacher(code, token)
            made.append((code, arg))
            last_seen[code] = clock.now
        elif kind == "open" and arg < len(made):
            code = made[arg][0]
            if store.exists(code):
                pages.setdefault(arg, []).append(store.subscribe(code, lambda kind: None))
                last_seen[code] = None
                ever_opened.add(code)
        elif kind == "close" and pages.get(arg):
            pages[arg].pop()()
            if not pages[arg]:
                last_seen[made[arg][0]] = clock.now
        elif kind == "wait":
            clock.now += arg
        assert sum(1 for code, lasting in made if store.exists(code) and not lasting) <= (
            cs.MAX_CLASSES
        )
        store.held()  # (quiet classes are forgotten as the store is used)
        for code, lasting in made:
            since = last_seen[code]
            quiet = None if since is None else clock.now - since
            if lasting or quiet is None:  # the command line made it, or a page is in it
                assert store.exists(code), (code, lasting, quiet)
            elif quiet < (cs.QUIET_S if code in ever_opened else cs.UNOPENED_S):
                assert store.exists(code), (code, quiet)
            else:
                assert not store.exists(code), (code, quiet)


def test_a_full_store_says_so_and_takes_a_class_again_once_one_has_gone_quiet():
    clock = Clock()
    store = cs.MemoryStore(clock=clock)
    kept = [store.create(lasting=False)[0] for _ in range(cs.MAX_CLASSES)]
    stops = [store.subscribe(code, lambda kind: None) for code in kept]
    with pytest.raises(cs.ClassError, match=f"holds {cs.MAX_CLASSES} classes"):
        store.create(lasting=False)
    clock.now += cs.QUIET_S * 2  # pages still in every class: nothing is forgotten
    with pytest.raises(cs.ClassError):
        store.create(lasting=False)
    stops[3]()  # one class's last page leaves ...
    clock.now += cs.QUIET_S - 1
    with pytest.raises(cs.ClassError):
        store.create(lasting=False)
    clock.now += 1  # ... and once it has been quiet long enough, it makes room
    code, _ = store.create(lasting=False)
    assert not store.exists(kept[3]) and store.exists(code) and store.exists(kept[4])


def test_a_worker_keeps_while_a_class_lives_in_it_and_may_go_once_it_is_forgotten(
    monkeypatch,
):
    clock = Clock()
    store = cs.MemoryStore(clock=clock)
    monkeypatch.setattr(cs, "_CURRENT", store)
    monkeypatch.setattr("explorer.recycling.last_request", lambda: 0.0)

    class Server:  # no session open
        def get_sessions(self):
            return []

    sizes = iter([100.0] + [400.0] * 10)  # warm, then grown: recycled once idle
    recycler = Recycler(lambda: busy(Server()), rss=lambda: next(sizes), clock=clock)
    recycler.session_created()
    code, _ = store.create(lasting=False)
    stop = store.subscribe(code, lambda kind: None)  # the teacher's page
    clock.now += 3600.0
    assert not recycler.check()  # idle and grown, but a class lives in it
    stop()
    clock.now += cs.QUIET_S - 1
    assert not recycler.check()
    clock.now += 1  # quiet long enough: forgotten ...
    assert not recycler.check() and not store.exists(code)
    clock.now += IDLE_S  # ... and the worker, idle since, may go
    assert recycler.check()


# --------------------------------------------------------------------------- the budget


@given(gaps=hs.lists(hs.floats(0.0, 2000.0), min_size=1, max_size=60))
def test_an_address_starts_at_most_its_burst_and_then_its_rate_and_a_teacher_never_waits(gaps):
    clock = Clock()
    budget = AddressBuckets(*class_start.STARTS, clock)
    rate, burst = class_start.STARTS
    admitted, start = 0, clock.now
    for gap in gaps:
        clock.now += gap
        admitted += budget.take("10.0.0.7") == 0.0
        assert admitted <= burst + (clock.now - start) * rate + 1e-9
    teacher = AddressBuckets(*class_start.STARTS, clock)
    for _ in range(20):  # a class every ten minutes, all day
        clock.now += 600.0
        assert teacher.take("10.0.0.8") == 0.0


# --------------------------------------------------------------------------- the route


def post(url: str, path: str = "class/new", referer: str | None = None, method: str = "POST"):
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    headers = {"Referer": referer} if referer else {}
    conn.request(method, "/" + path, body=b"" if method == "POST" else None, headers=headers)
    response = conn.getresponse()
    body = response.read().decode("utf-8", "replace")
    conn.close()
    return response.status, dict(response.getheaders()), body


@pytest.fixture
def fresh(monkeypatch):
    store = cs.MemoryStore()
    monkeypatch.setattr(cs, "_CURRENT", store)
    monkeypatch.setattr(class_start, "_BUDGET", AddressBuckets(*class_start.STARTS))
    return store


@pytest.fixture(scope="module")
def served():
    """The route alone, on Tornado in a thread of its own: no Bokeh server here, whose
    thread would share Bokeh's one ``curdoc()`` with the tests that follow (the route
    inside the served page is the browser test's: test_class_start_browser.py)."""
    import asyncio
    import threading

    from tornado.httpserver import HTTPServer
    from tornado.web import Application

    port, held, up = free_port(), {}, threading.Event()

    def run() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        server = HTTPServer(Application(class_start.route()))
        server.listen(port, "127.0.0.1")
        held["loop"] = loop
        up.set()
        loop.run_forever()
        server.stop()
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert up.wait(10)
    yield f"http://127.0.0.1:{port}/"
    held["loop"].call_soon_threadsafe(held["loop"].stop)
    thread.join(10)


def test_a_start_opens_the_teachers_page_of_a_new_class_where_the_page_was(served, fresh):
    status, headers, _ = post(served, referer=served + "?lesson=transpose&step=3&shape=9,9")
    assert status == 303
    found = re.fullmatch(
        r"\.\./\?class=([A-Z2-9]{4})&teach=([\w%-]+)&lesson=transpose&step=3", headers["Location"]
    )
    assert found, headers["Location"]
    code, token = found.group(1), urllib.parse.unquote(found.group(2))
    assert fresh.is_teacher(code, token) and fresh.held() == 1


@pytest.mark.safety
def test_a_start_is_refused_in_a_page_that_says_why_and_makes_no_class(served, fresh):
    status, headers, body = post(served, method="GET")  # a link followed, a crawler
    assert status == 405 and headers["Allow"] == "POST" and fresh.held() == 0
    fresh.closed_to_pages = "This server runs several processes <b>"
    status, _, body = post(served)
    assert status == 403 and "several processes &lt;b&gt;" in body and fresh.held() == 0
    fresh.closed_to_pages = None
    for _ in range(int(class_start.STARTS[1])):
        assert post(served)[0] == 303
    status, headers, body = post(served)
    assert status == 429 and int(headers["Retry-After"]) > 60 and "try again in" in body
    assert fresh.held() == class_start.STARTS[1]
    assert "<script" not in body.lower()


@pytest.mark.safety
def test_a_referer_brings_only_the_pages_lesson_step_and_presenter_mode():
    kept = class_start.kept_query(
        "http://x/?ops=%3Cscript%3E&lesson=slicing&step=2&teach=abc&class=ZZZZ&presenter=true"
    )
    assert kept == "&lesson=slicing&step=2&presenter=true"
    assert class_start.kept_query("http://x/?lesson=" + "a" * 65) == ""
    assert class_start.kept_query("") == class_start.kept_query("not a url") == ""


def test_a_server_of_two_workers_says_a_class_cannot_be_started_from_its_page():
    proc = start_command(["--port", "0", "--ready", "0", "--num-procs", "2"])
    try:
        url = "".join(wait_for_url(proc)).split("Candela Explorer: ", 1)[1].split()[0]
        status, _, body = post(url)
    finally:
        out = stop_command(proc)
    assert status == 403 and "--class-store redis://" in body
    assert "Traceback" not in out
