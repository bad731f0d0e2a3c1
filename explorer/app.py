"""The Candela Explorer page: a Panel ``Viewer`` that composes state, editor, figures, lessons.

``Explorer(shape=(3, 4), ops=".transpose()")`` is an
:class:`~explorer.state.ExplorerState` (its parameters are the state) that
also draws itself. It composes, and only composes:

- the :class:`~explorer.editor.Editor` (shape and pipeline boxes, op chooser);
- the fields and the error line (text from :mod:`explorer.fields`);
- one :class:`~explorer.figures.Figures` per view: Bokeh models belong to one
  document, so each display of an explorer (a notebook output shown twice, a
  served page) gets its own figures, all drawing the one state;
- the :class:`~explorer.classroom.Classroom`, the :class:`~explorer.keys.Keys`
  and, when served, the :class:`~explorer.url.UrlSync`.

Data flows one way: candela → state (result, columns) → figures → browser.
Serve it with ``candela-explorer`` or ``panel serve explorer/app.py``.
"""

from __future__ import annotations

import contextlib
import html
import logging
import threading
import weakref
from urllib.parse import urlencode

import panel as pn

# Absolute imports: `panel serve explorer/app.py` runs this file outside its package.
from explorer.classroom import Classroom
from explorer.code import numpy_code, torch_code
from explorer.code_panel import code_html
from explorer.columns import columns_for, withheld_columns
from explorer.cost_view import COST_UNITS, CostView, cost_html, for_state, unit_label
from explorer.editor import NO_PYTHON_NOTE, Editor
from explorer.enter_box import EnterBox
from explorer.fields import DTYPE_BYTES, fields_html, headings_html
from explorer.figures import Figures
from explorer.keys import Keys
from explorer.lessons import draws_before, grid_drawn, walk_limit
from explorer.markup import inline_html
from explorer.notebook import in_turn, one_message, output_drawn, push_drawn, repr_mimebundle
from explorer.patches import give
from explorer.patches.inline_once import render_once
from explorer.state import DEFAULT_SHAPE, ExplorerState, StateError
from explorer.style import (
    CONTROL_CSS,
    CSS,
    FIELDS_CLASSES,
    HEADING_CLASSES,
    LAYOUT_CSS,
    PANE_SHEETS,
    PRESENTER_CLASS,
    THEME_CLASSES,
    THEME_CSS,
    for_pane,
    legend_html,
    theme_classes,
    title_html,
)
from explorer.text_pane import TextPane
from explorer.two_views import KINDS, CompareView, alias_columns, summary
from explorer.url import Location, UrlSync

__all__ = ["DEFAULT_SHAPE", "Explorer", "app"]


log = logging.getLogger("candela-explorer")

FIELDS_HEADING = '<div class="candela-heading">fields</div>'
#: How much bigger cells, labels and the traversal controls are in presenter mode.
PRESENTER_SCALE = 1.5
#: The editing column's and the lesson panel's widths, normally and in presenter mode.
#: (384 in presenter mode: a 1024 px projector keeps 624 px for the figures, a grid of four
#: tiles of 2x3 with 40 px cells.)
CONTROLS_WIDTH, LESSON_WIDTH, PRESENTER_LESSON_WIDTH = 420, 300, 384
#: A column of a fixed width that a narrower screen (a phone) narrows: no sideways scroll.
FIT_SCREEN = {"min-width": "0px", "max-width": "calc(100vw - 16px)", "flex-shrink": "1"}
#: In presenter mode the lesson panel grows with the screen: 28% of a wide projector's.
_GROWN = f"clamp({PRESENTER_LESSON_WIDTH}px, 28vw, 640px)"
PRESENTER_LESSON_STYLES = {"width": _GROWN, "flex": f"0 1 {_GROWN}"}


class _Root(pn.Row):
    """A view's outermost box; it tells its view when Panel drops or draws its last model.

    The title on a line of its own, then the controls, the figures and the lesson
    panel side by side, wrapping below one another on a narrow screen: one flex
    box, with no box inside for the columns (each box costs every session models).

    Panel calls ``_cleanup(root)`` on a display that is gone (a cleared notebook
    output, a closed served session) and forgets that model; once none is left,
    the view is gone and stops being redrawn. A notebook widget shown again
    draws the same column anew (``_get_model``), and the view comes back.
    """

    def _get_model(self, doc, root=None, parent=None, comm=None):
        model = super()._get_model(doc, root, parent, comm)
        if self._on_shown is not None:
            self._on_shown()
        return model

    def _cleanup(self, root=None) -> None:
        super()._cleanup(root)
        if not self._models and self._on_gone is not None:
            self._on_gone()

    def _on_msg(self, ref, manager, msg) -> None:
        # A page's message about a notebook output: applied in turn with the explorer's
        # changes on other threads (explorer.notebook.in_turn says why).
        with in_turn():
            super()._on_msg(ref, manager, msg)

    _on_shown = None
    _on_gone = None


# What the patch inline_once changes of the view's box once a notebook installs it.
give("inline_once", _Root, "_render_model", render_once)


def _figure_pane(model) -> pn.pane.Bokeh:
    """A pane for one of a view's Bokeh models (a figure, the traversal's controls)."""
    return pn.pane.Bokeh(model, autodispatch=False)


