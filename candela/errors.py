"""The errors every candela operation can raise.

`OpError` is the base class. Each error also derives from the built-in a
Python user would expect (``ValueError`` for a bad value, ``IndexError`` for
an axis or index out of range), carries the offending values as attributes,
and names them in its message. This module sits at the bottom of the import
graph: it imports nothing from candela.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "OpError",
    "ZeroRankShape",
    "InvalidShape",
    "InvalidViewShape",
    "NonContiguousView",
    "CannotBroadcast",
    "NotEnoughAxes",
    "AxesOutOfBounds",
    "RepeatedAxes",
    "SliceOutOfBounds",
    "IndexOutOfBounds",
]


class OpError(Exception):
    """Base class of every error a layout operation raises.

    The keyword arguments become attributes, so code can read the values the
    error complains about:

    >>> e = InvalidViewShape("cannot view 6 elements as (4, 4)", shape=(4, 4), elements=6)
    >>> e.shape, e.elements, isinstance(e, ValueError)
    ((4, 4), 6, True)
    """

    def __init__(self, message: str, **values: Any) -> None:
        super().__init__(message)
        self.message = message
        self.values = values
        for name, value in values.items():
            setattr(self, name, value)

    def __str__(self) -> str:
        return self.message


class ZeroRankShape(OpError, ValueError):
    """A shape with no axes: a layout has rank >= 1."""


class InvalidShape(OpError, ValueError):
    """A negative or non-integer size, a stride of another rank, a bad offset."""


class InvalidViewShape(OpError, ValueError):
    """A view whose element count differs from the layout's."""


class NonContiguousView(OpError, ValueError):
    """A view of a layout that is not contiguous."""


class CannotBroadcast(OpError, ValueError):
    """A broadcast target that NumPy's right-aligned rules reject."""


class NotEnoughAxes(OpError, ValueError):
    """Axes or an index of the wrong length."""


class AxesOutOfBounds(OpError, IndexError):
    """An axis out of range, or repeated where each must appear once."""


class SliceOutOfBounds(OpError, IndexError):
    """A slice range that is empty, has step 0, or runs past its axis."""


class IndexOutOfBounds(OpError, IndexError):
    """An index past its axis."""


class RepeatedAxes(AxesOutOfBounds):
    """An axis named more than once where each may appear once (also an `AxesOutOfBounds`)."""
