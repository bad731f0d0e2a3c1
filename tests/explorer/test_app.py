"""Model-level tests of the Explorer: set state from Python and widgets, read fields and errors.

No browser here: the Panel and Bokeh objects are read directly. What the
tests read are the contract's names (``layout``, ``error``, the CSS classes in
the fields' HTML, the Bokeh model names).
"""

from __future__ import annotations

import re
import weakref

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("panel")

from bokeh.document import Document

from explorer import columns as C
from explorer.app import Explorer
from explorer.ops import REGISTRY, names
from explorer.pipeline import parse
from explorer.state import StateError, parse_shape


def field(ex: Explorer, name: str) -> str:
    match = re.search(rf'class="candela-{name}">([^<]*)<', ex.fields_pane.object)
    assert match, f"no candela-{name} in the fields"
    return match.group(1)


def error_text(ex: Explorer) -> str:
    return re.search(r'class="candela-error"[^>]*>(.*)</div>', ex.error_pane.object, re.S).group(1)


def test_constructed_state_shows_in_the_fields():
    ex = Explorer(shape=(3, 4), ops=".transpose()")
    assert ex.error is None and error_text(ex) == ""
    assert ex.layout.shape == (4, 3)
    assert [
        field(ex, n)
        for n in (
            "shape",
            "stride",
            "adj-stride",
            "offset",
            "len",
            "is-contiguous",
            "is-transposed",
        )
    ] == ["(4, 3)", "(1, 4)", "(-7, 4)", "0", "12", "False", "True"]
    assert "adj_stride[0] = 1 - 4*(3-1) = -7" in re.sub(r"<[^>]+>", "", ex.fields_pane.object)


def test_setting_ops_updates_layout_fields_and_column_data():
    ex = Explorer(shape=(3, 4))
    assert ex.figures.frames_source.data["pos"].tolist() == list(range(12))
    ex.ops = ".transpose()"
    assert ex.layout.stride == (1, 4)
    assert field(ex, "shape") == "(4, 3)"
    assert ex.figures.frames_source.data["pos"].tolist() == ex.layout.positions().tolist()
    assert ex.figures.frames_source.data["delta"].tolist()[3] == -7
    assert ex.editor.ops_input.value == ".transpose()"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"ops": ".view((5, 5))"}, "step 2 `.view((5, 5))`"),
        ({"ops": ".transpose().transpose(0, 7)"}, "step 2"),
        ({"ops": ".transpose().abc()"}, "`abc` is not an operation"),
        ({"ops": ".transpose("}, "not valid method-chain syntax"),
        ({"shape": "3,-1"}, "negative"),
        ({"shape": "abc"}, "not a whole number"),
        ({"shape": "1,2,3,4,5,6,7,8,9"}, "rank 9"),
    ],
)
def test_bad_input_shows_a_message_and_keeps_the_last_good_state(change, words):
    ex = Explorer(shape=(3, 4), ops=".transpose()")
    before = (ex.layout, dict(ex.figures.frames_source.data), ex.fields_pane.object)
    if "ops" in change and change["ops"].startswith(".view"):
        change = {"ops": ".transpose()" + change["ops"]}
    with ex.typed():  # as the page's boxes and the URL set it
        ex.param.update(**change)
    assert ex.error and words in ex.error
    assert words.split("`")[0] in error_text(ex)
    assert ex.layout == before[0]
    assert ex.fields_pane.object == before[2]
    assert ex.figures.frames_source.data["pos"].tolist() == before[1]["pos"].tolist()
    with ex.typed():
        ex.ops = ".transpose().slice(s[1:])"
        ex.shape = (3, 4)
    assert ex.error is None and error_text(ex) == ""


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("ops", ".transpose().view((5, 5))", "step 2 `.view((5, 5))`"),
        ("ops", "x.view(", "not valid method-chain syntax"),
        ("ops", ".transpose().abc()", "`abc` is not an operation"),
        ("ops", 7, "text"),
        ("shape", "3,-1", "negative"),
        ("shape", (5,), "does not fit"),
        ("shape", "1,2,3,4,5,6,7,8,9", "rank 9"),
        ("unit", "bogus", "'float32'"),
        ("theme", "purple", "'dark'"),
        ("lesson", "bogus", "'transpose'"),
        ("compare", "[9]", "out of range"),
    ],
)
def test_a_bad_value_set_from_python_raises_one_line_and_changes_nothing(name, value, words):
    ex = Explorer(shape=(3, 4), ops=".transpose()", compare=".T")
    with ex.typed():
        ex.ops = ".transpose().nope()"  # a message typed earlier stays as it was
    before = (ex.layout, ex.error, ex.param.values(), ex.fields_pane.object, error_text(ex))
    frames = ex.figures.frames_source.data["pos"].tolist()
    with pytest.raises(ValueError) as raised:
        setattr(ex, name, value)
    message = str(raised.value)
    assert "\n" not in message and len(message) < 400 and words in message, message
    assert message.startswith(name) and (repr(value) in message or str(value) in message)
    after = (ex.layout, ex.error, ex.param.values(), ex.fields_pane.object, error_text(ex))
    assert after == before
    assert ex.figures.frames_source.data["pos"].tolist() == frames


