"""intersect_retri: retriangulates the cut triangles of a mesh and classifies the pieces.

STAGE=split: live triangle t of ``tris`` (a triangle soup, corners ``tris[3t:3t+3]``) is
split along each of its cuts (``p0[k]``, ``p1[k]`` for ``k`` from
``start[t]`` to ``start[t] + hits[t] - 1``: the cuts of the pairs intersect_pairs listed
for t, computed by intersect_cuts; a cut of no length is passed over). A piece whose
interior the cut runs through is split along the cut's line, into two triangles (through
a corner) or three; the other pieces are left whole. Pieces keep the triangle's
orientation. No cut runs through a piece's interior after its turn, and a piece is only
ever split, so no piece's interior meets the other surface: each piece is wholly inside
or outside the other mesh. The pieces of t are ``pieces[3 * room * t + 3j ..]`` for
``j < piece_count[t]``; a triangle with no cut is one piece, itself. A triangle whose
pieces would pass ``room`` (or the room left in ``pieces``) gets ``piece_count[t] = -1``
(an overflow: the node refuses or gives more room; the slots of t hold what the split
wrote before it ran out). A corner within ``1e-9`` of the piece's size, or ``1e-6`` of
the cut's reach (float32 corners off the axes: no sliver pieces), of the cut's line is
on it. A point where the cut's line meets a piece's edge within ``1e-6`` of the cut's reach from
an end of the cut is that end, bit for bit (the ends are computed alike in the
triangles on either side of an edge, the meets are not: the pieces of neighbours then
share those corners exactly).

STAGE=classify: each piece of live triangle t is flagged ``inside[room * t + j]`` = 1
when its centroid (rounded to float32) lies inside the other closed mesh ``other`` (a
soup): the ray from it along +z crosses the other's triangles an odd number of times;
0 outside; -1 where there is no piece. The ray walks the column of cells of the uniform
grid over the other (the same words and uniforms as intersect_pairs' grid over B) from
the centroid's cell up, a triangle met in several cells counted in one. A triangle is
crossed when the centroid's xy lies in its xy projection and below its plane: the xy
tests are 2x2 orientation determinants in float64 (exact on float32 corners), a point on
an edge or a corner belongs to one triangle of a planar fan by a fixed owner rule (an
edge owns its points when it runs down, or left along a row), so a ray through an edge
of a closed mesh counts one crossing; the side of the plane is an orientation test in
float64. A triangle seen edge-on from +z is never crossed. With COUNT=device the other's
live triangles are ``other_count``.

A piece lying on the other surface (coplanar faces) is not classified by a ray, which
would graze it: it is flagged 2 where its normal agrees with the normal of the other's
triangle under it, 3 where they oppose (the node keeps such a piece once, from one
mesh: the "same/opposite" rule). It lies on triangle v of the other when its three
corners are within ``1e-6`` of the corners' reach from v's plane (0 on the axes) and
v's closed projection along its normal's main axis holds the centroid (2x2
determinants in float64); the triangles of the 27 cells around the centroid's are
looked at. No piece straddles the rim of the other's faces in its plane: that rim is
where the other's faces out of the plane touch it, and intersect_pairs lists those
pairs (their cut lies along the rim), so the split cuts there.

Past the live count (the inert values): a triangle becomes no triangle (piece_count is 0,
no piece is written, inside stays -1). Storage buffers: split 7 (tris, start, hits, p0,
p1, pieces, piece_count), classify 5 (pieces, piece_count, other, grid, inside); one more
over a live count, and classify reads other_count too (7).
"""

import warp as wp


@wp.func
def d3(v: wp.vec3f) -> wp.vec3d:
    return wp.vec3d(wp.float64(v[0]), wp.float64(v[1]), wp.float64(v[2]))


#: a corner this close to a plane (relative to the corners' reach) lies on it (the snap of
#: intersect_pairs and intersect_cuts: a test keeps the three the same)
TOL = wp.constant(wp.float64(1.0e-6))


@wp.func
def f3(v: wp.vec3d) -> wp.vec3f:
    return wp.vec3f(wp.float32(v[0]), wp.float32(v[1]), wp.float32(v[2]))


@wp.func
def side(w: wp.vec3d, s: wp.vec3d, x: wp.vec3d, tol: wp.float64) -> int:
    f = wp.dot(w, x - s)
    if f > tol:
        return 1
    if f < -tol:
        return -1
    return 0


@wp.func
def meet(w: wp.vec3d, s: wp.vec3d, x: wp.vec3d, y: wp.vec3d) -> wp.vec3f:
    fx = wp.dot(w, x - s)
    fy = wp.dot(w, y - s)
    return f3(x + (y - x) * (fx / (fx - fy)))


