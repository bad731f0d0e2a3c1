"""The explorer in Debian's Chromium: URL state, widgets, typed text, errors, play and hover.

Each test waits on state (DOM text or Bokeh models found by name), never on time, but
for checking that no repaint comes (``settle``).
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from explorer.testing import MARKS_JS, open_served

pytestmark = pytest.mark.browser

FIELDS = ("shape", "stride", "adj-stride", "offset", "len", "is-contiguous", "is-transposed")
MODEL = "(name) => Bokeh.documents[0].get_model_by_name(name)"


def fields(page) -> list[str]:
    """The fields as a student reads them (Panel shows a pane's text once its styles are in)."""
    expect(page.locator(".candela-fields")).to_be_visible()
    return [page.locator(f".candela-{name}").inner_text() for name in FIELDS]


def model_js(body: str) -> str:
    return f"() => {{ const m = {MODEL}; const mark = ({MARKS_JS})(m); {body} }}"


def test_url_state_shows_in_the_fields(open_explorer):
    page = open_explorer("?shape=3,4&ops=.transpose()")
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")
    assert fields(page) == ["(4, 3)", "(1, 4)", "(-7, 4)", "0", "12", "False", "True"]
    expect(page.locator(".candela-adj-stride-work")).to_contain_text(
        "adj_stride[0] = 1 - 4*(3-1) = -7"
    )
    expect(page.locator(".candela-error")).to_have_text("")


def test_bad_url_values_show_a_message_and_the_default(open_explorer):
    page = open_explorer("?shape=3,-1&ops=.transpose()")
    expect(page.locator(".candela-error")).to_contain_text("negative")
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")  # default shape, ops kept


def test_the_stride_unit_travels_in_the_url(open_explorer):
    page = open_explorer("?shape=3,4&ops=.transpose()&unit=float32")
    expect(page.locator(".candela-stride")).to_have_text("(4, 16)")  # (1, 4) elements x 4 bytes
    page.locator("select").filter(has_text="float64").select_option("int16")
    expect(page.locator(".candela-stride")).to_have_text("(2, 8)")
    page.wait_for_function("() => location.search.includes('unit=int16')")
    page = open_explorer("?shape=3,4&unit=bogus")
    expect(page.locator(".candela-error")).to_contain_text("unit bogus")
    expect(page.locator(".candela-error code")).to_have_text("bogus")
    expect(page.locator(".candela-stride")).to_have_text("(4, 1)")


def test_op_through_widgets_then_typed_text_then_a_bad_op(open_explorer):
    page = open_explorer("?shape=3,4")
    expect(page.locator(".candela-shape")).to_have_text("(3, 4)")
    page.locator(".candela-ops button", has_text="narrow").click()
    start = page.locator(".candela-arg-narrow-1 input")
    start.fill("1")
    start.press("Enter")
    page.locator(".candela-arg-narrow-2 input").fill("2")
    page.locator(".candela-arg-narrow-2 input").press("Enter")
    page.locator(".candela-add-step button").click()
    expect(page.locator(".candela-shape")).to_have_text("(2, 4)")
    expect(page.locator(".candela-offset")).to_have_text("4")
    expect(page.locator(".candela-ops-input input")).to_have_value(".narrow(0, 1, 2)")
    page.wait_for_function("() => decodeURIComponent(location.search).includes('.narrow(0, 1, 2)')")
    # The buffer drawn in the browser follows: 4 of 12 cells read from position 4.
    page.wait_for_function(
        model_js("const d = m('frames-source').data; return d.pos.length === 8 && d.pos[0] === 4")
    )

    ops = page.locator(".candela-ops-input input")
    ops.fill(".transpose()")
    ops.press("Enter")
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")
    assert fields(page) == ["(4, 3)", "(1, 4)", "(-7, 4)", "0", "12", "False", "True"]

    ops.fill(".transpose().view((12,))")
    ops.press("Enter")
    expect(page.locator(".candela-error")).to_contain_text("step 2 .view((12,))")
    expect(page.locator(".candela-error code")).to_have_text(".view((12,))")  # code, no `
    assert fields(page) == ["(4, 3)", "(1, 4)", "(-7, 4)", "0", "12", "False", "True"]


def test_a_change_that_keeps_the_size_sends_only_new_columns_and_the_page_agrees(open_explorer):
    # Same 12 elements, a new walk: the server sends only the changed columns; what the
    # browser then holds must equal the server's columns for the new state.
    from candela import Tensor
    from explorer import columns as C
    from explorer.pipeline import apply, parse

    page = open_explorer("?shape=3,4&ops=.transpose()")
    ops = page.locator(".candela-ops-input input")
    ops.fill(".slice(s[::-1])")
    ops.press("Enter")
    expect(page.locator(".candela-shape")).to_have_text("(3, 4)")
    want = C.columns_for(apply(parse(".slice(s[::-1])"), Tensor.arange((3, 4)))[-1])
    page.wait_for_function(
        model_js(
            f"return Array.from(m('frames-source').data.pos).join() === "
            f"'{','.join(map(str, want.frames['pos'].tolist()))}'"
        )
    )
    got = page.evaluate(
        model_js(
            "const l = m('logical-source').data, b = m('buffer-source').data;"
            " return [Array.from(l.index), Array.from(l.color),"
            " Array.from(b.value), Array.from(b.color), Array.from(b.reads),"
            " (() => { const d = m('labels-logical-source').data;"
            " return d.text.filter((t, i) => d.kind[i] === 'pos_label'); })()]"
        )
    )
    assert got == [
        want.logical["index"],
        list(want.logical["color"]),
        list(want.buffer["value"]),
        list(want.buffer["color"]),
        want.buffer["reads"].tolist(),
        # labels: each kind's real rows (padding that draws nothing is of kind "pad")
        want.logical_labels["pos_label"],
    ]


# Every Bokeh message the page receives: its type, and for a PATCH-DOC its events as
# [kind, model name, attribute, changed columns].
MESSAGES_JS = """(() => {
  const got = window.__messages = [];
  const WS = window.WebSocket;
  window.WebSocket = class extends WS {
    constructor(...a) {
      super(...a);
      let header = null;
      this.addEventListener("message", (e) => {
        if (typeof e.data !== "string") return;
        const json = JSON.parse(e.data);
        if (json.msgtype != null) { header = json; got.push({type: json.msgtype, events: []}); return }
        if (header?.msgtype === "PATCH-DOC" && json.events != null) {
          const name = (ref) => Bokeh.documents[0]?.get_model_by_id(ref?.id)?.name ?? ref?.id;
          got.at(-1).events = json.events.map((ev) => [ev.kind, name(ev.model), ev.attr, ev.cols ?? null]);
          header = null;
        }
      });
    }
  };
})()"""


def test_an_edit_reaches_the_page_as_one_message_of_changed_columns(page, open_explorer):
    # One PATCH-DOC for the whole edit (boxes, step list, fields, URL, figures): Panel sent
    # each widget's change on its own before, and the page laid itself out for each. On
    # Panel 1.10 too, where a change handled inside Bokeh's document lock goes as one
    # message per change (nine): the box's event after its text has Panel handle it
    # outside the lock (explorer/enter_box.mjs).
    page.add_init_script(MESSAGES_JS)
    page = open_explorer("?shape=32,32")
    # Panel sends a held edit as one message only once the page has told the server it has
    # drawn (Bokeh's document_ready, sent when every view is idle; before it each change
    # goes on its own). A loaded machine can take longer than the first reply for that.
    page.wait_for_function("() => Bokeh.documents[0].is_idle")
    settle(page)
    ops = page.locator(".candela-ops-input input")
    for text, stride in ((".transpose()", "(1, 32)"), ("", "(32, 1)")):
        page.evaluate("() => { window.__messages.length = 0 }")
        ops.fill(text)
        ops.press("Enter")
        expect(page.locator(".candela-stride")).to_have_text(stride)
        settle(page)
        patches = [m for m in page.evaluate("() => window.__messages") if m["type"] == "PATCH-DOC"]
        assert len(patches) == 1, patches
        columns = {name: cols for kind, name, _, cols in patches[0]["events"]
                   if kind == "ColumnDataChanged"}  # fmt: skip
        assert sorted(columns["buffer-source"]) == ["color"]
        # the walk's frames, and the cost panel's units (their entries change with the walk)
        assert set(columns) == {"buffer-source", "frames-source", "cost-units-source"}
        assert set(columns["cost-units-source"]) <= {"entries", "color"}, columns


def test_play_advances_the_highlighted_cells_together(open_explorer):
    page = open_explorer("?shape=3,4&ops=.transpose()")
    page.wait_for_function(model_js("return mark('logical', 'cursor').k[0] === 0"))
    positions = page.evaluate(model_js("return Array.from(m('frames-source').data.pos)"))
    assert positions == [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]
    page.evaluate(model_js("m('speed-slider').value = 20"))
    page.locator(".bk-btn", has_text="play").click()
    seen = []
    last = 0
    for _ in range(3):  # several frames, each read back from the models
        page.wait_for_function(model_js(f"return mark('logical', 'cursor').k[0] > {last}"))
        k, pos, text = page.evaluate(
            model_js(
                "return [mark('logical', 'cursor').k[0], mark('buffer', 'cursor').pos[0],"
                " m('odometer').text]"
            )
        )
        seen.append(k)
        assert pos == positions[k], "the buffer cell lights up with its logical cell"
        last = k
    assert seen == sorted(seen) and len(set(seen)) == 3
    page.wait_for_function(model_js("return m('frame-slider').value === 11"))
    text = page.evaluate(model_js("return m('odometer').text"))
    assert "element 12 of 12" in text and "(3, 2)" in text and "adj_stride[1]" in text
    # The last jump (position 7 -> 11) is forward; a row change (e.g. frame 3) is backward.
    # The walk has ended: the play/pause button offers play again.
    expect(page.locator(".candela-toggle .bk-btn")).to_have_text("▶ play")
    page.evaluate(model_js("m('frame-slider').value = 3"))
    page.wait_for_function(model_js("return mark('logical', 'cursor').k[0] === 3"))
    color = page.evaluate(model_js("return m('jump-source').data.color[0]"))
    assert color == "#D55E00"
    expect(page.locator(".candela-odometer-delta")).to_have_text("−7")


def _cell_point(page, figure: str, x: float, y: float) -> tuple[float, float]:
    return tuple(
        page.evaluate(
            """([name, x, y]) => {
            const fig = Bokeh.documents[0].get_model_by_name(name);
            const view = Bokeh.index.find_one(fig);
            const r = view.canvas_view.el.getBoundingClientRect();
            return [r.left + view.frame.x_scale.compute(x), r.top + view.frame.y_scale.compute(y)];
        }""",
            [figure, x, y],
        )
    )


def test_hover_links_logical_and_buffer_cells(open_explorer):
    page = open_explorer("?shape=4&ops=.broadcast((3, 4))")
    data = page.evaluate(
        model_js(
            "const d = m('logical-source').data, f = m('frames-source').data;"
            " return [Array.from(d.x), Array.from(d.y), Array.from(f.pos)]"
        )
    )
    xs, ys, pos = data
    k = 5  # logical [1, 1] reads buffer position 1
    page.mouse.move(*_cell_point(page, "logical-figure", xs[k], ys[k]))
    page.wait_for_function(model_js("return mark('buffer', 'hover').x.length === 1"))
    buf = page.evaluate(
        model_js(
            "const d = m('buffer-source').data;"
            " const h = mark('buffer', 'hover');"
            " return [h.x[0] === d.x[1] && h.y[0] === d.y[1]]"
        )
    )
    assert buf == [True] and pos[k] == 1
    # Hover the buffer cell: every logical cell reading it (three rows of a broadcast).
    bx, by = page.evaluate(model_js("const d = m('buffer-source').data; return [d.x[2], d.y[2]]"))
    page.mouse.move(*_cell_point(page, "buffer-figure", bx, by))
    page.wait_for_function(model_js("return mark('logical', 'hover').x.length === 3"))
    linked = page.evaluate(
        model_js(
            "const h = mark('logical', 'hover'); return Array.from(h.x).map((x, i) => [x, h.y[i]])"
        )
    )
    expected = sorted([xs[i], ys[i]] for i in range(len(pos)) if pos[i] == 2)
    assert sorted(linked) == expected


def test_hover_on_a_logical_cell_names_what_the_current_walk_reads_there(open_explorer):
    # The logical cells' source holds only what the shape decides (the cell, the index):
    # what a cell reads is looked up in the walk's frames, so it must follow a new walk
    # over the same shape, which sends the logical figure nothing.
    page = open_explorer("?shape=3,4")
    tip = page.locator(".bk-tooltip-content", has_text="index").first
    xs, ys = page.evaluate(
        model_js("const d = m('logical-source').data; return [Array.from(d.x), Array.from(d.y)]")
    )
    ops = page.locator(".candela-ops-input input")
    for text, reads in (("", 1), (".slice(s[::-1])", 9), (".slice(s[:, ::-1])", 2)):
        ops.fill(text)
        ops.press("Enter")
        page.wait_for_function(model_js(f"return m('frames-source').data.pos[1] === {reads}"))
        page.mouse.move(0, 0)
        page.mouse.move(*_cell_point(page, "logical-figure", xs[1], ys[1]))  # index (0, 1)
        expect(tip).to_contain_text("(0, 1)")
        words = " ".join(tip.inner_text().split())
        assert f"value: {reads}" in words and f"position: {reads}" in words, words


def test_the_back_button_brings_back_the_state_of_the_url(open_explorer):
    page = open_explorer("?shape=3,4&ops=.transpose()")
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")
    ops = page.locator(".candela-ops-input input")
    ops.fill(".slice(s[0:2])")
    ops.press("Enter")
    expect(page.locator(".candela-shape")).to_have_text("(2, 4)")
    page.wait_for_function("() => decodeURIComponent(location.search).includes('slice')")
    page.go_back()
    page.wait_for_function("() => decodeURIComponent(location.search).includes('transpose')")
    expect(page.locator(".candela-shape")).to_have_text("(4, 3)")
    expect(page.locator(".candela-ops-input input")).to_have_value(".transpose()")


def test_changes_that_shrink_and_grow_the_tensor_raise_no_script_errors(open_explorer):
    # The labels sources grow with the labels drawn and never get shorter (labels.py):
    # Bokeh's text glyph, measuring asynchronously, would read past a shorter one's end.
    errors = []
    page = open_explorer("?shape=3,4")
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    ops = page.locator(".candela-ops-input input")
    two_paints = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
    lengths = model_js(
        "return ['labels-logical-source', 'labels-buffer-source'].map(n => m(n).data.text.length)"
    )
    seen = [page.evaluate(lengths)]
    for text, shape, count in [
        (".slice(s[0:2])", "(2, 4)", 8),  # 12 -> 8 cells
        (".slice(s[0:1])", "(1, 4)", 4),  # 8 -> 4
        (".broadcast((2, 3, 4))", "(2, 3, 4)", 24),  # 4 -> 24
        (".broadcast((5, 3, 4)).as_contiguous()", "(5, 3, 4)", 60),  # the labels sources grow
        ("", "(3, 4)", 12),  # and keep their length
        (".broadcast((6, 3, 4))", "(6, 3, 4)", 72),  # grow again
    ]:
        ops.fill(text)
        ops.press("Enter")
        expect(page.locator(".candela-shape")).to_have_text(shape)
        page.wait_for_function(model_js(f"return m('logical-source').data.x.length === {count}"))
        page.evaluate(two_paints)  # the new cells are drawn
        seen.append(page.evaluate(lengths))
    assert errors == []
    for fig in (0, 1):
        grown = [s[fig] for s in seen]
        assert grown == sorted(grown) and grown[-1] > grown[0], seen  # grown, never shorter


def test_a_jump_between_wrapped_buffer_rows_runs_through_the_gap(open_explorer):
    # 60 buffer cells wrap into rows of 10 (the tensor's rows); the walk's first jump from
    # one row to another runs through the gap between the rows, not over their cells.
    page = open_explorer("?shape=6,10&ops=.slice(s[1:, ::-3])")
    pos, ys = page.evaluate(
        model_js(
            "return [Array.from(m('frames-source').data.pos), Array.from(m('buffer-source').data.y)]"
        )
    )
    k = next(k for k in range(1, len(pos)) if ys[pos[k]] != ys[pos[k - 1]])
    forward = page.get_by_role("button", name="step ▶")
    for _ in range(k):
        forward.click()
    page.wait_for_function(
        model_js(
            "return m('jump-source').data.x0.length === 1 && "
            f"mark('buffer', 'cursor').pos[0] === {pos[k]}"
        )
    )
    y0, y1, cy0, cy1 = page.evaluate(
        model_js("const j = m('jump-source').data; return [j.y0[0], j.y1[0], j.cy0[0], j.cy1[0]]")
    )
    start, end = ys[pos[k - 1]], ys[pos[k]]
    lower, upper = min(start, end), max(start, end)
    half = 0.47  # cells are 0.94 tall
    up = end > start
    # It leaves its cell on the side facing the target row and arrives from the other.
    if up:
        assert y0 >= start + half - 0.05 and y1 <= end - half + 0.05
    else:
        assert y0 <= start - half + 0.05 and y1 >= end + half - 0.05
    for cy in (cy0, cy1):  # the curve is pulled through the gap, not over a row's cells
        assert lower + half < cy < upper - half


def test_each_figure_has_a_text_alternative_that_follows_the_walk(open_explorer):
    page = open_explorer("?shape=3,4&ops=.transpose()")
    logical = page.locator("[role=img][aria-label^='Logical grid']")
    buffer = page.locator("[role=img][aria-label^='Memory buffer']")
    expect(logical).to_have_attribute("aria-label", re.compile(r"shape \(4, 3\).*element 1 of 12"))
    expect(buffer).to_have_attribute("aria-label", re.compile(r"12 cells.*position 0"))
    page.locator(".candela-forward .bk-btn").click()
    # Element 2 is index (0, 1): axis 1 stepped by adj_stride[1] = +4, to position 4.
    for figure in (logical, buffer):
        expect(figure).to_have_attribute(
            "aria-label", re.compile(r"element 2 of 12 · index \(0, 1\) · axis 1 .* \+4 .*→ 4")
        )


#: Count each figure's paints in ``__paints`` and, of them, the paints of its cells layer
#: (``_paint_primary``, not only the cursor's layer) in ``__cells``.
PAINTS_JS = """() => {
  const P = Bokeh.Models.get('Plot').prototype.default_view.prototype;
  if (!P.__counted) {
    P.__counted = true;
    const count = (method, store) => {
      const original = P[method];
      P[method] = function () {
        window[store][this.model.name] = (window[store][this.model.name] ?? 0) + 1;
        return original.apply(this, arguments);
      };
    };
    count('_actual_paint', '__paints');
    count('_paint_primary', '__cells');
  }
  window.__paints = {};
  window.__cells = {};
}"""


def settle(page):
    # A paint that must not come has no state to wait for: give the page a moment to make
    # one, then two animation frames, by when every paint asked for has happened.
    page.wait_for_timeout(300)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


#: Paint a figure's cells layer in full, with the explorer's painter of cells (its tag on
#: the glyph) and with Bokeh's own (no tag). Returns the fills each took; how many cells'
#: centre pixels differ between the two; and inside the plot's frame (where the cells
#: are) the largest difference of a colour byte and the bytes that are not white.
PAINT_BOTH_WAYS_JS = """async ([figure, renderer]) => {
  const doc = Bokeh.documents[0];
  const view = Bokeh.index.find_one(doc.get_model_by_name(figure));
  const glyph = doc.get_model_by_name(renderer).glyph;
  const data = doc.get_model_by_name(renderer).data_source.data;
  const frames = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const canvas = view.canvas_view.primary.canvas, ctx = canvas.getContext('2d');
  const {left, top, width, height} = view.frame.bbox;
  const paint = async (tags) => {
    glyph.tags = tags;
    let fills = 0;
    const fill = ctx.fill;
    ctx.fill = function (...a) { fills++; return fill.apply(this, a) };
    view.request_paint();
    // Two frames paint on an idle machine; a loaded one may take more: until it painted.
    for (let i = 0; i < 60 && (i < 1 || fills === 0); i++) await frames();
    ctx.fill = fill;
    return [fills, ctx.getImageData(left, top, width, height).data];
  };
  const tags = [...glyph.tags];
  const [fast, ours] = await paint(tags);
  const [slow, bokehs] = await paint([]);
  glyph.tags = tags;
  let most = 0, inked = 0, centres = 0;
  for (let i = 0; i < ours.length; i++) {
    most = Math.max(most, Math.abs(ours[i] - bokehs[i]));
    if (ours[i] !== 255) inked++;
  }
  for (let k = 0; k < data.x.length; k++) {
    const px = Math.floor(view.frame.x_scale.compute(data.x[k]) - left);
    const py = Math.floor(view.frame.y_scale.compute(data.y[k]) - top);
    const at = 4 * (py * width + px);
    // A cell out of place differs by far more than the anti-aliasing of small cells (a
    // 4 px cell's centre pixel is shaded a few levels apart by one path and by two fills).
    for (let c = 0; c < 4; c++) if (Math.abs(ours[at + c] - bokehs[at + c]) > 32) { centres++; break; }
  }
  return {fast, slow, most, inked, centres, cells: data.x.length};
}"""


@pytest.mark.patched("cells")
@pytest.mark.parametrize(
    "ops", [".transpose()", ".slice(s[::2])", ".slice(s[1]).broadcast((64, 64))"]
)
def test_the_cells_are_painted_one_fill_a_colour_with_the_pixels_bokeh_paints(open_explorer, ops):
    # explorer/cells.mjs paints the cells of one colour as one path: read cells, the grey
    # unread ones (another alpha), cells read many times. Every cell's colour is Bokeh's,
    # with far fewer fills. Only where the anti-aliased edges of two cells of one colour
    # meet in a pixel of the gap between them does one path cover it a shade differently
    # from two fills (6 levels in 255 seen); a cell out of place differs by far more.
    page = open_explorer(f"?shape=64,64&ops={ops}")
    page.wait_for_function(model_js("return m('buffer-source').data.x.length === 4096"))
    settle(page)
    for figure, renderer in (
        ("logical-figure", "logical-cells"),
        ("buffer-figure", "buffer-cells"),
    ):
        got = page.evaluate(PAINT_BOTH_WAYS_JS, [figure, renderer])
        assert got["inked"] > 0 and got["centres"] == 0, (figure, got)
        # A gap pixel two cells of one colour share is shaded as one path covers it, not as
        # two fills over each other: a few levels on large cells, up to ~35 on 4 px ones.
        assert got["most"] <= 48, (figure, got)
        assert got["slow"] >= got["cells"] > 0, (figure, got)  # Bokeh's: a fill a cell
        assert got["fast"] <= 256, (figure, got)  # ours: a fill a colour


def test_a_new_walk_of_the_same_shape_paints_only_the_buffer(open_explorer):
    # At 4,096 cells there are no labels: the logical figure shows only where the cells
    # are and their order, the same for every walk of a shape, so its cells are not
    # painted again, nor its cursor while element 0 reads where it did; the buffer's
    # colours change, so it is painted.
    page = open_explorer("?shape=64,64")
    page.wait_for_function(model_js("return m('buffer-source').data.x.length === 4096"))
    settle(page)
    ops = page.locator(".candela-ops-input input")
    edits = ((".transpose()", "(1, 64)", True), ("", "(64, 1)", True),
             (".slice(s[:, ::-1])", "(64, -1)", False))  # fmt: skip
    for text, stride, same_start in edits:
        page.evaluate(PAINTS_JS)
        ops.fill(text)
        ops.press("Enter")
        expect(page.locator(".candela-stride")).to_have_text(stride)
        settle(page)
        painted, cells = page.evaluate("() => [window.__paints, window.__cells]")
        assert cells.get("buffer-figure", 0) >= 1 and "logical-figure" not in cells, (text, cells)
        if same_start:  # the cursor stays: nothing of the logical figure is painted
            assert "logical-figure" not in painted, (text, painted)
        else:  # element 0 reads another position: the cursor layer alone is painted
            assert painted.get("logical-figure", 0) >= 1, (text, painted)


#: Count getComputedStyle calls on each figure's own element, in ``__styled``.
STYLE_READS_JS = """() => {
  if (!window.__styleCounted) {
    window.__styleCounted = true;
    const read = window.getComputedStyle;
    window.getComputedStyle = function (el, ...rest) {
      for (const name of ['logical-figure', 'buffer-figure']) {
        const view = Bokeh.index.find_one(Bokeh.documents[0].get_model_by_name(name));
        if (view != null && el === view.el) window.__styled[name] = (window.__styled[name] ?? 0) + 1;
      }
      return read.call(this, el, ...rest);
    };
  }
  window.__styled = {};
}"""


@pytest.mark.patched("steady")
def test_a_new_shape_lays_the_figures_out_without_reading_their_computed_style(open_explorer):
    # Bokeh looks for a plot's outline and fill colours in CSS variables, reading the
    # plot's computed style on every layout and paint; after an edit that forced a style
    # recalculation of the whole page (~20 ms) more than once. steady.mjs skips it for the
    # explorer's figures, which no CSS variable styles.
    page = open_explorer("?shape=16,16")
    settle(page)
    ops = page.locator(".candela-ops-input input")
    for text, shape in ((".view((4, 64))", "(4, 64)"), ("", "(16, 16)")):
        page.evaluate(STYLE_READS_JS)
        page.evaluate(PAINTS_JS)
        ops.fill(text)
        ops.press("Enter")
        expect(page.locator(".candela-shape")).to_have_text(shape)
        settle(page)
        assert page.evaluate("() => window.__paints").get("logical-figure", 0) >= 1
        assert page.evaluate("() => window.__styled") == {}


@pytest.mark.patched("steady")
def test_figures_repaint_only_when_what_they_show_changes(open_explorer):
    page = open_explorer("?shape=16,16")
    settle(page)
    page.evaluate(PAINTS_JS)
    # The op chooser changes the help line and the argument boxes, not the figures.
    page.locator(".candela-ops button", has_text="slice").click()
    expect(page.locator(".candela-arg-slice-0 input")).to_be_visible()
    settle(page)
    assert page.evaluate("() => window.__paints") == {}
    # A new walk over the same shape repaints both figures (their colours change) ...
    ops = page.locator(".candela-ops-input input")
    ops.fill(".transpose()")
    ops.press("Enter")
    expect(page.locator(".candela-stride")).to_have_text("(1, 16)")
    settle(page)
    painted = page.evaluate("() => window.__paints")
    assert painted.get("logical-figure", 0) >= 1 and painted.get("buffer-figure", 0) >= 1
    # ... and a new shape redraws them at their new size.
    page.evaluate(PAINTS_JS)
    width = page.evaluate(model_js("return m('logical-figure').width"))
    ops.fill(".view((64, 4))")
    ops.press("Enter")
    expect(page.locator(".candela-shape")).to_have_text("(64, 4)")
    settle(page)
    assert page.evaluate("() => window.__paints").get("logical-figure", 0) >= 1
    box = page.locator("[aria-label^='Logical grid']").bounding_box()
    assert page.evaluate(model_js("return m('logical-figure').width")) != width
    assert abs(box["width"] - page.evaluate(model_js("return m('logical-figure').width"))) <= 1


#: Records what the page sends the server: the content frame of each Bokeh message.
SENT_JS = """() => {
  window.__sent = []
  const send = WebSocket.prototype.send
  WebSocket.prototype.send = function (data) {
    if (typeof data === "string" && data.startsWith('{"events"')) window.__sent.push(data)
    return send.call(this, data)
  }
}"""


def _sent(page) -> list[str]:
    return page.evaluate("() => window.__sent.splice(0)")


@pytest.mark.patched("keep_href")
def test_an_edit_sends_the_server_only_the_boxs_text_and_its_event(open_explorer, explorer_server):
    # Each key used to send the server the box's text, Enter an event of its own, and the
    # new URL came back from the page: 15 messages, more of the server's time than the
    # edit, for `.transpose()` typed. Now the box's value and the box's event after it (and
    # a figure's new size).
    import tornado.web

    asked: list[str] = []
    log_request = tornado.web.Application.log_request

    def record(self, handler):
        asked.append(handler.request.uri)
        return log_request(self, handler)

    tornado.web.Application.log_request = record
    try:
        page = open_explorer("?shape=3,4")
        page.evaluate(SENT_JS)
        for box, text, field, shown, url in [
            (".candela-ops-input input", ".transpose()", ".candela-stride", "(1, 4)", "ops=.t"),
            (".candela-shape-input input", "4,5", ".candela-shape", "(5, 4)", "shape=4,5"),
        ]:
            page.locator(box).click()
            page.locator(box).press("Control+a")
            page.keyboard.type(text, delay=20)
            page.wait_for_timeout(300)  # what each key would have sent is out by now
            assert _sent(page) == []
            expect(page.locator(box)).to_have_value(text)  # the page keeps what was typed
            page.keyboard.press("Enter")
            expect(page.locator(field)).to_have_text(shown)
            # The new URL is shown, and not sent back to the server, which wrote it.
            page.wait_for_function(f"() => location.search.includes({url!r})")
            page.wait_for_timeout(300)
            sent = [m for m in _sent(page) if not _sizes_only(m)]  # a figure's new size
            # The box's text, and its small event after it (explorer/enter_box.mjs: it
            # has Panel send all the edit changes back as one message).
            values = [m for m in sent if '"attr":"value"' in m]
            applied = [m for m in sent if '"applied"' in m]
            assert len(values) == len(applied) == 1 and len(sent) == 2, sent
            assert json_new(values[0]) == text
        # An argument box: typed, then "add step" clicked; the step uses what was typed.
        page.locator(".candela-ops button", has_text="narrow").click()
        page.locator(".candela-arg-narrow-2 input").click()
        page.locator(".candela-arg-narrow-2 input").press("Control+a")
        page.keyboard.type("2", delay=20)
        page.locator(".candela-add-step button").click()
        expect(page.locator(".candela-ops-input input")).to_have_value(
            ".transpose().narrow(0, 0, 2)"
        )
        assert not [m for m in _sent(page) if "value_input" in m or "enter-pressed" in m]
        # The page's icon is in the page: no request for it after a new URL.
        page.wait_for_function("() => location.search.includes('narrow')")
        page.wait_for_timeout(500)
        assert not [uri for uri in asked if "favicon" in uri], asked
    finally:
        tornado.web.Application.log_request = log_request


def _sizes_only(message: str) -> bool:
    import json

    attrs = {e.get("attr", "") for e in json.loads(message)["events"]}
    return all(a.startswith(("inner_", "outer_")) for a in attrs)


def json_new(message: str):
    import json

    (event,) = json.loads(message)["events"]
    return event["new"]


def test_a_lane_wrapped_anew_for_a_resized_window_keeps_the_walk_where_it_is(open_explorer, page):
    # In presenter mode the buffer lane wraps as the room allows (figures._wrapped): a
    # window resized to wrap it otherwise drew it again and restarted the walk at
    # element 1. The walk stays on its element, its cursor on that element's cell.
    page.set_viewport_size({"width": 1024, "height": 768})
    open_explorer("?shape=4,5&presenter=true")
    count = "new Set(Array.from(m('buffer-source').data.y)).size"
    before = page.evaluate(model_js(f"return {count}"))
    forward = page.get_by_role("button", name="step ▶")
    for _ in range(7):
        forward.click()
    odometer = page.locator(".candela-odometer")
    expect(odometer).to_contain_text("element 8 of 20")
    for size in ({"width": 800, "height": 600}, {"width": 1920, "height": 1080}):
        page.set_viewport_size(size)
        try:
            page.wait_for_function(model_js(f"return {count} !== {before}"), timeout=5000)
            break
        except PlaywrightTimeout:  # this size keeps its wrap: try the next
            continue
    after = page.evaluate(model_js(f"return {count}"))
    assert after != before, "no size tried wrapped the lane otherwise"
    expect(odometer).to_contain_text("element 8 of 20")
    # The buffer's cursor on position 7's cell as the lane is placed now.
    page.wait_for_function(
        model_js(
            "const b = m('buffer-source').data, c = mark('buffer', 'cursor');"
            "return c.x[0] === b.x[7] && c.y[0] === b.y[7]"
        ),
        timeout=5000,
    )
    placed, cursor = page.evaluate(
        model_js(
            "const b = m('buffer-source').data, c = mark('buffer', 'cursor');"
            "return [[b.x[7], b.y[7]], [c.x[0], c.y[0], c.pos[0]]]"
        )
    )
    assert cursor == [*placed, 7], (cursor, placed)


def test_the_buffer_heading_says_as_many_to_a_row_as_the_lane_draws(explorer_server, page):
    # On a projector a lesson's lane wraps wider than its own (2 tensor rows to a lane
    # row): its heading said "6 per row" over rows of 12. It says what is drawn, and
    # again when a resized window wraps it otherwise.
    page.set_viewport_size({"width": 1024, "height": 768})
    open_served(page, explorer_server + "?lesson=channels-last&step=9&presenter=true")
    per_row = model_js(
        "const y = Array.from(m('buffer-source').data.y); return y.filter(v => v === y[0]).length"
    )
    heading = page.get_by_text(re.compile(r"\d+ cells, \d+ per row"))
    for size in (None, {"width": 800, "height": 600}):
        if size is not None:
            page.set_viewport_size(size)
        # the lane and its heading agree once the page's room is heard (both may change)
        for _ in range(50):
            drawn = page.evaluate(per_row)
            if f"24 cells, {drawn} per row" in heading.inner_text():
                break
            page.wait_for_timeout(100)
        expect(heading).to_contain_text(f"24 cells, {drawn} per row")
