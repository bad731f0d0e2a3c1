"""The pipeline: a chain of Layout derivations written as Python method-chain text.

A pipeline is what follows ``x`` in NumPy or PyTorch code: method calls in
either library's spelling and Python subscripts with NumPy's meaning, such as
``.T[::2].reshape(-1)`` or ``.transpose().slice(s[0:2, ::-1]).broadcast((2, 4, 2))``
(a leading ``x`` is allowed, so text pasted from a notebook works). It is
parsed with :mod:`ast` and checked against the whitelist of :data:`ops.REGISTRY`,
whose arguments must be literal integers, tuples or lists of integers,
``s[...]`` subscripts, or (in ``[...]``) integers, slices, ``None`` and ``...``.
Nothing typed is ever evaluated: the text becomes a list of :class:`Step`
values, each keeping the text the user wrote for it (the step list and every
message show that spelling), applied one by one to a starting tensor. Every
error names the step number, the step's text and the reason.

>>> steps = parse(".transpose().slice(s[0:2, ::-1])")
>>> [step.name for step in steps]
['transpose', 'slice']
>>> format_pipeline(parse("x.flip(0)[1:, None]"))
'.flip(0)[1:, None]'
"""

from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from candela.slicing import format_subscript

from .ops import REGISTRY, find, suggestion

if TYPE_CHECKING:  # candela is imported lazily so parsing needs nothing but the stdlib
    from candela import Tensor

# One item of a subscript: an integer, a slice, and (in ``[...]`` only) None or ``...``.
SliceItem = int | slice | None | type(Ellipsis)

#: The largest number of elements a state may have, and of cells its buffer may have:
#: 2**59. A layout costs nothing to hold whatever its size, and a tensor too large to
#: draw cell by cell is drawn as an overview in bounded time and memory
#: (:func:`explorer.columns.binned_reads`), but its element numbers, its buffer positions
#: and its buffer's bytes (8 a cell) are NumPy's 64-bit integers, with room to add two.
MAX_ELEMENTS = 1 << 59
#: How :data:`MAX_ELEMENTS` is named in messages, with its reason.
MAX_ELEMENTS_TEXT = f"{MAX_ELEMENTS:,} (2**59, counted in 64-bit integers)"
#: The largest number of elements a step may copy into a new buffer (``as_contiguous``,
#: a ``reshape`` strides cannot say): a copy is memory, 8 bytes an element.
MAX_COPY = 1 << 22
#: The most axes a state may have: the page draws up to this many.
MAX_RANK = 8


class PipelineError(ValueError):
    """A pipeline that cannot be parsed or applied.

    ``step`` is the 1-based step number (0 when the text as a whole is wrong),
    ``text`` the step's text and ``reason`` what is wrong with it.
    """

    def __init__(self, step: int, text: str, reason: str) -> None:
        self.step = step
        self.text = text
        self.reason = reason
        if step:
            message = f"step {step} `{text}`: {reason}"
        else:
            message = f"pipeline `{text}`: {reason}" if text else reason
        super().__init__(message)


@dataclass(frozen=True)
class Step:
    """One derivation of a pipeline: the op's name, its literal arguments as written,
    and the text the user wrote for it (``""`` for a step built in code)."""

    name: str
    args: tuple = ()
    text: str = field(default="", compare=False, repr=False)
    #: The keyword names typed (``axis=`` is NumPy's word, ``dim=`` PyTorch's): where the
    #: two libraries disagree, the step follows the library whose word it is.
    keywords: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def __str__(self) -> str:
        return format_step(self)


# --------------------------------------------------------------------------- formatting


