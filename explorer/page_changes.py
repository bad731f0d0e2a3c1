"""A page may change only what a person can change on it.

Bokeh's server applies whatever a page sends in a ``PATCH-DOC``: any attribute of
any model, new models, columns streamed into any data source. A hostile client
can write megabytes into its session that way (and into the log), and slow every
other student's edits. So each message a page sends is judged, whole, before Bokeh
reads any of it (:class:`explorer.connection_bounds.BoundedWSHandler`, on with every
patch off) with :func:`refusal`: a message with any change the explorer's page never
makes is refused whole, answered with a short ``ERROR`` and one short log line
(never the message).

What a page may send, measured from the explorer's own pages in Chromium (every
browser test, then a margin), each within the limits of the model it changes:

- an input's value: a text box's (``value``, ``value_input``: text up to
  :data:`MAX_TEXT` characters, or the box's own ``max_length``; the explorer's own
  boxes' ``value``, :mod:`explorer.enter_box`), a chooser's (one
  of its options), a toggle's or check box's (true or false), a button group's
  (an index of its labels), a slider's (a number between its ends);
- a button's ``label`` (the traversal's play button says play or pause) and a
  glyph's ``tags`` (the painting patches mark what they painted): short text;
- a download button's ``clicks``, a tab bar's ``active`` tab, a card opened or
  closed, and the plain state of the explorer's own browser components (Panel's
  ESM data models) of at most :data:`MAX_EVENT_BYTES`;
- a figure's size as the browser laid it out (``inner_width`` and the like);
- the page's location (``search``, ``hash`` and the like), as Panel syncs it;
- a ``bokeh_event`` (a click, Enter, a key, the page being ready) of at most
  :data:`MAX_EVENT_BYTES`.

Nothing else: no ``ColumnsStreamed``, ``ColumnsPatched``, ``ColumnDataChanged``,
``RootAdded``, ``RootRemoved`` or ``TitleChanged``, no binary buffers, no new
models or references as values, and no message but a ``PATCH-DOC``, a
``PULL-DOC-REQ`` or a ``SERVER-INFO-REQ`` (:data:`PAGE_MESSAGES`). A single
WebSocket message larger than :data:`MAX_MESSAGE_BYTES` closes its connection
before it is read (:func:`explorer.serving.server_settings`, Bokeh's public setting).
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

__all__ = [
    "MAX_EVENT_BYTES",
    "MAX_MESSAGE_BYTES",
    "MAX_TEXT",
    "PAGE_MESSAGES",
    "parseable_location",
    "refusal",
]

log = logging.getLogger("candela-explorer")

#: The largest WebSocket message a page may send. The explorer's pages send at most
#: about 400 bytes (a figure's four sizes; an edit is ~150); the longest text a box
#: takes, escaped, stays well inside.
MAX_MESSAGE_BYTES = 64 * 1024
#: The longest text a box may be given (the pipeline box refuses more than 2,000 with a
#: message of its own; more than this is no person typing).
MAX_TEXT = 8000
#: The largest event (a click, a key, Enter) a page may send, as JSON.
MAX_EVENT_BYTES = 4096
#: The largest size, in pixels, a browser may report for a figure.
MAX_PIXELS = 100_000
#: What a page's location may hold, per attribute (Panel's Location model).
LOCATION_ATTRS = frozenset(
    {"href", "hostname", "pathname", "protocol", "port", "search", "hash", "reload"}
)
PLOT_SIZES = frozenset({"inner_width", "inner_height", "outer_width", "outer_height"})
#: The messages a page (BokehJS, or Bokeh's Python client) sends: everything else,
#: ``PUSH-DOC`` (a whole new document) among them, is refused.
PAGE_MESSAGES = frozenset({"PATCH-DOC", "PULL-DOC-REQ", "SERVER-INFO-REQ"})


def _scalar(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int, bool))


def _text(value: Any, limit: int) -> str | None:
    if not isinstance(value, str):
        return f"a {type(value).__name__}, not text"
    if len(value) > limit:
        return f"{len(value):,} characters, more than {limit:,}"
    return None


def _number(value: Any, low: Any, high: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not _scalar(value):
        return "not a number"
    if isinstance(low, (int, float)) and value < low:
        return f"below {low}"
    if isinstance(high, (int, float)) and value > high:
        return f"above {high}"
    return None


def _option_values(options: Any) -> list:
    if isinstance(options, dict):  # grouped options: {group: [options]}
        return [v for group in options.values() for v in _option_values(group)]
    found = []
    for option in options or ():
        found.append(option[0] if isinstance(option, (tuple, list)) and option else option)
    return found


def _value_check(model: Any, attr: str, new: Any) -> str | None:
    """Why ``new`` is not a value a person could give ``model.attr`` (None: it is)."""
    from bokeh.model import DataModel
    from bokeh.models import (
        AbstractGroup,
        AbstractSlider,
        Button,
        Checkbox,
        Glyph,
        InputWidget,
        Plot,
        Select,
        Tabs,
        Toggle,
    )

    name = type(model).__name__
    if isinstance(model, Plot) and attr in PLOT_SIZES:
        return _number(new, 0, MAX_PIXELS) if isinstance(new, int) else "not a whole number"
    if isinstance(model, Glyph) and attr == "tags":
        if not isinstance(new, list) or len(new) > 8 or not all(map(_scalar, new)):
            return "not a short list of plain values"
        return None if len(json.dumps(new)) <= 256 else "too long"
    if name == "Location" and attr in LOCATION_ATTRS:
        return None if isinstance(new, bool) else _text(new, MAX_TEXT)
    if isinstance(model, (Button, Toggle)) and attr == "label":
        return _text(new, 100)
    if isinstance(model, (Toggle, Checkbox)) and attr == "active":
        return None if isinstance(new, bool) else "not true or false"
    if isinstance(model, Select) and attr == "value":
        return None if new in _option_values(model.options) else "not one of its options"
    if isinstance(model, AbstractSlider) and attr in ("value", "value_throttled"):
        ends = (model.start, model.end)
        if isinstance(new, list) and len(new) == 2:  # a range slider
            return _number(new[0], *ends) or _number(new[1], *ends)
        return _number(new, *ends)
    if isinstance(model, AbstractGroup) and attr == "active":
        count = len(getattr(model, "labels", ()) or ())
        picks = new if isinstance(new, list) else [new]
        if new is None or all(
            isinstance(p, int) and not isinstance(p, bool) and 0 <= p < count for p in picks
        ):
            return None
        return f"not an index of its {count} labels"
    if isinstance(model, InputWidget) and attr == "clicks":  # Panel's download button
        return _number(new, 0, None) if isinstance(new, int) else "not a whole number"
    if isinstance(model, InputWidget) and attr in ("value", "value_input"):
        if isinstance(new, (int, float)) and not isinstance(new, bool):  # a number box
            return _number(new, getattr(model, "low", None), getattr(model, "high", None))
        limit = getattr(model, "max_length", None) or MAX_TEXT
        return _text(new, min(int(limit), MAX_TEXT))
    if isinstance(model, Tabs) and attr == "active":
        ok = isinstance(new, int) and not isinstance(new, bool) and 0 <= new < len(model.tabs)
        return None if ok else "not one of its tabs"
    if name == "Card" and attr == "collapsed":  # Panel's card, opened or closed
        return None if isinstance(new, bool) else "not true or false"
    if isinstance(model, DataModel):
        # The explorer's own browser components (Panel's ESM data models): a text box's
        # value (explorer.enter_box) is typed on the page, as any text box's; the
        # keyboard's inputs come as messages, each checked where it is read
        # (explorer.keys). The page writes nothing else of theirs.
        if name.rstrip("0123456789") == "EnterBox" and attr == "value":
            return None if new is None else _text(new, MAX_TEXT)
        return f"{name}.{attr} is set by the server, not by the page"
    return f"{name}.{attr} is not something a person changes on the page"


def refusal(document: Any, content: Any, buffers: Any = ()) -> str | None:
    """Why a ``PATCH-DOC`` with ``content`` (its JSON, not yet applied) is refused, or None.

    The reason is short and quotes no value the page sent.
    """
    if buffers:
        return "binary buffers"
    events = content.get("events") if isinstance(content, dict) else None
    if not isinstance(events, list) or len(events) > 64:
        return "not a list of at most 64 changes"
    for event in events:
        if not isinstance(event, dict):
            return "a change that is not an object"
        kind = event.get("kind")
        if kind == "MessageSent":
            data = event.get("msg_data")
            if event.get("msg_type") != "bokeh_event" or not isinstance(data, dict):
                return "a message other than a page event"
            if len(json.dumps(data)) > MAX_EVENT_BYTES:
                return f"an event larger than {MAX_EVENT_BYTES:,} bytes"
            continue
        if kind != "ModelChanged":
            return f"a change of kind {str(kind)[:40]!r}"
        target = event.get("model")
        model_id = target.get("id") if isinstance(target, dict) else None
        model = document.get_model_by_id(model_id) if isinstance(model_id, str) else None
        if model is None:
            return "a change to a model the page does not have"
        attr = event.get("attr")
        new = event.get("new")
        if not isinstance(attr, str):
            return "a change naming no attribute"
        if not (_scalar(new) or (isinstance(new, list) and all(map(_scalar, new)))):
            return f"a value for {type(model).__name__}.{attr[:40]} that is not plain"
        why = _value_check(model, attr, new)
        if why is not None:
            return f"{type(model).__name__}.{attr[:40]}: {why}"
    return None


def parseable_location(document: Any, content: Any) -> bool:
    """Make the page's report of its URL in a ``PATCH-DOC`` (its JSON ``content``, judged
    by :func:`refusal`, not yet applied) one Panel can parse; whether anything changed.

    The browser reports its own URL as the page opens, as it is in the address bar:
    ``?shape=%C2%B2``, whose value Panel 1.9 took for an ``int`` as it applied the
    change (``ValueError``), although the request's query had been made parseable
    (:class:`explorer.serving.QueryDigits`). Each new ``search`` of Panel's ``Location``
    model passes through :func:`explorer.url.parseable_query` here.
    """
    from .url import parseable_query

    changed = False
    for event in content.get("events", ()) if isinstance(content, dict) else ():
        if not isinstance(event, dict) or event.get("attr") != "search":
            continue
        new, target = event.get("new"), event.get("model")
        if event.get("kind") != "ModelChanged" or not isinstance(target, dict):
            continue
        if not isinstance(new, str) or not new.startswith("?"):
            continue
        model_id = target.get("id")
        model = document.get_model_by_id(model_id) if isinstance(model_id, str) else None
        if type(model).__name__ != "Location":
            continue
        query = parseable_query(new[1:])
        if query != new[1:]:
            event["new"], changed = "?" + query, True
    return changed
