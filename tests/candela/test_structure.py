"""How candela is built: `Layout` holds the algebra, `candela.words` names each word once.

`Layout` stays small (its code, not its docstrings, is counted), every word of
NumPy and PyTorch lives in the `Words` mixin only, and a word means the same on
a `Layout` and on a `Tensor`: over random layouts, a tensor's word gives the
layout the bare layout's word gives, over the same buffer, or the same refusal.
"""

from __future__ import annotations

import ast
import inspect
import io
import tokenize
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import candela
from candela import Layout, NonContiguousView, OpError, Tensor
from candela.words import Words

from .oracle import as_numpy
from .strategies import KINDS, layouts, operations
from .test_oracle import call

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

LAYOUT_CODE_LINES = 300
# The words a Tensor says differently: it copies where no strides can say the result
# (reshape, flatten), and it refuses positions outside its own buffer (as_strided).
TENSOR_OVERRIDES = {"reshape", "flatten", "as_strided"}


def code_lines(path: Path, name: str) -> int:
    """Lines of class `name` in `path` holding code: not blank, not comments, not docstrings."""
    source = path.read_text()
    cls = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == name)
    docstrings: set[int] = set()
    for node in ast.walk(cls):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    docstrings.update(range(first.lineno, first.end_lineno + 1))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in skip or token.type == tokenize.ENDMARKER:
            continue
        for line in range(token.start[0], token.end[0] + 1):
            if cls.lineno <= line <= cls.end_lineno and line not in docstrings:
                lines.add(line)
    return len(lines)


def words() -> dict[str, object]:
    """The public names the mixin defines, each with what it is bound to."""
    return {k: v for k, v in vars(Words).items() if not k.startswith("_")}


def own_name(value: object) -> str | None:
    """The name a function or property was written under (an alias keeps its target's)."""
    function = value.fget if isinstance(value, property) else value
    return getattr(function, "__name__", None)


def test_layout_holds_the_algebra_in_at_most_300_lines_of_code():
    path = Path(inspect.getfile(Layout))
    assert code_lines(path, "Layout") <= LAYOUT_CODE_LINES


def test_the_line_count_skips_docstrings_comments_and_blank_lines(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        'class C:\n    """Doc.\n\n    >>> 1\n    1\n    """\n\n    # why\n'
        '    def f(self):\n        """Doc."""\n        return (\n            1\n        )\n'
    )
    assert code_lines(source, "C") == 5  # class, def, and the three lines of the return


def test_each_word_is_named_in_one_place():
    for name in words():
        assert name not in vars(Layout), f"Layout declares the word {name!r} again"
        if name not in TENSOR_OVERRIDES:
            assert name not in vars(Tensor), f"Tensor declares the word {name!r} again"
        assert getattr(Layout, name) is getattr(Words, name)
    for name in TENSOR_OVERRIDES:
        assert name in words() and name in vars(Tensor)


def test_another_name_for_a_word_is_that_word():
    # `movedim = moveaxis`: an alias is the very function, so it cannot drift from it.
    for name, value in words().items():
        target = own_name(value)
        if target is not None and target != name and not target.startswith("<"):
            assert words()[target] is value, f"{name} is not exactly {target}"


# The strategy kind that draws each word's arguments, by the name it was written under.
FIELDS = {"dims": "shape", "elem_count": "len"}  # seed 003's names for two fields
COVERED = [name for name in words() if name not in FIELDS]


def test_every_word_has_a_law():
    for name in COVERED:
        assert own_name(words()[name]) in KINDS, f"no strategy draws arguments for {name!r}"


@SETTINGS
@given(layouts())
def test_seed_003_field_names_are_the_fields(layout):
    tensor = Tensor(as_numpy(layout)[0], layout)
    for name, field in FIELDS.items():
        assert getattr(layout, name) == getattr(layout, field) == getattr(tensor, name)


@SETTINGS
@given(layouts(), st.data())
def test_a_word_gives_a_tensor_the_layout_it_gives_a_layout(layout, data):
    name = data.draw(st.sampled_from(COVERED))
    _, args = data.draw(operations(layout, own_name(words()[name])))
    base, _ = as_numpy(layout)
    tensor = Tensor(base, layout)
    try:
        expected = call(layout, name, args)
    except OpError as error:
        if isinstance(error, NonContiguousView) and name in ("reshape", "flatten", "ravel"):
            # a tensor takes NumPy's wider rule (a view where strides can say it), else copies
            got = call(tensor, name, args)
            assert got.tolist() == np.reshape(tensor.to_numpy(), got.shape).tolist()
            copied = not np.shares_memory(got.buffer, base) and got.layout == Layout(got.shape)
            assert got.buffer is base or copied
            return
        with pytest.raises(type(error)) as refused:
            call(tensor, name, args)
        if name not in TENSOR_OVERRIDES:
            assert str(refused.value) == str(error)  # the same words say the same thing
        return
    got = call(tensor, name, args)
    assert got.buffer is base and got.layout == expected


def test_the_words_are_in_the_import_surface_on_both_classes():
    t = Tensor.arange((2, 3, 4))
    for name in words():
        assert hasattr(candela.Layout((2, 3, 4)), name) and hasattr(t, name)