class _View:
    """One display of an explorer: its own figures inside the shared panes."""

    def __init__(self, ex: Explorer) -> None:
        self.figures = Figures()
        f = self.figures
        # The figures have no Python callbacks (the page's traversal and hover are
        # JavaScript): nothing for Panel to wrap for a notebook, model by model, at each display.
        self.plots = [_figure_pane(f.logical_figure), _figure_pane(f.buffer_figure)]
        self.traversal = _figure_pane(f.traversal)
        scroll = {"overflow": "auto", "max-width": "100%"}
        #: The second view (``compare``): built the first time there is one (its models
        #: cost every page that never compares), then beside the first grid.
        self.compare: CompareView | None = None
        self.compare_column: pn.Column | None = None
        self.compare_cost: pn.Column | None = None
        #: The first grid's column: the second view goes beside it (ensure_compare).
        self.grid_column = pn.Column(self.plots[0], styles=scroll)
        views = pn.Column(
            ex.logical_heading,
            self.grid_column,
            ex.buffer_heading,
            pn.Column(self.plots[1], styles=scroll),
            ex.legend,
            self.traversal,
            css_classes=["candela-views"],
            sizing_mode="stretch_width",
            # Takes the room the other columns leave, down to 480 px (320 px in a narrow
            # explorer, theme.css: a notebook's output), then wraps below.
            styles={"flex": "1 1 480px", "min-width": "300px"},
        )
        #: The cost of the walk (explorer.cost_view): its words, its units, its choices.
        self.cost_column = pn.Column(
            ex.cost_pane,
            _figure_pane(f.cost_figure),
            ex.cost_controls,
            css_classes=["candela-cost"],
            sizing_mode="stretch_width",
            # never wider than the views' column (a wide buffer scrolls in its own panel)
            styles={"max-width": "100%", "min-width": "0", "overflow-x": "auto"},
        )
        views.append(self.cost_column)
        self.views = views
        self.root = _Root(
            ex.title,
            ex.controls,
            views,
            ex.lesson_area,
            css_classes=["candela-explorer", *theme_classes(ex.theme)],
            stylesheets=[THEME_CSS],  # the colours, light or dark, every pane inherits
            sizing_mode="stretch_width",
            margin=(5, 0),  # no side margins: the output area stays without a sideways scroll
            # Bokeh gives a row the width of its fixed-width children side by side as its
            # least width; this one wraps them, and is as narrow as the screen.
            # Its width is what theme.css asks of (a container): a narrow explorer keeps
            # its figures beside the controls.
            styles={
                "flex-wrap": "wrap", "gap": "8px 16px", "min-width": "0",
                "container-type": "inline-size",
            },
        )  # fmt: skip
        # A weak reference: a view kept by Panel must not keep its explorer alive.
        owner = weakref.ref(ex)
        self.root._on_gone = lambda: (e := owner()) is not None and e._drop_view(self)
        self.root._on_shown = lambda: (e := owner()) is not None and e._keep_view(self)

    def ensure_compare(self, ex: Explorer) -> CompareView:
        """The second view's models and column, built (and put beside the grid) once."""
        if self.compare is None:
            scroll = {"overflow": "auto", "max-width": "100%"}
            self.compare = CompareView(self.figures)
            self.compare_column = pn.Column(
                ex.compare_heading,
                pn.Column(_figure_pane(self.compare.second.logical_figure), styles=scroll),
                ex.lane_heading,
                pn.Column(_figure_pane(self.compare.lane_figure), styles=scroll),
                ex.compare_fields,
                css_classes=["candela-compare-views"],
                # (B's fields table, wider than a narrow column, scrolls inside it: the page
                # keeps no sideways scroll)
                styles={"flex": "1 1 240px", "min-width": "0", "overflow-x": "auto"},
            )
            # The second view's cost right under the first's: the two walks' costs in one
            # picture (x against x.T), and the grids' column no wider.
            self.compare_cost = pn.Column(
                ex.compare_cost_pane,
                _figure_pane(self.compare.second.cost_figure),
                css_classes=["candela-cost", "candela-compare-cost"],
                sizing_mode="stretch_width",
                styles={"max-width": "100%", "min-width": "0", "overflow-x": "auto"},
            )
            at = list(self.views.objects).index(self.cost_column)
            self.views.insert(at + 1, self.compare_cost)
            # The first grid and the second side by side, wrapping on a narrow screen
            # (found by itself: presenter mode puts the traversal first).
            at = list(self.views.objects).index(self.grid_column)
            self.views[at] = pn.Row(
                self.grid_column,
                self.compare_column,
                sizing_mode="stretch_width",
                styles={"flex-wrap": "wrap", "gap": "8px 16px", "min-width": "0"},
            )
        return self.compare

    def arrange(self, ex: Explorer, presenter: bool) -> None:
        """Presenter mode puts the lesson first, where a projector shows it, and the
        traversal's controls above the figures, on the first screen; else the tools."""
        first, last = (ex.lesson_area, ex.controls) if presenter else (ex.controls, ex.lesson_area)
        order = [ex.title, first, self.views, last]
        if list(self.root.objects) != order:
            self.root.objects = order
        views = [o for o in self.views.objects if o is not self.traversal]
        views = [self.traversal, *views] if presenter else [*views[:5], self.traversal, *views[5:]]
        if list(self.views.objects) != views:
            self.views.objects = views


