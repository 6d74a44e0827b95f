"""The kernels of ``track_gen.metrics``: one thread per env, then one thread per point.

Everything is evaluated in float64 from the float32 centerline, so the values agree with a
float64 NumPy reference to rounding, and thresholds (straight or not, a pair far enough
apart along the loop or not) decide the same way.
"""

from __future__ import annotations

import warp as wp

from ..device import _init_warp

_init_warp()

# portable bytes: no host-specific ISA flags, no FMA contraction (as the ops library); Warp's
# inlining thresholds kept (its calls are small functions: without them a loop is ~5x slower)
wp.set_module_options(
    {
        "cpu_compiler_flags": "-ffp-contract=off -mllvm=-inline-threshold=9000"
        " -mllvm=-inline-cold-callsite-threshold=3000"
    }
)

_PI = wp.constant(wp.float64(3.14159265358979323846))
_INF = wp.constant(wp.float64(1.0e300))


@wp.func
def _d(v: wp.vec2) -> wp.vec2d:
    return wp.vec2d(wp.float64(v[0]), wp.float64(v[1]))


@wp.func
def _cross(u: wp.vec2d, v: wp.vec2d) -> wp.float64:
    return u[0] * v[1] - u[1] * v[0]


@wp.kernel
def _env_metrics_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    straight_ratio: wp.float64,
    length: wp.array(dtype=wp.float64),
    hmax: wp.array(dtype=wp.float64),
    min_radius: wp.array(dtype=wp.float32),
    max_curv: wp.array(dtype=wp.float32),
    turning: wp.array(dtype=wp.int32),
    straight: wp.array(dtype=wp.float32),
    ext_x: wp.array(dtype=wp.float32),
    ext_y: wp.array(dtype=wp.float32),
    clearance: wp.array(dtype=wp.float64),
):
    """Per env: length, longest segment, turn radius, curvature, turning number, straight
    share and extent; seeds ``clearance`` with its cap L/pi."""
    e = wp.tid()
    base = e * n
    finite = wp.int32(1)
    total = wp.float64(0.0)
    longest = wp.float64(0.0)
    p0 = xy[base]
    lo = p0
    hi = p0
    for i in range(n):
        p = xy[base + i]
        if not (wp.isfinite(p[0]) and wp.isfinite(p[1])):
            finite = wp.int32(0)
        lo = wp.vec2(wp.min(lo[0], p[0]), wp.min(lo[1], p[1]))
        hi = wp.vec2(wp.max(hi[0], p[0]), wp.max(hi[1], p[1]))
        j = i + 1
        if j == n:
            j = 0
        seg = wp.length(_d(xy[base + j]) - _d(p))
        total += seg
        longest = wp.max(longest, seg)
    ext_x[e] = hi[0] - lo[0]
    ext_y[e] = hi[1] - lo[1]
    if finite == 0:
        nan = wp.float64(wp.nan)
        length[e] = nan
        hmax[e] = nan
        min_radius[e] = wp.float32(wp.nan)
        max_curv[e] = wp.float32(wp.nan)
        turning[e] = 0
        straight[e] = wp.float32(wp.nan)
        ext_x[e] = wp.float32(wp.nan)
        ext_y[e] = wp.float32(wp.nan)
        clearance[e] = nan
        return
    # a point is straight when its curvature is below 2 pi / (straight_ratio * L): it bends
    # less than a circle straight_ratio times the size of one of the same length
    k_straight = wp.float64(2.0) * _PI / (straight_ratio * total)
    r_min = _INF
    k_max = wp.float64(0.0)
    angle = wp.float64(0.0)
    flat = wp.int32(0)
    a = _d(xy[base + n - 1])
    b = _d(xy[base])
    for i in range(n):
        j = i + 1
        if j == n:
            j = 0
        c = _d(xy[base + j])
        u = b - a
        v = c - b
        lu = wp.length(u)
        lv = wp.length(v)
        cr = _cross(u, v)
        # circumradius of (a, b, c) = |ab| |bc| |ca| / (2 |cross|); a straight run has none
        if cr != wp.float64(0.0):
            r_min = wp.min(r_min, lu * lv * wp.length(c - a) / (wp.float64(2.0) * wp.abs(cr)))
        theta = wp.atan2(cr, wp.dot(u, v))
        angle += theta
        half = wp.float64(0.5) * (lu + lv)
        k = wp.float64(0.0)
        if half > wp.float64(0.0):
            k = wp.abs(theta) / half
        k_max = wp.max(k_max, k)
        if k < k_straight:
            flat += 1
        a = b
        b = c
    length[e] = total
    hmax[e] = longest
    if r_min >= _INF:
        min_radius[e] = wp.float32(wp.inf)
    else:
        min_radius[e] = wp.float32(r_min)
    max_curv[e] = wp.float32(k_max)
    turning[e] = int(wp.round(angle / (wp.float64(2.0) * _PI)))
    straight[e] = wp.float32(wp.float64(flat) / wp.float64(n))
    clearance[e] = total / _PI


@wp.kernel
def _clearance_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    length: wp.array(dtype=wp.float64),
    hmax: wp.array(dtype=wp.float64),
    clearance: wp.array(dtype=wp.float64),
):
    """One thread per point ``i``: the nearest point ``j`` (index offset ``k`` <= n/2) with
    ``|p_i - p_j| < 2 k h / pi`` (h = L/n, the mean spacing), folded into the env's
    ``clearance`` by an atomic min. Offsets that cannot beat the env's best so far, or cannot
    qualify, are skipped (each segment is at most ``hmax`` long), so a loop costs about
    n log n rather than n^2; the minimum found is the same."""
    t = wp.tid()
    e = t // n
    i = t - e * n
    total = length[e]
    hm = hmax[e]
    if not (wp.isfinite(total) and hm > wp.float64(0.0)):
        return
    base = e * n
    per_k = wp.float64(2.0) * total / (wp.float64(n) * _PI)
    p = _d(xy[base + i])
    best = clearance[e]
    inv_a = wp.float64(1.0) / hm
    inv_b = wp.float64(1.0) / (hm + per_k)
    half = n // 2
    k = wp.int32(1)
    while k <= half:
        j = i + k
        if j >= n:
            j = j - n
        d = wp.length(_d(xy[base + j]) - p)
        lim = per_k * wp.float64(k)
        if d < lim and d < best:
            best = d
        # offsets k + m with d - m * hm >= best or >= lim(k + m) cannot count
        s = wp.max((d - best) * inv_a, (d - lim) * inv_b) - wp.float64(0.01)
        step = wp.int32(1)
        if s >= wp.float64(1.0):
            step = wp.int32(wp.floor(wp.min(s, wp.float64(half)))) + 1
        k = k + step
    wp.atomic_min(clearance, e, best)


@wp.kernel
def _finish_k(
    clearance: wp.array(dtype=wp.float64),
    length: wp.array(dtype=wp.float64),
    out_clear: wp.array(dtype=wp.float32),
    out_len: wp.array(dtype=wp.float32),
):
    e = wp.tid()
    out_clear[e] = wp.float32(clearance[e])
    out_len[e] = wp.float32(length[e])
