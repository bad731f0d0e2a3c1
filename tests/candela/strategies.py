"""Hypothesis strategies: random layouts and random operations on them."""

from __future__ import annotations

from hypothesis import strategies as st

from candela import Layout

MAX_ELEMENTS = 240


@st.composite
def shapes(draw, min_rank=1, max_rank=5, max_size=4):
    rank = draw(st.integers(min_rank, max_rank))
    sizes = []
    for _ in range(rank):
        sizes.append(draw(st.integers(0, max_size)))
    # keep the brute-force walks cheap
    total = 1
    for i, n in enumerate(sizes):
        if total * max(n, 1) > MAX_ELEMENTS:
            sizes[i] = 1
        total *= max(sizes[i], 1)
    return tuple(sizes)


@st.composite
def layouts(draw):
    """Contiguous, or any strides (negative and zero) with the offset that keeps positions >= 0."""
    shape = draw(shapes())
    if draw(st.booleans()):
        layout = Layout(shape)
        return layout.with_offset(draw(st.integers(0, 3)))
    stride = tuple(draw(st.integers(-6, 6)) for _ in shape)
    low = sum(min(s * (n - 1), 0) for n, s in zip(shape, stride)) if all(shape) else 0
    return Layout.from_strided(shape, stride, -low + draw(st.integers(0, 3)))


bound = st.one_of(st.none(), st.integers(-6, 6))


@st.composite
def slice_keys(draw, shape):
    rank = len(shape)
    keys = []
    for _ in range(draw(st.integers(0, rank + 1))):
        if draw(st.integers(0, 4)) == 0:
            keys.append(draw(st.integers(-5, 5)))
        elif draw(st.booleans()):
            step = draw(st.one_of(st.none(), st.integers(-3, 3)))
            keys.append(slice(draw(bound), draw(bound), step))
        else:  # bounds inside the axis, in the step's direction
            n = max(shape[len(keys)] if len(keys) < len(shape) else 1, 1)
            a, b = sorted(draw(st.lists(st.integers(0, n), min_size=2, max_size=2)))
            step = draw(st.sampled_from([None, 1, 2, 3, -1, -2]))
            keys.append(
                slice(a, b, step)
                if (step or 1) > 0
                else slice(min(b, n - 1), a - 1 if a else None, step)
            )
    return tuple(keys)


@st.composite
def broadcast_targets(draw, shape):
    """Mostly valid targets (prepend axes, grow size-1 axes), sometimes not."""
    target = list(shape)
    for i, n in enumerate(target):
        if n == 1 and draw(st.booleans()):
            target[i] = draw(st.integers(0, 3))
        elif draw(st.integers(0, 9)) == 0:
            target[i] = draw(st.integers(0, 4))
    lead = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2)))]
    if draw(st.integers(0, 9)) == 0 and target:
        target = target[1:]  # fewer axes than the source
    out = tuple(lead + target)
    total = 1
    for n in out:
        total *= max(n, 1)
    return out if out and total <= 4 * 240 else tuple(shape)


KINDS = [
    "view",
    "slice",
    "narrow",
    "transpose",
    "transpose2",
    "transpose_axes",
    "broadcast",
    "rotate",
    # NumPy's and PyTorch's words
    "view_infer",
    "reshape",
    "permute",
    "flip",
    "unsqueeze",
    "squeeze",
    "expand",
    "T",
    "mT",
    # every spelling, and the strided tricks
    "transpose_np",
    "swapaxes",
    "moveaxis",
    "movedim",
    "select",
    "flatten",
    "ravel",
    "diagonal",
    "unfold",
    "unflatten",
    "as_strided",
    "subscript",
]


