"""A script run in a fresh Python process, as a new kernel or a new command runs it: what
is imported, patched or cached there starts from nothing, and the environment's
``CANDELA_PLAIN`` is the one given (none: every patch checked against the installed
releases on). The script prints its result as JSON on its last line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(script: str, *args: str, plain: str = "", timeout: float = 300) -> dict:
    """Run ``script`` (with ``args``) in a fresh process in the project's folder, patches
    off where ``plain``: the JSON its last line prints. Its error output if it fails."""
    env = {k: v for k, v in os.environ.items() if k != "CANDELA_PLAIN"}
    if plain:
        env["CANDELA_PLAIN"] = plain
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
