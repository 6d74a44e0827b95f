"""Dynamic Params fields in device buffers: the dtype and value a field's buffer holds.

A dynamic field and a graph node's dynamic parameter are one kind of value: given a node's
dynamic number (``procgen_nb.dynamic``), a field's buffer is filled with the expression a
graph replay evaluates (``fill_value``), so a node that moves the field replays without
planning again, and a value the field refuses makes the replay plan again (and refuse).
"""

from __future__ import annotations

from typing import Any

import warp as wp

from ..dynamic import apply, is_dynamic, leaves, mark_host, peek
from ..params import Params


def param_dtype(pcls: type[Params], name: str) -> Any:
    """Returns the Warp dtype of field ``name``'s one-element buffer (int32 or float32)."""
    t = pcls.fields()[name].type
    return wp.int32 if t in (int, bool) else wp.float32


def param_value(pcls: type[Params], name: str, value: Any) -> Any:
    """Returns ``value`` as the Python scalar written to field ``name``'s buffer."""
    t = pcls.fields()[name].type
    return int(value) if t in (int, bool) else float(value)


def fill_value(pcls: type[Params], name: str, value: Any, owner: str) -> Any:
    """Returns what field ``name``'s buffer is filled with: ``param_value`` of a plain value,
    or, for a dynamic number, the expression of it a replay evaluates (the Field's check,
    then ``param_value``: a value the field refuses raises there, and the graph plans
    again)."""
    if not is_dynamic(value):
        return param_value(pcls, name, value)
    field = pcls.fields()[name]

    def checked(v: Any) -> Any:
        return param_value(pcls, name, field.check(v, owner))

    return apply(checked, f"{owner}.{name}", value)


def checked_now(pcls: type[Params], values: Any) -> dict[str, Any]:
    """Returns ``values`` with every dynamic number at its current value, for the Params
    class to check: read without a mark for a dynamic field (its buffer is filled with the
    expression), read in Python for a static one (the node plans again when it moves)."""
    dyn = set(pcls.dynamic_fields())
    out = {}
    for k, v in values.items():
        if is_dynamic(v) and k not in dyn:
            mark_host(leaves(v))
        out[k] = peek(v)
    return out


__all__ = ["checked_now", "fill_value", "param_dtype", "param_value"]