@wp.func
def meet_at(
    w: wp.vec3d, s: wp.vec3d, e: wp.vec3d, x: wp.vec3d, y: wp.vec3d, near: wp.float64
) -> wp.vec3f:
    # meet, an end of the cut within ``near`` taken as it is: the ends have the same bits
    # in the triangles on either side of an edge they cross, the meets may not
    r = meet(w, s, x, y)
    if wp.length(d3(r) - s) <= near:
        return f3(s)
    if wp.length(d3(r) - e) <= near:
        return f3(e)
    return r


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
def orient2(a: wp.vec3d, b: wp.vec3d, c: wp.vec3d) -> wp.float64:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


@wp.func
def owns(a: wp.vec3d, b: wp.vec3d, p: wp.vec3d) -> bool:
    # p left of the counterclockwise edge ab, or on it and the edge owns its points
    o = orient2(a, b, p)
    if o > wp.float64(0.0):
        return True
    if o < wp.float64(0.0):
        return False
    return b[1] < a[1] or (b[1] == a[1] and b[0] < a[0])


@wp.func
def ray_hits(a: wp.vec3d, b: wp.vec3d, e: wp.vec3d, p: wp.vec3d) -> bool:
    # does the ray from p along +z pass through triangle abe (once, by the owner rule)?
    s = orient2(a, b, e)
    if s == wp.float64(0.0):
        return False
    bb = b
    ee = e
    if s < wp.float64(0.0):
        bb = e
        ee = b
    if not (owns(a, bb, p) and owns(bb, ee, p) and owns(ee, a, p)):
        return False
    return wp.dot(wp.cross(bb - a, ee - a), p - a) < wp.float64(0.0)


@wp.func
def axis_of(n: wp.vec3d) -> int:
    # the axis the normal runs most along: the plane projects without loss onto the others
    k = wp.int32(0)
    if wp.abs(n[1]) > wp.abs(n[k]):
        k = 1
    if wp.abs(n[2]) > wp.abs(n[k]):
        k = 2
    return k


@wp.func
def orient_k(a: wp.vec3d, b: wp.vec3d, c: wp.vec3d, k: int) -> wp.float64:
    # orient2 in the plane that drops axis k (i, j cyclic after k)
    i = (k + 1) % 3
    j = (k + 2) % 3
    return (b[i] - a[i]) * (c[j] - a[j]) - (b[j] - a[j]) * (c[i] - a[i])


@wp.func
def coplanar_side(
    x: wp.vec3d, y: wp.vec3d, z: wp.vec3d, c: wp.vec3d, v0: wp.vec3d, v1: wp.vec3d, v2: wp.vec3d
) -> int:
    # 2 where piece xyz lies in the plane of triangle v and its centroid c in v (closed),
    # normals agreeing; 3 the same with normals opposed; 0 otherwise
    nv = wp.cross(v1 - v0, v2 - v0)
    nl = wp.length(nv)
    if not (nl > wp.float64(0.0)):
        return 0
    reach = wp.max(wp.max(wp.length(v0), wp.length(v1)), wp.length(v2))
    reach = wp.max(reach, wp.max(wp.max(wp.length(x), wp.length(y)), wp.length(z)))
    tol = TOL * reach * nl  # float32 corners of a plane off the axes
    if wp.abs(wp.dot(nv, x - v0)) > tol or wp.abs(wp.dot(nv, y - v0)) > tol:
        return 0
    if wp.abs(wp.dot(nv, z - v0)) > tol:
        return 0
    np_ = wp.cross(y - x, z - x)
    k = axis_of(nv)
    s = orient_k(v0, v1, v2, k)
    if s == wp.float64(0.0):
        return 0
    eps = wp.float64(1.0e-9) * wp.abs(s)
    if orient_k(v0, v1, c, k) * wp.sign(s) < -eps:
        return 0
    if orient_k(v1, v2, c, k) * wp.sign(s) < -eps:
        return 0
    if orient_k(v2, v0, c, k) * wp.sign(s) < -eps:
        return 0
    if wp.dot(np_, nv) > wp.float64(0.0):
        return 2
    return 3


@wp.func
def cell_span(grid: wp.array(dtype=wp.int32), cc: int, cells: wp.int64):
    # the range of grid words listing cell cc (clamped into the list part of grid)
    s0 = wp.clamp(grid[cc], wp.int32(cells) + 1, grid.shape[0])
    s1 = wp.clamp(grid[cc + 1], s0, grid.shape[0])
    return s0, s1


