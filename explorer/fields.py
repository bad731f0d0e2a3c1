"""The fields of a layout as text: values as Python prints them, worked formulas, reasons.

Pure functions from a ``candela.Layout`` to strings and to the HTML the page
shows: each field's value inside an element whose CSS class names it (the
contract: ``candela-shape``, ``candela-stride`` ...), each ``adj_stride`` entry
worked out in numbers from its formula, and a one-line reason for each flag.

>>> from candela import Layout
>>> adj_stride_work(Layout((3, 4)).transpose())
['adj_stride[0] = 1 - 4*(3-1) = -7', 'adj_stride[1] = stride[1] = 4']
"""

from __future__ import annotations

import html

import numpy as np

#: Element sizes offered for showing strides in bytes.
#: Bytes per element of each dtype the strides can be shown in (NumPy's names and sizes).
DTYPE_BYTES: dict[str, int] = {
    name: np.dtype(name).itemsize
    for name in (
        "bool",
        "int8",
        "uint8",
        "int16",
        "uint16",
        "float16",
        "int32",
        "uint32",
        "float32",
        "int64",
        "uint64",
        "float64",
        "complex64",
        "complex128",
    )
}
#: The units strides are shown in: elements, or the bytes of one of DTYPE_BYTES.
UNITS: tuple[str, ...] = ("elements", *DTYPE_BYTES)


def _num(v: int) -> str:
    return f"({v})" if v < 0 else str(v)


def adj_stride_work(layout, scale: int = 1) -> list[str]:
    """Each ``adj_stride`` entry worked in numbers from the formula.

    ``adj_stride[d] = stride[d] - sum(stride[k] * (shape[k] - 1) for k > d)``;
    ``scale`` multiplies every stride (bytes per element).
    """
    shape = tuple(layout.shape)
    stride = tuple(v * scale for v in layout.stride)
    adj = tuple(v * scale for v in layout.adj_stride)
    last = len(shape) - 1
    lines = []
    for d in range(len(shape)):
        if d == last:
            lines.append(f"adj_stride[{d}] = stride[{d}] = {adj[d]}")
            continue
        terms = " - ".join(f"{_num(stride[k])}*({shape[k]}-1)" for k in range(d + 1, len(shape)))
        lines.append(f"adj_stride[{d}] = {stride[d]} - {terms} = {adj[d]}")
    return lines


def contiguous_reason(layout, scale: int = 1) -> str:
    """One line saying why ``is_contiguous()`` is what it is, in O(rank); strides times ``scale``.

    When it is false, the first step of the walk that is not +1 is the first
    step of the innermost axis that steps (size > 1) with ``adj_stride != 1``:
    axis ``d`` first steps from ``[0, .., 0, n-1, .., m-1]`` to ``[0, .., 1, 0, .., 0]``.
    """
    shape, adj = tuple(layout.shape), tuple(v * scale for v in layout.adj_stride)
    if layout.is_contiguous():
        if layout.len <= 1:
            return "0 or 1 elements is always contiguous"
        first, last = layout.offset * scale, (layout.offset + layout.len - 1) * scale
        if scale != 1:
            return (
                f"the walk reads positions {first}, {first + scale}, ..., {last} bytes in "
                f"order, one element ({scale} bytes) after another"
            )
        return f"the walk reads positions {first}, {first + 1}, ..., {last} in order"
    for d in range(len(shape) - 1, -1, -1):
        if shape[d] > 1 and adj[d] != scale:
            before = [0] * d + [0] + [n - 1 for n in shape[d + 1 :]]
            after = [0] * d + [1] + [0] * (len(shape) - d - 1)
            return (
                f"from {_index(before)} to {_index(after)} the position changes by "
                f"adj_stride[{d}] = {adj[d]}, not +{scale}"
            )
    return "the layout's strides do not describe one packed run"


def _index(index: list[int]) -> str:
    return str(tuple(index))  # as Python prints a multi-index


