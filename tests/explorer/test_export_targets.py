"""``--export`` and ``--export-lesson`` write a regular file and nothing else.

The real command is run on each kind of thing that can sit at PATH: a new name
and a regular file are written (the file replaced whole); a device, a FIFO, a
socket, a folder, and a symlink to any of them get one line on stderr, exit
status 2, and are left exactly as they were.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMMAND = str(Path(sys.executable).parent / "candela-explorer")
EXPORTS = {
    "--export": ["--shape", "2,3", "--export"],
    "--export-lesson": ["--export-lesson", "transpose"],
}


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([COMMAND, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120)


def fingerprint(path: Path) -> tuple:
    """What must not change: the kind, the inode, the device number of what is at ``path``."""
    found = os.lstat(path)
    return (stat.S_IFMT(found.st_mode), found.st_ino, found.st_rdev, os.path.realpath(path))


def fifo(folder: Path) -> Path:
    path = folder / "pipe.html"
    os.mkfifo(path)
    return path


def unix_socket(folder: Path) -> Path:
    path = folder / "sock.html"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays on disk
    return path


def folder_at(folder: Path) -> Path:
    path = folder / "dir.html"
    path.mkdir()
    return path


def device(folder: Path) -> Path:
    path = folder / "null.html"
    if os.geteuid() == 0:  # a real character device (1, 3) is /dev/null's
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    else:
        os.symlink("/dev/null", path)
    return path


def link_to_device(folder: Path) -> Path:
    path = folder / "link.html"
    os.symlink("/dev/null", path)
    return path


@pytest.mark.parametrize("flag", EXPORTS)
@pytest.mark.parametrize(
    "make, kind",
    [
        (device, "device"),
        (link_to_device, "device"),
        (fifo, "FIFO"),
        (unix_socket, "socket"),
        (folder_at, "folder"),
    ],
    ids=["device", "symlink-to-dev-null", "fifo", "socket", "folder"],
)
def test_what_is_not_a_regular_file_is_refused_and_left_alone(tmp_path, flag, make, kind):
    path = make(tmp_path)
    before = fingerprint(path)
    null_before = fingerprint(Path("/dev/null"))
    done = run([*EXPORTS[flag], str(path)])
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert kind in lines[0] and str(path) in lines[0], lines[0]
    assert fingerprint(path) == before
    assert fingerprint(Path("/dev/null")) == null_before
    # nothing left behind in the folder: no temporary file
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


@pytest.mark.parametrize("flag", EXPORTS)
def test_a_regular_file_is_replaced_whole_and_a_new_name_written(tmp_path, flag):
    old = tmp_path / "old.html"
    old.write_text("an older page")
    os.chmod(old, 0o640)
    done = run([*EXPORTS[flag], str(old)])
    assert done.returncode == 0, done.stderr
    assert old.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    assert stat.S_IMODE(old.stat().st_mode) == 0o640
    new = tmp_path / "new.html"
    done = run([*EXPORTS[flag], str(new)])
    assert done.returncode == 0, done.stderr
    assert stat.S_ISREG(new.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.html", "old.html"]
