"""The Candela Explorer page: a Panel ``Viewer`` over the state, columns and fields.

``Explorer(shape=(3, 4), ops=".transpose()")`` holds the state in two
parameters; setting either (from Python, the widgets, the typed pipeline or the
URL) re-evaluates it, redraws the Bokeh figures from :mod:`explorer.columns`
and rewrites the fields from :mod:`explorer.fields`. A bad input shows its
message in the ``candela-error`` element and the last good state stays. The
traversal and hover linking run in the browser from ``traverse.mjs``. Serve it
with ``candela-explorer`` or ``panel serve explorer/app.py``.
"""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import parse_qs, quote

import panel as pn
import param
from bokeh.core.properties import value
from bokeh.layouts import column as bk_column
from bokeh.layouts import row as bk_row
from bokeh.models import (
    Button,
    ColumnDataSource,
    CustomJS,
    Div,
    HoverTool,
    InlineStyleSheet,
    Range1d,
    Slider,
)
from bokeh.plotting import figure

from explorer import columns as C
from explorer.fields import UNITS, fields_html, layout_line
from explorer.pipeline import ARG_NAMES, OPS, PipelineError, format_step, parse
from explorer.state import Result, StateError, evaluate, parse_shape, shape_text

TRAVERSE_JS = Path(__file__).with_name("traverse.mjs")
DEFAULT_SHAPE = (3, 4)

CSS = """
:host { font-family: system-ui, sans-serif; }
.candela-fields table { border-collapse: collapse; font-size: 14px; }
.candela-fields th { text-align: right; padding: 2px 10px 2px 0; font-weight: 600;
  white-space: nowrap; vertical-align: top; }
.candela-fields td { padding: 2px 0; vertical-align: top; }
.candela-fields code { font-size: 15px; background: #f3f3f3; padding: 0 4px; border-radius: 3px; }
.candela-adj-stride-work { font-family: ui-monospace, monospace; font-size: 12.5px; color: #333; }
.candela-reason { font-size: 12.5px; color: #444; }
.candela-copy-note { margin-top: 6px; font-size: 13px; color: #8a4b00; }
.candela-error { color: #b00020; font-weight: 600; min-height: 1.2em; font-size: 14px;
  white-space: pre-wrap; }
.candela-steps div { font-family: ui-monospace, monospace; font-size: 12.5px; }
.candela-heading { font-size: 15px; font-weight: 600; margin: 4px 0 0 0; }
.candela-legend { font-size: 12px; color: #444; }
"""


def _swatch(color: str, text: str) -> str:
    return (
        f'<span style="display:inline-block;width:10px;height:10px;background:{color};'
        f'margin:0 3px 0 10px;border-radius:2px"></span>{text}'
    )


def _figure(name: str) -> figure:
    fig = figure(
        name=name,
        width=300,
        height=120,
        x_range=Range1d(-0.5, 0.5),
        y_range=Range1d(-0.5, 0.5),
        toolbar_location=None,
        tools="",
        min_border=4,
        outline_line_color=None,
        # Canvas, not WebGL: without a GPU (software WebGL) every repaint copied the WebGL
        # canvas back, which held the traversal to ~39 paints/s at 4,096 cells; canvas
        # keeps 60 (benchmarks/bench_explorer.py).
        output_backend="canvas",
    )
    fig.axis.visible = False
    fig.grid.visible = False
    return fig


def _outline(fig: figure, source: ColumnDataSource, color: str, width: int) -> None:
    # A cell-sized frame drawn over the cells at the source's x, y (cursor, hover link).
    fig.rect(
        "x",
        "y",
        width=0.94,
        height=0.94,
        source=source,
        fill_alpha=0,
        level="overlay",
        line_color=color,
        line_width=width,
    )


def _set_data(source: ColumnDataSource, data: dict) -> None:
    # Send only the columns that changed: a new walk over the same shape keeps most of them.
    changed = C.changed_columns(source.data, data)
    if changed is data:
        source.data = data
    elif changed:
        source.data.update(changed)


def _fit(
    fig: figure, cols: int, rows: float, top: float = 0.0, max_px: int = 600, scale: float = 1.0
) -> None:
    # Square cells, as large as the space allows within 12..46 px (times `scale`).
    cell = int(scale * max(12, min(46, max_px / max(cols, 1), 520 / max(rows, 1))))
    fig.x_range.start, fig.x_range.end = -0.6, cols - 0.4
    fig.y_range.start, fig.y_range.end = -rows + 0.4, 0.6 + top
    fig.width = int(cell * (cols + 0.2)) + 8
    fig.height = int(cell * (rows + 0.2 + top)) + 8


