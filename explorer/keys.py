"""The keyboard of one explorer (``keys.mjs`` in the browser) and the help line it shows.

Arrows and space act on the explorer's own traversal buttons, in the browser,
and only on the explorer that has the focus or was clicked last. ``n`` and
``p`` and the back/forward buttons come to the server as messages:
:class:`Keys` hands them to the callbacks it was given. So does the room the
figures have (their column's width and the window's height, at load and on every
resize), which sizes their cells to fit the screen, and the word that the page has
drawn the component (and the notebook output around it).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import panel as pn
import param
from panel.custom import JSComponent

from .patches import browser_module, give
from .patches.browser import BROWSER_PATCHES
from .shipped import shipped
from .style import for_pane

KEYS_JS = Path(__file__).with_name("keys.mjs")
#: What a key pressed in a text box is (keys.mjs and the lesson page's script share it).
TYPING_JS = Path(__file__).with_name("typing_keys.mjs")


def keys_module() -> str:
    """The keyboard component's module: the browser patches that are on, then its own code."""
    return "\n".join(
        [browser_module(BROWSER_PATCHES)] + [shipped(path) for path in (TYPING_JS, KEYS_JS)]
    )


class Keys(JSComponent):
    """The explorer's keyboard (see ``keys.mjs``) and its one line of help.

    ``on_key("next" | "previous")`` runs for ``n`` and ``p``; ``on_history(search)``
    for the browser's back and forward buttons. Raising ``play_count`` plays the
    traversal (a lesson's reveal).
    """

    play_count = param.Integer(default=0, doc="Raised by the server to play the traversal.")
    follow_history = param.Boolean(
        default=False, doc="Report the back and forward buttons (only when served)."
    )

    # The browser patches first (the figures' painting, the boxes' typing, the notebook's
    # comm), as an entry point installed them (explorer.patches.browser.browser_patches,
    # which makes this again): render() also installs them in the page.
    _esm = keys_module()

    def __init__(
        self,
        on_key: Callable[[str], None] | None = None,
        on_history: Callable[[str], None] | None = None,
        **params: Any,
    ) -> None:
        params.setdefault("stylesheets", for_pane("candela-keys", "candela-keys-help"))
        params.setdefault("css_classes", ["candela-keys-help"])
        super().__init__(**params)
        #: Called with "next" or "previous" (the n and p keys); set it once the lesson exists.
        self.on_key = on_key
        #: Called with the query string the back or forward button brought.
        self.on_history = on_history
        #: Called when the page has drawn this component (and the output around it).
        self.on_shown: Callable[[], None] | None = None
        #: Called with the width (px) of the figures' column and the window's height (and
        #: the height the two figures have of it, once the page has measured it, and on
        #: a phone the height the first screen has left for the grid).
        self.on_room: Callable[..., None] | None = None

    def _handle_msg(self, msg: Any) -> None:
        # Panel hands a component's message over without the document's lock; a page's
        # first messages (shown, room) come before Panel counts the page loaded, when
        # changing its models there fails on Panel 1.10 (Bokeh: "_pending_writes should
        # be non-None"). Panel's execute runs it now where that is safe, else on the
        # server's next tick with the lock.
        pn.state.execute(partial(self._dispatch, msg))

    def _dispatch(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            return
        key, search, room = msg.get("key"), msg.get("search"), msg.get("room")
        if msg.get("shown") is True and self.on_shown is not None:
            self.on_shown()
        elif _is_room(room) and self.on_room is not None:
            self.on_room(*(int(v) for v in room))
        elif key in ("next", "previous") and self.on_key is not None:
            self.on_key(key)
        elif isinstance(search, str) and len(search) <= 8192 and self.on_history is not None:
            self.on_history(search)


def _is_room(room: Any) -> bool:
    # Two to four whole numbers of px a screen could have (the figures' column's width,
    # the window's height, the height the figures have of it, and what the first screen
    # leaves the grid); anything else is ignored.
    return (
        isinstance(room, list)
        and len(room) in (2, 3, 4)
        and all(isinstance(v, int | float) and 0 < v < 100_000 for v in room)
    )


# Each browser patch an entry point installs makes the component's module again.
for _name in BROWSER_PATCHES:
    give(_name, Keys, "_esm", lambda cls: keys_module())
