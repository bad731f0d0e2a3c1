"""The offline page: one self-contained HTML file of an explorer state.

``save_html(explorer, path)`` (also ``Explorer.save_html``, the app's download
button and ``candela-explorer --export PATH``) writes a page a student can open
from a USB stick: the logical grid, the memory buffer, the fields, every step of
the pipeline before and after, and the traversal. Play, pause, step, speed,
scrubbing and hover all run from ``traverse.mjs`` in the browser, so they keep
working with no Python behind the page. Every script and stylesheet is inlined
(Bokeh's ``INLINE`` resources, less the WebGL bundle no figure uses, plus
Panel's widget stylesheets, which ``save`` alone would still link to a CDN), so
the page makes no network request.

The page is built from a fresh explorer in a document of its own: Bokeh models
belong to one document, and taking the displayed explorer's figures would
blank it in the notebook or the served page it is showing in.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import html
import io
import os
import stat
from pathlib import Path

__all__ = ["download_button", "export_html", "save_html", "static_view"]

EXPORT_NOTE = (
    "An offline page from Candela Explorer: play, step, scrub and hover work "
    "here; to change the shape or the pipeline, run candela-explorer."
)


def steps_html(result, unit: str = "elements") -> str:
    """Every step of the pipeline with the layout before and after it (static text)."""
    from .fields import layout_line
    from .ops import step_note
    from .pipeline import format_step

    if not result.steps:
        return (
            '<div class="candela-steps"><div>no steps: the starting layout '
            f"{html.escape(layout_line(result.states[0].layout, unit))}</div></div>"
        )
    rows = []
    for i, step in enumerate(result.steps, 1):
        before, after = result.states[i - 1].layout, result.states[i].layout
        note = step_note(step, before)  # where NumPy and PyTorch would disagree
        rows.append(
            f'<div class="candela-step-text">{i}. {html.escape(format_step(step))}</div>'
            + (
                f'<div class="candela-step-note">&nbsp;&nbsp;{html.escape(note)}</div>'
                if note
                else ""
            )
            + f'<div class="candela-step-before">&nbsp;&nbsp;before: '
            f"{html.escape(layout_line(before, unit))}</div>"
            f'<div class="candela-step-after">&nbsp;&nbsp;after:&nbsp; '
            f"{html.escape(layout_line(after, unit))}</div>"
        )
    return '<div class="candela-steps">' + "".join(rows) + "</div>"


def static_view(st):
    """The parts of a state's page that work without Python, as one Panel layout.

    ``st`` is any :class:`~explorer.state.ExplorerState` (an ``Explorer`` too):
    the page is drawn from its last good result, with figures of its own. The
    shape box, the pipeline box and the op buttons need Python to evaluate a
    new state, so the page states them as text instead.
    """
    import panel as pn

    from .cost_view import cost_html, for_state
    from .fields import fields_html, layout_line
    from .figures import Figures
    from .state import shape_text
    from .style import CSS, legend_html, title_html

    result, cols = st.result, st.columns
    start = "Tensor.arange" if st.start is None else "a given tensor of shape"
    state = (
        f'<div class="candela-export-state">{start} ({html.escape(shape_text(result.shape))})'
        f'<code class="candela-export-ops">{html.escape(result.ops)}</code> → '
        f"{html.escape(layout_line(result.layout, st.unit))}</div>"
    )
    note = f'<div class="candela-legend">{html.escape(EXPORT_NOTE)}</div>' + state
    title = pn.pane.HTML(title_html(note), stylesheets=[CSS], sizing_mode="stretch_width")
    heading = '<div class="candela-heading">{}</div>'
    fields = fields_html(result.layout, st.unit, copied=result.copied)
    info = pn.Column(
        pn.pane.HTML(heading.format("fields"), stylesheets=[CSS]),
        pn.pane.HTML(fields, stylesheets=[CSS], sizing_mode="stretch_width"),
        pn.pane.HTML(heading.format("the pipeline, step by step"), stylesheets=[CSS]),
        pn.pane.HTML(steps_html(result, st.unit), stylesheets=[CSS], sizing_mode="stretch_width"),
        width=470,
    )
    figures = Figures()
    figures.render(cols, result.layout, st.unit)
    # The cost of the walk as the page showed it (its unit lit as the walk plays here too).
    cost = for_state(st, withheld=False)
    figures.render_cost(cost)
    views = pn.Column(
        pn.pane.HTML(heading.format("logical grid"), stylesheets=[CSS]),
        pn.pane.Bokeh(figures.logical_figure),
        pn.pane.HTML(heading.format("memory buffer"), stylesheets=[CSS]),
        pn.pane.Bokeh(figures.buffer_figure),
        pn.pane.HTML(legend_html(), stylesheets=[CSS]),
        pn.pane.Bokeh(figures.traversal),
        pn.Column(
            pn.pane.HTML(cost_html(cost), stylesheets=[CSS], sizing_mode="stretch_width"),
            pn.pane.Bokeh(figures.cost_figure),
            css_classes=["candela-cost"],
            sizing_mode="stretch_width",
            max_width=540,
        ),
    )
    from .style import THEME_CSS, theme_classes

    return pn.Column(
        title,
        pn.FlexBox(info, views, flex_wrap="wrap", gap="8px 16px"),
        css_classes=["candela-explorer", "candela-export", *theme_classes(st.theme)],
        stylesheets=[THEME_CSS],  # light or dark, as the live page (theme.css)
    )


def export_html(st, title: str = "Candela Explorer") -> str:
    """The offline page for state ``st``'s last good result, as one HTML string."""
    from bokeh.document import Document
    from bokeh.models import UIElement
    from bokeh.resources import INLINE
    from panel.io.model import add_to_doc
    from panel.io.notebook import patch_inline_stylesheets
    from panel.io.save import save
    from panel.io.state import set_curdoc
    from pyviz_comms import Comm

    from .serving import lean_resources

    doc = Document()
    with set_curdoc(doc):
        model = static_view(st).get_root(doc, Comm())
        add_to_doc(model, doc, True)
    # Panel's widgets link their stylesheets to its CDN even with INLINE resources.
    for element in model.select({"type": UIElement}):
        patch_inline_stylesheets(element)
    out = io.StringIO()
    resources = lean_resources(INLINE)  # no WebGL bundle: the figures draw on a canvas
    from .style import panel_page_template

    with set_curdoc(doc):
        offline_resources()
        save(
            doc,
            out,
            title=title,
            resources=resources,
            template=panel_page_template(),
            template_variables=page_icons(),
        )
    return out.getvalue()


