"""The cost of a walk, drawn: the buffer cut into memory units, each shaded by its entries.

What a walk costs is `candela`'s (:mod:`candela.cost`, closed forms): the item
size in bytes, a memory unit of 32, 64 or 128 bytes (a GPU sector, a CPU cache
line, a GPU line) and, optionally, a warp of elements read at once. This module
is the pure part of the explorer's cost panel (no Panel, no Bokeh models):

- :func:`item_bytes`: the item size the panel counts with: the bytes of the
  stride-unit switch's dtype when it shows bytes, else the shown tensor's own;
- :func:`unit_columns`: one cell per unit of the buffer, shaded by how many
  times the walk enters it (vectorised over the walk's positions, for a walk
  small enough to draw cell by cell; a larger one shows the totals only);
- :func:`cost_html`: the totals in words (`Cost.words`) and what they mean.

>>> from candela import Layout
>>> cols = unit_columns(Layout((4, 8)).T.positions(), 32, 8, 64)
>>> cols["entries"].tolist()
[8, 8, 8, 8]
>>> print(cost_words_plain(Layout((4, 8)).T.cost(8)))
reads 32 elements from 4 cache lines, entering lines 32 times: 2048 bytes moved for 256 used. Each line is entered 8 times on average: a cache with room for one line would fetch it that often; a real cache holds many lines and may keep it between entries.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np

from . import columns as C
from .fields import DTYPE_BYTES

__all__ = [
    "COST_UNITS",
    "DEFAULT_COST_UNIT",
    "SHADES",
    "UNIT_CELLS_LIMIT",
    "WARPS",
    "CostView",
    "cost_html",
    "cost_view",
    "item_bytes",
    "unit_columns",
]

#: The memory-unit sizes offered, in bytes: a GPU sector, a CPU cache line, a GPU line.
COST_UNITS: tuple[int, ...] = (32, 64, 128)
DEFAULT_COST_UNIT = 64
#: The warps offered (elements read at once): none, an NVIDIA warp, an AMD wavefront.
WARPS: tuple[int | None, ...] = (None, 32, 64)
#: At most this many units are drawn, a cell each; a larger buffer shows the totals only.
UNIT_CELLS_LIMIT = 4096
#: The shades of a unit by its entries: never entered, then 1, 2, 3-4, 5-8, ... 33 or more
#: (viridis, pale for one entry and dark for many: the same scale in every view).
SHADES: tuple[tuple[str, str], ...] = (
    ("0", C.GREY),
    ("1", "#FDE724"),
    ("2", "#8FD643"),
    ("3–4", "#35B778"),
    ("5–8", "#20908C"),
    ("9–16", "#30678D"),
    ("17–32", "#443982"),
    ("33+", "#440154"),
)
_SHADE_COLORS = np.array([c for _, c in SHADES], dtype=object)
#: Text on each shade (a dark shade takes white text): for the legend's swatches.
_SHADE_TEXT = ("#000000",) * 5 + ("#FFFFFF",) * 3
WITHHELD = "the cost of the walk shows once the question is answered"


def item_bytes(unit: str, tensor=None, given: int | None = None) -> int:
    """The item size the cost counts with, in bytes.

    The dtype of the stride-unit switch when it shows bytes (``"float32"``: 4);
    in elements, ``given`` (a shown array's own element size) or the bytes of
    the tensor's buffer's dtype (``np.arange``'s int64 for a tensor the
    explorer made).

    >>> item_bytes("float32"), item_bytes("elements", given=2)
    (4, 2)
    """
    if unit in DTYPE_BYTES:
        return DTYPE_BYTES[unit]
    if given:
        return int(given)
    buffer = getattr(tensor, "buffer", None)
    return int(getattr(getattr(buffer, "dtype", None), "itemsize", 8))


def _shade_index(entries: np.ndarray) -> np.ndarray:
    # 0 -> 0, 1 -> 1, 2 -> 2, 3-4 -> 3, 5-8 -> 4, 9-16 -> 5, 17-32 -> 6, 33+ -> 7
    e = np.maximum(entries, 1)
    k = np.ceil(np.log2(e)).astype(np.int64) + 1
    return np.where(entries <= 0, 0, np.minimum(k, len(SHADES) - 1))


def unit_columns(positions, buffer_len: int, itemsize: int, unit: int) -> dict:
    """One row per memory unit of a buffer of ``buffer_len`` elements: its cell and entries.

    ``positions`` is the walk's buffer positions in walk order; unit ``u``
    holds bytes ``u*unit .. (u+1)*unit - 1`` and an element at position ``p``
    lies in unit ``p * itemsize // unit`` (its first byte: candela's rule).
    ``entries[u]`` is how many times the walk enters unit ``u`` (reads an
    element of it right after an element of another unit, or first), so the
    entries sum to ``Cost.unit_entries`` and the units entered number
    ``Cost.units``. Vectorised: no loop over elements.
    """
    pos = np.asarray(positions, dtype=np.int64)
    last = max(int(buffer_len), int(pos.max()) + 1 if pos.size else 0)
    count = max(1, -(-last * itemsize // unit)) if last else 0
    entries = np.zeros(count, dtype=np.int64)
    if pos.size:
        ids = pos * itemsize // unit
        enter = np.ones(ids.size, dtype=bool)
        enter[1:] = ids[1:] != ids[:-1]
        entries = np.bincount(ids[enter], minlength=count).astype(np.int64)
    width = C.buffer_width(count) if count else 1
    u = np.arange(count, dtype=np.int64)
    first = u * unit
    return {
        "x": (u % width).astype(float),
        "y": -(u // width).astype(float),
        "unit": u,
        "entries": entries,
        "color": _SHADE_COLORS[_shade_index(entries)],
        "bytes": np.array([f"{a}–{a + unit - 1}" for a in first.tolist()], dtype=object),
    }


@dataclass(frozen=True)
class CostView:
    """What one view's cost panel draws: the `Cost`, its unit cells and its words.

    ``units`` is empty (no cells) when the walk is too large to draw cell by cell
    or while a question waits; ``error`` says why there is no cost at all.
    """

    cost: object | None  # candela.Cost
    itemsize: int
    unit: int
    warp: int | None
    dtype: str
    units: dict = field(default_factory=dict)
    cols: int = 0
    rows: int = 0
    withheld: bool = False
    error: str = ""

    @property
    def drawn(self) -> bool:
        return bool(self.units) and len(self.units.get("unit", ())) > 0


def empty_units() -> dict:
    return {k: [] for k in UNIT_KEYS}


#: The columns of a cost figure's units source.
UNIT_KEYS = ("x", "y", "unit", "entries", "color", "bytes")


def cost_view(
    layout,
    itemsize: int,
    unit: int = DEFAULT_COST_UNIT,
    warp: int | None = None,
    *,
    positions=None,
    buffer_len: int = 0,
    dtype: str = "",
    withheld: bool = False,
) -> CostView:
    """The cost panel of ``layout`` read with ``itemsize``-byte elements in ``unit``-byte units.

    ``positions`` (the walk's positions, when it is drawn cell by cell) and
    ``buffer_len`` give the cells; without them only the totals. While a
    question waits (``withheld``) nothing is computed for the page.
    """
    if withheld:
        return CostView(None, itemsize, unit, warp, dtype, withheld=True)
    from candela import OpError

    try:
        cost = layout.cost(itemsize, unit=unit, warp=warp)
    except (OpError, ValueError, OverflowError) as exc:
        return CostView(None, itemsize, unit, warp, dtype, error=str(exc))
    units: dict = {}
    cols = rows = 0
    if positions is not None:
        count = -(-max(int(buffer_len), 1) * itemsize // unit)
        if count <= UNIT_CELLS_LIMIT:
            units = unit_columns(positions, buffer_len, itemsize, unit)
            n = len(units["unit"])
            cols = C.buffer_width(n) if n else 0
            rows = -(-n // cols) if cols else 0
    return CostView(cost, itemsize, unit, warp, dtype, units, cols, rows)


def for_state(st, result=None, cols=None, withheld: bool | None = None) -> CostView:
    """The cost panel of an explorer's state ``st`` for ``result`` (default: its own) with
    columns ``cols``: its item size, memory unit and warp; withheld while a question
    waits (``st.concealed``), unless ``withheld`` says otherwise."""
    from .columns import columns_for

    result = st.result if result is None else result
    if cols is None:
        cols = st.columns if result is st.result else columns_for(result.tensor)
    tensor = result.tensor
    given = getattr(st, "given_itemsize", None)
    dtype = st.unit if st.unit in DTYPE_BYTES else ("" if given else tensor.buffer.dtype.name)
    return cost_view(
        result.layout,
        item_bytes(st.unit, st.result.tensor, given),
        st.cost_unit,
        st.warp,
        positions=None if cols.overview else cols.frames["pos"],
        buffer_len=len(tensor.buffer),
        dtype=dtype,
        withheld=bool(st.concealed) if withheld is None else withheld,
    )


def totals_line(st) -> str:
    """The cost in one plain line (the still picture's): ``cost: reads ...``."""
    try:
        return "cost: " + st.cost.words()
    except (ValueError, OverflowError) as exc:
        return f"cost: cannot be counted ({exc})"


def unit_label(unit: int) -> str:
    """The units in words: ``64-byte cache lines``, ``32-byte sectors``, ``128-byte lines``."""
    name = {64: "cache line", 32: "sector", 128: "line"}.get(unit, "unit")
    return f"{unit}-byte {name}s"


def cost_words_plain(cost) -> str:
    """The totals (`Cost.words`) and, in a sentence, what they mean for a student."""
    words = cost.words()
    name = cost.unit_name
    short = name.split()[-1]
    if not cost.units:
        return words + "."
    per = cost.unit_entries / cost.units
    times = f"{per:.1f}".rstrip("0").rstrip(".")
    if cost.unit_entries == cost.units:
        meaning = (
            f"Each {short} is entered once: the walk reads all it needs from a {short} "
            "before it moves on, so none is fetched twice."
        )
    else:
        meaning = (
            f"Each {short} is entered {times} times on average: a cache with room for one "
            f"{short} would fetch it that often; a real cache holds many {short}s and may "
            "keep it between entries."
        )
    return f"{words}. {meaning}"


def cost_html(view: CostView, side: str = "") -> str:
    """The panel's text: a heading, the totals in words and the shades' legend.

    ``side`` names the view in a compare page (``"A"``, ``"B"``).
    """
    of = f" of {side}" if side else ""
    unit_text = unit_label(view.unit)
    dtype = f" ({view.dtype})" if view.dtype else ""
    warp = f", a warp of {view.warp}" if view.warp else ""
    heading = (
        f'<div class="candela-heading">what the walk{of} costs '
        f'<span class="candela-legend">{view.itemsize}-byte elements{html.escape(dtype)}, '
        f"{html.escape(unit_text)}{warp}</span></div>"
    )
    if view.withheld:
        return heading + f'<div class="candela-cost-words candela-legend">{WITHHELD}</div>'
    if view.cost is None:
        return heading + (
            '<div class="candela-cost-words candela-legend">the cost cannot be counted: '
            f"{html.escape(view.error)}</div>"
        )
    words = cost_words_plain(view.cost)
    body = f'<div class="candela-cost-words">{html.escape(words)}</div>'
    if view.drawn:
        swatches = " ".join(
            f'<span class="candela-cost-swatch" style="background:{color};color:{text}">'
            f"{label}</span>"
            for (label, color), text in zip(SHADES, _SHADE_TEXT)
        )
        body += (
            f'<div class="candela-legend candela-cost-legend">each cell is one {html.escape(view.cost.unit_name)}'
            f" of the buffer, shaded by the times the walk enters it: {swatches}</div>"
        )
    elif view.units == {} and view.cost.elements:
        body += (
            '<div class="candela-legend">too many units to draw one by one: the totals above '
            "are counted exactly.</div>"
        )
    return heading + body
