"""The classroom panel of the explorer: lessons, predict-then-reveal, the presenter switch.

A :class:`Classroom` works on an :class:`~explorer.state.ExplorerState` through
its public parameters only: ``lesson`` (a lesson id, ``""`` for none), ``step``
(counted from 1) and ``presenter``, and the ``shape`` and ``ops`` a step
shows. Its ``panel`` is the lesson list, the step's text (rendered as safe
Markdown), its question with an answer box and a check button, previous /
next step buttons and the presenter switch.

Showing a step sets the state's ``shape`` and ``ops`` to the step's; a step
meant to fail first shows the pipeline up to the failing step, so the last
good state on screen is the one the text talks about. A step with a question
sets ``concealed`` until the answer is graded, so the page hides what would
give it away; the verdict goes in ``candela-verdict`` and the traversal then
plays: the reveal. A bad lesson id or step shows a message in
``candela-lesson-message`` and falls back (no lesson, or the first step),
never a blank page.

One unit everywhere: once the state's ``unit`` is a dtype, every verdict, worked
answer and challenge target states strides, jumps and offsets in bytes of it,
and a stride, adj_stride or offset answer is right in bytes or in elements. A
lesson's own prose is written in elements and cannot be converted, so a note
under it (``candela-unit-note``) says so.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import panel as pn

from . import lessons as L
from .lesson_page import download_button
from .markup import inline_html, lesson_html
from .pipeline import PipelineError, format_pipeline, parse
from .state import ExplorerState, StateError
from .style import for_pane
from .text_pane import TextPane

#: The classes of the verdict on an answer (its kinds: right, wrong, unread) and its
#: worked line.
VERDICT_CLASSES = (
    "candela-verdict", "candela-verdict-right", "candela-verdict-wrong", "candela-verdict-unread",
    "candela-worked",
)  # fmt: skip

#: The lesson column's help, as HTML (an HTML pane: a Markdown pane would carry Panel's
#: Markdown stylesheet, 8.5 KB of code colours, into every saved notebook output).
HELP = (
    "<p>Lessons open from a link: <code>?lesson=transpose&amp;step=2</code> (steps count "
    "from 1; add <code>&amp;presenter=true</code> for a projector).</p>"
)


class Classroom:
    """The lesson panel over one state; it reads and writes ``lesson``, ``step``, ``shape``, ``ops``."""

    def __init__(self, state: ExplorerState, on_reveal: Callable[[], None] | None = None) -> None:
        self.state = state
        self.on_reveal = on_reveal
        self._lesson: L.Lesson | None = None
        self._answered: tuple[str, int, str] | None = None
        self._graded: str | None = None  # the text last graded; None after "show me"
        self.verdict: L.Verdict | None = None
        #: The question the page withholds for while ``state.concealed`` (None: a challenge,
        #: or no question): see :mod:`explorer.lessons.withholding`.
        self.waiting: L.Question | None = None
        self.catalogue, self.problems = read_catalogue()
        self._build_widgets()
        self.panel = self._build_panel()
        self._message_text: str | None = None
        self._carried: list[str] = []  # a fallback's message, shown once the fallback is on
        #: The steps left (◀ or ▶) while their question waited, as (lesson, step): going on
        #: is "show me" (the next step's text may say this one's answer), so coming back
        #: shows the answer rather than asking again.
        self.given_up: set[tuple[str, int]] = set()
        #: A led class's student page takes the typed answer for the teacher instead of
        #: grading it here: ``take_answer(text)`` returns True when it took it
        #: (:mod:`explorer.led_class`).
        self.take_answer: Callable[[str], bool] | None = None
        state.watch_batched(self._show_lesson, ["lesson", "step"])
        state.watch_batched(self._on_unit, ["unit"])
        with state.typed():  # a lesson's own state, shown as the lesson has it
            self._show_lesson()

    # ------------------------------------------------------------------ public

    @property
    def lesson(self) -> L.Lesson | None:
        """The lesson on show, or ``None``."""
        return self._lesson

    @property
    def current_step(self) -> L.Step | None:
        """The lesson step on show, or ``None``."""
        if self._lesson is None:
            return None
        return self._lesson.steps[self.state.step - 1]

    @property
    def message(self) -> str | None:
        """The lesson panel's message (a bad lesson id or step, a skipped file), if any."""
        return self._message_text

    def next(self) -> None:
        """Go to the next step of the lesson (no-op at the last); leaving a question
        unanswered gives it up (see ``given_up``)."""
        if self._lesson is not None and self.state.step < len(self._lesson.steps):
            with self.state._batch():  # one change of the page, each view drawn once
                self._leave()
                self.state.step += 1

    def previous(self) -> None:
        """Go to the previous step of the lesson (no-op at the first); as ``next``."""
        if self._lesson is not None and self.state.step > 1:
            with self.state._batch():
                self._leave()
                self.state.step -= 1

    def _leave(self) -> None:
        step = self.current_step
        asks = step is not None and (step.question is not None or step.challenge is not None)
        if asks and self.state.concealed:
            self.given_up.add((self.state.lesson, self.state.step))

    def on_key(self, key: str) -> None:
        """``n`` and ``p`` from the keyboard."""
        if key == "next":
            self.next()
        elif key == "previous":
            self.previous()

    def at_step(self) -> bool:
        """True when the state shows the lesson step unchanged (its shape, pipeline and
        second view)."""
        step = self.current_step
        return (
            step is not None
            and self.state.shows(step.shape, step.ops)
            and self.state.compare.strip() == (step.compare or "").strip()
        )

    def check(self, typed: str | None = None) -> L.Verdict | None:
        """Grade an answer (default: the answer box) to the step's question or challenge.

        Right: the verdict, the step's reveal text, the fields, and the traversal
        plays. Wrong: a hint that never holds the right value, another try, and
        "show me". The step's own state is put back first if the student has
        changed it, so the verdict is about the layout the question means.
        """
        step = self.current_step
        if step is None or (step.question is None and step.challenge is None):
            return None
        text = self.answer_input.value_input if typed is None else typed
        text = text or ""
        if self.take_answer is not None and self.take_answer(text):
            return None
        st = self.state
        key = (text, st.step, st.lesson)
        if key == self._answered and self.verdict is not None:
            return self.verdict  # Enter and a click on "check" for one answer
        with st.typed():  # the student's and the lesson's text: shown, never raised
            if not self.at_step():
                st.param.update(shape=step.shape, ops=step.ops)
            verdict = self._grade(step, text)
            self._answered = key
            self._graded = text
            self._settle(step, verdict)
            if verdict.correct and step.challenge is not None:
                st.ops = step.ops + L.clean_pipeline(text)  # show where the student's chain leads
        return verdict

    def show_me(self) -> L.Verdict | None:
        """Reveal the answer (or a challenge's solution) without grading a try."""
        step = self.current_step
        if step is None or (step.question is None and step.challenge is None):
            return None
        with self.state.typed():
            if not self.at_step():
                self.state.param.update(shape=step.shape, ops=step.ops)
            verdict = self._reveal(step)
            self._graded = None
            self._settle(step, verdict)
            if step.challenge is not None:
                self.state.ops = step.ops + step.challenge.solution.strip()
        return verdict

    def _grade(self, step: L.Step, text: str) -> L.Verdict:
        unit = self.state.unit
        if step.challenge is not None:
            return L.grade_challenge(step, text, unit)
        return L.grade(step.question, L.step_layout(step), text, unit)

    def _reveal(self, step: L.Step) -> L.Verdict:
        unit = self.state.unit
        if step.challenge is not None:
            return L.show_solution(step, unit)
        return L.show_me(step.question, L.step_layout(step), unit)

    def _on_unit(self, *events) -> None:
        """Say again, in the new unit, what the step and its verdict state."""
        step = self.current_step
        if step is None:
            return
        self._show_unit_note(step)
        self._show_prompt(step)
        if self.verdict is not None:
            graded = self._graded
            self.verdict = self._reveal(step) if graded is None else self._grade(step, graded)
            self._show_verdict(self.verdict)

    def _settle(self, step: L.Step, verdict: L.Verdict) -> None:
        self.verdict = verdict
        self._show_verdict(verdict)
        done = verdict.correct or verdict.revealed
        self.show_me_button.visible = not done and verdict.readable
        if done:
            self.reveal_pane.object = lesson_html(step.reveal)
            self.reveal_pane.visible = bool(step.reveal)
            self.state.concealed = False
            if self.on_reveal is not None:
                self.on_reveal()  # the page plays the traversal

    # ------------------------------------------------------------------ widgets

    def _build_widgets(self) -> None:
        options = {"(no lesson: explore freely)": ""}
        options.update(
            {f"{n}. {lesson.title}": lesson.id for n, lesson in enumerate(self.catalogue, 1)}
        )
        self.lesson_select = pn.widgets.Select(
            # Its label is the panel's title (page.css): a heading of its own would be a
            # pane, a model more in every session.
            label="Lessons", options=options, value="", css_classes=["candela-lesson-select"],
            sizing_mode="stretch_width",
        )  # fmt: skip
        self.message_pane = TextPane(
            "",
            stylesheets=for_pane("candela-lesson-message", "candela-lesson-message-box"),
            sizing_mode="stretch_width",
        )
        self.header_pane = TextPane(
            "",
            stylesheets=for_pane(
                "candela-lesson-title", "candela-lesson-step", "candela-lesson-header-box"
            ),
            sizing_mode="stretch_width",
        )
        self.text_pane = TextPane(  # lesson_html: lesson files are untrusted
            "", css_classes=["candela-lesson-text"], sizing_mode="stretch_width",
            stylesheets=for_pane("candela-lesson-text"),
        )  # fmt: skip
        self.unit_note_pane = TextPane(
            "",
            stylesheets=for_pane("candela-unit-note", "candela-unit-note-box"),
            sizing_mode="stretch_width",
            visible=False,
        )
        self.question_pane = TextPane(
            "",
            stylesheets=for_pane("candela-question", "candela-going-on", "candela-target"),
            sizing_mode="stretch_width",
        )
        self.answer_input = pn.widgets.TextInput(
            label="your answer (press Enter to check)", placeholder=L.ANSWER_HINT,
            css_classes=["candela-answer"], sizing_mode="stretch_width", min_width=120,
        )  # fmt: skip
        self.check_button = pn.widgets.Button(
            label="check", color="primary", css_classes=["candela-check"], width=80,
            align="end",
        )  # fmt: skip
        self.verdict_pane = TextPane(
            '<div class="candela-verdict"></div>',
            stylesheets=for_pane(*VERDICT_CLASSES),
            sizing_mode="stretch_width",
        )
        self.show_me_button = pn.widgets.Button(
            label="show me", css_classes=["candela-show-me"], width=90, visible=False
        )
        self.reveal_pane = TextPane(  # lesson_html: lesson files are untrusted
            "",
            css_classes=["candela-reveal"],
            sizing_mode="stretch_width",
            stylesheets=for_pane("candela-reveal"),
            visible=False,
        )
        self.prev_button = pn.widgets.Button(
            label="◀ previous", css_classes=["candela-prev"], sizing_mode="stretch_width"
        )
        self.next_button = pn.widgets.Button(
            label="next ▶", css_classes=["candela-next"], color="primary",
            sizing_mode="stretch_width",
        )  # fmt: skip
        self.presenter_toggle = pn.widgets.Checkbox.from_param(
            self.state.param.presenter, label="presenter mode (large type)",
            css_classes=["candela-presenter-toggle"],
        )  # fmt: skip
        self.help_pane = TextPane(
            HELP, css_classes=["candela-lesson-help"], sizing_mode="stretch_width",
            styles={"font-size": "12px", "color": "var(--candela-muted, #444)"},
            stylesheets=for_pane("candela-lesson-help", "candela-class-start"),
        )  # fmt: skip
        self.lesson_select.param.watch(self._on_select, "value")
        self.answer_input.param.watch(lambda e: self.check(), "enter_pressed")
        self.check_button.on_click(lambda e: self.check())
        self.show_me_button.on_click(lambda e: self.show_me())
        self.prev_button.on_click(lambda e: self.previous())
        self.next_button.on_click(lambda e: self.next())

    def _build_panel(self) -> pn.Column:
        self.question_box = pn.Column(
            self.question_pane,
            pn.Row(self.answer_input, self.check_button, sizing_mode="stretch_width"),
            self.verdict_pane,
            self.show_me_button,
            self.reveal_pane,
            sizing_mode="stretch_width",
            visible=False,
        )
        #: What the step box holds once a lesson is open: built into the page only then,
        #: so a page without a lesson sends none of its models.
        self.step_parts = [
            self.header_pane,
            pn.Row(self.prev_button, self.next_button, sizing_mode="stretch_width"),
            self.question_box,
            self.text_pane,
            self.unit_note_pane,
            download_button(self.state),
        ]
        self.step_box = pn.Column(sizing_mode="stretch_width", visible=False)
        return pn.Column(
            self.lesson_select,
            self.message_pane,
            self.step_box,
            self.presenter_toggle,
            self.help_pane,
            css_classes=["candela-classroom"],
            sizing_mode="stretch_width",
        )

    def offer_class(self, offer: bool = True) -> None:
        """Offer "lead a class" in the help text of a served page, where this server may
        start one (explorer.class_start); ``offer=False`` takes it out again."""
        from .class_start import START_FORM, may_start

        text = f"{HELP}{START_FORM}" if offer and may_start() else HELP
        if self.help_pane.object != text:
            self.help_pane.object = text

    # ------------------------------------------------------------------ lessons

    def _find(self, lesson_id: str) -> L.Lesson:
        for lesson in self.catalogue:
            if lesson.id == lesson_id:
                return lesson
        raise L.LessonNotFound(lesson_id, [lesson.id for lesson in self.catalogue])

    def _on_select(self, event) -> None:
        if event.new != self.state.lesson:
            try:
                with self.state.typed():
                    self.state.param.update(lesson=event.new, step=1)
            except StateError as exc:  # an explorer of a given tensor takes no lesson
                self._show_message(str(exc))
                self.lesson_select.value = self.state.lesson

    def _show_lesson(self, *events) -> None:
        """Validate ``lesson`` and ``step``, fall back with a message if bad, show the step."""
        st = self.state
        messages = student_notice(self.problems)
        lesson = None
        if st.lesson:
            try:
                lesson = self._find(st.lesson)
            except L.LessonNotFound as exc:
                messages.append(f"{exc}. Pick one from the list.")
        step = st.step
        if lesson is not None and not 1 <= step <= len(lesson.steps):
            # The nearest step there is: a link past the end opens the last one.
            step = min(max(step, 1), len(lesson.steps))
            messages.append(
                f"lesson {lesson.id!r} has steps 1 to {len(lesson.steps)}, not {st.step}; "
                f"showing step {step}"
            )
        wanted = {"lesson": lesson.id if lesson else "", "step": step if lesson else 1}
        if (st.lesson, st.step) != (wanted["lesson"], wanted["step"]):
            self._carried = messages[len(student_notice(self.problems)) :]
            st.param.update(**wanted)  # shows the step through the watcher
            return
        messages += self._carried
        self._carried = []
        self._show_message("\n".join(messages))
        self.lesson_select.value = st.lesson
        self._lesson = lesson
        self._show_step()

    def _show_message(self, text: str) -> None:
        self._message_text = text or None
        body = inline_html(text)
        self.message_pane.object = f'<div class="candela-lesson-message">{body}</div>'

    def _show_step(self) -> None:
        st = self.state
        step = self.current_step
        self.verdict = None
        self._answered = None
        self._graded = None
        self.verdict_pane.object = '<div class="candela-verdict"></div>'
        self.show_me_button.visible = False
        self.reveal_pane.param.update(object="", visible=False)
        self.answer_input.param.update(value="", value_input="")
        if step is None:
            self.step_box.visible = False
            st.concealed = False
            self.waiting = None
            return
        if not self.step_box.objects:
            self.step_box.objects = self.step_parts
        lesson = self._lesson
        n = st.step
        self.header_pane.object = (
            f'<div class="candela-lesson-title">{html.escape(lesson.title)}</div>'
            f'<div class="candela-lesson-step">step {n} of {len(lesson.steps)}</div>'
        )
        text = step.text
        if step.expect_error:
            text += (
                f"\n\n*This step is meant to fail: candela raises `{step.expect_error}`. "
                "The message is under the pipeline, and the last good state stays.*"
            )
        self.text_pane.object = lesson_html(text)
        self._show_unit_note(step)
        question, challenge = step.question, step.challenge
        asks = question is not None or challenge is not None
        self.question_box.visible = asks
        self._show_prompt(step)
        self.prev_button.disabled = n <= 1
        self.next_button.disabled = n >= len(lesson.steps)
        self.step_box.visible = True
        # What would give the answer away is withheld until it is graded: from before the
        # step's state is drawn, and (leaving a question unanswered) until the next is.
        if asks:
            self.waiting = step.question
            st.concealed = True
        if step.expect_error and not self.at_step():
            # First the pipeline up to the failing step: the last good state the text means.
            try:
                good = format_pipeline(parse(step.ops)[:-1])
            except PipelineError:
                good = ""
            st.param.update(shape=step.shape, ops=good)
        st.param.update(shape=step.shape, ops=step.ops, compare=step.compare, **counted_in(step))
        withheld_for, self.waiting = self.waiting, step.question
        if st.concealed != asks:
            st.concealed = asks
        elif asks or withheld_for is not None:  # another question: withhold what it asks
            st.param.trigger("concealed")
        if asks and (st.lesson, n) in self.given_up:
            self.show_me()  # left unanswered before: its answer, not the question again

    def _show_prompt(self, step: L.Step) -> None:
        question, challenge = step.question, step.challenge
        # Going on is giving up: the next step's text may hold this one's answer.
        going_on = '<div class="candela-going-on">◀ ▶ before answering shows the answer</div>'
        if question is not None:
            self.question_pane.object = (
                f'<div class="candela-question">{inline_html(question.prompt)}</div>{going_on}'
            )
            self.answer_input.placeholder = L.ANSWER_HINT
        elif challenge is not None:
            target = L.describe_target(challenge.target, unit=self.state.unit)
            self.question_pane.object = (
                f'<div class="candela-question">{inline_html(challenge.prompt)}</div>'
                f'<div class="candela-target">target: {inline_html(target)}</div>{going_on}'
            )
            self.answer_input.placeholder = L.PIPELINE_HINT

    def _show_unit_note(self, step: L.Step) -> None:
        note = unit_note(self.state.unit, step)
        self.unit_note_pane.object = note
        self.unit_note_pane.visible = bool(note)

    def _show_verdict(self, verdict: L.Verdict) -> None:
        if not verdict.readable:
            kind, mark = "unread", ""
        elif verdict.correct:
            kind, mark = "right", "✓ "
        elif verdict.revealed:
            kind, mark = "shown", "→ "
        else:
            kind, mark = "wrong", "✗ "
        worked = (
            f'<div class="candela-worked">{inline_html(verdict.worked)}</div>'
            if verdict.readable
            else ""
        )
        self.verdict_pane.object = (
            f'<div class="candela-verdict candela-verdict-{kind}">'
            f"{mark}{inline_html(verdict.message)}{worked}</div>"
        )


