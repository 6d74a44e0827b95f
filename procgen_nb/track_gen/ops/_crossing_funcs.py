"""The crossing test of a closed loop: monotone chains, a sweep over their envelopes and a
bisection of each overlapping pair (the ``wp.func``s of ``self_intersections``, ``is_simple``
and ``check_tracks``).

The loop is cut into quadrant-monotone chains (a maximal run of segments whose direction
lies in one quadrant: x and y both monotone, so the envelope of any run of a chain is the
box of its two end vertices). Two segments of one chain meet only when adjacent. The chains
are sorted by their lowest x (heapsort) and swept: a pair whose envelopes overlap is
bisected (the longer run split in half) until single segments remain, which are tested with
the exact predicate ``segments_intersect`` (float64 orientations of float32 points). About
O(N + k log k + k log N) for k chains, O(N^2) at worst; ``first_only`` stops at the first
crossing found.
"""

from __future__ import annotations

import warp as wp

from .funcs import ccw, segments_intersect

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})

#: the bisection stack: a chain has at most 2**31 segments, so two halvings each: 62 levels
_STACK = 64
_vstack = wp.types.vector(length=_STACK, dtype=wp.int32)


@wp.func
def _quad(d: wp.vec2) -> int:
    """The quadrant of a direction: 0 (+x, +y), 1 (-x, +y), 2 (-x, -y), 3 (+x, -y), 4 (zero).

    Axis directions belong to one quadrant each (x >= 0 with y >= 0 is quadrant 0)."""
    if d[0] == 0.0 and d[1] == 0.0:
        return 4
    if d[0] >= 0.0:
        if d[1] >= 0.0:
            return 0
        return 3
    if d[1] >= 0.0:
        return 1
    return 2


@wp.func
def _wrapv(k: int, n: int) -> int:
    if k >= n:
        return k - n
    return k


@wp.func
def _spike_at(xy: wp.array(dtype=wp.vec2), base: int, n: int, s: int) -> bool:
    """True when the segments into and out of vertex ``s`` are collinear and opposite
    (float64 differences of the float32 points, as ``ccw``)."""
    a = xy[base + _wrapv(s + n - 1, n)]
    p = xy[base + s]
    c = xy[base + _wrapv(s + 1, n)]
    if ccw(a, p, c) == wp.float64(0.0):
        ux = wp.float64(p[0]) - wp.float64(a[0])
        uy = wp.float64(p[1]) - wp.float64(a[1])
        vx = wp.float64(c[0]) - wp.float64(p[0])
        vy = wp.float64(c[1]) - wp.float64(p[1])
        return ux * vx + uy * vy < wp.float64(0.0)
    return False


@wp.func
def _build_chains(
    xy: wp.array(dtype=wp.vec2),
    base: int,
    n: int,
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
    cb: int,
    stop_on_zero: int,
) -> int:
    """Cuts the loop into quadrant-monotone chains (start vertex, segment count); a zero
    segment is a chain of its own, or ends the cut (returns -1) with ``stop_on_zero``.
    Returns the number of chains k."""
    k = wp.int32(0)
    cur = wp.int32(0)
    p = xy[base]
    pn = xy[base + _wrapv(1, n)]
    q0 = _quad(pn - p)
    if q0 == 4 and stop_on_zero != 0:
        return -1
    pq = q0
    p = pn
    # segment t runs from vertex t to t+1; the closing one (t = n-1) after the loop
    for t in range(1, n):
        j = t + 1
        if j == n:
            j = 0
        pn = xy[base + j]
        dx = pn[0] - p[0]
        dy = pn[1] - p[1]
        q = wp.where(dx >= 0.0, wp.where(dy >= 0.0, 0, 3), wp.where(dy >= 0.0, 1, 2))
        if q != pq or (dx == 0.0 and dy == 0.0) or pq == 4:
            if dx == 0.0 and dy == 0.0:
                q = 4
                if stop_on_zero != 0:
                    return -1
            if q != pq or q == 4:
                chain[cb + k] = cur
                chain_n[cb + k] = t - cur
                k += 1
                cur = t
        pq = q
        p = pn
    ln = n - cur
    if k > 0 and pq == q0 and q0 != 4:
        # the last run continues into the first chain: join them
        chain[cb] = cur
        chain_n[cb] = ln + chain_n[cb]
    else:
        chain[cb + k] = cur
        chain_n[cb + k] = ln
        k += 1
    return k


