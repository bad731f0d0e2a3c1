"""The two figures and the traversal controls: Bokeh models, and drawing columns into them.

:class:`Figures` builds, for one view of one explorer, the logical grid and the
memory buffer (sources, glyphs), the traversal controls (play/pause, step,
speed, scrub, the odometer) and the ``CustomJS`` callbacks that run
``traverse.mjs`` in the browser. :meth:`Figures.render` draws a
:class:`~explorer.columns.Columns` into them; nothing here knows about
widgets, the URL or the classroom.

Each view gets its own models, so any number of explorers (or views of one)
can share a page; the browser keeps each traversal's play state on that
view's own frames source, never in a global keyed by model ids.
"""

from __future__ import annotations

from pathlib import Path

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

from . import columns as C
from .fields import DTYPE_BYTES

TRAVERSE_JS = Path(__file__).with_name("traverse.mjs")

#: Cell sizes, in px at scale 1: as large as the space allows within these.
MIN_CELL, MAX_CELL = 16, 46
#: The widest a figure is drawn at scale 1: both fit a 950 px notebook output.
LOGICAL_MAX_PX, BUFFER_MAX_PX = 560, 600

#: Label glyphs: (text column, x, y, align, baseline, px at scale 1, y_offset, bold,
#: the smallest cell in px the label shows in). Labels shrink with their cells and drop
#: below that size (hover still tells), so they never overlap.
_LOGICAL_LABELS = (
    ("value_label", "x", "y", "center", "middle", 15, -5, False, 24),
    ("pos_label", "x", "y", "center", "middle", 10, 11, False, 36),
)
_BUFFER_LABELS = (
    ("value_label", "x", "y", "center", "middle", 14, 2, False, 22),
    ("pos_label", "x_left", "y_top", "left", "top", 9, 0, False, 34),
    ("reads_label", "x_right", "y_bottom", "right", "bottom", 10, 0, True, 30),
)
#: A label's font is at most this share of its cell's size.
_FONT_SHARE = {"value_label": 0.42, "pos_label": 0.26, "reads_label": 0.3}


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
        x_axis_type=None,  # no axes, grids, tickers or formatters: models nobody sees
        y_axis_type=None,
        # Canvas, not WebGL: without a GPU (software WebGL) every repaint copied the WebGL
        # canvas back, which held the traversal to ~39 paints/s at 4,096 cells; canvas
        # keeps 60 (benchmarks/bench_explorer.py).
        output_backend="canvas",
    )
    return fig


#: The rings of a frame, outermost first: (colour or None for the mark's own, extra width).
#: Black and white together stand out on every cell colour (at least 4.5:1 for one of
#: them); the mark's colour inside says which mark it is.
FRAME_RINGS = (("#000000", 4), ("#FFFFFF", 2), (None, 0))


def _frame(fig: figure, source: ColumnDataSource, color: str, width: float) -> list:
    # A cell-sized frame over the cells at the source's x, y (the cursor, a hover link).
    return [
        fig.rect(
            "x",
            "y",
            width=0.97,
            height=0.97,
            source=source,
            fill_alpha=0,
            level="overlay",
            line_color=ring or color,
            line_width=width + extra,
        )
        for ring, extra in FRAME_RINGS
    ]


def _set_data(source: ColumnDataSource, data: dict) -> None:
    # Send only the columns that changed: a new walk over the same shape keeps most of them.
    changed = C.changed_columns(source.data, data)
    if changed is data:
        source.data = data
    elif changed:
        source.data.update(changed)


def _show(renderer, visible: bool, font: float) -> None:
    # Set a text glyph's visibility and font size, sending only what changed.
    size = f"{int(font * 2) / 2:g}px"  # whole or half pixels, never larger than asked
    if renderer.visible != visible:
        renderer.visible = visible
    if visible and renderer.glyph.text_font_size != size:
        renderer.glyph.text_font_size = size