def _format_arg(value: object) -> str:
    if isinstance(value, SliceSpec):
        return "s" + format_subscript(value.items)
    if isinstance(value, tuple):
        inner = ", ".join(str(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return str(value)


def format_step(step: Step, canonical: bool = False) -> str:
    """The text of one step: as the user wrote it, or (``canonical``, or a step built
    in code) the canonical form, e.g. ``.narrow(0, 1, 2)``, ``.permute(1, 0)``, ``.T``, ``[1:]``."""
    if step.text and not canonical:
        return step.text
    op = REGISTRY.get(step.name)
    if op is not None and op.attribute:
        return f".{step.name}"
    if op is not None and op.bracket:
        (spec,) = step.args
        return format_subscript(spec.items)
    return f".{step.name}(" + ", ".join(_format_arg(a) for a in step.args) + ")"


def format_pipeline(steps: list[Step] | tuple[Step, ...], canonical: bool = False) -> str:
    """The text of a whole pipeline (see `format_step`); ``parse`` reads it back to the same steps."""
    return "".join(format_step(step, canonical) for step in steps)


@dataclass(frozen=True)
class SliceSpec:
    """The items of an ``s[...]`` subscript, kept as plain ints and slices."""

    items: tuple

    def __hash__(self) -> int:  # slice objects are unhashable before Python 3.12
        return hash(
            tuple((i.start, i.stop, i.step) if isinstance(i, slice) else i for i in self.items)
        )


# --------------------------------------------------------------------------- parsing

_ROOT = "_candela_root_"


class _Reject(Exception):
    """A reason to refuse a node, caught and turned into a PipelineError."""


def _int_literal(node: ast.AST, what: str) -> int:
    # An integer literal, optionally signed: never a bool, float or name.
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    raise _Reject(f"{what} must be an integer literal, got `{ast.unparse(node)}`")


def _ints_literal(node: ast.AST, what: str) -> int | tuple[int, ...]:
    # One integer stays one integer; a tuple or list becomes a tuple: as written.
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_int_literal(e, f"each entry of {what}") for e in node.elts)
    return _int_literal(node, what)


def _slice_item(node: ast.AST) -> SliceItem:
    if isinstance(node, ast.Slice):
        bounds = []
        for part, label in ((node.lower, "start"), (node.upper, "stop"), (node.step, "step")):
            bounds.append(None if part is None else _int_literal(part, f"a slice {label}"))
        return slice(*bounds)
    return _int_literal(node, "a slice index")


def _slices_literal(node: ast.AST, what: str) -> SliceSpec:
    if not (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "s"
    ):
        raise _Reject(f"{what} must be written as s[...], got `{ast.unparse(node)}`")
    inner = node.slice
    elements = inner.elts if isinstance(inner, ast.Tuple) else [inner]
    return SliceSpec(tuple(_slice_item(e) for e in elements))


_MODULES = frozenset({"np", "numpy", "torch"})


def _module_attribute(node: ast.AST) -> str | None:
    # `np.newaxis`, `torch.float32`: the attribute's name when read off a library's module
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in _MODULES
    ):
        return node.attr
    return None


def _index_item(node: ast.AST) -> SliceItem:
    if isinstance(node, ast.Constant) and (node.value is None or node.value is Ellipsis):
        return node.value
    if _module_attribute(node) == "newaxis":  # NumPy's name for None
        return None
    if (
        isinstance(node, (ast.Compare, ast.BoolOp))
        or (
            isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor))
        )
        or (isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)))
    ):
        raise _Reject(
            f"`{_short(ast.unparse(node), 40)}` is a boolean mask: it picks elements by their "
            "values, into a new buffer (NumPy and PyTorch copy them), not a view; a view picks "
            "by position: a slice such as `[1:]` or `[::2]`"
        )
    if isinstance(node, (ast.List, ast.Tuple)):
        raise _Reject(
            f"`{ast.unparse(node)}` is fancy indexing (it copies); a pipeline subscript takes "
            "integers, slices, None and ..."
        )
    return _slice_item(node)


def _index_literal(node: ast.AST, what: str = "a subscript") -> SliceSpec:
    elements = node.elts if isinstance(node, ast.Tuple) else [node]
    items = tuple(_index_item(e) for e in elements)
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise _Reject("a subscript may hold `...` once")
    return SliceSpec(items)


ORDERS = ("C", "F", "A")


def _order_literal(node: ast.AST, what: str) -> str:
    # NumPy's memory order, as a string literal
    if isinstance(node, ast.Constant) and node.value in ORDERS:
        return node.value
    if isinstance(node, ast.Constant) and node.value == "K":
        raise _Reject(
            "order='K' (the order the elements lie in memory) is not read here: write that "
            "order's permutation first, e.g. `.permute(...)`, then `.ravel()`"
        )
    raise _Reject(f"{what} must be 'C', 'F' or 'A', got `{_short(ast.unparse(node), 30)}`")


_READERS = {
    "int": _int_literal,
    "order": _order_literal,
    "ints": _ints_literal,
    "slices": _slices_literal,
    "index": _index_literal,
}