@st.composite
def operations(draw, layout: Layout, kind=None):
    """One operation as ``(name, args)`` for a layout, valid or not; `kind` picks one."""
    rank = layout.rank
    axis = st.integers(-rank - 1, rank)
    name = kind or draw(st.sampled_from(KINDS))
    if name == "view":
        if draw(st.booleans()):
            shape = draw(shapes(max_rank=4))
        else:  # a factorisation of the same count, so the count check passes
            n = layout.len
            shape = tuple(draw(st.permutations([d for d in _factors(n)]))) if n > 1 else (n,)
        return "view", (shape,)
    if name == "slice":
        return "slice", (draw(slice_keys(layout.shape)),)
    if name == "narrow":
        if draw(st.integers(0, 3)) and max(layout.shape) > 0:
            dim = draw(st.sampled_from([d for d in range(rank) if layout.shape[d] > 0]))
            n = layout.shape[dim]
            start = draw(st.integers(-n, n - 1))
            room = n - (start % n)
            return "narrow", (dim - rank * draw(st.booleans()), start, draw(st.integers(1, room)))
        return "narrow", (draw(axis), draw(st.integers(-3, 4)), draw(st.integers(0, 4)))
    if name == "transpose":
        return "transpose", ()
    if name == "transpose2":
        return "transpose", (draw(axis), draw(axis))
    if name == "transpose_axes":
        if draw(st.integers(0, 4)):
            perm = tuple(draw(st.permutations(range(rank))))
            perm = tuple(p - rank if draw(st.booleans()) else p for p in perm)
        else:
            perm = tuple(draw(st.lists(axis, min_size=max(rank - 1, 0), max_size=rank + 1)))
        return "transpose_axes", (perm,)
    if name == "broadcast":
        return "broadcast", (draw(broadcast_targets(layout.shape)),)
    if name == "rotate":
        return "rotate_axis_innermost", (draw(axis),)
    if name in ("view_infer", "reshape"):
        _, (shape,) = draw(operations(layout, "view"))
        if draw(st.integers(0, 5)):  # one size (or, rarely, two) becomes -1
            k = draw(st.integers(0, len(shape) - 1))
            shape = shape[:k] + (-1,) + shape[k + 1 :]
            if draw(st.integers(0, 9)) == 0:
                shape = (-1, *shape)
        name = "view" if name == "view_infer" else name
        if len(shape) > 1 and draw(st.booleans()):
            return name, tuple(shape)  # separate sizes: view(2, -1)
        return name, (shape if len(shape) > 1 or draw(st.booleans()) else shape[0],)
    if name == "permute":
        _, (perm,) = draw(operations(layout, "transpose_axes"))
        # both spellings: permute(1, 0) and permute((1, 0))
        return "permute", (perm if draw(st.booleans()) else (perm,))
    if name == "flip":
        if draw(st.integers(0, 5)) == 0:
            return "flip", draw(st.sampled_from([(), (None,)]))
        axes = draw(st.lists(axis, max_size=rank + 1))
        if len(axes) == 1 and draw(st.booleans()):
            return "flip", (axes[0],)
        if len(axes) > 1 and draw(st.booleans()):
            return "flip", tuple(axes)  # flip(0, 1)
        return "flip", (tuple(axes),)
    if name == "unsqueeze":
        return "unsqueeze", (draw(st.integers(-rank - 2, rank + 1)),)
    if name == "squeeze":
        if draw(st.integers(0, 3)) == 0:
            return "squeeze", ()
        ones = [d for d, n in enumerate(layout.shape) if n == 1]
        if ones and draw(st.integers(0, 3)):
            axes = draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
        else:
            axes = draw(st.lists(axis, max_size=rank))
        axes = [a - rank if a >= 0 and draw(st.booleans()) else a for a in axes]
        return "squeeze", (axes[0] if len(axes) == 1 and draw(st.booleans()) else tuple(axes),)
    if name == "expand":
        target = list(draw(broadcast_targets(layout.shape)))
        extra = len(target) - rank
        for i in range(len(target)):
            # -1 keeps the size of an existing axis (and is refused on a new leading one)
            if (i >= extra or draw(st.integers(0, 9)) == 0) and draw(st.integers(0, 2)) == 0:
                target[i] = -1
        return "expand", (tuple(target),) if draw(st.booleans()) else tuple(target)
    if name == "transpose_np":  # NumPy's permutation, either spelling
        _, (perm,) = draw(operations(layout, "transpose_axes"))
        return "transpose", (perm if draw(st.booleans()) else (perm,))
    if name == "swapaxes":
        return "swapaxes", (draw(axis), draw(axis))
    if name in ("moveaxis", "movedim"):
        if draw(st.booleans()):
            return name, (draw(axis), draw(axis))
        k = draw(st.integers(0, rank))
        src = tuple(draw(st.lists(axis, min_size=k, max_size=k)))
        if draw(st.integers(0, 3)):  # mostly distinct, in range, of the same length
            src = tuple(draw(st.permutations(range(rank))))[:k]
            dst = tuple(draw(st.permutations(range(rank))))[:k]
        else:
            dst = tuple(draw(st.lists(axis, min_size=max(k - 1, 0), max_size=k + 1)))
        return name, (src, dst)
    if name == "select":
        dim = draw(axis)
        n = layout.shape[dim] if -rank <= dim < rank else 1
        return "select", (dim, draw(st.integers(-n - 1, n)))
    if name == "flatten":
        if draw(st.integers(0, 2)) == 0:
            return "flatten", ()
        return "flatten", (draw(axis), draw(axis))
    if name == "ravel":
        return "ravel", ()
    if name == "diagonal":
        if draw(st.integers(0, 3)) == 0:
            return "diagonal", ()
        return "diagonal", (draw(st.integers(-5, 5)), draw(axis), draw(axis))
    if name == "unflatten":
        dim = draw(axis)
        n = layout.shape[dim] if -rank <= dim < rank else 4
        if draw(st.integers(0, 3)) and n > 0:  # a factorisation, maybe with one -1
            sizes = list(draw(st.permutations(_factors(n)))) or [1]
            sizes.insert(draw(st.integers(0, len(sizes))), 1) if draw(st.booleans()) else None
            if draw(st.booleans()):
                sizes[draw(st.integers(0, len(sizes) - 1))] = -1
        else:
            sizes = draw(st.lists(st.integers(-2, 4), min_size=1, max_size=3))
        return "unflatten", (dim, tuple(sizes))
    if name == "unfold":
        dim = draw(axis)
        n = layout.shape[dim] if -rank <= dim < rank else 2
        return "unfold", (dim, draw(st.integers(-1, n + 1)), draw(st.integers(-1, 4)))
    if name == "as_strided":
        # Positions stay within what the layout reaches (so within its NumPy base),
        # or go below 0 (refused).
        limit = max(_highest_position(layout), 0)  # an empty layout may carry offset -1
        shape = draw(shapes(max_rank=3))
        stride = tuple(draw(st.integers(-3, 3)) for _ in shape)
        offset = draw(st.one_of(st.none(), st.integers(0, limit)))
        start = layout.offset if offset is None else offset
        reach = sum(max(s * (n - 1), 0) for n, s in zip(shape, stride)) if all(shape) else 0
        if start + reach > limit:
            shape = tuple(1 for _ in shape)  # reaches only the start
        return "as_strided", (shape, stride, offset) if offset is not None else (shape, stride)
    if name == "subscript":
        return "subscript", (draw(subscript_keys(rank)),)
    return name, ()  # "T" and "mT": properties


def _highest_position(layout: Layout) -> int:
    if layout.len == 0:
        return layout.offset
    return layout.offset + sum(max(s * (n - 1), 0) for n, s in zip(layout.shape, layout.stride))


@st.composite
def subscript_keys(draw, rank):
    """NumPy subscripts: ints, slices (any bounds, steps), None, and `...` (rarely two)."""
    item = st.one_of(
        st.integers(-5, 5),
        st.builds(slice, bound, bound, st.one_of(st.none(), st.integers(-3, 3))),
        st.none(),
        st.just(Ellipsis),
    )
    keys = draw(st.lists(item, max_size=rank + 2))
    if keys.count(Ellipsis) > 1 and draw(st.integers(0, 4)):
        first = keys.index(Ellipsis)
        keys = keys[: first + 1] + [k for k in keys[first + 1 :] if k is not Ellipsis]
    return tuple(keys) if len(keys) != 1 or draw(st.booleans()) else keys[0]


def _factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out
