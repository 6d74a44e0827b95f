"""Dynamic values: numbers that change between cooks, tracked so no cook hands out a stale one.

A dynamic Field of a node, the cook's ``time`` and ``frame``, and a Curve read at the
cook's time reach a node as a ``Dynamic`` number (``DynamicFloat`` / ``DynamicInt``). It
is not a Python ``float``: it is a small expression over named values, evaluated against
the values of the cook in progress. The rule, for everything a node does with one:

- **Replayed exactly.** Arithmetic (``+ - * / // % **``, unary ``-``/``+``, ``abs``,
  ``round``, ``math.floor``/``ceil``/``trunc``), comparisons used as values
  (``(k > 2) * 3``), and the functions of this module (``minimum``, ``maximum``,
  ``where``, ``sin``, ``cos``, ``sqrt``, ``exp``, ``log``, ...) build a new expression.
  Passed as a kernel uniform, as ``device.bound(value=..., live=True)``, as a fill value
  or as an argument of a ``pure`` ``cpu.call`` (whose numeric results are expressions
  too, called again at replay and cached by their argument values), the expression is
  stored in the recording and evaluated on every replay: a replay gives the bytes a
  fresh cook gives.
- **Planned again.** Anything the recording cannot replay reads the value in Python:
  ``float()``, ``int()``, ``bool()`` (an ``if``/``while``, ``and``/``or``), indexing a
  container with it, formatting it, hashing it, the builtins ``min``/``max``, the
  ``math`` functions other than floor/ceil/trunc, NumPy, a non-pure ``cpu.call``. The
  node is then marked host-dependent on that value: when it moves, the node plans again
  (a fresh cook of that node), never a stale replay.

Outside a node (a value held in a cook's outputs, or read after the cook) a dynamic value
answers the value of the graph's latest cook. The oracle for every test of this: the same
graph cooked fresh at each value.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import operator
from collections.abc import Callable, Iterator
from typing import Any

from . import _derived

__all__ = [
    "Dynamic",
    "DynamicFloat",
    "DynamicInt",
    "Env",
    "apply",
    "cast",
    "ceil",
    "concrete",
    "cos",
    "dynamic",
    "evaluate",
    "exp",
    "floor",
    "is_dynamic",
    "key_of",
    "leaves",
    "log",
    "mark_host",
    "maximum",
    "minimum",
    "peek",
    "sin",
    "sqrt",
    "tan",
    "tracking",
    "where",
]


class Env:
    """The current values of the dynamic keys a graph cooks with (``key -> value``)."""

    __slots__ = ("values",)

    def __init__(self, values: dict[str, Any] | None = None):
        self.values: dict[str, Any] = dict(values or {})


# -- expressions ------------------------------------------------------------------------
# An expression is a tuple: ("key", name), ("const", value), (opname, *children), or
# ("call", site, index) where ``site.results(values)`` answers a pure call's results.

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "lt": lambda a, b: int(a < b),
    "le": lambda a, b: int(a <= b),
    "gt": lambda a, b: int(a > b),
    "ge": lambda a, b: int(a >= b),
    "eq": lambda a, b: int(a == b),
    "ne": lambda a, b: int(a != b),
    "min": min,
    "max": max,
}
_UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": abs,
    "float": float,
    "int": int,
    "floor": math.floor,
    "ceil": math.ceil,
    "trunc": math.trunc,
    "round": round,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
}
_SYMBOL = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "truediv": "/",
    "floordiv": "//",
    "mod": "%",
    "pow": "**",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "eq": "==",
    "ne": "!=",
}


def evaluate(expr: Any, values: dict[str, Any]) -> Any:
    """Returns the value of an expression (or of a Dynamic, or a plain value) for ``values``.

    Raises:
        KeyError: a key the values do not hold.
    """
    if isinstance(expr, Dynamic):
        expr = expr._expr
    elif not isinstance(expr, tuple):
        return expr
    op = expr[0]
    if op == "key":
        return values[expr[1]]
    if op == "const":
        return expr[1]
    if op == "call":
        return expr[1].results(values)[expr[2]]
    if op == "where":
        return evaluate(expr[2], values) if evaluate(expr[1], values) else evaluate(expr[3], values)
    if op == "apply":
        return expr[1](evaluate(expr[3], values))
    if op == "round2":
        return round(evaluate(expr[1], values), evaluate(expr[2], values))
    if len(expr) == 3:
        return _BINARY[op](evaluate(expr[1], values), evaluate(expr[2], values))
    return _UNARY[op](evaluate(expr[1], values))


def leaves(expr: Any) -> set[str]:
    """Returns the keys an expression (or a Dynamic) reads; a pure call's arguments included."""
    if isinstance(expr, Dynamic):
        expr = expr._expr
    if not isinstance(expr, tuple):
        return set()
    if expr[0] == "key":
        return {expr[1]}
    if expr[0] == "const":
        return set()
    if expr[0] == "call":
        return set(expr[1].keys)
    out: set[str] = set()
    for child in expr[1:]:
        out |= leaves(child)
    return out


