"""The Warp kernels of the built-in gate generators and the gate pipeline's stages.

Layout: env ``e``'s anchors at ``e * stride + g``; every slot past an env's count holds
NaN. Random numbers come from ``stream_key(seeds[e], salt)`` streams (``b.salt``).
"""

from __future__ import annotations

import warp as wp

from ...device import _init_warp
from ..ops.funcs import rand01, rand_int, stream_key

_init_warp()


@wp.func
def _nan2() -> wp.vec2:
    return wp.vec2(wp.nan, wp.nan)


@wp.func
def _finite2(p: wp.vec2) -> bool:
    return wp.isfinite(p[0]) and wp.isfinite(p[1])


# -- built-in generators --------------------------------------------------------------------
@wp.kernel
def _arc_gates_k(
    center: wp.array(dtype=wp.vec2),
    n: int,
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    spacing: float,
    jitter: wp.array(dtype=float),
    min_count: int,
    stride: int,
    out_xy: wp.array(dtype=wp.vec2),
    out_count: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    base = e * n
    length = wp.float32(0.0)
    ok = wp.bool(True)
    for i in range(n):
        a = center[base + i]
        b = center[base + (i + 1) % n]
        if not (_finite2(a) and _finite2(b)):
            ok = False
        length += wp.length(b - a)
    m = wp.int32(0)
    if ok and length > 0.0:
        m = wp.clamp(int(wp.floor(length / spacing)), min_count, stride)
    out_count[e] = m
    key = stream_key(seeds[e], salt)
    gap = length / float(wp.max(m, 1))
    seg = wp.int32(0)
    s0 = wp.float32(0.0)
    for g in range(stride):
        if g >= m:
            out_xy[e * stride + g] = _nan2()
            continue
        target = (float(g) + 0.5 + jitter[0] * (rand01(key, g) - 0.5)) * gap
        a = center[base + seg]
        b = center[base + (seg + 1) % n]
        d = wp.length(b - a)
        while s0 + d < target and seg < n - 1:
            s0 += d
            seg += 1
            a = center[base + seg]
            b = center[base + (seg + 1) % n]
            d = wp.length(b - a)
        t = wp.float32(0.0)
        if d > 0.0:
            t = wp.clamp((target - s0) / d, 0.0, 1.0)
        out_xy[e * stride + g] = a + (b - a) * t


@wp.kernel
def _window_turn_k(
    center: wp.array(dtype=wp.vec2), n: int, window: int, out: wp.array(dtype=float)
):
    tid = wp.tid()
    e = tid // n
    i = tid - e * n
    base = e * n
    total = wp.float32(0.0)
    for j in range(-window, window + 1):
        k = (i + j + n) % n
        p = center[base + (k + n - 1) % n]
        q = center[base + k]
        r = center[base + (k + 1) % n]
        u = q - p
        v = r - q
        total += wp.atan2(u[0] * v[1] - u[1] * v[0], wp.dot(u, v))
    out[tid] = total


@wp.kernel
def _curvature_pick_k(
    center: wp.array(dtype=wp.vec2),
    turn: wp.array(dtype=float),
    n: int,
    window: int,
    threshold: float,
    stride: int,
    out_xy: wp.array(dtype=wp.vec2),
    out_count: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    base = e * n
    m = wp.int32(0)
    for i in range(n):
        c = wp.abs(turn[base + i])
        if not wp.isfinite(c) or c < threshold or m >= stride:
            continue
        peak = wp.bool(True)
        for j in range(1, window + 1):
            if wp.abs(turn[base + (i + n - j) % n]) >= c:
                peak = False
            if wp.abs(turn[base + (i + j) % n]) > c:
                peak = False
        if peak:
            out_xy[e * stride + m] = center[base + i]
            m += 1
    out_count[e] = m
    for g in range(m, stride):
        out_xy[e * stride + g] = _nan2()


@wp.kernel
def _free_gates_k(
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    target: int,
    tries: int,
    min_distance: float,
    stride: int,
    out_xy: wp.array(dtype=wp.vec2),
    out_count: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    key = stream_key(seeds[e], salt)
    base = e * stride
    m = wp.int32(0)
    for t in range(tries):
        if m < target:
            p = wp.vec2(2.0 * rand01(key, 2 * t) - 1.0, 2.0 * rand01(key, 2 * t + 1) - 1.0)
            far = wp.bool(True)
            for j in range(m):
                if wp.length(out_xy[base + j] - p) < min_distance:
                    far = False
            if far:
                out_xy[base + m] = p
                m += 1
    out_count[e] = m
    for g in range(m, stride):
        out_xy[base + g] = _nan2()


# -- order and normalize stages -------------------------------------------------------------
@wp.kernel
def _random_pairs_k(
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    xy: wp.array(dtype=wp.vec2),
    counts: wp.array(dtype=wp.int32),
    stride: int,
):
    e = wp.tid()
    c = wp.min(counts[e], stride)
    key = stream_key(seeds[e], salt)
    base = e * stride
    i = c - 1
    while i > 0:
        j = rand_int(key, i, 0, i)
        p = xy[base + i]
        xy[base + i] = xy[base + j]
        xy[base + j] = p
        i -= 1


@wp.kernel
def _normalize_extent_k(
    xy: wp.array(dtype=wp.vec2), counts: wp.array(dtype=wp.int32), stride: int, scale: float
):
    e = wp.tid()
    c = wp.min(counts[e], stride)
    if c <= 0:
        return
    base = e * stride
    lo = xy[base]
    hi = xy[base]
    for g in range(1, c):
        lo = wp.min(lo, xy[base + g])
        hi = wp.max(hi, xy[base + g])
    mid = (lo + hi) * 0.5
    half = wp.max(hi[0] - lo[0], hi[1] - lo[1]) * 0.5
    k = wp.float32(1.0)
    if half > 0.0:
        k = scale / half
    for g in range(c):
        xy[base + g] = (xy[base + g] - mid) * k


# -- finishing ------------------------------------------------------------------------------
@wp.kernel
def _finish_k(
    anchors: wp.array(dtype=wp.vec2),
    anchor_count: wp.array(dtype=wp.int32),
    stride: int,
    max_gates: int,
    min_gates: int,
    min_spacing: float,
    gate_size: float,
    out_xy: wp.array(dtype=wp.vec2),
    out_pos: wp.array(dtype=wp.vec3),
    out_heading: wp.array(dtype=float),
    out_size: wp.array(dtype=float),
    out_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    raw = anchor_count[e]
    c = wp.clamp(raw, 0, wp.min(stride, max_gates))
    ok = raw >= min_gates and raw <= max_gates and raw <= stride
    ob = e * max_gates
    for g in range(max_gates):
        if g < c:
            p = anchors[e * stride + g]
            if not _finite2(p):
                ok = False
            out_xy[ob + g] = p
            out_pos[ob + g] = wp.vec3(p[0], p[1], 0.0)
            out_size[ob + g] = gate_size
        else:
            out_xy[ob + g] = _nan2()
            out_pos[ob + g] = wp.vec3(wp.nan, wp.nan, wp.nan)
            out_heading[ob + g] = wp.nan
            out_size[ob + g] = wp.nan
    for g in range(c):
        p = out_xy[ob + g]
        q = out_xy[ob + (g + 1) % c]
        if c > 1 and wp.length(q - p) < min_spacing:
            ok = False
        d = q - out_xy[ob + (g + c - 1) % c]
        h = wp.float32(0.0)
        if c > 1 and wp.length(d) > 0.0:
            h = wp.atan2(d[1], d[0])
        out_heading[ob + g] = h
    out_count[e] = c
    if ok:
        valid[e] = 1
    else:
        valid[e] = 0


@wp.kernel
def _sum_k(values: wp.array(dtype=wp.int32), n: int, out: wp.array(dtype=wp.int32)):
    s = wp.int32(0)
    for e in range(n):
        s += values[e]
    out[0] = s


@wp.kernel
def _nan_pad_k(position: wp.array(dtype=wp.vec2), count: wp.array(dtype=wp.int32), stride: int):
    tid = wp.tid()
    e = tid // stride
    if tid - e * stride >= count[e]:
        position[tid] = _nan2()