def _read_step(call: ast.Call) -> Step:
    typed = call.func.attr  # type: ignore[attr-defined]
    op = find(typed)
    if op is None or op.bracket:
        raise _Reject(suggestion(typed))
    name = op.name  # the op itself, whichever library's name was typed (the text keeps it)
    if op.attribute:
        raise _Reject(f"`{name}` is a property: write `.{name}` without parentheses")
    nodes = list(call.args)
    if any(isinstance(a, ast.Starred) for a in nodes):
        raise _Reject("write each argument out: `*` is not read")
    _refuse_dtypes(typed, nodes, call.keywords)
    keywords = tuple(kw.arg for kw in call.keywords if kw.arg is not None)
    if call.keywords:
        nodes = _with_keywords(op, nodes, call.keywords)
    if op.spread and (len(nodes) > 1 or (nodes and not _is_sequence(nodes[0]))):
        # reshape(2, 6) as well as reshape((2, 6)): kept as written, candela reads both
        what = f"each of {op.args[0].name}"
        return Step(name, tuple(_int_literal(a, what) for a in nodes), keywords=keywords)
    if len(nodes) not in op.arities:
        counts = " or ".join(str(n) for n in op.arities)
        if op.spread:
            raise _Reject(
                f"`{name}` takes {op.args[0].name} as one tuple or as separate integers "
                f"(`.{name}(2, 6)` or `.{name}((2, 6))`), got {len(nodes)} arguments"
            )
        raise _Reject(f"`{name}` takes {counts} argument(s) ({op.signature}), got {len(nodes)}")
    args = tuple(_READERS[a.kind](node, a.name) for a, node in zip(op.args, nodes))
    return Step(name, args, keywords=keywords)


def _refuse_dtypes(typed: str, nodes: list, keywords: list) -> None:
    """``.view(torch.float32)``, ``.view(dtype=np.int8)``, ``.view('f4')``: a dtype view."""
    if typed not in ("view", "view_as"):
        return
    for node in [*nodes, *(kw.value for kw in keywords)]:
        named = _module_attribute(node) is not None or (
            isinstance(node, ast.Name) and node.id in ("float", "int", "bool", "complex")
        )
        text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if named or text or any(kw.arg == "dtype" for kw in keywords):
            raise _Reject(
                f"`.{typed}({_short(ast.unparse(node), 30)})` is a dtype view: the same bytes "
                "read as another element type, which changes how many elements there are; the "
                "explorer draws one element type (`.view(shape)` reshapes)"
            )


def _with_keywords(op, nodes: list, keywords: list) -> list:
    """Keyword arguments (``diagonal(offset=1)``, NumPy's and PyTorch's names too: ``dims=``)
    put in their places, or refused by name."""
    if op.position_keywords and any(kw.arg in op.position_keywords for kw in keywords):
        return _with_position_keywords(op, nodes, keywords)
    names = [a.name for a in op.args]
    spelled = {other: a.name for a in op.args for other in (a.name, *a.also)}
    given = {}
    for kw in keywords:
        if kw.arg is None:
            raise _Reject("write each argument out: `**` is not read")
        if kw.arg not in spelled:
            raise _Reject(f"`{op.name}` has no argument `{kw.arg}` ({op.signature})")
        arg = spelled[kw.arg]
        if names.index(arg) < len(nodes) or arg in given:
            raise _Reject(f"`{kw.arg}` is given twice")
        given[arg] = kw.value
    out = list(nodes)
    fills = {a.name: a.fill for a in op.args}
    for name in names[len(nodes) :]:
        if not given:
            break
        if name in given:
            out.append(given.pop(name))
        elif fills[name] is not None:  # left out: both libraries' default for it
            out.append(ast.Constant(fills[name]))
        else:
            raise _Reject(f"give `{name}` too, or pass the arguments by position ({op.signature})")
    return out


def _with_position_keywords(op, nodes: list, keywords: list) -> list:
    """``transpose(dim0=0, dim1=2)``: each keyword names one position, in order."""
    names = op.position_keywords
    given = {}
    for kw in keywords:
        if kw.arg not in names:
            listed = ", ".join(f"`{n}`" for n in names)
            raise _Reject(f"`{op.name}` takes {listed} or positions, not `{kw.arg}`")
        if names.index(kw.arg) < len(nodes) or kw.arg in given:
            raise _Reject(f"`{kw.arg}` is given twice")
        given[kw.arg] = kw.value
    missing = [n for n in names[len(nodes) :] if n not in given]
    if missing:
        raise _Reject(f"give `{missing[0]}` too ({op.name}({', '.join(names)}))")
    return [*nodes, *(given[n] for n in names[len(nodes) :])]


