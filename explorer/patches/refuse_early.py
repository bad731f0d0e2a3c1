"""A request the server will refuse is refused before anything is built for it.

Patch ``refuse_early``: a request whose ``Host`` is not a name the server answers
to, or a WebSocket upgrade from a page of an origin it does not allow, is
answered ``403 Forbidden`` by a rule put first in the routing of the server's
Tornado application (``server._tornado``, no public handle; the rule itself is
Tornado's public routing API). No Bokeh handler runs for it: no session, no
document, no page taken from the pool (:mod:`explorer.pool`), no Panel code. It
costs a header comparison and one short log line.

Without it, the Host check is an output transform
(:func:`explorer.serving.host_check`) that replaces the answer after the page is
built (about 0.13 s of CPU and 1 MB a request, a page of the pool spent), and a
foreign origin is refused by Bokeh's own check, whose log line advises Bokeh's
flag.

Patch ``own_origin_check``: Bokeh's check of a WebSocket's origin, on a server
prepared so, asks the same list (:func:`explorer.serving.allows`), which can hold
IPv6 addresses; Bokeh's cannot.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from . import Patch, apply, left_off, register

__all__ = ["refuse_early"]

log = logging.getLogger("candela-explorer")


def _refusal_handler():
    from tornado.web import RequestHandler

    class Refuse(RequestHandler):
        """403 with a one-line body, for every method; nothing else runs."""

        def initialize(self, body: str) -> None:
            self.body = body

        def _refuse(self, *args, **kwargs) -> None:
            self.set_status(403)  # Tornado's reason phrase for it: "Forbidden"
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.set_header("Cache-Control", "no-store")
            self.finish(self.body)

        get = post = put = patch = delete = options = head = _refuse

        def check_xsrf_cookie(self) -> None:  # a refusal needs no token
            pass

    return Refuse


def refuse_early(
    server: Any,
    host_allowed: Callable[[str], bool],
    origin_allowed: Callable[[str], bool],
) -> bool:
    """Put the refusal first in ``server``'s routing (what :func:`panel.serve` returns).

    ``host_allowed(host)`` says whether a request's ``Host`` header (lowercased)
    is a name the server answers to; ``origin_allowed(origin)`` whether a
    WebSocket from a page of ``origin`` (``Origin``'s ``host[:port]``, lowercased)
    may open. False when the patch is off: the caller's output transform refuses
    the request, after it was handled.
    """
    if not apply("refuse_early"):
        return False
    from tornado.routing import Matcher, Rule

    tornado_app = getattr(server, "_tornado", None)  # Bokeh's Tornado application
    router = getattr(tornado_app, "default_router", None)
    if router is None or not isinstance(getattr(router, "rules", None), list):
        return left_off("refuse_early", "the server has no _tornado.default_router.rules")
    if getattr(tornado_app, "_candela_refuse_early", False):
        return True

    class Refused(Matcher):
        """Matches the requests to refuse, keeping why in the handler's body."""

        def match(self, request) -> dict | None:
            host = (request.headers.get("Host") or "").strip().lower()
            if not host_allowed(host):
                log.warning(
                    "refused a request for the name %.80r: not a name this server answers "
                    "to (add it with --allow-origin)",
                    host,
                )
                return {}
            origin = request.headers.get("Origin")
            if origin is None or request.headers.get("Upgrade", "").lower() != "websocket":
                return None
            from urllib.parse import urlsplit

            try:
                netloc = urlsplit(origin.strip()).netloc.lower()
            except ValueError:
                netloc = ""
            if not netloc or not origin_allowed(netloc):
                log.warning(
                    "refused a WebSocket from a page of %.80r: not an allowed origin "
                    "(add it with --allow-origin)",
                    origin,
                )
                request._candela_refusal = "origin"
                return {}
            return None

    class Refusal(_refusal_handler()):
        def initialize(self, body: str) -> None:
            kind = getattr(self.request, "_candela_refusal", "host")
            if kind == "origin":
                body = "403: pages of that site may not use this server\n"
            else:
                host = (self.request.headers.get("Host") or "")[:200]
                body = (
                    f"403: this server does not answer to the name {host!r}; "
                    "start it with --allow-origin for that name\n"
                )
            super().initialize(body)

    rule = Rule(Refused(), Refusal, {"body": ""})
    router.rules.insert(0, router.process_rule(rule))
    tornado_app._candela_refuse_early = True
    # The origins allowed here may be IPv6 addresses, which Bokeh's own list cannot hold.
    if apply("own_origin_check"):
        tornado_app._candela_origin_allowed = origin_allowed
    return True


def _install_origin_check() -> None:
    from urllib.parse import urlsplit

    from bokeh.server.views.ws import WSHandler

    if getattr(WSHandler.check_origin, "_candela", False):
        return
    bokeh_check = WSHandler.check_origin

    def check_origin(self, origin: str) -> bool:
        allowed = getattr(self.application, "_candela_origin_allowed", None)
        if allowed is None:  # a server the explorer's command did not prepare
            return bokeh_check(self, origin)
        try:
            netloc = urlsplit(origin.strip()).netloc.lower()
        except ValueError:
            netloc = ""
        if netloc and allowed(netloc):
            return True
        log.warning(
            "refused a WebSocket from a page of %.80r: not an allowed origin "
            "(add it with --allow-origin)",
            origin,
        )
        return False

    check_origin._candela = True
    WSHandler.check_origin = check_origin


register(
    Patch(
        name="refuse_early",
        changes="the routing of a server's bokeh.server.tornado.BokehTornado (on the "
        "instance): a first rule answering 403 to a foreign Host or WebSocket origin",
        why="Bokeh has no Host check, and its origin check runs in its handler; the "
        "explorer's Host check could only replace the answer of a page already built",
        buys="a refused request costs no session, no page of the pool, about 0.13 s "
        "of CPU and 1 MB less each",
        checked={"bokeh": "3.9", "tornado": "6"},
        needs=("tornado.routing:Rule", "tornado.routing:Matcher", "tornado.web:Application"),
    )
)

register(
    Patch(
        name="own_origin_check",
        changes="bokeh.server.views.ws.WSHandler.check_origin: on a server the command "
        "prepared, the explorer's list of origins decides",
        why="Bokeh's allowlist cannot hold an IPv6 address ([::1]:5006), and its refusal "
        "advises Bokeh's flag, not --allow-origin",
        buys="pages served at an IPv6 address can open their WebSocket",
        checked={"bokeh": "3.9"},
        needs=("bokeh.server.views.ws:WSHandler.check_origin",),
        install=_install_origin_check,
        upstream="from bokeh.server.util import check_allowlist; "
        "check_allowlist('[::1]', ['[::1]:80']) is False while "
        "check_allowlist('localhost', ['localhost:80']) is True: an IPv6 host without a "
        "port holds a colon, so it is not given port 80",
    )
)
