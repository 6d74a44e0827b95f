"""Dynamic Params fields in device buffers: the dtype and value a field's buffer holds."""

from __future__ import annotations

from typing import Any

import warp as wp

from ..params import Params


def param_dtype(pcls: type[Params], name: str) -> Any:
    """Returns the Warp dtype of field ``name``'s one-element buffer (int32 or float32)."""
    t = pcls.fields()[name].type
    return wp.int32 if t in (int, bool) else wp.float32


def param_value(pcls: type[Params], name: str, value: Any) -> Any:
    """Returns ``value`` as the Python scalar written to field ``name``'s buffer."""
    t = pcls.fields()[name].type
    return int(value) if t in (int, bool) else float(value)


__all__ = ["param_dtype", "param_value"]
