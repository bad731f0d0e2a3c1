"""Their code out: the pipeline as NumPy and PyTorch code that makes the same view.

Law: running `numpy_code` gives `y` with the explorer's shape, strides, offset
and values (a copy exactly where the explorer copies), for every op in the
registry and for random chains of them. `torch_code` runs where PyTorch is
installed and gives the same shape and values.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from candela import Tensor
from explorer.code import numpy_code, torch_code
from explorer.ops import REGISTRY, names
from explorer.state import Result, StateError, evaluate

HAS_TORCH = importlib.util.find_spec("torch") is not None


def _run(code: str) -> dict:
    scope: dict = {}
    exec(compile(code, "<snippet>", "exec"), scope)  # code generated here, never typed
    return scope


def _owner(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def assert_numpy_makes_it(result: Result) -> None:
    code = numpy_code(result)
    scope = _run(code)
    x, y = scope["x"], scope["y"]
    got = result.tensor
    assert y.shape == got.shape, code
    assert np.asarray(y).tolist() == got.tolist() if result.states[0].len == x.size else True
    start = result.states[0]
    copied = got.buffer is not start.buffer
    shares = np.shares_memory(y, x) or (y.size == 0 and not copied)
    if got.len == 0:
        return
    # values are buffer positions of the start, so compare them through the start
    assert y.ravel().tolist() == got.to_numpy().ravel().tolist(), code
    if not copied:
        assert shares, code
        base = _owner(x)
        offset = (y.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // 8
        assert offset == got.offset, code
        for n, mine, theirs in zip(got.shape, got.stride, y.strides):
            assert n < 2 or mine * 8 == theirs, code
    elif not np.shares_memory(got.buffer, start.buffer):
        assert not np.shares_memory(y, x), code  # NumPy copied where the explorer copied


def _defaults(op: str) -> str:
    spec = REGISTRY[op]
    return spec.call_text([a.default for a in spec.args])


@pytest.mark.parametrize("op", names())
def test_numpy_code_makes_the_explorers_view_for_every_op(op):
    result = evaluate((3, 4), _defaults(op))
    code = numpy_code(result)
    assert code.startswith("import numpy as np") and "\nx = " in code and "\ny = " in code
    assert_numpy_makes_it(result)


def _step_texts(rank: int):
    i = st.integers(-rank - 1, rank + 1)
    small = st.integers(-3, 4)
    axes = st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=rank).map(
        lambda a: ", ".join(map(str, a))
    )
    bound = st.none() | st.integers(-4, 4)
    item = st.one_of(
        st.integers(-3, 3).map(str),
        st.builds(
            lambda a, b, c: (
                f"{'' if a is None else a}:{'' if b is None else b}"
                + ("" if c is None else f":{c}")
            ),
            bound,
            bound,
            st.none() | st.sampled_from([-2, -1, 1, 2]),
        ),
        st.just("None"),
        st.just("..."),
    )
    key = st.lists(item, min_size=1, max_size=rank + 1).map(", ".join)
    return st.one_of(
        st.just(".T"),
        st.just(".mT"),
        st.just(".transpose()"),
        axes.map(lambda a: f".transpose({a})"),
        axes.map(lambda a: f".permute({a})"),
        axes.map(lambda a: f".flip({a})"),
        key.map(lambda k: f"[{k}]"),
        key.map(lambda k: f".slice(s[{k}])"),
        st.tuples(i, i).map(lambda a: f".swapaxes({a[0]}, {a[1]})"),
        st.tuples(i, i).map(lambda a: f".moveaxis({a[0]}, {a[1]})"),
        st.tuples(i, i).map(lambda a: f".movedim({a[0]}, {a[1]})"),
        st.tuples(i, small).map(lambda a: f".select({a[0]}, {a[1]})"),
        st.tuples(i, small, small).map(lambda a: f".narrow({a[0]}, {a[1]}, {a[2]})"),
        st.tuples(i, small, small).map(lambda a: f".unfold({a[0]}, {a[1]}, {a[2]})"),
        st.tuples(small, i, i).map(lambda a: f".diagonal({a[0]}, {a[1]}, {a[2]})"),
        st.just(".flatten()"),
        st.tuples(i, i).map(lambda a: f".flatten({a[0]}, {a[1]})"),
        st.just(".ravel()"),
        st.sampled_from(["C", "F", "A"]).map(lambda o: f".ravel(order='{o}')"),
        st.tuples(i, st.sampled_from(["(1, -1)", "(-1, 1)", "(1, 1, -1)"])).map(
            lambda a: f".unflatten({a[0]}, {a[1]})"
        ),
        st.just(".view()"),
        i.map(lambda a: f".squeeze({a})"),  # PyTorch's: an axis of another size stays
        st.just(".mH"),
        st.just(".reshape(-1)"),
        st.just(".view(-1)"),
        i.map(lambda a: f".unsqueeze({a})"),
        st.just(".squeeze()"),
        st.just(".expand(2, *(-1,))".replace("*(-1,)", ", ".join(["-1"] * rank))),
        st.just(".broadcast(shape)"),  # (2, *shape): filled in by the caller
        i.map(lambda a: f".rotate_axis_innermost({a})"),
        st.just(".contiguous()"),
        st.just(".as_contiguous()"),
        st.tuples(small, small, st.integers(0, 3)).map(
            lambda a: f".as_strided(({abs(a[0])}, 2), ({a[1]}, 1), {a[2]})"
        ),
        st.tuples(small, small).map(lambda a: f".as_strided(({abs(a[0])}, 2), ({a[1]}, 1))"),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_numpy_code_makes_the_explorers_view_for_random_chains(data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    ops, result = "", evaluate(shape, "")
    for _ in range(data.draw(st.integers(1, 5))):
        text = data.draw(_step_texts(result.layout.rank))
        text = text.replace("shape", str((2, *result.layout.shape)))
        try:
            result = evaluate(shape, ops + text)
        except StateError:
            continue
        ops += text
    assert_numpy_makes_it(result)


def test_numpy_code_starts_from_a_given_tensors_own_layout():
    a = np.arange(20).reshape(4, 5)
    start = Tensor.from_numpy(a[1:, ::-2])
    result = evaluate(None, ".T[1:]", start=start)
    code = numpy_code(result)
    assert "as_strided(buf[9:]" in code
    scope = _run(code)
    assert scope["y"].tolist() == a[1:, ::-2].T[1:].tolist()  # values are positions here


#: Chains where a view's buffer is not what it seems: a contiguous() that copies nothing,
#: a flip (a copy in PyTorch) or a copy of one before an as_strided that counts from the buffer.
BUFFER_CHAINS = [
    "[1:].contiguous().as_strided((2, 2), (1, 1), 0)",
    "[1:].contiguous().as_strided((2, 2), (1, 1))",
    ".flip(0).as_strided((2, 2), (1, 1))",
    ".flip(0).as_strided((2, 2), (1, 1), 0)",
    "[..., ::-1].as_strided((2, 2), (1, 1))",
    ".flip(1).contiguous()[::-1].as_strided((2, 2), (1, 1))",
    "[::-1][1:].contiguous().as_strided((2, 2), (1, 1), 0)",
    "[1:, ::-1].contiguous().as_strided((2, 2), (1, 1), 1)",
    ".T.contiguous()[1:].as_strided((2, 2), (1, 1), 0)",
]


@pytest.mark.parametrize("ops", BUFFER_CHAINS)
def test_numpy_code_counts_as_strided_from_the_buffer_the_explorer_reads(ops):
    assert_numpy_makes_it(evaluate((3, 4), ops))


@pytest.mark.skipif(not HAS_TORCH, reason="PyTorch is not installed")
def test_torch_code_starts_from_a_given_tensors_own_layout_negative_strides_too():
    a = np.arange(20).reshape(4, 5)
    result = evaluate(None, ".T[1:].as_strided((2, 2), (-1, 1), 3)", start=Tensor.from_numpy(a))
    y = _run(torch_code(result))["y"]
    assert y.tolist() == result.tensor.tolist(), torch_code(result)
    result = evaluate(None, ".T[1:]", start=Tensor.from_numpy(a[1:, ::-2]))
    y = _run(torch_code(result))["y"]  # PyTorch's as_strided takes no negative stride
    assert y.tolist() == a[1:, ::-2].T[1:].tolist(), torch_code(result)


@pytest.mark.skipif(not HAS_TORCH, reason="PyTorch is not installed")
@pytest.mark.parametrize("ops", BUFFER_CHAINS)
def test_torch_code_counts_as_strided_from_the_buffer_the_explorer_reads(ops):
    result = evaluate((3, 4), ops)
    y = _run(torch_code(result))["y"]
    assert y.tolist() == result.tensor.tolist(), torch_code(result)


@pytest.mark.parametrize(
    ("ops", "line"),
    [
        ("[::-1]", "y = x.flip(0)"),
        ("[1:, ::-2]", "y = x.flip(1)[1:, ::2]"),
        ("[:2, ::-1]", "y = x.flip(1)[:2]"),
        ("[::-1, 1]", "y = x.flip(0)[:, 1]"),
        (".T[::2]", "y = x.T[::2]"),
    ],
)
def test_torch_code_writes_a_negative_step_as_a_flip_and_what_a_person_would_type(ops, line):
    assert torch_code(evaluate((3, 4), ops)).splitlines()[-1] == line


@pytest.mark.skipif(not HAS_TORCH, reason="PyTorch is not installed")
@pytest.mark.parametrize("op", names())
def test_torch_code_makes_the_explorers_values_for_every_op(op):
    result = evaluate((3, 4), _defaults(op))
    code = torch_code(result)
    y = _run(code)["y"]
    assert tuple(y.shape) == result.tensor.shape, code
    assert y.tolist() == result.tensor.tolist(), code


@pytest.mark.skipif(not HAS_TORCH, reason="PyTorch is not installed")
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_torch_code_makes_the_explorers_values_for_random_chains(data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    ops, result = "", evaluate(shape, "")
    for _ in range(data.draw(st.integers(1, 4))):
        text = data.draw(_step_texts(result.layout.rank))
        text = text.replace("shape", str((2, *result.layout.shape)))
        try:
            result = evaluate(shape, ops + text)
        except StateError:
            continue
        ops += text
    code = torch_code(result)
    y = _run(code)["y"]
    assert tuple(y.shape) == result.tensor.shape, code
    assert y.tolist() == result.tensor.tolist(), code


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_torch_code_typed_back_as_a_pipeline_reads_what_the_explorer_read(data):
    """Their code in again: PyTorch's line for y, typed as the pipeline, is the same view."""
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    ops, result = "", evaluate(shape, "")
    for _ in range(data.draw(st.integers(1, 4))):
        text = data.draw(_step_texts(result.layout.rank))
        text = text.replace("shape", str((2, *result.layout.shape)))
        try:
            result = evaluate(shape, ops + text)
        except StateError:
            continue
        ops += text
    lines = torch_code(result).splitlines()
    if any(line.startswith("c") for line in lines):
        return  # a copy has a line of its own: not one pipeline
    again = evaluate(shape, lines[-1].removeprefix("y = "))
    assert again.tensor.shape == result.tensor.shape, lines[-1]
    assert again.tensor.tolist() == result.tensor.tolist(), lines[-1]
