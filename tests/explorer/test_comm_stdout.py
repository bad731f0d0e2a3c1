"""Comm handlers running on several threads at once never leave ``sys.stdout`` swapped.

ipykernel 7 handles comm messages of JupyterLab's subshells on threads of their
own; pyviz_comms wraps each handler in a capture of ``sys.stdout``. These tests
run real ``pyviz_comms.Comm`` handlers on threads, overlapping in the order
that lost every later ``print()`` in a notebook.
"""

from __future__ import annotations

import io
import sys
import threading

import pytest
import pyviz_comms
from pyviz_comms import Comm

from explorer.patches import comm_stdout


def overlapped(first_leaves_first: bool, printed: list[str]) -> tuple[list, list]:
    """Two comms' handlers overlapping on two threads; what each acknowledged as printed."""
    entered = [threading.Event(), threading.Event()]
    leave = [threading.Event(), threading.Event()]
    stdouts: list[list] = [[], []]

    def handler(i):
        def on_msg(msg):
            print(f"handler {i}")
            entered[i].set()
            assert leave[i].wait(10)

        return on_msg

    comms = [
        Comm(on_msg=handler(i), on_stdout=lambda out, i=i: stdouts[i].extend(out)) for i in (0, 1)
    ]
    threads = [threading.Thread(target=c._handle_msg, args=({},)) for c in comms]
    threads[0].start()
    assert entered[0].wait(10)
    threads[1].start()
    assert entered[1].wait(10)
    print(printed[0])  # the main thread, as a cell, while both handlers run
    order = (0, 1) if first_leaves_first else (1, 0)
    for i in order:
        leave[i].set()
        threads[i].join(10)
    return stdouts[0], stdouts[1]


@pytest.fixture
def patched(monkeypatch):
    monkeypatch.setattr(pyviz_comms, "StandardOutput", pyviz_comms.StandardOutput)
    comm_stdout._install()


@pytest.mark.parametrize("first_leaves_first", [True, False])
def test_overlapping_handlers_restore_stdout_and_keep_each_ones_print(patched, first_leaves_first):
    real = sys.stdout
    cell = io.StringIO()
    sys.stdout = cell
    try:
        one, two = overlapped(first_leaves_first, ["printed by the cell"])
        left = sys.stdout
        print("after")
    finally:
        sys.stdout = real
    assert left is cell
    assert cell.getvalue() == "printed by the cell\nafter\n"
    assert (one, two) == (["handler 0"], ["handler 1"])


def test_without_the_patch_the_overlap_loses_stdout(monkeypatch):
    # The framework's own behaviour, so the test above is known to test something.
    monkeypatch.setattr(
        pyviz_comms, "StandardOutput", comm_stdout.original or pyviz_comms.StandardOutput
    )
    assert pyviz_comms.StandardOutput is not comm_stdout.ThreadStandardOutput
    real = sys.stdout
    cell = io.StringIO()
    sys.stdout = cell
    try:
        overlapped(True, ["printed by the cell"])
        left = sys.stdout
    finally:
        sys.stdout = real
    assert left is not cell  # a handler's StringIO stayed installed


def test_the_patch_is_registered_and_installing_twice_is_one_patch(patched):
    from explorer import patches

    assert patches.get("comm_stdout").install is comm_stdout._install
    comm_stdout._install()
    assert pyviz_comms.StandardOutput is comm_stdout.ThreadStandardOutput
    assert comm_stdout.original is not comm_stdout.ThreadStandardOutput