def _text(expr: Any) -> str:
    if not isinstance(expr, tuple):
        return repr(expr)
    op = expr[0]
    if op == "key":
        return expr[1]
    if op == "const":
        return repr(expr[1])
    if op == "call":
        return f"{expr[1].name}(...)[{expr[2] + 1}]"
    if op == "apply":
        return f"{expr[2]}({_text(expr[3])})"
    if op in _SYMBOL:
        return f"({_text(expr[1])} {_SYMBOL[op]} {_text(expr[2])})"
    return f"{op}({', '.join(_text(c) for c in expr[1:])})"


# -- tracking ---------------------------------------------------------------------------
class Tracker:
    """What a node did with dynamic values while it cooked.

    Attributes:
        host: keys read in Python (the node plans again when one moves).
        used: keys consumed in a form a replay evaluates (uniforms, fills, pure calls).
    """

    __slots__ = ("host", "used")

    def __init__(self) -> None:
        self.host: set[str] = set()
        self.used: set[str] = set()


_tracker: contextvars.ContextVar[Tracker | None] = contextvars.ContextVar(
    "procgen_nb_dynamic_tracker", default=None
)


@contextlib.contextmanager
def tracking() -> Iterator[Tracker]:
    """Collects, inside the block, the keys of the dynamic values read in Python or consumed."""
    tr = Tracker()
    token = _tracker.set(tr)
    try:
        yield tr
    finally:
        _tracker.reset(token)


def _mark_host(value: Dynamic) -> None:
    tr = _tracker.get()
    if tr is not None:
        tr.host |= leaves(value._expr)


def mark_host(keys: set[str]) -> None:
    """Notes that the node cooking now read ``keys`` in Python (it plans again when they move)."""
    tr = _tracker.get()
    if tr is not None:
        tr.host |= set(keys)


def concrete(value: Any) -> Any:
    """Returns the current value of a Dynamic (a plain value as it is) for a replayable use.

    The keys it reads are noted as consumed (not as read in Python): use it where the
    expression itself is stored for replay (a launch argument, a fill, a pure call).
    """
    if not isinstance(value, Dynamic):
        return value
    tr = _tracker.get()
    if tr is not None:
        tr.used |= leaves(value._expr)
    return value._value()


def peek(value: Any) -> Any:
    """Returns the current value of a Dynamic without noting any use (checks, messages)."""
    return value._value() if isinstance(value, Dynamic) else value


def is_dynamic(value: Any) -> bool:
    """True for a Dynamic number."""
    return isinstance(value, Dynamic)


def key_of(value: Any) -> Any:
    """Returns the expression of a Dynamic, or None for any other value."""
    return value._expr if isinstance(value, Dynamic) else None


# -- the number -------------------------------------------------------------------------
def _operand(other: Any) -> tuple[Any, Env | None] | None:
    if isinstance(other, Dynamic):
        return other._expr, other._env
    if isinstance(other, bool):
        return ("const", int(other)), None
    if isinstance(other, int | float):
        return ("const", other), None
    if isinstance(other, numbers.Real) and hasattr(other, "item"):  # a NumPy scalar
        return ("const", other.item()), None
    return None


def _make(expr: tuple, env: Env) -> Dynamic:
    value = evaluate(expr, env.values)
    cls = DynamicInt if isinstance(value, int) else DynamicFloat
    obj = object.__new__(cls)
    obj._expr, obj._env = expr, env
    return obj


def _binary(op: str, swap: bool = False) -> Callable[[Dynamic, Any], Any]:
    def method(self: Dynamic, other: Any) -> Any:
        got = _operand(other)
        if got is None:
            return NotImplemented
        expr, env = got
        a, b = (expr, self._expr) if swap else (self._expr, expr)
        return _make((op, a, b), _merge(self._env, env))

    method.__name__ = f"__{'r' if swap else ''}{op}__"
    return method


