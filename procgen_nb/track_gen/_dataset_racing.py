"""A dataset's racing columns: ``config["racing"]`` resolved to plain JSON values, and the
``racing_line`` keyword arguments a shard runs with.

``config["racing"]`` is True (the defaults) or a dict of ``VehicleParams`` fields (``mu``,
``v_max``, ``a_max``, ``width``, ``g``) and ``scale`` (metres per world unit, 1.0) and
``w_right`` / ``w_left`` (world units each side; both default to half the validity
``track_width``, which must then be > 0). Each shard's rows then gain the columns of
``racing.LAP_METRICS`` (``lap_time``, ``mean_speed``, ``full_throttle_fraction``,
``difficulty``), float32, after the metrics.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from typing import Any

from ..errors import ParamsError
from .racing import LAP_METRICS, VehicleParams, _positive

_VEHICLE = tuple(f.name for f in dataclasses.fields(VehicleParams))
_KEYS = (*_VEHICLE, "scale", "w_right", "w_left")


def resolve(racing: Any, validity: Mapping[str, Any]) -> dict[str, Any] | None:
    """Returns ``config["racing"]`` with every default filled in (None: no racing columns).

    Raises:
        ParamsError: not a dict or True, an unknown key, a value ``VehicleParams`` refuses,
            a ``scale`` or width that is not a finite number > 0 (>= 0 for a width), one
            width without the other, or no widths and a validity ``track_width`` of 0.
    """
    if racing is None or racing is False:
        return None
    if racing is True:
        racing = {}
    if not isinstance(racing, Mapping):
        raise ParamsError(
            f"dataset config racing: expected True or a dict of {list(_KEYS)}, got {racing!r}"
        )
    unknown = sorted(set(racing) - set(_KEYS))
    if unknown:
        raise ParamsError(
            f"dataset config racing: expected keys among {list(_KEYS)}, got {unknown}"
        )
    veh = VehicleParams(**{k: racing[k] for k in _VEHICLE if k in racing})
    out: dict[str, Any] = {k: getattr(veh, k) for k in _VEHICLE}
    out["scale"] = _positive("scale", racing.get("scale", 1.0), owner="dataset config racing")
    wr, wl = racing.get("w_right"), racing.get("w_left")
    if (wr is None) != (wl is None):
        raise ParamsError("dataset config racing w_right/w_left: expected both or neither, got one")
    if wr is None:
        tw = float(validity.get("track_width", 0.0))
        if not tw > 0:
            raise ParamsError(
                "dataset config racing w_right/w_left: expected widths (world units) or a "
                f"validity track_width > 0, got track_width {tw!r}"
            )
        wr = wl = tw / 2.0
    for name, v in (("w_right", wr), ("w_left", wl)):
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise ParamsError(f"dataset config racing {name}: expected a number, got {v!r}")
        out[name] = _positive(name, v, zero_ok=True, owner="dataset config racing")
    return out


def kwargs(spec: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``racing_line`` keyword arguments of a resolved spec (None without racing)."""
    racing = spec.get("racing")
    if not racing:
        return None
    veh = VehicleParams(**{k: racing[k] for k in _VEHICLE})
    return {"vehicle": veh, "scale": racing["scale"], "w_right": racing["w_right"],
            "w_left": racing["w_left"]}  # fmt: skip


def names(spec: Mapping[str, Any]) -> list[str]:
    """The racing column names of a resolved spec (none without racing)."""
    return list(LAP_METRICS) if spec.get("racing") else []


__all__ = ["kwargs", "names", "resolve"]
