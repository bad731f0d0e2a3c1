"""Comm handlers capture their own thread's printing, never the kernel's ``sys.stdout`` for good.

What it changes: ``pyviz_comms.StandardOutput``, the context manager
``pyviz_comms.Comm._handle_msg`` wraps around every message Panel's page sends
to the kernel (it collects what the handler prints, to send it back with the
acknowledgement).

Why: it swaps the process-wide ``sys.stdout`` for a ``StringIO`` on entry and
puts back what it saw on exit. That is only correct if handlers never overlap.
JupyterLab 4.6 sends comm messages on kernel subshells by default
(``commsOverSubshells``, one subshell per comm target, and every Panel output
is a target of its own) and ipykernel 7 runs each subshell on its own thread,
so two outputs' messages are handled at once. Thread A saves the real stdout
and installs ``S_A``; thread B saves ``S_A`` and installs ``S_B``; A restores
the real stdout; B "restores" ``S_A``. From then on every ``print()`` of every
cell goes into an abandoned ``StringIO``: nothing is printed for the rest of
the kernel's life. Meanwhile the cell running on the main thread prints into
whichever handler's buffer is installed.

What it buys: while any handler runs, ``sys.stdout`` is one proxy that sends a
write from a thread that is capturing to that thread's buffer, and every
other write to the stream that was there before; the last handler to leave
puts that stream back (unless something else has replaced the proxy since,
which then keeps writing through it). Captures nest and overlap in any order.

Versions checked: pyviz_comms 3.0.6 (``StandardOutput`` unchanged since 0.7),
ipykernel 7.4.0, JupyterLab 4.6.6, Panel 1.9.4.

Upstream-style reproduction (pyviz_comms alone, no Jupyter)::

    import sys, threading, time
    from pyviz_comms import Comm

    real = sys.stdout
    slow = lambda msg: time.sleep(msg["t"])
    a, b = Comm(on_msg=slow), Comm(on_msg=slow)
    ta = threading.Thread(target=a._handle_msg, args=({"t": 0.2},))
    tb = threading.Thread(target=b._handle_msg, args=({"t": 0.4},))
    ta.start(); time.sleep(0.05); tb.start(); ta.join(); tb.join()
    assert sys.stdout is real, sys.stdout  # fails: a StringIO is left behind
"""

from __future__ import annotations

import sys
import threading
from io import StringIO

from explorer import patches as _patches

__all__ = ["ThreadStandardOutput", "apply"]

#: pyviz_comms' own ``StandardOutput``, once :func:`apply` has replaced it.
original = None
_lock = threading.Lock()
_local = threading.local()
#: How many captures are open, and the stream they replaced (put back by the last one out).
_state: dict = {"depth": 0, "saved": None, "proxy": None}


class _Proxy:
    """``sys.stdout`` while a comm handler captures: each capturing thread writes to its buffer."""

    def __init__(self, fallback) -> None:
        self._fallback = fallback

    def _target(self):
        buffers = getattr(_local, "buffers", None)
        return buffers[-1] if buffers else self._fallback

    def write(self, text):
        return self._target().write(text)

    def writelines(self, lines):
        return self._target().writelines(lines)

    def flush(self):
        return self._target().flush()

    def __getattr__(self, name):  # isatty, encoding, fileno, ipykernel's own methods...
        return getattr(self._target(), name)


class ThreadStandardOutput(list):
    """``pyviz_comms.StandardOutput``, safe when handlers run on several threads at once."""

    def __enter__(self):
        self._stringio = StringIO()
        with _lock:
            if _state["depth"] == 0:
                _state["saved"] = sys.stdout
                _state["proxy"] = _Proxy(sys.stdout)
                sys.stdout = _state["proxy"]
            _state["depth"] += 1
        buffers = getattr(_local, "buffers", None)
        if buffers is None:
            buffers = _local.buffers = []
        buffers.append(self._stringio)
        return self

    def __exit__(self, *args):
        _local.buffers.remove(self._stringio)
        self.extend(self._stringio.getvalue().splitlines())
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                if sys.stdout is _state["proxy"]:
                    sys.stdout = _state["saved"]
                _state["saved"] = _state["proxy"] = None


def apply() -> bool:
    """Make pyviz_comms capture per thread, if the patch is on (see the module)."""
    return _patches.apply("comm_stdout")


def _install() -> None:
    global original
    import pyviz_comms

    if pyviz_comms.StandardOutput is not ThreadStandardOutput:
        original = pyviz_comms.StandardOutput
        pyviz_comms.StandardOutput = ThreadStandardOutput


_patches.register(
    _patches.Patch(
        name="comm_stdout",
        changes="pyviz_comms.StandardOutput: a capture of each handler's own thread's "
        "printing, through one sys.stdout proxy while any handler runs",
        why="overlapping comm handlers (JupyterLab 4.6's comms over subshells, ipykernel 7's "
        "threads) left sys.stdout a stray StringIO: every later print() was lost",
        buys="print() and the cell's output keep working in a notebook (a fix)",
        checked={"pyviz_comms": "3.0", "ipykernel": "7.4"},
        needs=("pyviz_comms:StandardOutput", "pyviz_comms:Comm._handle_msg"),
        install=_install,
        upstream="two pyviz_comms.Comm handlers overlapping on two threads (module docstring)",
    )
)
