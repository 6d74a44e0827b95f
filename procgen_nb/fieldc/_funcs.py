"""The functions of the field language: min/max/clamp/mix, vectors, math and noise."""

from __future__ import annotations

from typing import Any

from ..errors import BindingError
from ._expr import VECS, Field, _arith_element, as_field


def _scalar(f: Field, what: str) -> Field:
    if f.element in VECS:
        raise BindingError(f"fieldc.{what}: expected a scalar Field, got {f.element}")
    return f


def _float(f: Field) -> Field:
    return f if f.element == "f32" or f.element in VECS else Field("to_float", (f,), "f32")


def fmin(a: Any, b: Any) -> Field:
    """The least of two Fields (lane by lane for vectors)."""
    a, b = as_field(a), as_field(b)
    return Field("min", (a, b), _arith_element("min", a.element, b.element))


def fmax(a: Any, b: Any) -> Field:
    """The greatest of two Fields (lane by lane for vectors)."""
    a, b = as_field(a), as_field(b)
    return Field("max", (a, b), _arith_element("max", a.element, b.element))


def clamp(x: Any, lo: Any, hi: Any) -> Field:
    """``x`` held to ``[lo, hi]``."""
    return fmin(fmax(x, lo), hi)


def mix(a: Any, b: Any, t: Any) -> Field:
    """Linear interpolation ``a + (b - a) * t`` (``t`` a scalar)."""
    a, b, t = as_field(a), as_field(b), _scalar(as_field(t), "mix(t)")
    return a + (b - a) * t


def where(cond: Any, a: Any, b: Any) -> Field:
    """``a`` where ``cond`` is non-zero, else ``b``."""
    c = _scalar(as_field(cond), "where(cond)")
    a, b = as_field(a), as_field(b)
    if a.element != b.element:
        if a.element in VECS or b.element in VECS:
            raise BindingError(
                f"fieldc.where: expected a and b of one element, got {a.element} and {b.element}"
            )
        a, b = _float(a), _float(b)
    return Field("where", (c, a, b), a.element)


def _vec_fn(name: str, v: Any, element: str) -> Field:
    f = as_field(v)
    if f.element not in VECS:
        raise BindingError(f"fieldc.{name}: expected a vector Field, got {f.element}")
    return Field(name, (f,), element if element else f.element)


def length(v: Any) -> Field:
    """The length of a vector Field."""
    return _vec_fn("length", v, "f32")


def normalize(v: Any) -> Field:
    """The vector of length 1 along ``v`` (zero for a zero vector)."""
    return _vec_fn("normalize", v, "")


def dot(a: Any, b: Any) -> Field:
    """The dot product of two vectors of one size."""
    a, b = as_field(a), as_field(b)
    if a.element not in VECS or a.element != b.element:
        raise BindingError(
            f"fieldc.dot: expected two vectors of one size, got {a.element} and {b.element}"
        )
    return Field("dot", (a, b), "f32")


def _math(name: str, x: Any) -> Field:
    return Field(name, (_float(_scalar(as_field(x), name)),), "f32")


def abs_(x: Any) -> Field:
    """The absolute value (lane by lane for vectors)."""
    f = as_field(x)
    return Field("abs", (f,), f.element)


def floor(x: Any) -> Field:
    """The greatest whole number at or below ``x`` (Float)."""
    return _math("floor", x)


def sqrt(x: Any) -> Field:
    """The square root (Float)."""
    return _math("sqrt", x)


def sin(x: Any) -> Field:
    """The sine (Float)."""
    return _math("sin", x)


def cos(x: Any) -> Field:
    """The cosine (Float)."""
    return _math("cos", x)


def to_float(x: Any) -> Field:
    """The value as a Float."""
    return _float(_scalar(as_field(x), "to_float"))


def to_int(x: Any) -> Field:
    """The value as an Int (truncated toward zero)."""
    f = _scalar(as_field(x), "to_int")
    return f if f.element == "i32" else Field("to_int", (f,), "i32")


def _vec(n: int, parts: tuple[Any, ...]) -> Field:
    if len(parts) != n:
        raise BindingError(f"fieldc.vec{n}: expected {n} scalars, got {len(parts)}")
    fs = tuple(_float(_scalar(as_field(p), f"vec{n}")) for p in parts)
    return Field(f"vec{n}", fs, f"vec{n}")


def vec2(x: Any, y: Any) -> Field:
    """A Vec2 Field of two scalars."""
    return _vec(2, (x, y))


def vec3(x: Any, y: Any, z: Any) -> Field:
    """A Vec3 Field of three scalars."""
    return _vec(3, (x, y, z))


def vec4(x: Any, y: Any, z: Any, w: Any) -> Field:
    """A Vec4 Field of four scalars."""
    return _vec(4, (x, y, z, w))


def hash01(x: Any, seed: Any = 0) -> Field:
    """A hash of an Int (or the bits of a Float) and a seed, as a Float in [0, 1)."""
    f = _scalar(as_field(x), "hash01")
    s = as_field(seed)
    return Field("hash01", (f, _scalar(s, "hash01(seed)")), "f32")


def noise(p: Any, seed: Any = 0) -> Field:
    """Value noise in [0, 1) at ``p`` (a Float, Vec2 or Vec3): hashed lattice values, smoothed.

    Raises:
        BindingError: ``p`` of another element.
    """
    f = as_field(p)
    if f.element == "vec4":
        raise BindingError("fieldc.noise: expected a Float, Vec2 or Vec3, got vec4")
    f = _float(f) if f.element not in VECS else f
    return Field("noise", (f, _scalar(as_field(seed), "noise(seed)")), "f32")
