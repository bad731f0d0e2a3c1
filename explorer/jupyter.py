"""The explorer in Jupyter: ``explorer.show(x)`` and the display glue behind it.

``show(x)`` opens the explorer on a real layout instead of ``Tensor.arange``:
a ``candela.Layout`` or ``candela.Tensor``, a NumPy array (its own buffer,
strides and offset, through ``Tensor.from_numpy``) or anything duck-typed like
a PyTorch tensor (``.shape``, ``.stride()`` and ``.storage_offset()``, strides
in elements). The pipeline then applies on top of that tensor.

Panel needs ``pn.extension()`` before it can display anything in a notebook,
and its JavaScript in the page. :func:`ensure_extension` runs it lazily, when
an :class:`Explorer` is displayed, so importing ``explorer`` (or calling
``show`` outside a notebook) changes nothing in Panel's configuration. It runs
once per front-end page, not once per kernel: a notebook reopened (or a
browser tab reloaded) on a kernel that is still running is a new page without
Bokeh or Panel, and Panel alone counts its extension as loaded for good. Pages
are told apart by the Jupyter session of the request being executed, which
each front-end connection to a kernel picks at random.

The JavaScript and stylesheets are inlined (``pn.config.inline``), so an
explorer renders with no network: by default Panel would fetch them from
cdn.bokeh.org and cdn.holoviz.org. ``PANEL_INLINE=false`` in the kernel's
environment turns that off (smaller notebooks, but a network is needed). Once
an explorer has been displayed, the kernel's other Panel outputs are inlined
too: the setting, and the fix for panes redrawn from the kernel
(:func:`_inline_pane_updates`), are Panel's, for the whole kernel.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["as_tensor", "ensure_extension", "in_notebook", "show"]


def in_notebook() -> bool:
    """True inside a Jupyter kernel (not a terminal IPython, not plain Python)."""
    import sys

    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


#: The front-end pages (Jupyter sessions) this kernel has sent Panel's extension to.
_pages: set[str] = set()


def _page() -> str:
    """The Jupyter session of the front end whose request the kernel is executing."""
    from IPython import get_ipython

    kernel = get_ipython().kernel
    try:
        parent = kernel.get_parent()
    except Exception:  # pragma: no cover - an older ipykernel
        parent = getattr(kernel, "_parent_header", None) or {}
    return str((parent or {}).get("header", {}).get("session", ""))


def ensure_extension() -> None:
    """Load Panel's notebook extension, inlined, into the page that is displaying, once."""
    import panel as pn
    from panel.config import panel_extension

    if not in_notebook():
        return
    page = _page()
    if panel_extension._loaded and page in _pages:
        return
    # Bokeh and Panel's JavaScript go into the output itself, not a CDN link, and
    # stylesheets of models the kernel sends later are inlined too (Panel reads
    # the flag at every update). An explicit PANEL_INLINE still wins.
    if "PANEL_INLINE" not in os.environ:
        pn.config.inline = True
    _inline_pane_updates()
    pn.extension()
    _pages.add(page)


def _inline_pane_updates() -> None:
    """Keep stylesheets inline when a displayed pane is redrawn from the kernel.

    Panel 1.9 inlines stylesheets when a view is first displayed and when a
    layout's children change, but a pane whose object changes (every HTML pane
    of the explorer, at every change of shape or ops) sends its stylesheets
    again as links to cdn.holoviz.org (``loading.css`` and the theme's
    ``default.css`` and ``native.css``): offline they fail, and the browser is
    sent references to stylesheet models it was never given. Patching the
    redrawn model before Panel sends it replaces those links with the inlined
    sheets, as Panel does for layouts.
    """
    from panel.config import config
    from panel.io.notebook import patch_inline_stylesheets
    from panel.io.state import state
    from panel.pane.base import Pane

    update = Pane._update_object
    if getattr(update, "_candela_inline", False):
        return

    def _update_object(self, ref, doc, root, parent, comm):
        update(self, ref, doc, root, parent, comm)
        if comm is None or not config.inline or state._is_pyodide or ref not in self._models:
            return
        from bokeh.models import UIElement

        for model in self._models[ref][0].select({"type": UIElement}):
            patch_inline_stylesheets(model)

    _update_object._candela_inline = True
    Pane._update_object = _update_object


