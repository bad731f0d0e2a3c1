"""A led class kept in Redis (``--class-store redis://HOST:PORT/N``): several servers, one class.

The same interface as :class:`explorer.class_store.MemoryStore`, with everything
in Redis: a server that is lost loses no answer, and a student who reconnects to
another server (behind a proxy) is the same student there, with their answers.

Keys, for class ``CODE`` (all under ``candela:class:CODE``):

- ``…`` (a hash): ``token`` (the teacher's secret), ``lesson``, ``step``;
- ``…:status`` (a hash): question ``lesson#step`` -> its status;
- ``…:answers:lesson#step`` (a hash): student -> ``[answer, name, order]`` (JSON);
  ``order`` from ``…:seq`` (INCR), so the latest answer is a student's only one
  and the tally sees answers in the order given;
- ``…:students`` (a set): the students who joined;
- ``…:events``, the pub/sub channel: each change's kind (``move``, ``status``,
  ``answer``, ``join``).

Every key of a class expires :data:`CLASS_TTL_S` after its last change (a class
is over in a day). One thread per process listens to the channels its pages
subscribed to and calls them; it reconnects (with a back-off) when Redis goes
away, and each page reads the store afresh when it hears anything, so an event
missed during a reconnect is caught up by the next one. The ``redis`` package
(an optional extra, ``pip install 'candela-explorer[class]'``) speaks the protocol,
pools the connections and reconnects.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable

import redis

from .class_store import (
    CODE_ALPHABET,
    CODE_LENGTH,
    KINDS,
    STATUSES,
    ClassError,
    Position,
    UnknownClass,
    _shown,
    check_answer,
    check_code,
    check_name,
    check_student,
    is_teacher_token,
    question_key,
)

log = logging.getLogger("candela-explorer")

#: How long a class's keys live after its last change.
CLASS_TTL_S = 24 * 3600
PREFIX = "candela:class:"

# Record an answer only while its question is open, atomically: KEYS status, answers,
# seq; ARGV question, student, answer, name, ttl. Returns the question's status.
_ANSWER = """
local status = redis.call('HGET', KEYS[1], ARGV[1]) or 'waiting'
if status == 'open' then
  local n = redis.call('INCR', KEYS[3])
  redis.call('HSET', KEYS[2], ARGV[2], cjson.encode({ARGV[3], ARGV[4], n}))
  redis.call('EXPIRE', KEYS[2], ARGV[5])
  redis.call('EXPIRE', KEYS[3], ARGV[5])
