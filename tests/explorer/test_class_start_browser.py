"""A led class started from the page, in Debian's Chromium: the button, the teacher's page, a student.

A teacher on a lesson's step presses "lead a class" and lands on the teacher's page
of a new class on that step, with the students' link and code; a student opening
that link follows, and has no such button; where the server cannot keep a class
for its pages, no page offers one. Waits on the page's state, never on time.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from explorer import class_store as cs
from explorer.testing import open_served, served_app

pytestmark = pytest.mark.browser

WAIT = 20_000  # ms: a shared 2-core machine with other browsers on it
BUTTON = "form.candela-class-start button"


def test_a_teacher_starts_a_class_from_a_lessons_page_and_a_student_follows_it(
    context, explorer_server
):
    teacher = context.new_page()
    errors: list[str] = []
    teacher.on("pageerror", lambda e: errors.append(str(e)))
    open_served(teacher, f"{explorer_server}?lesson=transpose&step=2")
    expect(teacher.locator(BUTTON)).to_be_visible(timeout=WAIT)
    held = cs.current().held()
    teacher.locator(BUTTON).click()
    teacher.wait_for_url(re.compile(r"teach="), timeout=WAIT)
    expect(teacher.locator(".candela-class-teacher")).to_have_count(1, timeout=WAIT)
    assert cs.current().held() == held + 1
    code = re.search(r"class=([A-Z2-9]{4})", teacher.url).group(1)
    expect(teacher.locator(".candela-class-links")).to_contain_text(f"?class={code}")
    # the class starts where the page was, and the teacher's page offers no second class
    expect(teacher.locator(".candela-lesson-step")).to_have_text("step 2 of 5")
    expect(teacher.locator(BUTTON)).to_have_count(0)

    student = context.new_page()
    open_served(student, f"{explorer_server}?class={code}")
    expect(student.locator(".candela-lesson-step")).to_have_text("step 2 of 5", timeout=WAIT)
    expect(student.locator(".candela-class-follow")).to_contain_text("following the teacher")
    expect(student.locator(BUTTON)).to_have_count(0)
    teacher.locator(".candela-next button").click()
    expect(student.locator(".candela-lesson-step")).to_have_text("step 3 of 5", timeout=WAIT)
    assert errors == []


def test_no_page_offers_a_class_where_the_server_cannot_keep_one(page, monkeypatch):
    store = cs.MemoryStore()
    store.closed_to_pages = "several processes"  # as the command line sets it, before serving
    monkeypatch.setattr(cs, "_CURRENT", store)
    with served_app(ready=1) as url:  # a page built ahead too
        open_served(page, f"{url}?lesson=transpose&step=2")
        expect(page.locator(".candela-lesson-help")).to_contain_text("Lessons open from a link")
        expect(page.locator(BUTTON)).to_have_count(0)
