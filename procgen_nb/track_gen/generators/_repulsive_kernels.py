"""Kernels of the ``repulsive`` generator (one Warp module).

Analytic adjoints: the gradient of the discrete tangent-point energy at vertex ``i`` is a
gather over the other vertices (each thread writes only its own vertex), so no atomics and
the same bytes run to run. Frozen envs (``frozen[e] == 1``) skip every kernel.
"""

from __future__ import annotations

import warp as wp

from ..ops.funcs import rand01, stream_key

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})

_TWO_PI = wp.constant(6.283185307179586)


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
def _rep_tangent_k(
    pos: wp.array(dtype=wp.vec2),
    n: int,
    raw: int,
    active: wp.array(dtype=wp.int32),
    frozen: wp.array(dtype=wp.int32),
    tan: wp.array(dtype=wp.vec2),
):
    tid = wp.tid()
    e = tid // n
    if active[e] == 0 or frozen[e] != 0:
        return
    i = tid - e * n
    b = e * raw
    d = pos[b + (i + 1) % n] - pos[b + (i + n - 1) % n]
    ln = wp.length(d)
    t = wp.vec2(1.0, 0.0)
    if ln > 0.0:
        t = d / ln
    tan[b + i] = t


@wp.kernel
def _rep_step_k(
    pos: wp.array(dtype=wp.vec2),
    tan: wp.array(dtype=wp.vec2),
    n: int,
    raw: int,
    active: wp.array(dtype=wp.int32),
    frozen: wp.array(dtype=wp.int32),
    h: float,
    rest: wp.array(dtype=float),
    step: float,
    repulsion: float,
    smoothing: float,
    box: float,
    nxt: wp.array(dtype=wp.vec2),
):
    tid = wp.tid()
    e = tid // n
    if active[e] == 0 or frozen[e] != 0:
        return
    i = tid - e * n
    b = e * raw
    p = pos[b + i]
    ti = tan[b + i]
    pi = wp.vec2(-ti[1], ti[0])
    g = wp.vec2(0.0, 0.0)
    inv_h = 1.0 / h
    dmin = wp.float32(1.0e9)
    for j in range(n):
        dj = wp.abs(i - j)
        if dj <= 1 or dj >= n - 1:
            continue
        d = (p - pos[b + j]) * inv_h
        r2 = wp.max(wp.length_sq(d), 1.0e-6)
        dmin = wp.min(dmin, r2)
        r4 = r2 * r2
        tj = tan[b + j]
        pj = wp.vec2(-tj[1], tj[0])
        ci = ti[0] * d[1] - ti[1] * d[0]
        cj = tj[0] * d[1] - tj[1] * d[0]
        g += (pi * (2.0 * ci) + pj * (2.0 * cj)) / r4 - d * (4.0 * (ci * ci + cj * cj) / (r4 * r2))
    pp = pos[b + (i + n - 1) % n]
    pn = pos[b + (i + 1) % n]
    e0 = p - pp
    e1 = pn - p
    l0 = wp.max(wp.length(e0), 1.0e-9)
    l1 = wp.max(wp.length(e1), 1.0e-9)
    t0 = rest[b + (i + n - 1) % n]
    t1 = rest[b + i]
    gs = e0 * ((l0 - t0) / (l0 * h)) - e1 * ((l1 - t1) / (l1 * h))
    dirn = -(g * repulsion + gs) + ((pp + pn) * 0.5 - p) * (smoothing * inv_h)
    rp = wp.length(p)
    if rp > box:
        dirn = dirn - p * (2.0 * (rp - box) / (rp * h))
    m = wp.length(dirn)
    lim = wp.min(step, 0.3 * wp.sqrt(dmin))
    nxt[b + i] = p + dirn * (h * lim / wp.max(m, 1.0))


@wp.kernel
def _rep_commit_k(
    pos: wp.array(dtype=wp.vec2),
    nxt: wp.array(dtype=wp.vec2),
    n: int,
    raw: int,
    active: wp.array(dtype=wp.int32),
    frozen: wp.array(dtype=wp.int32),
    tol: float,
):
    e = wp.tid()
    if active[e] == 0 or frozen[e] != 0:
        return
    b = e * raw
    mx = wp.float32(0.0)
    for i in range(n):
        mx = wp.max(mx, wp.length(nxt[b + i] - pos[b + i]))
        pos[b + i] = nxt[b + i]
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
):
    e = wp.tid()
    if active[e] == 0:
        return
    b = e * raw
    first = pos[b]
    for k in range(n):
        i = n - 1 - k
        a = pos[b + i]
        c = first
        if i < n - 1:
            c = pos[b + 2 * i + 2]
        pos[b + 2 * i + 1] = (a + c) * 0.5
        pos[b + 2 * i] = a
        half = rest[b + i] * 0.5
        rest[b + 2 * i + 1] = half
        rest[b + 2 * i] = half
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