@pytest.mark.parametrize(
    "params",
    [{"shape": (3, -1)}, {"ops": "x.view("}, {"lesson": "bogus"}, {"compare": "[9]"},
     {"unit": "bogus"}, {"shape": (3, 4), "ops": ".view(5)"}],
)  # fmt: skip
def test_a_bad_state_at_construction_raises_one_line(params):
    with pytest.raises(ValueError) as raised:
        Explorer(**params)
    assert "\n" not in str(raised.value) and len(str(raised.value)) < 400


def test_widgets_and_text_write_one_pipeline():
    ex = Explorer(shape=(3, 4))
    ex.editor.op_choice.value = "narrow"
    assert ex.editor.op_choice.value == "narrow"
    dim, start, length = ex.editor.arg_widgets["narrow"]
    dim.value, start.value, length.value = "0", "1", "2"
    ex.editor.add_button.clicks += 1
    assert ex.ops == ".narrow(0, 1, 2)" and ex.layout.shape == (2, 4) and ex.layout.offset == 4
    ex.editor.op_choice.value = "slice"
    ex.editor.arg_widgets["slice"][0].value = ":, ::-1"
    ex.editor.add_button.clicks += 1
    assert ex.ops == ".narrow(0, 1, 2).slice(s[:, ::-1])"
    assert ex.layout.stride == (4, -1)
    ex.editor.ops_input.value = ".transpose()"  # typing is the same pipeline
    assert ex.ops == ".transpose()" and ex.layout.shape == (4, 3)


def test_argument_widgets_cannot_smuggle_code():
    ex = Explorer(shape=(3, 4))
    ex.editor.op_choice.value = "view"
    ex.editor.arg_widgets["view"][0].value = "12), __import__('os').system('true'"
    ex.editor.add_button.clicks += 1
    assert ex.error and ex.ops == "" and ex.layout.shape == (3, 4)


@pytest.mark.parametrize("ops", ["", ".transpose()", ".transpose().flip(0).slice(s[1:])"])
def test_a_bad_argument_names_the_step_it_would_have_been(ops):
    ex = Explorer(shape=(3, 4), ops=ops)
    steps = len(parse(ops))
    ex.editor.op_choice.value = "narrow"
    ex.editor.arg_widgets["narrow"][0].value = "x"
    ex.editor.add_button.clicks += 1
    assert ex.error and f"step {steps + 1} " in ex.error, ex.error
    assert f"step {steps + 2} " not in ex.error and (steps == 0 or "step 1 " not in ex.error)
    assert ex.ops == ops  # the last good state stays


@pytest.mark.parametrize("op", names())
def test_every_op_button_adds_a_step_with_its_default_arguments(op):
    ex = Explorer(shape=(3, 4))
    ex.editor.op_choice.value = op
    ex.editor.add_button.clicks += 1
    assert ex.ops.startswith("[" if REGISTRY[op].bracket else f".{op}")
    assert ex.error is None, ex.error


def test_undo_and_reset_walk_back_through_good_states():
    ex = Explorer(shape=(3, 4))
    ex.ops = ".transpose()"
    ex.ops = ".transpose().slice(s[1:])"
    with ex.typed():
        ex.ops = ".bad()"  # not recorded
    assert ex.layout.shape == (3, 3)
    ex.ops = ".transpose().slice(s[1:])"  # the same good state again: not recorded twice
    ex.shape = (2, 3)
    assert ex.layout.shape == (2, 2)
    ex.undo()
    assert (ex.shape, ex.ops) == ((3, 4), ".transpose().slice(s[1:])")
    ex.undo()
    assert ex.ops == ".transpose()"
    ex.reset()
    assert ex.ops == "" and ex.layout.shape == (3, 4)
    ex.undo()
    assert ex.ops == ".transpose()"


