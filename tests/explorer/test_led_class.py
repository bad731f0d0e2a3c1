"""A led class, page by page, without a browser: who gets the teacher's controls, who follows.

Pages here are explorers that opened a URL (as a served page does) in one
process and one store; the browser tests (test_led_class_browser.py) do the same
through Chromium.
"""

from __future__ import annotations

import pytest

from explorer import class_store as cs
from explorer.app import Explorer
from explorer.led_class import attach
from explorer.url import Location


@pytest.fixture
def store(monkeypatch):
    found = cs.MemoryStore()
    monkeypatch.setattr(cs, "_CURRENT", found)
    return found


def page(search: str):
    ex = Explorer()
    ex.open_url(location=Location(search=search))
    led = attach(ex, search)
    return ex, led


def teacher_of(store, lesson="transpose"):
    code, token = store.create()
    ex, led = page(f"?class={code}&teach={token}&lesson={lesson}")
    assert led.teacher
    return code, token, ex, led


def has_teacher_controls(led) -> bool:
    return any("candela-class-teacher" in p.css_classes for p in led.panel.objects)


def test_only_the_teachers_secret_gives_the_teachers_controls(store):
    code, token, ex, led = teacher_of(store)
    assert has_teacher_controls(led)
    assert f"teach={token}" in ex.url.location.search
    other_code, other_token = store.create()
    student_ex, student = page(f"?class={code}")
    for wrong in (code, student.student, other_token, token[:-1], token.lower(), ""):
        if wrong == token:
            continue
        ex2, led2 = page(f"?class={code}&teach={wrong}&me={student.student}")
        assert not led2.teacher and not has_teacher_controls(led2), wrong
        assert led2.student == student.student  # the same student, still following
        assert "teach=" not in ex2.url.location.search
        assert "not the teacher's link" in led2.message.object
    # ... nor does the token of another class
    _, led3 = page(f"?class={other_code}&teach={token}")
    assert not led3.teacher


@pytest.mark.parametrize(
    "query, says",
    [
        ("?class=K0QF", "not a class code"),
        ("?class=%3Cb%3Ehi", "not a class code"),
        ("?class=", "not a class code"),
        ("?class=" + "A" * 5000, "not a class code"),
    ],
)
def test_a_bad_class_code_draws_the_page_with_a_message(store, query, says):
    ex, led = page(query)
    assert says in led.message.object and led.message.visible
    assert "<b>" not in led.message.object  # escaped
    assert ex.__panel__() is not None and ex.error is None


def test_an_unknown_class_says_so(store):
    ex, led = page("?class=ZZZZ&lesson=slicing")
    assert "no class ZZZZ" in led.message.object
    assert ex.lesson == "slicing"  # the rest of the link still works


def test_students_follow_late_joiners_land_and_a_student_may_step_away(store):
    code, _, teacher, led = teacher_of(store)
    a, sa = page(f"?class={code}")
    assert (a.lesson, a.step) == ("transpose", 1)
    teacher.classroom.next()
    assert (a.lesson, a.step) == ("transpose", 2)
    # a late joiner, whatever its own link says, lands on the class's step
    b, sb = page(f"?class={code}&lesson=slicing&step=4")
    assert (b.lesson, b.step) == ("transpose", 2)
    # b steps away; the class goes on without it; rejoin brings it back
    b.classroom.next()
    assert not sb.following and sb.rejoin_button.visible
    teacher.classroom.next()
    teacher.classroom.next()
    assert (a.lesson, a.step) == ("transpose", 4)
    assert (b.lesson, b.step) == ("transpose", 3)
    sb.rejoin()
    assert (b.lesson, b.step) == ("transpose", 4) and sb.following
    assert not sb.rejoin_button.visible
    assert f"me={sb.student}" in b.url.location.search


def test_answers_go_to_the_teacher_and_the_reveal_grades_them(store):
    code, _, teacher, led = teacher_of(store)
    teacher.classroom.next()  # transpose 2: adj_stride[0], -7
    pages = [page(f"?class={code}") for _ in range(4)]
    (a, sa), (b, sb), (c, sc), (d, sd) = pages
    # not open yet: nothing is recorded
    a.classroom.check("-7")
    assert "not opened" in a.classroom.verdict_pane.object
    assert store.answers(code, "transpose", 2) == {}
    led.open_button.clicks += 1
    assert store.status(code, "transpose", 2) == "open"
    a.classroom.check("-7")
    b.classroom.check("4")
    c.classroom.check("4")
    c.classroom.check("-7")  # changed: the latest counts
    b.classroom.check("4 ")  # the same answer twice: once
    assert "is in" in a.classroom.verdict_pane.object and a.classroom.verdict is None
    assert a.concealed  # not graded, nothing revealed
    t = cs.tally(store.answers(code, "transpose", 2), lambda text: text == "-7")
    assert (t.answered, t.right, t.wrong, t.wrong_count) == (3, 2, "4", 1)
    assert 'data-answered="3"' in led.answers_pane.object
    assert "commonest wrong" in led.answers_pane.object and ">4<" in led.answers_pane.object
    # a too long answer is refused with a message, and not counted
    d.classroom.check("7" * 300)
    assert "at most 200" in d.classroom.verdict_pane.object
    assert len(store.answers(code, "transpose", 2)) == 3
    # reveal: right, wrong (then the answer), and one who sent nothing is shown it
    led.reveal_button.clicks += 1
    assert a.classroom.verdict.correct and not a.concealed
    assert "candela-verdict-shown" in b.classroom.verdict_pane.object
    assert "your answer: 4" in b.classroom.verdict_pane.object
    assert d.classroom.verdict.revealed and not d.concealed
    assert not teacher.concealed  # the teacher's page shows it too
    # a late joiner at a revealed step sees the reveal
    e, _ = page(f"?class={code}")
    assert not e.concealed and e.classroom.verdict.revealed


def test_a_student_reconnecting_is_the_same_student(store):
    code, _, teacher, led = teacher_of(store)
    teacher.classroom.next()
    led.open_button.clicks += 1
    a, sa = page(f"?class={code}")
    a.classroom.check("4")
    again, s2 = page(a.url.location.search)  # the page's own URL, on reconnect
    assert s2.student == sa.student
    assert "your answer <b>4</b> is in" in again.classroom.verdict_pane.object
    again.classroom.check("-7")
    assert store.answers(code, "transpose", 2) == {sa.student: ("-7", "")}
    assert store.students(code) == 1


def test_a_name_is_sent_only_when_typed(store):
    code, _, teacher, led = teacher_of(store)
    teacher.classroom.next()
    led.open_button.clicks += 1
    a, sa = page(f"?class={code}")
    b, sb = page(f"?class={code}")
    sa.name_input.value_input = "Ada"
    a.classroom.check("4")
    b.classroom.check("4")
    assert sorted(name for _, name in store.answers(code, "transpose", 2).values()) == ["", "Ada"]
    assert "Ada" in led.answers_pane.object


def test_a_store_out_of_reach_is_said_on_the_page_not_raised(store):
    code, _, teacher, led = teacher_of(store)
    teacher.classroom.next()
    led.open_button.clicks += 1
    a, sa = page(f"?class={code}")

    def down(*args, **kwargs):
        raise ConnectionError("Redis went away")

    sa.store = type("Down", (), {"position": down, "status": down, "answer": down})()
    a.classroom.check("4")
    assert "cannot be reached" in a.classroom.verdict_pane.object
    sa._heard("move")  # a push while the store is down: a message, the page stays
    assert "cannot be reached" in sa.message.object
    assert store.answers(code, "transpose", 2) == {}
