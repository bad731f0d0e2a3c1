"""Every page of the explorer tells a phone to lay it out at the phone's own width."""

from __future__ import annotations

import re

from explorer.app import Explorer
from explorer.lesson_page import export_lesson_html
from explorer.testing import http_get, served_app

VIEWPORT = re.compile(
    r'<meta name="viewport" content="width=device-width, initial-scale=1">.*</head>', re.S
)


def test_the_served_page_has_a_device_width_viewport():
    with served_app() as url:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        for _ in range(3):  # built ahead (the pool) and built at the request alike
            status, body = http_get(port, "/?shape=3,4")
            assert status == 200
            page = body.decode()
            assert VIEWPORT.search(page) and page.count('name="viewport"') == 1
            assert 'rel="icon"' in page  # Panel's page as before, with one line more


def test_the_offline_and_lesson_pages_have_a_device_width_viewport(tmp_path):
    page = Explorer(shape=(3, 4)).save_html(tmp_path / "page.html").read_text()
    assert VIEWPORT.search(page) and page.count('name="viewport"') == 1
    lesson = export_lesson_html("transpose")
    assert VIEWPORT.search(lesson) and lesson.count('name="viewport"') == 1
