"""A led class on the page: the teacher drives, every student's page follows, the answers come back.

A page whose URL holds ``class=CODE`` is in class ``CODE`` (:mod:`explorer.class_store`):

- **The teacher's page** (``?class=CODE&teach=TOKEN``, the token checked with
  :func:`hmac.compare_digest` by the store) drives: its lesson and step are the
  class's. Its panel (``candela-class-teacher``) shows the students' link and
  code, the question's status with **open** / **close** / **reveal** buttons
  (``candela-class-open``, ``candela-class-close``, ``candela-class-reveal``), and,
  live, how many answered, the spread of their answers and the commonest wrong
  one (``candela-class-answers``; anonymous, a name only where a student typed one).
  Its controls are built only in a session whose URL carried the valid token.
- **A student's page** (``?class=CODE``, plus ``me=ID``, a random id the page adds
  to its own URL so a reconnect is the same student) follows: the server pushes
  the teacher's lesson and step to it (a late joiner lands on the current step).
  Its bar (``candela-class-follow``) says what it follows; the student may step
  away with their own ◀/▶ and **rejoin** (``candela-class-rejoin``). An answer typed
  in the usual answer box, at the class's step, goes to the teacher (the latest
  one counts) instead of being graded; once the teacher reveals, the page grades
  it (or shows the answer) as it would have. An optional name box
  (``candela-class-name``) is the one other thing a student sends.

A student page sends nothing but its answer and its name, each checked by the
store; nothing it sends reaches another page or a teacher's control. A bad or
unknown code draws the page with a message (``candela-class-message``).

Pushes reach each page on its own document's next tick (the only thread-safe way
into a Bokeh document), coalesced: a page reads the store when it runs, so a
burst of clicks is one change per page.
"""

from __future__ import annotations

import html
import threading
import weakref
from urllib.parse import parse_qs, quote, urlsplit

import panel as pn
from panel.io.state import set_curdoc

from . import class_store as cs
from .class_store import CODE_KEY, STUDENT_KEY, TEACHER_KEY, class_links
from .style import CSS
from .text_pane import TextPane

__all__ = ["LedClass", "attach", "class_links"]


CLASS_CSS = """
.candela-class { border: 2px solid var(--candela-accent, #1f5fa8); border-radius: 6px;
  padding: 4px 8px; margin-bottom: 6px; font-size: 14px; }
.candela-class-code { font-size: 28px; font-weight: 700; letter-spacing: 0.15em; }
.candela-class-link { word-break: break-all; }
.candela-class-answers table { border-collapse: collapse; }
.candela-class-answers td { padding: 1px 8px 1px 0; }
.candela-class-message { color: var(--candela-warn, #8a4b00); white-space: pre-wrap; }
.candela-class-state { font-weight: 600; }
"""


def attach(ex, search: str) -> LedClass | None:
    """Put page ``ex`` in the class its first URL's query ``search`` names, if any (called
    once the page opened that URL)."""
    query = parse_qs(search.lstrip("?"), keep_blank_values=True)
    if CODE_KEY not in query:
        return None
    led = LedClass(ex, {k: v[0] for k, v in query.items()})
    ex.__dict__["led_class"] = led
    return led


def _pane(css: str, text: str = "", **params) -> TextPane:
    return TextPane(
        text, css_classes=[css], stylesheets=[CSS, CLASS_CSS], sizing_mode="stretch_width", **params
    )


