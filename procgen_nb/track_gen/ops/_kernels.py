"""The Warp kernels of the ops library and of the pipeline's own stages (one Warp module).

Every kernel reads a per-env ``active`` mask where it says so and leaves inactive envs
untouched, so masked regeneration replays the same recording.
"""

from __future__ import annotations

import warp as wp

from .funcs import ccw, hash_u32, rand01, rand_int, segments_intersect, stream_key

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})

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
def _xsign(dx: float) -> int:
    """The x-direction class of a segment: 1 (x grows), -1 (x shrinks), 0 (vertical)."""
    if dx > 0.0:
        return 1
    if dx < 0.0:
        return -1
    return 0


@wp.func
def _wrap(k: int, n: int) -> int:
    if k >= n:
        return k - n
    return k


@wp.func
def _chain_vertex(start: int, ln: int, q: int, n: int) -> int:
    """Vertex q (0..|ln|) of a chain, in increasing x (ln < 0: the chain runs backwards)."""
    if ln < 0:
        return _wrap(start - ln - q, n)
    return _wrap(start + q, n)


@wp.func
def _chain_segment(start: int, ln: int, q: int, n: int) -> int:
    """The loop index of segment q of a chain (between its vertices q and q+1)."""
    if ln < 0:
        return _wrap(start - ln - q - 1, n)
    return _wrap(start + q, n)


@wp.func
def _pair_crosses(xy: wp.array(dtype=wp.vec2), base: int, n: int, ia: int, ib: int) -> int:
    if _adjacent(ia, ib, n):
        return 0
    p1 = xy[base + ia]
    p2 = xy[base + _wrap(ia + 1, n)]
    p3 = xy[base + ib]
    p4 = xy[base + _wrap(ib + 1, n)]
    if wp.max(p1[1], p2[1]) < wp.min(p3[1], p4[1]):
        return 0
    if wp.max(p3[1], p4[1]) < wp.min(p1[1], p2[1]):
        return 0
    if segments_intersect(p1, p2, p3, p4):
        return 1
    return 0


@wp.func
def _chain_crossings(
    xy: wp.array(dtype=wp.vec2),
    base: int,
    n: int,
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
    cb: int,
) -> int:
    """Counts crossing pairs of non-adjacent segments of a closed loop, each pair once.

    The loop is cut into x-monotone chains (a maximal run of segments whose x strictly
    grows, or strictly shrinks; a vertical segment is a chain of its own). Two segments of
    one chain cannot meet unless adjacent, so only pairs of chains whose x-ranges overlap
    are compared, by a merge along x that visits every pair of segments whose x-intervals
    overlap: about O(N) for a track (few chains), O(N^2) at worst.
    """
    # cut into chains from vertex 0; the run that wraps around is joined at the end
    k = wp.int32(0)
    cur = wp.int32(0)
    ln = wp.int32(0)
    pc = wp.int32(0)
    c0 = wp.int32(0)
    xp = xy[base][0]
    for t in range(n):
        xn = xy[base + _wrap(t + 1, n)][0]
        c = _xsign(xn - xp)
        if t == 0:
            c0 = c
        elif c == 0 or c != pc:
            chain[cb + k] = cur
            chain_n[cb + k] = ln * wp.where(pc < 0, -1, 1)
            k += 1
            cur = t
            ln = wp.int32(0)
        ln += 1
        pc = c
        xp = xn
    if k > 0 and pc == c0 and c0 != 0:
        chain[cb] = cur
        chain_n[cb] = (ln + wp.abs(chain_n[cb])) * wp.where(pc < 0, -1, 1)
    else:
        chain[cb + k] = cur
        chain_n[cb + k] = ln * wp.where(pc < 0, -1, 1)
        k += 1
    count = wp.int32(0)
    for ca in range(k):
        sa = chain[cb + ca]
        la = chain_n[cb + ca]
        na = wp.abs(la)
        a_lo = xy[base + sa][0]
        a_hi = xy[base + _wrap(sa + na, n)][0]
        if la < 0:
            a_lo, a_hi = a_hi, a_lo
        for cbi in range(ca + 1, k):
            sb = chain[cb + cbi]
            lb = chain_n[cb + cbi]
            nb = wp.abs(lb)
            b_lo = xy[base + sb][0]
            b_hi = xy[base + _wrap(sb + nb, n)][0]
            if lb < 0:
                b_lo, b_hi = b_hi, b_lo
            if b_hi < a_lo or a_hi < b_lo:
                continue
            # merge the two chains along x (al, ar: the current A segment's ends by x)
            qa = wp.int32(0)
            qb = wp.int32(0)
            al = xy[base + _chain_vertex(sa, la, 0, n)]
            ar = xy[base + _chain_vertex(sa, la, 1, n)]
            bl = xy[base + _chain_vertex(sb, lb, 0, n)]
            br = xy[base + _chain_vertex(sb, lb, 1, n)]
            while qa < na and qb < nb:
                if ar[0] < bl[0]:
                    qa += 1
                    al = ar
                    if qa < na:
                        ar = xy[base + _chain_vertex(sa, la, qa + 1, n)]
                    continue
                if br[0] < al[0]:
                    qb += 1
                    bl = br
                    if qb < nb:
                        br = xy[base + _chain_vertex(sb, lb, qb + 1, n)]
                    continue
                if wp.max(al[1], ar[1]) >= wp.min(bl[1], br[1]) and wp.max(bl[1], br[1]) >= wp.min(
                    al[1], ar[1]
                ):
                    if not _adjacent(
                        _chain_segment(sa, la, qa, n), _chain_segment(sb, lb, qb, n), n
                    ):
                        if segments_intersect(al, ar, bl, br):
                            count += 1
                if ar[0] < br[0]:
                    qa += 1
                    al = ar
                    if qa < na:
                        ar = xy[base + _chain_vertex(sa, la, qa + 1, n)]
                elif br[0] < ar[0]:
                    qb += 1
                    bl = br
                    if qb < nb:
                        br = xy[base + _chain_vertex(sb, lb, qb + 1, n)]
                else:
                    # both end at the same x: the next segment of each touches the other here
                    ia = _chain_segment(sa, la, qa, n)
                    ib = _chain_segment(sb, lb, qb, n)
                    if qa + 1 < na:
                        count += _pair_crosses(xy, base, n, _chain_segment(sa, la, qa + 1, n), ib)
                    if qb + 1 < nb:
                        count += _pair_crosses(xy, base, n, ia, _chain_segment(sb, lb, qb + 1, n))
                    qa += 1
                    al = ar
                    if qa < na:
                        ar = xy[base + _chain_vertex(sa, la, qa + 1, n)]
                    qb += 1
                    bl = br
                    if qb < nb:
                        br = xy[base + _chain_vertex(sb, lb, qb + 1, n)]
    return count


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


