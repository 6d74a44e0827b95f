"""Casts by value between Float, Int and UInt columns (one Warp module, built once).

A value the target word cannot hold saturates: a Float above the largest Int (UInt) reads
as the largest, below the least as the least, NaN as 0; a UInt above 2**31 - 1 read as Int
is 2**31 - 1 and a negative Int read as UInt is 0. Nothing wraps, on every device.
"""

from __future__ import annotations

from typing import Any

import warp as wp


@wp.kernel
def _f32_to_i32(src: wp.array(dtype=wp.float32), dst: wp.array(dtype=wp.int32)):
    i = wp.tid()
    x = src[i]
    r = wp.int32(0)
    if x >= 2147483648.0:
        r = wp.int32(2147483647)
    elif x <= -2147483648.0:
        r = wp.int32(-2147483647 - 1)
    elif x == x:
        r = wp.int32(x)
    dst[i] = r


@wp.kernel
def _f32_to_u32(src: wp.array(dtype=wp.float32), dst: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    x = src[i]
    r = wp.uint32(0)
    if x >= 4294967296.0:
        r = wp.uint32(0) - wp.uint32(1)  # the largest u32
    elif x > 0.0:
        r = wp.uint32(x)
    dst[i] = r


@wp.kernel
def _i32_to_f32(src: wp.array(dtype=wp.int32), dst: wp.array(dtype=wp.float32)):
    i = wp.tid()
    dst[i] = wp.float32(src[i])


@wp.kernel
def _u32_to_f32(src: wp.array(dtype=wp.uint32), dst: wp.array(dtype=wp.float32)):
    i = wp.tid()
    dst[i] = wp.float32(src[i])


@wp.kernel
def _i32_to_u32(src: wp.array(dtype=wp.int32), dst: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    dst[i] = wp.uint32(wp.max(src[i], 0))


@wp.kernel
def _u32_to_i32(src: wp.array(dtype=wp.uint32), dst: wp.array(dtype=wp.int32)):
    i = wp.tid()
    dst[i] = wp.int32(wp.min(src[i], wp.uint32(2147483647)))


_KERNELS = {
    ("f32", "i32"): (_f32_to_i32, wp.int32),
    ("f32", "u32"): (_f32_to_u32, wp.uint32),
    ("i32", "f32"): (_i32_to_f32, wp.float32),
    ("u32", "f32"): (_u32_to_f32, wp.float32),
    ("i32", "u32"): (_i32_to_u32, wp.uint32),
    ("u32", "i32"): (_u32_to_i32, wp.int32),
}


def can_cast(src: str, dst: str) -> bool:
    """True when a column of word kind ``src`` can be read by value as ``dst``."""
    return src == dst or (src, dst) in _KERNELS


def cast(ctx: Any, arr: wp.array, src: str, dst: str) -> wp.array:
    """Returns a new array holding ``arr``'s values as ``dst`` words (one launch)."""
    kernel, dtype = _KERNELS[(src, dst)]
    out = ctx.empty(arr.shape[0], dtype)
    ctx.launch(kernel, arr.shape[0], [arr, out])
    return out
