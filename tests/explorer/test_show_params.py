"""Every public parameter of an explorer made by ``explorer.show`` applies, or says why not.

``show(x)`` draws ``x`` whatever ``shape`` says, so a new shape (or a lesson,
which starts from its own shapes) cannot apply: it raises a ``ValueError``
that says so, and nothing changes. Everything else updates the explorer.
"""

from __future__ import annotations

import numpy as np
import pytest

import explorer
from candela import Tensor


@pytest.fixture
def ex():
    return explorer.show(np.arange(12, dtype=np.float32).reshape(3, 4).T)


def test_a_new_shape_raises_and_changes_nothing(ex):
    before = (ex.shape, ex.layout, ex.editor.shape_input.value)
    with pytest.raises(ValueError, match=r"NumPy array of shape \(4, 3\).*cannot become \(9, 9\)"):
        ex.shape = (9, 9)
    with pytest.raises(ValueError, match="cannot become '9,9'"):
        ex.shape = "9,9"
    assert (ex.shape, ex.layout, ex.editor.shape_input.value) == before
    ex.shape = "4, 3"  # its own shape, written another way: fine
    assert ex.layout == before[1] and ex.error is None


def test_show_with_a_shape_that_is_not_the_arrays_raises():
    x = np.zeros((3, 4), dtype=np.int8)
    with pytest.raises(ValueError, match="cannot become"):
        explorer.show(x, shape=(2, 6))
    assert explorer.show(x, shape=(3, 4)).layout.shape == (3, 4)


def test_a_lesson_raises_and_changes_nothing(ex):
    with pytest.raises(ValueError, match="a lesson starts from its own shapes"):
        ex.lesson = "transpose"
    assert ex.lesson == "" and ex.layout.shape == (4, 3)
    with pytest.raises(ValueError, match="lesson"):
        explorer.show(np.zeros(3), lesson="transpose")


def test_ops_unit_presenter_and_start_update_the_drawing(ex):
    t = Tensor.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4).T)
    ex.ops = ".transpose()"
    assert ex.layout == t.transpose().layout and ex.editor.ops_input.value == ".transpose()"
    ex.unit = "elements"
    assert 'class="candela-stride">(4, 1)<' in ex.fields_pane.object
    ex.presenter = True
    assert ex.figures.scale > 1
    ex.ops = ""
    ex.start = Tensor.arange((2, 5))
    assert ex.layout.shape == (2, 5) and ex.shape == (2, 5)
    assert ex.editor.shape_input.value == "2,5"


def test_a_plain_explorer_is_not_restricted():
    ex = explorer.Explorer(shape=(3, 4))
    ex.shape = (9, 9)
    assert ex.layout.shape == (9, 9)
    assert isinstance(explorer.show(np.zeros(2)), explorer.Explorer)
