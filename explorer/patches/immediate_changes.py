"""A change from a page is handled at once, and answered at once.

Two patches, for a served page (in a notebook Panel does not wait):

- ``no_debounce``: Panel waits a widget's ``_debounce`` (50 ms) before handling the
  first change a page sends, so that a burst (a slider dragged) is handled once. A
  text box, a list or a checkbox sends one change per action: for them the wait was
  a fixed 50 ms on every edit. The slider keeps it. Panel has no public setting.
- ``answer_at_once``: ``Syncable._change_coroutine`` first waits for the socket's
  write lock, so the answer is sent as soon as it is made (see :func:`_answer_at_once`).
"""

from __future__ import annotations

from . import Patch, apply, register

__all__ = ["immediate_changes"]


def immediate_changes() -> None:
    """In a served page, a change from the browser to a text box, list or checkbox is handled
    at once, not after Panel's 50 ms wait for more, and answered at once (see
    :func:`_install_answer_at_once`).

    Panel waits ``_debounce`` ms before handling the first change a page sends
    for a widget, so that a burst (a slider dragged) is handled once. These
    widgets send one change per action (Enter in a box, a choice in a list, a
    click), so the wait was a fixed 50 ms on every edit. The slider keeps it.
    Panel has no public setting for it; in a notebook Panel does not wait.
    """
    apply("no_debounce")
    apply("answer_at_once")


#: The widgets that send one change per action, by name in ``panel.widgets``.
WIDGETS = ("TextInput", "Select", "RadioButtonGroup", "Checkbox")


def _no_debounce() -> None:
    import panel as pn

    for name in WIDGETS:
        getattr(pn.widgets, name)._debounce = 0


def _install_answer_at_once() -> None:
    """Panel handles a change from a page only once Bokeh's reply to its message is sent.

    Bokeh acknowledges each message a page sends with a reply written under the
    WebSocket's write lock, frame by frame, giving way to the event loop between
    frames. Panel's handling of the change ran in one of those gaps; when its
    answer (the new figures, fields and boxes) was ready, the lock was still
    held, and Panel tries again only after 10 ms (``panel.io.document``). Waiting
    for the lock first (a free lock costs nothing) sends the answer as soon as
    it is made. ``_change_coroutine``, the session's ``_subscribed_connections``
    and the socket's ``write_lock`` have no public handle; if Panel or Bokeh
    move them, nothing waits and the test of this fails.
    """
    from panel.reactive import Syncable

    handle = Syncable._change_coroutine
    if getattr(handle, "_candela", False):
        return

    async def _change_coroutine(self, doc, *args, **kwargs):
        context = getattr(doc, "session_context", None)
        session = getattr(context, "session", None)
        for connection in list(getattr(session, "_subscribed_connections", None) or ()):
            lock = getattr(getattr(connection, "_socket", None), "write_lock", None)
            if lock is not None:
                async with lock:  # the reply being written, if any, is out
                    pass
        return await handle(self, doc, *args, **kwargs)

    _change_coroutine._candela = True
    Syncable._change_coroutine = _change_coroutine


register(
    Patch(
        name="no_debounce",
        changes="_debounce = 0 on panel.widgets." + ", ".join(WIDGETS),
        why="Panel waits 50 ms for more changes; these widgets send one per action",
        buys="50 ms of every edit made in a box, a list or a checkbox",
        checked={"panel": "1.9"},
        needs=tuple(f"panel.widgets:{name}._debounce" for name in WIDGETS),
        install=_no_debounce,
    )
)

register(
    Patch(
        name="answer_at_once",
        changes="panel.reactive.Syncable._change_coroutine: waits for the sessions' "
        "write locks, then Panel's own",
        why="Panel's answer found the WebSocket busy with Bokeh's reply and waited 10 ms",
        buys="10 ms of the 40 ms an edit took on the server",
        checked={"panel": "1.9", "bokeh": "3.9"},
        needs=(
            "panel.reactive:Syncable._change_coroutine",
            "bokeh.server.session:ServerSession",
        ),
        install=_install_answer_at_once,
    )
)