def counted_in(step: L.Step) -> dict:
    """What a step sets of the page's units: its ``unit`` (a dtype) and, when it sets any
    of them, the cost's memory unit and warp (64-byte lines and no warp unless it says)."""
    if not (step.unit or step.cost or step.warp):
        return {}
    out = {"cost_unit": step.cost or 64, "warp": step.warp}
    if step.unit:
        out["unit"] = step.unit
    return out


def unit_note(unit: str, step: L.Step | None = None) -> str:
    """The note under a lesson's text once a byte unit is chosen ("" in elements)."""
    note = L.unit_note(unit, step)
    if not note:
        return ""
    return f'<div class="candela-unit-note" role="note">{html.escape(note)}</div>'


def lesson_problem(lesson: object, catalogue: list[L.Lesson] | None = None) -> str | None:
    """Why ``lesson`` cannot be set from Python (one line naming it and the lessons), or None."""
    if not isinstance(lesson, str):
        return f"lesson cannot be {lesson!r:.60}: it is a lesson's id, e.g. 'transpose'"
    if not lesson:
        return None
    known = [found.id for found in (catalogue if catalogue is not None else read_catalogue()[0])]
    if lesson in known:
        return None
    shown = repr(lesson if len(lesson) <= 60 else lesson[:59] + "…")
    return f"lesson cannot be {shown}: it is one of {', '.join(repr(k) for k in known)}"


