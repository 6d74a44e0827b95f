"""The ``wp.func``s of the loop checks: the clearance grid and the turning number (used by
``_validity_kernels``; the crossing test is ``_crossing_funcs``).
"""

from __future__ import annotations

import warp as wp

from .funcs import ccw

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})

_MASK16 = wp.constant(0xFFFF)


@wp.func
def _vcell(p: wp.vec2, ox: float, oy: float, inv: float, gx: int, gy: int) -> int:
    cx = wp.clamp(int((p[0] - ox) * inv), 0, gx - 1)
    cy = wp.clamp(int((p[1] - oy) * inv), 0, gy - 1)
    return cx | (cy << 16)


@wp.func
def _adjacent(i: int, j: int, n: int) -> bool:
    d = wp.abs(i - j)
    return d <= 1 or d >= n - 1


@wp.func
def _grid_build(
    xy: wp.array(dtype=wp.vec2),
    base: int,
    n: int,
    ox: float,
    oy: float,
    inv: float,
    gx: int,
    gy: int,
    start: wp.array(dtype=wp.int32),
    sb: int,
    items: wp.array(dtype=wp.int32),
    ib: int,
    cap: int,
    vcell: wp.array(dtype=wp.int32),
    vb: int,
) -> int:
    """Buckets segment i (vertex i to i+1) into every cell its bounding box covers.

    Cell c's segments are ``items[ib + start[sb+c+1] : ib + start[sb+c+2]]`` (ascending).
    Returns the number of entries, or -1 when they exceed ``cap``.
    """
    c = gx * gy
    for k in range(c + 2):
        start[sb + k] = 0
    for i in range(n):
        vcell[vb + i] = _vcell(xy[base + i], ox, oy, inv, gx, gy)
    total = wp.int32(0)
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        va = vcell[vb + i]
        vz = vcell[vb + j]
        if va == vz:
            s0 = sb + (va & _MASK16) + (va >> 16) * gx + 1
            start[s0] = start[s0] + 1
            total += 1
        else:
            x0 = wp.min(va & _MASK16, vz & _MASK16)
            x1 = wp.max(va & _MASK16, vz & _MASK16)
            y0 = wp.min(va >> 16, vz >> 16)
            y1 = wp.max(va >> 16, vz >> 16)
            total += (x1 - x0 + 1) * (y1 - y0 + 1)
            if total > cap:
                return -1
            for cy in range(y0, y1 + 1):
                for cx in range(x0, x1 + 1):
                    s1 = sb + cy * gx + cx + 1
                    start[s1] = start[s1] + 1
    if total > cap:
        return -1
    for k in range(c):
        start[sb + k + 1] = start[sb + k + 1] + start[sb + k]
    for ii in range(n):
        i = n - 1 - ii
        j = i + 1
        if j == n:
            j = 0
        va = vcell[vb + i]
        vz = vcell[vb + j]
        x0 = wp.min(va & _MASK16, vz & _MASK16)
        x1 = wp.max(va & _MASK16, vz & _MASK16)
        y0 = wp.min(va >> 16, vz >> 16)
        y1 = wp.max(va >> 16, vz >> 16)
        for cy in range(y0, y1 + 1):
            for cx in range(x0, x1 + 1):
                s = sb + cy * gx + cx + 1
                slot = start[s] - 1
                start[s] = slot
                items[ib + slot] = i
    start[sb + c + 1] = total
    return total


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