def transposed_reason(layout, scale: int = 1) -> str:
    """One line saying why ``is_transposed()`` is what it is; strides times ``scale``."""
    shape = layout.shape
    stride = tuple(v * scale for v in layout.stride)
    adj = tuple(v * scale for v in layout.adj_stride)
    if layout.is_transposed():
        for d in range(len(shape)):
            if layout.is_transposed_at_axis(d):
                return (
                    f"axis {d} steps backwards through memory: adj_stride[{d}] = {adj[d]} < 0 "
                    f"and stride[{d}] = {stride[d]} is not a broadcast"
                )
        return "some axis steps backwards through memory"
    broadcast = [d for d in range(len(shape)) if adj[d] < 0 and stride[d] == 0 and shape[d] > 1]
    if broadcast:
        d = broadcast[0]
        return (
            f"adj_stride[{d}] = {adj[d]} < 0 only rewinds broadcast axis {d} (stride 0): "
            "no axis runs backwards"
        )
    return "no axis that steps has a negative adj_stride"


def field_values(layout, scale: int = 1) -> dict[str, str]:
    """The contract's fields as Python prints them; strides times ``scale``."""
    return {
        "shape": str(tuple(layout.shape)),
        "stride": str(tuple(v * scale for v in layout.stride)),
        "adj-stride": str(tuple(v * scale for v in layout.adj_stride)),
        "offset": str(layout.offset * scale),
        "len": str(layout.len),
        "is-contiguous": str(bool(layout.is_contiguous())),
        "is-transposed": str(bool(layout.is_transposed())),
    }


def _unbroken_terms(line: str) -> str:
    """A worked formula as HTML that wraps only at its spaces: each term (``4*(3-1)``,
    ``-7``) is one unbreakable span, where a browser broke lines after a term's ``-``."""
    return " ".join(
        f'<span class="candela-term">{html.escape(term)}</span>' for term in line.split(" ")
    )


def fields_html(layout, unit: str = "elements", copied: bool = False) -> str:
    """The fields panel: each value in an element with the contract's CSS class."""
    scale = DTYPE_BYTES.get(unit, 1)
    suffix = "" if unit == "elements" else f" bytes ({unit})"
    values = field_values(layout, scale)
    esc = html.escape

    def row(name: str, label: str, extra: str = "") -> str:
        return (
            f'<tr><th>{label}</th><td><code class="candela-{name}">{esc(values[name])}</code>'
            f"{extra}</td></tr>"
        )

    unit_note = f'<span class="candela-unit"> in{esc(suffix)}</span>' if suffix else ""
    work = "".join(f"<div>{_unbroken_terms(line)}</div>" for line in adj_stride_work(layout, scale))
    copy_note = (
        '<div class="candela-copy-note">a step copied the elements into a new packed '
        "buffer: positions now index the copy</div>"
        if copied
        else ""
    )
    return (
        '<div class="candela-fields">'
        "<table>"
        + row("shape", "shape")
        + row("stride", "stride", unit_note)
        + row("adj-stride", "adj_stride", unit_note)
        + f'<tr><td></td><td class="candela-adj-stride-work">{work}</td></tr>'
        + row("offset", "offset", unit_note)
        + row("len", "len")
        + row(
            "is-contiguous",
            "is_contiguous()",
            f' <span class="candela-reason">{esc(contiguous_reason(layout, scale))}</span>',
        )
        + row(
            "is-transposed",
            "is_transposed()",
            f' <span class="candela-reason">{esc(transposed_reason(layout, scale))}</span>',
        )
        + "</table>"
        + copy_note
        + "</div>"
    )


def layout_line(layout, unit: str = "elements") -> str:
    """One compact line for a layout, strides and offset in ``unit``.

    >>> from candela import Layout
    >>> layout_line(Layout((3, 4)).transpose())
    '(4, 3):(1, 4) adj (-7, 4) offset 0'
    >>> layout_line(Layout((3, 4)).transpose(), "float32")
    '(4, 3):(4, 16) adj (-28, 16) offset 0 (bytes of float32)'
    """
    scale = DTYPE_BYTES.get(unit, 1)
    stride = tuple(v * scale for v in layout.stride)
    adj = tuple(v * scale for v in layout.adj_stride)
    suffix = "" if unit == "elements" else f" (bytes of {unit})"
    return f"{tuple(layout.shape)}:{stride} adj {adj} offset {layout.offset * scale}{suffix}"


#: What a heading says in place of what a waiting question withholds.
WAIT = "shows once the question is answered"


