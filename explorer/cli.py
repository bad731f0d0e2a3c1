"""The command line: ``candela-explorer`` (and ``python -m explorer``) serves the app.

Serves on 127.0.0.1 unless told otherwise, prints the URL to open and, unless
``--no-browser``, opens it. ``--shape`` and ``--ops`` set the state the URL
starts with, the same keys the page's own URL carries.

Only pages served from the addresses the server is reached at (the bind
address, this machine's host name and interface addresses, ``localhost`` and
``127.0.0.1``, each with the port) may open its WebSocket, plus what
``--allow-origin`` adds: a page on another site cannot drive a session, whatever
address the server listens on. Listening beyond loopback prints a warning
naming who can reach the server. Every failure is one line on stderr and exit
status 2 (1 for a failure nobody foresaw), never a traceback.

The command's own process binds the sockets, loads everything and forks the
worker processes that serve (one unless ``--num-procs``), which it starts again
when one dies, retries later when one keeps dying, and replaces with a fresh one
when one that grew sits idle (:mod:`explorer.workers`, :mod:`explorer.recycling`);
stopping the command stops them. Once no worker is left to serve, the command
exits with status 1 and one line saying why, never 0 (a service manager then
starts it again).
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import os
import re
import signal
import socket
import sys
import time
from urllib.parse import quote, urlsplit

from .workers import (
    ONE_WORKER,
    RECYCLE_STATUS,
    CannotServe,
    policy_from_env,
    replacement,
    supervised,
    task_id,
)

PROG = "candela-explorer"
#: Addresses that mean "every interface".
WILDCARDS = ("0.0.0.0", "::", "")
#: The most worker processes ``--num-procs`` starts.
MAX_PROCS = 64
#: Pages built ahead: by default a few (a browser opened by the command, a pair of
#: students); a class gives its size. Each costs about MB_PER_READY_PAGE of memory.
DEFAULT_READY, MAX_READY, MB_PER_READY_PAGE = 4, 500, 3
#: Bokeh's defaults: a session no page is connected to is kept this long (ms) ...
DEFAULT_SESSION_LIFETIME_MS = 15_000
#: ... and sessions are looked at every this long (ms).
DEFAULT_CHECK_SESSIONS_MS = 17_000
MAX_MS = 24 * 3600 * 1000

_HOST_NAME = re.compile(
    r"(?=.{1,253}\Z)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_-]{1,63})*\.?"
)
# Bokeh's allowlist takes NAME[:PORT] (no IPv6 literal); * is a wildcard.
_ORIGIN = re.compile(r"(?P<host>[A-Za-z0-9_*][A-Za-z0-9_.*-]{0,252})(?::(?P<port>[0-9]{1,5}))?")


class CliError(Exception):
    """A reason to stop with exit status 2, as one line."""


def one_line(text: str, limit: int = 2000) -> str:
    """``text`` as one printable line: control characters escaped, the rest cut."""
    line = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in str(text)[: limit + 1])
    return line if len(line) <= limit else line[: limit - 1] + "…"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, not the usage block
        self.exit(2, f"{self.prog}: {one_line(message)} (see {self.prog} --help)\n")


def fail(message: str, status: int = 2) -> int:
    """Print ``candela-explorer: message`` on one line of stderr; return ``status``."""
    print(f"{PROG}: {one_line(message)}", file=sys.stderr, flush=True)
    return status


# --------------------------------------------------------------------------- arguments


def _port(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,5}", text.strip()) or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"port {text[:20]!r} is not a number from 0 to 65535")
    return int(text)


def _procs(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,3}", text.strip()) or int(text) > MAX_PROCS:
        raise argparse.ArgumentTypeError(
            f"{text[:20]!r} is not a number of processes from 0 (one per CPU) to {MAX_PROCS}"
        )
    return int(text)


def _ready(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,4}", text.strip()) or int(text) > MAX_READY:
        raise argparse.ArgumentTypeError(
            f"{text[:20]!r} is not a number of pages from 0 (build each on request) to {MAX_READY}"
        )
    return int(text)


def _milliseconds(text: str) -> int:
    if not re.fullmatch(r"[0-9]{1,8}", text.strip()) or not 100 <= int(text) <= MAX_MS:
        raise argparse.ArgumentTypeError(
            f"{text[:20]!r} is not a number of milliseconds from 100 to {MAX_MS} (a day)"
        )
    return int(text)


def _address(text: str) -> str:
    text = text.strip()
    if text in WILDCARDS or text == "localhost":
        return text
    with contextlib.suppress(ValueError):
        return str(ipaddress.ip_address(text.strip("[]")))
    if re.fullmatch(r"[0-9.]+", text) or not _HOST_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not an IP address or a host name of this machine"
        )
    return text


def _origin(text: str) -> str:
    """``--allow-origin``: ``HOST[:PORT]`` or a page's URL, as Bokeh's allowlist takes it."""
    value = text.strip()
    if "://" in value:
        try:
            parts = urlsplit(value)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or parts.path not in ("", "/"):
            raise argparse.ArgumentTypeError(
                f"{text[:60]!r} is not an origin: give HOST[:PORT] or http(s)://HOST[:PORT]"
            )
        value = parts.netloc
    if value.startswith("["):  # an IPv6 address: [ADDRESS][:PORT]
        return _ipv6_origin(value, text)
    match = _ORIGIN.fullmatch(value)
    if match is None or (match.group("port") and int(match.group("port")) > 65535):
        raise argparse.ArgumentTypeError(
            f"{text[:60]!r} is not an origin: give HOST[:PORT], e.g. school.example:5006"
        )
    return value.lower()


def _ipv6_origin(value: str, text: str) -> str:
    address, bracket, rest = value[1:].partition("]")
    port = rest[1:] if rest.startswith(":") else None
    try:
        parsed = ipaddress.IPv6Address(address)
    except ValueError:
        parsed = None
    if (
        parsed is None
        or not bracket
        or (rest and port is None)
        or (port is not None and not (re.fullmatch(r"[0-9]{1,5}", port) and int(port) <= 65535))
    ):
        raise argparse.ArgumentTypeError(
            f"{text[:60]!r} is not an origin: give [IPV6-ADDRESS][:PORT], e.g. [fd00::7]:5006"
        )
    return f"[{parsed.compressed}]" + (f":{port}" if port is not None else "")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Serve Candela Explorer: pick a shape and a chain of layout operations "
        "and see the logical grid, the memory buffer, the fields and the "
        "traversal side by side.",
        epilog='example: candela-explorer --shape 3,4 --ops ".transpose()" --port 5006',
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=5006,
        help="port to serve on (default 5006; 0 picks a free one)",
    )
    parser.add_argument(
        "--address",
        type=_address,
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1, this machine only; 0.0.0.0 is every "
        "network interface, which prints who can reach it)",
    )
    parser.add_argument(
        "--allow-origin",
        metavar="HOST[:PORT]",
        type=_origin,
        action="append",
        default=[],
        help="also let pages served from HOST[:PORT] (port 80 if none) use the explorer, e.g. "
        "behind a proxy; repeatable. The addresses the server is reached at are always allowed",
    )
    parser.add_argument(
        "--behind-proxy",
        action="store_true",
        help="every request comes through a reverse proxy on this machine or network that "
        "sets X-Real-IP (docs/classroom.md): count each student's pages by that address. "
        "Without it a proxy's requests all come from one address",
    )
    parser.add_argument(
        "--num-procs",
        metavar="N",
        type=_procs,
        default=1,
        help="serve with N worker processes (default 1; 0 is one per CPU); stopping the "
        "command stops them all",
    )
    parser.add_argument(
        "--ready",
        metavar="N",
        type=_ready,
        default=DEFAULT_READY,
        help=f"keep N pages built ahead, while the server is idle, for the next N students "
        f"who open it at once (default {DEFAULT_READY}; for a class, its size; about "
        f"{MB_PER_READY_PAGE} MB of memory a page, in each worker process; 0 builds each page "
        "on request)",
    )
    parser.add_argument(
        "--unused-session-lifetime",
        metavar="MS",
        type=_milliseconds,
        default=DEFAULT_SESSION_LIFETIME_MS,
        help="keep the session of a page that has closed (or never connected) this many "
        f"milliseconds (default {DEFAULT_SESSION_LIFETIME_MS})",
    )
    parser.add_argument(
        "--check-unused-sessions",
        metavar="MS",
        type=_milliseconds,
        default=DEFAULT_CHECK_SESSIONS_MS,
        help=f"look for such sessions every this many milliseconds (default "
        f"{DEFAULT_CHECK_SESSIONS_MS}). Once a worker has served sessions, has none left "
        "and is idle, it is replaced by a fresh one if it grew: its memory goes back",
    )
    parser.add_argument(
        "--no-browser", action="store_true", help="do not open a web browser, only print the URL"
    )
    parser.add_argument("--shape", default=None, help='starting shape, e.g. "3,4"')
    parser.add_argument("--ops", default=None, help='starting pipeline, e.g. ".transpose()"')
    parser.add_argument(
        "--export",
        metavar="PATH",
        default=None,
        help="write the --shape/--ops state as one offline HTML page to PATH "
        "and exit, serving nothing",
    )
    parser.add_argument(
        "--export-lesson",
        nargs=2,
        metavar=("ID", "PATH"),
        default=None,
        help="write lesson ID, every step, as one offline HTML page to PATH and exit",
    )
    parser.add_argument(
        "--unit",
        metavar="DTYPE",
        default="elements",
        help="with --export-lesson: strides, jumps and offsets in bytes of DTYPE "
        "(e.g. float32) instead of elements",
    )
    parser.add_argument(
        "--class",
        dest="lead_class",
        action="store_true",
        help="start a led class: print the teacher's link (secret; it drives) and the "
        "students' short link (their pages follow the teacher's lesson and step)",
    )
    parser.add_argument(
        "--class-store",
        metavar="URL",
        default=None,
        help="keep led classes in Redis (redis://HOST:PORT/N), so several servers behind one "
        "proxy serve one class and a server lost loses no answer (default: in this process)",
    )
    return parser


def start_query(shape: str | None, ops: str | None) -> str:
    """The query string for a starting state, e.g. ``?shape=3,4&ops=.transpose()``."""
    parts = []
    if shape is not None:
        parts.append("shape=" + quote(shape, safe=","))
    if ops is not None:
        parts.append("ops=" + quote(ops, safe=",.()[]:-"))
    return "?" + "&".join(parts) if parts else ""


# --------------------------------------------------------------------------- who may connect


def is_loopback(address: str) -> bool:
    """True when ``address`` reaches this machine only (``localhost``, 127.x, ``::1``)."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: reached at whatever it resolves to


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def host_names() -> list[str]:
    """This machine's host name, lowercased (no network lookup)."""
    with contextlib.suppress(OSError, UnicodeError):
        name = socket.gethostname().strip().lower()
        if name and _HOST_NAME.fullmatch(name):
            return [name]
    return []


