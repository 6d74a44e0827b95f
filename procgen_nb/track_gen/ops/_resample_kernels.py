"""Resampling kernels: arc-length resampling of loops (xy and attributes), constant
spacing, and the masked copies of an already uniform loop.

Every kernel that takes ``active`` leaves the envs with 0 untouched.
"""

from __future__ import annotations

import warp as wp

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})


@wp.kernel
def _arc_resample_k(
    src: wp.array(dtype=wp.vec2),
    src_count: wp.array(dtype=wp.int32),
    raw: int,
    dst: wp.array(dtype=wp.vec2),
    n: int,
    active: wp.array(dtype=wp.int32),
    cum: wp.array(dtype=float),
    seg: wp.array(dtype=wp.int32),
    tpar: wp.array(dtype=float),
):
    e = wp.tid()
    if active[e] == 0:
        return
    m = wp.min(src_count[e], raw)
    sb = e * raw
    cb = e * (raw + 1)
    db = e * n
    total = wp.float32(0.0)
    cum[cb] = 0.0
    ok = wp.int32(0)
    if m >= 3:
        ok = wp.int32(1)
    for i in range(m):
        a = src[sb + i]
        b = src[sb + (i + 1) % m]
        if not (wp.isfinite(a[0]) and wp.isfinite(a[1])):
            ok = wp.int32(0)
        total += wp.length(b - a)
        cum[cb + i + 1] = total
    if not (total > 0.0) or ok == 0:
        nan = wp.vec2(wp.nan, wp.nan)
        for k in range(n):
            dst[db + k] = nan
            seg[db + k] = 0
            tpar[db + k] = 0.0
        return
    j = wp.int32(0)
    for k in range(n):
        s = total * float(k) / float(n)
        while j < m - 1 and cum[cb + j + 1] <= s:
            j += 1
        ln = cum[cb + j + 1] - cum[cb + j]
        t = wp.float32(0.0)
        if ln > 0.0:
            t = wp.clamp((s - cum[cb + j]) / ln, 0.0, 1.0)
        a = src[sb + j]
        b = src[sb + (j + 1) % m]
        dst[db + k] = a + (b - a) * t
        seg[db + k] = j
        tpar[db + k] = t


@wp.kernel
def _masked_copy_k(
    src: wp.array(dtype=wp.vec2),
    dst: wp.array(dtype=wp.vec2),
    n: int,
    active: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    if active[tid // n] != 0:
        dst[tid] = src[tid]


@wp.kernel
def _masked_copy_f_k(
    src: wp.array(dtype=float),
    dst: wp.array(dtype=float),
    n: int,
    active: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    if active[tid // n] != 0:
        dst[tid] = src[tid]


@wp.kernel
def _attr_resample_k(
    src: wp.array(dtype=float),
    src_count: wp.array(dtype=wp.int32),
    raw: int,
    dst: wp.array(dtype=float),
    n: int,
    active: wp.array(dtype=wp.int32),
    seg: wp.array(dtype=wp.int32),
    tpar: wp.array(dtype=float),
):
    tid = wp.tid()
    e = tid // n
    if active[e] == 0:
        return
    m = wp.max(wp.min(src_count[e], raw), 1)
    j = wp.clamp(seg[tid], 0, m - 1)  # a stale or foreign seg cannot read out of bounds
    t = tpar[tid]
    a = src[e * raw + j]
    b = src[e * raw + (j + 1) % m]
    dst[tid] = a + (b - a) * t


@wp.kernel
def _constant_spacing_k(
    src: wp.array(dtype=wp.vec2),
    raw: int,
    spacing: float,
    dst: wp.array(dtype=wp.vec2),
    max_points: int,
    out_count: wp.array(dtype=wp.int32),
    truncated: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    sb = e * raw
    db = e * max_points
    total = wp.float32(0.0)
    for i in range(raw):
        total += wp.length(src[sb + (i + 1) % raw] - src[sb + i])
    want = wp.int32(0)
    if spacing > 0.0 and total > 0.0:
        want = wp.max(int(wp.floor(total / spacing)), 3)
    cnt = wp.min(want, max_points)
    trunc = wp.int32(0)
    if want > max_points:
        trunc = wp.int32(1)
    out_count[e] = cnt
    truncated[e] = trunc
    # walk the loop, emitting a point every total/want along it
    j = wp.int32(0)
    acc = wp.float32(0.0)
    step = wp.float32(0.0)
    if want > 0:
        step = total / float(want)
    for k in range(max_points):
        if k >= cnt:
            dst[db + k] = wp.vec2(wp.nan, wp.nan)
        else:
            s = step * float(k)
            ln = wp.length(src[sb + (j + 1) % raw] - src[sb + j])
            while j < raw - 1 and acc + ln <= s:
                acc += ln
                j += 1
                ln = wp.length(src[sb + (j + 1) % raw] - src[sb + j])
            t = wp.float32(0.0)
            if ln > 0.0:
                t = wp.clamp((s - acc) / ln, 0.0, 1.0)
            a = src[sb + j]
            dst[db + k] = a + (src[sb + (j + 1) % raw] - a) * t
