"""The garbage of ended sessions collected at a pause of the pages, and their memory handed back.

Patch ``collect_at_a_pause``: Panel's ``panel.io.document._garbage_collect`` (a full
``gc.collect()`` 5 s after a session ends) is replaced by one that waits for a
moment no page is sending, then returns the C library's free pages to the system;
``panel.io.application._destroy_document`` asks for it on the loop the session
ended on as well. See :func:`collect_at_a_pause`.

Reproduction of the Panel behaviour worked around (for upstream): serve any app
with ``pn.serve(..., threaded=True)`` twice in one process, stop the first server
while one of its sessions' collection is scheduled (within 5 s of the session
ending), then open and close sessions on the second: ``panel.io.document``'s
collection, one task of one name for the whole process on the stopped server's
loop, never runs again, and no later session of any server is collected.
"""

from __future__ import annotations

import collections
import functools
import gc
import time
from typing import Any

from . import Patch, register
from .messages import last_message, watch_messages

__all__ = ["COLLECT_QUIET_S", "COLLECT_WITHIN_S", "collect_at_a_pause"]

#: The garbage of ended sessions is collected once no page has sent a message for this
#: long (s) and no session has ended for Panel's 5 s (:func:`collect_at_a_pause`).
COLLECT_QUIET_S = 1.0
#: ... or this long (s) after Panel asked for it, pause or not.
COLLECT_WITHIN_S = 30.0


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (another C library, another system); looked up once
    (``find_library`` may run ``ldconfig``)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


#: The collection waiting for a pause: when Panel asked for it (``time.monotonic()``),
#: or None; how many were done, and the last few: (when each ended, how long it took in ms).
_COLLECTION: dict[str, Any] = {"asked": None, "count": 0, "done": collections.deque(maxlen=20)}


def collect_at_a_pause() -> None:
    """Panel's collection of ended sessions' garbage waits for a pause of the pages; then the
    memory those sessions held goes back to the system.

    A closed page's session lives on in cycles of references (its Bokeh models,
    Panel's watchers: about 11,000 of its 14,000 objects), freed only by a full
    ``gc.collect()``. Panel runs one 5 s after a session ends (debounced). A
    full collection walks every object of every open session: it holds the
    server for about 10 ms a session open (0.3 s with 30 open; 0.46 s before
    :func:`explorer.serving.freeze_lasting`), and every edit that comes meanwhile waits. Here it waits for a moment when no page has
    sent a message for :data:`COLLECT_QUIET_S` and no session has ended for
    Panel's 5 s, and runs at the latest :data:`COLLECT_WITHIN_S` after Panel
    asked: a class pauses between tasks, and a student's edit is rarely the
    one that waits.

    Then glibc's ``malloc_trim`` hands the freed pages back (about 8 ms): else
    the C library keeps them for the process to use again, and 200 sessions
    opened and ended left the server 35-57 MB larger, though nothing of them was
    left. Installed once however often this is called. Off (``CANDELA_PLAIN``, another
    Panel), Panel collects 5 s after the last session ended, whatever the pages do.
    """
    from . import apply

    watch_messages()
    apply("collect_at_a_pause")


def _install() -> None:
    import panel.io.application as panel_application
    import panel.io.document as panel_document

    if getattr(panel_document._garbage_collect, "_candela", False):
        return
    panel_document._garbage_collect = _garbage_collect
    # Panel asks through its scheduler, which holds one task of a name for the whole
    # process, on the loop of the server whose session ended: if that server stops before
    # it runs, no later session of any server is collected. Asked here as well, on the
    # loop the session ended on.
    destroy = panel_application._destroy_document  # what each of its documents gets

    def _destroy_document(self, session) -> None:
        destroy(self, session)
        _garbage_collect()

    panel_application._destroy_document = _destroy_document


def _garbage_collect() -> None:
    """In place of Panel's ``_garbage_collect`` (it calls it 5 s after a session ends)."""
    asked, now = _COLLECTION["asked"], time.monotonic()
    # One collection waits at a time; one overdue waited on a loop that has stopped since
    # (a server stopped: its callbacks never run), and this one takes its place.
    if asked is None or now - asked > COLLECT_WITHIN_S + 5:
        _COLLECTION["asked"] = now
        _collect_when_quiet()


_garbage_collect._candela = True


def _session_ended() -> float:
    """When Panel may next collect, by its own rule: 5 s after the last session ended."""
    import panel.io.document as panel_document

    return getattr(panel_document, "_panel_last_cleanup", 0.0) + panel_document.GC_DEBOUNCE


def _collect_when_quiet() -> None:
    from tornado.ioloop import IOLoop

    now = time.monotonic()
    quiet_at = max(last_message() + COLLECT_QUIET_S, _session_ended())
    if quiet_at > now and now - _COLLECTION["asked"] < COLLECT_WITHIN_S:
        IOLoop.current().call_later(max(0.05, quiet_at - now), _collect_when_quiet)
        return
    _COLLECTION["asked"] = None
    t0 = time.perf_counter()
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
    _COLLECTION["done"].append((time.monotonic(), (time.perf_counter() - t0) * 1000))
    _COLLECTION["count"] += 1


register(
    Patch(
        name="collect_at_a_pause",
        changes="panel.io.document._garbage_collect (replaced); "
        "panel.io.application._destroy_document (also asks for a collection)",
        why="a full collection holds the server ~10 ms a session open; Panel's runs "
        "whatever the pages do, and one scheduled on a stopped server's loop stops every "
        "later one",
        buys="an edit rarely waits for a collection (0.3 s with 30 sessions open); "
        "200 sessions opened and ended leave the server 35-57 MB smaller; a session a client "
        "swelled hands its memory back when it ends (+1 MB left of +25; none without it)",
        checked={"panel": "1.9"},
        needs=(
            "panel.io.document:_garbage_collect",
            "panel.io.document:GC_DEBOUNCE",
            "panel.io.application:_destroy_document",
        ),
        install=_install,
    )
)
