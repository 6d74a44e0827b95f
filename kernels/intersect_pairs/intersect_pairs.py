"""intersect_pairs: the triangles of B that each live triangle of A crosses.

A and B are triangle soups (``a[3t:3t+3]`` are the corners of triangle t; a triangle
whose corners lie past the buffer is no triangle). The candidates come from a uniform
grid over B built by the node: ``nx*ny*nz`` cells of edge ``cell`` from ``origin``; cell
``c`` lists the ids ``grid[grid[c]:grid[c+1]]`` of the B triangles whose box meets it
(offsets into ``grid`` itself; a range outside the buffer is clamped, a grid shorter than
its cells lists nothing). A pair met in several cells is tested in one of them only:
the cell at the low corner of the overlap of the two boxes' cell ranges. A's box is
padded by four times the snap's tolerance (below) of the larger of its corners' and the
grid's reach, so the boxes of a pair the snap makes touch always meet.

TEST=tri3: the triangles cross when their cut (intersect_cuts: the overlap of A cut by
B's plane and B cut by A's plane along the line where the planes meet) has a length. The
side of each corner against the other plane is an orientation test in float64 (the
float32 corners are exact there; the determinant is rounded once per product), and a
corner within ``1e-6`` of the six corners' reach from the other plane lies on it (faces
in one plane off the axes, whose float32 corners miss it by a rounding; on the integer
grid and on axis-aligned planes the test is exact). Coplanar pairs (every corner on the
other plane) do not cross in this test; a face touching the other's plane along an
edge does, its cut running along that edge: the rim of a coplanar overlap is cut so.

TEST=tri2: the triangles' projections on the xy plane overlap with an area: no edge
line of one has the other wholly on its outer side. Each orientation test is a 2x2
determinant of float32 differences in float64, which is exact; a degenerate (zero-area)
triangle overlaps nothing; triangles that only touch do not overlap. As in tri3, a pair
whose boxes (A's padded) share no z is not tested: roads stacked in z (road_overlap_batch)
never pair across layers, however wide the grid's cells.

``self_pairs`` != 0 states that A and B are the same mesh: a pair (a, b) with b <= a is
skipped (each pair once), and so is one whose groups (``t // group``) lie ``near`` or
fewer apart, cyclically over ``period`` groups when ``period`` > 0 (a road's ribbon: two
triangles per quad, adjacent quads share an edge).

STAGE=count writes ``hits[t]``, the number of crossing triangles; STAGE=write lists them
at ``start[t]`` onwards (``start``: the exclusive scan of hits), in the order of the
cells and of the grid's lists: ``pair_a[k] = t``, ``pair_b[k] = b``; the appended counter
``pair_a_count`` holds the pair count (the new count). A pair past the capacity (bind
``n``) is not written and the counter still states the true count (an overflow).

Past the live count (the inert values): a triangle of A has no entries (hits is 0, it
lists nothing). Storage buffers: count 4 (a, b, grid, hits), write 7 (a, b, grid, start,
pair_a, its counter, pair_b); one more over a live count.
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
def orient2(a: wp.vec3d, b: wp.vec3d, c: wp.vec3d) -> wp.float64:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


@wp.func
def outside2(
    a: wp.vec3d, b: wp.vec3d, s: wp.float64, p: wp.vec3d, q: wp.vec3d, r: wp.vec3d
) -> bool:
    zero = wp.float64(0.0)
    return (
        orient2(a, b, p) * s <= zero
        and orient2(a, b, q) * s <= zero
        and orient2(a, b, r) * s <= zero
    )


@wp.func
def tri_overlap2(
    a0: wp.vec3d, a1: wp.vec3d, a2: wp.vec3d, b0: wp.vec3d, b1: wp.vec3d, b2: wp.vec3d
) -> bool:
    zero = wp.float64(0.0)
    sa = orient2(a0, a1, a2)
    sb = orient2(b0, b1, b2)
    if sa == zero or sb == zero:
        return False
    if (
        outside2(a0, a1, sa, b0, b1, b2)
        or outside2(a1, a2, sa, b0, b1, b2)
        or outside2(a2, a0, sa, b0, b1, b2)
    ):
        return False
    if (
        outside2(b0, b1, sb, a0, a1, a2)
        or outside2(b1, b2, sb, a0, a1, a2)
        or outside2(b2, b0, sb, a0, a1, a2)
    ):
        return False
    return True


@wp.func
def cell_of(x: float, o: float, cell: float, n: int) -> int:
    c = wp.int32(0)
    f = (x - o) / cell
    if f >= float(n):
        c = n - 1
    elif f > 0.0:
        c = int(f)
    return wp.clamp(c, 0, n - 1)


@wp.func
def corner(m: wp.array(dtype=wp.vec3f), i: int) -> wp.vec3d:
    v = m[i]
    return wp.vec3d(wp.float64(v[0]), wp.float64(v[1]), wp.float64(v[2]))


@wp.func
def skipped(t: int, u: int, self_pairs: int, group: int, period: int, near: int) -> bool:
    if self_pairs == 0:
        return False
    if u <= t:
        return True
    g = wp.max(group, 1)
    d = wp.abs(t / g - u / g)
    if period > 0:
        d = d % period
        d = wp.min(d, period - d)
    return d <= near


@wp.kernel
def intersect_pairs(
    a: wp.array(dtype=wp.vec3f),
    b: wp.array(dtype=wp.vec3f),
    grid: wp.array(dtype=wp.int32),
    # @when STAGE count
    hits: wp.array(dtype=wp.int32),
    # @end
    # @when STAGE write
    start: wp.array(dtype=wp.int32),
    pair_a: wp.array(dtype=wp.int32),
    pair_a_count: wp.array(dtype=wp.uint32),
    pair_b: wp.array(dtype=wp.int32),
    # @end
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
    origin_x: float,
    origin_y: float,
    origin_z: float,
    cell: float,
    nx: int,
    ny: int,
    nz: int,
    self_pairs: int,
    group: int,
    period: int,
    near: int,
):
    t = wp.tid()
    # @when STAGE count
    live = hits.shape[0]
    # @end
    # @when STAGE write
    live = start.shape[0]
    # @end
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(live)))
    # @end
    if t >= live or 3 * t + 2 >= a.shape[0] or t > 700000000:
        return
    if nx <= 0 or ny <= 0 or nz <= 0 or not (cell > 0.0):
        return
    cells = wp.int64(nx) * wp.int64(ny) * wp.int64(nz)
    if cells + wp.int64(1) > wp.int64(grid.shape[0]):
        return
    nb = b.shape[0] / 3
    p0 = a[3 * t]
    p1 = a[3 * t + 1]
    p2 = a[3 * t + 2]
    # A's box padded by the reach of a snap (TOL of the corners' reach, A's or the grid's:
    # B lies in the grid), so no pair the snap makes touch is passed over by its box
    far = wp.vec3f(
        wp.max(wp.abs(origin_x), wp.abs(origin_x + float(nx) * cell)),
        wp.max(wp.abs(origin_y), wp.abs(origin_y + float(ny) * cell)),
        wp.max(wp.abs(origin_z), wp.abs(origin_z + float(nz) * cell)),
    )
    reach = wp.max(wp.max(wp.length(p0), wp.length(p1)), wp.max(wp.length(p2), wp.length(far)))
    pad = 4.0 * float(TOL) * reach
    lo = wp.min(wp.min(p0, p1), p2) - wp.vec3f(pad, pad, pad)
    hi = wp.max(wp.max(p0, p1), p2) + wp.vec3f(pad, pad, pad)
    x0 = cell_of(lo[0], origin_x, cell, nx)
    x1 = cell_of(hi[0], origin_x, cell, nx)
    y0 = cell_of(lo[1], origin_y, cell, ny)
    y1 = cell_of(hi[1], origin_y, cell, ny)
    z0 = cell_of(lo[2], origin_z, cell, nz)
    z1 = cell_of(hi[2], origin_z, cell, nz)
    a0 = corner(a, 3 * t)
    a1 = corner(a, 3 * t + 1)
    a2 = corner(a, 3 * t + 2)
    found = wp.int32(0)
    # @when STAGE write
    base = start[t]
    cap = wp.min(pair_a.shape[0], pair_b.shape[0])
    # @end
    for cz in range(z0, z1 + 1):
        for cy in range(y0, y1 + 1):
            for cx in range(x0, x1 + 1):
                c = (cz * ny + cy) * nx + cx
                s0 = wp.clamp(grid[c], wp.int32(cells) + 1, grid.shape[0])
                s1 = wp.clamp(grid[c + 1], s0, grid.shape[0])
                for s in range(s0, s1):
                    u = grid[s]
                    if u < 0 or u >= nb:
                        continue
                    if skipped(t, u, self_pairs, group, period, near):
                        continue
                    q0 = b[3 * u]
                    q1 = b[3 * u + 1]
                    q2 = b[3 * u + 2]
                    blo = wp.min(wp.min(q0, q1), q2)
                    bhi = wp.max(wp.max(q0, q1), q2)
                    # the pair is tested in the low cell of the overlap of the cell ranges
                    if cx != wp.max(x0, cell_of(blo[0], origin_x, cell, nx)):
                        continue
                    if cy != wp.max(y0, cell_of(blo[1], origin_y, cell, ny)):
                        continue
                    if cz != wp.max(z0, cell_of(blo[2], origin_z, cell, nz)):
                        continue
                    if bhi[0] < lo[0] or blo[0] > hi[0] or bhi[1] < lo[1] or blo[1] > hi[1]:
                        continue
                    if bhi[2] < lo[2] or blo[2] > hi[2]:
                        continue
                    b0 = corner(b, 3 * u)
                    b1 = corner(b, 3 * u + 1)
                    b2 = corner(b, 3 * u + 2)
                    # @when TEST tri3
                    ok, cp, cq = tri_cut(a0, a1, a2, b0, b1, b2)
                    if ok == 0:
                        continue
                    # @end
                    # @when TEST tri2
                    if not tri_overlap2(a0, a1, a2, b0, b1, b2):
                        continue
                    # @end
                    # @when STAGE write
                    k = base + found
                    if k >= 0 and k < cap:
                        pair_a[k] = t
                        pair_b[k] = u
                    # @end
                    found += 1
    # @when STAGE count
    hits[t] = found
    # @end
    # @when STAGE write
    wp.atomic_add(pair_a_count, 0, wp.uint32(found))
    # @end
