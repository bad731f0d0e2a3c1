"""The pipeline parser: round trips, the whitelist, literal-only arguments, error wording."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from candela import Tensor
from explorer.ops import names
from explorer.pipeline import PipelineError, SliceSpec, Step, apply, format_pipeline, parse

ints = st.integers(-20, 20)
int_tuples = st.lists(st.integers(0, 9), min_size=1, max_size=4).map(tuple)
slice_items = st.one_of(
    ints,
    st.builds(slice, st.none() | ints, st.none() | ints, st.none() | ints.filter(bool)),
)
steps = st.one_of(
    st.builds(Step, st.just("view"), int_tuples.map(lambda t: (t,))),
    st.builds(Step, st.just("broadcast"), int_tuples.map(lambda t: (t,))),
    st.builds(Step, st.just("transpose_axes"), int_tuples.map(lambda t: (t,))),
    st.builds(
        Step,
        st.just("slice"),
        st.lists(slice_items, min_size=1, max_size=3).map(lambda i: (SliceSpec(tuple(i)),)),
    ),
    st.builds(Step, st.just("narrow"), st.tuples(ints, ints, ints)),
    st.just(Step("transpose")),
    st.builds(Step, st.just("transpose"), st.tuples(ints, ints)),
    st.builds(Step, st.just("rotate_axis_innermost"), st.tuples(ints)),
    st.just(Step("as_contiguous")),
)


@given(st.lists(steps, max_size=6))
def test_format_then_parse_gives_back_the_same_steps(chain):
    text = format_pipeline(chain)
    assert parse(text) == chain
    assert format_pipeline(parse(text)) == text


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_empty_text_is_the_empty_pipeline(text):
    assert parse(text) == []


def test_whitespace_lists_and_newlines_read_as_the_canonical_form():
    chain = parse(" .narrow( 0,1 , 2 )\n  .view([2, 4])  .slice(s[ -1 ,::2])")
    assert format_pipeline(chain) == ".narrow(0, 1, 2).view((2, 4)).slice(s[-1, ::2])"


@pytest.mark.parametrize(
    ("text", "step", "words"),
    [
        (".__import__('os')", 1, "not an operation"),
        (".transpose().__class__()", 2, "not an operation"),
        (".transpose().system('ls')", 2, "not an operation"),
        (".transpose().shape", 2, "not an operation"),
        (".transpose()[0]", 2, "indexing"),
        (".view(x)", 1, "integer literal"),
        (".view((2, n))", 1, "integer literal"),
        (".view((2, 3.0))", 1, "integer literal"),
        (".view(True)", 1, "integer literal"),
        (".view(2 + 2)", 1, "integer literal"),
        (".view(__import__('os').getpid())", 1, "integer literal"),
        (".slice(t[0])", 1, "s[...]"),
        (".slice(s[...])", 1, "integer literal"),
        (".slice(s[open('x')])", 1, "integer literal"),
        (".view(shape=(1,))", 1, "by position"),
        (".transpose(1)", 1, "takes 0 or 2"),
        (".as_contiguous(1)", 1, "takes 0"),
    ],
)
def test_anything_off_the_whitelist_names_its_step_and_reason(text, step, words):
    with pytest.raises(PipelineError) as info:
        parse(text)
    assert info.value.step == step
    assert words in info.value.reason
    assert f"step {step} `" in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "transpose()",
        "x.transpose()",
        ".transpose(",
        ".transpose() + 1",
        ".transpose();import os",
        "(lambda: 1)()",
        "__import__('os').system('true')",
        ".transpose() if 1 else 2",
    ],
)
def test_text_that_is_not_a_method_chain_is_refused_as_a_whole(text):
    with pytest.raises(PipelineError) as info:
        parse(text)
    assert info.value.step == 0


def test_parsing_never_evaluates(monkeypatch):
    # If anything were evaluated, this call would be made; the parser must refuse first.
    import builtins

    calls = []
    monkeypatch.setattr(builtins, "print", lambda *a, **k: calls.append(a))
    for text in [".view(print(1))", ".slice(s[print(1)])", ".print(1)"]:
        with pytest.raises(PipelineError):
            parse(text)
    assert calls == []


def test_every_registered_op_parses_and_applies():
    text = (
        ".view((3, 4)).slice(s[0:2]).narrow(1, 0, 2).transpose().transpose(0, 1)"
        ".transpose_axes((1, 0)).broadcast((2, 2, 2)).rotate_axis_innermost(0).as_contiguous()"
        ".permute(2, 1, 0).flip((0, 1)).unsqueeze(0).squeeze().expand(3, -1, -1, -1)"
        ".reshape(-1).view((6, -1)).T.mT.contiguous()"
    )
    chain = parse(text)
    assert {step.name for step in chain} == set(names())
    states = apply(chain, Tensor.arange((3, 4)))
    assert len(states) == len(chain) + 1


def test_apply_matches_numpy_on_the_same_chain():
    # Law: the pipeline's tensor reads the same elements NumPy's equivalent view does.
    start = Tensor.arange((3, 4))
    states = apply(parse(".transpose().slice(s[0:2, ::-1]).broadcast((2, 2, 3))"), start)
    expected = np.broadcast_to(np.arange(12).reshape(3, 4).T[0:2, ::-1], (2, 2, 3))
    assert np.array_equal(states[-1].to_numpy(), expected)
    assert states[0] is start and len(states) == 4


def test_apply_names_the_step_that_the_layout_rejects():
    with pytest.raises(PipelineError) as info:
        apply(parse(".transpose().view((12,))"), Tensor.arange((3, 4)))
    assert info.value.step == 2 and info.value.text == ".view((12,))"
    assert "contiguous" in info.value.reason


def test_as_contiguous_copies_and_then_views_work():
    start = Tensor.arange((3, 4))
    states = apply(parse(".transpose().as_contiguous().view((12,))"), start)
    assert states[-1].buffer is not start.buffer
    assert states[-1].tolist() == np.arange(12).reshape(3, 4).T.ravel().tolist()


def test_a_broadcast_too_large_to_draw_is_refused_not_allocated():
    with pytest.raises(PipelineError) as info:
        apply(parse(".broadcast((100000, 100000, 4))"), Tensor.arange((4,)))
    assert "at most" in info.value.reason


PIPELINE_ALPHABET = ".()[]:,- 0123456789s_" + "transpose view slice narrow broadcast axes rotate"


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.text(max_size=60),
        st.text(alphabet=PIPELINE_ALPHABET, max_size=60),
        st.lists(steps, max_size=4).map(format_pipeline).map(lambda t: t[:-1] or t),
    )
)
def test_any_text_parses_or_is_refused_with_a_pipeline_error(text):
    """Whatever is typed: steps that format back to canonical text, or a PipelineError."""
    try:
        parsed = parse(text)
    except PipelineError as exc:
        assert str(exc)  # a message to show
        return
    assert parse(format_pipeline(parsed)) == parsed


@settings(max_examples=150, deadline=None)
@given(st.lists(steps, max_size=4))
def test_applying_any_parsed_chain_gives_states_or_names_the_failing_step(chain):
    """No chain crashes: each step applies, or the error names the first one that cannot."""
    start = Tensor.arange((2, 3, 4))
    try:
        states = apply(chain, start)
    except PipelineError as exc:
        assert 1 <= exc.step <= len(chain)
        assert exc.text == str(chain[exc.step - 1])
        apply(chain[: exc.step - 1], start)  # everything before it applies
        return
    assert len(states) == len(chain) + 1
    for state in states[1:]:  # every state reads the start's buffer or a packed copy of it
        assert set(np.ravel(state.to_numpy()).tolist()) <= set(range(24))
