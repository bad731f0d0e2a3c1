"""Panel reads a page's location from a request for an IPv6 address without failing.

Patch ``ipv6_location`` (a Panel bug worked around): ``panel.io.location``'s
``_get_location_params`` splits the request's ``Host`` on ``:`` into a name and
a port, so ``[::1]:5006`` (or any IPv6 address) raised ``ValueError`` and every
page served at an IPv6 address answered HTTP 500, with two tracebacks in the log.
Replaced by a function that reads a bracketed address (``[::1]:5006`` is the
name ``[::1]``, port ``5006``) and leaves every other host to Panel's own.

Reproduction (for upstream): ``panel serve app.py --address ::1`` and open
``http://[::1]:5006/app``: HTTP 500, ``ValueError: too many values to unpack``
from ``panel/io/location.py``.
"""

from __future__ import annotations

from . import Patch, apply, register

__all__ = ["ipv6_location"]

_PLACEHOLDER = "candela-host.invalid:1"


def ipv6_location() -> bool:
    """Install the patch (see the module), if it is on."""
    return apply("ipv6_location")


def _install() -> None:
    import panel.io.location as location

    original = location._get_location_params
    if getattr(original, "_candela", False):
        return

    def _get_location_params(protocol, host, uri):
        if not host or host.count(":") < 2:  # a name or IPv4 address, with its port
            return original(protocol, host, uri)
        name, colon_port = host, ""
        if host.startswith("["):
            end = host.find("]")
            name, colon_port = (host[: end + 1], host[end + 1 :]) if end > 0 else (host, "")
        params = original(protocol, _PLACEHOLDER, uri)
        if "href" in params:
            params["href"] = params["href"].replace(f"//{_PLACEHOLDER}", f"//{host}", 1)
        params["hostname"] = name
        if colon_port.startswith(":") and colon_port[1:].isdigit():
            params["port"] = colon_port[1:]
        else:
            params.pop("port", None)
        return params

    _get_location_params._candela = True
    location._get_location_params = _get_location_params


register(
    Patch(
        name="ipv6_location",
        changes="panel.io.location._get_location_params: a bracketed IPv6 host is read as "
        "name and port; any other host goes to Panel's own",
        why="Panel splits the Host on ':'; a page served at an IPv6 address answered "
        "HTTP 500 (a bug)",
        buys="pages at [::1] or a LAN IPv6 address (a fix, not a speed-up)",
        checked={"panel": "1.9"},
        needs=("panel.io.location:_get_location_params",),
        install=_install,
        upstream="panel serve app.py --address ::1; open http://[::1]:5006/app: HTTP 500",
    )
)
