"""The led class's stores: laws of the answers, the tally and the teacher's secret.

Every law runs on each store: the in-process one, and Redis where a
``redis-server`` can be started (tests/explorer/class_redis.py).
"""

from __future__ import annotations

import string
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from explorer import class_store as cs
from explorer.cli import open_store

STUDENTS = [f"{n:016x}" for n in range(1, 9)]
ANSWERS = ["-7", "4", " 4 ", "(4, 3)", "1", "abc", "-7 "]

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(params=["memory", "redis"])
def store(request):
    if request.param == "memory":
        yield cs.MemoryStore()
        return
    from tests.explorer.class_redis import redis_url

    with redis_url() as url:
        found = open_store(url)
        try:
            yield found
        finally:
            found.close()


def opened(store, lesson="transpose", step=2):
    code, token = store.create()
    store.move(code, lesson, step)
    store.set_status(code, lesson, step, "open")
    return code, token


@SETTINGS
@given(sent=hs.lists(hs.tuples(hs.sampled_from(STUDENTS), hs.sampled_from(ANSWERS)), max_size=30))
def test_each_student_counts_once_and_their_latest_answer_wins(store, sent):
    code, _ = opened(store)
    for student, text in sent:
        assert store.answer(code, "transpose", 2, student, text) == "open"
    got = store.answers(code, "transpose", 2)
    assert len(got) == len({student for student, _ in sent})
    latest = {}
    for student, text in sent:
        latest[student] = cs.normal(text)
    assert {s: text for s, (text, _) in got.items()} == latest
    # ... and the tally counts the same students
    t = cs.tally(got, lambda text: text == "-7")
    assert t.answered == len(latest)
    assert sum(n for _, n in t.spread) == len(latest)
    assert t.right == sum(1 for text in latest.values() if text == "-7")


@SETTINGS
@given(
    sent=hs.lists(
        hs.tuples(hs.sampled_from(STUDENTS), hs.sampled_from(ANSWERS)), min_size=1, max_size=30
    ),
    right=hs.sampled_from(["-7", "4", "(4, 3)"]),
)
def test_the_commonest_wrong_answer_is_the_commonest_of_the_wrong_ones(sent, right):
    latest = {}
    for student, text in sent:
        latest.pop(student, None)
        latest[student] = (text, "")
    t = cs.tally(latest, lambda text: text == right)
    counts = Counter(cs.normal(text) for text, _ in latest.values())
    wrong = {text: n for text, n in counts.items() if text != right}
    if not wrong:
        assert t.wrong is None and t.wrong_count == 0
        return
    most = max(wrong.values())
    assert t.wrong_count == most
    tied = [text for text, n in wrong.items() if n == most]
    first = [cs.normal(text) for text, _ in latest.values() if cs.normal(text) in tied][0]
    assert t.wrong == first  # of those tied, the one given first
    assert t.spread == tuple(sorted(t.spread, key=lambda kv: -kv[1]))  # commonest first


def test_names_are_shown_only_where_a_student_typed_one(store):
    code, _ = opened(store)
    store.answer(code, "transpose", 2, STUDENTS[0], "4", "Ada")
    store.answer(code, "transpose", 2, STUDENTS[1], "4")
    t = cs.tally(store.answers(code, "transpose", 2), lambda text: False)
    assert t.names == {"4": ("Ada",)}


@SETTINGS
@given(guess=hs.text(alphabet=string.ascii_letters + string.digits + "-_", max_size=40))
def test_no_student_token_validates_as_the_teacher(store, guess):
    code, token = store.create()
    other_code, other_token = store.create()
    student = cs.new_student()
    store.join(code, student)
    assert store.is_teacher(code, token)
    for wrong in (code, student, other_token, token[:-1], token + "x", token.upper(), "", guess):
        if wrong != token:
            assert not store.is_teacher(code, wrong)
    assert not store.is_teacher(other_code, token)
    assert not store.is_teacher("ZZZZ" if code != "ZZZZ" else "YYYY", token)
    assert not store.is_teacher(code, None)


def test_answers_count_only_while_the_question_is_open(store):
    code, _ = store.create()
    assert store.status(code, "transpose", 2) == "waiting"
    assert store.answer(code, "transpose", 2, STUDENTS[0], "4") == "waiting"
    store.set_status(code, "transpose", 2, "open")
    assert store.answer(code, "transpose", 2, STUDENTS[0], "4") == "open"
    store.set_status(code, "transpose", 2, "closed")
    assert store.answer(code, "transpose", 2, STUDENTS[0], "5") == "closed"
    assert store.answers(code, "transpose", 2) == {STUDENTS[0]: ("4", "")}
    # one question's answers are not another's
    assert store.answers(code, "transpose", 3) == {}


def test_the_teacher_moves_and_subscribers_hear_only_what_they_asked_for(store):
    code, _ = store.create()
    heard, teacher = [], []
    stop = store.subscribe(code, heard.append, ("move", "status"))
    store.subscribe(code, teacher.append, ("answer", "join"))
    store.move(code, "slicing", 3)
    assert store.position(code) == cs.Position("slicing", 3)
    store.set_status(code, "slicing", 3, "open")
    store.join(code, STUDENTS[0])
    store.answer(code, "slicing", 3, STUDENTS[0], "6")
    wait_for(lambda: heard == ["move", "status"] and teacher == ["join", "answer"])
    stop()
    store.move(code, "slicing", 4)
    store.move(code, "slicing", 4)  # no move: nothing to hear
    wait_for(lambda: teacher == ["join", "answer"])
    assert heard == ["move", "status"]
    assert store.students(code) == 1


def wait_for(law, timeout=5.0):
    import time

    deadline = time.monotonic() + timeout
    while not law():
        assert time.monotonic() < deadline, "the store's subscribers did not hear it"
        time.sleep(0.01)


@pytest.mark.parametrize(
    "value, check, named",
    [
        ("K7Q", cs.check_code, "'K7Q'"),
        ("K0QF", cs.check_code, "'K0QF'"),
        ("<script>", cs.check_code, "'<script>'"),
        ("x" * 100, cs.check_code, "'xxxxxxxxxxxxxxxxxxxxxxx…'"),
        (7, cs.check_code, "int"),
        ("ABCDEF0123456789", cs.check_student, "'ABCDEF0123456789'"),
        ("", cs.check_answer, "empty"),
        ("4" * 201, cs.check_answer, "201 characters"),
        ("4\x00", cs.check_answer, "not text"),
        ("n" * 41, cs.check_name, "41 characters"),
    ],
)
def test_bad_values_are_refused_with_a_message_naming_them(value, check, named):
    with pytest.raises(cs.ClassError) as found:
        check(value)
    assert named in str(found.value)


def test_codes_are_read_as_typed_and_unknown_ones_are_said(store):
    code, _ = store.create()
    assert cs.check_code(f" {code.lower()} ") == code
    assert store.exists(code.lower())
    unknown = next(c for c in ("AAAA", "BBBB") if c != code)
    assert not store.exists(unknown)
    with pytest.raises(cs.ClassError, match=f"no class {unknown}"):
        store.position(unknown)
    with pytest.raises(cs.ClassError, match="status 'shown'"):
        store.set_status(code, "transpose", 1, "shown")
