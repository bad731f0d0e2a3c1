"""A led class in Debian's Chromium: a teacher's page and students' pages on one server.

The teacher steps, the students' pages follow; students answer, the teacher sees
the count and the spread; the reveal reaches every page; a student steps away and
rejoins; a late joiner lands on the current step; a student who edits their URL
gets no teacher's controls. Waits on the page's state, never on time.
"""

from __future__ import annotations

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import expect

from explorer import class_store as cs
from explorer.testing import open_served

pytestmark = pytest.mark.browser

WAIT = 20_000  # ms: a shared 2-core machine with other browsers on it


def step_of(page):
    return page.locator(".candela-lesson-step")


def answer(page, text: str) -> None:
    box = page.locator(".candela-answer input")
    box.fill(text)
    box.press("Enter")


def test_a_class_led_through_a_lesson(context, explorer_server):
    store = cs.current()
    code, token = store.create()
    teacher = context.new_page()
    open_served(teacher, f"{explorer_server}?class={code}&teach={token}&lesson=transpose")
    expect(teacher.locator(".candela-class-teacher")).to_have_count(1, timeout=WAIT)
    expect(teacher.locator(".candela-class-links")).to_contain_text(f"?class={code}")
    students = []
    for _ in range(3):
        page = context.new_page()
        open_served(page, f"{explorer_server}?class={code}")
        students.append(page)
    for page in students:
        expect(step_of(page)).to_have_text("step 1 of 5", timeout=WAIT)
        expect(page.locator(".candela-class-follow")).to_contain_text("following the teacher")
        expect(page.locator(".candela-class-teacher")).to_have_count(0)
        # the page keeps the class and its own student id in its URL
        page.wait_for_function(
            f"() => location.search.includes('class={code}') && /me=[0-9a-f]{{16}}/.test(location.search)"
        )
    expect(teacher.locator(".candela-class-status")).to_contain_text("3 students joined")

    # The teacher steps: every student's page follows.
    teacher.locator(".candela-next button").click()
    for page in students:
        expect(step_of(page)).to_have_text("step 2 of 5", timeout=WAIT)
        expect(page.locator(".candela-question")).to_contain_text("adj_stride[0]")

    # The teacher opens the question; the students answer; the teacher sees it.
    teacher.locator(".candela-class-open button").click()
    expect(teacher.locator(".candela-class-status")).to_contain_text("question open")
    for page, text in zip(students, ["-7", "4", "4"]):
        answer(page, text)
        expect(page.locator(".candela-class-sent")).to_contain_text(f"your answer {text} is in")
    expect(teacher.locator(".candela-class-answered")).to_have_text("3", timeout=WAIT)
    expect(teacher.locator(".candela-class-wrong")).to_have_text("4")
    # The teacher's panel, answers and all, fits a laptop's screen: nothing sideways.
    teacher.set_viewport_size({"width": 1280, "height": 800})
    for button in ("open", "close", "reveal"):
        box = teacher.locator(f".candela-class-{button} button").bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1280, (button, box)
    assert teacher.evaluate("document.documentElement.scrollWidth") <= 1280
    answer(students[2], "-7")  # a student changes their mind: still three answers
    expect(teacher.locator(".candela-class-tally")).to_have_attribute("data-right", "2")
    expect(teacher.locator(".candela-class-answered")).to_have_text("3")
    # nothing was graded on a student's page before the reveal
    for page in students:
        expect(page.locator(".candela-verdict-right, .candela-verdict-wrong")).to_have_count(0)

    # Reveal: each page grades its own answer.
    teacher.locator(".candela-class-reveal button").click()
    expect(students[0].locator(".candela-verdict-right")).to_contain_text("-7", timeout=WAIT)
    expect(students[1].locator(".candela-class-yours")).to_contain_text("your answer: 4")
    expect(students[1].locator(".candela-verdict-shown")).to_contain_text("-7")
    expect(students[2].locator(".candela-verdict-right")).to_have_count(1)

    # A student steps away with their own ◀; the class goes on; rejoin brings them back.
    away = students[1]
    away.locator(".candela-prev button").click()
    expect(step_of(away)).to_have_text("step 1 of 5", timeout=WAIT)
    expect(away.locator(".candela-class-rejoin button")).to_be_visible()
    teacher.locator(".candela-next button").click()
    expect(step_of(students[0])).to_have_text("step 3 of 5", timeout=WAIT)
    expect(step_of(away)).to_have_text("step 1 of 5")
    away.locator(".candela-class-rejoin button").click()
    expect(step_of(away)).to_have_text("step 3 of 5", timeout=WAIT)
    expect(away.locator(".candela-class-rejoin button")).to_be_hidden()

    # A late joiner lands on the current step.
    late = context.new_page()
    open_served(late, f"{explorer_server}?class={code}")
    expect(step_of(late)).to_have_text("step 3 of 5", timeout=WAIT)

    # A student who edits their URL into a teacher's gets no teacher's controls.
    search = away.evaluate("location.search")
    me = search.split("me=")[1][:16]
    for guess in (code, me, token[:-1] + ("A" if token[-1] != "A" else "B")):
        away.goto(f"{explorer_server}?class={code}&me={me}&teach={guess}")
        away.locator(".candela-class-message").wait_for(timeout=WAIT)
        expect(away.locator(".candela-class-message")).to_contain_text("not the teacher's link")
        expect(away.locator(".candela-class-follow")).to_have_count(1)
        expect(away.locator(".candela-class-teacher")).to_have_count(0)
        expect(away.locator(".candela-class-open")).to_have_count(0)
        expect(step_of(away)).to_have_text("step 3 of 5", timeout=WAIT)


def test_a_bad_class_code_draws_the_page_with_a_message(page, explorer_server):
    open_served(page, f"{explorer_server}?class=%3Cimg%20src%3Dx%3E&lesson=slicing")
    expect(page.locator(".candela-class-message")).to_contain_text("is not a class code")
    expect(page.locator(".candela-lesson-step")).to_contain_text("step 1 of")
    assert page.locator("img[src=x]").count() == 0
    open_served(page, f"{explorer_server}?class=QQQQ")
    expect(page.locator(".candela-class-message")).to_contain_text("no class QQQQ")
    expect(page.locator(".candela-shape")).to_have_count(1)
