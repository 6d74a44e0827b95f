"""The Warp kernels of the ops library and of the pipeline's own stages (one Warp module).

Every kernel reads a per-env ``active`` mask where it says so and leaves inactive envs
untouched, so masked regeneration replays the same recording.
"""

from __future__ import annotations

import warp as wp

from .funcs import ccw, hash_u32, rand01, rand_int, segments_intersect, stream_key

_GOLDEN = wp.constant(wp.uint32(0x9E3779B9))
_ATTEMPT = wp.constant(wp.uint32(0x85EBCA6B))
_TWO_PI = wp.constant(6.283185307179586)

#: reason bits written by the validity stage
REJECTED = wp.constant(1)
NOT_CLOSED = wp.constant(2)
SELF_INTERSECTING = wp.constant(4)
TURNING = wp.constant(8)
RADIUS = wp.constant(16)
CLEARANCE = wp.constant(32)


# -- seeds and masks ----------------------------------------------------------------------
@wp.kernel
def _seeds_k(
    env_seed: wp.array(dtype=wp.int32),
    epoch: wp.array(dtype=wp.int32),
    attempt: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    seeds: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    k = hash_u32(wp.uint32(env_seed[e]))
    k = hash_u32(k ^ (wp.uint32(epoch[0]) * _GOLDEN + wp.uint32(0x3C6EF372)))
    if attempt[e] > 0:
        k = hash_u32(k ^ (wp.uint32(attempt[e]) * _ATTEMPT))
    seeds[e] = wp.int32(k)


@wp.kernel
def _all_active_k(active: wp.array(dtype=wp.int32), attempt: wp.array(dtype=wp.int32)):
    e = wp.tid()
    active[e] = 1
    attempt[e] = 0


@wp.kernel
def _select_k(
    valid: wp.array(dtype=wp.int32),
    user_mask: wp.array(dtype=wp.int32),
    mode: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    attempt: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    a = wp.int32(0)
    if mode[0] == 0:
        if valid[e] == 0:
            a = wp.int32(1)
    else:
        if user_mask[e] != 0:
            a = wp.int32(1)
    active[e] = a
    attempt[e] = attempt[e] + a


@wp.kernel
def _count_k(valid: wp.array(dtype=wp.int32), n: int, out: wp.array(dtype=wp.int32)):
    s = wp.int32(0)
    for e in range(n):
        if valid[e] != 0:
            s += 1
    out[0] = s


# -- resampling -----------------------------------------------------------------------------
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
    j = seg[tid]
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


# -- sampling ---------------------------------------------------------------------------------
@wp.kernel
def _sample_counts_k(
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    lo: int,
    hi: int,
    out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    out[e] = rand_int(stream_key(seeds[e], salt), 0, lo, hi)


@wp.kernel
def _grid_cells_k(
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    counts: wp.array(dtype=wp.int32),
    grid: int,
    perm: wp.array(dtype=wp.int32),
    out_cells: wp.array(dtype=wp.int32),
    max_count: int,
):
    e = wp.tid()
    c = grid * grid
    pb = e * c
    ob = e * max_count
    key = stream_key(seeds[e], salt)
    for i in range(c):
        perm[pb + i] = i
    cnt = wp.clamp(counts[e], 0, wp.min(c, max_count))
    for k in range(max_count):
        if k < cnt:
            j = rand_int(key, k, k, c - 1)
            tmp = perm[pb + k]
            perm[pb + k] = perm[pb + j]
            perm[pb + j] = tmp
            out_cells[ob + k] = perm[pb + k]
        else:
            out_cells[ob + k] = -1


@wp.kernel
def _sample_grid_points_k(
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    cells: wp.array(dtype=wp.int32),
    counts: wp.array(dtype=wp.int32),
    grid: int,
    jitter: float,
    scale: float,
    out_xy: wp.array(dtype=wp.vec2),
    max_count: int,
):
    tid = wp.tid()
    e = tid // max_count
    k = tid - e * max_count
    if k >= counts[e] or cells[tid] < 0:
        out_xy[tid] = wp.vec2(wp.nan, wp.nan)
        return
    key = stream_key(seeds[e], salt)
    cell = cells[tid]
    cx = cell % grid
    cy = cell // grid
    u = (float(cx) + 0.5 + jitter * (rand01(key, 2 * k) - 0.5)) / float(grid)
    v = (float(cy) + 0.5 + jitter * (rand01(key, 2 * k + 1) - 0.5)) / float(grid)
    out_xy[tid] = wp.vec2((2.0 * u - 1.0) * scale, (2.0 * v - 1.0) * scale)


@wp.kernel
def _angle_sort_k(xy: wp.array(dtype=wp.vec2), counts: wp.array(dtype=wp.int32), max_count: int):
    e = wp.tid()
    cnt = wp.min(counts[e], max_count)
    if cnt <= 0:
        return
    b = e * max_count
    c = wp.vec2(0.0, 0.0)
    for i in range(cnt):
        c += xy[b + i]
    c = c / float(cnt)
    for i in range(1, cnt):
        p = xy[b + i]
        ap = wp.atan2(p[1] - c[1], p[0] - c[0])
        j = i - 1
        while j >= 0:
            q = xy[b + j]
            if wp.atan2(q[1] - c[1], q[0] - c[0]) <= ap:
                break
            xy[b + j + 1] = q
            j -= 1
        xy[b + j + 1] = p


# -- validity -----------------------------------------------------------------------------------
@wp.func
def _cell_range(
    a: wp.vec2, b: wp.vec2, ox: float, oy: float, inv: float, gx: int, gy: int
) -> wp.vec4i:
    x0 = wp.clamp(int((wp.min(a[0], b[0]) - ox) * inv), 0, gx - 1)
    x1 = wp.clamp(int((wp.max(a[0], b[0]) - ox) * inv), 0, gx - 1)
    y0 = wp.clamp(int((wp.min(a[1], b[1]) - oy) * inv), 0, gy - 1)
    y1 = wp.clamp(int((wp.max(a[1], b[1]) - oy) * inv), 0, gy - 1)
    return wp.vec4i(x0, y0, x1, y1)


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
) -> int:
    c = gx * gy
    for k in range(c + 2):
        start[sb + k] = 0
    total = wp.int32(0)
    for i in range(n):
        r = _cell_range(xy[base + i], xy[base + (i + 1) % n], ox, oy, inv, gx, gy)
        total += (r[2] - r[0] + 1) * (r[3] - r[1] + 1)
        if total > cap:
            return -1
        for cy in range(r[1], r[3] + 1):
            for cx in range(r[0], r[2] + 1):
                s0 = sb + cy * gx + cx + 1
                start[s0] = start[s0] + 1
    for k in range(c):
        start[sb + k + 1] = start[sb + k + 1] + start[sb + k]
    for ii in range(n):
        i = n - 1 - ii
        r = _cell_range(xy[base + i], xy[base + (i + 1) % n], ox, oy, inv, gx, gy)
        for cy in range(r[1], r[3] + 1):
            for cx in range(r[0], r[2] + 1):
                s = sb + cy * gx + cx + 1
                slot = start[s] - 1
                start[s] = slot
                items[ib + slot] = i
    start[sb + c + 1] = total
    return total


@wp.func
def _grid_crossings(
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
) -> int:
    count = wp.int32(0)
    for c in range(gx * gy):
        b0 = start[sb + c + 1]
        b1 = start[sb + c + 2]
        if b1 - b0 < 2:
            continue
        cx = c % gx
        cy = c // gx
        for ia in range(b0, b1):
            i = items[ib + ia]
            p1 = xy[base + i]
            p2 = xy[base + (i + 1) % n]
            for jb in range(ia + 1, b1):
                j = items[ib + jb]
                if _adjacent(i, j, n):
                    continue
                p3 = xy[base + j]
                p4 = xy[base + (j + 1) % n]
                if wp.max(p1[0], p2[0]) < wp.min(p3[0], p4[0]):
                    continue
                if wp.max(p3[0], p4[0]) < wp.min(p1[0], p2[0]):
                    continue
                if wp.max(p1[1], p2[1]) < wp.min(p3[1], p4[1]):
                    continue
                if wp.max(p3[1], p4[1]) < wp.min(p1[1], p2[1]):
                    continue
                if not segments_intersect(p1, p2, p3, p4):
                    continue
                ri = _cell_range(p1, p2, ox, oy, inv, gx, gy)
                rj = _cell_range(p3, p4, ox, oy, inv, gx, gy)
                if wp.max(ri[0], rj[0]) == cx and wp.max(ri[1], rj[1]) == cy:
                    count += 1
    return count


@wp.func
def _brute_crossings(xy: wp.array(dtype=wp.vec2), base: int, n: int) -> int:
    count = wp.int32(0)
    for i in range(n):
        p1 = xy[base + i]
        p2 = xy[base + (i + 1) % n]
        for j in range(i + 2, n):
            if _adjacent(i, j, n):
                continue
            if segments_intersect(p1, p2, xy[base + j], xy[base + (j + 1) % n]):
                count += 1
    return count


@wp.func
def _bounds(xy: wp.array(dtype=wp.vec2), base: int, n: int) -> wp.vec4:
    lo = xy[base]
    hi = xy[base]
    for i in range(1, n):
        p = xy[base + i]
        lo = wp.vec2(wp.min(lo[0], p[0]), wp.min(lo[1], p[1]))
        hi = wp.vec2(wp.max(hi[0], p[0]), wp.max(hi[1], p[1]))
    return wp.vec4(lo[0], lo[1], hi[0], hi[1])


@wp.func
def _crossings(
    xy: wp.array(dtype=wp.vec2),
    base: int,
    n: int,
    cell_min: float,
    g: int,
    start: wp.array(dtype=wp.int32),
    sb: int,
    items: wp.array(dtype=wp.int32),
    ib: int,
    cap: int,
) -> wp.vec4:
    """Counts crossings with a uniform grid; returns (count, ox, oy, cell size) for reuse."""
    bb = _bounds(xy, base, n)
    ext = wp.max(bb[2] - bb[0], bb[3] - bb[1])
    cell = wp.max(wp.max(ext / float(g), cell_min), 1.0e-20)
    inv = 1.0 / cell
    gx = wp.clamp(int((bb[2] - bb[0]) * inv) + 1, 1, g)
    gy = wp.clamp(int((bb[3] - bb[1]) * inv) + 1, 1, g)
    total = _grid_build(xy, base, n, bb[0], bb[1], inv, gx, gy, start, sb, items, ib, cap)
    cnt = wp.int32(0)
    if total < 0:
        cnt = _brute_crossings(xy, base, n)
        cell = wp.float32(-1.0)
    else:
        cnt = _grid_crossings(xy, base, n, bb[0], bb[1], inv, gx, gy, start, sb, items, ib)
    return wp.vec4(float(cnt), bb[0], bb[1], cell)


@wp.func
def _turning(xy: wp.array(dtype=wp.vec2), base: int, n: int) -> int:
    s = wp.float32(0.0)
    for i in range(n):
        a = xy[base + (i + n - 1) % n]
        b = xy[base + i]
        c = xy[base + (i + 1) % n]
        u = b - a
        v = c - b
        if wp.length_sq(u) > 0.0 and wp.length_sq(v) > 0.0:
            s += wp.atan2(u[0] * v[1] - u[1] * v[0], wp.dot(u, v))
    return int(wp.round(s / _TWO_PI))


@wp.kernel
def _self_intersections_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    g: int,
    start: wp.array(dtype=wp.int32),
    items: wp.array(dtype=wp.int32),
    cap: int,
    out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    r = _crossings(xy, e * n, n, 0.0, g, start, e * (g * g + 2), items, e * cap, cap)
    out[e] = int(r[0])


@wp.kernel
def _turning_number_k(xy: wp.array(dtype=wp.vec2), n: int, out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    out[e] = _turning(xy, e * n, n)


@wp.kernel
def _validity_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    active: wp.array(dtype=wp.int32),
    gen_valid: wp.array(dtype=wp.int32),
    min_radius: wp.array(dtype=float),
    width: wp.array(dtype=float),
    g: int,
    start: wp.array(dtype=wp.int32),
    items: wp.array(dtype=wp.int32),
    cap: int,
    valid: wp.array(dtype=wp.int32),
    reason: wp.array(dtype=wp.int32),
    crossings: wp.array(dtype=wp.int32),
    turning: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    base = e * n
    flags = wp.int32(0)
    if gen_valid[e] == 0:
        flags = flags | REJECTED
    total = wp.float32(0.0)
    closed = wp.int32(0)
    if n >= 3:
        closed = wp.int32(1)
    for i in range(n):
        a = xy[base + i]
        b = xy[base + (i + 1) % n]
        if not (wp.isfinite(a[0]) and wp.isfinite(a[1])):
            closed = wp.int32(0)
        ln = wp.length(b - a)
        if not (ln > 0.0):
            closed = wp.int32(0)
        total += ln
    if closed == 0:
        valid[e] = 0
        reason[e] = flags | NOT_CLOSED
        crossings[e] = 0
        turning[e] = 0
        return
    tn = _turning(xy, base, n)
    if tn != 1 and tn != -1:
        flags = flags | TURNING
    r_min = wp.float64(min_radius[0])
    if r_min > wp.float64(0.0):
        for i in range(n):
            a = xy[base + (i + n - 1) % n]
            b = xy[base + i]
            c = xy[base + (i + 1) % n]
            area2 = wp.abs(ccw(a, b, c))
            prod = (
                wp.float64(wp.length(b - a))
                * wp.float64(wp.length(c - b))
                * wp.float64(wp.length(c - a))
            )
            if prod < wp.float64(2.0) * r_min * area2:
                flags = flags | RADIUS
                break
    w = width[0]
    sb = e * (g * g + 2)
    ib = e * cap
    r = _crossings(xy, base, n, w, g, start, sb, items, ib, cap)
    cnt = int(r[0])
    if cnt > 0:
        flags = flags | SELF_INTERSECTING
    if w > 0.0:
        h = total / float(n)
        window = 0.5 * 3.14159265358979 * w
        w2 = w * w
        cell = r[3]
        bad = wp.int32(0)
        if cell < 0.0:
            for i in range(n):
                for j in range(i + 1, n):
                    d = wp.min(j - i, n - (j - i))
                    if float(d) * h > window and wp.length_sq(xy[base + i] - xy[base + j]) < w2:
                        bad = wp.int32(1)
        else:
            inv = 1.0 / cell
            bb = _bounds(xy, base, n)
            gx = wp.clamp(int((bb[2] - bb[0]) * inv) + 1, 1, g)
            gy = wp.clamp(int((bb[3] - bb[1]) * inv) + 1, 1, g)
            for i in range(n):
                if bad != 0:
                    break
                p = xy[base + i]
                pcx = wp.clamp(int((p[0] - r[1]) * inv), 0, gx - 1)
                pcy = wp.clamp(int((p[1] - r[2]) * inv), 0, gy - 1)
                for cy in range(wp.max(pcy - 1, 0), wp.min(pcy + 2, gy)):
                    for cx in range(wp.max(pcx - 1, 0), wp.min(pcx + 2, gx)):
                        cc = cy * gx + cx
                        for k in range(start[sb + cc + 1], start[sb + cc + 2]):
                            j = items[ib + k]
                            d = wp.min(wp.abs(j - i), n - wp.abs(j - i))
                            if float(d) * h > window:
                                if wp.length_sq(p - xy[base + j]) < w2:
                                    bad = wp.int32(1)
        if bad != 0:
            flags = flags | CLEARANCE
    reason[e] = flags
    crossings[e] = cnt
    turning[e] = tn
    if flags == 0:
        valid[e] = 1
    else:
        valid[e] = 0
