"""The ``wp.func``s of the loop checks: the clearance search and the turning number (used by
``_validity_kernels``; the crossing test is ``_crossing_funcs``).
"""

from __future__ import annotations

import warp as wp

from .funcs import ccw

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})

#: points per leaf block of the clearance search, and leaves per group
_LEAF = wp.constant(4)
_FAN = wp.constant(4)
_GROUP = wp.constant(16)


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
def _far_pairs(a0: int, a1: int, b0: int, b1: int, n: int, dmin: int) -> int:
    """Which pairs ``i`` in ``[a0, a1)``, ``j > i`` in ``[b0, b1)`` (``b0 == a0`` or
    ``b0 >= a1``) are at least ``dmin`` apart along the loop: 0 none, 1 some, 2 all."""
    lo = b0 - a1 + 1
    hi = b1 - 1 - a0
    if b0 == a0:
        lo = 1
    if hi < lo:
        return 0
    half = n // 2
    most = half
    if hi <= half:
        most = hi
    elif lo >= n - half:
        most = n - lo
    if most < dmin:
        return 0
    if wp.min(wp.min(lo, n - lo), wp.min(hi, n - hi)) >= dmin:
        return 2
    return 1


@wp.func
def _apart(p: wp.vec4, q: wp.vec4, w: float) -> bool:
    """True when boxes ``p`` and ``q`` are ``w`` or more apart along x or along y: no point
    of one is then closer than ``w`` to a point of the other, in float32 too (rounding is
    monotone: a coordinate difference is at least the gap, its square at least ``w * w``)."""
    gx = wp.max(q[0] - p[2], p[0] - q[2])
    gy = wp.max(q[1] - p[3], p[1] - q[3])
    return gx >= w or gy >= w


@wp.func
def _close_pair(
    xy: wp.array(dtype=wp.vec2),
    base: int,
    n: int,
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    dmin: int,
    far: int,
    w2: float,
) -> int:
    """1 when a pair ``i`` in ``[a0, a1)``, ``j > i`` in ``[b0, b1)``, at least ``dmin``
    apart along the loop (all of them when ``far == 2``), has ``length_sq < w2``."""
    for i in range(a0, a1):
        p = xy[base + i]
        for j in range(wp.max(b0, i + 1), b1):
            if far == 2 or _ring_offset(i, j, n) >= dmin:
                if wp.length_sq(p - xy[base + j]) < w2:
                    return 1
    return 0


@wp.func
def _close_leaves(
    xy: wp.array(dtype=wp.vec2), base: int, n: int, a0: int, b0: int, dmin: int, w2: float
) -> int:
    """``_close_pair`` for two whole leaves, every pair of their points at once (unrolled,
    branch-free; a pair within one leaf is met twice, a point with itself is 0 apart)."""
    hit = wp.int32(0)
    for s in range(_LEAF):
        p = xy[base + a0 + s]
        for t in range(_LEAF):
            d = wp.abs(b0 + t - a0 - s)
            far = wp.min(d, n - d) >= dmin
            near = wp.length_sq(p - xy[base + b0 + t]) < w2
            hit = hit | wp.where(far, wp.where(near, 1, 0), 0)
    return hit


@wp.func
def _leaf_box(xy: wp.array(dtype=wp.vec2), base: int, n: int, k: int) -> wp.vec4:
    """The box of leaf ``k``: its ``_LEAF`` points (fewer for the last leaf of a loop whose
    length is no multiple of it)."""
    i0 = k * _LEAF
    p = xy[base + i0]
    lo = p
    hi = p
    if i0 + _LEAF <= n:
        for s in range(1, _LEAF):
            p = xy[base + i0 + s]
            lo = wp.vec2(wp.min(lo[0], p[0]), wp.min(lo[1], p[1]))
            hi = wp.vec2(wp.max(hi[0], p[0]), wp.max(hi[1], p[1]))
    else:
        for i in range(i0 + 1, n):
            p = xy[base + i]
            lo = wp.vec2(wp.min(lo[0], p[0]), wp.min(lo[1], p[1]))
            hi = wp.vec2(wp.max(hi[0], p[0]), wp.max(hi[1], p[1]))
    return wp.vec4(lo[0], lo[1], hi[0], hi[1])


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

    The loop is cut into leaves of ``_LEAF`` consecutive points and groups of ``_FAN``
    leaves, each with its box; a pair of groups, then of leaves, is skipped when its boxes
    are ``w`` apart (``_apart``) or its index ranges hold no far pair, and the pairs of
    points of the leaves left are tested."""
    half = n // 2
    window = 0.5 * 3.14159265358979 * w
    w2 = w * w
    dmin = _far_offset(h, window, half)
    if dmin > half:
        return 0
    nl = (n + _LEAF - 1) // _LEAF
    ng = (n + _GROUP - 1) // _GROUP
    for g in range(ng):
        q = _leaf_box(xy, base, n, g * _FAN)
        box[bb + g * _FAN] = q
        for k in range(g * _FAN + 1, wp.min(g * _FAN + _FAN, nl)):
            c = _leaf_box(xy, base, n, k)
            box[bb + k] = c
            q = wp.vec4(
                wp.min(q[0], c[0]), wp.min(q[1], c[1]), wp.max(q[2], c[2]), wp.max(q[3], c[3])
            )
        box[bb + nl + g] = q
    for ga in range(ng):
        qa = box[bb + nl + ga]
        for gb in range(ga, ng):
            qb = box[bb + nl + gb]
            if _apart(qa, qb, w):
                continue
            if (
                _far_pairs(
                    ga * _GROUP,
                    wp.min(ga * _GROUP + _GROUP, n),
                    gb * _GROUP,
                    wp.min(gb * _GROUP + _GROUP, n),
                    n,
                    dmin,
                )
                == 0
            ):
                continue
            for ka in range(ga * _FAN, wp.min(ga * _FAN + _FAN, nl)):
                pa = box[bb + ka]
                if gb != ga and _apart(pa, qb, w):
                    continue
                a0 = ka * _LEAF
                a1 = wp.min(a0 + _LEAF, n)
                kb0 = gb * _FAN
                if gb == ga:
                    kb0 = ka
                for kb in range(kb0, wp.min(gb * _FAN + _FAN, nl)):
                    if _apart(pa, box[bb + kb], w):
                        continue
                    b0 = kb * _LEAF
                    b1 = wp.min(b0 + _LEAF, n)
                    far = _far_pairs(a0, a1, b0, b1, n, dmin)
                    if far != 0:
                        if a1 - a0 == _LEAF and b1 - b0 == _LEAF:
                            if _close_leaves(xy, base, n, a0, b0, dmin, w2) != 0:
                                return 1
                        elif _close_pair(xy, base, n, a0, a1, b0, b1, dmin, far, w2) != 0:
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