def repr_mimebundle(explorer, include=None, exclude=None):
    """``Explorer._repr_mimebundle_``: load the extension if needed, then Panel's bundle."""
    if not in_notebook():
        return {"text/plain": repr_text(explorer)}, {}
    ensure_extension()
    return explorer._create_view()._repr_mimebundle_(include, exclude)


def repr_text(explorer) -> str:
    """A one-line text form for terminals: the current layout and the pipeline."""
    from .fields import layout_line

    ops = f" ops={explorer.ops!r}" if explorer.ops else ""
    return f"Explorer({layout_line(explorer.layout)}{ops})"


def _layout_tensor(layout):
    # Each buffer value is its own position, as Tensor.arange has it.
    from candela import InvalidShape, Tensor

    if layout.len == 0:
        return Tensor(np.arange(0, dtype=np.int64), layout)
    positions = layout.positions()
    lo, hi = int(positions.min()), int(positions.max())
    if lo < 0:
        raise InvalidShape(
            f"layout {layout} reads position {lo}, before the buffer's start; "
            "give it an offset of at least " + str(-lo + layout.offset),
            layout=layout,
        )
    return Tensor(np.arange(hi + 1, dtype=np.int64), layout)


def _dtype_unit(name: str, itemsize: int) -> str | None:
    """``name`` if the explorer can show strides in its bytes, else None (elements)."""
    from .fields import DTYPE_BYTES

    return name if DTYPE_BYTES.get(name) == itemsize else None


def as_tensor(x) -> tuple[object, str | None]:
    """The ``candela.Tensor`` to explore for ``x``, and the stride unit it counts in.

    The unit is the NumPy dtype's name for arrays (NumPy counts strides in
    bytes), ``None`` (elements) for everything else (PyTorch counts elements).

    >>> a = np.arange(12, dtype=np.int32).reshape(3, 4)
    >>> t, unit = as_tensor(a.T[::2])
    >>> t.shape, t.stride, t.offset, unit
    ((2, 3), (2, 4), 0, 'int32')
    """
    from candela import Layout, Tensor

    if isinstance(x, Tensor):
        return x, None
    if isinstance(x, Layout):
        return _layout_tensor(x), None
    if isinstance(x, np.ndarray):
        return Tensor.from_numpy(x), x.dtype.name
    stride, offset = getattr(x, "stride", None), getattr(x, "storage_offset", None)
    if hasattr(x, "shape") and callable(stride) and callable(offset):
        # A torch.Tensor or alike: strides and offset in elements of its storage.
        layout = Layout.from_strided(
            tuple(int(v) for v in x.shape), tuple(int(v) for v in stride()), int(offset())
        )
        return _layout_tensor(layout), None
    if hasattr(x, "__array_interface__") or hasattr(x, "__array__"):
        array = np.asarray(x)
        return Tensor.from_numpy(array), array.dtype.name
    raise TypeError(
        f"explorer.show() takes a candela Layout or Tensor, a NumPy array, or a tensor with "
        f".shape, .stride() and .storage_offset() (like torch.Tensor); got {type(x).__name__}"
    )


def _given_name(x) -> str:
    """How ``show``'s argument is named in messages: "a NumPy array", "a candela Layout"..."""
    from candela import Layout, Tensor

    if isinstance(x, np.ndarray):
        return "a NumPy array"
    if isinstance(x, (Layout, Tensor)):
        return f"a candela {type(x).__name__}"
    return f"a {type(x).__module__.split('.')[0]} {type(x).__name__}"


_SHOWN = None


