"""A redis-server of the test's own, on a free port (Debian's ``redis-server``).

Never the system's: each use starts one with no persistence and stops it after.
Under ``CI=true`` a missing ``redis-server`` or ``redis`` package fails the test;
locally the test skips with the reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest

from explorer.testing import free_port

IN_CI = os.environ.get("CI", "").lower() == "true"


def _missing(reason: str):
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


def redis_server_path() -> str:
    path = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None
    )
    if path is None:
        _missing("Debian's redis-server is missing: apt-get install redis-server")
    try:
        import redis  # noqa: F401
    except ImportError:
        _missing("the redis package is missing: pip install -e '.[test]'")
    return path


@contextlib.contextmanager
def redis_process(port: int | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """A fresh redis-server on ``port`` (a free one by default): ``(url, process)``."""
    path = redis_server_path()
    port = port or free_port()
    proc = subprocess.Popen(
        [path, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import redis

    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while True:
        try:
            redis.Redis.from_url(url).ping()
            break
        except redis.ConnectionError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.05)
    try:
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def redis_url() -> Iterator[str]:
    with redis_process() as (url, _):
        yield url
