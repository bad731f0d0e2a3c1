"""Pages built ahead: a student's request finds its page already built.

Building one page costs the server about 0.6 s of CPU: the explorer, its
Panel objects and their ~110 Bokeh models, almost all of it Panel's and
Bokeh's fixed work per object. Thirty students opening the link at once would
wait for thirty of those, one after another. So while the server has nothing
else to do it builds up to ``size`` pages ahead, each into a Bokeh document of
its own, exactly as a request with no query would have it built (the app runs
through Panel's application, with no session yet). A request then takes one:

1. the document gets the request's session, and Panel's session-created hooks
   run, as for any new session;
2. the page's location is set from the request (path, query) and ``arrive``
   runs: the explorer reads its URL and, from then on, keeps it in step, as a
   page built for the request does (:func:`explorer.app.open_page`);
3. Bokeh makes it a session as usual.

A request that finds no page ready builds one as before, so nothing depends on
the pool. The pool fills again only once the server has been quiet for :data:`QUIET_S`
(no page asked for, no WebSocket message: no page pulling its document, no
edit) and every page served has been opened (its browser, after loading the
scripts for about a second, has asked for its document; or :data:`OPENING_S`
passed), one page per turn of the event loop, so a build delays a burst, a
page opening or an edit by one page's build at most.

A built page must be the page a request would build: the one input a page
reads besides its URL is the lesson catalogue (a teacher may add a lesson file
while the server runs), so each page keeps a stamp of the lesson files it was
built with, and pages built with another set are thrown away unused.

Bokeh has no public hook to give a session a document built beforehand: the
pool takes the place of the application context's
``create_session_if_needed`` (Bokeh 3.9's, whose steps it repeats, with the
document from the pool instead of a new one). That is a patch
(:mod:`explorer.patches.pool_sessions`, which holds every read of Bokeh's and Panel's
private names the pool needs): with it off, there is no pool.
"""

from __future__ import annotations

import collections
import logging
import time
import weakref
from collections.abc import Callable
from typing import Any

from explorer.patches import pool_sessions as sessions
from explorer.patches.messages import OPENING as _OPENING
from explorer.patches.messages import last_message, watch_openings

__all__ = ["DRAWING_S", "OPENING_S", "QUIET_S", "PagePool", "install", "pool_of"]

log = logging.getLogger("candela-explorer")

#: The pool builds only once no page was asked for and no WebSocket message came for this long.
#: A build holds the server for ~0.6 s: an edit that comes meanwhile waits for it. A class
#: at work (30 students, an edit each every few seconds) leaves gaps of half a second
#: often and of two seconds almost never: the pool waits for a class to pause, and a
#: student who arrives meanwhile has a page built on request, as without the pool.
QUIET_S = 2.0
#: A page served but not yet opened (its browser still loading the scripts, about a
#: second, before it asks for its document) holds the pool back for up to this long.
OPENING_S = 10.0
#: A page whose document was sent and that has sent nothing since (its browser
#: building the views and fetching their stylesheets) holds the pool back for up to
#: this long.
DRAWING_S = 4.0
#: How long after the server starts the pool begins to build (the first page a
#: browser asks for, opened by the command, is built for it meanwhile).
START_S = 1.0