def _read_subscript(node: ast.Subscript) -> Step:
    op = REGISTRY.get("subscript")
    if op is None:
        raise _Reject("subscripts are not a pipeline step here")
    return Step(op.name, (_index_literal(node.slice),))


def _is_sequence(node: ast.AST) -> bool:
    return isinstance(node, (ast.Tuple, ast.List))


def _read_attribute(node: ast.Attribute) -> Step:
    op = find(node.attr)  # its own name, or the other library's (`.mH`)
    if op is None:
        raise _Reject(suggestion(node.attr))
    if not op.attribute:
        raise _Reject(f"`{node.attr}` is a method: call it, e.g. `{op.signature}`")
    return Step(op.name)


def _segment(source: str, node: ast.AST, start_node: ast.AST | None) -> str:
    # The typed text of one step: from the end of the chain before it to its own end.
    lines = source.splitlines(keepends=True)

    def offset(line: int, col: int) -> int:
        return sum(len(x) for x in lines[: line - 1]) + col

    start = offset(start_node.end_lineno, start_node.end_col_offset) if start_node else 0
    end = offset(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
    return " ".join(source[start:end].split())


#: Limits checked before the text reaches :mod:`ast`: its length, how deeply its
#: brackets, signs and operators nest (``ast`` and the messages that quote a node
#: recurse once per level), and how large a number may be (a 64-bit integer).
MAX_CHARS = 2000
MAX_NESTING = 40
INT64_MAX = 2**63 - 1
_INT64_DIGITS = len(str(INT64_MAX))

# A number as Python's tokenizer reads one: hex, octal, binary or decimal, with underscores.
_NUMBER = re.compile(r"(?<![\w.])(?:0[xX][0-9a-fA-F_]*|0[oO][0-7_]*|0[bB][01_]*|[0-9][0-9_]*)")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9][A-Za-z0-9_]*|\S")
_WORD_OPERATORS = frozenset({"not", "and", "or", "if", "else", "lambda", "in", "is", "for"})


def _short(text: str, limit: int = 60) -> str:
    text = text[: limit + 1].encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_limits(text: str) -> None:
    """Refuse text too long, nested too deep or with a number beyond 64 bits.

    Runs before :func:`ast.parse`, so no text can exhaust the stack or make
    Python convert a number of thousands of digits; the message names the value.

    >>> check_limits(".view(" + "-" * 500 + "12)")
    Traceback (most recent call last):
    ...
    explorer.pipeline.PipelineError: pipeline `.view(-------------…`: nests more than 40 deep ...
    >>> check_limits(".slice(s[::9223372036854775808])")
    Traceback (most recent call last):
    ...
    explorer.pipeline.PipelineError: pipeline `.slice(s[::9223372036854775808])`: the number 9223372036854775808 is outside the 64-bit range ...
    """
    if len(text) > MAX_CHARS:
        raise PipelineError(0, _short(text), f"is {len(text):,} characters; at most {MAX_CHARS:,}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: ast cannot read it, a page cannot show it
        raise PipelineError(
            0, _short(text), f"character {exc.object[exc.start]!r} at {exc.start} is not text"
        ) from None
    for match in _NUMBER.finditer(text):
        token = match.group()
        digits = token.replace("_", "")
        base = {"x": 16, "o": 8, "b": 2}.get(digits[1:2].lower(), 10)
        body = digits[2:] if base != 10 else digits.lstrip("0")
        if len(body) > 64 or (base == 10 and len(body) > _INT64_DIGITS):
            raise PipelineError(
                0,
                _short(text),
                f"the number {_short(token, 24)} has {len(body):,} digits; "
                f"numbers here fit in 64 bits (at most {INT64_MAX})",
            )
        try:
            value = int(body or "0", base)
        except ValueError:
            continue  # not a valid literal: ast says why
        if value > INT64_MAX:
            raise PipelineError(
                0,
                _short(text),
                f"the number {token} is outside the 64-bit range (at most {INT64_MAX})",
            )
    # Nesting: each open bracket is a level, and inside brackets each sign, operator,
    # attribute or subscript applied in a row is one more (they nest in the tree too).
    # The top level is the method chain itself, which is read without recursion.
    levels: list[int] = []
    operand = False
    for token in _TOKEN.findall(text):
        if token in "([{":
            if levels and operand:
                levels[-1] += 1  # a call or subscript on what came before
            levels.append(0)
            operand = False
        elif token in ")]}":
            if levels:
                levels.pop()
            operand = True
        elif token in ",:":
            if levels:
                levels[-1] = 0
            operand = False
        elif token[0].isalnum() or token[0] == "_":
            if levels and token in _WORD_OPERATORS:
                levels[-1] += 1
                operand = False
            else:
                operand = True
        else:
            if levels:
                levels[-1] += 1
            operand = False
        depth = len(levels) + sum(levels)
        if depth > MAX_NESTING:
            raise PipelineError(
                0,
                _short(text, 20),
                f"nests more than {MAX_NESTING} deep (brackets, and signs or operators in a row)",
            )


# `y = ` or `x = ` (one name, then one `=`): a pasted line's right-hand side is the pipeline
_ASSIGNED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)\s*")
# `np.flip(`, `torch.transpose(`: a library's function, called with the tensor first
_FUNCTION = re.compile(r"(?:np|numpy|torch)\.(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*\(")