@wp.func
def flat_side(
    pieces: wp.array(dtype=wp.vec3f),
    q: int,
    c: wp.vec3d,
    other: wp.array(dtype=wp.vec3f),
    grid: wp.array(dtype=wp.int32),
    no: int,
    cells: wp.int64,
    cx: int,
    cy: int,
    cz: int,
    nx: int,
    ny: int,
    nz: int,
) -> int:
    # coplanar_side of the piece at pieces[q] against the first triangle of the other in
    # the 27 cells around (cx, cy, cz) it lies on; 0 where it lies on none
    px = d3(pieces[q])
    py = d3(pieces[q + 1])
    pz = d3(pieces[q + 2])
    reach = wp.max(wp.max(wp.length(px), wp.length(py)), wp.length(pz))
    for dz in range(wp.max(cz - 1, 0), wp.min(cz + 2, nz)):
        for dy in range(wp.max(cy - 1, 0), wp.min(cy + 2, ny)):
            for dx in range(wp.max(cx - 1, 0), wp.min(cx + 2, nx)):
                s0, s1 = cell_span(grid, (dz * ny + dy) * nx + dx, cells)
                for k in range(s0, s1):
                    u = grid[k]
                    if u < 0 or u >= no:
                        continue
                    w0 = d3(other[3 * u])
                    w1 = d3(other[3 * u + 1])
                    w2 = d3(other[3 * u + 2])
                    # a triangle whose box (padded past the tolerance) misses c: not under it
                    far = wp.max(wp.max(wp.length(w0), wp.length(w1)), wp.length(w2))
                    pad = wp.float64(4.0) * TOL * wp.max(reach, far)
                    lo = wp.min(wp.min(w0, w1), w2)
                    hi = wp.max(wp.max(w0, w1), w2)
                    if c[0] < lo[0] - pad or c[1] < lo[1] - pad or c[2] < lo[2] - pad:
                        continue
                    if c[0] > hi[0] + pad or c[1] > hi[1] + pad or c[2] > hi[2] + pad:
                        continue
                    f = coplanar_side(px, py, pz, c, w0, w1, w2)
                    if f != 0:
                        return f
    return 0


