"""A message from a page that fails gets a short answer, and the log a short line.

Patch ``short_errors``: when Bokeh's server cannot handle a message from a page,
its ``ServerConnection.error`` puts the server's whole traceback (file paths,
Python's and the packages' versions) in the ``ERROR`` reply to that page. Replaced
by one that answers with the kind of failure only ("the server could not handle
this message (ValueError)") and no traceback.

Bokeh also logs the failing message whole (``%r`` of the message, a 10 MB message
is 10 MB of log) with its traceback; :func:`short_log_lines` puts a filter on
those loggers (the standard ``logging`` API, not a patch) that cuts each record to
one line of at most :data:`LOG_LINE_CHARS` and drops its traceback.
"""

from __future__ import annotations

import logging

from . import Patch, apply, register

__all__ = ["LOG_LINE_CHARS", "REPLY", "short_errors", "short_log_lines"]

#: The longest line a record of Bokeh's message handling leaves in the log.
LOG_LINE_CHARS = 300
#: What a page is told when the server could not handle its message.
REPLY = "the server could not handle this message ({kind})"
#: Bokeh's loggers that quote a page's message whole.
MESSAGE_LOGGERS = ("bokeh.server.protocol_handler", "bokeh.server.views.ws")


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


class _OneShortLine(logging.Filter):
    """One line of at most LOG_LINE_CHARS, without a traceback, quoting no page's message.

    A record's arguments are what may carry a page's words: a message is logged as
    its type (``<PATCH-DOC message>``), an exception as its class, any text or bytes
    longer than a name as its length.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(_described(arg) for arg in args)
        elif args:
            record.args = _described(args)
        try:
            text = record.getMessage()
        except Exception:  # a record that cannot be formatted: its format alone
            text = str(record.msg)
        if record.exc_info and record.exc_info[1] is not None:
            text += f" [{type(record.exc_info[1]).__name__}]"
        line = " ".join(text[: LOG_LINE_CHARS * 4].split())
        if len(line) > LOG_LINE_CHARS:
            line = line[: LOG_LINE_CHARS - 1] + "…"
        record.msg, record.args = line, None
        record.exc_info = record.exc_text = record.stack_info = None
        return True


def _described(arg):
    msgtype = getattr(arg, "msgtype", None)
    if isinstance(msgtype, str):
        return f"<{msgtype[:40]} message>"
    if isinstance(arg, BaseException):
        return type(arg).__name__
    if isinstance(arg, (str, bytes, bytearray)) and len(arg) > 40:
        return f"<{len(arg):,} {'characters' if isinstance(arg, str) else 'bytes'}>"
    if isinstance(arg, (str, int, float, bool, type(None))):
        return arg
    return f"<{type(arg).__name__}>"


_FILTER = _OneShortLine()


def short_log_lines() -> None:
    """Every record of Bokeh's message handling becomes one short line (once a process)."""
    for name in MESSAGE_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


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
