"""Where a led class lives: its code, its teacher's secret, the lesson step it is on, its answers.

A class (``candela-explorer --class``) has a short **code** for the students
(``K7QF``: four of :data:`CODE_ALPHABET`, no ``0``/``O`` or ``1``/``I`` to misread
on a projector) and a long **teacher token** (:func:`secrets.token_urlsafe`), the
secret of the teacher's link. :meth:`MemoryStore.is_teacher` compares a token
with :func:`hmac.compare_digest`; a student's code, or anything else a student
can see, never validates as a teacher's token.

What a store holds per class: where the teacher is (``lesson``, ``step``), each
question's status (``waiting`` until the teacher opens it, ``open``, ``closed``,
``revealed``), each student's latest answer to it (one per student: a new answer
replaces the old), and the students who joined. Pages learn of a change by
subscribing (:meth:`MemoryStore.subscribe`): the store calls them with the kind
of change (``move``, ``status``, ``answer``, ``join``), and a page reads what it
needs from the store (the store's state is what counts, never an event's copy).

Two stores, one interface:

- :class:`MemoryStore`, the default: the class lives in the server's process
  (nothing to install; one process serves the class).
- :class:`explorer.class_redis.RedisStore` (``--class-store redis://HOST:PORT/N``):
  the class and its events go through Redis, so several servers behind one proxy
  serve one class, and a server lost loses no answer.

Every value from a page is checked here (:func:`check_code`, :func:`check_student`,
:func:`check_answer`, :func:`check_name`); a bad one raises :class:`ClassError`
with a message that names it.
"""

from __future__ import annotations

import hmac
import re
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

__all__ = [
    "CODE_ALPHABET",
    "CODE_LENGTH",
    "KINDS",
    "MAX_ANSWER_CHARS",
    "MAX_CLASSES",
    "MAX_NAME_CHARS",
    "STATUSES",
    "ClassError",
    "MemoryStore",
    "Position",
    "Tally",
    "check_code",
    "check_name",
    "check_answer",
    "check_student",
    "class_links",
    "current",
    "normal",
    "set_current",
    "tally",
]

#: The query keys of a led class's pages (explorer.led_class).
CODE_KEY, TEACHER_KEY, STUDENT_KEY = "class", "teach", "me"
#: The letters of a class code: none that reads as another on a projector.
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 4
#: A student id: 16 hex digits, made by the page (kept in its URL, ``me=``).
STUDENT_RE = re.compile(r"[0-9a-f]{16}")
#: The longest answer and name a student may send.
MAX_ANSWER_CHARS = 200
MAX_NAME_CHARS = 40
#: A question's statuses, in the order a class goes through them.
STATUSES = ("waiting", "open", "closed", "revealed")
#: The kinds of change a store tells its subscribers of.
KINDS = ("move", "status", "answer", "join")
#: The most classes started from pages one process keeps in memory at a time (a class
#: started from the page is one request: this bounds what any number of them can make
#: it hold; a class the command line started is not counted).
MAX_CLASSES = 64
#: A class in memory no page has been in for this long (s) is forgotten...
QUIET_S = 2 * 3600.0
#: ... and one no page has ever been in, this long after it was started (a class
#: started and never opened).
UNOPENED_S = 600.0


def class_links(base: str, code: str, token: str) -> tuple[str, str]:
    """The students' link and the teacher's (secret) link of class ``code`` at ``base``."""
    base = base if base.endswith("/") else base + "/"
    return f"{base}?{CODE_KEY}={code}", f"{base}?{CODE_KEY}={code}&{TEACHER_KEY}={quote(token)}"


class ClassError(ValueError):
    """A value a page sent that a class cannot take; the message names it."""


def _shown(text: object, limit: int = 24) -> str:
    text = str(text)
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def check_code(text: object) -> str:
    """A class code as typed or linked (any case, spaces around), or :class:`ClassError`."""
    if not isinstance(text, str):
        raise ClassError(f"a class code is text, not {type(text).__name__}")
    code = text.strip().upper()
    if len(code) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in code):
        raise ClassError(
            f"class code {_shown(text)} is not a class code: {CODE_LENGTH} letters and digits "
            f"such as K7QF (no 0, O, 1 or I); check the link the teacher shows"
        )
    return code