@wp.func
def _bucket(x: float, lo: float, inv: float, nb: int) -> int:
    return wp.clamp(int((x - lo) * inv), 0, nb - 1)


@wp.func
def _sort_chains(
    xy: wp.array(dtype=wp.vec2),
    base: int,
    n: int,
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
    order: wp.array(dtype=wp.int32),
    key: wp.array(dtype=float),
    bucket: wp.array(dtype=wp.int32),
    cb: int,
    bb: int,
    k: int,
    spikes: int,
) -> wp.vec3:
    """Writes each chain's lowest x to ``key`` and sorts the chains into k buckets of x
    (a counting sort: bucket b holds ``order[bucket[bb+b] : bucket[bb+b+1]]``). Returns
    (lo, 1 / bucket width, 1 when ``spikes`` and a chain starts at a spike)."""
    lo = wp.float32(0.0)
    hi = wp.float32(0.0)
    spiked = wp.float32(0.0)
    for c in range(k):
        s = chain[cb + c]
        a = xy[base + s]
        b = xy[base + _wrapv(s + chain_n[cb + c], n)]
        x0 = wp.min(a[0], b[0])
        x1 = wp.max(a[0], b[0])
        key[cb + c] = x0
        if c == 0:
            lo = x0
            hi = x1
        else:
            lo = wp.min(lo, x0)
            hi = wp.max(hi, x1)
        if spikes != 0:
            if _spike_at(xy, base, n, s):
                spiked = 1.0
    inv = wp.float32(0.0)
    if hi > lo:
        inv = float(k) / (hi - lo)
    for b in range(k + 1):
        bucket[bb + b] = 0
    for c in range(k):
        j = bb + _bucket(key[cb + c], lo, inv, k) + 1
        bucket[j] = bucket[j] + 1
    for b in range(k):
        bucket[bb + b + 1] = bucket[bb + b + 1] + bucket[bb + b]
    for c in range(k):
        j = bb + _bucket(key[cb + c], lo, inv, k)
        slot = bucket[j]
        order[cb + slot] = c
        bucket[j] = slot + 1
    # bucket[bb+b] now ends bucket b: shift so that it starts it again
    for bi in range(k):
        b = k - bi
        bucket[bb + b] = bucket[bb + b - 1]
    bucket[bb] = 0
    return wp.vec3(lo, inv, spiked)


@wp.func
def _boxes_meet(a: wp.vec2, b: wp.vec2, c: wp.vec2, d: wp.vec2) -> bool:
    """True when the box of a, b and the box of c, d share a point."""
    return (
        wp.max(a[0], b[0]) >= wp.min(c[0], d[0])
        and wp.max(c[0], d[0]) >= wp.min(a[0], b[0])
        and wp.max(a[1], b[1]) >= wp.min(c[1], d[1])
        and wp.max(c[1], d[1]) >= wp.min(a[1], b[1])
    )


@wp.func
def _not_adjacent(i: int, j: int, n: int) -> bool:
    d = wp.abs(i - j)
    return d > 1 and d < n - 1