def offline_resources() -> None:
    """For the page being made (Panel's current document): no library is loaded on demand.

    Panel 1.10 loads a component's libraries when it first draws (``lazy_resources``) and
    tells the page which ones the inlined scripts already hold, by their CDN addresses;
    switched off, as Panel advises for a page with no network, the page names no address.
    Set for that document only (Panel keeps it per document), never for other sessions.
    """
    import panel as pn

    if "lazy_resources" in pn.config.param:  # Panel 1.10 and newer
        pn.config.lazy_resources = False


def page_icons() -> dict:
    """The page's icons, in the page itself (template variables of Panel's page).

    Panel's page template links its icons to the CDN (the offline page) or to the
    server's ``/favicon.ico``, which is sent without a cache header: the browser
    asked for it again after every edit, when the page's URL changed. The icon is
    read once per process (every served session asks for it).
    """
    return dict(_icons())


@functools.cache
def _icons() -> tuple[tuple[str, str], ...]:
    import base64

    from panel.io.resources import DIST_DIR

    png = (Path(DIST_DIR) / "images" / "icon-32x32.png").read_bytes()
    return (
        ("app_favicon", "data:image/png;base64," + base64.b64encode(png).decode("ascii")),
        ("apple_icon", "data:,"),
    )


def save_html(ex, path: str | os.PathLike, title: str = "Candela Explorer") -> Path:
    """Write the offline page of ``ex`` to ``path``; return the path written.

    The page is written whole or not at all: to a temporary file in the same
    folder, then moved over ``path`` (a symlink there is replaced, not followed).
    A path that cannot be written raises ``OSError`` (or ``ValueError`` for an
    empty one) naming it, before the page is built.
    """
    path = check_export_path(path)
    write_atomically(path, export_html(ex, title=title).encode("utf-8"))
    return path


