"""Casts by value between Float, Int and UInt columns (one Warp module, built once)."""

from __future__ import annotations

from typing import Any

import warp as wp


@wp.kernel
def _f32_to_i32(src: wp.array(dtype=wp.float32), dst: wp.array(dtype=wp.int32)):
    i = wp.tid()
    dst[i] = wp.int32(src[i])


@wp.kernel
def _f32_to_u32(src: wp.array(dtype=wp.float32), dst: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    dst[i] = wp.uint32(wp.max(src[i], 0.0))


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
    dst[i] = wp.int32(src[i])


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