class Explorer(ExplorerState, pn.viewable.Viewer):
    """The explorer page; its parameters (``shape``, ``ops``, ``unit`` ...) hold its state.

    >>> ex = Explorer(shape=(3, 4), ops=".transpose()")
    >>> ex.layout.adj_stride, ex.error
    ((-7, 4), None)
    """

    def __init__(self, **params) -> None:
        __tracebackhide__ = True
        from explorer.classroom import lesson_problem

        if params.get("lesson") and (problem := lesson_problem(params["lesson"])):
            raise StateError(problem)  # (a lesson of a given tensor: the state says why)
        super().__init__(**params)
        self._build_panes()
        self.keys = Keys(sizing_mode="stretch_width")
        self.classroom = Classroom(self, on_reveal=self._play)
        self.keys.on_key = self.classroom.on_key
        self.keys.on_room = self._on_room
        self.keys.on_shown = lambda: output_drawn(pn.state.curdoc)
        #: The lesson panel and the keyboard help: the page's right-hand column.
        self.lesson_area = self.classroom.panel
        self.lesson_area.param.update(
            objects=[*self.lesson_area.objects, self.keys],
            width=LESSON_WIDTH,
            sizing_mode=None,  # its own width, as wide in every layout (or the screen)
            styles={**self.lesson_area.styles, **FIT_SCREEN},
            css_classes=[*self.lesson_area.css_classes, "candela-lesson-area"],
        )
        self._phone_order()
        self._views: list[_View] = []
        #: The views to draw once the outermost batch ends (_drawn_once).
        self._to_draw: list[_View] = []
        self._view = self._new_view()
        self.url: UrlSync | None = None
        self.watch_batched(self._on_columns, ["columns"])
        self.watch_batched(self._on_compare, ["compare_result", "compare"])
        self.watch_batched(self._on_unit, ["unit"])
        self.watch_batched(self._on_cost, ["cost_unit", "warp"])
        self.watch_batched(self._show_error, ["error"])
        self.watch_batched(self._apply_view_state, ["presenter", "concealed"])
        self.watch_batched(self._on_theme, ["theme"])
        for obj in self._styled_objects():  # before anything is drawn: see style.PRESENTER_CSS
            sheet = (
                CONTROL_CSS
                if isinstance(obj, (pn.widgets.Widget, EnterBox))
                else LAYOUT_CSS
                if isinstance(obj, pn.layout.Panel)
                else CSS
            )
            if sheet == CSS and PANE_SHEETS.intersection(obj.stylesheets):
                continue  # a pane of text with its own part of the sheet (style.for_pane)
            if sheet not in obj.stylesheets:
                obj.stylesheets = [*obj.stylesheets, sheet]
        self._show_error()
        self._render_text()
        self._render_compare_text()
        self._apply_view_state()
        self._built = True

    # ------------------------------------------------------------------ public

    @property
    def figures(self) -> Figures:
        """The figures of the first view still shown (each display has its own; all show
        one state), or of the first view when none is."""
        return (self._views[0] if self._views else self._view).figures

    @property
    def editing_parts(self) -> list:
        """What presenter mode hides: the editing tools a projected lesson does not need."""
        return [*self.editor.editing_parts, self.compare_input]

    @property
    def numpy_code(self) -> str:
        """The state on show as runnable NumPy code: ``x = np.arange(...)...``, ``y = ...``.

        Run, ``y`` has this explorer's shape, strides, offset and values.

        >>> print(Explorer(shape=(3, 4), ops=".T[::2]").numpy_code)
        import numpy as np
        <BLANKLINE>
        x = np.arange(12).reshape(3, 4)
        y = x.T[::2]
        """
        return numpy_code(self.result)

    @property
    def torch_code(self) -> str:
        """The state on show as runnable PyTorch code, in PyTorch's documented words."""
        return torch_code(self.result)

    def _phone_order(self) -> None:
        # Classes by which a phone's page puts the lesson's question before the figures and
        # its text after them (theme.css, page.css); the step box takes the page's sheet.
        c = self.classroom
        parts = dict(zip(("header", "nav", "question", "text", "note", "download"), c.step_parts))
        for obj, name in ((c.step_box, "step-box"), (c.message_pane, "lesson-message-box"),
                          (parts["header"], "lesson-header-box"), (parts["nav"], "lesson-nav"),
                          (parts["question"], "question-box"), (parts["note"], "unit-note-box"),
                          (parts["download"], "download-box")):  # fmt: skip
            obj.css_classes = [*obj.css_classes, f"candela-{name}"]
        c.step_box.stylesheets = [*c.step_box.stylesheets, LAYOUT_CSS]

    def reset(self) -> None:
        """Clear the pipeline; in a lesson, go back to the step's own shape and pipeline
        (an empty one would leave the step's picture for the bare tensor)."""
        step = self.classroom.current_step
        if step is None:
            super().reset()
        else:
            self.param.update(shape=step.shape, ops=step.ops, compare=step.compare)

    def open_url(self, search: str | None = None, location=None) -> str | None:
        """Show the state a query string names, as a link would; returns any message.

        Served, the page's own location is read and kept in step with the state;
        elsewhere a stand-in :class:`~explorer.url.Location` holds the query.
        """
        if self.url is None:
            location = location if location is not None else Location(search=search or "")
            self.url = UrlSync(self, location, at_step=self.classroom.at_step)
            self.keys.param.update(follow_history=True)
            self.keys.on_history = self.url.follow
        elif search is not None:
            self.url.follow(search)
        found = [*self.url.messages, self.classroom.message or ""]
        return "\n".join(m for m in found if m) or None

    def __panel__(self):
        # The first display takes the view built with the explorer; every further one
        # (the same explorer shown twice) gets figures of its own.
        view = self._view if not self._view_taken else self._new_view()
        self._view_taken = True
        return view.root

    _view_taken = False

    def _lesson_problem(self, lesson: object) -> str | None:
        from explorer.classroom import lesson_problem

        classroom = getattr(self, "classroom", None)
        return lesson_problem(lesson, classroom.catalogue if classroom is not None else None)

    def __repr__(self) -> str:
        """One line, as it would be written: ``Explorer(shape=(3, 4), ops='.T')``."""
        from explorer.notebook import repr_text

        return repr_text(self)

    def _repr_mimebundle_(self, include=None, exclude=None):

        return repr_mimebundle(self, include, exclude)

    def save_html(self, path, title: str = "Candela Explorer"):
        """Write this state as one self-contained HTML page (no Python, no network)."""
        from explorer.export import save_html

        return save_html(self, path, title=title)

    # ------------------------------------------------------------------ building

    def _build_panes(self) -> None:
        self.editor = Editor(self)
        self.error_pane = TextPane(
            '<div class="candela-error"></div>', stylesheets=for_pane("candela-error"),
            sizing_mode="stretch_width",
            margin=(0, 10),
        )  # fmt: skip
        #: The fields under their heading (one pane: hidden together while a question waits).
        self.fields_pane = TextPane(
            "", stylesheets=for_pane(*FIELDS_CLASSES), sizing_mode="stretch_width"
        )
        self.buffer_heading = TextPane("", stylesheets=for_pane(*HEADING_CLASSES))
        self.logical_heading = TextPane("", stylesheets=for_pane(*HEADING_CLASSES))
        self.legend = TextPane(
            legend_html(), stylesheets=for_pane("candela-legend", "candela-swatch")
        )
        self.title = TextPane(
            title_html(), stylesheets=for_pane("candela-title", "candela-subtitle"),
            sizing_mode="stretch_width",
            styles={"flex": "1 1 100%"},  # a line of its own in the view's wrapping row
        )  # fmt: skip
        from explorer.export import download_button  # the offline page of the current state

        self.download_button = download_button(self, align="end", width=120)
        #: The second pipeline over the same tensor (``compare``), and its view's text.
        self.compare_input = EnterBox(
            label="compare: a second pipeline (Enter)",
            value=self.compare,
            placeholder=".T",
            css_classes=["candela-compare-input"],
            offline_note=NO_PYTHON_NOTE,  # (the widest box: the note reads on few lines)
            sizing_mode="stretch_width",
            min_width=260,
            stylesheets=[CONTROL_CSS],
        )
        self.compare_input.param.watch(self._on_compare_input, "value")
        #: The cost panel's words (each view's units are its own figure), and its choices.
        self.cost_pane = TextPane(
            "", stylesheets=for_pane(*HEADING_CLASSES), sizing_mode="stretch_width"
        )
        self.compare_cost_pane = TextPane(
            "", stylesheets=for_pane(*HEADING_CLASSES), sizing_mode="stretch_width"
        )
        self.cost_unit_select = pn.widgets.Select.from_param(
            self.param.cost_unit, label="memory unit",
            options={unit_label(u): u for u in (64, 32, 128) if u in COST_UNITS},
            css_classes=["candela-cost-unit"], width=170, stylesheets=[CONTROL_CSS],
            description=None,  # (a tooltip is two models more in every session)
        )  # fmt: skip
        # (0 for no warp: a select shows no label for None)
        self.warp_select = pn.widgets.Select(
            label="read at once (GPU)", value=self.warp or 0,
            options={"one element (no warp)": 0, "a warp of 32": 32, "a wavefront of 64": 64},
            css_classes=["candela-cost-warp"], width=200, stylesheets=[CONTROL_CSS],
        )  # fmt: skip
        self.warp_select.param.watch(
            lambda e: setattr(self, "warp", e.new or None) if (e.new or None) != self.warp
            else None, "value",
        )  # fmt: skip
        self.cost_controls = pn.Row(
            self.cost_unit_select, self.warp_select, styles={"flex-wrap": "wrap"}
        )
        self.compare_heading = TextPane("", stylesheets=for_pane(*HEADING_CLASSES))
        self.lane_heading = TextPane("", stylesheets=for_pane(*HEADING_CLASSES))
        self.compare_fields = TextPane(
            "", stylesheets=for_pane(*FIELDS_CLASSES), sizing_mode="stretch_width"
        )
        ed = self.editor
        # On a phone each box is as wide as the screen and a row wraps: no sideways scroll.
        narrow = {"flex-wrap": "wrap", "max-width": "calc(100vw - 16px)"}
        self.controls = pn.Column(
            pn.Row(ed.shape_input, ed.unit_select, self.download_button, styles=narrow),
            pn.Row(
                ed.ops_input,
                ed.undo_button,
                ed.reset_button,
                sizing_mode="stretch_width",
                styles=narrow,
            ),  # fmt: skip
            self.compare_input,
            self.error_pane,
            *ed.builder,
            self.fields_pane,
            *ed.step_view,
            width=CONTROLS_WIDTH,
            css_classes=["candela-controls"],
            styles=FIT_SCREEN,
        )

    def _new_view(self) -> _View:
        view = _View(self)
        self._views.append(view)
        # Presented first (a further display of a presented page): drawn at its scale.
        self._present(view, bool(self.presenter))
        self._draw(view)
        self._draw_compare(view)
        return view

    def _drop_view(self, view: _View) -> None:
        """A display is gone: stop drawing it, so edits cost only the views still shown."""
        if view in self._views:
            self._views.remove(view)

    def _keep_view(self, view: _View) -> None:
        """A dropped view drawn again (a notebook output shown anew): draw it as it is now."""
        if view not in self._views:
            self._views.append(view)
            with pn.io.unlocked():
                view.figures.set_unit(self.unit)
            self._apply_view_state()  # presenter, concealment and a redraw of every view

    # ------------------------------------------------------------------ drawing

    def _batch(self):
        # Every change an edit makes (boxes, step list, figures, fields, URL, download
        # name) held and sent as one message: without it Panel sent each widget's change
        # as a message of its own (six for a pipeline edit), and the browser laid the page
        # out for each before the figures' data came last. In a notebook Panel's hold does
        # nothing (no current document): there each output's changes are sent together,
        # once the page has drawn the output (one_message).
        if not self._built:
            return super()._batch()
        batch = contextlib.ExitStack()
        batch.enter_context(pn.io.hold())
        batch.enter_context(one_message([view.root for view in self._views]))
        batch.enter_context(self._drawn_once())
        return batch

    _built = False
    #: How deep in batches the explorer is; whether to play once the outermost ends.
    _depth = 0
    _play_after = False

    @contextlib.contextmanager
    def _drawn_once(self):
        """Each view drawn once, as the batch's last change, however many changes of the
        batch asked for it: a view drawn twice in one held message (a step that reveals
        the last one's answer, then moves on) sent, besides the new state, a change of a
        few columns whose values Bokeh reads when the message is sent, the new ones, of
        another length than the source's other columns ("Size mismatch" in the page)."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0 and self._to_draw:
                views, self._to_draw = self._to_draw, []
                for view in views:
                    self._draw(view)
            if self._depth == 0 and self._play_after:
                self._play_after = False
                self._play()  # after the walk it plays is drawn

    def _play(self) -> None:
        if self._depth > 0:
            self._play_after = True
            return
        self.keys.play_count += 1

    def _on_columns(self, event) -> None:
        with pn.io.hold():  # the whole redraw reaches the browser as one message
            for view in self._views:
                self._draw(view)
                if self.compare_result is not None:
                    self._draw_compare(view)  # the lane shows what the first view reads
            self._render_text()
            if self.compare_result is not None:
                self._render_compare_text()

    def _on_compare_input(self, event) -> None:
        if event.new != self.compare:
            with self.typed():  # a bad pipeline is shown under the boxes
                self.compare = event.new

    def _on_compare(self, *events) -> None:
        if self.compare_input.value != self.compare:
            self.compare_input.value = self.compare
        if any(e.name == "compare_result" for e in events):
            with pn.io.hold():
                for view in self._views:
                    self._draw_compare(view)
                self._render_compare_text()

    def _draw_compare(self, view: _View) -> None:
        other = self.compare_result
        # Neither drawn nor sent while a question waits, as the fields are not: its grid,
        # lane and fields could answer it. Drawn when the question is answered or shown.
        if other is None or self.concealed:
            if view.compare_column is not None:
                view.compare_column.visible = view.compare_cost.visible = False
            return
        view.ensure_compare(self)
        view.compare_column.visible = view.compare_cost.visible = True
        from explorer.columns import columns_for

        try:
            with pn.io.unlocked():
                second = columns_for(other.tensor)
                view.compare.render(
                    self.result.tensor, second, other.layout, other.tensor, self.unit,
                )  # fmt: skip
                view.compare.second.render_cost(self._cost_view(other, second))
        except Exception as exc:  # a bug must not take the page down
            log.warning("drawing the second view failed: %s: %s", type(exc).__name__, exc)
            self.show_error(f"could not draw the second view ({type(exc).__name__}: {exc})")

    def _render_compare_text(self) -> None:
        other = self.compare_result
        if other is None or self.concealed:
            # No second set of field classes on the page while there is no second view
            # (or while a question waits: they could answer it).
            for pane in (self.compare_heading, self.lane_heading, self.compare_fields):
                pane.object = ""
            self.compare_cost_pane.object = ""
            return
        self.compare_heading.object = (
            f'<div class="candela-heading">second view (B): <code>{html.escape(other.ops)}'
            f'</code> <span class="candela-legend">shape {tuple(other.layout.shape)}; '
            "hover a cell to see the cells linked to it in both views</span></div>"
        )
        counts = summary(alias_columns(self.result.tensor, other.tensor))
        legend = " · ".join(
            f'<span style="color:{KINDS[k][0]}">■</span> {words}: {counts[k]}'
            for k, words in (
                ("first", "A only"),
                ("second", "B only"),
                ("both", "both, aliased"),
                ("neither", "neither"),
            )
        )
        copy = (
            ""
            if other.tensor.buffer is self.result.tensor.buffer
            else " — a step copied: the two views read different buffers; this lane is A's"
        )
        self.lane_heading.object = (
            f'<div class="candela-heading">one buffer, two views{copy} '
            f'<span class="candela-legend candela-compare-legend">{legend}</span></div>'
        )
        self.compare_cost_pane.object = cost_html(self._cost_view(other), side="B")
        self.compare_fields.object = (
            '<div class="candela-compare">'
            + FIELDS_HEADING.replace("fields", "fields of B")
            + fields_html(other.layout, self.unit, copied=other.copied)
            + "</div>"
        )

    def _on_theme(self, event) -> None:
        # Light, dark, or (none) following the system or the notebook: theme.css.
        for view in self._views:
            classes = [c for c in view.root.css_classes if c not in THEME_CLASSES]
            view.root.css_classes = classes + theme_classes(self.theme)

    def _on_room(
        self, width: int, height: int, figures: int | None = None, grid: int | None = None
    ) -> None:
        # A page says how much room its figures have: its own views' cells sized to it
        # (an explorer shown on two pages has a view in each, each page its own room).
        doc = pn.state.curdoc
        output_drawn(doc)  # (a page that sends its room has drawn the output)
        resized = []
        with pn.io.hold():
            for view in self._views:
                shown_in = view.figures.logical_figure.document
                if doc is not None and shown_in is not None and shown_in is not doc:
                    continue
                with pn.io.unlocked():
                    view.figures.set_room(width, height, figures, grid)
                    if view.compare is not None:  # the lane fits what the grid leaves it
                        view.compare.fit_lane()
                resized.append(view)
            if resized:  # the lane may wrap otherwise: its heading says how
                self._render_headings()
        if doc is not None and doc.session_context is None:
            # In a notebook a message from the page changes the figures' Bokeh models
            # outside any widget's change, which Panel would send: sent here.
            push_drawn(view.root for view in resized)

    def _on_unit(self, event) -> None:
        with pn.io.hold():
            self._render_compare_text()
            self._render_text()
            for view in self._views:
                with pn.io.unlocked():
                    view.figures.set_unit(self.unit)
            self._on_cost()  # the item size follows the unit

    def _on_cost(self, *events) -> None:
        """A new memory unit, warp or item size: each view's cost panel drawn again."""
        if self.warp_select.value != (self.warp or 0):
            self.warp_select.value = self.warp or 0
        with pn.io.hold():
            self._render_cost_text()
            self._render_compare_text()
            for view in self._views:
                with pn.io.unlocked():
                    view.figures.render_cost(self._cost_view())
                    if view.compare is not None and self.compare_result is not None:
                        other = self.compare_result
                        view.compare.second.render_cost(
                            self._cost_view(other, columns_for(other.tensor))
                        )

    def _cost_view(self, result=None, cols=None) -> CostView:
        """What a cost panel draws for ``result`` (default: the first view's) with its
        columns ``cols``: nothing while a question waits (it could answer it)."""
        result = self.result if result is None else result
        if cols is None:
            cols = self.columns if result is self.result else columns_for(result.tensor)
        key = (id(result), self.unit, self.cost_unit, self.warp, bool(self.concealed),
               self.given_itemsize)  # fmt: skip
        cache = self.__dict__.setdefault("_cost_cache", {})
        if key in cache and cache[key][0] is result:
            return cache[key][1]
        view = for_state(self, result, cols)
        if len(cache) > 8:
            cache.clear()
        cache[key] = (result, view)
        return view

    def _render_cost_text(self) -> None:
        side = "A" if self.compare_result is not None and not self.concealed else ""
        self.cost_pane.object = cost_html(self._cost_view(), side=side)

    def _draw(self, view: _View) -> None:
        if self._depth > 0:  # at the end of the batch (_drawn_once)
            if view not in self._to_draw:
                self._to_draw.append(view)
            return
        doc = view.figures.logical_figure.document
        if doc is not None and doc is not pn.state.curdoc and doc.session_context is not None:
            # A view in another served session (one explorer shown on two pages): its
            # models change under that document's own lock, on its next tick.
            doc.add_next_tick_callback(lambda: self._draw_now(view))
        else:
            self._draw_now(view)

    def _waiting(self):
        """The lesson question waiting for its answer, or None (none, or answered)."""
        classroom = getattr(self, "classroom", None)
        return classroom.waiting if self.concealed and classroom is not None else None

    def _drawn(self) -> tuple:
        """What the page may draw now: ``(columns, tensor)``.

        The result's own, or while a question waits what its kind lets the page show
        (:mod:`explorer.lessons.withholding`): the tensor before the last step for a
        question about the shape, a walk that stops before the asked jump, no colour
        or label that says where an element sits. Only this reaches the browser.
        """
        question = self._waiting()
        if question is None:
            return self.columns, self.tensor
        result = self.result
        tensor = result.tensor
        if draws_before(question):
            # The start, when there is no step: its shape is in the shape box anyway.
            tensor = result.states[-2] if len(result.states) > 1 else result.states[0]
            cols = columns_for(tensor)
        else:
            cols = self.columns
        limit = 0 if draws_before(question) else walk_limit(question, tensor.layout)
        return withheld_columns(cols, limit), tensor

    def _draw_now(self, view: _View) -> None:
        cols, tensor = self._drawn()
        try:
            with pn.io.unlocked():
                view.figures.render(cols, tensor.layout, self.unit)
                view.figures.render_cost(self._cost_view())
        except Exception as exc:  # a bug must not take the page down: say so, keep the page
            log.warning("drawing failed: %s: %s", type(exc).__name__, exc)
            self.show_error(f"could not draw this state ({type(exc).__name__}: {exc})")
            return

    def _render_text(self) -> None:
        self._render_headings()
        self._render_fields()
        self._render_cost_text()

    def _render_headings(self) -> None:
        cols, tensor = self._drawn()
        result = self.result
        question = self._waiting()
        waiting = grid_drawn(question, len(result.states) - 1)
        self.logical_heading.object, self.buffer_heading.object = headings_html(
            tensor.layout.shape,
            len(tensor.buffer),
            # as many to a row as the (first) page draws: on a projector a lesson's lane
            # wraps wider than its own (figures.Figures.wrapped)
            self.figures.wrapped(cols).buffer_cols,
            result.copied and tensor is result.tensor,
            waiting,
            cols.overview,
            DTYPE_BYTES.get(self.unit, 1),
        )

    def _render_fields(self) -> None:
        if self.concealed:  # not hidden: never sent while a question waits
            self.fields_pane.object = ""
            return
        # The code panel shares the fields' pane (and is withheld with them while a
        # question waits): a pane of its own would cost every page more models.
        self.fields_pane.object = (
            FIELDS_HEADING
            + fields_html(self.layout, self.unit, copied=self.result.copied)
            + code_html(self.numpy_code, self.torch_code)
        )

    def _show_error(self, *events) -> None:
        text = inline_html(self.error) if self.error else ""
        self.error_pane.object = f'<div class="candela-error" role="alert">{text}</div>'
        self._show_controls()

    def _show_controls(self) -> None:
        # In presenter mode, while a question waits, the controls' column holds nothing to
        # see (its tools hidden, its fields withheld): gone, so the figures have its room.
        empty = bool(self.presenter) and bool(self.concealed) and not self.error
        if self.controls.visible == empty:
            self.controls.visible = not empty

    def _apply_view_state(self, *events) -> None:
        """Presenter mode and concealment, applied from the state.

        With no events (a page built, a view shown again) or presenter mode changed,
        both; a question's concealment alone (every led step) only what it touches:
        the layout walk over every styled part is presenter mode's, not a step's.
        """
        presenter = not events or any(e.name == "presenter" for e in events)
        with pn.io.hold():
            if presenter:
                self._apply_presenter()
            self._apply_concealment()

    def _apply_presenter(self) -> None:
        on = bool(self.presenter)
        for part in self.editing_parts:
            part.visible = not on
        self.download_button.visible = not on
        lesson_width = self._lesson_width(on)
        if self.lesson_area.width != lesson_width:
            styles = self.lesson_area.styles.items()
            styles = {k: v for k, v in styles if k not in PRESENTER_LESSON_STYLES}
            self.lesson_area.param.update(
                width=lesson_width,
                styles={**styles, **(PRESENTER_LESSON_STYLES if on else {})},
            )
        for obj in self._styled_objects():
            classes = [c for c in obj.css_classes if c != PRESENTER_CLASS]
            if on or len(classes) != len(obj.css_classes):
                obj.css_classes = classes + ([PRESENTER_CLASS] if on else [])
        for view in self._views:
            self._present(view, on)

    def _present(self, view: _View, on: bool) -> None:
        """One view in or out of presenter mode: its order, its class, its scale."""
        view.arrange(self, on)
        classes = [c for c in view.root.css_classes if c != "candela-presenter"]
        if classes + (["candela-presenter"] if on else []) != view.root.css_classes:
            view.root.css_classes = classes + (["candela-presenter"] if on else [])
        with pn.io.unlocked():
            view.figures.set_scale(PRESENTER_SCALE if on else 1.0)

    def _apply_concealment(self) -> None:
        on, hidden = bool(self.presenter), bool(self.concealed)
        self.fields_pane.visible = not hidden
        self._show_controls()
        self.download_button.disabled = hidden  # its page holds every field
        self._render_text()
        self.editor.show_steps_now()
        for part in self.editor.step_view:
            part.visible = not (on or hidden)
        self._render_compare_text()
        for view in self._views:
            view.figures.concealed = hidden
            self._draw(view)
            # hidden and not sent while a question waits; else at the first view's scale
            self._draw_compare(view)

    def _lesson_width(self, presenter: bool) -> int:
        """The lesson panel's least width: wider in presenter mode (where its styles
        widen it further on a wide screen, :data:`PRESENTER_LESSON_STYLES`)."""
        return PRESENTER_LESSON_WIDTH if presenter else LESSON_WIDTH

    def _styled_objects(self) -> list:
        roots = [self.controls, self.lesson_area, self.title]
        roots += [self.compare_heading, self.lane_heading, self.compare_fields]
        roots += [self.logical_heading, self.buffer_heading, self.legend]
        roots += [self.cost_pane, self.compare_cost_pane, self.cost_controls]
        roots += self.classroom.step_parts  # styled even before a lesson puts them on the page
        found = []
        for root in roots:
            found += [root, *root.select(pn.widgets.Widget), *root.select(pn.pane.PaneBase)]
        found += [w for ws in self.editor.arg_widgets.values() for w in ws] + [self.keys]
        seen, unique = set(), []
        for obj in found:
            if id(obj) not in seen and hasattr(obj, "stylesheets"):
                seen.add(id(obj))
                unique.append(obj)
        return unique


