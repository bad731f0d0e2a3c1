"""Two views of one buffer: the lane's kinds, the state, the URL and explorer.compare(a, b)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import explorer
from candela import Layout, Tensor
from explorer.app import Explorer
from explorer.state import ExplorerState, evaluate
from explorer.two_views import alias_columns
from explorer.url import query_for, read_query

PIPELINES = ["", ".T", "[1:]", "[::2, ::-1]", "[:, 1]", "[::-1, 2]", ".diagonal()", "[1:, None]"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PIPELINES), st.sampled_from(PIPELINES), st.integers(2, 5))
def test_the_lane_says_which_view_reads_each_cell_as_numpy_does(ops_a, ops_b, n):
    start = Tensor.arange((n, n + 1))
    a = evaluate(None, ops_a, start).tensor
    b = evaluate(None, ops_b, start).tensor
    cols = alias_columns(a, b)
    # Oracle: NumPy's own views of the same arange, and the values (= positions) they read.
    x = np.arange(start.len).reshape(start.shape)
    scope = {"x": x}  # the texts are the test's own, as NumPy reads them
    read_a = set(np.ravel(eval("x" + ops_a, scope)))
    read_b = set(np.ravel(eval("x" + ops_b, scope)))
    for p, kind in enumerate(cols["kind"]):
        expected = {(True, True): "both", (True, False): "first", (False, True): "second"}.get(
            (p in read_a, p in read_b), "neither"
        )
        assert kind == expected, (ops_a, ops_b, p)
    assert cols["reads_a"].sum() == a.len and cols["reads_b"].sum() == b.len


def test_a_second_view_that_copied_reads_nothing_of_the_first_buffer():
    start = Tensor.arange((2, 3))
    cols = alias_columns(start, start.T.as_contiguous())
    assert set(cols["kind"]) == {"first"}


def test_the_compare_pipeline_is_evaluated_over_the_same_start_and_keeps_its_last_good_view():
    st_ = ExplorerState(shape="3,4", ops=".T", compare="[1:]")
    assert st_.compare_result.states[0] is st_.result.states[0]
    assert st_.compare_result.layout.shape == (2, 4) and st_.error is None
    with st_.typed():  # as the page's box sets it
        st_.compare = "[9]"
    assert st_.error.startswith("compare: step 1 `[9]`") and "index 9" in st_.error
    assert st_.compare_result.layout.shape == (2, 4)  # the last good second view stays
    st_.compare = "[::-1]"
    assert st_.error is None and st_.compare_result.layout.stride == (-4, 1)
    st_.ops = ".flip(1)"  # a new first pipeline keeps the second
    assert st_.compare_result.layout.stride == (-4, 1)
    st_.compare = ""
    assert st_.compare_result is None and st_.error is None


def test_the_compare_key_travels_in_the_url_and_a_bad_one_says_so():
    updates, messages = read_query("?shape=3,4&ops=.T&compare=.flip(0, 1)")
    assert updates["compare"] == ".flip(0, 1)" and messages == []
    st_ = ExplorerState(**updates)
    assert "compare=.flip(0,%201)" in query_for(st_)
    updates, messages = read_query("?shape=3,4&compare=.nope()")
    assert "compare" not in updates and "compare step 1 `.nope()`" in messages[0]


def test_the_second_views_fields_sit_inside_candela_compare_only_while_there_is_one():
    ex = Explorer(shape=(3, 4), ops=".T", compare=".T[::2]")
    fields = ex.compare_fields.object
    assert fields.startswith('<div class="candela-compare">')
    assert '<code class="candela-shape">(2, 3)</code>' in fields
    assert '<code class="candela-stride">(2, 4)</code>' in fields
    assert "both, aliased: 6" in ex.lane_heading.object
    assert ex._view.compare_column.visible
    ex.compare = ""
    assert ex.compare_fields.object == "" and not ex._view.compare_column.visible


def test_explorer_compare_shows_two_numpy_views_of_one_base():
    x = np.arange(24.0).reshape(4, 6)
    a, b = x[:, ::2], x[1:, 1:4]
    ex = explorer.compare(a, b)
    assert ex.unit == "float64" and ex.error is None
    assert ex.result.tensor.tolist() == a.tolist()
    assert ex.compare_result.tensor.tolist() == b.tolist()
    assert ex.result.tensor.buffer is ex.compare_result.tensor.buffer
    shared = set(np.ravel(a)) & set(np.ravel(b))
    kinds = alias_columns(ex.result.tensor, ex.compare_result.tensor)["kind"]
    assert {p for p, k in enumerate(kinds) if k == "both"} == {int(v) for v in shared}


def test_explorer_compare_refuses_views_of_two_buffers_naming_them():
    with pytest.raises(ValueError, match="do not share any") as info:
        explorer.compare(np.arange(12), np.arange(5.0))
    assert "12 int64" in str(info.value) and "5 float64" in str(info.value)
    with pytest.raises(ValueError, match="Layout has none of its own"):
        explorer.compare(Layout((3, 4)), np.arange(12))
    with pytest.raises(ValueError, match="dtype view"):
        a = np.arange(12, dtype=np.int32)
        explorer.compare(a, a.view(np.float32))


def test_explorer_compare_draws_two_layouts_over_one_buffer_of_positions():
    ex = explorer.compare(Layout((3, 4)), Layout((3, 4)).transpose())
    assert ex.compare_result.tensor.tolist() == np.arange(12).reshape(3, 4).T.tolist()


torch_only = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="PyTorch is not installed"
)


@torch_only
def test_explorer_compare_shows_two_torch_views_of_one_storage_with_their_values():
    import torch

    t = torch.arange(12).reshape(3, 4) * 10  # values that are not positions
    ex = explorer.compare(t, t.T[1:])
    assert ex.result.tensor.tolist() == t.tolist()
    assert ex.compare_result.tensor.tolist() == t.T[1:].tolist()
    with pytest.raises(ValueError, match="do not share any"):
        explorer.compare(t, torch.arange(12))


@torch_only
def test_explorer_compare_of_a_torch_tensor_and_the_numpy_array_it_shares():
    import torch

    a = np.arange(12.0).reshape(3, 4) * 10
    t = torch.from_numpy(a[1:])  # a storage of its own object, inside a's memory
    ex = explorer.compare(t, a.T)
    assert ex.result.tensor.tolist() == t.tolist()
    assert ex.compare_result.tensor.tolist() == a.T.tolist()
    assert ex.result.tensor.buffer is ex.compare_result.tensor.buffer
    assert np.shares_memory(ex.result.tensor.buffer, a)  # drawn from the memory itself
    kinds = alias_columns(ex.result.tensor, ex.compare_result.tensor)["kind"]
    assert [k for k in kinds].count("both") == 8  # a[1:] is 8 of a.T's 12 cells
    with pytest.raises(ValueError, match="do not share any") as info:
        explorer.compare(torch.arange(12), np.arange(12))  # unrelated, whatever the libraries
    assert "torch Tensor" in str(info.value) and "NumPy array" in str(info.value)


@torch_only
def test_show_draws_a_torch_tensors_own_values():
    import torch

    t = torch.arange(12).reshape(3, 4) * 10
    ex = explorer.show(t.T)
    assert ex.tensor.tolist() == t.T.tolist()
    assert ex.layout == Layout.from_strided((4, 3), (1, 4), 0)
    b = torch.arange(6, dtype=torch.bfloat16).reshape(2, 3)  # no NumPy dtype: read as float32
    assert explorer.show(b[:, 1:]).tensor.tolist() == [[1.0, 2.0], [4.0, 5.0]]


def test_a_lesson_step_shows_its_second_view_and_the_next_step_its_own():
    ex = Explorer()
    ex.param.update(lesson="aliasing", step=4)
    assert ex.ops == "[3:]" and ex.compare == "[:5]"
    kinds = alias_columns(ex.result.tensor, ex.compare_result.tensor)["kind"]
    assert [p for p, k in enumerate(kinds) if k == "both"] == [3, 4]
    ex.classroom.next()  # the next step has a second view of its own
    assert ex.compare == "[:]" and ex.compare_result.layout.shape == (6,)
    ex.classroom.next()  # a step without one shows one view
    assert ex.compare == "" and ex.compare_result is None


def test_a_lessons_compare_is_checked_like_its_pipeline():
    from explorer import lessons as L

    step = {"shape": [4], "ops": "", "compare": ".nope()", "text": "two views"}
    lesson = {"id": "t", "title": "t", "summary": "t", "steps": [step]}
    problems = L.verify_lesson(L.parse_lesson(lesson))
    assert any("compare" in p and ".nope()" in p for p in problems), problems
    step["compare"] = 3
    with pytest.raises(L.LessonError, match="compare"):
        L.parse_lesson(lesson)


def test_a_lesson_link_brings_its_steps_second_view_and_a_changed_one_travels():
    ex = Explorer(ops=".T", compare=".T")  # whatever was on screen before
    assert ex.open_url("?lesson=aliasing&step=4") is None
    assert ex.compare == "[:5]" and ex.compare_result.layout.shape == (5,)
    assert ex.url.location.search == "?lesson=aliasing&step=4"  # the step, unchanged
    ex.compare = "[1:]"  # the student's own second view is in the link
    assert ex.url.location.search == "?shape=8&ops=[3:]&compare=[1:]&lesson=aliasing&step=4"
    ex.open_url("?lesson=aliasing&step=6")  # a step without one shows one view
    assert ex.compare == "" and ex.compare_result is None


@pytest.mark.parametrize("presenter", [False, True])
def test_the_second_grid_is_put_beside_the_first_in_presenter_mode_too(presenter):
    # Presenter mode puts the traversal first: the second view, built once a question is
    # answered, still goes beside the first grid (not beside its heading).
    ex = Explorer(lesson="aliasing", step=2, presenter=presenter)
    view = ex._view
    assert view.compare is None  # not built while the question waits
    assert ex.classroom.check("5").correct
    (row,) = [o for o in view.views.objects if view.compare_column in getattr(o, "objects", ())]
    assert row.objects == [row.objects[0], view.compare_column]
    assert view.plots[0] in row.objects[0].objects  # the first grid's own pane
    assert ex.logical_heading in view.views.objects  # its heading where it was
    # enlarged with the first on a projector, and back with it
    from explorer.app import PRESENTER_SCALE

    scale = PRESENTER_SCALE if presenter else 1.0
    assert view.compare.second.scale == view.figures.scale == scale
    ex.presenter = not presenter
    assert view.compare.second.scale == view.figures.scale != scale


def test_a_good_edit_after_a_bad_compare_keeps_the_second_view_and_its_url():
    from explorer.url import query_for

    ex = Explorer(shape=(3, 4), ops=".T", compare="[1:]")
    with ex.typed():
        ex.compare = ".nope()"  # refused: the last good second view stays
    assert ex.compare_result.ops == "[1:]" and "compare=" in query_for(ex)
    ex.ops = ".T[::2]"  # a good edit of the first pipeline
    assert ex.result.ops == ".T[::2]"
    assert ex.compare_result is not None and ex.compare_result.ops == "[1:]"
    assert ex.compare_result.tensor.tolist() == np.arange(12).reshape(3, 4)[1:].tolist()
    assert "compare=%5B1%3A%5D" in query_for(ex) or "compare=[1:]" in query_for(ex)
    assert ex.error.startswith("compare:") and ".nope()" in ex.error  # still said
    ex.compare = "[2:]"  # a good compare clears its own message
    assert ex.error is None and ex.compare_result.ops == "[2:]"
