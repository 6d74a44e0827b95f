"""Field: a lazy expression over columns, evaluated in one fused dispatch.

A Field is a tree of nodes. Leaves read a column (``col``), the slot number (``index``),
the domain's live count (``count``) or a constant (a Python number: a uniform of the
generated kernel, so a new value reuses the build). Inner nodes are arithmetic,
comparisons (1 or 0 as Int), min/max/clamp/mix, lanes of vectors, length/dot/normalize
and hash-based noise. Every node knows its element (f32, i32, u32, vec2, vec3, vec4).
"""

from __future__ import annotations

import numbers
from typing import Any

from ..columns import Column
from ..dynamic import cast
from ..elements import COLUMN_TYPES, VECTORS, XYZW
from ..elements import SCALARS as _SCALARS
from ..errors import BindingError

SCALARS = _SCALARS
VECS = VECTORS
_COLUMN_ELEMENTS = {n: t.element for n, t in COLUMN_TYPES.items()}
_LANES = "".join(XYZW)


def lanes_of(element: str) -> int:
    """Returns the lanes of an element (1 for a scalar)."""
    return VECS.get(element, 1)


def _arith_element(op: str, a: str, b: str) -> str:
    if a in VECS or b in VECS:
        if a in VECS and b in VECS and a != b:
            raise BindingError(f"Field {op}: expected vectors of the same size, got {a} and {b}")
        if op not in ("add", "sub", "mul", "div", "min", "max") or (
            (a in VECS) != (b in VECS) and op in ("min", "max")
        ):
            raise BindingError(f"Field {op}: expected scalars, got {a} and {b}")
        return a if a in VECS else b
    if a == b and a in ("i32", "u32") and op != "div":
        return a
    return "f32"


class Field:
    """A lazy expression over columns (build one with ``col``, ``index``, ``count``).

    Operators: ``+ - * / %``, unary ``-``, comparisons ``< <= > >= == !=`` (Int 1 or 0),
    ``.x .y .z .w`` (lanes of a vector). Functions of ``procgen_nb.fieldc``: ``fmin``,
    ``fmax``, ``clamp``, ``mix``, ``where``, ``length``, ``dot``, ``normalize``, ``abs_``,
    ``floor``, ``sqrt``, ``sin``, ``cos``, ``vec2``/``vec3``/``vec4``, ``noise``,
    ``hash01``, ``to_float``, ``to_int``.
    """

    _procgen_field_ = True

    def __init__(self, op: str, args: tuple[Field, ...], element: str, payload: Any = None):
        self.op = op
        self.args = args
        self.element = element
        self.payload = payload

    # -- operators ----------------------------------------------------------------
    def _bin(self, op: str, other: Any, swap: bool = False) -> Field:
        o = as_field(other)
        a, b = (o, self) if swap else (self, o)
        return Field(op, (a, b), _arith_element(op, a.element, b.element))

    def __add__(self, o: Any) -> Field:
        return self._bin("add", o)

    def __radd__(self, o: Any) -> Field:
        return self._bin("add", o, True)

    def __sub__(self, o: Any) -> Field:
        return self._bin("sub", o)

    def __rsub__(self, o: Any) -> Field:
        return self._bin("sub", o, True)

    def __mul__(self, o: Any) -> Field:
        return self._bin("mul", o)

    def __rmul__(self, o: Any) -> Field:
        return self._bin("mul", o, True)

    def __truediv__(self, o: Any) -> Field:
        return self._bin("div", o)

    def __rtruediv__(self, o: Any) -> Field:
        return self._bin("div", o, True)

    def __mod__(self, o: Any) -> Field:
        f = self._bin("mod", o)
        if f.element in VECS:
            raise BindingError(f"Field mod: expected scalars, got {f.element}")
        return f

    def __neg__(self) -> Field:
        return Field("neg", (self,), self.element)

    def _cmp(self, op: str, other: Any) -> Field:
        o = as_field(other)
        if self.element in VECS or o.element in VECS:
            raise BindingError(
                f"Field {op}: expected scalars to compare, got {self.element} and {o.element}"
            )
        return Field(op, (self, o), "i32")

    def __lt__(self, o: Any) -> Field:
        return self._cmp("lt", o)

    def __le__(self, o: Any) -> Field:
        return self._cmp("le", o)

    def __gt__(self, o: Any) -> Field:
        return self._cmp("gt", o)

    def __ge__(self, o: Any) -> Field:
        return self._cmp("ge", o)

    def __eq__(self, o: Any) -> Field:  # type: ignore[override]
        return self._cmp("eq", o)

    def __ne__(self, o: Any) -> Field:  # type: ignore[override]
        return self._cmp("ne", o)

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise BindingError(
            "Field: expected to be evaluated on the device (fieldc.evaluate), got a use as a "
            "Python truth value; use fieldc.where(cond, a, b) for a choice"
        )

    def lane(self, k: int) -> Field:
        """Returns lane ``k`` (0..3) of a vector Field."""
        n = lanes_of(self.element)
        if self.element not in VECS or not 0 <= k < n:
            raise BindingError(
                f"Field lane: expected a lane below {n} of a vector, got lane {k} of {self.element}"
            )
        return Field("lane", (self,), "f32", k)

    @property
    def x(self) -> Field:
        """Lane 0."""
        return self.lane(0)

    @property
    def y(self) -> Field:
        """Lane 1."""
        return self.lane(1)

    @property
    def z(self) -> Field:
        """Lane 2."""
        return self.lane(2)

    @property
    def w(self) -> Field:
        """Lane 3."""
        return self.lane(3)

    # -- introspection --------------------------------------------------------------
    def columns(self) -> list[Column]:
        """Returns the columns the Field reads, in the order they first appear."""
        out: list[Column] = []
        seen: set[int] = set()

        def walk(f: Field) -> None:
            if f.op == "col" and id(f.payload) not in seen:
                seen.add(id(f.payload))
                out.append(f.payload)
            for a in f.args:
                walk(a)

        walk(self)
        return out

    def __repr__(self) -> str:
        return f"Field({self.text()}: {self.element})"

    def text(self) -> str:
        """A readable form of the expression."""
        if self.op == "col":
            return f"col<{self.payload.type}>"
        if self.op == "const":
            return repr(self.payload)
        if self.op in ("index", "count"):
            return f"{self.op}()"
        if self.op == "lane":
            return f"{self.args[0].text()}.{_LANES[self.payload]}"
        return f"{self.op}({', '.join(a.text() for a in self.args)})"


