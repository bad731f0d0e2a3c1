"""Every change the explorer makes to Panel's, Bokeh's, Tornado's or the browser's framework code.

The explorer is built on Panel's and Bokeh's public API. Where that was too slow
for a class, or had a bug, it changes framework behaviour, and every such change
lives in this package, one module per patch (or per group that only works
together), each declared once with :func:`register` as a :class:`Patch`: what it
changes, why, what it buys, and the versions it was checked against.

A patch is applied with :func:`apply` and is always optional:

- ``CANDELA_PLAIN=1`` in the environment turns every patch off: the explorer then
  runs on its frameworks as they are (slower, never wrong); the command says so
  when it starts (:func:`plain`). ``CANDELA_PLAIN=name,name`` turns only the patches
  named off (one log line each), to measure what each buys. It is read once a
  process (:func:`setting`); a name that is no patch is an error
  (:class:`PlainError`; the command stops with one line naming it).
- On a version of Panel, Bokeh (or whichever packages a patch names) other than
  those it was checked against, or when a framework name it replaces is missing,
  the patch leaves the framework alone and logs one line saying why
  (:func:`apply` returns False): at INFO for another release, where it is meant to be
  off (so nothing of it shows in a notebook's cell), a warning otherwise.
- A browser patch (a ``.mjs`` file here) is put into the page only when it is on
  (:func:`browser_module`); off, its entry function is an empty one.

Adding a patch:

1. a module here (named by what the patch does) with the change in a function that
   installs it once, and at its end ``register(Patch(name=..., changes=..., why=...,
   buys=..., checked={"panel": "1.9"}, needs=("panel.x:Class.method", ...),
   install=...))``: ``needs`` lists every framework name it reads or replaces (a
   needed class attribute must be defined by the framework's own classes); a patch
   that acts on an object (a server, a session) has no ``install`` and calls
   ``apply(name)`` (and :func:`left_off` when that object lacks a name) where it acts;
   a patch that repeats a framework function's steps lists it in ``copies``;
   a patch that changes one of the explorer's own classes defines the method as a
   function of the class (``make(cls)``), and that class's module declares it with
   :func:`give` (a patch never imports the explorer's modules);
2. the module's name in :data:`MODULES`;
3. ``apply(name)`` where it is needed: ``explorer.serving.SERVER_PATCHES`` for every
   served process, ``explorer.patches.browser.BROWSER_PATCHES`` for a ``.mjs`` file
   (a ``script`` and its ``entry`` function);
4. a test of what it buys, marked ``@pytest.mark.patched(name)`` (skipped where it is
   off); ``tests/explorer/test_patches.py`` already holds every registered patch to
   its guards (another release, a missing name, ``CANDELA_PLAIN``), and
   ``benchmarks/bench_patches.py`` measures it on and off once it is in its
   ``OWN_MEASURE``.

Nothing outside this package assigns onto a framework class, module or prototype
(``tests/explorer/test_layers.py`` checks it).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MODULES",
    "Patch",
    "Plain",
    "PlainError",
    "applied",
    "announce_plain",
    "apply",
    "browser_module",
    "get",
    "give",
    "is_on",
    "left_off",
    "patches",
    "plain",
    "read_plain",
    "register",
    "setting",
    "skip_reason",
    "source_hash",
]

log = logging.getLogger("candela-explorer")

HERE = Path(__file__).parent

#: The modules of this package that register patches, imported by :func:`patches`.
MODULES = (
    "messages",
    "collect_at_a_pause",
    "lean_serialization",
    "immediate_changes",
    "one_write",
    "pool_sessions",
    "inline_panes",
    "forget_outputs",
    "inline_once",
    "load_once",
    "notebook7_resources",
    "comm_stdout",
    "browser",
    "refuse_early",
    "ipv6_location",
)


@dataclass(frozen=True)
class Patch:
    """One change to framework behaviour.

    ``checked`` maps a distribution name (``"panel"``, ``"bokeh"``) to the
    ``major.minor`` it was checked against (or several, space-separated: ``"3.9 3.10"``);
    ``needs`` lists the names it reads or replaces, as ``"module:attribute.path"``;
    ``copies`` maps a framework function whose steps the patch repeats to the first 16
    hex digits of the SHA-256 of its source, as checked: if that code changes, the patch
    is left off. ``install()`` makes the change, once (calling it again changes nothing). A browser patch has a ``script`` (a file of
    this package) defining the function ``entry(Bokeh)`` instead of ``install``.
    """

    name: str
    changes: str
    why: str
    buys: str
    checked: dict[str, str]
    needs: tuple[str, ...] = ()
    copies: tuple[tuple[str, str], ...] = ()
    install: Callable[[], None] | None = None
    script: str | None = None
    entry: str | None = None
    upstream: str = ""


_REGISTRY: dict[str, Patch] = {}
#: name -> True (applied) or the reason it was left off.
_STATE: dict[str, bool | str] = {}


def register(patch: Patch) -> Patch:
    """Declare ``patch`` (once per name); returns it."""
    if patch.name in _REGISTRY and _REGISTRY[patch.name] != patch:
        raise ValueError(f"two patches are named {patch.name!r}")
    _REGISTRY[patch.name] = patch
    return patch


def patches() -> dict[str, Patch]:
    """Every patch, by name, in the order of :data:`MODULES`."""
    for module in MODULES:
        importlib.import_module(f"{__name__}.{module}")
    return dict(_REGISTRY)


def get(name: str) -> Patch:
    """The patch called ``name`` (its module is imported)."""
    patches()
    return _REGISTRY[name]


#: ``CANDELA_PLAIN`` values that turn every patch off, and those that turn none off.
EVERY_OFF = ("1", "true", "yes", "on", "all")
NONE_OFF = ("", "0", "false", "no", "off")


class PlainError(ValueError):
    """``CANDELA_PLAIN`` names something that is not a patch."""


@dataclass(frozen=True)
class Plain:
    """What ``CANDELA_PLAIN`` asks for: every patch off, or the patches it names off."""

    every: bool = False
    named: frozenset[str] = frozenset()


def read_plain(value: str) -> Plain:
    """``CANDELA_PLAIN``'s value read: ``1`` (every patch off), ``0``/empty (none), or patch
    names (``cells,steady``: only those off, as ``benchmarks/bench_patches.py`` does to
    measure each). Anything else is a :class:`PlainError` naming it: a mistyped name must not
    quietly turn every patch off, or none."""
    said = value.strip().lower()
    if said in NONE_OFF:
        return Plain()
    if said in EVERY_OFF:
        return Plain(every=True)
    names = {part.strip() for part in said.split(",") if part.strip()}
    unknown = sorted(names - set(patches()))
    if unknown:
        raise PlainError(
            f"CANDELA_PLAIN={value.strip()!r}: {', '.join(map(repr, unknown))} is not a patch; "
            f"use 1 (every patch off), 0 (none) or names from: {', '.join(sorted(patches()))}"
        )
    return Plain(named=frozenset(names))


_SETTING: list[Plain] = []


def setting() -> Plain:
    """``CANDELA_PLAIN`` as read once, when a process first asks (:class:`PlainError` if bad)."""
    if not _SETTING:
        _SETTING.append(read_plain(os.environ.get("CANDELA_PLAIN", "")))
    return _SETTING[0]


def _named_off() -> frozenset[str]:
    return setting().named


def plain() -> bool:
    """Whether ``CANDELA_PLAIN`` turns every patch off (see :func:`read_plain`)."""
    return setting().every


def announce_plain() -> bool:
    """Whether every patch is off; if so, says it in one log line (once a process)."""
    if plain() and not _STATE.get("(announced)"):
        _STATE["(announced)"] = True
        log.warning(
            "CANDELA_PLAIN is set: every patch to Panel and Bokeh is off (explorer.patches); "
            "the explorer runs on their own code"
        )
    return plain()


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _same_release(installed: str, checked: str) -> bool:
    """Whether ``installed`` is one of the releases ``checked`` lists (``"3.9 3.10"``)."""
    have = installed.split(".")
    return any(have[: len(w.split("."))] == w.split(".") for w in checked.split())


def source_hash(need: str) -> str | None:
    """The first 16 hex digits of the SHA-256 of the source of ``"module:attr.path"``."""
    import hashlib
    import inspect

    module_name, _, path = need.partition(":")
    try:
        obj = importlib.import_module(module_name)
        for part in filter(None, path.split(".")):
            obj = getattr(obj, part)
        source = inspect.getsource(obj)
    except (ImportError, AttributeError, OSError, TypeError):
        return None
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def _resolve(need: str) -> bool:
    """Whether ``"module:attr.path"`` names something that exists.

    An attribute of a class must be defined by that package's own classes: a method a
    release renamed is not found in a base class of another package (Tornado's, for a
    Bokeh handler).
    """
    module_name, _, path = need.partition(":")
    try:
        obj = importlib.import_module(module_name)
    except ImportError:
        return False
    package = module_name.split(".")[0]
    for part in filter(None, path.split(".")):
        if isinstance(obj, type):
            owner = next((k for k in obj.__mro__ if part in vars(k)), None)
            if owner is None or owner.__module__.split(".")[0] != package:
                return False
        elif not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def skip_reason(patch: Patch) -> str | None:
    """Why ``patch`` must be left off here (None: it may be applied)."""
    if plain():
        return "CANDELA_PLAIN is set"
    if patch.name in _named_off():
        return "CANDELA_PLAIN names it"
    release = _release_mismatch(patch)
    if release is not None:
        return release
    for need in patch.needs:
        if not _resolve(need):
            return f"{need} is missing"
    for need, checked_hash in patch.copies:
        if source_hash(need) != checked_hash:
            return f"the code of {need} is not the code it repeats"
    return None


def _release_mismatch(patch: Patch) -> str | None:
    """Which installed release is not one ``patch`` was checked against (None: each is)."""
    for distribution, checked in patch.checked.items():
        installed = _version(distribution)
        if installed is None or not _same_release(installed, checked):
            return f"{distribution} {installed} is not the {checked} it was checked against"
    return None


def apply(name: str) -> bool:
    """Apply the patch ``name`` once; False (and one log line, once) when it is left off."""
    if name in _STATE:
        return _STATE[name] is True
    patch = get(name)
    reason = skip_reason(patch)
    if reason is None:
        try:
            if patch.install is not None:
                patch.install()
        except Exception as exc:  # a framework that changed in a way no guard saw
            reason = f"it failed to install ({type(exc).__name__}: {exc})"
    if reason is not None:
        _STATE[name] = reason
        if not plain():  # plain: said once, when the command starts
            # Off on a release it was not checked against is what is meant to happen (Panel
            # 1.10 runs with almost none): said at INFO, never into a notebook's cell. A
            # name missing on the release it was checked against is news: a warning.
            level = logging.WARNING if _release_mismatch(patch) is None else logging.INFO
            log.log(level, "patch %s left off: %s; Panel's and Bokeh's own code runs", name, reason)
        return False
    _STATE[name] = True
    for cls, attribute, make in _GIVEN.get(name, ()):
        setattr(cls, attribute, make(cls))
    return True


#: What each patch gives the explorer's own classes once installed: name -> (class,
#: attribute, make) in the order declared (:func:`give`).
_GIVEN: dict[str, list[tuple[type, str, Callable[[type], object]]]] = {}


def give(name: str, cls: type, attribute: str, make: Callable[[type], object]) -> None:
    """Declare that the patch ``name``, once installed, sets ``cls.attribute = make(cls)``.

    ``cls`` is one of the explorer's own classes (a subclass of Panel's): until an entry
    point installs the patch, and with it off, the class is Panel's as it is. A patch
    never imports the explorer's modules; they declare here what it changes of theirs.
    Declared after the patch is on, it is set at once.
    """
    _GIVEN.setdefault(name, []).append((cls, attribute, make))
    if is_on(name):
        setattr(cls, attribute, make(cls))


def left_off(name: str, reason: str) -> bool:
    """Turn the applied patch ``name`` off from now on, for ``reason`` (one log line); False.

    For a patch that finds a name it needs missing only when it is used (on an
    instance: a server, a session), and then leaves that object alone.
    """
    if _STATE.get(name) is True:
        _STATE[name] = reason
        log.warning("patch %s left off: %s; Panel's and Bokeh's own code runs", name, reason)
    return False


def is_on(name: str) -> bool:
    """Whether the patch ``name`` has been applied (and not left off since)."""
    return _STATE.get(name) is True


def applied() -> dict[str, bool | str]:
    """Each patch :func:`apply` has been asked for: True, or why it was left off."""
    return {name: state for name, state in _STATE.items() if not name.startswith("(")}


def browser_module(names: tuple[str, ...]) -> str:
    """The JavaScript of the browser patches ``names``, in order, for a component's module.

    A patch that is not on (not applied yet, by :func:`explorer.patches.browser.browser_patches`,
    or left off) is an empty function of the same name, so the code that calls its entry
    function runs unchanged.
    """
    from ..shipped import shipped

    parts = []
    for name in names:
        patch = get(name)
        if is_on(name) and patch.script:
            parts.append(shipped(HERE / patch.script))
        else:
            parts.append(f"function {patch.entry}(Bokeh) {{}} // patch {name}: off\n")
    return "\n".join(parts)