def check_student(text: object) -> str:
    """A student id (16 hex digits), or :class:`ClassError`."""
    if not isinstance(text, str) or not STUDENT_RE.fullmatch(text):
        raise ClassError(f"student id {_shown(text)} is not 16 hex digits")
    return text


def check_answer(text: object) -> str:
    """An answer as sent: one line of at most :data:`MAX_ANSWER_CHARS`, spaces squeezed."""
    if not isinstance(text, str):
        raise ClassError(f"an answer is text, not {type(text).__name__}")
    answer = normal(text)
    if not answer:
        raise ClassError("the answer is empty: type it, then press Enter")
    if len(answer) > MAX_ANSWER_CHARS:
        raise ClassError(
            f"the answer is {len(answer):,} characters; at most {MAX_ANSWER_CHARS} are sent"
        )
    if not answer.isprintable():
        raise ClassError(f"the answer {_shown(answer)} holds characters that are not text")
    return answer


def check_name(text: object) -> str:
    """A name a student chose to give ('' for none): at most :data:`MAX_NAME_CHARS`."""
    if text is None:
        return ""
    if not isinstance(text, str):
        raise ClassError(f"a name is text, not {type(text).__name__}")
    name = normal(text)
    if len(name) > MAX_NAME_CHARS:
        raise ClassError(f"the name is {len(name)} characters; at most {MAX_NAME_CHARS}")
    if not name.isprintable():
        raise ClassError(f"the name {_shown(name)} holds characters that are not text")
    return name


def normal(text: str) -> str:
    """An answer as it is counted: surrounding space dropped, inner runs of space made one."""
    return " ".join(text.split())


def is_teacher_token(secret: str | None, token: object) -> bool:
    """Whether ``token`` (as sent) is the class's teacher ``secret``: a non-empty string of
    at most 200 characters, compared in constant time."""
    if not secret or not isinstance(token, str) or not token or len(token) > 200:
        return False
    return hmac.compare_digest(secret.encode(), token.encode("utf-8", "replace"))


def new_student() -> str:
    """A fresh student id: random, so it says nothing of who the student is."""
    return secrets.token_hex(8)


@dataclass(frozen=True)
class Position:
    """Where the teacher is: a lesson id (``""`` for none) and its step (from 1)."""

    lesson: str = ""
    step: int = 1


@dataclass(frozen=True)
class Tally:
    """What a teacher sees of a question's answers.

    ``answered``: students with an answer (each counted once, their latest);
    ``spread``: each distinct answer and how many gave it, commonest first;
    ``right``: how many are right; ``wrong``: the commonest wrong answer (the first
    given of those tied) or ``None``, and ``wrong_count`` how many gave it;
    ``names``: for each answer, the names students typed (none unless they did).
    """

    answered: int = 0
    spread: tuple[tuple[str, int], ...] = ()
    right: int = 0
    wrong: str | None = None
    wrong_count: int = 0
    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def tally(
    answers: Mapping[str, tuple[str, str]] | Iterable[tuple[str, tuple[str, str]]],
    is_right: Callable[[str], bool],
) -> Tally:
    """Count ``answers`` (student -> (answer, name), in the order given) with ``is_right``.

    ``is_right`` is asked once per distinct answer.
    """
    items = list(answers.items() if isinstance(answers, Mapping) else answers)
    counts = Counter(normal(text) for _, (text, _) in items)
    order = {}
    for _, (text, _) in items:
        order.setdefault(normal(text), len(order))
    verdicts = {text: bool(is_right(text)) for text in counts}
    spread = tuple(sorted(counts.items(), key=lambda kv: (-kv[1], order[kv[0]])))
    wrong = next(((text, n) for text, n in spread if not verdicts[text]), (None, 0))
    names: dict[str, list[str]] = {}
    for _, (text, name) in items:
        if name:
            names.setdefault(normal(text), []).append(name)
    return Tally(
        answered=len(items),
        spread=spread,
        right=sum(n for text, n in counts.items() if verdicts[text]),
        wrong=wrong[0],
        wrong_count=wrong[1],
        names={k: tuple(v) for k, v in names.items()},
    )