def test_step_selection_shows_before_and_after():
    ex = Explorer(shape=(3, 4), ops=".transpose().narrow(0, 1, 2)")
    assert list(ex.editor.step_select.options.values()) == [1, 2]
    ex.editor.step_select.value = 1
    assert "before: (3, 4):(4, 1) adj (1, 1) offset 0" in ex.editor.step_pane.object
    assert "after:  (4, 3):(1, 4) adj (-7, 4) offset 0" in ex.editor.step_pane.object
    ex.editor.step_select.value = 2
    assert "after:  (2, 3):(1, 4) adj (-7, 4) offset 1" in ex.editor.step_pane.object


def test_the_step_list_says_which_library_a_disputed_step_follows():
    ex = Explorer(shape=(3, 4))
    with ex.typed():
        ex.ops = ".squeeze(1).transpose(0, 1).squeeze(axis=0)"
    assert ex.error  # NumPy's squeeze(axis=0) refuses an axis of size 4 ...
    assert ex.ops == ".squeeze(1).transpose(0, 1).squeeze(axis=0)"
    assert ex.layout.shape == (3, 4)  # ... and the last good state (the start) stays
    ex.ops = ".squeeze(1).transpose(0, 1)"
    ex.editor.step_select.value = 1
    assert "candela-step-note" in ex.editor.step_pane.object
    assert "PyTorch" in ex.editor.step_pane.object and "size 4" in ex.editor.step_pane.object
    ex.editor.step_select.value = 2
    assert "swapaxes" in ex.editor.step_pane.object  # NumPy's word for the swap
    assert "after:  (4, 3):(1, 4)" in ex.editor.step_pane.object
    ex.ops = ".transpose(1, 0)"  # a swap in both libraries: nothing to say
    ex.editor.step_select.value = 1
    assert "candela-step-note" not in ex.editor.step_pane.object


@pytest.mark.parametrize(
    "edits",
    [
        ["", ".transpose()", "", ".transpose().narrow(0, 1, 2)", ".transpose()"],
        [".flip(0)", ".flip(0).flip(1)", ".flip(0).flip(1)", "", ".flip(1)"],
    ],
)
def test_every_edit_shows_its_last_step_once(edits):
    """After each edit (or a new unit) the step list ends at the last step, which is shown,
    and shown once: a second rendering of the step is an edit's work done twice. Drawn
    into a document, as served: Panel's select then changes a value missing from new
    options itself, before the editor sets it."""
    ex = Explorer(shape=(3, 4))
    doc = Document()
    doc.add_root(ex.__panel__().get_root(doc))
    ed = ex.editor
    shown = []
    render = ed._show_step
    ed._show_step = lambda: (shown.append(ed.step_select.value), render())[1]
    for n, change in enumerate([*edits, "unit"]):
        if change == "unit":
            ed.step_select.value = 1 if ex.result.steps else 0  # an earlier step chosen
            shown.clear()
            ex.unit = "float32"
        else:
            shown.clear()
            ex.ops = change
        steps = ex.result.steps
        assert list(ed.step_select.options.values()) == (list(range(1, len(steps) + 1)) or [0])
        assert ed.step_select.value == len(steps)
        if ex.ops == (edits[n - 1] if n else "") and change != "unit":
            assert shown == []  # nothing new: nothing shown again
            continue
        assert shown == [len(steps)], (change, shown)
        if steps:
            assert "after:" in ed.step_pane.object and ed.step_pane.object.count("before:") == 1
        else:
            assert "no steps yet" in ed.step_pane.object


def test_strides_in_bytes_for_a_chosen_dtype():
    ex = Explorer(shape=(3, 4), ops=".transpose()")
    ex.unit = "float32"
    assert field(ex, "stride") == "(4, 16)" and field(ex, "adj-stride") == "(-28, 16)"
    assert "bytes" in ex.fields_pane.object
    assert field(ex, "shape") == "(4, 3)"


