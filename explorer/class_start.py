"""Starting a led class from the page: ``POST class/new`` makes a class and opens the teacher's page.

A teacher on a shared class server has the page, not its shell. A served page's
lesson column offers "lead a class" (:data:`START_FORM`, a plain HTML form in its
help text: no model of its own; :meth:`explorer.classroom.Classroom.offer_class`)
wherever this process may start one (:func:`may_start`); pressing it sends
``POST class/new``, answered by :class:`StartClass`:

- a new class in the process's class store (:func:`explorer.class_store.current`), and
  ``303 See Other`` to the teacher's secret link (``?class=CODE&teach=TOKEN``, with the
  page's lesson, step and presenter mode, :func:`kept_query`): the teacher's page shows
  the students' link and code for the projector (:mod:`explorer.led_class`), exactly as
  for ``candela-explorer --class``;
- or, where it cannot, a short page saying why, with a link back, never a class
  half made: the store is this process's own and the server runs several
  (``closed_to_pages``, 403); the address started more than :data:`STARTS` allows
  (429 with ``Retry-After``; token buckets as for its pages,
  :class:`explorer.connection_bounds.AddressBuckets`); the store holds all it keeps or is out of reach (503).

Anyone who has the page can press it (a student too): what that costs is bounded by
the address's budget and by the store (:data:`explorer.class_store.MAX_CLASSES`, a
class no page is in forgotten). The route is Bokeh's public ``extra_patterns`` server
setting (:func:`explorer.serving.server_settings`), on with every patch off.
"""

from __future__ import annotations

import html
import logging
import math
from urllib.parse import parse_qs, urlencode, urlsplit

import tornado.web

from . import class_store as cs
from .connection_bounds import AddressBuckets

__all__ = [
    "PATH",
    "START_FORM",
    "STARTS",
    "StartClass",
    "kept_query",
    "may_start",
    "route",
]

log = logging.getLogger("candela-explorer")

#: Where the form posts, from the page's own path (a page under a prefix posts under it).
PATH = "class/new"
#: The classes one address may start: (a second, at once). Several teachers behind one
#: school address start theirs within it; a script starting hundreds does not.
STARTS = (1 / 120, 4.0)
#: What a class started from a page keeps of the page's address: where it was.
KEPT_KEYS = ("lesson", "step", "presenter")
MAX_KEPT_CHARS = 64
MAX_REFERER_CHARS = 4096
#: The button, in the lesson column's help (Panel's Markdown pane keeps a form as it is).
START_FORM = (
    f'<form method="post" action="{PATH}" class="candela-class-start">'
    '<button type="submit">lead a class</button> your students follow your page, '
    "and their answers come back to you</form>"
)


def may_start() -> bool:
    """True where a page of this process may start a class (the store says it may)."""
    return cs.current().closed_to_pages is None


#: Each address's starts (the server's one loop asks it: no lock).
_BUDGET = AddressBuckets(*STARTS)

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Candela Explorer: no class started</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body {{ font: 18px/1.5 system-ui, sans-serif; max-width: 40em; margin: 2em auto;
padding: 0 1em; }} @media (prefers-color-scheme: dark) {{ body {{ background: #000;
color: #eee; }} a {{ color: #8cf; }} }}</style></head>
<body><h1>No class was started</h1><p class="candela-class-message">{message}</p>
<p><a href="../">Back to the explorer</a></p></body></html>
"""


def kept_query(referer: str) -> str:
    """``&lesson=…&step=…&presenter=…`` of the page at ``referer`` (each at most
    :data:`MAX_KEPT_CHARS`, the first of each), or ''."""
    query = parse_qs(urlsplit(referer[:MAX_REFERER_CHARS]).query, keep_blank_values=False)
    pairs = [(key, query[key][0]) for key in KEPT_KEYS if key in query]
    pairs = [(key, value) for key, value in pairs if len(value) <= MAX_KEPT_CHARS]
    return "&" + urlencode(pairs) if pairs else ""


class StartClass(tornado.web.RequestHandler):
    """``POST class/new``: a new class, and the teacher's page; or a page saying why not."""

    def _refuse(self, status: int, message: str) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(_PAGE.format(message=html.escape(message)))

    def get(self) -> None:
        self.set_header("Allow", "POST")
        self._refuse(405, "A class is started with the page's “lead a class” button.")

    def post(self) -> None:
        store = cs.current()
        if store.closed_to_pages is not None:
            self._refuse(403, store.closed_to_pages)
            return
        wait = _BUDGET.take(str(self.request.remote_ip))
        if wait > 0.0:
            seconds = max(1, math.ceil(wait))
            self.set_header("Retry-After", str(seconds))
            self._refuse(
                429, f"Classes were started from this address just now: try again in {seconds} s."
            )
            return
        try:
            code, token = store.create(lasting=False)
        except cs.ClassError as exc:
            self._refuse(503, str(exc))
            return
        except Exception as exc:  # the store out of reach (Redis): one line, no traceback
            log.warning("refused to start a class: %s is out of reach (%s)",
                        store.description, type(exc).__name__)  # fmt: skip
            self._refuse(503, f"The class store ({store.description}) is out of reach.")
            return
        self.set_header("Cache-Control", "no-store")
        # Relative to this route, so a page under a prefix lands under it too; the class
        # starts where the page was (its lesson, step, presenter mode), read from the
        # page's address the browser sends along, and checked by the page as any URL is.
        where = kept_query(self.request.headers.get("Referer", ""))
        self.redirect(cs.class_links("../", code, token)[1] + where, status=303)


def route() -> list[tuple[str, type]]:
    """The route, for Bokeh's ``extra_patterns`` server setting."""
    return [(f"/{PATH}", StartClass)]