def _served() -> bool:
    doc = pn.state.curdoc
    return pn.state.location is not None and doc is not None and doc.session_context is not None


#: The explorer of each page :func:`app` built (served, or built ahead of its session),
#: so a failure in any callback is shown on its page. Weak both ways: an explorer
#: reaches its document (through its models), and a strong value would keep every
#: closed session's page alive.
_PAGES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def page_of(doc) -> Explorer | None:
    """The explorer :func:`app` built into ``doc``, if any (and still alive)."""
    ref = _PAGES.get(doc) if doc is not None else None
    return ref() if ref is not None else None


def report_failure(exc: BaseException) -> None:
    """Panel's handler for an exception in a callback: one log line and a message on the page.

    Without it Panel logs the whole traceback for every failing request and the
    page says nothing.
    """
    text = f"{type(exc).__name__}: {str(exc)[:300]}"
    log.warning("callback failed: %s", text)
    ex = page_of(pn.state.curdoc)
    if ex is not None:
        ex.show_error(f"that did not work ({text}); the last good state stays")


#: Held while a page is built (:func:`app`).
_BUILDING = threading.Lock()


def app() -> pn.viewable.Viewable:
    """A fresh page per session (for ``pn.serve`` and the command line); it owns the URL.

    Only the page's own explorer reads and writes the URL: explorers placed in a
    layout of someone else's page (``pn.Row(a, b)``) leave it alone. A page built
    ahead of its request (:mod:`explorer.pool`) has no session yet: it opens its
    URL once it has one (:func:`open_page`).
    """
    from explorer.export import page_icons
    from explorer.style import panel_page_template

    # One page built at a time. Bokeh 3.10 builds each new session's page in a worker
    # thread, so pages opened together were built at once, and Panel's Location, made
    # here for the page's URL, is not safe for that: making one lifts the read-only flag
    # of Location's (shared) parameters and puts it back, and another thread between
    # the two failed ("Read-only parameter 'hostname' cannot be modified", a student's
    # page left empty). With the GIL the pages were never built in parallel anyway.
    with _BUILDING:
        ex = Explorer()
        # "lead a class", in the page as built (a page in a class takes it out at open)
        ex.classroom.offer_class()
        doc = pn.state.curdoc
        if doc is not None:
            _PAGES[doc] = weakref.ref(ex)
            doc.template_variables.update(page_icons())
            doc.template = panel_page_template(served=True)
            if _served():
                open_page(doc)
        return ex.__panel__()