def test_as_contiguous_says_it_copied():
    ex = Explorer(shape=(3, 4), ops=".transpose().as_contiguous()")
    assert "copy" in ex.buffer_heading.object and "candela-copy-note" in ex.fields_pane.object
    assert list(ex.figures.buffer_source.data["value"]) == ex.tensor.buffer.tolist()


def test_too_many_elements_draw_the_edges_of_each_axis():
    ex = Explorer(shape=(256, 256), ops=".transpose()")
    assert ex.error is None
    assert "65,536 elements" in ex.logical_heading.object
    # NumPy's edge items: 3 first and 3 last of each axis.
    assert len(ex.figures.logical_source.data["x"]) == 36
    assert len(ex.figures.frames_source.data["pos"]) == 36
    assert field(ex, "shape") == "(256, 256)"
    ex.shape = (64, 64)
    assert len(ex.figures.logical_source.data["x"]) == 4096


def test_models_are_named_for_tests_and_scripts_to_find():
    ex = Explorer(shape=(3, 4))
    doc = Document()
    root = ex.__panel__().get_root(doc)
    for name in (
        "logical-source",
        "buffer-source",
        "frames-source",
        "marks-logical-source",
        "marks-buffer-source",
        "jump-source",
        "frame-slider",
        "speed-slider",
        "odometer",
        "logical-figure",
        "buffer-figure",
        "play-button",
    ):
        assert root.select_one({"name": name}) is not None, name


def _edit_events(ex: Explorer, doc: Document, ops: str) -> dict:
    """What the browser is sent for one edit: {model name: changed columns (None: all), or
    the set of changed properties}."""
    events = []
    doc.on_change(events.append)
    ex.ops = ops
    doc.remove_on_change(events.append)
    sent: dict = {}
    for e in events:
        name = getattr(e.model, "name", None) or type(e.model).__name__
        if type(e).__name__ == "ColumnDataChangedEvent":
            sent[name] = None if e.cols is None else set(e.cols)
        else:
            sent.setdefault(name, set()).add(e.attr)
    return sent


def test_a_walk_only_edit_sends_no_column_that_did_not_change():
    # 64x64 walked another way: the cells stay where they are, so only the walk's own
    # columns travel (an unchanged column re-sent costs the browser a whole redraw of
    # its glyph: the labels' 770 padded rows were once re-sent on every edit). The
    # logical cells' colours follow the walk's order, not its positions: the logical
    # figure is sent nothing, and the browser does not paint it again.
    ex = Explorer(shape=(64, 64))
    doc = Document()
    doc.add_root(ex.__panel__().get_root(doc))
    for ops in (".transpose()", "", ".transpose()", ""):
        sent = _edit_events(ex, doc, ops)
        assert sent["buffer-source"] == {"color"}
        assert "frames-source" in sent  # always: new frames restart the walk
        for name in ("logical-source", "labels-logical-source", "labels-buffer-source",
                     "marks-logical-source", "marks-buffer-source", "jump-source",
                     "logical-figure", "buffer-figure"):  # fmt: skip
            assert name not in sent, name
    # A shape edit moves the logical cells, and leaves the buffer figure alone.
    sent = _edit_events(ex, doc, ".view((16, 256))")
    assert sent["logical-source"] == {"x", "y", "index"}
    assert {"width", "height"} <= sent["logical-figure"]
    for name in ("buffer-source", "labels-buffer-source", "marks-buffer-source", "buffer-figure"):
        assert name not in sent, name


def test_traversal_script_ships_inside_the_package():
    from explorer.figures import TRAVERSE_JS
    from explorer.shipped import without_comments

    text = TRAVERSE_JS.read_text()
    assert TRAVERSE_JS.suffix == ".mjs" and "export default" in text
    ex = Explorer()
    figs = ex.figures
    callbacks = figs.frame_slider.js_property_callbacks["change:value"]
    # the file's code, its comment lines emptied (explorer.shipped), a module
    assert callbacks[0].code == without_comments(text, ".mjs") and callbacks[0].module
    # One callback model serves every control of a view: the script is sent once.
    every = [
        *figs.speed_slider.js_property_callbacks["change:value"],
        *figs.frames_source.js_property_callbacks["change:data"],
        *figs.frames_source.js_property_callbacks["change:tags"],
        *(b.js_event_callbacks["button_click"][0] for b in figs.buttons.values()),
        *(tool.callback for tool in figs.hover_tools.values()),
    ]
    assert len(every) == 8 and all(c is callbacks[0] for c in every)


