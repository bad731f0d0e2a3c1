"""The classroom panel of the explorer: lessons, predict-then-reveal, presenter mode, keys.

An :class:`~explorer.app.Explorer` owns one :class:`Classroom`, which fills the
page's ``lesson_area``: a lesson picker, the current step's text (markdown), its
question with an answer box and a check button, previous / next step buttons, a
presenter-mode switch and a line of keyboard help. The state lives in three
parameters of the Explorer, each also a key of the page's URL:

- ``lesson``: a lesson id (``transpose``), ``""`` for none;
- ``step``: the step of that lesson, **counted from 1** (``step=1`` is the first);
- ``presenter``: large type and cells for a projector.

Showing a step sets the Explorer's ``shape`` and ``ops`` to the step's, so a step
that expects an error shows the pipeline's message in ``candela-error`` and the
last good state stays. A step with a question hides the fields (they would give
the answer away) until the student's answer is graded by
:func:`explorer.lessons.grade` against the step's layout; the verdict and its
reason go in ``candela-verdict`` and the traversal then plays: the reveal. A bad
lesson id or step shows a message in ``candela-lesson-message`` and falls back
(no lesson, or the first step), never a blank page.

The keys run in the browser (``keys.mjs``, through a Panel ``JSComponent``): the
arrows and space press the traversal's own buttons; ``n`` and ``p`` send a
message here, which moves the step.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

import panel as pn
import param
from panel.custom import JSComponent

from . import lessons as L
from .markup import lesson_html
from .state import StateError, parse_shape

if TYPE_CHECKING:  # pragma: no cover
    from .app import Explorer

KEYS_JS = Path(__file__).with_name("keys.mjs")

#: How much bigger the plot cells and their labels are drawn in presenter mode.
PRESENTER_SCALE = 1.6
#: The lesson panel's width, normally and in presenter mode.
PANEL_WIDTH = 340
PRESENTER_PANEL_WIDTH = 480

# Okabe-Ito blue and vermillion; the verdict also says "Right" or "Not quite" and
# carries a mark, so colour is never the only sign.
RIGHT_COLOR = "#0072B2"
WRONG_COLOR = "#D55E00"

CSS = f"""
:host {{ font-family: system-ui, sans-serif; }}
.candela-lesson-step {{ font-size: 13px; color: #444; }}
.candela-lesson-title {{ font-size: 16px; font-weight: 700; }}
.candela-lesson-message {{ color: #8a4b00; font-size: 13px; white-space: pre-wrap; }}
.candela-question {{ font-weight: 600; font-size: 14px; }}
.candela-verdict {{ font-size: 14px; min-height: 1.2em; white-space: pre-wrap; }}
.candela-verdict-right {{ color: {RIGHT_COLOR}; }}
.candela-verdict-wrong {{ color: {WRONG_COLOR}; }}
.candela-verdict-unread {{ color: #555; }}
.candela-worked {{ font-family: ui-monospace, monospace; font-size: 12.5px; color: #333;
  margin-top: 4px; }}
.candela-expect-error {{ font-size: 13px; color: #333; }}
.candela-keys {{ font-size: 12px; color: #444; }}
kbd {{ border: 1px solid #999; border-radius: 3px; padding: 0 4px; font-size: 90%;
  background: #f6f6f6; }}
"""

#: Added to every pane and widget of the page in presenter mode.
PRESENTER_CSS = """
:host { font-size: 22px !important; }
input, select, textarea, button, .bk-btn, label, .bk-input { font-size: 22px !important; }
input, select, .bk-input { min-height: 44px; }
.candela-fields table, .candela-fields code { font-size: 24px !important; }
.candela-adj-stride-work, .candela-reason, .candela-worked, .candela-steps div,
.candela-legend, .candela-keys, .candela-lesson-step, .candela-lesson-message,
.candela-expect-error { font-size: 18px !important; }
.candela-heading, .candela-question, .candela-verdict, .candela-error,
.candela-odometer { font-size: 22px !important; }
.candela-lesson-title { font-size: 26px !important; }
"""

HELP = (
    "Lessons open from a link: `?lesson=transpose&step=2` (steps count from 1; "
    "add `&presenter=true` for a projector)."
)


# --------------------------------------------------------------------------- URL


def read_query(search: str) -> dict[str, str]:
    """The classroom's keys of a query string, as text: ``lesson``, ``step``, ``presenter``.

    >>> read_query("?shape=3,4&lesson=transpose&step=2&presenter=true")
    {'lesson': 'transpose', 'step': '2', 'presenter': 'true'}
    """
    query = parse_qs((search or "").lstrip("?"), keep_blank_values=True)
    return {k: query[k][0] for k in ("lesson", "step", "presenter") if k in query}


def read_flag(text: str) -> bool | None:
    """``true``/``1``/``yes``/``on`` or ``false``/``0``/``no``/``off``; ``None`` for other text."""
    word = text.strip().lower()
    if word in ("true", "1", "yes", "on", ""):
        return True
    if word in ("false", "0", "no", "off"):
        return False
    return None


# --------------------------------------------------------------------------- keys


class Keys(JSComponent):
    """The page's keyboard (see ``keys.mjs``), and the keyboard help it shows.

    ``on_key`` is called with ``"next"`` or ``"previous"`` when the student
    presses ``n`` or ``p``; raising ``play_count`` plays the traversal.
    """

    play_count = param.Integer(default=0, doc="Raised by the server to play the traversal.")
    follow_history = param.Boolean(
        default=False, doc="Reload on the back and forward buttons (only when served)."
    )

    _esm = KEYS_JS

    def __init__(self, on_key=None, **params: Any) -> None:
        params.setdefault("stylesheets", [CSS])
        params.setdefault("css_classes", ["candela-keys-help"])
        super().__init__(**params)
        self._on_key = on_key

    def _handle_msg(self, msg: Any) -> None:
        key = msg.get("key") if isinstance(msg, dict) else None
        if key in ("next", "previous") and self._on_key is not None:
            self._on_key(key)


# --------------------------------------------------------------------------- the panel


class Classroom:
    """The lesson panel of one Explorer; it reads and writes ``lesson``, ``step``, ``presenter``."""

    def __init__(self, explorer: Explorer) -> None:
        self.ex = explorer
        self._busy = False
        self._lesson: L.Lesson | None = None
        self._answered: tuple[str, int, str] | None = None
        self.verdict: L.Verdict | None = None
        self._catalogue, problems = self._read_catalogue()
        self._build_widgets()
        self.panel = self._build_panel()
        message = "\n".join(problems)
        search = self._served_search()
        if search is not None:
            message = "\n".join(filter(None, [message, self._read_url(search)]))
        self._show_lesson(message=message)
        self._apply_presenter()
        ex = self.ex
        ex.param.watch(self._on_lesson_params, ["lesson", "step"])
        ex.param.watch(self._on_presenter, ["presenter"])
        # After the Explorer has redrawn (its own watcher has the default precedence 0).
        if search is not None:
            pn.state.location.param.watch(self._on_url_change, "search")
            self.keys.follow_history = True

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
        return self._lesson.steps[self.ex.step - 1]

    def next(self) -> None:
        """Go to the next step of the lesson (no-op at the last)."""
        if self._lesson is not None and self.ex.step < len(self._lesson.steps):
            self.ex.step += 1

    def previous(self) -> None:
        """Go to the previous step of the lesson (no-op at the first)."""
        if self._lesson is not None and self.ex.step > 1:
            self.ex.step -= 1

    def check(self, typed: str | None = None) -> L.Verdict | None:
        """Grade an answer (default: the answer box) to the step's question, then reveal.

        The step's own state is put back first if the student has changed it, so
        the verdict and the animation are about the layout the question means.
        """
        step = self.current_step
        if step is None or step.question is None:
            return None
        text = self.answer_input.value_input if typed is None else typed
        text = text or ""
        key = (text, self.ex.step, self.ex.lesson)
        if key == self._answered and self.verdict is not None:
            return self.verdict  # Enter and a click on "check" for one answer
        if not self._at_step(step):
            self.ex.param.update(shape=step.shape, ops=step.ops)
        verdict = L.grade(step.question, self.ex.layout, text)
        self._answered = key
        self.verdict = verdict
        self._show_verdict(verdict)
        if verdict.readable:
            self.ex.fields_pane.visible = True
            self.keys.play_count += 1  # the reveal
        return verdict

    def open_query(self, search: str) -> str | None:
        """Open the lesson a query string names (as a link would); returns any message."""
        self._busy = True
        try:
            message = self._read_url(search)
        finally:
            self._busy = False
        self._show_lesson(message=message)
        self._apply_presenter()
        return self._message_text

    def url_search(self, base: str) -> str:
        """The page's query string: ``base`` (shape and ops) plus the classroom's keys.

        On an unchanged lesson step the link is just ``?lesson=ID&step=N``, the
        form a teacher hands out; once the student changes the state, the shape
        and ops come first so a reload restores them.
        """
        ex = self.ex
        extra = "&presenter=true" if ex.presenter else ""
        step = self.current_step
        if step is None:
            return base + extra
        keys = f"lesson={quote(ex.lesson)}&step={ex.step}{extra}"
        if self._at_step(step):
            return "?" + keys
        return f"{base}&{keys}"

    # ------------------------------------------------------------------ widgets

    def _build_widgets(self) -> None:
        options = {"(no lesson: explore freely)": ""}
        options.update(
            {f"{n}. {lesson.title}": lesson.id for n, lesson in enumerate(self._catalogue, 1)}
        )
        self.lesson_select = pn.widgets.Select(
            label="lesson",
            options=options,
            value="",
            css_classes=["candela-lesson-select"],
            sizing_mode="stretch_width",
        )
        self.message_pane = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        self.header_pane = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        self.text_pane = pn.pane.HTML(  # lesson_html: lesson files are untrusted
            "", css_classes=["candela-lesson-text"], sizing_mode="stretch_width"
        )
        self.question_pane = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        self.answer_input = pn.widgets.TextInput(
            label="your answer (press Enter to check)",
            placeholder="e.g. -7 or (4, 3)",
            css_classes=["candela-answer"],
            sizing_mode="stretch_width",
        )
        self.check_button = pn.widgets.Button(
            label="check", color="primary", css_classes=["candela-check"], width=100, align="end"
        )
        self.verdict_pane = pn.pane.HTML(
            '<div class="candela-verdict"></div>', stylesheets=[CSS], sizing_mode="stretch_width"
        )
        self.prev_button = pn.widgets.Button(
            label="◀ previous step", css_classes=["candela-prev"], sizing_mode="stretch_width"
        )
        self.next_button = pn.widgets.Button(
            label="next step ▶",
            css_classes=["candela-next"],
            color="primary",
            sizing_mode="stretch_width",
        )
        self.presenter_toggle = pn.widgets.Checkbox.from_param(
            self.ex.param.presenter,
            label="presenter mode (large type)",
            css_classes=["candela-presenter-toggle"],
        )
        self.help_pane = pn.pane.Markdown(
            HELP,
            css_classes=["candela-lesson-help"],
            sizing_mode="stretch_width",
            styles={"font-size": "12px", "color": "#444"},
        )
        self.keys = Keys(on_key=self._on_key, sizing_mode="stretch_width")

        self.lesson_select.param.watch(self._on_select, "value")
        self.answer_input.param.watch(lambda e: self.check(), "enter_pressed")
        self.check_button.on_click(lambda e: self.check())
        self.prev_button.on_click(lambda e: self.previous())
        self.next_button.on_click(lambda e: self.next())

    def _build_panel(self) -> pn.Column:
        self.question_box = pn.Column(
            self.question_pane,
            pn.Row(self.answer_input, self.check_button, sizing_mode="stretch_width"),
            self.verdict_pane,
            sizing_mode="stretch_width",
            visible=False,
        )
        self.step_box = pn.Column(
            self.header_pane,
            self.text_pane,
            self.question_box,
            pn.Row(self.prev_button, self.next_button, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
            visible=False,
        )
        return pn.Column(
            pn.pane.HTML('<div class="candela-lesson-title">Lessons</div>', stylesheets=[CSS]),
            self.lesson_select,
            self.message_pane,
            self.step_box,
            self.presenter_toggle,
            self.keys,
            self.help_pane,
            css_classes=["candela-classroom"],
            sizing_mode="stretch_width",
        )

    # ------------------------------------------------------------------ lessons

    @staticmethod
    def _read_catalogue() -> tuple[list[L.Lesson], list[str]]:
        # A broken lesson file is reported, not fatal: the others stay usable.
        lessons, problems = [], []
        for path in L.lesson_files():
            try:
                lessons.append(L.load_lesson_file(path))
            except L.LessonError as exc:
                problems.append(f"lesson file skipped: {exc}")
        return lessons, problems

    def _find(self, lesson_id: str) -> L.Lesson:
        for lesson in self._catalogue:
            if lesson.id == lesson_id:
                return lesson
        raise L.LessonNotFound(lesson_id, [lesson.id for lesson in self._catalogue])

    def _on_select(self, event) -> None:
        if self._busy or event.new == self.ex.lesson:
            return
        self.ex.param.update(lesson=event.new, step=1)

    def _on_key(self, key: str) -> None:
        if key == "next":
            self.next()
        elif key == "previous":
            self.previous()

    def _on_lesson_params(self, *events) -> None:
        if self._busy:
            return
        self._show_lesson()

    def _show_lesson(self, message: str = "") -> None:
        """Validate ``lesson`` and ``step``, fall back with a message if bad, show the step."""
        ex = self.ex
        messages = [message] if message else []
        lesson = None
        step = ex.step
        if ex.lesson:
            try:
                lesson = self._find(ex.lesson)
            except L.LessonNotFound as exc:
                messages.append(f"{exc}. Pick one from the list.")
        if lesson is not None and not (isinstance(step, int) and 1 <= step <= len(lesson.steps)):
            messages.append(
                f"lesson {lesson.id!r} has steps 1 to {len(lesson.steps)}, "
                f"not {step}; showing step 1"
            )
            step = 1
        self._busy = True
        try:
            ex.param.update(lesson=lesson.id if lesson else "", step=step if lesson else 1)
            self.lesson_select.value = ex.lesson
        finally:
            self._busy = False
        self._lesson = lesson
        self._show_message("\n".join(messages))
        self._show_step()
        ex._sync_url_out()

    def _show_message(self, text: str) -> None:
        self._message_text = text or None
        body = html.escape(text)
        self.message_pane.object = f'<div class="candela-lesson-message">{body}</div>'

    _message_text: str | None = None

    def _show_step(self) -> None:
        ex = self.ex
        step = self.current_step
        self.verdict = None
        self._answered = None
        self.verdict_pane.object = '<div class="candela-verdict"></div>'
        self.answer_input.param.update(value="", value_input="")
        if step is None:
            self.step_box.visible = False
            ex.fields_pane.visible = True
            return
        lesson = self._lesson
        n = ex.step
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
        question = step.question
        self.question_box.visible = question is not None
        if question is not None:
            self.question_pane.object = (
                f'<div class="candela-question">{html.escape(question.prompt)}</div>'
            )
        self.prev_button.disabled = n <= 1
        self.next_button.disabled = n >= len(lesson.steps)
        self.step_box.visible = True
        # The fields would give the answer away: hidden until it is graded.
        ex.fields_pane.visible = question is None
        if self._at_step(step) and ex.error is not None:
            ex.param.trigger("ops")  # re-run, so a stale message does not stay
        else:
            ex.param.update(shape=step.shape, ops=step.ops)

    def _at_step(self, step: L.Step) -> bool:
        ex = self.ex
        try:
            shape = parse_shape(ex.shape)
        except StateError:
            return False
        return ex.start is None and shape == step.shape and ex.ops == step.ops

    def _show_verdict(self, verdict: L.Verdict) -> None:
        if not verdict.readable:
            kind, mark = "unread", ""
        elif verdict.correct:
            kind, mark = "right", "✓ "
        else:
            kind, mark = "wrong", "✗ "
        worked = (
            f'<div class="candela-worked">{html.escape(verdict.worked)}</div>'
            if verdict.readable
            else ""
        )
        self.verdict_pane.object = (
            f'<div class="candela-verdict candela-verdict-{kind}">'
            f"{mark}{html.escape(verdict.message)}{worked}</div>"
        )

    # ------------------------------------------------------------------ URL

    @staticmethod
    def _served_search() -> str | None:
        loc = pn.state.location
        if loc is None or pn.state.curdoc is None or pn.state.curdoc.session_context is None:
            return None
        return loc.search or ""

    def _read_url(self, search: str) -> str:
        """Set ``lesson``, ``step`` and ``presenter`` from a query; a message for bad values."""
        query = read_query(search)
        messages = []
        updates: dict[str, Any] = {}
        if "lesson" in query:
            updates["lesson"] = query["lesson"].strip()
            updates["step"] = 1
        if "step" in query:
            text = query["step"].strip()
            if text.lstrip("-").isdigit():
                updates["step"] = int(text)
            else:
                messages.append(
                    f"in the URL: step {text!r} is not a number "
                    "(steps count from 1); showing step 1"
                )
        if "presenter" in query:
            flag = read_flag(query["presenter"])
            if flag is None:
                messages.append(
                    f"in the URL: presenter {query['presenter']!r} is not true or false"
                )
            else:
                updates["presenter"] = flag
        if updates:
            self.ex.param.update(**updates)
        return "\n".join(messages)

    def _on_url_change(self, event) -> None:
        # The back and forward buttons: follow a lesson or step that changed.
        if self._busy or getattr(self.ex, "_quiet", False):
            return
        query = read_query(event.new)
        lesson = query.get("lesson", "")
        step = query.get("step", "1")
        if lesson and (lesson, step) != (self.ex.lesson, str(self.ex.step)):
            self.open_query(event.new)

    # ------------------------------------------------------------------ presenter mode

    def _on_presenter(self, event) -> None:
        self._apply_presenter()
        self.ex._sync_url_out()  # the link keeps presenter=true, so a reload keeps the mode

    def _apply_presenter(self) -> None:
        ex = self.ex
        on = bool(ex.presenter)
        root = ex.__panel__()
        classes = [c for c in root.css_classes if c != "candela-presenter"]
        root.css_classes = classes + (["candela-presenter"] if on else [])
        for obj in self._styled_objects():
            sheets = [s for s in obj.stylesheets if s != PRESENTER_CSS]
            obj.stylesheets = sheets + ([PRESENTER_CSS] if on else [])
        ex.lesson_area.width = PRESENTER_PANEL_WIDTH if on else PANEL_WIDTH
        for part in ex.editing_parts:
            part.visible = not on
        ex.set_cell_scale(PRESENTER_SCALE if on else 1.0)

    def _styled_objects(self) -> list[Any]:
        root = self.ex.__panel__()
        found = []
        for layout in (root, self.panel):  # the panel may not be in the page yet
            found += list(layout.select(pn.widgets.Widget)) + list(layout.select(pn.pane.PaneBase))
        found += [w for ws in self.ex.arg_widgets.values() for w in ws]
        seen, unique = set(), []
        for obj in found:
            if id(obj) not in seen and hasattr(obj, "stylesheets"):
                seen.add(id(obj))
                unique.append(obj)
        return unique