def interface_addresses() -> list[str]:
    """The IPv4 addresses of this machine's network interfaces, loopback left out.

    Read from the kernel (Linux); elsewhere, none are known and the host name
    and ``--allow-origin`` say how the server is reached.
    """
    found: list[str] = []
    if not sys.platform.startswith("linux"):
        return found
    try:
        import fcntl
        import struct

        names = [name for _, name in socket.if_nameindex()]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            for name in names:
                try:  # SIOCGIFADDR: the interface's address, asked of the kernel only
                    packed = fcntl.ioctl(
                        sock.fileno(), 0x8915, struct.pack("256s", name.encode()[:15])
                    )
                except OSError:
                    continue
                address = socket.inet_ntoa(packed[20:24])
                if not ipaddress.ip_address(address).is_loopback and address not in found:
                    found.append(address)
    except (OSError, ImportError, ValueError):
        pass
    return found


def interface_addresses6() -> list[str]:
    """The global IPv6 addresses of this machine's interfaces (Linux; none elsewhere).

    Loopback and link-local addresses (``fe80::``, which a URL can only use with its
    interface's zone) are left out.
    """
    found: list[str] = []
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/net/if_inet6", encoding="ascii") as table:
            for row in table:
                digits = row.split()[0] if row.split() else ""
                if len(digits) != 32:
                    continue
                address = ipaddress.IPv6Address(int(digits, 16))
                if not (address.is_loopback or address.is_link_local or address.is_multicast):
                    found.append(address.compressed)
    return list(dict.fromkeys(found))