def test_importing_the_package_has_no_side_effects():
    import subprocess
    import sys

    code = "import sys, explorer; print('panel' in sys.modules, 'bokeh' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize(
    ("text", "shape"),
    [("3,4", (3, 4)), (" (2, 3, 4) ", (2, 3, 4)), ("5", (5,)), ("0,3", (0, 3)), ([2, 2], (2, 2))],
)
def test_parse_shape_reads_text_and_sequences(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize(
    "bad",
    ["", "3,-1", "abc", "3.5", "1,2,3,4,5,6,7,8,9", f"{2**30},{2**30}", True, 2.0, (3, "4"), None],
)
def test_parse_shape_refuses_with_a_message(bad):
    with pytest.raises(StateError):
        parse_shape(bad)


def test_empty_tensor_draws_nothing_and_does_not_crash():
    ex = Explorer(shape=(0, 3))
    assert ex.error is None and field(ex, "len") == "0"
    assert len(ex.figures.frames_source.data["pos"]) == 0
    assert C.columns_for(ex.tensor).buffer["pos"].tolist() == []


_typed = st.text(alphabet=".()[]:,- 0123456789s_abcdefghijklmnopqrstuvwxyz'\"", max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.one_of(st.text(alphabet="0123456789,- x.", max_size=12), _typed), ops=_typed)
def test_whatever_is_typed_the_page_keeps_a_good_state(shape, ops):
    """Typing never raises: each input is taken or refused with a message, and the last
    good layout stays on screen with fields that describe it."""
    ex = Explorer(shape=(3, 4), ops=".transpose()")
    for name, value in (("shape", shape), ("ops", ops)):
        before = ex.layout
        with ex.typed():
            setattr(ex, name, value)
        if ex.error is not None:
            assert ex.layout == before and ex.error.strip()
            assert error_text(ex).strip()
        assert field(ex, "shape") == str(ex.layout.shape)
        assert field(ex, "stride") == str(ex.layout.stride)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.one_of(st.text(alphabet="0123456789,- x.", max_size=12), _typed), ops=_typed)
def test_python_raises_exactly_for_what_the_page_would_show_as_an_error(shape, ops):
    """Set from Python, a value the page would refuse with a message raises a one-line
    ValueError and changes nothing; any other value gives what typing it gives."""
    ex = Explorer(shape=(3, 4), ops=".transpose()")
    twin = Explorer(shape=(3, 4), ops=".transpose()")
    for name, value in (("shape", shape), ("ops", ops)):
        before = (ex.layout, getattr(ex, name))
        with twin.typed():
            setattr(twin, name, value)
        try:
            setattr(ex, name, value)
        except ValueError as exc:
            assert twin.error is not None, (name, value)
            assert "\n" not in str(exc) and str(exc).startswith(name)
            assert (ex.layout, getattr(ex, name), ex.error) == (*before, None)
            with twin.typed():
                twin.param.update(shape=ex.shape, ops=ex.ops)  # the twin follows ex again
        else:
            assert twin.error is None and ex.error is None
            assert ex.layout == twin.layout


def test_undo_after_a_bad_edit_returns_to_the_state_on_screen():
    # The failed edit is what undo takes back; the last good state must not be skipped.
    ex = Explorer(shape=(3, 4))
    ex.ops = ".slice(s[0:2])"
    ex.ops = ".transpose()"
    with ex.typed():
        ex.ops = ".transpose().view((12,))"  # not contiguous: an error, (4, 3) stays on screen
    assert ex.error and ex.layout.shape == (4, 3)
    ex.undo()
    assert (ex.ops, ex.error, ex.layout.shape) == (".transpose()", None, (4, 3))
    ex.undo()
    assert ex.ops == ".slice(s[0:2])"
    with ex.typed():
        ex.shape = "3,-1"  # a bad shape: undo restores the good one
    ex.undo()
    assert (ex.shape, ex.ops, ex.error) == ((3, 4), ".slice(s[0:2])", None)


