"""The kernels of ``track_gen.metrics``: one thread per env each.

``_env_metrics_k`` measures everything but the clearance; ``_start_k`` rules out, per
point, the pairs too little turning lies between; ``_clearance_k`` searches the rest.

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
_LANES = wp.constant(8)  # the clearance search's lanes (see _clearance_k)
_vec8i = wp.types.vector(length=8, dtype=wp.int32)
_vec8d = wp.types.vector(length=8, dtype=wp.float64)
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
    hmin: wp.array(dtype=wp.float64),
    cum: wp.array(dtype=wp.float64),
):
    """Per env: length, longest and shortest segment, turn radius, curvature, turning
    number, straight share and extent; seeds ``clearance`` with its cap L/pi; ``cum[e (n+1)
    + v]``: the sum of ``|turning angle|`` at the points before ``v`` (for ``_start_k``)."""
    e = wp.tid()
    base = e * n
    finite = wp.int32(1)
    total = wp.float64(0.0)
    longest = wp.float64(0.0)
    shortest = _INF
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
        shortest = wp.min(shortest, seg)
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
        hmin[e] = nan
        return
    # a point is straight when its curvature is below 2 pi / (straight_ratio * L): it bends
    # less than a circle straight_ratio times the size of one of the same length
    k_straight = wp.float64(2.0) * _PI / (straight_ratio * total)
    r_min = _INF
    k_max = wp.float64(0.0)
    angle = wp.float64(0.0)
    flat = wp.int32(0)
    b1 = e * (n + 1)
    cum[b1] = wp.float64(0.0)
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
        cum[b1 + i + 1] = cum[b1 + i] + wp.abs(theta)
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
    hmin[e] = shortest
    if r_min >= _INF:
        min_radius[e] = wp.float32(wp.inf)
    else:
        min_radius[e] = wp.float32(r_min)
    max_curv[e] = wp.float32(k_max)
    turning[e] = int(wp.round(angle / (wp.float64(2.0) * _PI)))
    straight[e] = wp.float32(wp.float64(flat) / wp.float64(n))
    clearance[e] = total / _PI


@wp.func
def _turn(cum: wp.array(dtype=wp.float64), b1: int, n: int, i: int, k: int) -> wp.float64:
    """The summed ``|turning angle|`` at the points strictly between ``i`` and ``i + k``."""
    b = i + k
    if b <= n:
        return cum[b1 + b] - cum[b1 + i + 1]
    return cum[b1 + n] - cum[b1 + i + 1] + cum[b1 + b - n]


@wp.kernel
def _start_k(
    n: int,
    length: wp.array(dtype=wp.float64),
    hmin: wp.array(dtype=wp.float64),
    cum: wp.array(dtype=wp.float64),
    start: wp.array(dtype=wp.int32),
):
    """Per env, for every point ``i``: the smallest offset ``k`` whose pair ``(i, i + k)``
    the turning does not rule out (``n/2 + 1`` when none is left).

    A polyline whose segment directions turn by ``T < pi`` in all is at least ``cos(T/2)``
    times as long as the chord of its ends is short: its chord >= cos(T/2) * arc >=
    cos(T/2) * k * hmin. So while ``cos(T/2) * hmin >= (1 + 1e-6) * per_k`` the pair is
    farther apart than ``lim(k) = per_k * k`` (with a margin far above rounding) and cannot
    count. The first such ``k`` moves forward with ``i`` (a shorter window turns less), so
    one pass finds them all."""
    e = wp.tid()
    base = e * n
    b1 = e * (n + 1)
    half = n // 2
    total = length[e]
    h = hmin[e]
    per_k = wp.float64(2.0) * total / (wp.float64(n) * _PI)
    r = per_k * wp.float64(1.000001)
    lim_t = wp.float64(-1.0)
    if wp.isfinite(total) and h > wp.float64(0.0) and r < h:
        lim_t = wp.float64(2.0) * wp.acos(r / h) - wp.float64(1.0e-9)
    b = wp.int32(1)
    for i in range(n):
        b = wp.max(b, i + 1)
        if lim_t > wp.float64(0.0):
            while b - i <= half and _turn(cum, b1, n, i, b - i) <= lim_t:
                b += 1
        start[base + i] = b - i


@wp.func
def _first(start: wp.array(dtype=wp.int32), base: int, half: int, i: int, end: int) -> int:
    """The first point from ``i`` (before ``end``) with an offset left to search, or ``end``."""
    ii = i
    while ii < end:
        if start[base + ii] <= half:
            return ii
        ii += 1
    return end


@wp.func
def _lane(
    xy: wp.array(dtype=wp.vec2),
    start: wp.array(dtype=wp.int32),
    base: int,
    half: int,
    n: int,
    i: int,
    end: int,
    k: int,
    p: wp.vec2d,
    best: wp.float64,
    per_k: wp.float64,
    inv_a: wp.float64,
    inv_b: wp.float64,
):
    """One step of one lane of ``_clearance_k``: the pair ``(i, i + k)``, then the next
    offset worth a look, or the lane's next point with one. Returns ``(i, k, p, best)``."""
    if i >= end:
        return i, k, p, best
    # branch-free: which way these tests go is not predictable
    j = i + k
    j = wp.where(j >= n, j - n, j)
    d = wp.length(_d(xy[base + j]) - p)
    lim = per_k * wp.float64(k)
    bb = wp.where(d < lim, wp.min(best, d), best)
    # offsets k + m with d - m * hm >= best or >= lim(k + m) cannot count
    s = wp.max((d - bb) * inv_a, (d - lim) * inv_b) - wp.float64(0.01)
    kk = k + wp.int32(wp.floor(wp.clamp(s, wp.float64(0.0), wp.float64(half)))) + 1
    ii = i
    pp = p
    if kk > half:  # past n/2: the next point (about one step in eight: a branch pays)
        ii = _first(start, base, half, i + 1, end)
        if ii < end:
            kk = start[base + ii]
            pp = _d(xy[base + ii])
    return ii, kk, pp, bb