def check_export_path(path: str | os.PathLike) -> Path:
    """``path`` as a ``Path`` if a file can be written there; else why not, as an exception."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text.strip():
        raise ValueError("the path is empty: give a file name, e.g. page.html")
    if "\0" in text:
        raise ValueError(f"the path {text!r} contains a NUL character")
    path = Path(text)
    folder = path.parent
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "it is a folder; give a file name in it", text)
    if not folder.exists():
        raise FileNotFoundError(errno.ENOENT, f"the folder {str(folder)!r} does not exist", text)
    if not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, f"{str(folder)!r} is not a folder", text)
    check_regular(path)
    return path


#: What a path that is not a regular file is, by ``stat``'s test for it.
_NOT_FILES = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def check_regular(path: Path) -> None:
    """Raise ``OSError`` unless ``path`` is new or a regular file (or a link to one).

    A device, FIFO, socket or folder at ``path`` (or where a symlink there points)
    is never replaced: the export would otherwise turn ``/dev/null`` into a page.
    A symlink to a regular file is replaced by the page, its target left alone.
    """
    try:
        mode = os.stat(path).st_mode  # follows a symlink: what the name stands for
    except FileNotFoundError:
        mode = None  # new, or a dangling symlink: a new file takes the name
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    if mode is None or stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _NOT_FILES if test(mode)), "not a regular file")
    raise OSError(
        errno.EEXIST,
        f"it is {kind}, not a regular file; only a file is written: give a file name",
        os.fspath(path),
    )


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in its folder and ``os.replace``.

    Readers see the old file or the new one, never half of one; on any failure
    the temporary file is removed and ``path`` is left as it was.
    """
    import tempfile

    folder = path.parent
    fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{path.name[:40]}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, _file_mode(path))
        check_regular(path)  # again just before: something may have taken the name meanwhile
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _file_mode(path: Path) -> int:
    # The mode a plain write would give: the existing file's (not a symlink's target's),
    # else 0o666 less the umask; mkstemp's own 0o600 would hide the page from others.
    try:
        if path.is_file() and not path.is_symlink():
            return path.stat().st_mode & 0o777
    except OSError:
        pass
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def export_name(st) -> str:
    """A file name that says what the page shows, e.g. ``candela-3x4-transpose.html``."""
    shape = "x".join(str(v) for v in st.result.shape)
    ops = "-".join(step.name for step in st.result.steps)[:80].strip("-")
    return f"candela-{shape}{'-' + ops if ops else ''}.html"


def download_button(st, **params):
    """A ``FileDownload`` button that hands the browser ``st``'s offline page."""
    import panel as pn

    def page() -> io.BytesIO:
        # Named for the state at the click (Panel reads the name after this call), not
        # renamed at every edit: that was a widget update, ~1 ms of the server's time.
        button.filename = export_name(st)
        return io.BytesIO(export_html(st).encode("utf-8"))

    defaults = {
        "label": "offline page ⤓",
        "filename": export_name(st),
        "color": "light",
        "css_classes": ["candela-download"],
        "width": 190,
        "embed": False,
    }
    button = pn.widgets.FileDownload(callback=page, **{**defaults, **params})
    return button


def export_main(path: str, shape: str | None, ops: str | None) -> int:
    """``candela-explorer --export PATH [--shape S] [--ops O]``: write the page, or say why not."""
    import sys

    from .state import DEFAULT_SHAPE, ExplorerState, StateError

    try:  # never hand out a page of some other state than the one asked for
        ex = ExplorerState(shape=shape if shape is not None else DEFAULT_SHAPE, ops=ops or "")
    except StateError as exc:
        print(f"candela-explorer: cannot export: {exc}", file=sys.stderr)
        return 2
    written = save_html(ex, path)
    print(f"wrote {written} ({written.stat().st_size:,} bytes): {layout_text(ex)}")
    return 0


def layout_text(ex) -> str:
    from .fields import layout_line

    return layout_line(ex.layout)