@wp.kernel
def intersect_retri(
    # @when STAGE split
    tris: wp.array(dtype=wp.vec3f),
    start: wp.array(dtype=wp.int32),
    hits: wp.array(dtype=wp.int32),
    p0: wp.array(dtype=wp.vec3f),
    p1: wp.array(dtype=wp.vec3f),
    # @end
    pieces: wp.array(dtype=wp.vec3f),
    piece_count: wp.array(dtype=wp.int32),
    # @when STAGE classify
    other: wp.array(dtype=wp.vec3f),
    grid: wp.array(dtype=wp.int32),
    # @when COUNT device
    other_count: wp.array(dtype=wp.uint32),
    # @end
    inside: wp.array(dtype=wp.int32),
    # @end
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
    room: int,
    # @when STAGE classify
    origin_x: float,
    origin_y: float,
    origin_z: float,
    cell: float,
    nx: int,
    ny: int,
    nz: int,
    # @end
):
    t = wp.tid()
    live = piece_count.shape[0]
    # @when STAGE split
    live = wp.min(wp.min(live, start.shape[0]), hits.shape[0])
    # @end
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(live)))
    # @end
    if t >= live or room <= 0 or t > 100000000:
        return
    # the slots of t's pieces that exist: room, or fewer at the end of pieces
    base64 = wp.int64(t) * wp.int64(room) * wp.int64(3)
    if base64 >= wp.int64(pieces.shape[0]):
        # @when STAGE split
        piece_count[t] = -1
        # @end
        return
    base = wp.int32(base64)
    fit = wp.int32(wp.min(wp.int64(room), (wp.int64(pieces.shape[0]) - base64) / wp.int64(3)))
    # @when STAGE split
    if fit < 1 or 3 * t + 2 >= tris.shape[0] or t > 700000000:
        piece_count[t] = -1
        return
    pieces[base] = tris[3 * t]
    pieces[base + 1] = tris[3 * t + 1]
    pieces[base + 2] = tris[3 * t + 2]
    m = wp.int32(1)
    c0 = d3(tris[3 * t])
    nrm = wp.cross(d3(tris[3 * t + 1]) - c0, d3(tris[3 * t + 2]) - c0)
    first = start[t]
    n = hits[t]
    for j in range(n):
        k = first + j
        if k < 0 or k >= p0.shape[0] or k >= p1.shape[0] or m < 0:
            continue
        s = d3(p0[k])
        e = d3(p1[k])
        w = wp.cross(nrm, e - s)
        wl = wp.length(w)
        if not (wl > wp.float64(0.0)):
            continue
        near = TOL * wp.max(wp.length(s), wp.length(e))
        m0 = m
        for i in range(m0):
            if m < 0:
                continue
            q = base + 3 * i
            x = d3(pieces[q])
            y = d3(pieces[q + 1])
            z = d3(pieces[q + 2])
            size = wp.max(wp.max(wp.length(y - x), wp.length(z - y)), wp.length(x - z))
            tol = wl * wp.max(wp.float64(1.0e-9) * size, near)
            sx = side(w, s, x, tol)
            sy = side(w, s, y, tol)
            sz = side(w, s, z, tol)
            if sx * sy >= 0 and sy * sz >= 0 and sz * sx >= 0:
                continue  # no corner on each side: the line does not cross the interior
            # rotate so that x is the corner alone on its side (or on the line)
            for _r in range(2):
                if not (sx == 0 or sy == sz):
                    tx = x
                    x = y
                    y = z
                    z = tx
                    ts = sx
                    sx = sy
                    sy = sz
                    sz = ts
            # the chord of the line across the piece: split only where the cut runs
            cu = wp.vec3d()
            cv = wp.vec3d()
            if sx == 0:
                cu = x
                cv = d3(meet_at(w, s, e, y, z, near))
            else:
                cu = d3(meet_at(w, s, e, x, y, near))
                cv = d3(meet_at(w, s, e, x, z, near))
            uu = wp.dot(e - s, e - s)
            ta = wp.dot(cu - s, e - s)
            tb = wp.dot(cv - s, e - s)
            if (
                wp.max(ta, tb) <= wp.float64(1.0e-9) * uu
                or wp.min(ta, tb) >= (wp.float64(1.0) - wp.float64(1.0e-9)) * uu
            ):
                continue
            if sx == 0:
                # through corner x: y and z on opposite sides, two triangles
                if m + 1 > fit:
                    m = -1
                    continue
                r = meet_at(w, s, e, y, z, near)
                pieces[q] = f3(x)
                pieces[q + 1] = f3(y)
                pieces[q + 2] = r
                o = base + 3 * m
                pieces[o] = f3(x)
                pieces[o + 1] = r
                pieces[o + 2] = f3(z)
                m = m + 1
            else:
                # x alone on its side: a triangle at x and a quad (two triangles)
                if m + 2 > fit:
                    m = -1
                    continue
                rxy = d3(meet_at(w, s, e, x, y, near))
                rxz = d3(meet_at(w, s, e, x, z, near))
                pieces[q] = f3(x)
                pieces[q + 1] = f3(rxy)
                pieces[q + 2] = f3(rxz)
                o = base + 3 * m
                pieces[o] = f3(rxy)
                pieces[o + 1] = f3(y)
                pieces[o + 2] = f3(z)
                pieces[o + 3] = f3(rxy)
                pieces[o + 4] = f3(z)
                pieces[o + 5] = f3(rxz)
                m = m + 2
    piece_count[t] = m
    # @end
    # @when STAGE classify
    m = wp.min(piece_count[t], fit)
    no = other.shape[0] / 3
    # @when COUNT device
    no = wp.int32(wp.min(other_count[0], wp.uint32(no)))
    # @end
    cap = inside.shape[0]
    cells = wp.int64(nx) * wp.int64(ny) * wp.int64(nz)
    usable = nx > 0 and ny > 0 and nz > 0 and cell > 0.0
    if usable:
        usable = cells + wp.int64(1) <= wp.int64(grid.shape[0])
    for j in range(m):
        slot = wp.int64(t) * wp.int64(room) + wp.int64(j)
        if slot >= wp.int64(cap):
            continue
        q = base + 3 * j
        cf = f3((d3(pieces[q]) + d3(pieces[q + 1]) + d3(pieces[q + 2])) / wp.float64(3.0))
        c = d3(cf)
        crossings = wp.int32(0)
        flat = wp.int32(0)
        if usable:
            cx = cell_of(cf[0], origin_x, cell, nx)
            cy = cell_of(cf[1], origin_y, cell, ny)
            cz0 = cell_of(cf[2], origin_z, cell, nz)
            # a piece on the other surface: the same or the opposite side, not a ray
            flat = flat_side(pieces, q, c, other, grid, no, cells, cx, cy, cz0, nx, ny, nz)
            for cz in range(cz0, nz):
                if flat != 0:
                    break
                s0, s1 = cell_span(grid, (cz * ny + cy) * nx + cx, cells)
                for k in range(s0, s1):
                    u = grid[k]
                    if u < 0 or u >= no:
                        continue
                    v0 = other[3 * u]
                    v1 = other[3 * u + 1]
                    v2 = other[3 * u + 2]
                    lo = wp.min(wp.min(v0, v1), v2)
                    hi = wp.max(wp.max(v0, v1), v2)
                    if cz != wp.max(cz0, cell_of(lo[2], origin_z, cell, nz)):
                        continue
                    if cf[0] < lo[0] or cf[0] > hi[0] or cf[1] < lo[1] or cf[1] > hi[1]:
                        continue
                    if ray_hits(d3(v0), d3(v1), d3(v2), c):
                        crossings += 1
        if flat != 0:
            inside[wp.int32(slot)] = flat
        elif crossings % 2 == 1:
            inside[wp.int32(slot)] = 1
        else:
            inside[wp.int32(slot)] = 0
    # @end