def reachable_hosts(address: str) -> list[str]:
    """The host parts of the URLs the server is reached at, loopback first."""
    hosts = ["localhost", "127.0.0.1"]
    if address in WILDCARDS:
        hosts += host_names() + interface_addresses()
    elif not is_loopback(address):
        hosts += [address] + host_names()
    elif address != "localhost":
        hosts.append(address)
    if address == "::":  # both families: IPv6 loopback and interfaces too
        hosts += ["::1", *interface_addresses6()]
    return [_url_host(host) for host in dict.fromkeys(hosts)]


def allowed_origins(address: str, port: int, extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Every ``host:port`` whose pages may open the WebSocket: where the server is reached, plus ``extra``."""
    return list(
        dict.fromkeys([f"{host}:{port}" for host in reachable_hosts(address)] + list(extra))
    )


def resolve_port(address: str, port: int) -> int:
    """``port``, or for 0 a port free on ``address`` now, so the allowed origins can name it."""
    if port:
        return port
    host = None if address in WILDCARDS else address.strip("[]")
    family, kind, proto, _, where = socket.getaddrinfo(
        host, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    with socket.socket(family, kind, proto) as sock:
        sock.bind(where)
        return sock.getsockname()[1]


def server_kwargs(args: argparse.Namespace, port: int) -> dict:
    """What :func:`panel.serve` is given for these arguments (the port already resolved)."""
    from .recycling import RequestClock  # when the last request came, for recycling
    from .serving import host_check, server_settings  # gzip, the Host check

    settings = server_settings()
    origins = allowed_origins(args.address, port, args.allow_origin)
    return {
        **settings,
        # A request for any other name is refused before it reaches the app (DNS rebinding).
        "transforms": [host_check(origins), RequestClock, *settings["transforms"]],
        "port": port,
        # "::" is every interface of both families where the system has both (Tornado
        # binds an IPv6 socket with IPV6_V6ONLY, so IPv4 needs a socket of its own).
        "address": None if args.address == "::" else args.address,
        # Bokeh's allowlist cannot hold an IPv6 address: those are checked by the
        # explorer's own check of origins (explorer.patches.refuse_early).
        "websocket_origin": [origin for origin in origins if not origin.startswith("[")],
        # The client's address from the proxy's X-Real-IP / X-Forwarded-For (Tornado's
        # xheaders): each student's own page budget (explorer.connection_bounds).
        "use_xheaders": args.behind_proxy,
        "num_procs": args.num_procs,
        "unused_session_lifetime_milliseconds": args.unused_session_lifetime,
        "check_unused_sessions_milliseconds": args.check_unused_sessions,
        "show": False,
        "start": False,
        "verbose": False,  # Panel's own line would print 0.0.0.0 as if it were a URL
        "title": "Candela Explorer",
    }


def urls(address: str, port: int, query: str) -> tuple[str, list[str]]:
    """The URL to print first and the other addresses the page is at."""
    if address in WILDCARDS:
        names = host_names()
        hosts = names + interface_addresses() + ["127.0.0.1"]
    elif address == "localhost":
        hosts = ["localhost"]
    else:
        hosts = [_url_host(address)]
    if address == "::":
        hosts += [_url_host(host) for host in interface_addresses6()] + ["[::1]"]
    found = [f"http://{host}:{port}/{query}" for host in dict.fromkeys(hosts)]
    return found[0], found[1:]


def exposure_warning(address: str, port: int, origins: list[str]) -> str | None:
    """One line saying who can reach the server, when it listens beyond this machine."""
    if is_loopback(address):
        return None
    if address in WILDCARDS:
        who = (
            f"listening on every network interface ({address or 'all'}): anyone who can reach "
            f"this machine on port {port} can use the explorer"
        )
    else:
        who = (
            f"listening on {address}: anyone on a network that reaches {address} on port "
            f"{port} can use the explorer"
        )
    if any(o == "*" or o.startswith("*:") for o in origins):
        return f"warning: {who}, and pages from any site may drive it (--allow-origin '*')"
    return f"warning: {who}; pages served elsewhere cannot drive it (allowed: {', '.join(origins)})"


# --------------------------------------------------------------------------- serving


class _Stop(Exception):
    """SIGTERM in the process that supervises the workers."""


def _raise_stop(signum, frame):
    raise _Stop


def _worker_pids(parent: int) -> list[int]:
    # The children of ``parent``, read from /proc (the workers Tornado forked).
    pids = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    stat = handle.read().decode("ascii", "replace")
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[-1].split()
            if len(fields) > 1 and fields[1] == str(parent):
                pids.append(int(entry))
    return pids


def stop_workers(parent: int, grace: float = 10.0) -> None:
    """Stop every worker process of ``parent`` (SIGTERM, then SIGKILL) and reap them."""
    pids = _worker_pids(parent)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    waiting = set(pids)
    while waiting:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                waiting.discard(pid)
        if waiting and time.monotonic() > deadline:
            for pid in waiting:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + grace
        if waiting:
            time.sleep(0.05)


def _die_with_parent(parent: int) -> None:
    # In a worker: stop when the supervising process goes, however it goes.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(0)


def prepare(server, ready: int = 0, hosts: list[str] | tuple[str, ...] = ()) -> None:
    """The explorer's server (what :func:`panel.serve` returns) made ready to serve: served as
    :func:`explorer.serving.prepare_server` serves, with up to ``ready`` pages built ahead
    (:mod:`explorer.pool`) that open their URL as a page built for the request does.
    Given ``hosts`` (``name:port``, the names it answers to and the origins it allows), a
    request for another name, or a WebSocket from another origin, is refused before
    anything is built for it (:mod:`explorer.patches.refuse_early`).

    Here the server, the page and the pool meet: none of them imports another.
    """
    from .app import open_page
    from .classroom import catalogue_stamp
    from .patches.refuse_early import refuse_early
    from .serving import allows, prepare_server

    prepare_server(server)  # the app is imported first: it lasts as long as the process
    if hosts:
        allowed = tuple(hosts)
        refuse_early(server, lambda host: allows(allowed, host), lambda o: allows(allowed, o))
    if ready > 0:
        from .pool import install

        install(server, ready, arrive=open_page, stamp=catalogue_stamp)


def serve(args: argparse.Namespace, kwargs: dict) -> int:
    """Serve the app with ``kwargs`` until stopped; print the URL and any warning."""
    import panel as pn

    from .app import app
    from .class_store import MemoryStore
    from .class_store import current as class_store
    from .serving import freeze_lasting

    pn.extension()
    from .classroom import read_catalogue

    read_catalogue()  # each lesson file that cannot be loaded: one line for the teacher, now
    # Before any worker is forked: a collection in a worker then never writes to what
    # the process held before (as gc.freeze's documentation advises for forking), so
    # fewer of those pages are copied into each worker.
    freeze_lasting()
    parent = os.getpid()
    several = kwargs["num_procs"] != 1
    # This process binds the sockets and forks the workers; it serves no session itself.
    # A dead worker is started again within a budget per minute, retried later past it,
    # and a worker that served sessions and grew is replaced by a fresh one when idle
    # (explorer.workers, explorer.recycling).
    try:
        policy = policy_from_env()
    except ValueError as exc:
        return fail(str(exc))
    forks = hasattr(os, "fork")
    store = class_store()
    if several and isinstance(store, MemoryStore):
        # Each worker would hold classes of its own: a student's page, on another worker
        # than the teacher's, would not find the class (explorer.class_start).
        store.closed_to_pages = (
            "This server runs several processes, each with classes of its own, so a class "
            "cannot be started from the page here. Its operator can start one with "
            "candela-explorer --class, or serve with --class-store redis://HOST:PORT/N "
            "(or --num-procs 1)."
        )
    if forks and not several:
        kwargs = {**kwargs, "num_procs": ONE_WORKER}  # Bokeh forks for any number but 1
    if kwargs["num_procs"] != 1:
        signal.signal(signal.SIGTERM, _raise_stop)
    try:
        with supervised(policy) if forks else contextlib.nullcontext():
            server = pn.serve({"/": app}, **kwargs)
    except (KeyboardInterrupt, _Stop):  # the supervisor, stopped while its workers serve
        if os.getpid() == parent:
            stop_workers(parent)
            print("stopped", file=sys.stderr)
            return 0
        raise
    except CannotServe as exc:  # the supervisor, once no worker is left to serve
        stop_workers(parent)
        return fail(str(exc), 1)
    except (OSError, ValueError, UnicodeError, OverflowError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        return fail(
            f"cannot serve on {args.address}:{args.port}: {reason}"
            " (try another --port, or --port 0 for a free one)"
        )
    # In each worker: only the bundles the page uses, and pages built ahead. Each worker
    # keeps them all: a burst is not shared out evenly between the workers.
    prepare(
        server,
        ready=args.ready,
        hosts=allowed_origins(args.address, kwargs["port"], args.allow_origin),
    )
    task = task_id()
    if task is not None:
        _die_with_parent(parent)
        # A class kept in this process lives in its worker: never replaced under it.
        if forks and not (args.lead_class and args.class_store is None):
            from .recycling import install as recycle_when_idle

            recycle_when_idle(server, RECYCLE_STATUS, expected_mb=args.ready * MB_PER_READY_PAGE)
    if not task and not replacement():  # one line of news, from one process, once
        query = start_query(args.shape, args.ops)
        url, others = urls(args.address, server.port, query)
        allowed = allowed_origins(args.address, server.port, args.allow_origin)
        warning = exposure_warning(args.address, server.port, allowed)
        if warning:
            print(f"{PROG}: {warning}", file=sys.stderr, flush=True)
        print(f"Candela Explorer: {url}", flush=True)
        if others:
            print("  also at: " + "  ".join(others), flush=True)
        for line in class_lines(args, url):
            print(line, flush=True)
        workers = f" and its {args.num_procs or 'per-CPU'} workers" if several else ""
        print(f"Press Ctrl+C to stop the server{workers}.", flush=True)
        if not args.no_browser:
            import webbrowser

            local = url if is_loopback(args.address) or args.address not in WILDCARDS else None
            local = local or f"http://127.0.0.1:{server.port}/{query}"
            server.io_loop.add_callback(lambda: webbrowser.open(local))
    try:
        server.start()
        server.io_loop.start()
    except (KeyboardInterrupt, _Stop):
        if task is None:  # a worker's supervisor says it (Ctrl+C reaches both)
            print("stopped", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return fail("stopped", 130)
    except CliError as exc:
        return fail(str(exc))
    except Exception as exc:  # one line, never a traceback
        return fail(f"failed: {type(exc).__name__}: {exc}", 1)


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    from .patches import PlainError, setting

    try:  # read once, before anything is built: a mistyped patch name stops the command
        setting()
    except PlainError as exc:
        return fail(str(exc))
    for name in ("export", "shape", "ops", "unit"):
        if isinstance(getattr(args, name), list):  # argparse reads `--export=--` as []
            setattr(args, name, "--")
    odd = [
        name
        for name, value in (
            ("address", args.address),
            ("port", args.port),
            ("num-procs", args.num_procs),
        )
        if isinstance(value, list)
    ] + ["allow-origin" for value in args.allow_origin if not isinstance(value, str)]
    if odd:  # the same quirk where a checked value belongs
        return fail(f"argument --{odd[0]}: '--' is not a value for it (see {PROG} --help)")
    if args.export_lesson is not None:
        from .fields import UNITS
        from .lesson_page import export_lesson_main

        if args.unit not in UNITS:
            return fail(f"argument --unit: {args.unit!r} is not one of {', '.join(UNITS)}")
        return export_lesson_main(*args.export_lesson, unit=args.unit)
    if args.export is not None:
        return export(args)
    if args.lead_class or args.class_store is not None:
        failed = open_class(args)
        if failed is not None:
            return failed
    try:
        port = resolve_port(args.address, args.port)
    except (OSError, ValueError, UnicodeError, OverflowError, IndexError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        return fail(f"cannot serve on {args.address}:{args.port}: {reason}")
    return serve(args, server_kwargs(args, port))


def open_store(url: str | None):
    """The class store ``--class-store`` names: ``None``/``""``/``memory`` for this process
    (:class:`~explorer.class_store.MemoryStore`), ``redis://HOST:PORT/N`` for Redis
    (:class:`~explorer.class_redis.RedisStore`, which needs the ``redis`` package);
    :class:`~explorer.class_store.ClassError` for anything else."""
    from .class_store import ClassError, MemoryStore, _shown

    if url in (None, "", "memory"):
        return MemoryStore()
    if isinstance(url, str) and url.startswith(("redis://", "unix://")):
        from .class_redis import RedisStore

        return RedisStore(url)
    raise ClassError(
        f"class store {_shown(url, 60)} is not memory or a redis://HOST:PORT/N address"
    )


def open_class(args: argparse.Namespace) -> int | None:
    """``--class`` / ``--class-store``: the store this process's pages use, and with
    ``--class`` a new class in it (``args.class_code``, ``args.class_token``); or the exit
    status of a one-line refusal."""
    from .class_store import ClassError, set_current

    try:
        store = open_store(args.class_store)
    except ClassError as exc:
        return fail(f"argument --class-store: {exc}")
    except ImportError:
        return fail(
            "argument --class-store: a Redis store needs the redis package "
            "(pip install 'candela-explorer[class]')"
        )
    if args.class_store is None and args.num_procs != 1:
        return fail(
            "--class with --num-procs other than 1 needs --class-store redis://HOST:PORT/N: "
            "a class kept in one process is not seen by the others"
        )
    try:
        if args.lead_class:
            args.class_code, args.class_token = store.create()
    except Exception as exc:  # Redis out of reach: one line
        return fail(f"cannot start the class in {store.description}: {exc}")
    set_current(store)
    return None


def class_lines(args: argparse.Namespace, url: str) -> list[str]:
    """What ``--class`` prints: the students' link and code, then the teacher's secret link."""
    from .led_class import class_links

    code = getattr(args, "class_code", None)
    if code is None:
        return []
    base = url.split("?", 1)[0]
    students, teacher = class_links(base, code, args.class_token)
    return [
        f"Class {code}: students open {students}  (code {code}, for the projector)",
        f"  teacher's link, keep it secret: {teacher}",
    ]


def export(args: argparse.Namespace) -> int:
    """``--export PATH``: write the page, or say in one line why not (exit status 2)."""
    from .export import check_export_path, export_main

    path = args.export
    try:
        check_export_path(path)  # before the page is built: a bad path fails at once
        return export_main(path, args.shape, args.ops)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return fail(f"cannot export to {path!r}: {reason}")


if __name__ == "__main__":
    raise SystemExit(main())