def question_key(lesson: str, step: int) -> str:
    """How a store names one question of a class: ``lesson#step``."""
    return f"{lesson}#{int(step)}"


class UnknownClass(ClassError):
    """A well-formed code no class has (here)."""

    def __init__(self, code: str) -> None:
        super().__init__(
            f"there is no class {code} on this server (it may have ended, or the code is "
            "mistyped); ask the teacher for the link"
        )
        self.code = code


class _Class:
    def __init__(self, token: str, now: float, lasting: bool) -> None:
        self.token = token
        #: Started by the command line: kept as long as the process, quiet or not.
        self.lasting = lasting
        #: Since when no page has been in the class (None while one is); whether one was.
        self.quiet_since: float | None = now
        self.opened = False
        self.position = Position()
        self.status: dict[str, str] = {}
        self.answers: dict[str, dict[str, tuple[str, str]]] = {}
        self.students: set[str] = set()


class MemoryStore:
    """Classes in this process: the default, for a class one server serves.

    Thread-safe (a test's thread and the server's loop may both use it);
    subscribers are called in the thread that made the change, after the change,
    outside the store's lock.

    It holds at most :data:`MAX_CLASSES` classes started from pages: one that no page
    has been in for :data:`QUIET_S` (:data:`UNOPENED_S` for one no page ever opened) is
    forgotten, and past that bound :meth:`create` refuses, saying so.
    """

    #: Why a page may not start a class here, or None (it may): set by the command
    #: line where each of several processes would hold classes of its own.
    closed_to_pages: str | None = None

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.RLock()
        self._classes: dict[str, _Class] = {}
        self._subscribers: dict[str, dict[int, tuple[frozenset, Callable[[str], None]]]] = {}
        self._next = 0
        self._clock = clock

    description = "in this server's process"

    # ------------------------------------------------------------------ classes

    def create(self, lasting: bool = True) -> tuple[str, str]:
        """A new class: ``(code, teacher_token)``. One started from a page is not
        ``lasting``: it is forgotten once quiet, and refused (:class:`ClassError`) while
        this process holds :data:`MAX_CLASSES` such classes (see the class)."""
        with self._lock:
            self._forget_quiet()
            if not lasting and self._from_pages() >= MAX_CLASSES:
                raise ClassError(
                    f"this server holds {MAX_CLASSES} classes, the most it keeps: one is "
                    f"forgotten once no page has been in it for {QUIET_S / 3600:.0f} hours "
                    "(ask the server's operator, or try again later)"
                )
            while True:
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
                if code not in self._classes:
                    break
            token = secrets.token_urlsafe(24)
            self._classes[code] = _Class(token, self._clock(), lasting)
            return code, token

    def held(self) -> int:
        """How many classes this process holds (those gone quiet forgotten first): while
        one is, the process is not replaced by a fresh one (explorer.recycling)."""
        with self._lock:
            self._forget_quiet()
            return len(self._classes)

    def _from_pages(self) -> int:
        return sum(1 for room in self._classes.values() if not room.lasting)

    def _forget_quiet(self) -> None:
        now = self._clock()
        for code, room in list(self._classes.items()):
            since = room.quiet_since
            if room.lasting or since is None:
                continue
            if now - since >= (QUIET_S if room.opened else UNOPENED_S):
                del self._classes[code]
                self._subscribers.pop(code, None)

    def _get(self, code: str) -> _Class:
        code = check_code(code)
        found = self._classes.get(code)
        if found is None:
            raise UnknownClass(code)
        return found

    def exists(self, code: str) -> bool:
        try:
            with self._lock:
                self._get(code)
        except ClassError:
            return False
        return True

    def is_teacher(self, code: str, token: object) -> bool:
        """True only for the class's own teacher token (compared in constant time)."""
        try:
            with self._lock:
                secret = self._get(code).token
        except ClassError:
            return False
        return is_teacher_token(secret, token)

    # ------------------------------------------------------------------ the lesson step

    def position(self, code: str) -> Position:
        with self._lock:
            return self._get(code).position

    def move(self, code: str, lesson: str, step: int) -> Position:
        """The teacher is at ``lesson``'s ``step``: every subscriber hears ``move``."""
        position = Position(str(lesson), int(step))
        with self._lock:
            room = self._get(code)
            changed = room.position != position
            room.position = position
        if changed:
            self._tell(code, "move")
        return position

    # ------------------------------------------------------------------ questions

    def status(self, code: str, lesson: str, step: int) -> str:
        with self._lock:
            return self._get(code).status.get(question_key(lesson, step), "waiting")

    def set_status(self, code: str, lesson: str, step: int, status: str) -> None:
        if status not in STATUSES:
            raise ClassError(f"status {_shown(status)} is not one of {', '.join(STATUSES)}")
        with self._lock:
            self._get(code).status[question_key(lesson, step)] = status
        self._tell(code, "status")

    def answer(
        self, code: str, lesson: str, step: int, student: str, text: str, name: str = ""
    ) -> str:
        """Record ``student``'s answer if the question is open; return its status.

        A student's new answer replaces their last one (and moves it last).
        """
        student, text, name = check_student(student), check_answer(text), check_name(name)
        key = question_key(lesson, step)
        with self._lock:
            room = self._get(code)
            status = room.status.get(key, "waiting")
            if status == "open":
                given = room.answers.setdefault(key, {})
                given.pop(student, None)
                given[student] = (text, name)
        if status == "open":
            self._tell(code, "answer")
        return status

    def answers(self, code: str, lesson: str, step: int) -> dict[str, tuple[str, str]]:
        """Each student's latest answer, ``student -> (answer, name)``, oldest first."""
        with self._lock:
            return dict(self._get(code).answers.get(question_key(lesson, step), {}))

    def answer_of(self, code: str, lesson: str, step: int, student: str) -> str | None:
        with self._lock:
            found = self._get(code).answers.get(question_key(lesson, step), {}).get(student)
        return found[0] if found else None

    # ------------------------------------------------------------------ students

    def join(self, code: str, student: str) -> None:
        student = check_student(student)
        with self._lock:
            room = self._get(code)
            new = student not in room.students
            room.students.add(student)
        if new:
            self._tell(code, "join")

    def students(self, code: str) -> int:
        with self._lock:
            return len(self._get(code).students)

    # ------------------------------------------------------------------ events

    def subscribe(
        self, code: str, callback: Callable[[str], None], kinds: Iterable[str] = KINDS
    ) -> Callable[[], None]:
        """Call ``callback(kind)`` on each change of class ``code`` of one of ``kinds``;
        returns the function that stops it."""
        code = check_code(code)
        with self._lock:
            self._next += 1
            handle = self._next
            self._subscribers.setdefault(code, {})[handle] = (frozenset(kinds), callback)
            room = self._classes.get(code)
            if room is not None:
                room.quiet_since, room.opened = None, True

        def stop() -> None:
            with self._lock:
                left = self._subscribers.get(code, {})
                left.pop(handle, None)
                room = self._classes.get(code)
                if room is not None and not left and room.quiet_since is None:
                    room.quiet_since = self._clock()

        return stop

    def subscribers(self, code: str) -> int:
        with self._lock:
            return len(self._subscribers.get(check_code(code), {}))

    def _tell(self, code: str, kind: str) -> None:
        with self._lock:
            listeners = [
                cb for kinds, cb in self._subscribers.get(code, {}).values() if kind in kinds
            ]
        for callback in listeners:
            try:
                callback(kind)
            except Exception:  # one page's failure must not keep the others from hearing
                import logging

                logging.getLogger("candela-explorer").warning(
                    "a class page failed to hear %s", kind, exc_info=False
                )

    def close(self) -> None:
        """Nothing to release (a Redis store closes its connections)."""


# --------------------------------------------------------------------------- the process's store

_CURRENT: MemoryStore | None = None


def current():
    """The store this process's pages use (a :class:`MemoryStore` unless one was set)."""
    global _CURRENT
    if _CURRENT is None:
        _CURRENT = MemoryStore()
    return _CURRENT


def set_current(store) -> None:
    """Make ``store`` the one this process's pages use (the command line, a test)."""
    global _CURRENT
    _CURRENT = store