@wp.func
def _ring_crossings(
    xy: wp.array(dtype=wp.vec2),
    base: int,
    n: int,
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
    order: wp.array(dtype=wp.int32),
    key: wp.array(dtype=float),
    bucket: wp.array(dtype=wp.int32),
    cb: int,
    bb: int,
    mode: int,
) -> int:
    """Counts crossing pairs of non-adjacent segments of a closed loop (each pair once;
    touching and collinear overlap count). ``mode`` 0 counts them all; 1 returns 0 or 1 at
    the first; 2 as 1, and also 1 at a spike, -1 at a zero segment (nothing else done)."""
    k = _build_chains(xy, base, n, chain, chain_n, cb, wp.where(mode == 2, 1, 0))
    if k < 0:
        return -1
    srt = _sort_chains(
        xy, base, n, chain, chain_n, order, key, bucket, cb, bb, k, wp.where(mode == 2, 1, 0)
    )
    if srt[2] != 0.0:
        return 1
    lo = srt[0]
    inv = srt[1]
    count = wp.int32(0)
    # the bisection stack (one per loop, not per pair)
    s0 = _vstack()
    s1 = _vstack()
    s2 = _vstack()
    s3 = _vstack()
    for c in range(k):
        sa = chain[cb + c]
        la = chain_n[cb + c]
        a0 = xy[base + sa]
        a1 = xy[base + _wrapv(sa + la, n)]
        x_lo = key[cb + c]
        x_hi = wp.max(a0[0], a1[0])
        y_lo = wp.min(a0[1], a1[1])
        y_hi = wp.max(a0[1], a1[1])
        # the chains whose lowest x lies in [x_lo, x_hi] (ties: the higher id): one run of slots
        first = bucket[bb + _bucket(x_lo, lo, inv, k)]
        last = bucket[bb + _bucket(x_hi, lo, inv, k) + 1]
        for slot in range(first, last):
            d = order[cb + slot]
            kd = key[cb + d]
            if kd > x_hi or kd < x_lo or (kd == x_lo and d <= c):
                continue
            sb = chain[cb + d]
            lb = chain_n[cb + d]
            b0 = xy[base + sb]
            b1 = xy[base + _wrapv(sb + lb, n)]
            if wp.max(b0[1], b1[1]) < y_lo or y_hi < wp.min(b0[1], b1[1]):
                continue
            # bisect the pair: vertex runs [r0, r1] of A and [r2, r3] of B, the longer
            # halved while their boxes meet, down to single segments
            top = wp.int32(0)
            r0 = wp.int32(0)
            r1 = la
            r2 = wp.int32(0)
            r3 = lb
            while True:
                pa0 = xy[base + _wrapv(sa + r0, n)]
                pa1 = xy[base + _wrapv(sa + r1, n)]
                pb0 = xy[base + _wrapv(sb + r2, n)]
                pb1 = xy[base + _wrapv(sb + r3, n)]
                go = _boxes_meet(pa0, pa1, pb0, pb1)
                if go and r1 - r0 == 1 and r3 - r2 == 1:
                    go = False
                    if _not_adjacent(_wrapv(sa + r0, n), _wrapv(sb + r2, n), n):
                        if segments_intersect(pa0, pa1, pb0, pb1):
                            count += 1
                            if mode != 0:
                                return 1
                if go:
                    if r1 - r0 >= r3 - r2:
                        m = (r0 + r1) >> 1
                        s0[top] = m
                        s1[top] = r1
                        s2[top] = r2
                        s3[top] = r3
                        r1 = m
                    else:
                        m = (r2 + r3) >> 1
                        s0[top] = r0
                        s1[top] = r1
                        s2[top] = m
                        s3[top] = r3
                        r3 = m
                    top += 1
                else:
                    if top == 0:
                        break
                    top -= 1
                    r0 = s0[top]
                    r1 = s1[top]
                    r2 = s2[top]
                    r3 = s3[top]
    return count


@wp.func
def _simple_ring(
    xy: wp.array(dtype=wp.vec2),
    ring: wp.array(dtype=wp.vec2),
    base: int,
    n: int,
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
    order: wp.array(dtype=wp.int32),
    key: wp.array(dtype=float),
    bucket: wp.array(dtype=wp.int32),
    bb: int,
) -> int:
    """1 when the closed loop is simple in the sense of ``shapely.is_simple`` (GEOS):
    repeated consecutive points are dropped, then no two non-adjacent segments share a point
    and no two adjacent ones fold back onto each other (a spike). A loop of one distinct
    point is simple. ``ring`` (the env's ``n`` slots at ``base``) holds the distinct points
    when some repeat."""
    r = _ring_crossings(xy, base, n, chain, chain_n, order, key, bucket, base, bb, 2)
    if r >= 0:
        return wp.where(r == 0, 1, 0)
    m = wp.int32(0)
    p = xy[base + n - 1]
    for i in range(n):
        q = xy[base + i]
        if not (q[0] == p[0] and q[1] == p[1]):
            ring[base + m] = q
            m += 1
        p = q
    if m <= 1:
        return 1
    if m == 2:
        return 0
    r = _ring_crossings(ring, base, m, chain, chain_n, order, key, bucket, base, bb, 2)
    return wp.where(r == 0, 1, 0)