@wp.kernel
def _self_intersections_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
    out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    out[e] = _chain_crossings(xy, e * n, n, chain, chain_n, e * n)


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
    vcell: wp.array(dtype=wp.int32),
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
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
    r_min = wp.float64(min_radius[0])
    check_r = r_min > wp.float64(0.0)
    two_r = wp.float64(2.0) * r_min
    total = wp.float32(0.0)
    closed = wp.int32(0)
    if n >= 3:
        closed = wp.int32(1)
    tn = wp.int32(0)
    lo = xy[base]
    hi = xy[base]
    a = xy[base + n - 2]
    b = xy[base + n - 1]
    u = b - a
    for i in range(n):
        c = xy[base + i]
        if not (wp.isfinite(c[0]) and wp.isfinite(c[1])):
            closed = wp.int32(0)
            break
        lo = wp.vec2(wp.min(lo[0], c[0]), wp.min(lo[1], c[1]))
        hi = wp.vec2(wp.max(hi[0], c[0]), wp.max(hi[1], c[1]))
        v = c - b
        lv = wp.length(v)
        if not (lv > 0.0):
            closed = wp.int32(0)
            break
        total += lv
        tn += _turn_step(u, v)
        if check_r:
            # circumradius of (a, b, c) = |ab| |bc| |ca| / (2 * |cross|)
            prod = wp.float64(wp.length(u)) * wp.float64(lv) * wp.float64(wp.length(c - a))
            if prod < two_r * wp.abs(ccw(a, b, c)):
                flags = flags | RADIUS
        a = b
        b = c
        u = v
    if closed == 0:
        valid[e] = 0
        reason[e] = flags | NOT_CLOSED
        crossings[e] = 0
        turning[e] = 0
        return
    if tn != 1 and tn != -1:
        flags = flags | TURNING
    cnt = _chain_crossings(xy, base, n, chain, chain_n, base)
    if cnt > 0:
        flags = flags | SELF_INTERSECTING
    w = width[0]
    if w > 0.0:
        sb = e * (g * g + 2)
        ib = e * cap
        h = total / float(n)
        window = 0.5 * 3.14159265358979 * w
        w2 = w * w
        ext = wp.max(hi[0] - lo[0], hi[1] - lo[1])
        cell = wp.max(wp.max(ext / float(g), w), 1.0e-20)
        inv = 1.0 / cell
        gx = wp.clamp(int((hi[0] - lo[0]) * inv) + 1, 1, g)
        gy = wp.clamp(int((hi[1] - lo[1]) * inv) + 1, 1, g)
        built = _grid_build(
            xy, base, n, lo[0], lo[1], inv, gx, gy, start, sb, items, ib, cap, vcell, base
        )
        bad = wp.int32(0)
        if built < 0:
            for i in range(n):
                for j in range(i + 1, n):
                    d = wp.min(j - i, n - (j - i))
                    if float(d) * h > window and wp.length_sq(xy[base + i] - xy[base + j]) < w2:
                        bad = wp.int32(1)
        else:
            for i in range(n):
                if bad != 0:
                    break
                p = xy[base + i]
                vc = vcell[base + i]
                pcx = vc & _MASK16
                pcy = vc >> 16
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
