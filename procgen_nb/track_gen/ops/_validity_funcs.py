"""The ``wp.func``s of the loop checks: the clearance grid, the x-monotone chains of the
crossing test and the turning number (used by ``_validity_kernels``).
"""

from __future__ import annotations

import warp as wp

from .funcs import ccw, segments_intersect

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
