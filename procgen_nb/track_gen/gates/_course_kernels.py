"""The Warp kernels of a ``Course``: gates placed on their centerline, and course validity.

A gate's place on the track is the nearest point of the closed centerline (the first
segment wins a tie): its arc position ``s`` from point 0, its signed lateral offset (> 0
left of the direction of travel), the tangent's heading and the height of the z profile
there, interpolated along the segment.
"""

from __future__ import annotations

import warp as wp

from ...device import _init_warp

_init_warp()

#: reason bits of ``Course.reason``
TRACK_INVALID = wp.constant(1)
GATES_INVALID = wp.constant(2)
OUT_OF_ORDER = wp.constant(4)
OUTSIDE_WIDTH = wp.constant(8)
#: the slack of the width check (world units), for float32 rounding of on-track gates
WIDTH_EPS = wp.constant(1.0e-5)


@wp.kernel
def _place_k(
    center: wp.array(dtype=wp.vec2),
    z: wp.array(dtype=float),
    has_z: int,
    n: int,
    gates: wp.array(dtype=wp.vec2),
    count: wp.array(dtype=wp.int32),
    stride: int,
    out_pos: wp.array(dtype=wp.vec3),
    out_heading: wp.array(dtype=float),
    out_s: wp.array(dtype=float),
    out_lateral: wp.array(dtype=float),
):
    tid = wp.tid()
    e = tid // stride
    g = tid - e * stride
    if g >= count[e]:
        out_s[tid] = wp.nan
        out_lateral[tid] = wp.nan
        return
    p = gates[tid]
    base = e * n
    best = wp.float32(1.0e30)
    best_s = float(wp.nan)
    best_lat = float(wp.nan)
    best_h = float(wp.nan)
    best_z = wp.float32(0.0)
    s0 = wp.float32(0.0)
    for i in range(n):
        a = center[base + i]
        b = center[base + (i + 1) % n]
        d = b - a
        dd = wp.dot(d, d)
        t = wp.float32(0.0)
        if dd > 0.0:
            t = wp.clamp(wp.dot(p - a, d) / dd, 0.0, 1.0)
        q = a + d * t
        dist = wp.length(p - q)
        seg = wp.sqrt(dd)
        if dist < best:
            best = dist
            best_s = s0 + t * seg
            cr = d[0] * (p[1] - a[1]) - d[1] * (p[0] - a[0])
            best_lat = dist
            if cr < 0.0:
                best_lat = -dist
            best_h = wp.atan2(d[1], d[0])
            if has_z != 0:
                best_z = z[base + i] + (z[base + (i + 1) % n] - z[base + i]) * t
        s0 += seg
    out_s[tid] = best_s
    out_lateral[tid] = best_lat
    out_heading[tid] = best_h
    out_pos[tid] = wp.vec3(p[0], p[1], best_z)


@wp.kernel
def _course_valid_k(
    center: wp.array(dtype=wp.vec2),
    n: int,
    track_valid: wp.array(dtype=wp.int32),
    gates_valid: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    stride: int,
    s: wp.array(dtype=float),
    lateral: wp.array(dtype=float),
    size: wp.array(dtype=float),
    track_width: float,
    valid: wp.array(dtype=wp.int32),
    reason: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    base = e * n
    length = wp.float32(0.0)
    for i in range(n):
        length += wp.length(center[base + (i + 1) % n] - center[base + i])
    r = wp.int32(0)
    if track_valid[e] == 0:
        r = r | TRACK_INVALID
    if gates_valid[e] == 0:
        r = r | GATES_INVALID
    c = count[e]
    gb = e * stride
    total = wp.float32(0.0)
    for g in range(c):
        d = s[gb + (g + 1) % c] - s[gb + g]
        if d <= 0.0:
            d += length
        if not (d > 0.0):
            r = r | OUT_OF_ORDER
        total += d
        if wp.abs(lateral[gb + g]) + 0.5 * size[gb + g] > 0.5 * track_width + WIDTH_EPS:
            r = r | OUTSIDE_WIDTH
    if c > 0 and not (total < 1.5 * length):
        r = r | OUT_OF_ORDER
    reason[e] = r
    if r == 0:
        valid[e] = 1
    else:
        valid[e] = 0