def uniform_value(value: Any, element: str) -> Any:
    """Returns a constant as the uniform of ``element`` it becomes, keeping a dynamic key.

    A dynamic number (a node's dynamic Field, the cook's time) stays dynamic, so a replay
    of a recorded cook takes the new value without a new plan.
    """
    return cast(value, float if element == "f32" else int)


def as_field(value: Any) -> Field:
    """Returns ``value`` as a Field: a Field, a Column (``col``) or a number (a uniform).

    Raises:
        BindingError: a value of another kind.
    """
    if isinstance(value, Field):
        return value
    if isinstance(value, Column):
        return col(value)
    if isinstance(value, bool):
        return Field("const", (), "f32", 1.0 if value else 0.0)
    if isinstance(value, numbers.Real):
        return Field("const", (), "f32", uniform_value(value, "f32"))
    if isinstance(value, tuple | list) and 2 <= len(value) <= 4:
        parts = [as_field(v) for v in value]
        return Field(f"vec{len(parts)}", tuple(parts), f"vec{len(parts)}")
    raise BindingError(
        f"Field: expected a Field, a Column, a number or a tuple of 2-4, got {type(value).__name__}"
    )


def col(column: Column) -> Field:
    """A Field reading ``column`` slot by slot (zero past its length).

    Raises:
        BindingError: a value that is not a Column.
    """
    if not isinstance(column, Column):
        raise BindingError(f"fieldc.col: expected a Column, got {type(column).__name__}")
    return Field("col", (), _COLUMN_ELEMENTS[column.type], column)


def const(value: float | int, element: str = "f32") -> Field:
    """A constant (a uniform of the kernel): ``element`` f32, i32 or u32.

    Raises:
        BindingError: an element other than f32, i32, u32.
    """
    if element not in SCALARS:
        raise BindingError(f"fieldc.const(element): expected one of {SCALARS}, got {element!r}")
    return Field("const", (), element, uniform_value(value, element))


def index() -> Field:
    """The slot number (Int)."""
    return Field("index", (), "i32")


def count() -> Field:
    """The domain's live count (Int): the number over a plain domain."""
    return Field("count", (), "i32")