def _unary(op: str) -> Callable[[Dynamic], Dynamic]:
    def method(self: Dynamic) -> Dynamic:
        return _make((op, self._expr), self._env)

    method.__name__ = f"__{op}__"
    return method


def _merge(a: Env, b: Env | None) -> Env:
    if b is None or b is a:
        return a
    merged = Env({**b.values, **a.values})
    return merged


class Dynamic(numbers.Real):
    """A number that is an expression over dynamic values (see the module docstring)."""

    __slots__ = ("_expr", "_env")
    _expr: tuple
    _env: Env

    def _value(self) -> Any:
        return evaluate(self._expr, self._env.values)

    @property
    def env(self) -> Env:
        """The ``Env`` whose values the expression reads: the one of the Dynamics it was
        made from, shared (a new one holding both when they had two)."""
        return self._env

    @property
    def key(self) -> str | None:
        """The name of the dynamic value, for a value that is one key (None for an expression)."""
        return self._expr[1] if self._expr[0] == "key" else None

    @property
    def expression(self) -> str:
        """The expression as text (``(keep.k * 2)``)."""
        return _text(self._expr)

    # reads in Python: the node plans again when the value moves
    def __float__(self) -> float:
        _mark_host(self)
        return float(self._value())

    def __int__(self) -> int:
        _mark_host(self)
        return int(self._value())

    def __bool__(self) -> bool:
        _mark_host(self)
        return bool(self._value())

    def __complex__(self) -> complex:
        _mark_host(self)
        return complex(self._value())

    def __hash__(self) -> int:
        _mark_host(self)
        return hash(self._value())

    def __format__(self, spec: str) -> str:
        _mark_host(self)
        return format(self._value(), spec)

    def __str__(self) -> str:
        _mark_host(self)
        return str(self._value())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._value()!r}, expr={self.expression!r})"

    def __reduce__(self) -> Any:
        _mark_host(self)
        return (type(self._value()), (self._value(),))

    # arithmetic and comparisons build expressions
    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("sub"), _binary("sub", True)
    __mul__, __rmul__ = _binary("mul"), _binary("mul", True)
    __truediv__, __rtruediv__ = _binary("truediv"), _binary("truediv", True)
    __floordiv__, __rfloordiv__ = _binary("floordiv"), _binary("floordiv", True)
    __mod__, __rmod__ = _binary("mod"), _binary("mod", True)
    __lt__, __le__ = _binary("lt"), _binary("le")
    __gt__, __ge__ = _binary("gt"), _binary("ge")
    __eq__, __ne__ = _binary("eq"), _binary("ne")  # type: ignore[assignment]
    __neg__, __pos__, __abs__ = _unary("neg"), _unary("pos"), _unary("abs")
    __trunc__, __floor__, __ceil__ = _unary("trunc"), _unary("floor"), _unary("ceil")

    def __pow__(self, other: Any, mod: Any = None) -> Any:
        if mod is not None:
            return NotImplemented
        return _binary("pow")(self, other)

    def __rpow__(self, other: Any, mod: Any = None) -> Any:
        if mod is not None:
            return NotImplemented
        return _binary("pow", True)(self, other)

    def __round__(self, ndigits: Any = None) -> Any:
        if ndigits is None:
            return _make(("round", self._expr), self._env)
        got = _operand(ndigits)
        if got is None:
            return NotImplemented
        return _make(("round2", self._expr, got[0]), _merge(self._env, got[1]))

    def __divmod__(self, other: Any) -> Any:
        return (self // other, self % other)

    def __rdivmod__(self, other: Any) -> Any:
        return (other // self, other % self)

    @property
    def real(self) -> Dynamic:
        return self

    @property
    def imag(self) -> int:
        return 0

    def conjugate(self) -> Dynamic:
        return self


class DynamicFloat(Dynamic):
    """A Dynamic whose current value is a float."""

    __slots__ = ()

    def __new__(cls, value: float, key: str, env: Env | None = None) -> DynamicFloat:
        return dynamic(float(value), key, env)


class DynamicInt(Dynamic, numbers.Integral):
    """A Dynamic whose current value is an int (usable as an index: reading it plans again)."""

    __slots__ = ()

    def __new__(cls, value: int, key: str, env: Env | None = None) -> DynamicInt:
        return dynamic(int(value), key, env)

    def __index__(self) -> int:
        _mark_host(self)
        return int(self._value())

    __and__, __rand__ = _binary("and_"), _binary("and_", True)
    __or__, __ror__ = _binary("or_"), _binary("or_", True)
    __xor__, __rxor__ = _binary("xor"), _binary("xor", True)
    __lshift__, __rlshift__ = _binary("lshift"), _binary("lshift", True)
    __rshift__, __rrshift__ = _binary("rshift"), _binary("rshift", True)
    __invert__ = _unary("invert")

    @property
    def numerator(self) -> DynamicInt:
        return self

    @property
    def denominator(self) -> int:
        return 1


_BINARY.update(
    and_=operator.and_,
    or_=operator.or_,
    xor=operator.xor,
    lshift=operator.lshift,
    rshift=operator.rshift,
)
_UNARY["invert"] = operator.invert


def dynamic(value: Any, key: str, env: Env | None = None) -> Dynamic:
    """Returns a Dynamic naming ``key``, whose value ``env`` holds (``value`` when no env).

    Bools and ints become DynamicInt, every other number DynamicFloat.
    """
    if env is None:
        env = Env()
    if isinstance(value, bool):
        value = int(value)
    elif not isinstance(value, int):
        value = float(value)
    env.values.setdefault(key, value)
    obj = object.__new__(DynamicInt if isinstance(env.values[key], int) else DynamicFloat)
    obj._expr, obj._env = ("key", key), env
    return obj


def cast(value: Any, kind: type) -> Any:
    """Returns ``value`` as a float or int: a Dynamic stays one (a cast in its expression)."""
    if isinstance(value, Dynamic):
        return _make(("float" if kind is float else "int", value._expr), value._env)
    return _derived._tagged(kind(value), _derived.origin(value))  # keeps a parameter's mark


def apply(fn: Callable[[Any], Any], name: str, value: Dynamic) -> Dynamic:
    """Returns ``fn(value)`` as an expression a replay evaluates (``fn`` a pure function)."""
    return _make(("apply", fn, name, value._expr), value._env)


def constant_or_dynamic(expr: tuple, env: Env) -> Dynamic:
    """Returns a Dynamic over ``expr`` (used by ops that make expressions of their own)."""
    return _make(expr, env)


# -- functions of dynamic values ----------------------------------------------------------
def _func(op: str, fallback: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        if isinstance(x, Dynamic):
            return _make((op, x._expr), x._env)
        return fallback(x)

    fn.__name__ = op
    fn.__doc__ = f"``math.{op}`` of a number; of a Dynamic, an expression a replay evaluates."
    return fn


sin = _func("sin", math.sin)
cos = _func("cos", math.cos)
tan = _func("tan", math.tan)
sqrt = _func("sqrt", math.sqrt)
exp = _func("exp", math.exp)
log = _func("log", math.log)
floor = _func("floor", math.floor)
ceil = _func("ceil", math.ceil)


def _fold(op: str, first: Any, rest: tuple) -> Any:
    out = first
    for x in rest:
        a, b = _operand(out), _operand(x)
        if a is None or b is None:
            raise TypeError(f"{op}: expected numbers, got {out!r} and {x!r}")
        if a[1] is None and b[1] is None:
            out = _BINARY[op](out, x)
        else:
            out = _make((op, a[0], b[0]), _merge(a[1] or b[1], b[1]) if a[1] else b[1])
    return out


def minimum(first: Any, *rest: Any) -> Any:
    """``min`` of numbers; with a Dynamic among them, an expression a replay evaluates."""
    return _fold("min", first, rest)


def maximum(first: Any, *rest: Any) -> Any:
    """``max`` of numbers; with a Dynamic among them, an expression a replay evaluates."""
    return _fold("max", first, rest)


def where(condition: Any, a: Any, b: Any) -> Any:
    """``a if condition else b``; with a Dynamic condition, an expression a replay evaluates."""
    if not isinstance(condition, Dynamic):
        return a if condition else b
    parts = [_operand(x) for x in (a, b)]
    if any(p is None for p in parts):
        raise TypeError(f"where: expected numbers, got {a!r} and {b!r}")
    env = condition._env
    for p in parts:
        env = _merge(env, p[1])
    return _make(("where", condition._expr, parts[0][0], parts[1][0]), env)
