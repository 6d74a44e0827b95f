"""Kernels of the ``repulsive`` generator (one Warp module).

One thread per env: ``_rep_step_k`` is a whole descent step of its env (tangents, the
analytic gradient of the discrete tangent-point energy over the pairs ``i < j``, each pair
once, and the Jacobi step in place), so a step is one launch and the env's points stay in
the thread's cache. Each pair's term is added to ``i`` and subtracted from ``j`` in the
env's own scratch, in a fixed order: no atomics, the same bytes run to run. Frozen envs
(``frozen[e] == 1``) skip the step; inactive ones (``active[e] == 0``) every kernel.
"""

from __future__ import annotations

import warp as wp

from ..ops.funcs import rand01, stream_key

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})

_TWO_PI = wp.constant(6.283185307179586)
#: the weight ``w`` of ``_rep_subdivide_k`` for the 4-point interpolating scheme
FOUR_POINT = 1.0 / 16.0


@wp.kernel
def _rep_init_k(
    seeds: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    salt: int,
    n0: int,
    jitter: float,
    radius: float,
    raw: int,
    pos: wp.array(dtype=wp.vec2),
    frozen: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    e = tid // n0
    if active[e] == 0:
        return
    i = tid - e * n0
    key = stream_key(seeds[e], salt)
    th = _TWO_PI * float(i) / float(n0) + _TWO_PI * rand01(key, n0)
    r = radius * (1.0 + jitter * (2.0 * rand01(key, i) - 1.0))
    pos[e * raw + i] = wp.vec2(wp.cos(th), wp.sin(th)) * r
    if i == 0:
        frozen[e] = 0


@wp.kernel
def _rep_rest_k(
    pos: wp.array(dtype=wp.vec2),
    n: int,
    raw: int,
    active: wp.array(dtype=wp.int32),
    growth: float,
    rest: wp.array(dtype=float),
):
    tid = wp.tid()
    e = tid // n
    if active[e] == 0:
        return
    i = tid - e * n
    b = e * raw
    rest[b + i] = growth * wp.length(pos[b + (i + 1) % n] - pos[b + i])


@wp.kernel
def _rep_step_k(
    pos: wp.array(dtype=wp.vec2),
    grad: wp.array(dtype=wp.vec2),
    tan: wp.array(dtype=wp.vec2),
    dmin: wp.array(dtype=float),
    rest: wp.array(dtype=float),
    n: int,
    raw: int,
    active: wp.array(dtype=wp.int32),
    frozen: wp.array(dtype=wp.int32),
    h: float,
    step: float,
    repulsion: float,
    smoothing: float,
    box: float,
    tol: float,
):
    """One descent step of one env (one thread per env): tangents, the pair gradient over
    ``i < j`` (each pair once, added to ``i`` and subtracted from ``j``), the Jacobi step
    in place, and the freeze when no point moved ``tol`` or more."""
    e = wp.tid()
    if active[e] == 0 or frozen[e] != 0:
        return
    b = e * raw
    inv_h = 1.0 / h
    for i in range(n):
        d = pos[b + (i + 1) % n] - pos[b + (i + n - 1) % n]
        ln = wp.length(d)
        t = wp.vec2(1.0, 0.0)
        if ln > 0.0:
            t = d * (1.0 / ln)
        tan[b + i] = t
        grad[b + i] = wp.vec2(0.0, 0.0)
        dmin[b + i] = 1.0e9
    # pairs (i, j), j >= i + 2, but not (0, n - 1). With d = (x_i - x_j) / h, c = T x d
    # and P = perp T, E_ij = (c_i^2 + c_j^2) / |d|^4 has dE_ij/dd = 2 (c_i P_i + c_j P_j) /
    # |d|^4 - 4 (c_i^2 + c_j^2) d / |d|^6; in world units D = h d (C = T x D) that is
    # 2 h^3 (C_i P_i + C_j P_j - 2 (C_i^2 + C_j^2) D / |D|^2) / |D|^4. The bracket / |D|^4
    # is summed (added to i, subtracted from j: j's d is -d) and scaled by 2 h^3 once.
    # |d|^2 is clamped below at 1e-6 (|D|^2 at 1e-6 h^2); dmin is the smallest |D|^2.
    r2_floor = 1.0e-6 * h * h
    for i in range(n - 2):
        p = pos[b + i]
        ti = tan[b + i]
        pi = wp.vec2(-ti[1], ti[0])
        gi = wp.vec2(0.0, 0.0)
        mi = dmin[b + i]
        last = n
        if i == 0:
            last = n - 1
        for j in range(i + 2, last):
            d = p - pos[b + j]
            r2 = wp.max(wp.length_sq(d), r2_floor)
            tj = tan[b + j]
            ci = ti[0] * d[1] - ti[1] * d[0]
            cj = tj[0] * d[1] - tj[1] * d[0]
            q2 = 1.0 / r2
            pj = wp.vec2(-tj[1], tj[0])
            t = (pi * ci + pj * cj - d * (2.0 * (ci * ci + cj * cj) * q2)) * (q2 * q2)
            gi += t
            grad[b + j] = grad[b + j] - t
            mi = wp.min(mi, r2)
            dmin[b + j] = wp.min(dmin[b + j], r2)
        grad[b + i] = grad[b + i] + gi
        dmin[b + i] = mi
    # the Jacobi step in place: the old x_{i-1} is kept in ``prev``, the old x_0 in ``first``
    first = pos[b]
    prev = pos[b + n - 1]
    gscale = 2.0 * repulsion * h * h * h
    mx = wp.float32(0.0)
    for i in range(n):
        p = pos[b + i]
        pn = first
        if i < n - 1:
            pn = pos[b + i + 1]
        e0 = p - prev
        e1 = pn - p
        l0 = wp.max(wp.length(e0), 1.0e-9)
        l1 = wp.max(wp.length(e1), 1.0e-9)
        t0 = rest[b + (i + n - 1) % n]
        t1 = rest[b + i]
        gs = e0 * ((l0 - t0) / (l0 * h)) - e1 * ((l1 - t1) / (l1 * h))
        dirn = -(grad[b + i] * gscale + gs) + ((prev + pn) * 0.5 - p) * (smoothing * inv_h)
        rp = wp.length(p)
        if rp > box:
            dirn = dirn - p * (2.0 * (rp - box) / (rp * h))
        m = wp.length(dirn)
        lim = wp.min(step, 0.3 * wp.sqrt(dmin[b + i]) * inv_h)
        q = p + dirn * (h * lim / wp.max(m, 1.0))
        mx = wp.max(mx, wp.length(q - p))
        prev = p
        pos[b + i] = q
    if mx < tol:
        frozen[e] = 1


@wp.kernel
def _rep_subdivide_k(
    pos: wp.array(dtype=wp.vec2),
    rest: wp.array(dtype=float),
    n: int,
    raw: int,
    active: wp.array(dtype=wp.int32),
    frozen: wp.array(dtype=wp.int32),
    w: float,
):
    """Doubles an env's ``n`` points in place: ``x_i`` stays at ``2 i`` and ``2 i + 1`` gets
    ``(x_i + x_{i+1}) (1/2 + w) - (x_{i-1} + x_{i+2}) w`` (``w = 0``: the midpoint; ``w =
    1/16``: the 4-point interpolating scheme); each rest length splits in two halves.
    Written from the last point down, the originals not yet overwritten read in place and the
    three that are (``x_{n-1}``, ``x_0``, ``x_1``) kept in registers."""
    e = wp.tid()
    if active[e] == 0:
        return
    b = e * raw
    last = pos[b + n - 1]
    x1 = pos[b + (1 % n)]
    xb = last  # x_i
    xc = pos[b]  # x_{i+1}
    xd = x1  # x_{i+2}
    for k in range(n):
        i = n - 1 - k
        xa = last  # x_{i-1}
        if i > 0:
            xa = pos[b + i - 1]
        pos[b + 2 * i + 1] = (xb + xc) * (0.5 + w) - (xa + xd) * w
        pos[b + 2 * i] = xb
        half = rest[b + i] * 0.5
        rest[b + 2 * i + 1] = half
        rest[b + 2 * i] = half
        xd = xc
        xc = xb
        xb = xa
    frozen[e] = 0


@wp.kernel
def _rep_fit_k(
    pos: wp.array(dtype=wp.vec2),
    n: int,
    raw: int,
    active: wp.array(dtype=wp.int32),
    scale: float,
):
    e = wp.tid()
    if active[e] == 0:
        return
    b = e * raw
    lo = pos[b]
    hi = pos[b]
    for i in range(n):
        p = pos[b + i]
        lo = wp.vec2(wp.min(lo[0], p[0]), wp.min(lo[1], p[1]))
        hi = wp.vec2(wp.max(hi[0], p[0]), wp.max(hi[1], p[1]))
    c = (lo + hi) * 0.5
    ext = wp.max(hi[0] - lo[0], hi[1] - lo[1]) * 0.5
    k = wp.float32(1.0)
    if ext > 0.0:
        k = 0.95 * scale / ext
    for i in range(n):
        pos[b + i] = (pos[b + i] - c) * k