def fit(fig: figure, cols: int, rows: float, top: float, max_px: int, scale: float) -> float:
    """Square cells, as large as ``max_px`` allows within MIN_CELL..MAX_CELL (times ``scale``).

    Returns the cell size in px. A grid too wide for ``max_px`` at MIN_CELL is drawn
    wider, and scrolls inside its panel.
    """
    cell = scale * max(MIN_CELL, min(MAX_CELL, max_px / max(cols, 1), 520 / max(rows, 1)))
    x_range = (-0.6, cols - 0.4)
    y_range = (-rows + 0.4, 0.6 + top)
    width = int(cell * (cols + 0.2)) + 8
    height = int(cell * (rows + 0.2 + top)) + 8
    # Only what changed: each changed property lays the figure out again in the browser.
    if (fig.x_range.start, fig.x_range.end) != x_range:
        fig.x_range.update(start=x_range[0], end=x_range[1])
    if (fig.y_range.start, fig.y_range.end) != y_range:
        fig.y_range.update(start=y_range[0], end=y_range[1])
    if (fig.width, fig.height) != (width, height):
        fig.update(width=width, height=height)
    return cell


class Figures:
    """The Bokeh models of one view: two figures, the traversal controls, and their drawing."""

    def __init__(self) -> None:
        self.scale = 1.0
        #: Hide what would answer a lesson's question: position and read-count labels.
        self.concealed = False
        self._build_sources()
        self._build_logical()
        self._build_buffer()
        self._build_traversal()
        for fig in (self.logical_figure, self.buffer_figure):
            for renderer in fig.renderers:
                # Nothing is ever selected or muted: two glyph models fewer per renderer.
                renderer.update(nonselection_glyph=None, muted_glyph=None)

    # ------------------------------------------------------------------ models

    def _build_sources(self) -> None:
        def source(keys, name, syncable=True):
            return ColumnDataSource({k: [] for k in keys}, name=name, syncable=syncable)

        self.logical_source = source(C.LOGICAL_KEYS, "logical-source")
        self.buffer_source = source(C.BUFFER_KEYS, "buffer-source")
        self.frames_source = source(C.FRAME_KEYS, "frames-source")
        self.tiles_source = source(("x", "y", "text"), "tiles-source")
        self.logical_labels_source = source(C.LOGICAL_LABEL_KEYS, "logical-labels-source")
        self.buffer_labels_source = source(C.BUFFER_LABEL_KEYS, "buffer-labels-source")
        self.offset_source = source(("x", "y"), "offset-source")
        # Written by the browser every frame or hover; never sent back to the server.
        self.cursor_logical = source(("x", "y", "k"), "cursor-logical-source", False)
        self.cursor_buffer = source(("x", "y", "pos"), "cursor-buffer-source", False)
        self.jump_source = source(
            ("x0", "y0", "x1", "y1", "cx0", "cy0", "cx1", "cy1", "color"), "jump-source", False
        )
        self.hover_logical = source(("x", "y"), "hover-logical-source", False)
        self.hover_buffer = source(("x", "y"), "hover-buffer-source", False)

    def _labels(self, fig: figure, source: ColumnDataSource, specs) -> list:
        out = []
        for text, x, y, align, baseline, px, y_offset, bold, min_cell in specs:
            renderer = fig.text(
                x,
                y,
                text=text,
                source=source,
                text_align=align,
                text_baseline=baseline,
                text_font_size=f"{px}px",
                text_color="text_color",
                y_offset=y_offset,
                text_font_style="bold" if bold else "normal",
            )
            self.label_spec[renderer.id] = (fig.name, text, px, min_cell)
            if text in ("pos_label", "reads_label"):
                self.position_labels.add(renderer.id)
            out.append(renderer)
        return out

    def _build_logical(self) -> None:
        self.label_spec: dict[str, tuple] = {}
        self.position_labels: set[str] = set()
        lf = self.logical_figure = _figure("logical-figure")
        self.logical_cells = lf.rect(
            "x",
            "y",
            width=0.94,
            height=0.94,
            source=self.logical_source,
            fill_color="color",
            line_color="white",
            name="logical-cells",
        )
        self.labels = self._labels(lf, self.logical_labels_source, _LOGICAL_LABELS)
        self.tile_labels = lf.text(
            "x",
            "y",
            text="text",
            source=self.tiles_source,
            text_font_size="11px",
            text_baseline="middle",
            text_color="#333333",
        )
        self.frames = _frame(lf, self.hover_logical, C.HOVER, 2)
        self.frames += _frame(lf, self.cursor_logical, C.CURSOR, 3)

    def _build_buffer(self) -> None:
        bf = self.buffer_figure = _figure("buffer-figure")
        self.buffer_cells = bf.rect(
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
        self.labels += self._labels(bf, self.buffer_labels_source, _BUFFER_LABELS)
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
        self.frames += _frame(bf, self.hover_buffer, C.HOVER, 2)
        self.frames += _frame(bf, self.cursor_buffer, C.CURSOR, 3)
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

    def _build_traversal(self) -> None:
        self.frame_slider = Slider(
            start=0,
            end=1,
            value=0,
            step=1,
            title="frame",
            name="frame-slider",
            syncable=False,
            width=330,
            css_classes=["candela-frame-slider"],
        )
        self.speed_slider = Slider(
            start=1,
            end=60,
            value=3,
            step=1,
            title="speed (frames/s)",
            name="speed-slider",
            syncable=False,
            width=170,
            css_classes=["candela-speed"],
        )
        self.odometer = Div(
            text="",
            name="odometer",
            syncable=False,
            sizing_mode="stretch_width",  # as wide as its column, wrapping its text
            height=44,
            styles={"font-size": "14px"},
            css_classes=["candela-odometer-box"],
        )
        self.buttons = {
            "back": Button(label="◀ step", name="back-button", width=70),
            "toggle": Button(label="▶ play", name="play-button", width=86, button_type="primary"),
            "forward": Button(label="step ▶", name="forward-button", width=70),
        }
        for action, button in self.buttons.items():
            button.css_classes = [f"candela-{action}"]
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
            play=self.buttons["toggle"],
            hover_logical=self.hover_logical,
            hover_buffer=self.hover_buffer,
            forward=C.FORWARD,
            backward=C.BACKWARD,
        )

        def js(action: str) -> CustomJS:
            return CustomJS.from_file(TRAVERSE_JS, action=action, **args)

        for action, button in self.buttons.items():
            button.js_on_click(js(action))
        self.frame_slider.js_on_change("value", js("scrub"))
        self.speed_slider.js_on_change("value", js("speed"))
        self.frames_source.js_on_change("data", js("reset"))
        self.frames_source.js_on_change("tags", js("redraw"))
        self.logical_figure.add_tools(
            HoverTool(
                renderers=[self.logical_cells],
                callback=js("hover-logical"),
                tooltips=[("index", "@index"), ("value", "@value"), ("position", "@pos")],
            )
        )
        self.buffer_figure.add_tools(
            HoverTool(
                renderers=[self.buffer_cells],
                callback=js("hover-buffer"),
                tooltips=[("position", "@pos"), ("value", "@value"), ("reads", "@reads")],
            )
        )
        self.traversal = bk_column(
            bk_row(*self.buttons.values(), self.speed_slider),
            self.frame_slider,
            self.odometer,
            name="traversal",
            css_classes=["candela-traversal"],
        )

    # ------------------------------------------------------------------ drawing

    def set_scale(self, factor: float) -> None:
        """Draw cells, labels and the traversal controls ``factor`` times their normal size."""
        if factor == self.scale:
            return
        self.scale = factor
        px = round(14 * factor)
        sheet = [InlineStyleSheet(css=f".bk-btn, .bk-slider-title {{ font-size: {px}px; }}")]
        for widget in (*self.buttons.values(), self.speed_slider, self.frame_slider):
            base = widget.tags[0] if widget.tags else widget.width
            widget.update(
                tags=[base], width=round(base * factor), stylesheets=sheet if factor != 1 else []
            )
        self.odometer.update(styles={"font-size": f"{px}px"}, height=round(44 * factor))

    def set_unit(self, unit: str) -> None:
        """Show jumps in ``unit`` (the browser redraws the odometer when it changes)."""
        tags = [{"scale": DTYPE_BYTES.get(unit, 1), "unit": unit}]
        if self.frames_source.tags != tags:
            self.frames_source.tags = tags

    def render(self, cols: C.Columns, layout, unit: str = "elements") -> None:
        """Draw ``cols`` (the columns of ``layout``); call inside Panel's ``unlocked()``."""
        _set_data(self.logical_source, cols.logical)
        _set_data(self.buffer_source, cols.buffer)
        _set_data(self.logical_labels_source, C.pad_rows(cols.logical_labels, C.LABEL_LIMIT))
        _set_data(self.buffer_labels_source, C.pad_rows(cols.buffer_labels, C.LABEL_LIMIT))
        _set_data(self.tiles_source, cols.tiles)
        self.set_unit(unit)
        self.frames_source.data = cols.frames  # always: its change restarts the traversal
        n = len(cols.frames["pos"])
        self.frame_slider.update(end=max(n - 1, 1), disabled=n <= 1, value=0)
        off = layout.offset
        if not cols.summary and len(cols.buffer["pos"]) and layout.len:
            offset = {"x": [cols.buffer["x"][off]], "y": [cols.buffer["y"][off] - 0.62]}
        else:
            offset = {"x": [], "y": []}
        if self.offset_source.data != offset:
            self.offset_source.data = offset
        self._draw_first_frame(cols, n)
        cells = {}
        if not cols.summary:
            grid = cols.grid
            top = 0.9 if len(grid.shape) > 2 else 0.0
            cells["logical-figure"] = fit(
                self.logical_figure, grid.width, grid.height, top, LOGICAL_MAX_PX, self.scale
            )
            rows = (cols.buffer_rows - 1) * C.BUFFER_ROW_PITCH + 1  # the lane's height in cells
            # Room above for the jump arcs, and below for the offset marker.
            cells["buffer-figure"] = fit(
                self.buffer_figure, cols.buffer_cols, rows + 0.5, 1.3, BUFFER_MAX_PX, self.scale
            )
        self._size_labels(cols, cells)

    def _size_labels(self, cols: C.Columns, cells: dict[str, float]) -> None:
        # Each label as large as its cell allows (up to its size at this scale), or hidden.
        for renderer in self.labels:
            figure_name, text, px, min_cell = self.label_spec[renderer.id]
            cell = cells.get(figure_name, 0.0)
            font = min(px * self.scale, cell * _FONT_SHARE[text])
            hidden = self.concealed and renderer.id in self.position_labels
            _show(renderer, cols.labels and cell >= min_cell * self.scale and not hidden, font)
        # Tile headers fit over their tile's width, or drop (the hover names the index).
        texts = cols.tiles["text"]
        if len(texts):
            room = cells.get("logical-figure", 0.0) * cols.grid.shape[-1]
            font = min(11 * self.scale, room / (0.62 * max(len(t) for t in texts)))
            _show(self.tile_labels, font >= 7, font)

    def _draw_first_frame(self, cols: C.Columns, n: int) -> None:
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
        self.odometer.text = odometer_start(cols)


def odometer_start(cols: C.Columns) -> str:
    """The odometer before the walk moves (``traverse.mjs`` writes it from then on)."""
    n = len(cols.frames["pos"])
    if not n:
        return '<span class="candela-odometer" role="status">no elements to walk</span>'
    p = int(cols.frames["pos"][0])
    return (
        f'<span class="candela-odometer" role="status">element 1 of {n} · index '
        f'<b class="candela-odometer-index">{cols.logical["index"][0]}</b> · '
        f"start at the offset: position <b>{p}</b></span>"
    )
