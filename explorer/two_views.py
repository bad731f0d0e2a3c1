"""Two views of one buffer: the second pipeline's grid beside the first, over one lane.

With ``compare`` set (``Explorer(compare=".T")``, ``?compare=.T`` in the URL, or
``explorer.compare(a, b)`` for two NumPy or
PyTorch views of one base), the explorer draws the second view's logical grid
beside the first and one buffer lane under it that says, for every cell of
the shared buffer, which view reads it: the first (A), the second (B), both
(aliasing: a write through one is seen through the other) or neither.
Hovering a cell of either grid or of the lane rings every cell linked to it
in all three, in the browser.

:func:`alias_columns` is the pure part (tested without a page);
:class:`CompareView` holds one display's Bokeh models.
"""

from __future__ import annotations

import numpy as np
from bokeh.core.properties import field
from bokeh.models import ColumnDataSource, CustomJS, HoverTool, Rect, Text

from . import columns as C

__all__ = ["CompareView", "alias_columns", "KINDS"]

#: What a buffer cell is to the two views, its colour (Okabe-Ito) and its label.
KINDS = {
    "first": ("#56B4E9", "A"),  # sky blue: read by the first view only
    "second": ("#E69F00", "B"),  # orange: read by the second view only
    "both": ("#D55E00", "A B"),  # vermillion: read by both, aliased
    "neither": (C.GREY, ""),
}

LINK = "#009E73"  # bluish green, as the hover's own frames
#: The lane sits beside the first grid, in about half the figures' column.
LANE_MAX_PX = 300
#: The least lane cell (px at scale 1) before the lane wraps: its "A B" whole in it.
LANE_CELL = 22
#: The second view's column beside the first grid: its least width (its flex basis, which
#: ``app.py`` gives it) and the gap between them; narrower than that, it wraps below.
BESIDE_MIN_PX, GAP_PX = 240, 16


def lane_px(column: float, grid: float, scale: float = 1.0) -> int:
    """The widest the lane may be: what the second view's column has in a figures'
    column ``column`` px wide with the first grid ``grid`` px wide beside it (the whole
    column once it wraps below the grid), at most ``LANE_MAX_PX`` times ``scale``.

    >>> lane_px(520, 155), lane_px(374, 100), lane_px(374, 155), lane_px(1000, 400, 2)
    (300, 258, 300, 584)
    """
    beside = column - grid - GAP_PX
    room = beside if beside >= BESIDE_MIN_PX else column
    return int(max(120, min(LANE_MAX_PX * scale, room)))


def _reads(tensor, size: int) -> np.ndarray:
    # Counted a chunk of positions at a time: a broadcast of a small buffer can walk
    # millions of elements, and its positions are never all made at once.
    if tensor.len == 0:
        return np.zeros(size, dtype=np.int64)
    return C.binned_reads(tensor.layout, size, 1)[0][:size]


def alias_columns(first, second) -> dict:
    """One row per cell of the first view's buffer: who reads it, its place, colour and label.

    ``second`` counts only when it reads the same buffer (a step that copied
    gives it a buffer of its own, which this lane does not show).

    >>> from candela import Tensor, s
    >>> t = Tensor.arange(4)
    >>> cols = alias_columns(t.slice(s[:3]), t.slice(s[2:]))
    >>> list(cols["kind"]), list(cols["label"])
    (['first', 'first', 'both', 'second'], ['A', 'A', 'A B', 'B'])
    """
    size = len(first.buffer)
    reads_a = _reads(first, size)
    same = second.buffer is first.buffer
    reads_b = _reads(second, size) if same else np.zeros(size, dtype=np.int64)
    a, b = reads_a > 0, reads_b > 0
    kind = np.where(a & b, "both", np.where(a, "first", np.where(b, "second", "neither")))
    cols = C.buffer_width(size)
    pos = np.arange(size)
    return {
        **C.lane_places(size, cols),
        "pos": pos,
        "reads_a": reads_a,
        "reads_b": reads_b,
        "kind": kind.astype(object),
        "color": np.array([KINDS[k][0] for k in kind], dtype=object),
        "label": np.array([KINDS[k][1] for k in kind], dtype=object),
    }


