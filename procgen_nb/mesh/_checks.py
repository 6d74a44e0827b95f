"""The checks of a mesh call's inputs: whole numbers, lengths and triangle soups, each
refused with an error naming the input, the value and what is accepted."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParamsError, UploadError
from ._shapes import Mesh


def _whole(value: Any, what: str, low: int) -> int:
    """``value`` as an int, or a ParamsError naming ``what``: a whole number >= ``low``."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or value < low:
        raise ParamsError(f"{what}: expected an integer >= {low}, got {value!r}")
    return int(value)


def _length(value: Any, what: str) -> float:
    """``value`` as a float, or a ParamsError naming ``what``: a finite number > 0."""
    real = isinstance(value, int | float | np.integer | np.floating)
    if isinstance(value, bool | np.bool_) or not real or not (np.isfinite(value) and value > 0):
        raise ParamsError(f"{what}: expected a finite number > 0, got {value!r}")
    return float(value)


def _soup(m: Any, name: str) -> np.ndarray:
    if isinstance(m, Mesh):
        s = m.soup()
    else:
        try:
            with np.errstate(over="ignore"):  # past float32's range: refused below
                s = np.asarray(m, np.float32)
        except (TypeError, ValueError) as e:
            raise UploadError(
                f"mesh_intersect {name}: expected a Mesh or (3m, 3) triangle corners, got "
                f"{type(m).__name__} ({e})"
            ) from None
        if s.ndim == 3:
            s = s.reshape(-1, 3)
    if s.ndim != 2 or s.shape[1] != 3 or len(s) % 3:
        raise UploadError(
            f"mesh_intersect {name}: expected a Mesh or (3m, 3) triangle corners, got shape {s.shape}"
        )
    if not np.isfinite(s).all():
        raise UploadError(
            f"mesh_intersect {name}: expected corners finite in float32 (|x| < 3.4e38), got a "
            "NaN, an inf or a value past that range"
        )
    return np.ascontiguousarray(s, np.float32)