def _part(share: float) -> str:
    """A part of the walk as a person reads it: ``1 in 2,442``."""
    return f"1 in {round(1 / share):,}"


def headings_html(
    shape: tuple,
    buffer_size: int,
    buffer_cols: int,
    copied: bool = False,
    waiting: str = "",
    overview: dict | None = None,
    unit_bytes: int = 1,
) -> tuple[str, str]:
    """The logical grid's and the memory buffer's headings, as HTML.

    ``waiting`` is ``""`` when no question waits; else ``"asked"`` (the layout asked
    about is drawn, lettered) or ``"before"`` (the tensor before its last step is).
    ``overview`` is :attr:`explorer.columns.Columns.overview` of a tensor too large to draw
    cell by cell (empty otherwise): the headings say what is drawn. With ``unit_bytes`` other than 1 (a byte unit), an
    overview's cells say how many bytes each stands for, beside the elements.

    >>> from candela import Tensor
    >>> from explorer.columns import columns_for
    >>> big = columns_for(Tensor.arange((300, 300)))
    >>> grid, lane = headings_html((300, 300), 90000, big.buffer_cols, overview=big.overview)
    >>> grid.split("): ")[1].split("<")[0]
    '90,000 elements; drawn: the first and last 3 along axes 0, 1 (⋯ ⋮ elements left out), 36 in all'
    >>> "90,000 cells, drawn as 1,023 of 88 positions each" in lane
    True
    """
    if waiting:
        grid = f"cells lettered in walk order; where each reads {WAIT}"
        if waiting == "before":
            grid = f"before the last step; {grid}"
        buffer = f"{buffer_size} cells, which element reads which cell {WAIT}"
    elif overview:  # too large to draw every cell: what is drawn, and what a cell is
        o = overview
        grid = f"{o['elements']:,} elements"
        if o["drawn"] < o["elements"]:
            parts = []
            fixed = o.get("fixed", 0)
            if fixed:  # leading axes drawn at their index 0 alone
                parts.append(
                    f"x[{', '.join(['0'] * fixed)}] (index 0 along "
                    f"ax{'is' if fixed == 1 else 'es'} {', '.join(map(str, range(fixed)))})"
                )
            if o["summarised"]:
                parts.append(
                    f"{'of it ' if fixed else ''}the first and last {o['edge']} along "
                    f"ax{'is' if len(o['summarised']) == 1 else 'es'} "
                    f"{', '.join(map(str, o['summarised']))} (⋯ ⋮ elements left out)"
                )
            grid += f"; drawn: {', and '.join(parts)}, {o['drawn']:,} in all"
        if o["bin"] > 1:
            each = f"{o['bin']:,} positions"
            if unit_bytes != 1:
                each += f" ({o['bin'] * unit_bytes:,} bytes)"
            buffer = (
                f"{buffer_size:,} cells, drawn as {o['cells']:,} of {each} "
                "each; colour: the first element to read one; faint: read less often; "
                "●: read by a drawn element"
            )
            if o.get("share", 1) < 1:  # too many rows to count in an edit's time
                buffer += f"; read counts estimated from {_part(o['share'])} of the walk"
            elif o.get("sampled", 1) < 1:
                buffer += f"; colours estimated from {_part(o['sampled'])} of the walk"
        else:
            buffer = f"{buffer_size:,} cells, {buffer_cols} per row; ×n: read n times"
    else:
        grid = "each cell shows its value and @ the buffer position it reads"
        buffer = f"{buffer_size} cells, {buffer_cols} per row; ×n: read n times"
    if len(shape) == 1 and not overview:
        from .columns import row_wrap

        wrap = row_wrap(int(shape[0]))
        if wrap < shape[0]:  # one axis, drawn over rows as NumPy prints it
            grid += f"; drawn {wrap} to a row"
    # While a question waits the copy is not named: "packed" would say its strides.
    copy = " — a new packed copy; positions index the copy" if copied and not waiting else ""
    return (
        '<div class="candela-heading">logical grid '
        f'<span class="candela-legend">shape {tuple(shape)}: {grid}</span></div>',
        f'<div class="candela-heading">memory buffer{copy} '
        f'<span class="candela-legend">{buffer}</span></div>',
    )
