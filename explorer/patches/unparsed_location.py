"""Panel's ``Location`` parses its query only for objects synced to it: a long number is no 500.

Patch ``unparsed_location`` (a Panel bug worked around): ``Location._update_synced``
parses the query on every change of the URL, whether anything is synced or not,
and turns each all-digit value into an ``int``; a query value of more than 4,300
digits (Python's limit for converting text to ``int``) raised, and the page
answered HTTP 500. The explorer syncs nothing to it: it reads its query itself
(:mod:`explorer.url`), with its own limits.

Reproduction (for upstream): ``panel serve`` any app and open
``/app?x=`` followed by 5,000 digits: HTTP 500, ``ValueError: Exceeds the limit
(4300 digits) for integer string conversion`` from ``panel/io/location.py``; or
``/app?x=²``: ``parse_query`` takes ``'²'.isdigit()`` for a number, and ``int('²')``
raises.

The long number is also served with every patch off
(:func:`explorer.serving.long_query_numbers`); a value of digits that are not decimal
(``²``) still needs this patch: with ``CANDELA_PLAIN=1`` it is an HTTP 500.
"""

from __future__ import annotations

from . import Patch, apply, register

__all__ = ["unparsed_location"]


def unparsed_location() -> bool:
    """Install the patch (see the module), if it is on."""
    return apply("unparsed_location")


def _install() -> None:
    from panel.io.location import Location

    update = Location._update_synced
    if getattr(update, "_candela", False):
        return

    def _update_synced(self, event=None) -> None:
        if self._synced:
            update(self, event)

    _update_synced._candela = True
    Location._update_synced = _update_synced


register(
    Patch(
        name="unparsed_location",
        changes="panel.io.location.Location._update_synced: runs only when something is synced",
        why="Panel parses the query even with nothing synced; more than 4,300 digits raised "
        "and the page answered HTTP 500 (a bug)",
        buys="a page for any URL (a fix, not a speed-up)",
        checked={"panel": "1.9"},
        needs=("panel.io.location:Location._update_synced",),
        install=_install,
        upstream="panel serve any app; open /app?x=<5,000 digits>: HTTP 500",
    )
)