def _shown_class():
    """The :class:`~explorer.app.Explorer` that ``show`` makes: its shape is its tensor's.

    An explorer that starts from a given tensor draws that tensor whatever
    ``shape`` says, so a new shape could only be ignored (the box would show
    it, the drawing would not): it raises instead, as does a lesson, which
    starts from its own shapes. Setting ``start`` makes ``shape`` follow it.
    """
    global _SHOWN
    if _SHOWN is not None:
        return _SHOWN
    import param

    from .app import Explorer
    from .state import StateError, parse_shape

    base_shape, base_lesson = Explorer.param["shape"], Explorer.param["lesson"]

    class GivenShape(param.Parameter):
        def __set__(self, obj, val):
            start = None if obj is None else getattr(obj, "start", None)
            if start is not None:
                try:
                    same = parse_shape(val) == tuple(start.shape)
                except StateError:
                    same = False
                if not same:
                    given = getattr(obj, "_given", "a given tensor")
                    raise ValueError(
                        f"this explorer shows {given} of shape {tuple(start.shape)}: its shape "
                        f"cannot become {val!r}. Reshape it in the pipeline (e.g. "
                        f"ex.ops = '.view(...)'), or show another one: explorer.show(...)"
                    )
            super().__set__(obj, val)

    class NoLesson(param.String):
        def __set__(self, obj, val):
            if obj is not None and val and getattr(obj, "start", None) is not None:
                given = getattr(obj, "_given", "a given tensor")
                raise ValueError(
                    f"this explorer shows {given}; a lesson starts from its own shapes. "
                    f"Open it in explorer.Explorer(lesson={val!r})"
                )
            super().__set__(obj, val)

    class ShownExplorer(Explorer):
        __doc__ = Explorer.__doc__
        shape = GivenShape(default=base_shape.default, doc=base_shape.doc)
        lesson = NoLesson(default=base_lesson.default, doc=base_lesson.doc)

        def __init__(self, **params):
            super().__init__(**params)
            self.param.watch(self._follow_start, ["start"])

        def _follow_start(self, event) -> None:
            if event.new is not None and tuple(event.new.shape) != parse_shape(self.shape):
                self.shape = tuple(event.new.shape)

    _SHOWN = ShownExplorer
    return _SHOWN


def show(x, ops: str = "", unit: str | None = None, **params):
    """An :class:`~explorer.app.Explorer` that starts from ``x``; it displays itself.

    ``x`` is a ``candela.Layout`` (buffer values are positions), a
    ``candela.Tensor``, a NumPy array (zero-copy: its base buffer, its strides
    and its offset in that buffer, shown in bytes of its dtype) or anything
    with ``.shape``, ``.stride()`` and ``.storage_offset()`` such as a
    ``torch.Tensor`` (strides in elements). ``ops`` is a pipeline applied on
    top, e.g. ``".transpose()"``. Like any Panel object, the returned explorer
    is drawn when it is a cell's last expression (or passed to ``display``);
    keep it in a variable to read or change it from later cells
    (``ex.ops = ".slice(s[::2])"``, ``ex.unit = "elements"``, ``ex.layout``).
    Its shape is ``x``'s and cannot change: setting ``ex.shape`` to another
    shape, or a ``lesson`` (lessons start from their own shapes), raises a
    ``ValueError`` saying so; ``ex.start = tensor`` swaps the tensor, and the
    shape follows it. Outside a notebook, ``show(x).show()`` serves it in a
    browser tab.
    """
    tensor, dtype = as_tensor(x)
    if dtype is not None:
        dtype = _dtype_unit(dtype, np.dtype(dtype).itemsize)
    chosen = unit if unit is not None else (dtype or "elements")
    # Checked once the start is in place: a shape or lesson that cannot apply raises.
    later = {k: params.pop(k) for k in ("shape", "lesson") if k in params}
    explorer = _shown_class()(
        start=tensor, shape=tuple(tensor.shape), ops=ops, unit=chosen, **params
    )
    explorer._given = _given_name(x)
    explorer.param.update(**later)
    return explorer