def summary(cols: dict) -> dict[str, int]:
    """How many cells of the buffer are of each kind."""
    kinds = list(cols["kind"])
    return {k: kinds.count(k) for k in KINDS}


#: Hover on a cell of the lane or of either grid: the buffer position it is, or reads,
#: then every cell linked to that position ringed in all three figures. The first grid's
#: rings are painted by its own traversal module, as its hover's are (``paintLinks``):
#: adding a renderer or a tool to a figure already on a page left BokehJS's other hover
#: tools there reading glyph views it had dropped (a TypeError at every hover). The
#: rings are the browser's own: never sent back to the server.
LINK_JS = """
const hit = cb_data?.index?.indices ?? [];
const empty = {x: [], y: []};
// The first grid's rings are painted by its traversal module, once it has run on this
// page (it may not have yet: a hover can come before any frame); run it first then.
const paint_a = (cells) => {
  const st = frames_a.__candela;
  if (st?.paintLinks) { st.paintLinks(cells); return; }
  Promise.resolve(traverse_a.execute(frames_a)).then(() => {
    frames_a.__candela?.paintLinks?.(cells);
  });
};
const clear = () => {
  for (const s of [link_b, link_lane]) if (s.data.x.length) s.data = empty;
  paint_a([]);
};
if (!lane.data.pos.length || !hit.length) { clear(); return; }
const k = hit[0];
const p = which === 'lane' ? lane.data.pos[k] : (which === 'a' ? frames_a : frames_b).data.pos[k];
if (p == null) { clear(); return; }
const cells = (frames, logical) => {
  const out = [];
  const pos = frames.data.pos;
  for (let i = 0; i < pos.length; i++) {
    if (pos[i] === p) out.push([logical.data.x[i], logical.data.y[i], i, p]);
  }
  return out;
};
paint_a(cells(frames_a, logical_a));
const b = same_buffer.tags[0] ? cells(frames_b, logical_b) : [];
link_b.data = {x: b.map(c => c[0]), y: b.map(c => c[1])};
link_lane.data = {x: [lane.data.x[p]], y: [lane.data.y[p]]};
"""


def link_layer(fig, renderer, name: str) -> tuple[ColumnDataSource, HoverTool]:
    """The rings a hover draws on a figure of the second view, and its hover: made with
    the figure, before it is on a page."""
    source = ColumnDataSource({"x": [], "y": []}, name=f"compare-link-{name}", syncable=False)
    fig.add_glyph(source, _ring(), level="overlay")
    hover = HoverTool(renderers=[renderer], tooltips=None, name=f"compare-hover-{name}")
    fig.add_tools(hover)
    return source, hover


def _ring() -> Rect:
    return Rect(
        x=field("x"),
        y=field("y"),
        width=1.0,
        height=1.0,
        fill_alpha=0,
        line_color=LINK,
        line_width=3,
    )


