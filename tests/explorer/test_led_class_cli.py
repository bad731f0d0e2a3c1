"""``candela-explorer --class`` and ``--class-store``: the links printed, the refusals in one line."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request

import pytest

from explorer.testing import ROOT, start_command, stop_command, wait_for_url


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer", "--no-browser", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_class_prints_a_students_link_and_a_secret_teachers_link_that_work():
    proc = start_command(["--port", "0", "--ready", "0", "--class"])
    try:
        lines = "".join(wait_for_url(proc, until="  teacher's link"))
        found = re.search(r"Class ([A-Z2-9]{4}): students open (http://\S+/\?class=\1) ", lines)
        assert found, lines
        code, students = found.groups()
        teacher = re.search(r"teacher's link, keep it secret: (http://\S+)", lines).group(1)
        assert teacher.startswith(students + "&teach=")
        token = teacher.split("teach=", 1)[1]
        assert len(token) >= 32 and code not in token
        for url in (students, teacher):
            with urllib.request.urlopen(url, timeout=60) as response:
                assert response.status == 200
    finally:
        out = stop_command(proc)
    assert "Traceback" not in out


def test_a_class_in_one_process_refuses_several_and_a_bad_store_is_named():
    several = run("--class", "--num-procs", "2")
    assert several.returncode == 2
    assert "--class-store redis://" in several.stderr and len(several.stderr.splitlines()) == 1
    bad = run("--class-store", "mongodb://x")
    assert bad.returncode == 2
    assert "'mongodb://x' is not memory or a redis://" in bad.stderr
    assert "Traceback" not in several.stderr + bad.stderr


def test_a_redis_out_of_reach_stops_the_class_in_one_line():
    pytest.importorskip("redis")
    from explorer.testing import free_port

    gone = run("--class", "--class-store", f"redis://127.0.0.1:{free_port()}/0")
    assert gone.returncode == 2
    assert gone.stderr.startswith("candela-explorer: cannot start the class in Redis at redis://")
    assert len(gone.stderr.strip().splitlines()) == 1 and "Traceback" not in gone.stderr
