"""Values a node computed from its own parameters, told apart from the literals it passes.

A graph hands a node its static parameters as ``DerivedFloat`` / ``DerivedInt`` /
``DerivedStr``: a float, int or str in every way (``isinstance`` holds, Warp and NumPy take
them as they are), that also remembers which parameters it came from (``origin``).
Arithmetic keeps the mark, so ``radius * 2`` still names ``radius``. A kernel uniform or
specialize option whose value carries the mark is the node's own parameter at work, and
the graph offers no kernel-level control for it (that control would shadow the node's);
only values the node passes as literals become kernel-level parameters.

A value that loses the mark (``math.sin(radius)``, ``str.upper()``, ``0.5 * n`` for an int
``n``: the float on the left computes it) is offered as a
literal would be: the mark is a hint for the controls, never a part of a value.
"""

from __future__ import annotations

from typing import Any

_ORIGIN = "_procgen_origin"


def origin(value: Any) -> frozenset[str]:
    """Returns the parameters a value came from (empty for a literal)."""
    return getattr(value, _ORIGIN, frozenset())


def _tagged(value: Any, names: frozenset[str]) -> Any:
    if isinstance(value, bool) or not names:
        return value
    if isinstance(value, int):
        out: Any = DerivedInt(value)
    elif isinstance(value, float):
        out = DerivedFloat(value)
    elif isinstance(value, str):
        out = DerivedStr(value)
    else:
        return value
    setattr(out, _ORIGIN, names)
    return out


def derive(value: Any, name: str) -> Any:
    """Returns ``value`` marked as coming from the parameter ``name`` (tuples lane by lane)."""
    if isinstance(value, tuple):
        return tuple(derive(v, name) for v in value)
    return _tagged(value, frozenset((name,)))


def _arith(op: str, reflected: bool = False) -> Any:
    def method(self: Any, *other: Any) -> Any:
        base = float if isinstance(self, float) else int
        name = f"__{'r' if reflected else ''}{op}__"
        result = getattr(base, name)(self, *other)
        if result is NotImplemented and base is int and any(isinstance(o, float) for o in other):
            result = getattr(float, name)(float(self), *other)  # int with float: a float
        if result is NotImplemented:
            return result
        names = origin(self).union(*(origin(o) for o in other))
        if isinstance(result, tuple):  # divmod
            return tuple(_tagged(r, names) for r in result)
        return _tagged(result, names)

    return method


_BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "divmod")
_UNARY = ("neg", "pos", "abs")


def _number_methods() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for op in _BINARY:
        out[f"__{op}__"] = _arith(op)
        out[f"__r{op}__"] = _arith(op, reflected=True)
    for op in _UNARY:
        out[f"__{op}__"] = _arith(op)
    return out


DerivedFloat = type(
    "DerivedFloat",
    (float,),
    {"__doc__": "A float computed from a node's parameters.", **_number_methods()},
)
DerivedInt = type(
    "DerivedInt",
    (int,),
    {"__doc__": "An int computed from a node's parameters.", **_number_methods()},
)


class DerivedStr(str):
    """A str that is a node's parameter (a specialize option the node passes on)."""


for _cls in (DerivedFloat, DerivedInt, DerivedStr):
    _cls.__module__ = __name__
    _cls.__reduce__ = lambda self: (type(self).__mro__[1], (type(self).__mro__[1](self),))  # type: ignore[method-assign]