def _token_search() -> str:
    """The query of a page whose session its WebSocket opened (None of it from a GET here).

    Behind a proxy, a page's WebSocket may reach a server that did not serve the page
    (a client that sends no cookie back): Bokeh then opens the session from the
    arguments its token carries, and Panel's ``Location``, read from the WebSocket's
    own URL, has no query. The page's state travels in the connection: it is read from
    those arguments (public ``pn.state.session_args``), through the same checks as any URL.
    """
    try:
        arguments = pn.state.session_args or {}
    except Exception:  # no session context (e.g. a document built ahead)
        return ""
    pairs = []
    for key, values in arguments.items():
        if key == "bokeh-session-id" or not isinstance(key, str):
            continue
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            pairs.append((key, str(value)))
    return "?" + urlencode(pairs) if pairs else ""


def open_page(doc) -> None:
    """The served page ``doc`` (built by :func:`app`) reads its URL and keeps it in step.

    Runs once the document has its session, with Panel's current document set.
    """
    ex = page_of(doc)
    if ex is not None and ex.url is None:
        pn.config.exception_handler = report_failure
        location = pn.state.location
        if not location.search:
            location.search = _token_search()
        search = location.search or ""
        ex.open_url(location=location)
        if "class=" in search:  # a led class (explorer.led_class)
            from explorer.led_class import attach

            ex.classroom.offer_class(False)  # a page in a class starts none
            attach(ex, search)
        if ex.url.corrected:
            # The browser sends its own URL as the page loads, over the one corrected
            # here, and that may reach the server before the page says it has loaded:
            # then the correction is made again, not the browser's URL sent back.
            location, url = pn.state.location, ex.url

            def correct_again() -> None:
                search = url.query()
                if location.search != search:
                    location.search = search
                else:
                    location.param.trigger("search")

            pn.state.onload(correct_again)


if __name__.startswith("bokeh"):  # `panel serve explorer/app.py`
    from explorer.serving import lean_process

    lean_process()
    pn.extension()
    app().servable(title="Candela Explorer")
