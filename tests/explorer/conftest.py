"""Fixtures for the explorer's tests: the app served in-process and Debian's Chromium.

Browser tests (marked ``browser``) drive ``/usr/bin/chromium`` through
pytest-playwright. Under ``CI=true`` a missing browser fails the run; locally
those tests skip with the reason.

A test of what a patch buys (marked ``patched("name", ...)``, see
:mod:`explorer.patches`) skips, with the reason, where that patch is off: under
``CANDELA_PLAIN=1`` (``tests/run`` runs the browser tests a second time so) or on
a release it was not checked against.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil

import pytest

from explorer.testing import CHROMIUM, CHROMIUM_ARGS, open_served, served_app

IN_CI = os.environ.get("CI", "").lower() == "true"


def pytest_runtest_setup(item: pytest.Item) -> None:
    from explorer.patches import get, skip_reason

    for marker in item.iter_markers("patched"):
        for name in marker.args:
            reason = skip_reason(get(name))
            if reason is not None:
                pytest.skip(f"tests what the patch {name} does, which is off here: {reason}")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if not path:
        message = f"Debian's Chromium is not at {CHROMIUM}: apt-get install chromium"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, chromium_path):
    # pytest-playwright has no option for the executable; Playwright's own browser
    # cannot be downloaded here.
    return {**browser_type_launch_args, "executable_path": chromium_path, "args": CHROMIUM_ARGS}


#: How to stop the shared server early (see :func:`pytest_runtest_teardown`).
_SERVER_STOPS: list = []


@pytest.fixture(scope="session")
def explorer_server():
    """The app served in-process on a free port; yields its base URL.

    Stopped right after the last test that uses it: while it runs, its thread
    destroys closed sessions and builds pages ahead, and Bokeh's ``curdoc()`` is one
    for every thread of the process, so a test after the browser tests that builds
    an explorer with no server would, now and then, find itself in one of its pages.
    """
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(served_app())
        _SERVER_STOPS.append(stack.close)
        yield url
    _SERVER_STOPS.clear()


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if _SERVER_STOPS and item is _last_server_user(item.session):
        _SERVER_STOPS.pop()()


@functools.cache
def _last_server_user(session: pytest.Session) -> pytest.Item | None:
    users = [i for i in session.items if "explorer_server" in getattr(i, "fixturenames", ())]
    return users[-1] if users else None


@pytest.fixture
def open_explorer(page, explorer_server):
    """Open the app at a query string and wait until its fields and models are on the page."""

    def open_(query: str = ""):
        # Drawn, and the page has said how much room its figures have: sized to it.
        open_served(page, explorer_server + query)
        page.locator(".candela-shape").wait_for()
        return page

    return open_
