"""What the ops check before a launch: every array they bind is a 1-d ``wp.array`` of the
right dtype, long enough for every index the kernel reads or writes, and every size is an
integer in range. A ``None`` (what a 0.1 port passes for a scratch buffer the legacy
helper allocated) is refused with the name of the helper that allocates it, never launched.
"""

from __future__ import annotations

from typing import Any

import warp as wp

from ...errors import ParamsError
from .._checks import check_int

_DTYPES = {wp.int32: "int32", wp.float32: "float32", wp.vec2: "vec2"}

#: how to allocate a buffer no helper of the ops allocates
BUILD = "allocate it with b.scratch in a Stage's build, or wp.zeros in alloc_scratch"


def need_array(
    op: str, name: str, arr: Any, dtype: Any, length: int, helper: str, prefix: str = "ops."
) -> wp.array:
    """Returns ``arr`` when it is a 1-d ``wp.array`` of ``dtype`` with at least ``length``
    elements.

    Args:
        op: the op's name (``"resample_uniform"``).
        name: the parameter's name.
        helper: what allocates such a buffer, for the message.
        prefix: put before ``op`` in the message (a legacy helper passes its module's).

    Raises:
        ParamsError: None, another type, dtype or rank, or too few elements.
    """
    what = f"a 1-d {_DTYPES.get(dtype, dtype)} wp.array of at least {length} elements ({helper})"
    if arr is None:
        raise ParamsError(f"{prefix}{op} {name}: expected {what}, got None")
    if not isinstance(arr, wp.array):
        raise ParamsError(f"{prefix}{op} {name}: expected {what}, got {type(arr).__name__}")
    if arr.ndim != 1 or arr.dtype != dtype:
        raise ParamsError(
            f"{prefix}{op} {name}: expected {what}, got a {arr.ndim}-d "
            f"{_DTYPES.get(arr.dtype, arr.dtype)} array"
        )
    if arr.shape[0] < length:
        raise ParamsError(f"{prefix}{op} {name}: expected {what}, got {arr.shape[0]} elements")
    return arr


def need_masks(op: str, num_envs: int, **arrays: Any) -> None:
    """Checks each optional ``[num_envs]`` int32 array (a count or a mask) that is not None.

    Raises:
        ParamsError: as ``need_array``.
    """
    for name, arr in arrays.items():
        if arr is not None:
            need_array(op, name, arr, wp.int32, num_envs, f"[num_envs] int32; {BUILD}")


def need_scratch(op: str, name: str, scratch: Any, cls: type, helper: str) -> Any:
    """Returns ``scratch`` when it is a ``cls`` (an ``ArcScratch`` or a ``GridScratch``).

    Raises:
        ParamsError: None or another type, with the helper that allocates one.
    """
    if not isinstance(scratch, cls):
        got = "None" if scratch is None else type(scratch).__name__
        raise ParamsError(f"ops.{op} {name}: expected an ops.{cls.__name__} ({helper}), got {got}")
    return scratch


def need_size(op: str, name: str, value: Any, lo: int = 1) -> int:
    """Returns ``value`` as an int >= ``lo`` (a count or a size).

    Raises:
        ParamsError: a bool, a non-integer or a value below ``lo``.
    """
    return check_int(f"ops.{op} {name}", value, lo, (1 << 31) - 1)


__all__ = ["BUILD", "need_array", "need_masks", "need_scratch", "need_size"]