class PagePool:
    """Up to ``size`` documents with the app already built, for the next sessions.

    ``context`` is Bokeh's ``ApplicationContext`` of the app; ``arrive(doc)``
    runs once the document has its session (with Panel's current document set
    to it); ``stamp()`` describes whatever else a page reads when it is built,
    and a page whose stamp is no longer current is not used.
    """

    def __init__(
        self,
        context: Any,
        size: int,
        arrive: Callable[[Any], None],
        stamp: Callable[[], object] = lambda: None,
    ) -> None:
        self.context = context
        self.size = max(0, int(size))
        self.arrive = arrive
        self.stamp = stamp
        self.ready: collections.deque = collections.deque()  # (document, stamp)
        self.built = self.taken = self.discarded = 0
        self._last_request = 0.0
        self._scheduled = False
        self._original = sessions.replace_session_creation(context, self.create_session_if_needed)

    # ------------------------------------------------------------------ filling

    def start(self, delay: float = START_S) -> None:
        """Begin filling (on the server's event loop, the thread this is called in)."""
        watch_openings()
        self._last_request = time.monotonic() + delay - QUIET_S
        self._schedule(delay)

    def _schedule(self, delay: float) -> None:
        if self._scheduled or self.size == 0:
            return
        self._scheduled = True
        sessions.loop_of(self.context).call_later(max(0.0, delay), self._fill_one)

    def _fill_one(self) -> None:
        self._scheduled = False
        if len(self.ready) >= self.size:
            return
        now = time.monotonic()
        wait = max(self._last_request, last_message()) + QUIET_S - now
        ctx, opening = self.context, False
        for session_id, (since, pulled) in list(_OPENING.items()):
            if now - since > (DRAWING_S if pulled else OPENING_S):  # a client gone quiet
                _OPENING.pop(session_id, None)
            elif sessions.is_known(ctx, session_id):
                opening = True  # (a session gone meanwhile, or another server's, is not)
        if wait > 0 or sessions.is_pending(ctx) or opening:
            self._schedule(max(wait, 0.1))  # pages are being served or opened: later
            return
        try:
            self.ready.append(self._build())
            self.built += 1
        except Exception as exc:  # a page that cannot be built is built per request instead
            log.warning("could not build a page ahead: %s: %s", type(exc).__name__, exc)
            self.size = len(self.ready)
            return
        self._schedule(0)  # the next one on another turn: requests in between go first

    def _build(self) -> tuple[Any, object]:
        from bokeh.document import Document

        stamp = self.stamp()
        doc = Document()
        self.context.application.initialize_document(doc)
        return doc, stamp

    def _take(self) -> Any | None:
        current = None
        while self.ready:
            doc, stamp = self.ready.popleft()
            current = self.stamp() if current is None else current
            if stamp == current:
                self.taken += 1
                return doc
            self.discarded += 1
            _dispose(doc)
        return None

    # ------------------------------------------------------------------ sessions

    async def create_session_if_needed(self, session_id, request=None, token=None):
        """Bokeh's ``ApplicationContext.create_session_if_needed``, with a page built ahead."""

        ctx = self.context
        self._last_request = time.monotonic()
        known = sessions.is_known(ctx, session_id)
        if not known and session_id:
            _OPENING[session_id] = (self._last_request, False)  # until its page is drawn
        try:
            doc = None if known or not session_id else self._take()
            if doc is None:
                return await self._original(session_id, request, token)
            return await self._open(doc, session_id, request, token)
        finally:
            self._last_request = time.monotonic()
            self._schedule(QUIET_S)

    async def _open(self, doc, session_id, request, token):
        """A new session with the built ``doc`` (opened by :meth:`_arrive`) in place of a new
        document and running the app."""
        return await sessions.open_session(
            self.context, doc, session_id, request, token, ready=self._arrive
        )

    def _arrive(self, doc, session_context) -> None:
        sessions.arrive(self.context, doc, session_context, then=self.arrive)


def _dispose(doc) -> None:
    """Let go of a page built ahead that no session will take, as Panel lets go of a closed one.

    Its session-destroyed callbacks (Panel's: forget its views and its location)
    run with a stand-in for the session it never had, then the document is destroyed.
    """
    import types

    stand_in = types.SimpleNamespace(id=f"unused-page-{id(doc)}", _document=doc)
    try:
        for callback in list(doc.session_destroyed_callbacks):
            callback(stand_in)
        doc.session_destroyed_callbacks = set()
        doc.destroy(None)
    except Exception as exc:  # never fatal: at worst the page stays in memory
        log.warning("could not let go of a page built ahead: %s: %s", type(exc).__name__, exc)


def install(
    server: Any,
    size: int,
    arrive: Callable[[Any], None],
    stamp: Callable[[], object] = lambda: None,
    path: str = "/",
) -> PagePool | None:
    """A :class:`PagePool` of ``size`` for the app ``server`` (Panel's ``pn.serve``) serves at ``path``.

    Only that app: a server may serve others beside it (the benchmarks serve a
    minimal app for comparison, which must be served as Panel serves it). The
    pool builds on the server's event loop, whichever thread calls this.
    """
    context = sessions.app_context(server, path)  # None: the patch is off
    if context is None:
        return None
    pool = _POOLS.get(context)
    if pool is None:
        pool = _POOLS[context] = PagePool(context, size, arrive, stamp)
        sessions.loop_of(context).add_callback(pool.start)  # thread-safe: the server may
        # run in another thread
    return pool


def pool_of(server: Any, path: str = "/") -> PagePool | None:
    """The pool installed for the app ``server`` serves at ``path``, if any."""
    context = sessions.app_context(server, path)
    return None if context is None else _POOLS.get(context)


#: The pool of each application context (one per app a server serves).
_POOLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
