"""device.kernel's uniforms: Vec values spread over their lanes, and each value checked
against the word its param is (an int that would wrap, a float past float32)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
import warp as wp

from .. import _warp_compat
from ..columns import Column, Domain, LiveCount, Texture
from ..dynamic import cast, is_dynamic, peek
from ..elements import F32_MAX, WORD_RANGES, XYZW
from ..errors import BindingError


def _describe(v: Any) -> str:
    if isinstance(v, Column | LiveCount | Texture | Domain):
        return repr(v)
    if isinstance(v, wp.array):
        return f"wp.array(dtype={v.dtype.__name__}, shape={v.shape})"
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _spread_uniforms(given: Mapping[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, v in given.items():
        if isinstance(v, bool | np.bool_):
            out[name] = 1 if v else 0
        elif _is_number(v):
            out[name] = v
        elif isinstance(v, tuple | list | np.ndarray) or wp.types.type_is_vector(type(v)):
            lanes = [cast(x, float) for x in v]  # a dynamic lane stays an expression
            if not 2 <= len(lanes) <= 4:
                raise BindingError(f"{where} {name!r}: expected a Vec of 2 to 4 numbers, got {v!r}")
            for lane, x in zip(XYZW, lanes):
                out[f"{name}_{lane}"] = x
        else:
            raise BindingError(
                f"{where} {name!r}: expected a Number, a Bool or a Vec, got {_describe(v)}"
            )
    return out


_INT_RANGES = {t: WORD_RANGES[t] for t in (wp.int32, wp.uint32)}


def _check_uniforms(call: Any) -> None:
    """Refuses an integer param given a value its word cannot hold (Warp would wrap it),
    and a float param given a finite value past float32's range (an int past float64's,
    10**400, or 1e300, which float32 would make inf).

    A whole float is taken as the int it is; a dynamic value is checked by its current
    value without noting a use (a replay sets it again).
    """
    types = {a.label: a.type for a in _warp_compat.kernel_args(call.v.kernel)}
    for name, v in call.uniforms.items():
        t = types.get(name)
        t = wp.int32 if t is int else t
        x = peek(v)
        if t in (float, wp.float32):
            _check_float(call.name, name, x)
            continue
        if t not in _INT_RANGES:
            continue
        lo, hi = _INT_RANGES[t]
        whole = _is_number(x) and math.isfinite(x) and float(x).is_integer()
        if not whole or not lo <= x <= hi:
            raise BindingError(
                f"{call.name}: uniform {name!r}: expected a whole Number in [{lo}, {hi}] "
                f"({t.__name__}), got {x!r}"
            )
        if not is_dynamic(v) and not isinstance(v, int):
            call.uniforms[name] = int(x)


def _check_float(kernel: str, name: str, x: Any) -> None:
    """Refuses a finite Number float32 cannot hold (NaN and inf given as floats pass)."""
    if not _is_number(x):
        return
    try:
        f = float(x)
    except OverflowError:  # an int past float64
        f, given = math.inf, f"an int of {len(str(abs(int(x))))} digits"
    else:
        if not math.isfinite(f) and not isinstance(x, numbers.Integral):
            return  # NaN and inf given as floats are the caller's choice
        given = repr(x)
    if abs(f) <= F32_MAX:
        return
    raise BindingError(
        f"{kernel}: uniform {name!r}: expected a Number within float32's range "
        f"[-{F32_MAX:.7g}, {F32_MAX:.7g}], got {given}"
    )
