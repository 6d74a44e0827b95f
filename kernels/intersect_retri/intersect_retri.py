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
wrote before it ran out). A side within ``1e-9`` of a piece's
size is on the line.

STAGE=classify: each piece of live triangle t is flagged ``inside[room * t + j]`` = 1
when its centroid lies inside the other closed mesh ``other`` (a soup, outward
orientation): the generalized winding number of the centroid (the sum of the solid
angles of the other triangles over 4 pi, in float64; a brute-force loop over the other's
triangles) is above 0.5; 0 outside; -1 where there is no piece. With COUNT=device the
other's live triangles are ``other_count``.

Past the live count (the seed's table): a triangle becomes no triangle (piece_count is 0,
no piece is written, inside stays -1). Storage buffers: split 7 (tris, start, hits, p0,
p1, pieces, piece_count), classify 4 (pieces, piece_count, other, inside); one more over
a live count, and classify reads other_count too (6).
"""

import warp as wp


@wp.func
def d3(v: wp.vec3f) -> wp.vec3d:
    return wp.vec3d(wp.float64(v[0]), wp.float64(v[1]), wp.float64(v[2]))


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
    # @when COUNT device
    other_count: wp.array(dtype=wp.uint32),
    # @end
    inside: wp.array(dtype=wp.int32),
    # @end
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
    room: int,
):
    t = wp.tid()
    live = piece_count.shape[0]
    # @when STAGE split
    live = wp.min(wp.min(live, start.shape[0]), hits.shape[0])
    # @end
    # @when COUNT device
    live = wp.min(wp.int32(domain_count[0]), live)
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
        m0 = m
        for i in range(m0):
            if m < 0:
                continue
            q = base + 3 * i
            x = d3(pieces[q])
            y = d3(pieces[q + 1])
            z = d3(pieces[q + 2])
            size = wp.max(wp.max(wp.length(y - x), wp.length(z - y)), wp.length(x - z))
            tol = wp.float64(1.0e-9) * wl * size
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
                cv = d3(meet(w, s, y, z))
            else:
                cu = d3(meet(w, s, x, y))
                cv = d3(meet(w, s, x, z))
            uu = wp.dot(e - s, e - s)
            ta = wp.dot(cu - s, e - s)
            tb = wp.dot(cv - s, e - s)
            if wp.max(ta, tb) <= wp.float64(1.0e-9) * uu or wp.min(ta, tb) >= (
                wp.float64(1.0) - wp.float64(1.0e-9)
            ) * uu:
                continue
            if sx == 0:
                # through corner x: y and z on opposite sides, two triangles
                if m + 1 > fit:
                    m = -1
                    continue
                r = meet(w, s, y, z)
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
                rxy = d3(meet(w, s, x, y))
                rxz = d3(meet(w, s, x, z))
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
    no = wp.min(wp.int32(other_count[0]), no)
    # @end
    cap = inside.shape[0]
    for j in range(m):
        slot = wp.int64(t) * wp.int64(room) + wp.int64(j)
        if slot >= wp.int64(cap):
            continue
        q = base + 3 * j
        c = (d3(pieces[q]) + d3(pieces[q + 1]) + d3(pieces[q + 2])) / wp.float64(3.0)
        total = wp.float64(0.0)
        for u in range(no):
            a = d3(other[3 * u]) - c
            b = d3(other[3 * u + 1]) - c
            e = d3(other[3 * u + 2]) - c
            la = wp.length(a)
            lb = wp.length(b)
            le = wp.length(e)
            num = wp.dot(a, wp.cross(b, e))
            den = la * lb * le + wp.dot(a, b) * le + wp.dot(a, e) * lb + wp.dot(b, e) * la
            total = total + wp.float64(2.0) * wp.atan2(num, den)
        wn = total / (wp.float64(4.0) * wp.float64(3.141592653589793))
        if wn > wp.float64(0.5):
            inside[wp.int32(slot)] = 1
        else:
            inside[wp.int32(slot)] = 0
    # @end
