"""The editing tools of the page: the shape and pipeline boxes, the op chooser, undo, steps.

:class:`Editor` turns what a person types or clicks into changes of an
:class:`~explorer.state.ExplorerState` and keeps its boxes showing that state.
The op chooser and the argument boxes come from the op registry
(:mod:`explorer.ops`): an argument box's text is only pasted into the
pipeline text, which the parser checks, so nothing typed is evaluated. The
argument boxes of an op are built the first time it is chosen.
"""

from __future__ import annotations

import html

import panel as pn
import param

from .enter_box import EnterBox
from .fields import UNITS, layout_line
from .ops import REGISTRY, step_note
from .pipeline import PipelineError, format_step, parse
from .state import ExplorerState, StateError, parse_shape, shape_text
from .style import CONTROL_CSS, HEADING_CLASSES, for_pane
from .text_pane import TextPane

#: The op chosen when the page opens.
FIRST_OP = "transpose"
#: What the pipeline box says where no Python is behind the page (an nbconvert export).
NO_PYTHON_NOTE = (
    "No Python behind this page: editing needs a running notebook or candela-explorer. "
    "The walk and hover still work."
)


class Editor:
    """The editing tools over one state; ``panel`` is their column on the page."""

    def __init__(self, state: ExplorerState) -> None:
        self.state = state
        self.arg_widgets: dict[str, list] = {}
        self._build()
        state.watch_batched(self._show_state, ["shape", "ops", "result", "unit"])
        self._show_state()

    # ------------------------------------------------------------------ building

    def _build(self) -> None:
        st = self.state
        self.shape_input = EnterBox(
            label="shape (e.g. 3,4)",
            value=self._shape_text(),
            css_classes=["candela-shape-input"],
            width=130,  # the shape, the unit and the download side by side in 420 px
            disabled=st.start is not None,
        )
        self.ops_input = EnterBox(
            label="pipeline (press Enter to apply)",
            value=st.ops,
            placeholder=".transpose().slice(s[0:2, ::-1])",
            css_classes=["candela-ops-input"],
            sizing_mode="stretch_width",
            min_width=220,  # beside undo and reset in 420 px
        )
        self.unit_select = pn.widgets.Select.from_param(
            st.param.unit, label="strides in", options=list(UNITS), width=110,
            css_classes=["candela-unit-select"],
        )  # fmt: skip
        self.undo_button = pn.widgets.Button(
            label="undo", css_classes=["candela-undo"], width=64, align="end"
        )
        self.reset_button = pn.widgets.Button(
            label="reset", css_classes=["candela-reset"], width=64, align="end"
        )
        self.op_choice = pn.widgets.RadioButtonGroup(
            options=list(REGISTRY),
            value=FIRST_OP,
            color="light",
            variant="outline",
            css_classes=["candela-ops"],
            stylesheets=[":host .bk-btn-group { flex-wrap: wrap; } .bk-btn { flex: 0 0 auto; }"],
            sizing_mode="stretch_width",
        )
        self.op_help = TextPane(
            "",
            stylesheets=for_pane("candela-op-help", "candela-legend"),
            sizing_mode="stretch_width",
        )
        self.arg_row = pn.Row()
        self.add_button = pn.widgets.Button(
            label="add step", color="primary", css_classes=["candela-add-step"],
            width=90, align="end",
        )  # fmt: skip
        self.step_select = pn.widgets.Select(
            label="show step", options={}, width=260, css_classes=["candela-step-select"]
        )
        self.step_pane = TextPane(
            "",
            stylesheets=for_pane("candela-steps"),
            css_classes=["candela-steps"],
            sizing_mode="stretch_width",
        )
        #: The op chooser and its argument boxes, and the step list: parts of the controls
        #: column, each on its own (a column around them would be a model more a session).
        self.builder = [
            TextPane(
                '<div class="candela-heading">add an operation</div>',
                stylesheets=for_pane(*HEADING_CLASSES),
            ),
            self.op_choice,
            self.op_help,
            self.arg_row,  # the op's argument boxes and the add button
        ]
        self.step_view = [self.step_select, self.step_pane]
        self._choose(FIRST_OP)

        self.shape_input.param.watch(self._on_shape_input, "value")
        self.ops_input.param.watch(self._on_ops_input, "value")
        self.undo_button.on_click(lambda e: st.undo())
        self.reset_button.on_click(lambda e: st.reset())
        self.add_button.on_click(lambda e: self.add())
        self.op_choice.param.watch(lambda e: self._choose(e.new), "value")
        self.step_select.param.watch(lambda e: self._show_step(), "value")

    @property
    def editing_parts(self) -> list:
        """What presenter mode hides: the tools a projected lesson does not need."""
        return [
            self.shape_input,
            self.ops_input,
            self.unit_select,
            self.undo_button,
            self.reset_button,
            *self.builder,
            *self.step_view,
        ]

    def widgets_for(self, op: str) -> list:
        """The argument boxes of ``op``, built the first time they are asked for."""
        if op not in self.arg_widgets:
            self.arg_widgets[op] = [
                EnterBox(
                    label=f"{arg.name}{' (optional)' if arg.optional else ''}",
                    value=arg.default,
                    width=150 if arg.kind != "int" else 80,
                    css_classes=[f"candela-arg-{op}-{i}"],
                    stylesheets=[CONTROL_CSS],
                )
                for i, arg in enumerate(REGISTRY[op].args)
            ]
        return self.arg_widgets[op]

    # ------------------------------------------------------------------ actions

    def step_text(self, op: str | None = None) -> str:
        """The step the op chooser and argument boxes describe, e.g. ``.narrow(0, 0, 1)``."""
        op = op or self.op_choice.value
        return REGISTRY[op].call_text([w.value for w in self.widgets_for(op)])

    def add(self) -> None:
        """Append the described step to the pipeline, or say what is wrong with its arguments."""
        op = self.op_choice.value
        try:
            (step,) = parse(self.step_text())
        except PipelineError as exc:
            # Parsed alone it is step 1; in the pipeline it comes after the steps on show.
            number = len(parse(self.state.result.ops)) + 1 if exc.step else 0
            exc = PipelineError(number, exc.text, exc.reason)
            self.state.show_error(f"{REGISTRY[op].signature} arguments: {exc}")
            return
        except ValueError as exc:
            self.state.show_error(f"{REGISTRY[op].signature} arguments: {exc}")
            return
        self.state.add_step(format_step(step))

    def _choose(self, op: str) -> None:
        spec = REGISTRY[op]
        self.arg_row.objects = [*self.widgets_for(op), self.add_button]
        foreign = " · ".join(x for x in (f"NumPy: {spec.numpy}", f"PyTorch: {spec.torch}") if x)
        self.op_help.object = (
            f'<div class="candela-op-help"><code>{html.escape(spec.signature)}</code> '
            f"{html.escape(spec.help)}<br><span class=candela-legend>{html.escape(foreign)}"
            "</span></div>"
        )

    # ------------------------------------------------------------------ boxes <-> state

    def _shape_text(self) -> str:
        shape = self.state.shape
        if isinstance(shape, str):
            return shape
        try:
            return shape_text(parse_shape(shape))
        except StateError:
            return str(shape)

    def _on_shape_input(self, event) -> None:
        try:
            same = parse_shape(event.new) == parse_shape(self.state.shape)
        except StateError:
            same = False
        if not same:
            try:
                with self.state.typed():  # a bad shape is shown under the boxes
                    self.state.shape = event.new
            except StateError as exc:  # a start tensor fixes the shape: say so, put it back
                self.state.show_error(str(exc))
                self.shape_input.value = self._shape_text()

    def _on_ops_input(self, event) -> None:
        if event.new != self.state.ops:
            with self.state.typed():  # a bad pipeline is shown under the boxes
                self.state.ops = event.new

    def _show_state(self, *events) -> None:
        try:
            same = parse_shape(self.shape_input.value) == parse_shape(self.state.shape)
        except StateError:
            same = self.shape_input.value == self._shape_text()
        if not same:
            self.shape_input.value = self._shape_text()
        if self.ops_input.value != self.state.ops:
            self.ops_input.value = self.state.ops
        if not events or any(e.name in ("result", "unit") for e in events):
            self._show_steps()

    def _show_steps(self) -> None:
        steps = self.state.result.steps
        options = {f"{i}. {format_step(s)}": i for i, s in enumerate(steps, 1)}
        if not options:
            options = {"(no steps yet)": 0}
        last = max(options.values())
        changes = {"options": options, "value": last}
        changes = {k: v for k, v in changes.items() if getattr(self.step_select, k) != v}
        # One update: the step is shown once (by the value's watcher, or here), and a new
        # unit, which keeps the steps, sends the page no message for the list. Set in one
        # batch of watchers, not with ``param.update``, which first reads all 30-odd of
        # the list's parameters to be able to undo the change (~0.3 ms an edit).
        with param.parameterized.batch_call_watchers(self.step_select):
            for name, value in changes.items():
                setattr(self.step_select, name, value)
        if "value" not in changes:
            self._show_step()

    def show_steps_now(self) -> None:
        """Show the chosen step's layouts again (a question waited, or was answered)."""
        self._show_step()

    def _show_step(self) -> None:
        i = self.step_select.value or 0
        result = self.state.result
        if self.state.concealed:  # a step's layouts hold the answer: not sent while it waits
            self.step_pane.object = (
                '<div class="candela-steps"><div>each step\'s layouts show once the question '
                "is answered</div></div>"
            )
            return
        if not i or i >= len(result.states):
            self.step_pane.object = (
                '<div class="candela-steps"><div>no steps yet: pick an operation and press '
                "add step, or type a pipeline</div></div>"
            )
            return
        before, after = result.states[i - 1].layout, result.states[i].layout
        unit = self.state.unit
        step = result.steps[i - 1]
        note = step_note(step, before)  # where NumPy and PyTorch would disagree
        self.step_pane.object = (
            '<div class="candela-steps">'
            f'<div class="candela-step-before">before: {html.escape(layout_line(before, unit))}'
            "</div>"
            f'<div class="candela-step-text">{html.escape(format_step(step))}</div>'
            + (f'<div class="candela-step-note">{html.escape(note)}</div>' if note else "")
            + f'<div class="candela-step-after">after:  {html.escape(layout_line(after, unit))}'
            "</div></div>"
        )
