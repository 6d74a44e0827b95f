"""intersect_cuts: the segment where the triangles of each live pair cross.

Pair k is triangle ``pair_a[k]`` of A (a triangle soup, corners ``a[3t:3t+3]``) and
``pair_b[k]`` of B. Its cut is the overlap, along the line where the two planes meet, of
A cut by B's plane and B cut by A's plane; the side of each corner against the other
plane is an orientation test in float64, a corner within ``1e-6`` of the corners' reach
from the plane lying on it (as in intersect_pairs, which lists a pair when this cut has
a length). A triangle touching the other's plane along an edge is cut along that edge
(the rim of coplanar faces). ``p0[k]`` and ``p1[k]`` are its ends, p0 before p1 in
lexicographic (x, y, z) order; a pair that does not cross (coplanar, meeting at a point,
an id outside its soup) gets two zero points.

The cut is a function of the two triangles alone and symmetric in them: an end where an
edge crosses the other plane is computed from the edge's endpoints in lexicographic
order, so the pair (b, a) of the meshes swapped gets the same bits, and so do the two
triangles sharing the edge: the ends of neighbouring cuts meet exactly (intersect_unify
welds them by their bits).

Past the live count (the inert values): a slot is not read or written (p0 and p1 stay as
allocated, zero). Storage buffers: 6 (pair_a, pair_b, a, b, p0, p1), 7 over a live count.
"""

import warp as wp


@wp.func
def orient3(a: wp.vec3d, b: wp.vec3d, c: wp.vec3d, d: wp.vec3d) -> wp.float64:
    return wp.dot(wp.cross(b - a, c - a), d - a)


#: a corner this close to a plane (relative to the corners' reach) lies on it
TOL = wp.constant(wp.float64(1.0e-6))


@wp.func
def snap(d: wp.float64, tol: wp.float64) -> wp.float64:
    if wp.abs(d) <= tol:
        return wp.float64(0.0)
    return d


@wp.func
def less3(p: wp.vec3d, q: wp.vec3d) -> bool:
    if p[0] != q[0]:
        return p[0] < q[0]
    if p[1] != q[1]:
        return p[1] < q[1]
    return p[2] < q[2]


@wp.func
def edge_cross(p: wp.vec3d, dp: wp.float64, q: wp.vec3d, dq: wp.float64) -> wp.vec3d:
    # the point where edge pq crosses the plane, from the endpoints in a fixed order
    if less3(q, p):
        return q + (p - q) * (dq / (dq - dp))
    return p + (q - p) * (dp / (dp - dq))


@wp.func
def plane_cut(
    x0: wp.vec3d, x1: wp.vec3d, x2: wp.vec3d, d0: wp.float64, d1: wp.float64, d2: wp.float64
):
    # the segment where triangle x crosses a plane (signed distances d); n: its points
    zero = wp.float64(0.0)
    n = wp.int32(0)
    p = x0
    q = x0
    if d0 == zero:
        p = x0
        n = 1
    if d1 == zero:
        if n == 0:
            p = x1
        else:
            q = x1
        n += 1
    if d2 == zero:
        if n == 0:
            p = x2
        else:
            q = x2
        n += 1
    if (d0 > zero and d1 < zero) or (d0 < zero and d1 > zero):
        r = edge_cross(x0, d0, x1, d1)
        if n == 0:
            p = r
        else:
            q = r
        n += 1
    if (d1 > zero and d2 < zero) or (d1 < zero and d2 > zero):
        r = edge_cross(x1, d1, x2, d2)
        if n == 0:
            p = r
        else:
            q = r
        n += 1
    if (d2 > zero and d0 < zero) or (d2 < zero and d0 > zero):
        r = edge_cross(x2, d2, x0, d0)
        if n == 0:
            p = r
        else:
            q = r
        n += 1
    return n, p, q


@wp.func
def pick_lo(p: wp.vec3d, q: wp.vec3d, k: int) -> wp.vec3d:
    if p[k] < q[k] or (p[k] == q[k] and less3(p, q)):
        return p
    return q


@wp.func
def pick_hi(p: wp.vec3d, q: wp.vec3d, k: int) -> wp.vec3d:
    if p[k] > q[k] or (p[k] == q[k] and less3(q, p)):
        return p
    return q


