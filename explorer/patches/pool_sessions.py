"""A new session given a document built ahead: the framework side of :mod:`explorer.pool`.

Patch ``pool_sessions``: Bokeh has no public hook to give a session a document
built beforehand. The application context's ``create_session_if_needed`` is
replaced, on the one context of the app the pool serves (an instance, not the
class), by the pool's; a session it opens from a built document repeats Bokeh
3.9's steps (:func:`open_session`), with Panel's steps for a page's location
(:func:`arrive`). Everything else of the pool (when to build, which page to give)
is :mod:`explorer.pool`, and reads the context only through the functions here.

The patch checks Bokeh's own ``create_session_if_needed`` by its code (a hash of
its source), not only by Bokeh's release: Bokeh 3.9.2's and 3.10.0.dev5's are the
same, and the pool serves on both. Off, or when that code changes, there is no
pool: every page is built for its request, as Bokeh and Panel do.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from typing import Any

from . import Patch, apply, register

__all__ = [
    "app_context",
    "arrive",
    "is_known",
    "is_pending",
    "loop_of",
    "open_session",
    "replace_session_creation",
]

log = logging.getLogger("candela-explorer")


#: The first 16 hex digits of the SHA-256 of Bokeh 3.9.2's (and 3.10.0.dev5's)
#: ``ApplicationContext.create_session_if_needed``, whose steps :func:`open_session` repeats.
CHECKED = "047e758c152be0f6"


def app_context(server: Any, path: str = "/") -> Any | None:
    """Bokeh's ``ApplicationContext`` of the app ``server`` (``pn.serve``) serves at ``path``:
    None when the patch is off or there is none."""
    if not apply("pool_sessions"):
        return None
    applications = getattr(getattr(server, "_tornado", None), "_applications", None)
    return None if applications is None else applications.get(path)  # no public handle


def replace_session_creation(context: Any, create: Callable[..., Any]) -> Callable[..., Any]:
    """``context.create_session_if_needed`` becomes ``create``; returns Bokeh's own."""
    original = context.create_session_if_needed
    context.create_session_if_needed = create
    return original


def is_known(context: Any, session_id: str) -> bool:
    """Whether ``context`` has (or is making) the session ``session_id``."""
    return session_id in context._sessions or session_id in context._pending_sessions


def is_pending(context: Any) -> bool:
    """Whether ``context`` is making a session now."""
    return bool(context._pending_sessions)


def loop_of(context: Any) -> Any:
    """The Tornado event loop ``context``'s sessions run on."""
    return context._loop


async def open_session(
    context: Any, doc: Any, session_id: str, request: Any, token: Any, ready: Callable
) -> Any:
    """Bokeh 3.9's steps for a new session, with the built ``doc`` in place of a new document
    and running the app: ``ready(doc, session_context)`` runs once the session-created hooks
    have."""
    import tornado.gen
    from bokeh.server.contexts import BokehSessionContext, _RequestProxy
    from bokeh.server.session import ServerSession
    from bokeh.util.token import get_token_payload

    ctx = context
    future = ctx._pending_sessions[session_id] = tornado.gen.Future()
    try:
        session_context = BokehSessionContext(
            session_id, ctx.server_context, doc, logout_url=ctx._logout_url
        )
        if request is not None:
            payload = get_token_payload(token) if token else {}
            if "cookies" in payload and "headers" in payload and "Cookie" not in payload["headers"]:
                payload["headers"]["Cookie"] = "; ".join(
                    f"{k}={v}" for k, v in payload["cookies"].items()
                )
            session_context._request = _RequestProxy(
                request,
                arguments=payload.get("arguments"),
                cookies=payload.get("cookies"),
                headers=payload.get("headers"),
            )
        session_context._token = token
        doc._session_context = weakref.ref(session_context)
        try:
            await ctx.application.on_session_created(session_context)
        except Exception as exc:
            log.error("Failed to run session creation hooks %r", exc, exc_info=True)
        try:
            ready(doc, session_context)
        except Exception as exc:  # the page is built: it shows, without its URL applied
            log.warning(
                "a page built ahead did not open its URL: %s: %s",
                type(exc).__name__,
                str(exc)[:300],
            )
        session = ServerSession(session_id, doc, io_loop=ctx._loop, token=token)
        ctx._sessions[session_id] = session
        session_context._set_session(session)
        ctx._session_contexts[session_id] = session_context
        future.set_result(session)
        return session
    except BaseException as exc:
        future.set_exception(exc)
        raise
    finally:
        del ctx._pending_sessions[session_id]


def arrive(context: Any, doc: Any, session_context: Any, then: Callable[[Any], None]) -> None:
    """What Panel does for a new session's page before the app runs: its base URL and its
    location from the request; then ``then(doc)``, with Panel's current document set."""
    from panel.io.location import _get_location_params
    from panel.io.state import edit_readonly, set_curdoc, state

    app = context.application
    if hasattr(app, "_set_session_prefix"):  # Panel's: the page's base URL
        app._set_session_prefix(doc)
    request = session_context.request
    with set_curdoc(doc):
        location = state._locations.get(doc)
        if location is not None and request is not None and request._request is not None:
            params = _get_location_params(request.protocol, request.host, request.uri)
            with edit_readonly(location):
                location.param.update(params)
        then(doc)


register(
    Patch(
        name="pool_sessions",
        changes="create_session_if_needed of the app's bokeh.server.contexts.ApplicationContext "
        "(on the instance): Bokeh 3.9's steps with a document built ahead",
        why="Bokeh has no public hook to give a session a document built beforehand",
        buys="a page served from the pool costs the server ~0.1 s instead of ~0.6 s "
        "(30 students opening the link at once)",
        # Bokeh 3.10.0.dev5's create_session_if_needed is 3.9's, line for line: the pool is
        # checked by that code (``copies``), not by Bokeh's release.
        checked={"bokeh": "3.9 3.10", "panel": "1.9"},
        copies=(("bokeh.server.contexts:ApplicationContext.create_session_if_needed", CHECKED),),
        needs=(
            "bokeh.server.contexts:ApplicationContext.create_session_if_needed",
            "bokeh.server.contexts:BokehSessionContext._set_session",
            "bokeh.server.contexts:_RequestProxy",
            "bokeh.server.session:ServerSession",
            "bokeh.util.token:get_token_payload",
            "panel.io.location:_get_location_params",
            "panel.io.state:set_curdoc",
        ),
    )
)