end
return status
"""


class RedisStore:
    """Classes in Redis at ``url`` (``redis://HOST:PORT/N``)."""

    def __init__(self, url: str) -> None:
        try:
            self.r = redis.Redis.from_url(
                url, decode_responses=True, socket_timeout=5, socket_connect_timeout=5,
                health_check_interval=30, retry_on_timeout=True,
            )  # fmt: skip
        except ValueError as exc:
            raise ClassError(f"class store {_shown(url, 60)}: {exc}") from exc
        self.url = url
        self.description = f"Redis at {url}"
        self._answer = self.r.register_script(_ANSWER)
        self._lock = threading.Lock()
        self._subscribers: dict[str, dict[int, tuple[frozenset, Callable[[str], None]]]] = {}
        self._next = 0
        self._listener: threading.Thread | None = None
        self._pid = None
        self._stopping = False
        self._known: set[str] = set()

    #: Every process reaches the same classes: a page may start one (explorer.class_start).
    closed_to_pages: str | None = None

    # ------------------------------------------------------------------ classes

    def held(self) -> int:
        """Classes this process holds that a fresh one would lose: none (Redis keeps them)."""
        return 0

    def _key(self, code: str, *rest: str) -> str:
        return ":".join([PREFIX + code, *rest])

    def create(self, lasting: bool = True) -> tuple[str, str]:
        """A new class (Redis forgets every class a day after its last change)."""
        token = secrets.token_urlsafe(24)
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if self.r.hsetnx(self._key(code), "token", token):
                break
        pipe = self.r.pipeline()
        pipe.hset(self._key(code), mapping={"lesson": "", "step": 1})
        pipe.expire(self._key(code), CLASS_TTL_S)
        pipe.execute()
        return code, token

    def _check(self, code: str) -> str:
        code = check_code(code)
        if code in self._known:
            return code
        if not self.r.exists(self._key(code)):
            raise UnknownClass(code)
        self._known.add(code)
        return code

    def exists(self, code: str) -> bool:
        try:
            self._check(code)
        except ClassError:
            return False
        return True

    def is_teacher(self, code: str, token: object) -> bool:
        try:
            secret = self.r.hget(self._key(check_code(code)), "token")
        except ClassError:
            return False
        return is_teacher_token(secret, token)

    def _touch(self, pipe, code: str) -> None:
        for key in (self._key(code), self._key(code, "status"), self._key(code, "students")):
            pipe.expire(key, CLASS_TTL_S)

    # ------------------------------------------------------------------ the lesson step

    def position(self, code: str) -> Position:
        lesson, step = self.r.hmget(self._key(self._check(code)), "lesson", "step")
        return Position(lesson or "", int(step or 1))

    def move(self, code: str, lesson: str, step: int) -> Position:
        code = self._check(code)
        position = Position(str(lesson), int(step))
        if self.position(code) == position:
            return position
        pipe = self.r.pipeline()
        pipe.hset(self._key(code), mapping={"lesson": position.lesson, "step": position.step})
        self._touch(pipe, code)
        pipe.publish(self._key(code, "events"), "move")
        pipe.execute()
        return position

    # ------------------------------------------------------------------ questions

    def status(self, code: str, lesson: str, step: int) -> str:
        found = self.r.hget(self._key(self._check(code), "status"), question_key(lesson, step))
        return found or "waiting"

    def set_status(self, code: str, lesson: str, step: int, status: str) -> None:
        if status not in STATUSES:
            raise ClassError(f"status {_shown(status)} is not one of {', '.join(STATUSES)}")
        code = self._check(code)
        pipe = self.r.pipeline()
        pipe.hset(self._key(code, "status"), question_key(lesson, step), status)
        self._touch(pipe, code)
        pipe.publish(self._key(code, "events"), "status")
        pipe.execute()

    def answer(
        self, code: str, lesson: str, step: int, student: str, text: str, name: str = ""
    ) -> str:
        student, text, name = check_student(student), check_answer(text), check_name(name)
        code = self._check(code)
        key = question_key(lesson, step)
        status = self._answer(
            keys=[
                self._key(code, "status"),
                self._key(code, "answers", key),
                self._key(code, "seq"),
            ],
            args=[key, student, text, name, CLASS_TTL_S],
        )
        if status == "open":
            self.r.publish(self._key(code, "events"), "answer")
        return status

    def answers(self, code: str, lesson: str, step: int) -> dict[str, tuple[str, str]]:
        raw = self.r.hgetall(self._key(self._check(code), "answers", question_key(lesson, step)))
        rows = []
        for student, value in raw.items():
            try:
                text, name, order = json.loads(value)
            except (ValueError, TypeError):
                continue
            rows.append((int(order), student, str(text), str(name)))
        return {student: (text, name) for _, student, text, name in sorted(rows)}

    def answer_of(self, code: str, lesson: str, step: int, student: str) -> str | None:
        value = self.r.hget(
            self._key(self._check(code), "answers", question_key(lesson, step)), student
        )
        if value is None:
            return None
        try:
            return str(json.loads(value)[0])
        except (ValueError, TypeError, IndexError):
            return None

    # ------------------------------------------------------------------ students

    def join(self, code: str, student: str) -> None:
        student = check_student(student)
        code = self._check(code)
        if self.r.sadd(self._key(code, "students"), student):
            pipe = self.r.pipeline()
            self._touch(pipe, code)
            pipe.publish(self._key(code, "events"), "join")
            pipe.execute()

    def students(self, code: str) -> int:
        return int(self.r.scard(self._key(self._check(code), "students")))

    # ------------------------------------------------------------------ events

    def subscribe(
        self, code: str, callback: Callable[[str], None], kinds: Iterable[str] = KINDS
    ) -> Callable[[], None]:
        code = check_code(code)
        with self._lock:
            self._next += 1
            handle = self._next
            self._subscribers.setdefault(code, {})[handle] = (frozenset(kinds), callback)
            self._ensure_listener()

        def stop() -> None:
            with self._lock:
                self._subscribers.get(code, {}).pop(handle, None)

        return stop

    def subscribers(self, code: str) -> int:
        with self._lock:
            return len(self._subscribers.get(check_code(code), {}))

    def _ensure_listener(self) -> None:
        import os

        # (a forked worker has none of its parent's threads: it starts its own)
        if self._listener is not None and self._listener.is_alive() and self._pid == os.getpid():
            return
        self._pid = os.getpid()
        self._ready = threading.Event()
        self._listener = threading.Thread(target=self._listen, name="class-events", daemon=True)
        self._listener.start()
        self._ready.wait(timeout=3)  # subscribed before the first change it must hear

    def _listen(self) -> None:
        """Hear every class's events (one pattern subscription), reconnecting as needed."""
        delay = 0.1
        while not self._stopping:
            pubsub = None
            try:
                pubsub = self.r.pubsub(ignore_subscribe_messages=True)
                pubsub.psubscribe(PREFIX + "*:events")
                pubsub.get_message(timeout=1.0, ignore_subscribe_messages=False)  # confirmed
                self._ready.set()
                delay = 0.1
                while not self._stopping:
                    message = pubsub.get_message(timeout=1.0)
                    if message is None:
                        continue
                    channel, kind = message.get("channel", ""), message.get("data", "")
                    code = channel[len(PREFIX) : -len(":events")]
                    self._tell(code, kind)
            except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
                if not self._stopping:
                    log.warning("class events: Redis out of reach (%s); retrying", exc)
                    time.sleep(delay)
                    delay = min(delay * 2, 5.0)
                    # every page hears something: it reads the store afresh once back
                    for code in list(self._subscribers):
                        self._tell(code, "move")
                        self._tell(code, "status")
            finally:
                if pubsub is not None:
                    try:
                        pubsub.close()
                    except Exception:
                        pass

    def _tell(self, code: str, kind: str) -> None:
        with self._lock:
            listeners = [
                cb for kinds, cb in self._subscribers.get(code, {}).values() if kind in kinds
            ]
        for callback in listeners:
            try:
                callback(kind)
            except Exception:
                log.warning("a class page failed to hear %s", kind)

    def close(self) -> None:
        self._stopping = True
        if self._listener is not None:
            self._listener.join(timeout=3)
        self.r.close()
