"""The two figures and the traversal controls: Bokeh models, and drawing columns into them.

:class:`Figures` builds, for one view of one explorer, the logical grid and the
memory buffer (sources, glyphs), the traversal controls (play/pause, step,
speed, scrub, the odometer) and the one ``CustomJS`` that runs
``traverse.mjs`` in the browser for all of them. :meth:`Figures.render` draws
a :class:`~explorer.columns.Columns` into them; nothing here knows about
widgets, the URL or the classroom.

Each figure has few glyphs: its cells; its text, every label a row of one
labels source (:mod:`explorer.labels`); and its frames, every ring of the
cursor's and the hover's frames a row of one marks source (:func:`mark_rows`).
A glyph renderer costs a session several Bokeh models and the browser a
layer to paint, so what varies is data, not glyphs.

Each view gets its own models, so any number of explorers (or views of one)
can share a page; the browser keeps each traversal's play state on that
view's own frames source, never in a global keyed by model ids.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import replace
from pathlib import Path

from bokeh.core.properties import field
from bokeh.layouts import row as bk_row
from bokeh.models import (
    AllIndices,
    Bezier,
    Button,
    CDSView,
    ColumnDataSource,
    CustomJS,
    CustomJSHover,
    Div,
    GlyphRenderer,
    HoverTool,
    InlineStyleSheet,
    LinearScale,
    Range1d,
    Rect,
    Scatter,
    Selection,
    Slider,
    Text,
    UnionRenderers,
)
from bokeh.plotting import figure

from . import columns as C
from . import labels as L
from .cost_view import UNIT_KEYS, CostView
from .fields import DTYPE_BYTES

# FRAME_RINGS and SMALL_CELL are read from here too (the frames' sizes live in marks).
from .marks import FRAME_RINGS, MARKS, SMALL_CELL, frame_rings  # noqa: F401
from .painting import CELLS_TAG, STEADY_TAG
from .shipped import shipped

TRAVERSE_JS = Path(__file__).with_name("traverse.mjs")

#: Cell sizes, in px at scale 1: as large as the room allows within these (a cell too
#: small for its text shows it on hover).
MIN_CELL, MAX_CELL = 4, 46
#: The smallest cell of a grid of tiles (rank > 2): each tile's header needs the row above
#: it, clear of the cursor's frame.
TILED_MIN_CELL = 16
#: The window height (px) the figures are sized for until the browser says (a laptop's).
WINDOW_HEIGHT = 800
#: What a window's height holds besides the two figures until the browser measures it: the
#: title, the headings, the legend and the traversal controls (px at scale 1).
AROUND_FIGURES = 330
#: How much wider the speed slider is in presenter mode (its title is the same width).
SPEED_GROWTH = 1.2
#: The scrub slider's width in presenter mode (px): beside the step and play buttons.
FRAME_PRESENTER_WIDTH = 240
#: In presenter mode on a screen as short as a 1024x768 or 1280x800 projector, the speed
#: slider gives its line to the figures (the walk plays at the speed last set, 3 frames/s
#: unless changed; the buttons and the scrub slider stay).
SHORT_SCREEN_HIDDEN = "@media (max-height: 820px) { :host { display: none !important; } }"
#: Where the speed slider is shown (a screen taller than 820 px), the scrub slider's title
#: starts clear of its value: "speed (frames/s): 3 frame: 0" read as one label.
TALL_SCREEN_GAP = "@media (min-height: 821px) { :host { margin-left: 28px !important; } }"
#: The largest cell in presenter mode (px): on a projector the cells grow to the room.
PRESENTER_MAX_CELL = 150
#: The smallest cell (px) that shows its value at the least font (labels.LEAST_FONT): a
#: grid small enough to show its values keeps cells this large however short the window.
LABELLED_CELL = 29
#: The least cell (px) of a lesson's grid on a projector (presenter mode): a grid of up to
#: 24 elements keeps cells this large, with their labels, on a 1024x768 screen where its
#: width allows; the buffer lane takes the height left.
LESSON_CELL = 40.5
#: The share of its cell a cell's colour fills: the gap around it parts the cells, with no
#: outline to stroke (a stroke per cell was a third of a repaint at 4,096 cells).
CELL_FILL = 0.9
#: The cost panel's units: the tallest its figure is drawn (px at scale 1, a buffer of many
#: units gets small cells), and its largest cell (a few units are not drawn as tiles).
COST_MAX_HEIGHT, COST_MAX_CELL = 170, 24
#: The widest a figure is drawn at scale 1: the figures' column is 528 px wide on a
#: 1280 px screen. A grid too wide for it at MIN_CELL scrolls inside its panel.
LOGICAL_MAX_PX = BUFFER_MAX_PX = 520


#: Hover on a logical cell: the position element ``k`` reads (``@index{pos}``) or the value
#: there (``@index{value}``), looked up in the frames and buffer sources; on a buffer cell
#: (``@pos{custom}``), its own position. Positions in bytes once a byte unit is chosen.
READ_JS = """
const scale = Number(frames.tags[0]?.scale) || 1
if (format === "custom") return value * scale  // a buffer cell's own position
if (format === "span") {  // a cell of the buffer's overview: the bin of positions it is
  const tags = frames.tags[0] ?? {}
  // The bin's first and last position; in bytes, its first and last byte.
  const end = Math.min(value + (Number(tags.bin) || 1), Number(tags.size) || Infinity)
  return `${(value * scale).toLocaleString("en")} to ${(end * scale - 1).toLocaleString("en")}`
}
const k = special_vars.index
const pos = frames.data.pos[k]
if (pos == null) return ""
// A summarised grid's frames hold each drawn element's true position and value (its
// buffer cell is a bin of positions): columns.overview_columns.
if (frames.data.at != null) return format === "pos" ? frames.data.at[k] * scale : frames.data.value[k]
return format === "pos" ? pos * scale : buffer.data.value[pos]
"""


def _figure(name: str, scale: LinearScale) -> figure:
    fig = figure(
        name=name,
        title=None,  # no Title model: the headings above the figures name them
        width=300,
        height=120,
        x_range=Range1d(-0.5, 0.5),
        y_range=Range1d(-0.5, 0.5),
        toolbar_location=None,
        tools="",
        min_border=4,
        outline_line_color=None,
        # See-through: the page's own background, light or dark, shows (theme.css).
        background_fill_color=None,
        border_fill_color=None,
        x_axis_type=None,  # no axes, grids, tickers or formatters: models nobody sees
        y_axis_type=None,
        # Canvas, not WebGL: without a GPU (software WebGL) every repaint copied the WebGL
        # canvas back, which held the traversal to ~39 paints/s at 4,096 cells; canvas
        # keeps 60 (benchmarks/bench_explorer.py).
        output_backend="canvas",
        # Never squeezed to its column (which stretched cells out of square): a figure
        # wider than its panel keeps its size and scrolls inside the panel.
        styles={"max-width": "none"},
        tags=[STEADY_TAG],  # repainted only when it changes (explorer/patches/steady.mjs)
    )
    # A scale holds no state (the browser copies it for each axis of each plot, with that
    # axis's ranges): one serves both axes of both figures.
    fig.x_scale = fig.y_scale = scale
    return fig


def mark_rows(cells: dict, rings: dict) -> dict:
    """The rows of a figure's marks source: every ring of every marked cell.

    ``cells`` maps a mark (``"hover"``, ``"cursor"``) to its cells as ``(x, y, k, pos)``;
    ``traverse.mjs`` builds the same rows in the browser (its ``markRows``).
    """
    rows = {key: [] for key in MARK_KEYS}
    for mark in MARKS:
        spec = rings[mark]
        for x, y, k, pos in cells.get(mark, ()):
            for ring, (color, width) in enumerate(spec["rings"]):
                for key, v in zip(
                    MARK_KEYS, (x, y, spec["size"], width, color, mark, ring, k, pos)
                ):
                    rows[key].append(v)
    return rows


#: The columns of a marks source: one row per ring of a marked cell.
MARK_KEYS = ("x", "y", "size", "line", "color", "mark", "ring", "k", "pos")


def _draw(fig: figure, glyph, source: ColumnDataSource, view: CDSView, **renderer):
    """Add ``glyph`` over ``source`` to ``fig``: the renderer alone, with no selection, hover
    or mute copies of the glyph (bokeh.plotting builds three more glyphs a renderer) and
    the one view of every row. Every column is named with ``field``: no guessing."""
    r = GlyphRenderer(
        glyph=glyph,
        data_source=source,
        view=view,
        nonselection_glyph=None,
        muted_glyph=None,
        **renderer,
    )
    fig.renderers.append(r)
    return r


def _frames_glyph() -> Rect:
    # Every ring of every mark of a figure in one glyph: rows draw in order, outer first.
    return Rect(
        x=field("x"),
        y=field("y"),
        width=field("size"),
        height=field("size"),
        fill_alpha=0,
        line_color=field("color"),
        line_width=field("line"),
    )


def _set_data(source: ColumnDataSource, data: dict) -> None:
    # Send only the columns that changed: a new walk over the same shape keeps most of them.
    changed = C.changed_columns(source.data, data)
    if changed is data:
        source.data = data
    elif changed:
        source.data.update(changed)


def fit(fig: figure, cols: int, rows: float, top: float, *sizing, **named) -> float:
    """Draw ``fig``, a grid of ``cols`` by ``rows`` cells (``top`` rows above it for
    headers), with the cells :func:`fit_cell` gives for ``sizing`` (its arguments after
    ``top``); returns their size in px."""
    cell = fit_cell(cols, rows, top, *sizing, **named)
    x_range = (-0.6, cols - 0.4)
    y_range = (-rows + 0.4, 0.6 + top)
    # Never narrower than its cells (but a cell that fills the room exactly, in floating
    # point a hair over, does not make it a pixel larger than the room).
    width = math.ceil(cell * (cols + 0.2) - 1e-6) + 8
    height = math.ceil(cell * (rows + 0.2 + top) - 1e-6) + 8
    # Only what changed: each changed property lays the figure out again in the browser.
    if (fig.x_range.start, fig.x_range.end) != x_range:
        fig.x_range.update(start=x_range[0], end=x_range[1])
    if (fig.y_range.start, fig.y_range.end) != y_range:
        fig.y_range.update(start=y_range[0], end=y_range[1])
    if (fig.width, fig.height) != (width, height):
        fig.update(width=width, height=height)
    return cell


def fit_cell(
    cols: int,
    rows: float,
    top: float,
    max_px: int,
    scale: float,
    max_height: float | None = None,
    min_cell: float = MIN_CELL,
    column_px: float | None = None,
    max_cell: float = MAX_CELL,
) -> float:
    """Square cells, as large as ``max_px`` wide and ``max_height`` tall allow, within
    ``min_cell``..``max_cell`` (times ``scale``): their size in px.

    A grid too large for them at MIN_CELL is drawn larger, and scrolls inside its panel.
    ``column_px`` is the width of the figures' column on the screen: enlarged cells
    (``scale`` > 1, presenter mode on a projector) fit it and ``max_height`` whatever
    ``min_cell`` asks, down to MIN_CELL px, so the whole figure is on the screen.
    """
    room = (max_px - 8) / (max(cols, 1) + 0.2)  # the cell that makes the figure max_px wide
    tall = 520 if max_height is None else max_height
    room_y = (tall / scale - 8) / (max(rows, 1) + 0.2 + top)
    unscaled = max(min_cell, min(max_cell, room, room_y))
    cell = scale * unscaled
    if column_px and scale > 1:
        # On a projector every figure is whole on the screen: its cells as large as the
        # column's width and the height allow, down to MIN_CELL px. Labels and tiles'
        # headers too large for them are left to hover (labels.py), never cut off.
        wide_px = (column_px - 8) / (max(cols, 1) + 0.2)
        tall_px = (tall - 8 * scale) / (max(rows, 1) + 0.2 + top)
        cell = max(MIN_CELL, min(scale * max_cell, wide_px, tall_px))
    return cell


def split_height(tall: float, high: dict[str, float], wide_cell: dict[str, float]) -> dict:
    """The height (px) each figure may take of the ``tall`` px both share: one cell size
    for both (``high`` is each figure's height in cells), except that a figure whose
    width allows smaller cells (``wide_cell``, px) leaves the rest of its share to the
    other."""
    both = max(1.0, tall - 16)
    common = both / (high["logical"] + high["buffer"])
    out = {fig: common * h + 8 for fig, h in high.items()}
    for fig, other in (("buffer", "logical"), ("logical", "buffer")):
        if wide_cell[fig] < common:
            out[fig] = wide_cell[fig] * high[fig] + 8
            out[other] = tall - out[fig]
            break
    return out


class Figures:
    """The Bokeh models of one view: two figures, the traversal controls, and their drawing."""

    def __init__(self) -> None:
        self.scale = 1.0
        #: Hide what would answer a lesson's question: position and read-count labels.
        self.concealed = False
        #: Whether the buffer is drawn as an overview, a cell per bin of positions.
        self.binned = False
        #: Whether the overview's read counts are estimated (too many rows to count).
        self.estimated = False
        #: The cell size in px each figure was last drawn at.
        self.cells = {"logical": 0.0, "buffer": 0.0}
        #: The columns last drawn (None before the first drawing): sized again to new room.
        self._cols: C.Columns | None = None
        self._given: tuple | None = None  # the columns and layout last drawn, as given
        #: The room the figures have (px): their column's width and the window's height.
        #: The third, the height the two figures share, once the page has measured it.
        self.room: tuple[int, int, int | None] = (LOGICAL_MAX_PX + 8, WINDOW_HEIGHT, None)
        #: On a phone, the height (px) the first screen leaves the grid (None: no limit).
        self.first_screen: int | None = None
        #: Where the offset marker points up at the cell the walk starts from (or None).
        self.offset_at: tuple[float, float] | None = None
        #: What each figure's text alternative last said it is (see _draw_first_frame).
        self._described: dict[str, str] = {}
        # Models that hold no state of their own: the browser builds a view of each for
        # every renderer or plot that uses it, so one of each serves both figures. Each is
        # a Bokeh model fewer for every renderer that shares it.
        self._every = AllIndices()  # a filter holds no state: one serves every view
        self._views: dict[str, CDSView] = {}  # a view holds its source's rows: one a source
        self._scale = LinearScale()
        self._text_glyph = self._text()
        self._frames_glyph = _frames_glyph()
        self._build_sources()
        self._build_logical()
        self._build_buffer()
        self._build_cost()
        self._build_traversal()

    # ------------------------------------------------------------------ models

    def _build_sources(self) -> None:
        # Nothing is ever selected: one (empty) selection and policy serve every source.
        selected, policy = Selection(), UnionRenderers()

        def source(keys, name, syncable=True):
            data = {k: [] for k in keys}
            return ColumnDataSource(
                data, name=name, syncable=syncable, selected=selected, selection_policy=policy
            )

        self.logical_source = source(C.LOGICAL_KEYS, "logical-source")
        self.buffer_source = source(C.BUFFER_KEYS, "buffer-source")
        self.frames_source = source(C.FRAME_KEYS, "frames-source")
        # Every text of a figure (cell labels, tile headers, the offset): see explorer.labels.
        self.labels_logical = source(L.LABEL_KEYS, "labels-logical-source")
        self.labels_buffer = source(L.LABEL_KEYS, "labels-buffer-source")
        # Written by the browser every frame or hover; never sent back to the server.
        # The cursor's and the hover's frames, every ring a row (see mark_rows).
        self.marks_logical = source(MARK_KEYS, "marks-logical-source", False)
        self.marks_buffer = source(MARK_KEYS, "marks-buffer-source", False)
        self.jump_source = source(
            ("x0", "y0", "x1", "y1", "cx0", "cy0", "cx1", "cy1", "color"), "jump-source", False
        )
        # The cost panel's memory units, a cell each (explorer.cost_view), and the frames of
        # the unit the walk is in (written by the browser).
        self.units_source = source(UNIT_KEYS, "cost-units-source")
        self.marks_cost = source(MARK_KEYS, "marks-cost-source", False)

    def _draw(self, fig: figure, glyph, source: ColumnDataSource, **renderer) -> GlyphRenderer:
        # The browser keeps the rows a view selects on the view's model, sized to its
        # source: renderers of one source share a view, others need their own.
        if source.id not in self._views:
            self._views[source.id] = CDSView(filter=self._every)
        return _draw(fig, glyph, source, self._views[source.id], **renderer)

    @staticmethod
    def _text() -> Text:
        return Text(
            x=field("x"),
            y=field("y"),
            text=field("text"),
            text_align=field("align"),
            text_baseline=field("baseline"),
            text_font_size=field("size"),
            text_color=field("color"),
            x_offset=field("x_offset"),
            y_offset=field("y_offset"),
            text_font_style=field("style"),
        )

    def _cells(self, fig: figure, source: ColumnDataSource, name: str, **fill):
        glyph = Rect(
            x=field("x"),
            y=field("y"),
            width=CELL_FILL,
            height=CELL_FILL,
            fill_color=field("color"),
            line_color=None,
            tags=[CELLS_TAG],  # painted one fill per colour (explorer/patches/cells.mjs)
            **fill,
        )
        return self._draw(fig, glyph, source, name=name)

    def _build_logical(self) -> None:
        lf = self.logical_figure = _figure("logical-figure", self._scale)
        self.logical_cells = self._cells(lf, self.logical_source, "logical-cells")
        self._draw(lf, self._text_glyph, self.labels_logical)
        self._draw(lf, self._frames_glyph, self.marks_logical, level="overlay")

    def _build_buffer(self) -> None:
        bf = self.buffer_figure = _figure("buffer-figure", self._scale)
        self.buffer_cells = self._cells(
            bf, self.buffer_source, "buffer-cells", fill_alpha=field("alpha")
        )
        self._draw(bf, self._text_glyph, self.labels_buffer)  # the offset's marker too
        self._draw(bf, self._frames_glyph, self.marks_buffer, level="overlay")
        # The jump of the current step: an arc over the buffer and its arrowhead.
        arc = Bezier(
            **{k: field(k) for k in ("x0", "y0", "x1", "y1", "cx0", "cy0", "cx1", "cy1")},
            line_color=field("color"),
            line_width=2.5,
        )
        self._draw(bf, arc, self.jump_source, level="overlay")
        head = Scatter(
            x=field("x1"),
            y=field("y1"),
            marker="inverted_triangle",
            size=9,
            fill_color=field("color"),
            line_color=field("color"),
        )
        self._draw(bf, head, self.jump_source, level="overlay")

    def _build_cost(self) -> None:
        # The units of the buffer, shaded by their entries: the cells' glyph is the logical
        # grid's (x, y, colour), the frames' the other figures' (one glyph model each).
        cf = self.cost_figure = _figure("cost-figure", self._scale)
        cf.visible = False  # until there are units to draw
        cf.css_classes = ["candela-cost-figure"]
        self.cost_cells = self._draw(cf, self.logical_cells.glyph, self.units_source,
                                     name="cost-cells")  # fmt: skip
        self._draw(cf, self._frames_glyph, self.marks_cost, level="overlay")
        cf.add_tools(
            HoverTool(
                renderers=[self.cost_cells],
                tooltips=[("unit", "@unit"), ("bytes", "@bytes"), ("entered", "@entries")],
            )
        )
        #: The cell size (px) the units were last drawn at (0: none drawn).
        self.cost_cell = 0.0
        self._cost: CostView | None = None

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
            styles=_odometer_styles(14),
            css_classes=["candela-odometer-box"],
        )
        self.buttons = {
            "back": Button(label="◀ step", name="back-button", width=70),
            "toggle": Button(label="▶ play", name="play-button", width=86, button_type="primary"),
            "forward": Button(label="step ▶", name="forward-button", width=70),
        }
        for action, button in self.buttons.items():
            button.css_classes = [f"candela-{action}"]
        #: The stylesheet of every widget of the traversal (see TRAVERSAL_CSS): CSS text,
        #: which Bokeh takes as an inline sheet, so the page gets no model for it.
        self.themed = TRAVERSAL_CSS
        for widget in (*self.buttons.values(), self.speed_slider, self.frame_slider, self.odometer):
            widget.stylesheets = [self.themed]
        tips = self.tooltips(concealed=False)
        # What a logical cell reads is the walk's, not the cell's: its source holds only
        # what the shape decides (explorer.columns.LOGICAL_KEYS), so hover looks it up.
        reads = CustomJSHover(
            args={"frames": self.frames_source, "buffer": self.buffer_source},
            code=READ_JS,
        )
        self.hover_tools = {
            "logical": HoverTool(
                renderers=[self.logical_cells],
                tooltips=tips["logical"],
                formatters={"@index": reads},
            ),
            "buffer": HoverTool(
                renderers=[self.buffer_cells],
                tooltips=tips["buffer"],
                formatters={"@pos": reads},  # one model formats both figures' hover
            ),
        }
        # One callback for everything the browser does: traverse.mjs tells what happened
        # by the model that called it, so its code is sent (and saved in a page) once.
        traverse = CustomJS(
            code=shipped(TRAVERSE_JS),
            module=True,
            args=dict(
                **self.script_args(),
                logical=self.logical_source,
                buffer=self.buffer_source,
                frames=self.frames_source,
                marks_logical=self.marks_logical,
                marks_buffer=self.marks_buffer,
                jump=self.jump_source,
                speed=self.speed_slider,
                step=self.buttons["forward"],
                # a second view's hover linking (explorer.two_views), set when one is shown
                link=None,
                units=self.units_source,
                marks_cost=self.marks_cost,
                forward=C.FORWARD,
                backward=C.BACKWARD,
            ),
        )
        #: The figures' one CustomJS model.
        self.traverse_js = traverse
        for button in self.buttons.values():
            button.js_on_click(traverse)
        self.frame_slider.js_on_change("value", traverse)
        self.speed_slider.js_on_change("value", traverse)
        self.frames_source.js_on_change("data", traverse)
        self.frames_source.js_on_change("tags", traverse)
        # A lane wrapped anew moves the cells the current element's frame is on.
        self.buffer_source.js_on_change("data", traverse)
        for name, tool in self.hover_tools.items():
            tool.callback = traverse
            getattr(self, f"{name}_figure").add_tools(tool)
        # One wrapping row, not a row inside a column (a model fewer): the buttons and the
        # speed, the scrub slider where it fits (below them in a 528 px column), and the
        # odometer on a line of its own.
        self.traversal = bk_row(
            *self.buttons.values(),
            self.speed_slider,
            self.frame_slider,
            self.odometer,
            name="traversal",
            css_classes=["candela-traversal"],
            styles={"flex-wrap": "wrap"},
        )

    # ------------------------------------------------------------------ drawing

    def set_scale(self, factor: float) -> None:
        """Draw cells, labels and the traversal controls ``factor`` times their normal size."""
        if factor == self.scale:
            return
        self.scale = factor
        px = round(14 * factor)
        sheet = [
            InlineStyleSheet(css=f".bk-btn, .bk-slider-title {{ font-size: max({px}px, 1.1vw); }}")
        ]
        by_screen = {self.speed_slider: [SHORT_SCREEN_HIDDEN], self.frame_slider: [TALL_SCREEN_GAP]}
        for widget in (*self.buttons.values(), self.speed_slider, self.frame_slider):
            base = widget.tags[0] if widget.tags else widget.width
            screen = by_screen.get(widget, []) if factor != 1 else []
            # The speed slider grows less: beside the buttons on a 1024 px projector, a
            # line fewer above the figures.
            # The scrub slider narrower: beside the buttons on a 1024 px projector, a line
            # fewer above the figures.
            grow = {
                self.speed_slider: min(factor, SPEED_GROWTH),
                self.frame_slider: FRAME_PRESENTER_WIDTH / base,
            }.get(widget, factor)
            widget.update(
                tags=[base],
                width=round(base * grow),
                stylesheets=[self.themed, *(sheet if factor != 1 else []), *screen],
            )
        self.odometer.update(
            # Two lines of its enlarged type, no more: room kept for the figures.
            styles=_odometer_styles(px, grow=factor != 1),
            height=44 if factor == 1 else round(38 * factor),
        )

    def _room(self) -> tuple[float, float, float]:
        # The widest a figure may be at scale 1 (enlarged, the column's whole width), the
        # height both may share, and the column's whole width (enlarged figures may grow
        # to it, not past it).
        width, height, figures = self.room
        column = max(160.0, width - 8.0)
        wide = column if self.scale > 1 else max(160.0, min(float(LOGICAL_MAX_PX), width - 8))
        if figures is None:  # not measured yet: a guess of what the page holds besides
            figures = height - AROUND_FIGURES * self.scale
        return wide, max(160.0, float(figures)), column

    def set_room(
        self, width: int, height: int, figures: int | None = None, grid: int | None = None
    ) -> bool:
        """The figures' column is ``width`` px wide in a ``height`` px window, and the two
        figures have ``figures`` px of its height (what the window holds besides them,
        measured by the page), the grid at most ``grid`` (on a phone, what the first
        screen leaves it under a lesson's question): size the cells to fit it (drawn
        again if that changes them). Returns whether it did."""
        old = (self._room(), self.first_screen)
        self.room = (width, height, figures)
        self.first_screen = grid
        # The page can tell its room was heard (and its cells sized to it).
        room = [width, height] if figures is None else [width, height, figures]
        self._set_tags(room=room if grid is None else [*room, grid])
        if self._cols is None or (self._room(), self.first_screen) == old:
            return False
        if self._cost is not None:
            self.render_cost(self._cost)
        given, layout = self._given
        wrapped = self.wrapped(given)
        if wrapped.buffer_cols != self._cols.buffer_cols:
            self._draw_rewrapped(wrapped, layout)
            return True
        # Only the sizes: the walk goes on where it is (the browser redraws its frame
        # with the new rings, traverse.mjs "redraw").
        cells = self._fit(self._cols)
        if cells == self.cells:
            return False
        self.cells = cells
        self._set_tags(rings=self._rings(cells))
        self._first_frame_marks(self._cols, len(self._cols.frames["pos"]))
        self._draw_labels()
        return True

    def set_unit(self, unit: str) -> None:
        """Show positions and jumps in ``unit`` (the browser redraws the odometer and hover
        text when it changes; the cells' position labels are drawn again here)."""
        self._set_tags(unit=unit, scale=DTYPE_BYTES.get(unit, 1))
        self._set_tooltips()
        self._draw_labels()

    def _set_tags(self, **changes) -> None:
        # What the browser's drawing needs besides the columns, on the frames source's
        # tags: the unit, each figure's frame rings and text alternative, concealment.
        old = self.frames_source.tags[0] if self.frames_source.tags else {}
        new = {**old, **changes}
        if new != old:
            self.frames_source.tags = [new]

    @property
    def columns(self) -> C.Columns | None:
        """The columns as drawn: those given to :meth:`render`, their buffer lane wrapped
        for the room on a projector."""
        return self._cols

    def render(self, cols: C.Columns, layout, unit: str = "elements") -> None:
        """Draw ``cols`` (the columns of ``layout``); call inside Panel's ``unlocked()``."""
        self._given = (cols, layout)
        self._draw_columns(self.wrapped(cols), layout, unit)

    def _draw_columns(self, cols: C.Columns, layout, unit: str) -> None:
        # Draw ``cols`` as they are (their lane wrapped for this room: _wrapped).
        _set_data(self.logical_source, cols.logical)
        marked = bool(len(cols.buffer["pos"]) and layout.len and not self.concealed)
        self._place_lane(cols, layout, marked)
        self.binned = cols.overview.get("bin", 1) > 1
        self.estimated = cols.overview.get("share", 1) < 1
        cells = self._fit(cols)
        # Each figure's text alternative begins with what it is; the browser adds the
        # current element. While a question waits it says only that (no shape or count).
        alt = {
            "logical": f"Logical grid, shape {tuple(layout.shape)}",
            "buffer": f"Memory buffer, {len(cols.buffer['pos'])} cells",
        }
        if cols.overview:
            o = cols.overview
            alt["logical"] += f", {o['drawn']:,} of its {o['elements']:,} elements drawn"
            alt["buffer"] = (
                f"Memory buffer of {o['buffer']:,} cells, drawn as {o['cells']:,} cells of "
                f"{o['bin']:,} positions each"
            )
        wait = "the current element shows once the question is answered"
        alt["hidden"] = {"logical": f"Logical grid: {wait}", "buffer": f"Memory buffer: {wait}"}
        self._set_tags(
            unit=unit,
            scale=DTYPE_BYTES.get(unit, 1),
            rings=self._rings(cells),
            alt=alt,
            concealed=self.concealed,
            elements=int(layout.len),
            bin=cols.overview.get("bin", 1),
            size=cols.overview.get("buffer", len(cols.buffer["pos"])),
        )
        self._set_tooltips()
        self.frames_source.data = cols.frames  # always: its change restarts the traversal
        # The scrubber reaches as far as the frames sent: while a question waits, the walk
        # stops before the asked jump (explorer.lessons.withholding).
        n = len(cols.frames["pos"])
        self.frame_slider.update(end=max(n - 1, 1), disabled=n <= 1, value=0)
        for button in self.buttons.values():
            if button.disabled != (n <= 1):
                button.disabled = n <= 1
        self._draw_first_frame(cols, n)
        self.cells = cells
        self._cols = cols
        self._draw_labels()

    def _draw_rewrapped(self, cols: C.Columns, layout) -> None:
        # The buffer lane wraps otherwise in this room: the same walk, its lane's cells
        # placed anew. Its frames are not sent again (new frames restart the walk at
        # element 1, traverse.mjs "reset"); their tags change, and the page draws the
        # current element again where its cell now is ("redraw").
        self._place_lane(cols, layout, self.offset_at is not None)
        self._cols = cols
        self.cells = self._fit(cols)
        self._draw_labels()
        # (The cursor's rows are the page's own now: it sent this room.)
        self._set_tags(rings=self._rings(self.cells))

    def _place_lane(self, cols: C.Columns, layout, marked: bool) -> None:
        # The buffer lane's cells, and where the offset's marker goes (``marked``: the
        # walk has an element and no question hides where it starts) under the cell that
        # holds the offset (an overview's cell of positions).
        _set_data(self.buffer_source, cols.buffer)
        self.offset_at = None
        if marked:
            off = layout.offset // cols.overview.get("bin", 1)
            self.offset_at = (float(cols.buffer["x"][off]), float(cols.buffer["y"][off]) - 0.62)

    def _rings(self, cells: dict[str, float]) -> dict:
        # Each figure's frame rings for its cell size; the cost figure's too, once drawn.
        rings = {fig: frame_rings(cell) for fig, cell in cells.items()}
        if self.cost_cell:
            rings["cost"] = frame_rings(self.cost_cell)
        return rings

    def render_cost(self, view: CostView) -> None:
        """Draw the cost panel's units (``view``, :func:`explorer.cost_view.cost_view`):
        a cell per unit of the buffer, shaded by its entries, sized to the room; none (the
        figure hidden) for a walk too large to draw or while a question waits. Call
        inside Panel's ``unlocked()``, after :meth:`render`."""
        self._cost = view
        drawn = view.drawn and not self.concealed
        data = {k: view.units[k] for k in UNIT_KEYS} if drawn else {k: [] for k in UNIT_KEYS}
        _set_data(self.units_source, data)
        if drawn:
            wide, _, column = self._room()
            # No panel of its own to scroll in (unlike the grid and the buffer): narrower
            # than the column by a margin, so the column (and the page) never widens for it.
            wide = column = max(160.0, min(wide, column) - 16)
            self.cost_cell = fit(
                self.cost_figure, view.cols, view.rows, 0.0, wide, self.scale,
                COST_MAX_HEIGHT * self.scale, MIN_CELL, column, COST_MAX_CELL,
            )  # fmt: skip
        else:
            self.cost_cell = 0.0
        if self.cost_figure.visible != drawn:
            self.cost_figure.visible = drawn
        cost = {"itemsize": view.itemsize, "unit": view.unit} if drawn else None
        self._set_tags(cost=cost, rings=self._rings(self.cells))
        # The unit of the walk's first element framed, for a page before its script runs
        # (the browser draws every frame's from then on: traverse.mjs).
        rows = {"cursor": []}
        frames = self.frames_source.data.get("pos", [])
        if drawn and len(frames) and "at" not in self.frames_source.data:
            u = int(frames[0]) * view.itemsize // view.unit
            if 0 <= u < len(data["x"]):
                rows["cursor"] = [(data["x"][u], data["y"][u], -1, u)]
        _set_data(self.marks_cost, mark_rows(rows, frame_rings(self.cost_cell or MAX_CELL)))

    def wrapped(self, cols: C.Columns) -> C.Columns:
        """``cols`` as this figure draws them in its room: on a projector, a lesson's buffer
        lane wrapped as wide as keeps its cells large enough for their values and then
        gives the grid cells of LESSON_CELL px."""
        # (Then both figures the largest cells.) A 4x5 tensor's 20 cells as 4 rows of 5
        # under the grid left it 34 px on a 1024x768 screen, with 600 px of width free;
        # as 2 rows of 10, 42 px. Rows stay whole (C.wraps).
        options = C.wraps(cols) if self.scale > 1 and cols.labels else []
        n = len(cols.buffer["pos"])
        best, chosen = None, cols.buffer_cols
        for width in options:
            # each wrap tried by its size alone; only the one chosen is placed
            trial = replace(cols, buffer_cols=width, buffer_rows=-(-n // width))
            cells = self._fit(trial, draw=False)
            grid = round(cells["logical"], 6)  # (LESSON_CELL itself, to a rounding)
            if width == cols.buffer_cols and grid >= LESSON_CELL:
                return cols  # its own wrap is large enough
            # the lane's cells large enough for their values, then the grid's large
            lane = cells["buffer"]
            key = (min(lane, LABELLED_CELL), min(grid, LESSON_CELL), min(grid, lane), -width)
            if best is None or key > best:
                best, chosen = key, width
        return C.rewrapped(cols, chosen)

    def script_args(self) -> dict:
        """The parts of the figures a page's script reaches by the same names: the
        traversal's (traverse.mjs) and the offline lesson page's (lesson_page.mjs)."""
        return dict(
            logical_figure=self.logical_figure,
            buffer_figure=self.buffer_figure,
            hover_logical=self.hover_tools["logical"],
            hover_buffer=self.hover_tools["buffer"],
            odometer=self.odometer,
            slider=self.frame_slider,
            play=self.buttons["toggle"],
            back=self.buttons["back"],
        )

    def _fit(self, cols: C.Columns, draw: bool = True) -> dict[str, float]:
        # Each figure sized to the room, its cells as large as it allows: their size in px
        # (only worked out, the figures untouched, unless ``draw``).
        if len(cols.grid.shape) <= 2:
            return self._fit_under(cols, 0.0, draw)
        # A grid of tiles has its first tiles' headers' row above it: as tall as the
        # rows between tiles (L.TILE_ROW) at first, then only as tall as a header needs
        # over cells of the size that gives (larger cells need fewer of their rows: the
        # cells it then gives, larger still, need no more). Two rows of 31 px over the
        # channels-last lesson's grid on a projector held a header of 16 px.
        top = L.TILE_ROW - 0.1
        cells = self._fit_under(cols, top, draw=False)
        return self._fit_under(cols, min(top, L.header_room(cells["logical"], self.scale)), draw)

    def _fit_under(self, cols: C.Columns, top: float, draw: bool) -> dict[str, float]:
        # _fit with ``top`` cells above the grid for its first tiles' headers.
        size = fit if draw else (lambda _figure, *args: fit_cell(*args))
        cells = {"logical": 0.0, "buffer": 0.0}
        grid = cols.grid
        tiled = len(grid.shape) > 2
        wide, tall, column = self._room()
        # Larger cells on a projector, as the room allows; never under MIN_CELL px (a
        # large tensor on a projector fits its screen too).
        least = MIN_CELL / self.scale
        most = PRESENTER_MAX_CELL / self.scale if self.scale > 1 else MAX_CELL
        rows = (cols.buffer_rows - 1) * C.BUFFER_ROW_PITCH + 1  # the lane's height in cells
        # Room above the buffer for the jump arcs, and below for the offset marker.
        high = {"logical": grid.height + 0.2 + top, "buffer": rows + 0.5 + 0.2 + 1.3}
        wide_cell = {  # the cell (px) each figure's width allows
            fig: min(most * self.scale, (wide - 8) / (n + 0.2))
            for fig, n in (("logical", grid.width), ("buffer", cols.buffer_cols))
        }
        heights = split_height(tall, high, wide_cell)
        if self.scale > 1 and cols.labels:
            # On a projector the grid is the lesson's picture: its cells keep LESSON_CELL
            # px (as its width allows) and their labels, the buffer taking what is left.
            need = min(LESSON_CELL, wide_cell["logical"]) * high["logical"] + 8 * self.scale
            # ... as long as the lane keeps cells that show their values.
            keep = min(LABELLED_CELL, wide_cell["buffer"]) * high["buffer"] + 8 * self.scale
            first = min(need, tall - keep)
            if first > heights["logical"]:
                heights = {"logical": first, "buffer": tall - first}
        if self.first_screen is not None and self.scale == 1:
            # A phone: the grid ends on the first screen, where it begins (a grid of
            # lettered cells at 42 px ran 40 px past it, under a lesson's question).
            heights["logical"] = min(heights["logical"], float(self.first_screen))
        corners = tiled and bool(cols.overview.get("summarised"))
        if cols.labels and self.scale == 1 and not corners:
            # Never shorter than their values need (a short window scrolls); on a
            # projector every figure is whole on the screen, its labels shrinking with
            # the cells (those too small to read are left to hover), and so is a
            # summarised grid of tiles, a picture of the tensor's corners, each tile
            # with its header (16x224x224x3's at 29 px was 870 px tall).
            for fig, h in high.items():
                heights[fig] = max(heights[fig], 8 * self.scale + h * LABELLED_CELL)
        floor = least
        if tiled:
            # A grid of tiles keeps cells that fit each tile's header over it (rank 8
            # too), spelt as fully as lets the grid fit the column's width (and a
            # summarised one its share of the height too: L.tile_spelling), else its
            # width alone; one too wide for its panel however spelt scrolls inside it,
            # its headers spelt in full.
            room = (wide - 8) / (grid.width + 0.2)
            room_y = (heights["logical"] - 8) / high["logical"] if corners else room
            need = [L.tile_cell(cols, 1.0, k) for k in range(L.TILE_SPELLINGS)]
            fits = [c for c in need if c <= room]
            floor = max(
                TILED_MIN_CELL,
                next((c for c in fits if c <= room_y), fits[-1] if fits else need[0]),
            )
        cells["logical"] = size(
            self.logical_figure,
            grid.width,
            grid.height,
            top,
            wide,
            self.scale,
            heights["logical"],
            floor,
            column,
            most,
        )
        cells["buffer"] = size(
            self.buffer_figure,
            cols.buffer_cols,
            rows + 0.5,
            1.3,
            wide,
            self.scale,
            heights["buffer"],
            least,
            column,
            most,
        )
        return cells

    def _draw_labels(self) -> None:
        cols = self._cols
        if cols is None:
            return
        tags = self.frames_source.tags[0]
        labels = L.rows_for(
            cols, self.cells, self.scale, self.offset_at, self.concealed, tags.get("scale", 1)
        )
        for source, rows in ((self.labels_logical, labels["logical"]),
                             (self.labels_buffer, labels["buffer"])):  # fmt: skip
            _set_data(source, L.at_least(rows, len(source.data.get("text", ()))))

    @staticmethod
    def tooltips(
        concealed: bool, in_bytes: bool = False, binned: bool = False, estimated: bool = False
    ) -> dict:
        """Each figure's hover text; while a question waits, no buffer position or reads,
        and a logical cell only its index (its value is the position it reads). With
        ``in_bytes``, positions are in bytes. With ``binned`` (a buffer overview), a
        buffer cell is a range of positions (in bytes too) and how often they are read
        (``estimated``: counted from part of the walk, ``columns.binned_reads``)."""
        logical = [("index", "@index")]
        buffer = [("value", "@value")]
        name = "position (bytes)" if in_bytes else "position"
        if not concealed:
            logical += [("value", "@index{value}"), (name, "@index{pos}")]
            buffer = [(name, "@pos{custom}"), *buffer, ("reads", "@reads")]
        if binned:
            span = "positions (bytes)" if in_bytes else "positions"
            reads = "reads (estimated)" if estimated else "reads"
            buffer = [(span, "@pos{span}")] + ([] if concealed else [(reads, "@reads")])
        return {"logical": logical, "buffer": buffer}

    def _set_tooltips(self) -> None:
        tags = self.frames_source.tags[0] if self.frames_source.tags else {}
        in_bytes = tags.get("unit", "elements") != "elements"
        tips_now = self.tooltips(self.concealed, in_bytes, self.binned, self.estimated)
        for name, tips in tips_now.items():
            tool = self.hover_tools[name]
            if [tuple(t) for t in tool.tooltips] != tips:
                tool.tooltips = tips

    def label_blocks(self, cols: C.Columns, cells: dict[str, float], concealed: bool) -> dict:
        """The figures' labels as blocks, as drawn at this scale (see :mod:`explorer.labels`)."""
        return L.label_blocks(cols, cells, self.scale, self.offset_at, concealed)

    def _first_frame_marks(self, cols: C.Columns, n: int) -> None:
        # The cursor's frames on element 0, drawn with each figure's rings.
        tags = self.frames_source.tags[0]
        cells: dict[str, dict] = {"logical": {}, "buffer": {}}
        if n:
            p = int(cols.frames["pos"][0])
            cells["logical"]["cursor"] = [(cols.logical["x"][0], cols.logical["y"][0], 0, p)]
            cells["buffer"]["cursor"] = [(cols.buffer["x"][p], cols.buffer["y"][p], 0, p)]
        # Only what changed: the browser draws frame 0 itself when new frames arrive
        # (traverse.mjs), so these rows matter for a page before its script runs.
        for fig, source in (("logical", self.marks_logical), ("buffer", self.marks_buffer)):
            _set_data(source, mark_rows(cells[fig], tags["rings"][fig]))

    def _draw_first_frame(self, cols: C.Columns, n: int) -> None:
        # Frame 0, so the page shows a cursor and says where it is before any script runs.
        tags = self.frames_source.tags[0]
        self._first_frame_marks(cols, n)
        _set_data(self.jump_source, {k: [] for k in self.jump_source.data})
        in_bytes = tags.get("unit", "elements") != "elements"
        self.odometer.text = odometer_start(cols, tags.get("scale", 1) if in_bytes else 0)
        where = _plain_text(self.odometer.text)
        for fig, figure_ in (("logical", self.logical_figure), ("buffer", self.buffer_figure)):
            alt = tags["alt"]
            what = alt["hidden"][fig] if self.concealed else alt[fig]
            # The browser keeps the current element in the label (traverse.mjs, describe),
            # and any change to a plot's model repaints all of it: a new walk of the same
            # figure (one that starts elsewhere) leaves the label to the browser.
            if self._described.get(fig) == what:
                continue
            self._described[fig] = what
            label = what if self.concealed else f"{what}: {where}"
            figure_.html_attributes = {"role": "img", "aria-label": label}


#: The traversal's Bokeh widgets in the page's colours, light or dark (theme.css), and
#: the play button a blue that white text is 7:1 on (Bokeh's own is 3.6:1).
TRAVERSAL_CSS = """
:host { color: var(--candela-fg, #212529); }
.bk-slider-title, .bk-slider-value, .bk-input-group label {
  color: var(--candela-fg, #212529); }
.bk-btn-primary { background-color: #005a8c; border-color: #004a73; color: #ffffff; }
.bk-btn-primary:hover { background-color: #004a73; }
.bk-btn-default, .bk-btn-default:hover, .bk-btn-default:focus, .bk-btn-default:active {
  background-color: var(--candela-button-bg, #f3f3f3); color: var(--candela-fg, #212529); }
/* Disabled (a walk of one frame, a question waiting): Bokeh's own light grey under the
   dark theme's light text was 1.04:1; the theme's colours at Bokeh's 0.65 opacity keep 5:1. */
.bk-btn-default[disabled], .bk-btn-default[disabled]:hover, .bk-btn-default[disabled]:focus,
.bk-btn-default[disabled]:active {
  background-color: var(--candela-button-bg, #f3f3f3); border-color: var(--candela-border, #999999);
  color: var(--candela-fg, #212529); }
"""


def _odometer_styles(px: int, grow: bool = False) -> dict:
    # A line of its own in the wrapping traversal row; enlarged, it grows with the screen
    # (28 px and more on a 1920 px projector).
    size = f"max({px}px, 1.5vw)" if grow else f"{px}px"
    return {"font-size": size, "flex": "1 1 100%"}


def _plain_text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


#: The odometer while a question withholds the whole walk (traverse.mjs says the same).
WALK_WITHHELD = "the walk plays once the question is answered"


def position_text(pos: int, prev: int | None = None, unit_bytes: int = 0) -> str:
    """A step's buffer position(s) as the odometer writes them: in bytes when
    ``unit_bytes`` (the bytes of an element of a byte unit) is given, the buffer cell
    beside (``traverse.mjs``, ``positionText``, writes the same).

    >>> position_text(9, unit_bytes=4)
    'position <b>36</b> bytes (cell 9)'
    >>> position_text(1, 8)
    'position 8 → <b>1</b>'
    """

    def moved(f) -> str:
        return f"<b>{f(pos)}</b>" if prev is None else f"{f(prev)} → <b>{f(pos)}</b>"

    if not unit_bytes:
        return f"position {moved(lambda p: p)}"
    cells = str(pos) if prev is None else f"{prev} → {pos}"
    return f"position {moved(lambda p: p * unit_bytes)} bytes (cell {cells})"


def odometer_start(cols: C.Columns, unit_bytes: int = 0) -> str:
    """The odometer before the walk moves (``traverse.mjs`` writes it from then on);
    positions in bytes when ``unit_bytes`` is given."""
    n = len(cols.frames["pos"])
    total = len(cols.logical["x"])
    if not n:
        text = WALK_WITHHELD if total else "no elements to walk"
        return f'<span class="candela-odometer" role="status">{text}</span>'
    p = int(cols.frames["at" if "at" in cols.frames else "pos"][0])
    elements = cols.overview.get("elements", total)
    of = f"{total}" if elements == total else f"{elements:,} ({total} drawn)"
    return (
        f'<span class="candela-odometer" role="status">element 1 of {of} · index '
        f'<b class="candela-odometer-index">{cols.logical["index"][0]}</b> · '
        f"start at the offset: {position_text(p, unit_bytes=unit_bytes)}</span>"
    )