@wp.func
def tri_cut(a0: wp.vec3d, a1: wp.vec3d, a2: wp.vec3d, b0: wp.vec3d, b1: wp.vec3d, b2: wp.vec3d):
    # the cut of two triangles: (1, p, q) with p before q in lexicographic order, or (0, ...)
    zero = wp.float64(0.0)
    # a corner within the tolerance of the other plane lies on it (coplanar faces off the
    # axes, whose float32 corners miss the common plane by a rounding)
    reach = wp.max(wp.max(wp.max(wp.length(a0), wp.length(a1)), wp.length(a2)), wp.length(b0))
    reach = wp.max(wp.max(reach, wp.length(b1)), wp.length(b2))
    ta = TOL * reach * wp.length(wp.cross(b1 - b0, b2 - b0))
    tb = TOL * reach * wp.length(wp.cross(a1 - a0, a2 - a0))
    da0 = snap(orient3(b0, b1, b2, a0), ta)
    da1 = snap(orient3(b0, b1, b2, a1), ta)
    da2 = snap(orient3(b0, b1, b2, a2), ta)
    db0 = snap(orient3(a0, a1, a2, b0), tb)
    db1 = snap(orient3(a0, a1, a2, b1), tb)
    db2 = snap(orient3(a0, a1, a2, b2), tb)
    none = wp.vec3d()
    if (da0 > zero and da1 > zero and da2 > zero) or (da0 < zero and da1 < zero and da2 < zero):
        return 0, none, none
    if (db0 > zero and db1 > zero and db2 > zero) or (db0 < zero and db1 < zero and db2 < zero):
        return 0, none, none
    if da0 == zero and da1 == zero and da2 == zero:
        return 0, none, none
    if db0 == zero and db1 == zero and db2 == zero:
        return 0, none, none
    na, pa, qa = plane_cut(a0, a1, a2, da0, da1, da2)
    nb, pb, qb = plane_cut(b0, b1, b2, db0, db1, db2)
    if na < 2 or nb < 2:
        return 0, none, none
    # the axis along which the planes' line runs most steeply (the same for (b, a))
    d = wp.cross(wp.cross(a1 - a0, a2 - a0), wp.cross(b1 - b0, b2 - b0))
    k = wp.int32(0)
    if wp.abs(d[1]) > wp.abs(d[k]):
        k = 1
    if wp.abs(d[2]) > wp.abs(d[k]):
        k = 2
    la = pick_lo(pa, qa, k)
    ha = pick_hi(pa, qa, k)
    lb = pick_lo(pb, qb, k)
    hb = pick_hi(pb, qb, k)
    lo = pick_hi(la, lb, k)
    hi = pick_lo(ha, hb, k)
    if not (hi[k] > lo[k]):
        return 0, none, none
    if less3(hi, lo):
        return 1, hi, lo
    return 1, lo, hi


@wp.func
def corner(m: wp.array(dtype=wp.vec3f), i: int) -> wp.vec3d:
    v = m[i]
    return wp.vec3d(wp.float64(v[0]), wp.float64(v[1]), wp.float64(v[2]))


@wp.kernel
def intersect_cuts(
    pair_a: wp.array(dtype=wp.int32),
    pair_b: wp.array(dtype=wp.int32),
    a: wp.array(dtype=wp.vec3f),
    b: wp.array(dtype=wp.vec3f),
    p0: wp.array(dtype=wp.vec3f),
    p1: wp.array(dtype=wp.vec3f),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    k = wp.tid()
    live = wp.min(p0.shape[0], p1.shape[0])
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(live)))
    # @end
    if k >= live:
        return
    t = pair_a[k]
    u = pair_b[k]
    zero = wp.vec3f()
    if t < 0 or u < 0 or t >= a.shape[0] / 3 or u >= b.shape[0] / 3:
        p0[k] = zero
        p1[k] = zero
        return
    ok, p, q = tri_cut(
        corner(a, 3 * t),
        corner(a, 3 * t + 1),
        corner(a, 3 * t + 2),
        corner(b, 3 * u),
        corner(b, 3 * u + 1),
        corner(b, 3 * u + 2),
    )
    if ok == 0:
        p0[k] = zero
        p1[k] = zero
        return
    p0[k] = wp.vec3f(wp.float32(p[0]), wp.float32(p[1]), wp.float32(p[2]))
    p1[k] = wp.vec3f(wp.float32(q[0]), wp.float32(q[1]), wp.float32(q[2]))
