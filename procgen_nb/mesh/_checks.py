"""The checks of a mesh call's inputs: whole numbers, lengths, points and the arrays of a
mesh, each refused with an error naming the input, the value and what is accepted."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParamsError


def _whole(value: Any, what: str, low: int, high: int | None = None) -> int:
    """``value`` as an int, or a ParamsError naming ``what``: a whole number >= ``low``
    (and <= ``high`` when given)."""
    ok = not isinstance(value, bool | np.bool_) and isinstance(value, int | np.integer)
    if not ok or value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ParamsError(f"{what}: expected an integer {rng}, got {value!r}")
    return int(value)


def _length(value: Any, what: str) -> float:
    """``value`` as a float, or a ParamsError naming ``what``: a finite number > 0."""
    real = isinstance(value, int | float | np.integer | np.floating)
    if isinstance(value, bool | np.bool_) or not real or not (np.isfinite(value) and value > 0):
        raise ParamsError(f"{what}: expected a finite number > 0, got {value!r}")
    return float(value)


def _first_bad(bad: np.ndarray, values: np.ndarray) -> str:
    """``values[i]`` at the first True of ``bad``, as "<value> at [i, j]"."""
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    v = values[at]
    return f"{v.item() if isinstance(v, np.generic) else v!r} at {list(at)}"


def _point3(value: Any, what: str) -> np.ndarray:
    """``value`` as a (3,) float64 point, or a ParamsError naming ``what``: 3 finite
    numbers."""
    try:
        p = np.asarray(value)
    except (TypeError, ValueError):
        p = np.asarray(None)
    if p.shape != (3,) or p.dtype.kind not in "iuf" or not np.isfinite(p).all():
        raise ParamsError(f"{what}: expected 3 finite numbers (x, y, z), got {value!r}")
    return p.astype(np.float64)


def _rows3(value: Any, name: str, kinds: str, empty: Any, expected: str) -> np.ndarray:
    """``value`` as an (n, 3) array of a dtype kind in ``kinds`` (an empty one as (0, 3)
    of ``empty``), or a ParamsError naming ``name``: ``expected``."""
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):
        a = np.asarray(None)
    if a.size == 0 and a.dtype.kind in "iufO":
        a = np.zeros((0, 3), empty)
    if a.dtype.kind not in kinds or a.ndim != 2 or a.shape[1] != 3:
        got = f"shape {a.shape}, dtype {a.dtype}" if a.dtype.kind != "O" else repr(value)
        raise ParamsError(f"{name}: expected {expected}, got {got}")
    return a


def _mesh_arrays(vertices: Any, faces: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``vertices`` and ``faces`` as arrays (floating vertices keep their dtype; integer
    vertices become float32), or a ParamsError naming ``what``: vertices (V, 3) finite
    numbers, faces (F, 3) integers in [0, V)."""
    want_v = "(V, 3) finite numbers"
    v = _rows3(vertices, f"{what} vertices", "iuf", np.float32, want_v)
    if v.dtype.kind != "f":
        v = v.astype(np.float32)
    if not np.isfinite(v).all():
        raise ParamsError(
            f"{what} vertices: expected {want_v}, got {_first_bad(~np.isfinite(v), v)}"
        )
    want_f = f"(F, 3) integer vertex ids in [0, {len(v)})"
    f = _rows3(faces, f"{what} faces", "iu", np.int32, want_f)
    bad = (f < 0) | (f >= len(v))
    if bad.any():
        raise ParamsError(f"{what} faces: expected {want_f}, got {_first_bad(bad, f)}")
    return v, f


def _corners(value: Any, what: str, error: type[ParamsError] | Any = ParamsError) -> np.ndarray:
    """``value`` as (3m, 3) corners (given (3m, 3) or (m, 3, 3)), or an ``error`` naming
    ``what``: three corners per triangle, numbers (finiteness is the caller's)."""
    try:
        with np.errstate(over="ignore"):
            s = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise error(
            f"{what}: expected a Mesh or (3m, 3) triangle corners, got {type(value).__name__} ({e})"
        ) from None
    if s.dtype.kind not in "iuf":
        raise error(
            f"{what}: expected a Mesh or (3m, 3) triangle corners, got {type(value).__name__} "
            f"of dtype {s.dtype}"
        )
    if s.ndim == 3 and s.shape[1:] == (3, 3):
        s = s.reshape(-1, 3)
    if s.ndim != 2 or s.shape[1] != 3 or len(s) % 3:
        raise error(f"{what}: expected a Mesh or (3m, 3) triangle corners, got shape {s.shape}")
    return s
