"""Input checks shared by the configs and the public calls of track_gen.

The configs and the calls that take the same value check it the same way:
``TrackGenConfig(epoch=...)`` and ``TrackGenerator.generate(epoch=...)`` accept the same
epochs. Each check raises ``ParamsError`` with "<input>: expected ..., got ...".
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..errors import ParamsError

#: the epochs a config and ``generate(epoch=)`` accept (the device word is an int32)
EPOCH_RANGE = (0, (1 << 31) - 1)
#: the seeds a config accepts (stored as their signed 32-bit value)
SEED_RANGE = (-(1 << 31), (1 << 32) - 1)


def _is_integral(value: Any) -> bool:
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, numbers.Integral):
        return True
    if isinstance(value, numbers.Real):
        v = float(value)
        return math.isfinite(v) and v == int(v)
    return False


def check_int(label: str, value: Any, lo: int, hi: int | None = None) -> int:
    """Returns ``value`` as an int when it is an integer (or an integral finite float) in
    ``[lo, hi]`` (``>= lo`` when ``hi`` is None).

    Raises:
        ParamsError: anything else, named ``label`` in the message.
    """
    if not _is_integral(value):
        raise ParamsError(f"{label}: expected an integer, got {value!r}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ParamsError(f"{label}: expected an integer {rng}, got {value!r}")
    return v


def check_positive(label: str, value: Any, allow_zero: bool = False) -> float:
    """Returns ``value`` as a float when it is a finite number > 0 (>= 0 with ``allow_zero``).

    Raises:
        ParamsError: anything else (a bool, NaN, infinity, a string), named ``label``.
    """
    ok = not isinstance(value, bool | np.bool_) and isinstance(value, numbers.Real)
    if ok:
        v = float(value)
        ok = math.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if not ok:
        what = "a number >= 0" if allow_zero else "a positive number"
        raise ParamsError(f"{label}: expected {what}, got {value!r}")
    return float(value)


def check_epoch(label: str, value: Any) -> int:
    """Returns ``value`` as an epoch (an integer in ``EPOCH_RANGE``).

    Raises:
        ParamsError: another value (``generate(epoch=2**40)`` is refused, not wrapped).
    """
    return check_int(label, value, *EPOCH_RANGE)


def seed_list(label: str, seeds: Any, num_envs: int) -> tuple[int, ...]:
    """Returns ``num_envs`` explicit env seeds, each an integer in ``SEED_RANGE``.

    Raises:
        ParamsError: not a sequence (a single number, a string), another length, or a seed
            out of range.
    """
    if isinstance(seeds, str | bytes) or not hasattr(seeds, "__iter__"):
        raise ParamsError(f"{label}: expected a sequence of {num_envs} seeds, got {seeds!r}")
    values = list(seeds)
    if len(values) != num_envs:
        raise ParamsError(f"{label}: expected {num_envs} seeds, got {len(values)}")
    return tuple(check_int(f"{label}[]", v, *SEED_RANGE) for v in values)


def other_seed(seed: int, step: int = 1000003) -> int:
    """Returns a seed ``step`` away from ``seed`` that ``SEED_RANGE`` still holds (above it
    when there is room, else below): the "another seed" of the conformance kits."""
    return seed + step if seed + step <= SEED_RANGE[1] else seed - step


def mask_values(label: str, mask: Any, num_envs: int) -> np.ndarray:
    """Returns a host mask as ``[num_envs]`` int32 0/1 (1 where ``mask`` is non-zero).

    Accepted: ``num_envs`` bools, or integers of any size (integral floats too).

    Raises:
        ParamsError: a wrong length, a value that is not an integer or a bool (0.5, NaN,
            a string), named with its index, or a function (a predicate over metrics: a
            ``curriculum.MetricBand`` is the band that ``regenerate`` takes instead).
    """
    if callable(mask):
        raise ParamsError(
            f"{label}: expected a mask ({num_envs} integers or bools) or a "
            f"curriculum.MetricBand, got a function ({getattr(mask, '__name__', mask)!r}); "
            "MetricBand(metric, low, high) regenerates the envs outside a metric's band"
        )
    try:
        arr = np.asarray(mask)
    except (TypeError, ValueError) as exc:
        raise ParamsError(f"{label}: expected {num_envs} integers or bools, got {mask!r}") from exc
    flat = arr.reshape(-1)
    if flat.shape != (num_envs,):
        raise ParamsError(f"{label}: expected {num_envs} values, got {arr.shape}")
    kind = flat.dtype.kind
    if kind == "b":
        return flat.astype(np.int32)
    if kind in "iu":
        return (flat != 0).astype(np.int32)
    if kind == "f":
        bad = ~(np.isfinite(flat) & (flat == np.trunc(np.where(np.isfinite(flat), flat, 0))))
    elif kind == "O":
        bad = np.array([not (_is_integral(v) or isinstance(v, bool | np.bool_)) for v in flat])
    else:
        bad = np.ones(flat.shape, dtype=bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        v = flat[i].item() if isinstance(flat[i], np.generic) else flat[i]
        raise ParamsError(
            f"{label}: expected {num_envs} integers or bools (non-zero regenerates), got "
            f"{v!r} at index {i}"
        )
    return np.array([1 if v != 0 else 0 for v in flat], dtype=np.int32)


__all__ = [
    "EPOCH_RANGE",
    "SEED_RANGE",
    "check_epoch",
    "check_int",
    "check_positive",
    "mask_values",
    "other_seed",
    "seed_list",
]