def test_a_step_added_after_a_bad_edit_applies_to_the_state_on_screen():
    from candela import Layout

    ex = Explorer(shape=(3, 4), ops=".transpose()")
    with ex.typed():
        ex.ops = ".transpose().view((12,))"  # refused: (4, 3) stays on screen
    assert ex.error is not None
    ex.add_step(".narrow(0, 0, 2)")
    assert ex.error is None
    assert ex.layout == Layout((3, 4)).transpose().narrow(0, 0, 2)
    with ex.typed():
        ex.shape = "3,-1"  # a bad shape, then a button: the step goes onto (3, 4) too
    ex.add_step(".transpose()")
    assert ex.error is None and ex.layout == Layout((3, 4)).transpose().narrow(0, 0, 2).transpose()


def test_a_failing_callback_becomes_one_log_line_and_a_message_on_its_page(caplog):
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from explorer import app as A

    doc = Document()
    with set_curdoc(doc):
        ex = Explorer()
        A._PAGES[doc] = weakref.ref(ex)
        with caplog.at_level("WARNING", logger="candela-explorer"):
            A.report_failure(RecursionError("maximum recursion depth exceeded " + "x" * 5000))
    (record,) = caplog.records
    assert len(record.getMessage()) < 400 and "RecursionError" in record.getMessage()
    assert "RecursionError" in ex.error and ex.layout.shape == (3, 4)


def test_a_summarised_grid_says_so_in_its_headings():
    ex = Explorer(shape=(300, 300))
    assert ex.columns.overview
    assert "90,000 elements; drawn: the first and last 3" in ex.logical_heading.object
    assert "per row" not in ex.buffer_heading.object
    bins = ex.columns.overview["bin"]
    assert f"90,000 cells, drawn as {-(-90000 // bins):,} of {bins} positions" in (
        ex.buffer_heading.object
    )
    ex.shape = (3, 4)
    assert "12 cells, 12 per row" in ex.buffer_heading.object


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({"unit": "bogus"}, ["unit cannot be 'bogus'", "'float32'", "'elements'"]),
        ({"theme": "purple"}, ["theme cannot be 'purple'", "'light'", "'dark'"]),
        ({"unit": 3}, ["unit cannot be 3"]),
    ],
)
def test_a_bad_choice_from_python_is_one_short_line_and_changes_nothing(given, words):
    with pytest.raises(ValueError) as info:
        Explorer(**given)
    message = str(info.value)
    assert "\n" not in message and len(message) < 300, message
    assert all(word in message for word in words), message
    ex = Explorer(shape=(3, 4), ops=".T")
    ((name, value),) = given.items()
    with pytest.raises(ValueError, match=f"{name} cannot be"):
        setattr(ex, name, value)
    assert ex.unit == "elements" and ex.theme == "" and ex.layout.shape == (4, 3)


def test_repr_and_the_outputs_text_are_one_line_as_a_user_would_write_them():
    import numpy as np

    import explorer
    from explorer.notebook import repr_mimebundle

    ex = Explorer(shape=(3, 4), ops=".T", compare="[1:]")
    assert repr(ex) == "Explorer(shape=(3, 4), ops='.T', compare='[1:]')"
    shown = explorer.show(np.zeros((2, 3), dtype=np.float32), ops="[::-1]")
    assert repr(shown) == "Explorer(shape=(2, 3), ops='[::-1]', unit='float32')"
    lesson = Explorer(lesson="transpose", step=2)
    assert repr(lesson).startswith("Explorer(shape=") and "lesson='transpose', step=2" in repr(
        lesson
    )
    text = repr_mimebundle(ex)[0]["text/plain"]
    assert text == repr(ex) and "\n" not in text


def test_going_on_before_answering_shows_the_answer_when_coming_back():
    # A next step may show this one's answer (the lesson linter keeps the shipped lessons
    # from it): going on is "show me", and coming back shows the answer.
    ex = Explorer(lesson="slicing", step=1)
    room = ex.classroom
    assert ex.concealed and "before answering shows the answer" in room.question_pane.object
    room.next()
    assert ex.step == 2 and ("slicing", 1) in room.given_up
    room.previous()  # step 2's question was left unanswered too
    assert ex.step == 1 and not ex.concealed and ("slicing", 2) in room.given_up
    assert room.verdict is not None and room.verdict.revealed and not room.verdict.correct
    # an answered question is not given up by going on
    fresh = Explorer(lesson="slicing", step=2)
    fresh.classroom.check(str(fresh.classroom.current_step.question.answer))
    assert fresh.classroom.verdict.correct
    fresh.classroom.next()
    assert fresh.classroom.given_up == set()