def catalogue_stamp() -> tuple:
    """What the catalogue would read now: the lesson folder and each file's name, size and time.

    Two equal stamps mean :func:`read_catalogue` reads the same lessons (a page
    built ahead of its request is used only while its stamp is current).
    """
    stamp = [str(L.lessons_dir())]
    for path in L.lesson_files():
        try:
            info = path.stat()
        except OSError:
            stamp.append((path.name, None))
        else:
            stamp.append((path.name, info.st_size, info.st_mtime_ns))
    return tuple(stamp)


#: What a student sees when lesson files were skipped: which files and why is for the
#: teacher (the server's log and the command's console), not for every page.
SKIPPED_NOTICE = "Some lessons could not be loaded; the teacher's server log says which and why."


def student_notice(problems: list[str]) -> list[str]:
    """The lesson panel's line for ``problems`` of :func:`read_catalogue`: one, naming none."""
    return [SKIPPED_NOTICE] if problems else []


def read_catalogue() -> tuple[list[L.Lesson], list[str]]:
    """Every lesson that loads, and a message for each file that does not (each logged once,
    for the teacher; a page shows only :func:`student_notice`)."""
    lessons, problems = [], []
    for path in L.lesson_files():
        try:
            lessons.append(L.load_lesson_file(path))
        except L.LessonError as exc:
            problems.append(f"lesson file skipped: {exc}")
    return lessons, problems