class LedClass:
    """One page's part in a led class: its panel, its subscription, what it sends."""

    def __init__(self, ex, query: dict[str, str], store=None) -> None:
        self.ex = ex
        self.store = store or cs.current()
        self.doc = pn.state.curdoc
        self.code: str | None = None
        self.teacher = False
        self.student: str | None = None
        self.following = True
        self._applying = False
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self._stop = None
        self._revealed_here: tuple[str, int] | None = None
        self.message = _pane("candela-class-message-pane", visible=False)
        self.panel = pn.Column(
            self.message, css_classes=["candela-class"], stylesheets=[CLASS_CSS],
            sizing_mode="stretch_width",
        )  # fmt: skip
        ex.lesson_area.insert(0, self.panel)
        try:
            self.code = cs.check_code(query.get(CODE_KEY, ""))
            if not self.store.exists(self.code):
                raise cs.UnknownClass(self.code)
        except cs.ClassError as exc:
            self._say(str(exc))
            self.code = None
            return
        except Exception as exc:  # the store is out of reach (Redis down): say so, draw
            self._say(f"the class cannot be reached now ({type(exc).__name__}); reload later")
            self.code = None
            return
        token = query.get(TEACHER_KEY)
        if token is not None and self.store.is_teacher(self.code, token):
            self.teacher = True
            self._keep(f"&{CODE_KEY}={self.code}&{TEACHER_KEY}={quote(token)}")
            self._build_teacher()
        else:
            if token is not None:
                self._say(
                    f"this is not the teacher's link of class {self.code}: "
                    "this page follows the class as a student's does"
                )
            try:
                self.student = cs.check_student(query.get(STUDENT_KEY, ""))
            except cs.ClassError:
                self.student = cs.new_student()
            self._keep(f"&{CODE_KEY}={self.code}&{STUDENT_KEY}={self.student}")
            self._build_student()
        if self.doc is not None:
            ref = weakref.ref(self)
            self.doc.on_session_destroyed(lambda ctx: (me := ref()) is not None and me.close())

    # ------------------------------------------------------------------ shared

    def _say(self, text: str) -> None:
        self.message.param.update(
            object=f'<div class="candela-class-message" role="status">{html.escape(text, quote=False)}</div>',
            visible=bool(text),
        )

    def _keep(self, extra: str) -> None:
        url = getattr(self.ex, "url", None)
        if url is not None:
            url.keep = extra
            url.write()
            if self.doc is not None and self.doc.session_context is not None:
                # The browser sends its own URL once the page has loaded, over this one:
                # written again after that, once.
                location = url.location
                watcher = None

                def again(event) -> None:
                    if event.new == url.query():
                        return  # the page's own write
                    location.param.unwatch(watcher)
                    if self.doc is not None:
                        self.doc.add_next_tick_callback(url.write)
                        self.doc.add_timeout_callback(lambda: self._confirm(url, 3), 1500)

                watcher = location.param.watch(again, "search")

    def _confirm(self, url, tries: int) -> None:
        """Until the browser says its URL holds the class (its ``href``), send the URL
        again, a few times: a write that crossed the browser's own report of its URL
        could leave the page's address without the class or the student's id, which a
        reload then loses."""
        location = url.location
        if self.doc is None or self.doc.session_context is None or self._stop is None:
            return  # the page is gone
        if urlsplit(location.href or "").query == url.query().lstrip("?"):
            return
        url.write()
        location.param.trigger("search")  # sent even where the server takes it as sent
        if tries > 1:
            self.doc.add_timeout_callback(lambda: self._confirm(url, tries - 1), 1500)

    @property
    def classroom(self):
        return self.ex.classroom

    def _subscribe(self, kinds) -> None:
        ref = weakref.ref(self)

        def heard(kind: str) -> None:
            me = ref()
            if me is not None:
                me._heard(kind)

        self._stop = self.store.subscribe(self.code, heard, kinds)

    def _heard(self, kind: str) -> None:
        """A change of the class (any thread): handled on this page's next tick, once."""
        with self._lock:
            first = not self._pending
            self._pending.add(kind)
        if not first:
            return
        if self.doc is None or self.doc.session_context is None:
            self._run()
        else:
            self.doc.add_next_tick_callback(self._run)

    def _run(self) -> None:
        with self._lock:
            kinds, self._pending = self._pending, set()
        try:
            with set_curdoc(self.doc), pn.io.hold():
                if self.teacher:
                    self._teacher_heard(kinds)
                else:
                    self._student_heard(kinds)
        except cs.ClassError as exc:
            self._say(str(exc))
        except Exception as exc:  # the store out of reach (Redis down): say so, keep the page
            self._say(
                f"the class cannot be reached now ({type(exc).__name__}); it will follow again once it can"
            )

    def close(self) -> None:
        """Stop hearing the class (the page's session ended)."""
        if self._stop is not None:
            self._stop()
            self._stop = None

    def _question(self, lesson: str, step: int):
        """The question (or challenge) of ``lesson``'s ``step`` on this page, or None."""
        for found in self.classroom.catalogue:
            if found.id == lesson and 1 <= step <= len(found.steps):
                s = found.steps[step - 1]
                return s if (s.question is not None or s.challenge is not None) else None
        return None

    # ------------------------------------------------------------------ the teacher

    def _build_teacher(self) -> None:
        students, _ = class_links(self._base(), self.code, "")
        self.links = _pane(
            "candela-class-links",
            f'<div>students open <span class="candela-class-link">{html.escape(students)}</span>'
            f'</div><div>class code <span class="candela-class-code">{self.code}</span></div>',
        )
        self.status_pane = _pane("candela-class-status")
        self.open_button = pn.widgets.Button(
            label="open question", css_classes=["candela-class-open"], color="primary"
        )
        self.close_button = pn.widgets.Button(
            label="close answers", css_classes=["candela-class-close"]
        )
        self.reveal_button = pn.widgets.Button(
            label="reveal", css_classes=["candela-class-reveal"], color="success"
        )
        self.answers_pane = _pane("candela-class-answers")
        self.open_button.on_click(lambda e: self._set_status("open"))
        self.close_button.on_click(lambda e: self._set_status("closed"))
        self.reveal_button.on_click(lambda e: self._set_status("revealed"))
        self.teacher_box = pn.Column(
            _pane(
                "candela-class-role", '<div class="candela-class-state">you lead this class</div>'
            ),
            self.links,
            self.status_pane,
            # The three wrap in a narrow lesson column, never past the page's edge.
            pn.FlexBox(
                self.open_button,
                self.close_button,
                self.reveal_button,
                flex_wrap="wrap",
                gap="6px",
                sizing_mode="stretch_width",
            ),
            self.answers_pane,
            css_classes=["candela-class-teacher"],
            sizing_mode="stretch_width",
        )
        self.panel.append(self.teacher_box)
        self._grades: dict[tuple[str, int, str], bool] = {}
        st = self.ex
        if not st.lesson:
            here = self.store.position(self.code)
            if here.lesson:
                st.param.update(lesson=here.lesson, step=here.step)
        st.watch_batched(self._teacher_moved, ["lesson", "step"])
        self._subscribe(("answer", "join", "status"))
        self._teacher_moved()

    def _base(self) -> str:
        loc = pn.state.location
        href = getattr(loc, "href", "") if loc is not None else ""
        if href and "://" in href:
            return href.split("?", 1)[0].split("#", 1)[0]
        return ""

    def _teacher_moved(self, *events) -> None:
        self.store.move(self.code, self.ex.lesson, self.ex.step)
        self._show_teacher()

    def _set_status(self, status: str) -> None:
        st = self.ex
        if self._question(st.lesson, st.step) is None:
            return
        self.store.set_status(self.code, st.lesson, st.step, status)
        # (the store tells this page too; the page also shows it at once)
        self._teacher_heard({"status"})

    def _teacher_heard(self, kinds) -> None:
        st = self.ex
        if "status" in kinds and self.store.status(self.code, st.lesson, st.step) == "revealed":
            if st.concealed and self.classroom.verdict is None:
                self.classroom.show_me()  # the teacher's page shows the answer too
        self._show_teacher()

    def _is_right(self, step) -> callable:
        st = self.ex

        def right(text: str) -> bool:
            key = (st.lesson, st.step, text)
            if key not in self._grades:
                try:
                    self._grades[key] = bool(self.classroom._grade(step, text).correct)
                except Exception:
                    self._grades[key] = False
                if len(self._grades) > 4096:
                    self._grades.clear()
            return self._grades[key]

        return right

    def _show_teacher(self) -> None:
        st = self.ex
        step = self._question(st.lesson, st.step)
        joined = self.store.students(self.code)
        if step is None:
            self.status_pane.object = (
                f'<div class="candela-class-state">no question at this step</div>'
                f'<div class="candela-class-joined" data-joined="{joined}">{joined} student'
                f"{'s' if joined != 1 else ''} joined</div>"
            )
            for button in (self.open_button, self.close_button, self.reveal_button):
                button.disabled = True
            self.answers_pane.object = ""
            return
        status = self.store.status(self.code, st.lesson, st.step)
        words = {
            "waiting": "question not open yet: open it when the class is ready",
            "open": "question open: answers are coming in",
            "closed": "answers closed: reveal when ready",
            "revealed": "answer revealed on every page",
        }[status]
        self.status_pane.object = (
            f'<div class="candela-class-state" data-status="{status}">{words}</div>'
            f'<div class="candela-class-joined" data-joined="{joined}">{joined} student'
            f"{'s' if joined != 1 else ''} joined</div>"
        )
        self.open_button.disabled = status == "open"
        self.close_button.disabled = status != "open"
        self.reveal_button.disabled = status == "revealed"
        given = self.store.answers(self.code, st.lesson, st.step)
        t = cs.tally(given, self._is_right(step))
        rows = "".join(
            f'<tr><td class="candela-class-answer">{html.escape(text)}</td>'
            f'<td class="candela-class-count">{n}</td>'
            f"<td>{'✓' if self._is_right(step)(text) else ''}</td>"
            f"<td>{html.escape(', '.join(t.names.get(text, ())))}</td></tr>"
            for text, n in t.spread[:12]
        )
        more = len(t.spread) - 12
        wrong = (
            f'<div>commonest wrong: <b class="candela-class-wrong">{html.escape(t.wrong)}</b> '
            f"({t.wrong_count})</div>"
            if t.wrong is not None
            else ""
        )
        self.answers_pane.object = (
            f'<div class="candela-class-tally" data-answered="{t.answered}" data-right="{t.right}">'
            f'<b class="candela-class-answered">{t.answered}</b> answered of {joined}, '
            f"{t.right} right</div>{wrong}"
            + (f"<table>{rows}</table>" if rows else "")
            + (f"<div>and {more} other answers</div>" if more > 0 else "")
        )

    # ------------------------------------------------------------------ a student

    def _build_student(self) -> None:
        self.follow_pane = _pane("candela-class-follow-state")
        self.rejoin_button = pn.widgets.Button(
            label="rejoin the class", css_classes=["candela-class-rejoin"],
            color="primary", visible=False,
        )  # fmt: skip
        self.name_input = pn.widgets.TextInput(
            placeholder="your name (optional)", css_classes=["candela-class-name"],
            max_length=cs.MAX_NAME_CHARS, sizing_mode="stretch_width",
        )  # fmt: skip
        self.rejoin_button.on_click(lambda e: self.rejoin())
        self.follow_box = pn.Column(
            self.follow_pane,
            self.rejoin_button,
            self.name_input,
            css_classes=["candela-class-follow"],
            sizing_mode="stretch_width",
        )
        self.panel.append(self.follow_box)
        self.store.join(self.code, self.student)
        self.classroom.take_answer = self._take_answer
        self.ex.watch_batched(self._student_moved, ["lesson", "step"])
        self._subscribe(("move", "status"))
        self.rejoin()

    def rejoin(self) -> None:
        """Back to the teacher's lesson and step (and its verdict, once revealed)."""
        self.following = True
        self._follow()

    def _follow(self) -> None:
        here = self.store.position(self.code)
        st = self.ex
        if (st.lesson, st.step) != (here.lesson, here.step):
            self._applying = True
            try:
                st.param.update(lesson=here.lesson, step=here.step)
            finally:
                self._applying = False
            self._revealed_here = None
        self._at_class_step()
        self._show_student()

    def _student_moved(self, *events) -> None:
        # Leaving an unanswered question with ◀/▶ gives it up on a page of one's own; in
        # a class the teacher reveals, so coming back asks again.
        self.classroom.given_up.clear()
        if self._applying:
            return
        here = self.store.position(self.code)
        self.following = (self.ex.lesson, self.ex.step) == (here.lesson, here.step)
        self._revealed_here = None
        if self.following:
            self._at_class_step()
        self._show_student()

    def _at_class_step(self) -> None:
        """At the class's step: its reveal if revealed, else the answer already sent."""
        st = self.ex
        if self._question(st.lesson, st.step) is None:
            return
        status = self.store.status(self.code, st.lesson, st.step)
        if status == "revealed":
            self._reveal()
            return
        mine = self.store.answer_of(self.code, st.lesson, st.step, self.student)
        if mine is not None and self.classroom.verdict is None:
            self._sent(mine, status)

    def _reveal(self) -> None:
        st = self.ex
        where = (st.lesson, st.step)
        if self._revealed_here == where:
            return
        self._revealed_here = where
        mine = self.store.answer_of(self.code, st.lesson, st.step, self.student)
        take, self.classroom.take_answer = self.classroom.take_answer, None
        try:
            if mine is not None:
                self.classroom.answer_input.value_input = mine
                verdict = self.classroom.check(mine)
                if verdict is not None and not (verdict.correct or verdict.revealed):
                    self.classroom.show_me()  # wrong: the answer follows the verdict
                    self._wrong_first(mine, verdict)
            else:
                self.classroom.show_me()
        finally:
            self.classroom.take_answer = take

    def _wrong_first(self, mine: str, verdict) -> None:
        """After the reveal of a wrong answer: what the student sent, then the answer."""
        pane = self.classroom.verdict_pane
        said = html.escape(verdict.message)
        pane.object = pane.object.replace(
            '">', f'"><div class="candela-class-yours">your answer: {html.escape(mine)} ✗ '
            f"{said}</div>", 1,
        )  # fmt: skip

    def _student_heard(self, kinds) -> None:
        if "move" in kinds and self.following:
            self._follow()
            return
        if "status" in kinds and self.following:
            self._at_class_step()
        self._show_student()

    def _take_answer(self, typed: str) -> bool:
        """The answer box's text at the class's step goes to the teacher (True: taken)."""
        st = self.ex
        try:
            here = self.store.position(self.code)
            status = self.store.status(self.code, here.lesson, here.step)
        except Exception as exc:  # the store out of reach (Redis down)
            self._verdict(f"the class cannot be reached now ({type(exc).__name__})", "unread")
            return True
        if (st.lesson, st.step) != (here.lesson, here.step):
            return False  # away from the class: the page grades as usual
        if status == "revealed":
            return False
        try:
            name = cs.check_name(self.name_input.value_input or self.name_input.value)
            if status == "open":
                status = self.store.answer(self.code, st.lesson, st.step, self.student, typed, name)
            else:
                cs.check_answer(typed)
        except cs.ClassError as exc:
            self._verdict(html.escape(str(exc)), "unread")
            return True
        except Exception as exc:  # the store out of reach (Redis down)
            self._verdict(
                f"your answer could not be sent ({type(exc).__name__}): press Enter again "
                "in a moment",
                "unread",
            )
            return True
        if status == "open":
            self._sent(cs.normal(typed), status)
        elif status == "waiting":
            self._verdict("the teacher has not opened this question yet: keep your answer and "
                          "press Enter once it is open", "unread")  # fmt: skip
        else:
            self._verdict("answers are closed: the teacher reveals the answer soon", "unread")
        return True

    def _sent(self, text: str, status: str) -> None:
        more = "you may change it while answers are open" if status == "open" else ""
        self._verdict(
            f"your answer <b>{html.escape(text)}</b> is in; the teacher reveals the answer"
            + (f" ({more})" if more else ""),
            "sent",
        )

    def _verdict(self, body: str, kind: str) -> None:
        self.classroom.verdict_pane.object = (
            f'<div class="candela-verdict candela-verdict-{kind} candela-class-sent">{body}</div>'
        )

    def _show_student(self) -> None:
        here = self.store.position(self.code)
        if self.following:
            where = f"step {here.step}" if here.lesson else "no lesson yet"
            text = f"following the teacher · class {self.code} · {where}"
        else:
            text = (
                f"you stepped away from the class (it is at step {here.step}); "
                "rejoin when you are ready"
            )
        self.follow_pane.object = (
            f'<div class="candela-class-state" data-following="{str(self.following).lower()}">'
            f"{html.escape(text)}</div>"
        )
        if self.rejoin_button.visible == self.following:
            self.rejoin_button.visible = not self.following
