"""The last few drawings' work, kept for every session of the process.

A class following one lesson draws the same few states, each at every
student's edit. What was worked out for the last few is kept here, by a key
that names everything it depends on, and given again: shared between
sessions, so its arrays are made read-only (:func:`freeze`) and nothing
changes it. Used by :func:`explorer.columns.columns_for`,
:func:`explorer.labels.rows_for` (keyed by the very columns it draws) and the
comparison of kept columns in :mod:`explorer.columns` (by the very pair).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np


class Kept:
    """At most ``size`` values by key, the least recently used dropped first; thread-safe."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        """The value kept for ``key``, now the most recently used; None if none is."""
        with self._lock:
            found = self._values.get(key)
            if found is not None:
                self._values.move_to_end(key)
            return found

    def put(self, key: Hashable, value: Any) -> None:
        """Keep ``value`` for ``key``, dropping the least recently used beyond ``size``."""
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def get_for(self, objects: tuple, key: Hashable = ()) -> Any | None:
        """The value kept for these very ``objects`` (by identity) and ``key``; None if none is."""
        found = self.get((tuple(map(id, objects)), key))
        if found is None or any(a is not b for a, b in zip(found[0], objects, strict=True)):
            return None
        return found[1]

    def put_for(self, objects: tuple, key: Hashable, value: Any) -> None:
        """Keep ``value`` for these very ``objects`` and ``key``.

        For objects that are not hashable, or whose equality costs what is kept:
        the key is their ids, and the objects are held with the value, so while it
        is kept no other object can take one of their ids.
        """
        self.put((tuple(map(id, objects)), key), (objects, value))

    def __len__(self) -> int:
        return len(self._values)


def freeze(sources: Iterable[dict]) -> None:
    """Make every array column of these sources' data read-only."""
    for data in sources:
        for column in data.values():
            if isinstance(column, np.ndarray):
                column.flags.writeable = False