def parse(text: str) -> list[Step]:
    """Parse pipeline text into steps, without evaluating anything.

    Empty text is the empty pipeline. Raises :class:`PipelineError` naming the
    step and the reason for anything outside the whitelist.

    >>> parse(".narrow(0, 1, 2).broadcast((2, 2, 4))")
    [Step(name='narrow', args=(0, 1, 2)), Step(name='broadcast', args=((2, 2, 4),))]
    >>> parse(".__class__()")
    Traceback (most recent call last):
    ...
    explorer.pipeline.PipelineError: step 1 `.__class__()`: `__class__` is not an operation ...
    """
    if not isinstance(text, str):
        raise PipelineError(0, "", f"the pipeline must be text, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped or stripped == "x":  # nothing, or nothing after `x`
        return []
    check_limits(stripped)
    assigned = _ASSIGNED.match(stripped)  # `y = x.flip(0)`, a line of the code panel
    if assigned:
        stripped = stripped[assigned.end() :]
        if not stripped or stripped == "x":
            return []
    pasted = re.match(r"x\s*(?=[.\[])", stripped)  # what follows `x` in a notebook
    if pasted:
        stripped = stripped[pasted.end() :]
    function = _FUNCTION.match(stripped)
    if function:
        raise PipelineError(
            0,
            _short(stripped),
            f"`{function.group()}...)` is a function call; here every step is written as a "
            f"method after `x`: e.g. `x.{function.group('name')}(...)` without `x` as the first "
            "argument",
        )
    if not stripped.startswith((".", "[")):
        raise PipelineError(
            0,
            stripped,
            "a pipeline is what follows `x`: it starts with a method call such as "
            "`.transpose()` or a subscript such as `[1:]`",
        )
    source = f"({_ROOT}\n{stripped}\n)"
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise PipelineError(0, stripped, f"not valid method-chain syntax ({exc.msg})") from None

    # Unwind the chain from the outermost call inwards, then number steps in order.
    chain: list[ast.AST] = []
    node = tree.body
    while not (isinstance(node, ast.Name) and node.id == _ROOT):
        chain.append(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        else:
            raise PipelineError(0, stripped, "only a chain of method calls is allowed")
    root = node
    chain.reverse()

    steps: list[Step] = []
    before = root  # the node whose end is where the current step's text starts
    for i, node in enumerate(chain):
        if isinstance(node, ast.Attribute):
            following = chain[i + 1] if i + 1 < len(chain) else None
            if isinstance(following, ast.Call) and following.func is node:
                continue  # the attribute is the head of the call that follows
        number = len(steps) + 1
        segment = _segment(source, node, before)
        before = node
        try:
            if isinstance(node, ast.Subscript):
                step = _read_subscript(node)
            elif isinstance(node, ast.Attribute):
                step = _read_attribute(node)
            else:
                step = _read_step(node)  # type: ignore[arg-type]
        except _Reject as exc:
            raise PipelineError(number, segment, str(exc)) from None
        steps.append(Step(step.name, step.args, segment, step.keywords))
    return steps


# --------------------------------------------------------------------------- applying


def apply_step(tensor: Tensor, step: Step) -> Tensor:
    """Apply one step to a tensor, raising candela's errors unchanged.

    Every derivation is O(rank) until walked, so the result's size is checked
    after the step and before anything walks it.
    """
    op = REGISTRY.get(step.name)
    if op is None:
        raise ValueError(suggestion(step.name))
    buffer = getattr(tensor, "buffer", None)
    if (
        (op.copies or step.name in _MAY_COPY)
        and buffer is not None
        and (len(tensor.layout) > MAX_COPY or values_are_positions(buffer))
    ):
        result = _copying(op, tensor, step)
    else:
        result = op.apply(tensor, step.args, step.keywords)
    layout = getattr(result, "layout", result)  # a Tensor's, or a bare Layout
    if layout.rank > MAX_RANK:
        raise ValueError(
            f"the result has {layout.rank} axes; the explorer shows at most {MAX_RANK}"
        )
    if len(layout) > MAX_ELEMENTS:
        raise ValueError(
            f"shape {tuple(layout.shape)} has {len(layout):,} elements; "
            f"the explorer handles at most {MAX_ELEMENTS_TEXT}"
        )
    return result


#: Steps that may copy the tensor into a new buffer besides those marked ``copies``.
_MAY_COPY = frozenset({"reshape", "flatten", "ravel"})


#: The positions buffers made, by id (see :func:`positions_buffer`).
_POSITIONS: dict[int, weakref.ref] = {}


def positions_buffer(size: int):
    """A buffer of ``size`` int64 cells standing for one whose value is its position
    (``arange``), made of no memory: one zero, repeated (stride 0), however many cells.
    :func:`values_are_positions` tells it apart, and what reads values there takes the
    position instead; a step that would copy it copies the positions (:func:`apply_step`).
    Reading its zeros is harmless, never a value shown."""
    import numpy as np

    buffer = np.broadcast_to(np.zeros(1, dtype=np.int64), (size,))  # read-only
    key = id(buffer)
    _POSITIONS[key] = weakref.ref(buffer, lambda _ref: _POSITIONS.pop(key, None))
    return buffer


def values_are_positions(buffer) -> bool:
    """Whether ``buffer`` is a :func:`positions_buffer` (an ``arange`` never made)."""
    ref = _POSITIONS.get(id(buffer))
    return ref is not None and ref() is buffer


class _Copies(Exception):
    """Raised by a probe tensor where a step would copy it (see :func:`_copying`)."""


def _copying(op, tensor: Tensor, step: Step):
    """``op`` applied to ``tensor`` where it might copy a buffer too large to copy or one
    never made: the step is first tried on a probe tensor of no memory whose
    ``as_contiguous`` (what every copy of candela's goes through) raises instead of copying.
    A copy of more than :data:`MAX_COPY` elements is refused; a copy of a positions buffer
    holds the positions its walk read (a packed copy holds its values in walk order), a
    view keeps it."""
    import numpy as np

    from candela import Layout, Tensor

    class Probe(Tensor):
        def as_contiguous(self) -> Tensor:
            raise _Copies

    probe = Probe(np.broadcast_to(np.zeros(1, dtype=np.bool_), (len(tensor.buffer),)),
                  tensor.layout)  # fmt: skip
    try:
        tried = op.apply(probe, step.args, step.keywords)
    except _Copies:
        copied = True
    else:
        copied = False
    if copied and len(tensor.layout) > MAX_COPY:
        raise ValueError(
            f"it copies {len(tensor.layout):,} elements into a new buffer; "
            f"the explorer copies at most {MAX_COPY:,}"
        )
    if not values_are_positions(tensor.buffer):
        return op.apply(tensor, step.args, step.keywords)
    if copied:  # the copy of an arange's view: its positions, packed in walk order
        packed = np.asarray(tensor.layout.positions(), dtype=np.int64)
        return op.apply(
            Tensor(packed, Layout(tuple(tensor.layout.shape))), step.args, step.keywords
        )
    return Tensor(tensor.buffer, tried.layout)


def apply(steps: list[Step], start: Tensor) -> list[Tensor]:
    """Apply the steps in order; return every state, ``start`` first.

    Raises :class:`PipelineError` naming the first step that fails and the
    library's own words for why.
    """
    states = [start]
    for number, step in enumerate(steps, 1):
        try:
            states.append(apply_step(states[-1], step))
        except (ValueError, IndexError, TypeError) as exc:
            raise PipelineError(number, format_step(step), str(exc)) from exc
    return states
