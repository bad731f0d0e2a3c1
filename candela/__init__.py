"""candela: an exact tensor-layout library.

A `Layout` says how a tensor's logical shape maps onto a flat buffer: shape,
stride, the `adj_stride` iteration trick, offset and len. Views, slices,
transposes, axis permutations and broadcasts are new layouts over the same
buffer. A `Tensor` pairs a NumPy buffer with a layout so layouts address real
values. NumPy's and PyTorch's words (reshape, permute, flip, unsqueeze,
squeeze, expand, T, mT, swapaxes, moveaxis/movedim, select, flatten/ravel,
diagonal, unfold, as_strided, and `subscript` for NumPy's ``a[...]``; and a
tensor's contiguous) are there too, taking a shape or axes either way
(``reshape(2, 6)`` or ``reshape((2, 6))``), and every number a layout holds is
exact: one outside int64 is refused where the layout is built.

`Layout` holds the algebra (`candela.layout`); the words are written once,
over it, in `candela.words`, and `Layout` and `Tensor` both inherit them.
candela depends on NumPy alone.

>>> from candela import Layout, s
>>> Layout((3, 4)).transpose().slice(s[1:, ::-1])
Layout(shape=(3, 3), stride=(1, -4), adj_stride=(9, -4), offset=9, len=9)
>>> Layout((3, 4)).T.flip(1) == Layout((3, 4)).transpose().slice(s[:, ::-1])
True
"""

from .cost import Cost
from .errors import (
    AxesOutOfBounds,
    CannotBroadcast,
    IndexOutOfBounds,
    InvalidShape,
    InvalidViewShape,
    NonContiguousView,
    NotEnoughAxes,
    OpError,
    RepeatedAxes,
    SliceOutOfBounds,
    ZeroRankShape,
)
from .layout import Layout, Step
from .slicing import SliceRange, format_ranges, s
from .tensor import Tensor

__all__ = [
    "Layout",
    "Tensor",
    "Cost",
    "Step",
    "SliceRange",
    "s",
    "format_ranges",
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

__version__ = "0.1.0"