@wp.kernel
def _clearance_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    length: wp.array(dtype=wp.float64),
    hmax: wp.array(dtype=wp.float64),
    start: wp.array(dtype=wp.int32),
    clearance: wp.array(dtype=wp.float64),
):
    """One thread per env: for every point ``i``, the nearest point ``j = i + k`` (``start[i]
    <= k <= n/2``) with ``|p_i - p_j| < lim(k) = 2 k h / pi`` (h = L/n, the mean spacing),
    kept in ``clearance``. Offsets that cannot beat the best so far, or cannot qualify, are
    skipped (each segment is at most ``hmax`` long): the minimum found is the same as over
    every pair. Eight lanes walk eight shares of the points at once, so that the CPU overlaps
    their chains of dependent loads and square roots (measured: about 2x one lane); they
    share the best so far."""
    e = wp.tid()
    total = length[e]
    hm = hmax[e]
    if not (wp.isfinite(total) and hm > wp.float64(0.0)):
        return
    base = e * n
    half = n // 2
    per_k = wp.float64(2.0) * total / (wp.float64(n) * _PI)
    best = clearance[e]
    inv_a = wp.float64(1.0) / hm
    inv_b = wp.float64(1.0) / (hm + per_k)
    # lane c walks the points [c n / 8, (c + 1) n / 8) with an offset left to search; the
    # lane loops are unrolled (wp.static): as fast as eight hand-written copies (measured:
    # 24.2-24.9 ms against 24.3-24.9 ms, polar 1024 x 256, one thread), the same bytes
    ends = _vec8i()
    ii = _vec8i()
    kk = _vec8i()
    px = _vec8d()
    py = _vec8d()
    for c in range(wp.static(_LANES)):
        ends[c] = (c + 1) * n // _LANES
        ii[c] = _first(start, base, half, c * n // _LANES, ends[c])
        kk[c] = start[base + wp.min(ii[c], n - 1)]
        p = _d(xy[base + wp.min(ii[c], n - 1)])
        px[c] = p[0]
        py[c] = p[1]
    busy = wp.int32(1)
    while busy != 0:
        busy = wp.int32(0)
        for c in range(wp.static(_LANES)):
            i, k, p, best = _lane(
                xy,
                start,
                base,
                half,
                n,
                ii[c],
                ends[c],
                kk[c],
                wp.vec2d(px[c], py[c]),
                best,
                per_k,
                inv_a,
                inv_b,
            )
            ii[c] = i
            kk[c] = k
            px[c] = p[0]
            py[c] = p[1]
            if i < ends[c]:
                busy = wp.int32(1)
    clearance[e] = best


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