class Explorer(pn.viewable.Viewer):
    """The explorer page; ``shape`` and ``ops`` hold its state.

    >>> ex = Explorer(shape=(3, 4), ops=".transpose()")
    >>> ex.layout.adj_stride, ex.error
    ((-7, 4), None)
    """

    shape = param.Parameter(
        default=DEFAULT_SHAPE,
        doc="""
        The starting tensor's shape, Tensor.arange(shape): a tuple of ints or text like "3,4".""",
    )
    ops = param.String(
        default="",
        doc="""
        The pipeline in method-chain syntax, e.g. ".transpose().slice(s[0:2, ::-1])".""",
    )
    unit = param.Selector(
        default="elements",
        objects=list(UNITS),
        doc="""
        Strides in elements, or in bytes for this element type.""",
    )
    start = param.Parameter(
        default=None,
        doc="""
        A candela.Tensor to begin from instead of Tensor.arange(shape).""",
    )
    # The classroom (explorer/classroom.py); each is also a key of the URL.
    lesson = param.String(
        default="",
        doc="""
        The id of the lesson on show, e.g. "transpose"; "" for none.""",
    )
    step = param.Integer(
        default=1,
        doc="""
        The step of the lesson on show, counted from 1.""",
    )
    presenter = param.Boolean(
        default=False,
        doc="""
        Presenter mode: large type and cells for a projector.""",
    )

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self._error: str | None = None
        self._result: Result | None = None
        self._history: list[tuple[object, str]] = []
        self._quiet = False  # set while the app itself writes a parameter
        #: How much bigger than normal cells and their labels are drawn (presenter mode).
        self.cell_scale = 1.0
        self._base_widths: dict[str, int] = {}
        self._build_models()
        self._build_widgets()
        self._layout = self._build_layout()
        from explorer.classroom import Classroom  # lessons, presenter mode and keys

        self.classroom = Classroom(self)  # before the URL's shape and ops, which win
        self.lesson_area.objects = [self.classroom.panel]
        self.lesson_area.visible = True
        self._sync_url_in()
        self._evaluate(record=False)
        if self._result is None:  # the given state was bad: show the default under the message
            message = self._error
            self._result = evaluate(DEFAULT_SHAPE, "")
            self._render()
            self._show_error(message)
        self.param.watch(self._on_state, ["shape", "ops", "start"])
        self.param.watch(self._on_unit, ["unit"])

    def _on_unit(self, event) -> None:
        self._render_fields()
        self._sync_url_out()

    # ------------------------------------------------------------------ public state

    def set_cell_scale(self, factor: float) -> None:
        """Draw cells and their labels `factor` times their normal size (1.0 is normal)."""
        if factor != self.cell_scale:
            self.cell_scale = factor
            with pn.io.hold(), pn.io.unlocked():
                # The traversal's Bokeh widgets take no Panel stylesheet: size them here.
                px = round(14 * factor)
                sheet = [
                    InlineStyleSheet(css=f".bk-btn, .bk-slider-title {{ font-size: {px}px; }}")
                ]
                for widget in (*self._traversal_buttons, self.speed_slider, self.frame_slider):
                    base = self._base_widths.setdefault(widget.id, widget.width)
                    widget.width = round(base * factor)
                    widget.stylesheets = sheet if factor != 1 else []
                self.odometer.styles = {"font-size": f"{px}px"}
                self.odometer.height = round(44 * factor)
                self.odometer.width = round(640 * factor)
                if self._result is not None:
                    self._render()

    @property
    def layout(self):
        """The current ``candela.Layout`` (the last good one when the input is bad)."""
        return self._result.layout

    @property
    def tensor(self):
        """The current ``candela.Tensor``."""
        return self._result.tensor

    @property
    def error(self) -> str | None:
        """The message for the current input, or ``None`` when it is good."""
        return self._error

    @property
    def result(self) -> Result:
        """The last good evaluation: every state along the pipeline."""
        return self._result

    def undo(self) -> None:
        """Go back to the state before the last change that worked."""
        try:
            on_screen = parse_shape(self.shape) == self._result.shape and self.ops == self._last_ops
        except StateError:
            on_screen = False
        if self._error is not None and not on_screen:
            # The last edit failed: undo it, back to the state still on screen.
            shape, ops = self._result.shape, self._last_ops
        elif not self._history:
            return
        else:
            shape, ops = self._history.pop()
        self._undoing = True
        try:
            self.param.update(shape=shape, ops=ops)
        finally:
            self._undoing = False

    def reset(self) -> None:
        """Clear the pipeline (kept in the undo history)."""
        self.ops = ""

    def add_step(self, text: str) -> None:
        """Append one step's text (e.g. ``.narrow(0, 1, 2)``) to the pipeline on screen.

        After a bad edit the step goes onto the last good state, the one drawn,
        not onto the text that failed.
        """
        if self._error is None:
            self.ops = self._result.ops + text
        else:
            self.param.update(shape=self._result.shape, ops=self._last_ops + text)

    def __panel__(self):
        return self._layout

    # Jupyter and the offline page live in explorer/jupyter.py and explorer/export.py.
    def _repr_mimebundle_(self, include=None, exclude=None):
        from explorer.jupyter import repr_mimebundle

        return repr_mimebundle(self, include, exclude)

    def save_html(self, path, title: str = "Candela Explorer"):
        """Write this state as one self-contained HTML page (no Python, no network)."""
        from explorer.export import save_html

        return save_html(self, path, title=title)

    # ------------------------------------------------------------------ evaluation

    _undoing = False

    def _on_state(self, *events) -> None:
        if self._quiet:
            return
        with pn.io.hold():  # the whole redraw reaches the browser as one message
            self._evaluate(record=not self._undoing)

    def _evaluate(self, record: bool = True) -> None:
        try:
            result = evaluate(self.shape, self.ops, self.start)
        except StateError as exc:
            self._show_error(str(exc))
            return
        except Exception as exc:  # a bug must not take the page down: say so, keep state
            self._show_error(f"unexpected {type(exc).__name__}: {exc}")
            return
        old = self._result
        if record and old is not None and (old.shape, old.ops) != (result.shape, result.ops):
            self._history.append((old.shape, self._last_ops))
        self._last_ops = self.ops
        self._result = result
        self._error = None
        if self.start is None and self.shape != result.shape:
            self._quiet = True
            try:
                self.shape = result.shape
            finally:
                self._quiet = False
        self._render()
        self._show_error(None)
        self._sync_url_out()

    _last_ops = ""

    def _show_error(self, message: str | None) -> None:
        self._error = message
        text = html.escape(message) if message else ""
        self._error_pane.object = f'<div class="candela-error">{text}</div>'

    # ------------------------------------------------------------------ models

    def _build_models(self) -> None:
        self.logical_source = ColumnDataSource(
            {k: [] for k in C.LOGICAL_KEYS}, name="logical-source"
        )
        self.buffer_source = ColumnDataSource({k: [] for k in C.BUFFER_KEYS}, name="buffer-source")
        self.frames_source = ColumnDataSource(
            {"pos": [], "prev": [], "axis": [], "delta": []}, name="frames-source"
        )
        self.tiles_source = ColumnDataSource({"x": [], "y": [], "text": []}, name="tiles-source")
        self.logical_labels_source = ColumnDataSource(
            {k: [] for k in C.LOGICAL_LABEL_KEYS}, name="logical-labels-source"
        )
        self.buffer_labels_source = ColumnDataSource(
            {k: [] for k in C.BUFFER_LABEL_KEYS}, name="buffer-labels-source"
        )
        self.offset_source = ColumnDataSource({"x": [], "y": []}, name="offset-source")
        # Written by the browser every frame or hover; never sent back to the server.
        self.cursor_logical = ColumnDataSource(
            {"x": [], "y": [], "k": []}, name="cursor-logical-source", syncable=False
        )
        self.cursor_buffer = ColumnDataSource(
            {"x": [], "y": [], "pos": []}, name="cursor-buffer-source", syncable=False
        )
        self.jump_source = ColumnDataSource(
            {k: [] for k in ("x0", "y0", "x1", "y1", "cx0", "cy0", "cx1", "cy1", "color")},
            name="jump-source",
            syncable=False,
        )
        self.hover_logical = ColumnDataSource(
            {"x": [], "y": []}, name="hover-logical-source", syncable=False
        )
        self.hover_buffer = ColumnDataSource(
            {"x": [], "y": []}, name="hover-buffer-source", syncable=False
        )

        lf = self.logical_figure = _figure("logical-figure")
        cells = lf.rect(
            "x",
            "y",
            width=0.94,
            height=0.94,
            source=self.logical_source,
            fill_color="color",
            line_color="white",
            name="logical-cells",
        )
        self._labels = []
        self._labels.append(
            lf.text(
                "x",
                "y",
                text="value_label",
                source=self.logical_labels_source,
                text_align="center",
                text_baseline="middle",
                text_font_size="15px",
                text_color="text_color",
                y_offset=-5,
            )
        )
        self._labels.append(
            lf.text(
                "x",
                "y",
                text="pos_label",
                source=self.logical_labels_source,
                text_align="center",
                text_baseline="middle",
                text_font_size="10px",
                text_color="text_color",
                y_offset=11,
            )
        )
        lf.text(
            "x",
            "y",
            text="text",
            source=self.tiles_source,
            text_font_size="11px",
            text_baseline="middle",
            text_color="#333333",
        )
        _outline(lf, self.hover_logical, C.HOVER, 3)
        _outline(lf, self.cursor_logical, C.CURSOR, 4)

        bf = self.buffer_figure = _figure("buffer-figure")
        bcells = bf.rect(
            "x",
            "y",
            width=0.94,
            height=0.94,
            source=self.buffer_source,
            fill_color="color",
            fill_alpha="alpha",
            line_color="white",
            name="buffer-cells",
        )
        self._labels.append(
            bf.text(
                "x",
                "y",
                text="value_label",
                source=self.buffer_labels_source,
                text_align="center",
                text_baseline="middle",
                text_font_size="14px",
                text_color="text_color",
                y_offset=2,
            )
        )
        self._labels.append(
            bf.text(
                "x_left",
                "y_top",
                text="pos_label",
                source=self.buffer_labels_source,
                text_align="left",
                text_baseline="top",
                text_font_size="9px",
                text_color="text_color",
            )
        )
        self._labels.append(
            bf.text(
                "x_right",
                "y_bottom",
                text="reads_label",
                source=self.buffer_labels_source,
                text_align="right",
                text_baseline="bottom",
                text_font_size="10px",
                text_color="text_color",
                text_font_style="bold",
            )
        )
        # Each label's font size at scale 1; _render scales them with the cells.
        self._label_px = {
            r.id: float(r.glyph.text_font_size.get("value", r.glyph.text_font_size)[:-2])
            if isinstance(r.glyph.text_font_size, dict)
            else float(r.glyph.text_font_size[:-2])
            for r in self._labels
        }
        bf.scatter(
            "x",
            "y",
            source=self.offset_source,
            marker="triangle",
            size=12,
            fill_color=C.OFFSET,
            line_color=C.OFFSET,
        )
        bf.text(
            "x",
            "y",
            text=value("offset"),
            source=self.offset_source,
            text_align="left",
            text_baseline="middle",
            text_font_size="10px",
            text_color=C.OFFSET,
            x_offset=8,
        )
        _outline(bf, self.hover_buffer, C.HOVER, 3)
        _outline(bf, self.cursor_buffer, C.CURSOR, 4)
        bf.bezier(
            "x0",
            "y0",
            "x1",
            "y1",
            "cx0",
            "cy0",
            "cx1",
            "cy1",
            source=self.jump_source,
            line_color="color",
            line_width=2.5,
            level="overlay",
        )
        bf.scatter(
            "x1",
            "y1",
            source=self.jump_source,
            marker="inverted_triangle",
            size=9,
            fill_color="color",
            line_color="color",
            level="overlay",
        )

        self.frame_slider = Slider(
            start=0,
            end=1,
            value=0,
            step=1,
            title="frame",
            name="frame-slider",
            syncable=False,
            width=420,
        )
        self.speed_slider = Slider(
            start=1,
            end=60,
            value=3,
            step=1,
            title="speed (frames/s)",
            name="speed-slider",
            syncable=False,
            width=200,
        )
        self.odometer = Div(
            text="",
            name="odometer",
            syncable=False,
            width=640,
            height=44,
            styles={"font-size": "14px"},
        )
        buttons = {
            "back": Button(label="◀ step", name="back-button", width=70),
            "play": Button(label="▶ play", name="play-button", width=70, button_type="primary"),
            "pause": Button(label="❚❚ pause", name="pause-button", width=80),
            "forward": Button(label="step ▶", name="forward-button", width=70),
        }
        args = dict(
            logical=self.logical_source,
            buffer=self.buffer_source,
            frames=self.frames_source,
            cursor_logical=self.cursor_logical,
            cursor_buffer=self.cursor_buffer,
            jump=self.jump_source,
            odometer=self.odometer,
            slider=self.frame_slider,
            speed=self.speed_slider,
            hover_logical=self.hover_logical,
            hover_buffer=self.hover_buffer,
            forward=C.FORWARD,
            backward=C.BACKWARD,
        )

        def js(action: str) -> CustomJS:
            return CustomJS.from_file(TRAVERSE_JS, action=action, **args)

        for action, button in buttons.items():
            button.js_on_click(js(action))
        self.frame_slider.js_on_change("value", js("scrub"))
        self.speed_slider.js_on_change("value", js("speed"))
        self.frames_source.js_on_change("data", js("reset"))
        lf.add_tools(
            HoverTool(
                renderers=[cells],
                callback=js("hover-logical"),
                tooltips=[("index", "@index"), ("value", "@value"), ("position", "@pos")],
            )
        )
        bf.add_tools(
            HoverTool(
                renderers=[bcells],
                callback=js("hover-buffer"),
                tooltips=[("position", "@pos"), ("value", "@value"), ("reads", "@reads")],
            )
        )
        self._traversal_buttons = list(buttons.values())
        self.traversal = bk_column(
            bk_row(*buttons.values(), self.speed_slider),
            self.frame_slider,
            self.odometer,
            name="traversal",
        )

    # ------------------------------------------------------------------ widgets

    def _build_widgets(self) -> None:
        self._error_pane = pn.pane.HTML(
            '<div class="candela-error"></div>',
            stylesheets=[CSS],
            sizing_mode="stretch_width",
            margin=(0, 10),
        )
        self.shape_input = pn.widgets.TextInput(
            label="shape (sizes, comma-separated)",
            value=self._shape_widget_text(),
            css_classes=["candela-shape-input"],
            width=190,
        )
        self.ops_input = pn.widgets.TextInput(
            label="pipeline (press Enter to apply)",
            value=self.ops,
            placeholder=".transpose().slice(s[0:2, ::-1])",
            css_classes=["candela-ops-input"],
            sizing_mode="stretch_width",
            min_width=300,
        )
        self.undo_button = pn.widgets.Button(label="undo", css_classes=["candela-undo"], width=70)
        self.reset_button = pn.widgets.Button(
            label="reset", css_classes=["candela-reset"], width=70
        )
        self.unit_select = pn.widgets.Select.from_param(
            self.param.unit, label="strides in", width=120
        )

        self.op_choice = pn.widgets.RadioButtonGroup(
            label="operation", options=list(OPS), value="transpose", visible=False
        )
        self.op_buttons = {
            op: pn.widgets.Button(
                label=op,
                css_classes=["candela-op", f"candela-op-{op}"],
                color="primary" if op == "transpose" else "light",
                margin=(2, 3),
            )
            for op in OPS
        }
        for op, button in self.op_buttons.items():
            button.on_click(lambda e, op=op: setattr(self.op_choice, "value", op))
        self.arg_widgets = {
            "view": [pn.widgets.TextInput(label="shape", value="4, 3", width=120)],
            "slice": [pn.widgets.TextInput(label="ranges: s[ ... ]", value="0:2, ::-1", width=160)],
            "narrow": [
                pn.widgets.IntInput(label=n, value=v, width=80)
                for n, v in zip(ARG_NAMES["narrow"], (0, 0, 1))
            ],
            "transpose": [
                pn.widgets.TextInput(label="dim0, dim1 (empty: all axes)", value="", width=200)
            ],
            "transpose_axes": [pn.widgets.TextInput(label="axes", value="1, 0", width=120)],
            "broadcast": [pn.widgets.TextInput(label="shape", value="2, 3, 4", width=120)],
            "rotate_axis_innermost": [pn.widgets.IntInput(label="axis", value=0, width=80)],
            "as_contiguous": [],
        }
        for op, widgets in self.arg_widgets.items():
            for i, w in enumerate(widgets):
                w.css_classes = [f"candela-arg-{op}-{i}"]
        self.arg_row = pn.Row(*self.arg_widgets["transpose"])
        self.add_button = pn.widgets.Button(
            label="add step",
            color="primary",
            css_classes=["candela-add-step"],
            width=90,
            align="end",
        )
        self.step_select = pn.widgets.Select(
            label="show step", options={}, width=260, css_classes=["candela-step-select"]
        )
        self.step_pane = pn.pane.HTML(
            "", stylesheets=[CSS], css_classes=["candela-steps"], sizing_mode="stretch_width"
        )
        self.fields_pane = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        self.summary_pane = pn.pane.Markdown(
            "", visible=False, css_classes=["candela-summary"], sizing_mode="stretch_width"
        )
        self.buffer_heading = pn.pane.HTML("", stylesheets=[CSS])
        self.logical_heading = pn.pane.HTML("", stylesheets=[CSS])

        self.shape_input.param.watch(self._on_shape_input, "value")
        self.ops_input.param.watch(self._on_ops_input, "value")
        self.param.watch(self._on_params_to_widgets, ["shape", "ops"])
        self.undo_button.on_click(lambda e: self.undo())
        self.reset_button.on_click(lambda e: self.reset())
        self.add_button.on_click(lambda e: self._on_add())
        self.op_choice.param.watch(self._on_op_choice, "value")
        self.step_select.param.watch(lambda e: self._render_step(), "value")

    def _shape_widget_text(self) -> str:
        if isinstance(self.shape, str):
            return self.shape
        try:
            return shape_text(parse_shape(self.shape))
        except StateError:
            return str(self.shape)

    def _on_shape_input(self, event) -> None:
        try:
            same = parse_shape(event.new) == parse_shape(self.shape)
        except StateError:
            same = False
        if not same:
            self.shape = event.new

    def _on_ops_input(self, event) -> None:
        if event.new != self.ops:
            self.ops = event.new

    def _on_params_to_widgets(self, *events) -> None:
        text = self._shape_widget_text()
        try:
            same = parse_shape(self.shape_input.value) == parse_shape(self.shape)
        except StateError:
            same = self.shape_input.value == text
        if not same:
            self.shape_input.value = text
        if self.ops_input.value != self.ops:
            self.ops_input.value = self.ops

    def _on_op_choice(self, event) -> None:
        self.arg_row.objects = list(self.arg_widgets[event.new])
        for op, button in self.op_buttons.items():
            button.color = "primary" if op == event.new else "light"

    def step_text(self, op: str | None = None) -> str:
        """The step the op buttons and argument widgets describe, e.g. ``.narrow(0, 0, 1)``.

        Widget text is only pasted into the pipeline text; ``parse`` checks it, so
        nothing typed into an argument box is evaluated either.
        """
        op = op or self.op_choice.value
        values = [w.value for w in self.arg_widgets[op]]
        if op in ("view", "broadcast", "transpose_axes"):
            inner = str(values[0]).strip().strip("()[]").strip().rstrip(",")
            args = f"({inner},)"
        elif op == "slice":
            args = "s[" + str(values[0]).strip().removeprefix("s[").removesuffix("]") + "]"
        elif op == "transpose":
            args = str(values[0]).strip().strip("()")
        else:
            args = ", ".join(str(v) for v in values)
        return f".{op}({args})"

    def _on_add(self) -> None:
        text = self.step_text()
        try:
            (step,) = parse(text)
            text = format_step(step)
        except (PipelineError, ValueError) as exc:
            self._show_error(f"{op_label(self.op_choice.value)} arguments: {exc}")
            return
        self.add_step(text)

    # ------------------------------------------------------------------ layout

    def _build_layout(self):
        from explorer.export import download_button  # the offline page of the current state

        self.download_button = download_button(self, align="end")
        legend = pn.pane.HTML(
            '<div class="candela-legend">'
            + _swatch(C.CURSOR, "current element")
            + _swatch(C.FORWARD, "forward jump")
            + _swatch(C.BACKWARD, "backward jump")
            + _swatch(C.OFFSET, "offset")
            + _swatch(C.HOVER, "hover link")
            + _swatch(C.GREY, "not read")
            + "</div>",
            stylesheets=[CSS],
        )
        builder = pn.Column(
            pn.pane.HTML('<div class="candela-heading">add an operation</div>', stylesheets=[CSS]),
            pn.Column(pn.FlexBox(*self.op_buttons.values()), width=540),
            pn.Row(self.arg_row, self.add_button),
        )
        step_view = pn.Column(pn.Row(self.step_select), self.step_pane)
        controls = pn.Column(
            pn.Row(self.shape_input, self.unit_select, self.download_button),
            pn.Row(
                self.ops_input, self.undo_button, self.reset_button, sizing_mode="stretch_width"
            ),
            builder,
            self._error_pane,
            pn.pane.HTML('<div class="candela-heading">fields</div>', stylesheets=[CSS]),
            self.fields_pane,
            step_view,
            width=560,
        )
        #: What presenter mode hides: the editing tools a projected lesson does not need
        #: (the shape and pipeline stay, and typing in them still works).
        self.editing_parts = [
            self.unit_select,
            self.download_button,
            self.undo_button,
            self.reset_button,
            builder,
            step_view,
        ]
        #: The lesson panel lives here: the page's right-hand column.
        self.lesson_area = pn.Column(visible=False, width=320)
        views = pn.Column(
            self.logical_heading,
            pn.pane.Bokeh(self.logical_figure),
            self.buffer_heading,
            pn.pane.Bokeh(self.buffer_figure),
            legend,
            pn.pane.Bokeh(self.traversal),
            self.summary_pane,
        )
        self._views = views
        title = pn.pane.HTML(
            '<div style="font-size:22px;font-weight:700">Candela Explorer '
            '<span style="font-weight:400;font-size:14px;color:#555">— how a tensor\'s '
            "elements sit in memory</span></div>",
            stylesheets=[CSS],
        )
        return pn.Column(
            title, pn.Row(controls, views, self.lesson_area), css_classes=["candela-explorer"]
        )

    # ------------------------------------------------------------------ rendering

    def _render(self) -> None:
        result = self._result
        cols = C.columns_for(result.tensor)
        self._columns = cols
        summary = bool(cols.summary)
        grid = cols.grid
        with pn.io.unlocked():
            _set_data(self.logical_source, cols.logical)
            _set_data(self.buffer_source, cols.buffer)
            _set_data(self.logical_labels_source, C.pad_rows(cols.logical_labels, C.LABEL_LIMIT))
            _set_data(self.buffer_labels_source, C.pad_rows(cols.buffer_labels, C.LABEL_LIMIT))
            _set_data(self.tiles_source, cols.tiles)
            self.frames_source.data = cols.frames  # always: its change restarts the traversal
            n = len(cols.frames["pos"])
            self.frame_slider.end = max(n - 1, 1)
            self.frame_slider.disabled = n <= 1
            self.frame_slider.value = 0
            off = result.layout.offset
            if not summary and len(cols.buffer["pos"]) and result.layout.len:
                self.offset_source.data = {
                    "x": [cols.buffer["x"][off]],
                    "y": [cols.buffer["y"][off] - 0.62],
                }
            else:
                self.offset_source.data = {"x": [], "y": []}
            # Frame 0, so the page shows a cursor before any script runs.
            if n:
                p = int(cols.frames["pos"][0])
                self.cursor_logical.data = {
                    "x": [cols.logical["x"][0]],
                    "y": [cols.logical["y"][0]],
                    "k": [0],
                }
                self.cursor_buffer.data = {
                    "x": [cols.buffer["x"][p]],
                    "y": [cols.buffer["y"][p]],
                    "pos": [p],
                }
            else:
                self.cursor_logical.data = {"x": [], "y": [], "k": []}
                self.cursor_buffer.data = {"x": [], "y": [], "pos": []}
            self.jump_source.data = {k: [] for k in self.jump_source.data}
            self.hover_logical.data = {"x": [], "y": []}
            self.hover_buffer.data = {"x": [], "y": []}
            self.odometer.text = self._odometer_start(cols)
            for renderer in self._labels:
                renderer.visible = cols.labels
                size = f"{round(self._label_px[renderer.id] * self.cell_scale)}px"
                if renderer.glyph.text_font_size != size:
                    renderer.glyph.text_font_size = size
            if not summary:
                top = 0.9 if len(grid.shape) > 2 else 0.0
                _fit(self.logical_figure, grid.width, grid.height, top=top, scale=self.cell_scale)
                _fit(
                    self.buffer_figure,
                    cols.buffer_cols,
                    (cols.buffer_rows - 1) * C.BUFFER_ROW_PITCH + 1,  # the lane's height in cells
                    top=1.2,
                    max_px=640,
                    scale=self.cell_scale,
                )
                self.buffer_figure.y_range.start -= 0.5  # room for the offset marker
        for pane in self._views.objects[:6]:
            pane.visible = not summary
        self.summary_pane.visible = summary
        self.summary_pane.object = self._summary_text(cols.summary) if summary else ""
        self.logical_heading.object = (
            '<div class="candela-heading">logical grid '
            f'<span class="candela-legend">shape {tuple(result.layout.shape)}: each cell shows '
            "its value and @ the buffer position it reads</span></div>"
        )
        copy = (
            " — a packed copy made by as_contiguous; positions index the copy"
            if result.copied
            else ""
        )
        self.buffer_heading.object = (
            f'<div class="candela-heading">memory buffer{copy} '
            f'<span class="candela-legend">{len(result.tensor.buffer)} cells, '
            f"{cols.buffer_cols} per row; ×n: read n times</span></div>"
        )
        self._render_fields()
        self._render_steps()

    def _odometer_start(self, cols) -> str:
        n = len(cols.frames["pos"])
        if not n:
            return '<span class="candela-odometer">no elements to walk</span>'
        p = int(cols.frames["pos"][0])
        return (
            f'<span class="candela-odometer">element 1 of {n} · index '
            f'<b class="candela-odometer-index">{cols.logical["index"][0]}</b> · '
            f"start at the offset: position <b>{p}</b></span>"
        )

    def _summary_text(self, s: dict) -> str:
        if not s.get("elements"):
            return f"**Nothing to walk**: 0 elements over a buffer of {s.get('buffer', 0):,}."
        deltas = ", ".join(f"{d:+d} ×{c:,}" for d, c in list(s["deltas"].items())[:8])
        return (
            f"**Summary.** {s['elements']:,} elements over a buffer of {s['buffer']:,} cells "
            f"is more than the {C.DETAIL_LIMIT:,} this page draws cell by cell, so here are "
            "the numbers instead.\n\n"
            f"- the walk starts at position {s['first']:,} and stays within "
            f"{s['min']:,}..{s['max']:,}\n"
            f"- {s['distinct']:,} buffer cells are read, {s['unread']:,} are not; the most-read "
            f"cell is read {s['max_reads']:,} times\n"
            f"- {s['backward']:,} steps jump backwards\n"
            f"- deltas taken (adj_stride of the axis that steps): {deltas}\n"
        )

    def _render_fields(self) -> None:
        self.fields_pane.object = fields_html(
            self._result.layout, self.unit, copied=self._result.copied
        )

    def _render_steps(self) -> None:
        steps = self._result.steps
        options = {f"{i}. {format_step(s)}": i for i, s in enumerate(steps, 1)}
        if not options:
            options = {"(no steps yet)": 0}
        self.step_select.options = options
        last = max(options.values())
        if self.step_select.value != last:
            self.step_select.value = last
        else:
            self._render_step()

    def _render_step(self) -> None:
        i = self.step_select.value or 0
        states = self._result.states
        if not i or i >= len(states):
            self.step_pane.object = (
                '<div class="candela-steps"><div>no steps yet: pick an operation and press '
                "add step, or type a pipeline</div></div>"
            )
            return
        before, after = states[i - 1].layout, states[i].layout
        step = format_step(self._result.steps[i - 1])
        self.step_pane.object = (
            '<div class="candela-steps">'
            f'<div class="candela-step-before">before: {html.escape(layout_line(before))}</div>'
            f'<div class="candela-step-text">{html.escape(step)}</div>'
            f'<div class="candela-step-after">after:  {html.escape(layout_line(after))}</div>'
            "</div>"
        )

    # ------------------------------------------------------------------ URL

    def _sync_url_in(self) -> None:
        loc = pn.state.location
        if loc is None or pn.state.curdoc is None or pn.state.curdoc.session_context is None:
            self._url = None
            return
        self._url = loc
        query = parse_qs((loc.search or "").lstrip("?"))
        messages = []
        if "shape" in query:
            try:
                parse_shape(query["shape"][0])
                self.shape = query["shape"][0]
            except StateError as exc:
                messages.append(f"in the URL: {exc}; showing the default shape")
        if "ops" in query:
            try:
                evaluate(self.shape if not messages else DEFAULT_SHAPE, query["ops"][0], self.start)
                self.ops = query["ops"][0]
            except StateError as exc:
                messages.append(f"in the URL: {exc}; showing the pipeline without it")
        if "unit" in query:
            unit = query["unit"][0]
            if unit in UNITS:
                self.unit = unit
            else:
                messages.append(
                    f"in the URL: unit `{unit}` is not one of {', '.join(UNITS)}; "
                    "showing strides in elements"
                )
        self._url_error = "\n".join(messages) or None
        loc.param.watch(self._on_url_change, "search")

    _url_error = None

    def _on_url_change(self, event) -> None:
        if self._quiet:
            return
        query = parse_qs((event.new or "").lstrip("?"))
        shape = query.get("shape", [None])[0]
        ops = query.get("ops", [""])[0]
        if shape is None:
            return
        if (shape, ops) != (shape_text(self._result.shape), self.ops):
            self.param.update(shape=shape, ops=ops)

    def _sync_url_out(self) -> None:
        if getattr(self, "_url", None) is None:
            return
        search = (
            "?shape="
            + quote(shape_text(self._result.shape), safe=",")
            + "&ops="
            + quote(self.ops, safe=",.()[]:-")
        )
        if self.unit != "elements":
            search += "&unit=" + self.unit
        if getattr(self, "classroom", None) is not None:  # lesson, step, presenter
            search = self.classroom.url_search(search)
        if self._url.search != search:
            self._quiet = True
            try:
                self._url.search = search
            finally:
                self._quiet = False


def op_label(op: str) -> str:
    return f".{op}()"


def app() -> pn.viewable.Viewable:
    """A fresh page per session (for ``pn.serve`` and the command line)."""
    ex = Explorer()
    if ex._url_error:
        ex._show_error(ex._url_error)
    return ex.__panel__()


if __name__.startswith("bokeh"):  # `panel serve explorer/app.py`
    pn.extension()
    app().servable(title="Candela Explorer")
