"""The ``wp.func``s of the loop checks: the clearance search and the turning number (used by
``_validity_kernels``; the crossing test is ``_crossing_funcs``).
"""

from __future__ import annotations

import warp as wp

from .funcs import ccw

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})

#: points per block of the clearance search
_BLOCK = wp.constant(8)


@wp.func
def _far_offset(h: float, window: float, half: int) -> int:
    """The smallest ring offset ``d`` in ``[1, half]`` with ``float(d) * h > window`` (float32,
    as the definition reads; the product grows with ``d``), or ``half + 1`` when none."""
    lo = wp.int32(1)
    hi = half + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if float(mid) * h > window:
            hi = mid
        else:
            lo = mid + 1
    return lo


@wp.func
def _ring_offset(i: int, j: int, n: int) -> int:
    d = wp.abs(j - i)
    return wp.min(d, n - d)


@wp.func
def _too_close(
    xy: wp.array(dtype=wp.vec2),
    base: int,
    n: int,
    h: float,
    w: float,
    box: wp.array(dtype=wp.vec4),
    bb: int,
) -> int:
    """1 when two points at least ``_far_offset`` apart along the loop are closer than ``w``
    (``length_sq < w * w`` in float32), else 0; stops at the first such pair.

    The loop is cut into blocks of ``_BLOCK`` consecutive points; a pair of blocks whose
    boxes are ``w`` or more apart along x or y holds no close pair (float32 rounding is
    monotone: a point difference is at least the gap of the boxes, its square at least
    ``w * w``), nor one whose index ranges hold no far pair; the others are tested point
    against point."""
    half = n // 2
    window = 0.5 * 3.14159265358979 * w
    w2 = w * w
    dmin = _far_offset(h, window, half)
    if dmin > half:
        return 0
    nb = (n + _BLOCK - 1) // _BLOCK
    for k in range(nb):
        i0 = k * _BLOCK
        i1 = wp.min(i0 + _BLOCK, n)
        p = xy[base + i0]
        lo = p
        hi = p
        for i in range(i0 + 1, i1):
            p = xy[base + i]
            lo = wp.vec2(wp.min(lo[0], p[0]), wp.min(lo[1], p[1]))
            hi = wp.vec2(wp.max(hi[0], p[0]), wp.max(hi[1], p[1]))
        box[bb + k] = wp.vec4(lo[0], lo[1], hi[0], hi[1])
    for a in range(nb):
        ba = box[bb + a]
        a0 = a * _BLOCK
        a1 = wp.min(a0 + _BLOCK, n)
        for b in range(a, nb):
            bx = box[bb + b]
            gx = wp.max(bx[0] - ba[2], ba[0] - bx[2])
            gy = wp.max(bx[1] - ba[3], ba[1] - bx[3])
            if gx < w and gy < w:
                b0 = b * _BLOCK
                b1 = wp.min(b0 + _BLOCK, n)
                for i in range(a0, a1):
                    p = xy[base + i]
                    for j in range(wp.max(b0, i + 1), b1):
                        if _ring_offset(i, j, n) >= dmin:
                            if wp.length_sq(p - xy[base + j]) < w2:
                                return 1
    return 0


@wp.func
def _turn_step(u: wp.vec2, v: wp.vec2) -> int:
    """+1 / -1 when turning from edge u to edge v (the smaller way) passes direction +x."""
    if wp.length_sq(u) == 0.0 or wp.length_sq(v) == 0.0:
        return 0
    cr = ccw(wp.vec2(0.0, 0.0), u, v)
    if u[1] < 0.0 and v[1] >= 0.0 and cr > wp.float64(0.0):
        return 1
    if v[1] < 0.0 and u[1] >= 0.0 and cr < wp.float64(0.0):
        return -1
    return 0


@wp.func
def _turning(xy: wp.array(dtype=wp.vec2), base: int, n: int) -> int:
    s = wp.int32(0)
    u = xy[base] - xy[base + n - 1]
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        v = xy[base + j] - xy[base + i]
        s += _turn_step(u, v)
        u = v
    return s


@wp.func
def _bounds(xy: wp.array(dtype=wp.vec2), base: int, n: int) -> wp.vec4:
    lo = xy[base]
    hi = xy[base]
    for i in range(1, n):
        p = xy[base + i]
        lo = wp.vec2(wp.min(lo[0], p[0]), wp.min(lo[1], p[1]))
        hi = wp.vec2(wp.max(hi[0], p[0]), wp.max(hi[1], p[1]))
    return wp.vec4(lo[0], lo[1], hi[0], hi[1])
