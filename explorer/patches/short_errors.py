"""A message from a page that fails gets a short answer, and the log a short line.

Patch ``short_errors``: when Bokeh's server cannot handle a message from a page,
its ``ServerConnection.error`` puts the server's whole traceback (file paths,
Python's and the packages' versions) in the ``ERROR`` reply to that page. Replaced
by one that answers with the kind of failure only ("the server could not handle
this message (ValueError)") and no traceback.

Bokeh also logs the failing message whole (``%r`` of the message, a 10 MB message
is 10 MB of log) with its traceback: that is cut to one short line by a logging
filter, not a patch (:mod:`explorer.client_logs`), on with every patch off.
"""

from __future__ import annotations

from . import Patch, apply, register

__all__ = ["REPLY", "short_errors"]

#: What a page is told when the server could not handle its message.
REPLY = "the server could not handle this message ({kind})"


def short_errors() -> bool:
    """``ERROR`` replies to pages without a traceback (False: the patch is off)."""
    return apply("short_errors")


def _install() -> None:
    import sys

    from bokeh.server.connection import ServerConnection

    if getattr(ServerConnection.error, "_candela", False):
        return

    def error(self, message, text: str):
        failure = sys.exc_info()[1]
        kind = type(failure).__name__ if failure is not None else "error"
        return _reply(self, message, REPLY.format(kind=kind))

    error._candela = True
    ServerConnection.error = error


def _reply(connection, message, text: str):
    # Made outside the except block that called it: Bokeh's ``error.create`` adds the
    # traceback of the exception being handled, and here there is none.
    reply = connection.protocol.create("ERROR", message.header["msgid"], text)
    reply.content["traceback"] = None
    return reply


register(
    Patch(
        name="short_errors",
        changes="bokeh.server.connection.ServerConnection.error: an ERROR reply with the "
        "kind of failure only, no traceback",
        why="Bokeh sends a page the server's traceback (paths, versions) when its message fails",
        buys="a page learns that its message failed and nothing about the server",
        checked={"bokeh": "3.9"},
        needs=("bokeh.server.connection:ServerConnection.error",),
        install=_install,
        upstream="bokeh serve any app; send its WebSocket a PATCH-DOC that fails to apply: "
        "the ERROR reply's content.traceback holds the server's whole traceback (paths, "
        "versions), as bokeh.protocol.messages.error.error.create formats the exception "
        "being handled",
    )
)
