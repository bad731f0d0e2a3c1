"""What is kept for every session: the least recently used goes first, never more than its size."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.kept import Kept, freeze

OPS = st.lists(st.tuples(st.sampled_from(["get", "put"]), st.integers(0, 6)), max_size=60)


@given(size=st.integers(1, 5), ops=OPS)
def test_kept_is_a_least_recently_used_cache(size, ops):
    # The law, against a plain list of (key, value), most recently used last.
    kept, model = Kept(size), []
    for n, (op, key) in enumerate(ops):
        held = dict(model)
        if op == "get":
            assert kept.get(key) == held.get(key)
            if key in held:
                model.remove((key, held[key]))
                model.append((key, held[key]))
        else:
            kept.put(key, n)
            model = [(k, v) for k, v in model if k != key] + [(key, n)]
            model = model[-size:]
        assert len(kept) == len(model) <= size
    assert all(kept.get(k) == v for k, v in model)


def test_kept_holds_its_size_under_threads():
    kept = Kept(8)

    def work(start):
        for n in range(2000):
            kept.put((start + n) % 50, n)
            kept.get((start * 7 + n) % 50)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(kept) == 8


def test_freeze_makes_every_array_column_read_only_and_leaves_the_rest():
    sources = [{"a": np.arange(3), "b": [1, 2]}, {"c": np.zeros(2)}]
    freeze(sources)
    for column in (sources[0]["a"], sources[1]["c"]):
        with pytest.raises(ValueError):
            column[0] = 5
    sources[0]["b"][0] = 9  # a list is the caller's


@given(
    size=st.integers(1, 4), ops=st.lists(st.tuples(st.booleans(), st.integers(0, 5)), max_size=40)
)
def test_kept_for_objects_answers_only_for_those_very_objects(size, ops):
    # Equal objects are not the same objects: a value kept for one list of rows is never
    # given for an equal copy (it may change, or be a different drawing's).
    import weakref

    class Rows(list):  # a list that a weak reference can name
        pass

    kept, made, model = Kept(size), {}, []
    for put, n in ops:
        obj = made.setdefault(n, Rows([n % 2]))  # half of them equal to one another
        twin = Rows(list(obj))
        if put:
            kept.put_for((obj,), "k", n)
            model = [(o, v) for o, v in model if o is not obj] + [(obj, n)]
            model = model[-size:]
        expected = next((v for o, v in model if o is obj), None)
        assert kept.get_for((obj,), "k") == expected
        model = [(o, v) for o, v in model if o is not obj] + [(o, v) for o, v in model if o is obj]
        assert kept.get_for((obj,), "other key") is None
        assert kept.get_for((twin,), "k") is None
    # what is kept holds its objects: none is freed (and its id given to another) meanwhile
    refs = [weakref.ref(o) for o, _ in model]
    made.clear()
    model = [v for _, v in model]
    assert all(r() is not None for r in refs)
