"""The page's URL: the one place that reads and writes an explorer's state in the query string.

Keys: ``shape`` and ``ops`` (the tensor and the pipeline), ``compare`` (a second
pipeline over the same tensor, drawn beside the first), ``unit``
(``elements`` or a dtype name), ``lesson``, ``step`` (from 1) and
``presenter`` (``true``), ``theme``, and the cost panel's ``cost`` (the memory
unit in bytes: ``32``, ``64``, the default, or ``128``) and ``warp`` (``32`` or
``64`` elements read at once; absent for none). :func:`read_query` turns a query into a state
update and messages for bad values (each falls back to its default);
:func:`query_for` writes the state back. :class:`UrlSync` ties them to a
served page's ``pn.state.location``: it writes the query whenever the state
changes and follows the browser's back and forward buttons without a reload.

>>> updates, messages = read_query("?shape=3,4&ops=.transpose()&unit=bogus")
>>> updates, messages
({'shape': '3,4', 'ops': '.transpose()'}, ['in the URL: unit `bogus` is not one of elements, bool, int8, uint8, int16, uint16, float16, int32, uint32, float32, int64, uint64, float64, complex64, complex128; showing strides in elements'])
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, parse_qsl, quote, urlencode

import param

from .cost_view import COST_UNITS, DEFAULT_COST_UNIT, WARPS
from .fields import UNITS
from .state import DEFAULT_SHAPE, ExplorerState, StateError, evaluate, parse_shape, shape_text

#: Longest query string read; a longer one is refused with a message.
MAX_QUERY_CHARS = 8192


def parseable_query(query: str) -> str:
    """``query`` (a URL's query, without its ``?``) with a space after each value of
    digits that are not decimal (``²``, ``①``); any other query as it is.

    Panel 1.9's ``Location`` parses a page's query whenever it changes, synced to
    anything or not, and takes each value of which ``str.isdigit()`` is true for an
    ``int``: ``int('²')`` raises (Panel 1.10 matches ``[0-9]`` only). With the space,
    Panel keeps the value as text, and :func:`read_query` (which strips every value)
    says of ``²`` what it says of any other shape that is not a number. The query of a
    request (:class:`explorer.serving.QueryDigits`) and the page's report of its URL
    (:func:`explorer.page_changes.parseable_location`) both pass through it.

    >>> parseable_query("shape=%C2%B2&ops=.T"), parseable_query("shape=3,4")
    ('shape=%C2%B2+&ops=.T', 'shape=3,4')
    """
    if not query or (query.isascii() and "%" not in query):
        return query
    pairs = parse_qsl(query, keep_blank_values=True)
    spaced = [(k, v + " " if v.isdigit() and not v.isdecimal() else v) for k, v in pairs]
    return urlencode(spaced) if spaced != pairs else query


def read_flag(text: str) -> bool | None:
    """``true``/``1``/``yes``/``on`` or ``false``/``0``/``no``/``off``; ``None`` for other text."""
    word = text.strip().lower()
    if word in ("true", "1", "yes", "on", ""):
        return True
    if word in ("false", "0", "no", "off"):
        return False
    return None


def read_query(search: str, start=None) -> tuple[dict, list[str]]:
    """The state a query string names, and a message for each value that falls back.

    Shape and pipeline are checked together before anything is returned: a bad
    pipeline falls back to the shape with no pipeline, a bad shape to the default.
    """
    if len(search or "") > MAX_QUERY_CHARS:
        return {}, [
            f"in the URL: the query is {len(search):,} characters; at most {MAX_QUERY_CHARS:,}"
        ]
    query = parse_qs((search or "").lstrip("?"), keep_blank_values=True)
    # Space around a value means nothing (and explorer.serving.QueryDigits may add one).
    first = {k: v[0].strip() for k, v in query.items()}
    updates: dict = {}
    messages: list[str] = []
    if "lesson" in first:
        updates["lesson"] = first["lesson"]
        updates["step"] = 1
    if "step" in first:
        text = first["step"]
        if text.isascii() and text.isdigit() and len(text) <= 6:
            updates["step"] = int(text)
        else:
            messages.append(
                f"in the URL: step {text[:40]!r} is not a number (steps count from 1); "
                "showing step 1"
            )
    if "presenter" in first:
        flag = read_flag(first["presenter"])
        if flag is None:
            messages.append(
                f"in the URL: presenter {first['presenter'][:40]!r} is not true or false"
            )
        else:
            updates["presenter"] = flag
    if "theme" in first:
        if first["theme"] in ("light", "dark", ""):
            updates["theme"] = first["theme"]
        else:
            updates["theme"] = ""
            messages.append(
                f"in the URL: theme {first['theme'][:40]!r} is not light or dark; "
                "following the system's"
            )
    if "unit" in first:
        if first["unit"] in UNITS:
            updates["unit"] = first["unit"]
        else:
            messages.append(
                f"in the URL: unit `{first['unit'][:40]}` is not one of {', '.join(UNITS)}; "
                "showing strides in elements"
            )
    if "cost" in first:
        text = first["cost"]
        choices = ", ".join(map(str, COST_UNITS))
        if text in {str(u) for u in COST_UNITS}:
            updates["cost_unit"] = int(text)
        else:
            messages.append(
                f"in the URL: cost `{text[:40]}` is not a memory unit in bytes ({choices}); "
                f"counting {DEFAULT_COST_UNIT}-byte cache lines"
            )
    if "warp" in first:
        text = first["warp"]
        warps = [w for w in WARPS if w is not None]
        if text in {str(w) for w in warps}:
            updates["warp"] = int(text)
        elif text.lower() not in ("", "none", "off", "0"):
            messages.append(
                f"in the URL: warp `{text[:40]}` is not one of {', '.join(map(str, warps))} "
                "(elements read at once); counting without a warp"
            )
    shape, ops = first.get("shape"), first.get("ops")
    if shape is not None and start is None:
        try:
            parse_shape(shape)
            updates["shape"] = shape
        except StateError as exc:
            messages.append(f"in the URL: {exc}; showing the default shape")
    if ops is not None:
        try:
            evaluate(updates.get("shape", DEFAULT_SHAPE), ops, start)
            updates["ops"] = ops
        except StateError as exc:
            messages.append(f"in the URL: {exc}; showing the tensor with no pipeline")
    compare = first.get("compare")
    if compare is not None:
        try:
            evaluate(updates.get("shape", DEFAULT_SHAPE), compare, start)
            updates["compare"] = compare
        except StateError as exc:
            messages.append(f"in the URL: compare {exc}; showing one view")
    return updates, messages


def query_for(st: ExplorerState, lesson_at_step: bool = False) -> str:
    """The query string of a state; a lesson step left unchanged is just ``?lesson=ID&step=N``."""
    parts = []
    if not (st.lesson and lesson_at_step):
        parts.append("shape=" + quote(shape_text(st.result.shape), safe=","))
        parts.append("ops=" + quote(st.result.ops, safe=",.()[]:-"))
        if st.compare_result is not None:  # (a lesson step brings its own)
            parts.append("compare=" + quote(st.compare_result.ops, safe=",.()[]:-"))
    if st.unit != "elements":
        parts.append("unit=" + st.unit)
    if st.cost_unit != DEFAULT_COST_UNIT:
        parts.append(f"cost={st.cost_unit}")
    if st.warp is not None:
        parts.append(f"warp={st.warp}")
    if st.lesson:
        parts.append(f"lesson={quote(st.lesson)}&step={st.step}")
    if st.presenter:
        parts.append("presenter=true")
    if st.theme:
        parts.append("theme=" + st.theme)
    return "?" + "&".join(parts)


class Location(param.Parameterized):
    """A location outside a served page (a test, a notebook): just the query string."""

    search = param.String(default="")


class UrlSync:
    """Keeps a served page's URL and one state in step, both ways.

    ``at_step`` says whether the state shows its lesson step unchanged (the
    classroom knows); ``show_error`` shows the messages of a bad URL.
    """

    def __init__(
        self,
        st: ExplorerState,
        location,
        at_step: Callable[[], bool] = lambda: False,
        show_error: Callable[[str], None] | None = None,
    ) -> None:
        self.state = st
        self.location = location
        self.at_step = at_step
        self.show_error = show_error or st.show_error
        self.messages: list[str] = []
        self._following = False  # while the state follows the URL, the URL is not rewritten
        self.corrected = False
        #: More of the query that the page keeps as it is (a led class's ``class=…``),
        #: ``&key=value…``, after what :func:`query_for` writes.
        self.keep = ""
        st.watch_batched(
            self.write,
            [
                "result",
                "compare_result",
                "unit",
                "lesson",
                "step",
                "presenter",
                "theme",
                "cost_unit",
                "warp",
            ],  # fmt: skip
        )
        self.follow(location.search or "")
        self.write()  # the state on show, e.g. without the values the page fell back from

    def follow(self, search: str) -> None:
        """Show the state ``search`` names (the page's first URL, or back and forward).

        A key the query leaves out means its default (no pipeline, strides in
        elements, no lesson, presenter off), so a link shows the same page
        whatever was on screen before.
        """
        updates, self.messages = read_query(search, self.state.start)
        query = parse_qs((search or "").lstrip("?"), keep_blank_values=True)
        defaults = {
            "unit": "elements",
            "presenter": False,
            "lesson": "",
            "theme": "",
            "cost_unit": DEFAULT_COST_UNIT,
            "warp": None,
        }
        if "lesson" not in query:
            # A lesson link's step brings its own pipeline and second view (compare).
            defaults.update(ops="", compare="")
        else:  # ... and may bring what the page counts in (its unit, memory unit, warp)
            for key in ("unit", "cost_unit", "warp"):
                defaults.pop(key)
        for key, value in defaults.items():
            if key not in query:
                updates.setdefault(key, value)
        self._following = True
        try:
            # A lesson link names a step; its own shape and ops (if any) come after it.
            first = {k: updates.pop(k) for k in ("lesson", "step") if k in updates}
            with self.state.typed():  # a bad value in a link is shown on the page
                if first:
                    self.state.param.update(**first)
                if updates:
                    self.state.param.update(**updates)
        finally:
            self._following = False
        if self.messages:
            self.show_error("\n".join(self.messages))
        asked = {k: v for k, v in first.items()}
        shown = {k: getattr(self.state, k) for k in asked}
        #: Whether the URL was rewritten to what the page shows (see :meth:`follow`).
        self.corrected = bool(self.messages) or shown != asked
        if self.corrected:
            # The page fell back from something the URL says (a bad value, a step past
            # the lesson's end): the URL says what the page shows, not what it refused.
            self.location.search = self.query()
            return
        # The browser already shows this URL: record it without sending it back.
        with param.discard_events(self.location):
            self.location.search = search

    def query(self) -> str:
        """The query string the page's URL holds now: the state's, then :attr:`keep`."""
        search = query_for(self.state, self.at_step())
        if self.keep:
            search += self.keep if search != "?" else self.keep[1:]
        return search

    def write(self, *events) -> None:
        """Write the state into the URL (a new history entry when it changed)."""
        if self._following:
            return
        search = self.query()
        if self.location.search != search:
            self.location.search = search