class CompareView:
    """One display's models for the second view: its grid (a second ``Figures``) and the lane.

    ``first`` is the display's own :class:`~explorer.figures.Figures`; hovering
    links its grid, the second grid and the lane.
    """

    def __init__(self, first) -> None:
        from .figures import CELL_FILL, Figures, _figure, fit

        self._fit = fit
        self.first = first
        self._lane: dict | None = None  # the lane's columns, last drawn
        self.second = Figures()
        # The second view's models get names of their own: a page (and its tests) finds
        # the first view's models by name, and a name must name one model.
        for root in (self.second.logical_figure, self.second.buffer_figure, self.second.traversal):
            for model in root.references():
                if model.name and not model.name.startswith("compare-"):
                    model.name = "compare-" + model.name
        self.lane_source = ColumnDataSource(
            {k: [] for k in ("x", "y", "pos", "reads_a", "reads_b", "color", "label")},
            name="compare-lane-source",
        )
        lane = self.lane_figure = _figure("compare-lane-figure", self.second._scale)
        self.lane_cells = lane.add_glyph(
            self.lane_source,
            Rect(
                x=field("x"),
                y=field("y"),
                width=CELL_FILL,
                height=CELL_FILL,
                fill_color=field("color"),
                line_color=None,
            ),
            name="compare-lane-cells",
        )
        self.lane_text = lane.add_glyph(
            self.lane_source,
            Text(
                x=field("x"),
                y=field("y"),
                text=field("label"),
                text_align="center",
                text_baseline="middle",
                text_font_size="11px",
                text_color="#000000",
            ),
        ).glyph
        # A model that holds one flag for the browser: do both views read one buffer?
        self.same_buffer = ColumnDataSource({}, tags=[True], name="compare-same-buffer")
        # The second grid's and the lane's rings and hovers are new, as their figures are;
        # the first grid's rings are its traversal module's (LINK_JS), reached through its
        # one CustomJS model's arguments: nothing is added to a figure already drawn.
        link_b, hover_b = link_layer(self.second.logical_figure, self.second.logical_cells, "b")
        link_lane, hover_lane = link_layer(lane, self.lane_cells, "lane")
        hover_lane.tooltips = LANE_TOOLTIPS
        self.links = {"b": link_b, "lane": link_lane}
        args = {
            "frames_a": first.frames_source,
            "frames_b": self.second.frames_source,
            "logical_a": first.logical_source,
            "logical_b": self.second.logical_source,
            "lane": self.lane_source,
            "link_b": link_b,
            "link_lane": link_lane,
            "same_buffer": self.same_buffer,
            "traverse_a": first.traverse_js,
        }
        for hover, which in ((hover_b, "b"), (hover_lane, "lane")):
            hover.callback = CustomJS(args={**args, "which": which}, code=LINK_JS)
        first.traverse_js.args = {
            **first.traverse_js.args,
            "link": CustomJS(args={**args, "which": "a"}, code=LINK_JS),
        }

    def render(self, first_tensor, second_cols, second_layout, second_tensor, unit: str) -> None:
        """Draw the second view's grid and the lane for the two tensors."""
        self.second.set_scale(self.first.scale)  # enlarged with the first, on a projector
        self.second.render(second_cols, second_layout, unit)
        self._lane = alias_columns(first_tensor, second_tensor)
        self.fit_lane(send=False)
        data = self._lane
        self.lane_source.data = {k: data[k] for k in self.lane_source.data}
        same = second_tensor.buffer is first_tensor.buffer
        if self.same_buffer.tags != [same]:
            self.same_buffer.tags = [same]
        for source in self.links.values():
            if source.data["x"]:
                source.data = {"x": [], "y": []}

    def fit_lane(self, send: bool = True) -> None:
        """Size the lane's cells to the room its column has beside (or under) the first
        grid: drawn again when the first grid or the page's room changes. A lane too long
        for its room at LANE_CELL px wraps into more rows, so its "A B" stay legible."""
        data = self._lane
        if data is None:
            return
        size = len(data["pos"])
        scale = self.first.scale
        room = lane_px(self.first.room[0], self.first.logical_figure.width or 0, scale)
        fits = max(1, int((min(LANE_MAX_PX * scale, room) - 8) / (LANE_CELL * scale) - 0.2))
        cols = max(1, min(C.buffer_width(size), fits))
        places = C.lane_places(size, cols)
        x, y = places["x"], places["y"]
        if not (np.array_equal(x, data["x"]) and np.array_equal(y, data["y"])):
            self._lane = data = {**data, "x": x, "y": y}
            if send and len(self.lane_source.data["x"]) == size:
                self.lane_source.data.update(x=x, y=y)
        rows = -(min(data["y"]) if size else 0) + 1
        # enlarged as the grids are (presenter mode), within the room its column has
        cell = self._fit(self.lane_figure, cols, rows, 0.2, min(LANE_MAX_PX, room), scale,
                         column_px=room)  # fmt: skip
        font = f"{max(11, min(round(cell * 0.45), round(14 * scale)))}px"
        if self.lane_text.text_font_size != font:
            self.lane_text.text_font_size = font


LANE_TOOLTIPS = [("position", "@pos"), ("reads by A", "@reads_a"), ("reads by B", "@reads_b")]
