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
