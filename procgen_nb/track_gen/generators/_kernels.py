"""The Warp kernels of the built-in generators and the z profile (one Warp module).

Every kernel skips inactive envs (``active[e] == 0``), reads its random numbers from
``stream_key(seeds[e], salt)`` streams, and writes only its declared outputs.
"""

from __future__ import annotations

import warp as wp

from ..ops.funcs import catmull_rom, catmull_rom_f, ccw, rand01, stream_key

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})

_TWO_PI = wp.constant(6.283185307179586)


@wp.kernel
def _polar_ctrl_k(
    seeds: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    salt_r: int,
    salt_a: int,
    lobes: int,
    jitter: wp.array(dtype=float),
    radii: wp.array(dtype=float),
    phase: wp.array(dtype=float),
):
    """The control radii and the phase; the jitter in a one-word buffer (a dynamic field)."""
    tid = wp.tid()
    e = tid // lobes
    if active[e] == 0:
        return
    k = tid - e * lobes
    radii[tid] = 1.0 + jitter[0] * (2.0 * rand01(stream_key(seeds[e], salt_r), k) - 1.0)
    if k == 0:
        phase[e] = _TWO_PI * rand01(stream_key(seeds[e], salt_a), 0)


@wp.kernel
def _polar_k(
    radii: wp.array(dtype=float),
    phase: wp.array(dtype=float),
    active: wp.array(dtype=wp.int32),
    lobes: int,
    jitter: wp.array(dtype=float),
    floor_r: wp.array(dtype=float),
    raw: int,
    scale: float,
    xy: wp.array(dtype=wp.vec2),
):
    """The loop through the control radii; the jitter and the floor radius in one-word
    buffers (dynamic fields)."""
    tid = wp.tid()
    e = tid // raw
    if active[e] == 0:
        return
    i = tid - e * raw
    u = float(i) * float(lobes) / float(raw)
    k = int(wp.floor(u))
    t = u - float(k)
    b = e * lobes
    r = catmull_rom_f(
        radii[b + (k + lobes - 1) % lobes],
        radii[b + k % lobes],
        radii[b + (k + 1) % lobes],
        radii[b + (k + 2) % lobes],
        t,
    )
    r = wp.max(r, floor_r[0]) / (1.0 + jitter[0])
    th = _TWO_PI * float(i) / float(raw) + phase[e]
    xy[tid] = wp.vec2(wp.cos(th), wp.sin(th)) * (r * scale)


@wp.kernel
def _checkpoint_ctrl_k(
    seeds: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    salt_r: int,
    salt_a: int,
    n: int,
    radius_jitter: float,
    angle_jitter: float,
    scale: float,
    ctrl: wp.array(dtype=wp.vec2),
    ctrl_count: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    e = tid // n
    if active[e] == 0:
        return
    k = tid - e * n
    ka = stream_key(seeds[e], salt_a)
    kr = stream_key(seeds[e], salt_r)
    phase = _TWO_PI * rand01(ka, n)
    ang = _TWO_PI * (float(k) + angle_jitter * (rand01(ka, k) - 0.5)) / float(n) + phase
    rad = (1.0 + radius_jitter * (2.0 * rand01(kr, k) - 1.0)) / (1.0 + radius_jitter)
    ctrl[tid] = wp.vec2(wp.cos(ang), wp.sin(ang)) * (rad * scale)
    if k == 0:
        ctrl_count[e] = n


@wp.kernel
def _closed_cr_k(
    ctrl: wp.array(dtype=wp.vec2),
    ctrl_count: wp.array(dtype=wp.int32),
    kmax: int,
    samples: int,
    active: wp.array(dtype=wp.int32),
    raw: int,
    xy: wp.array(dtype=wp.vec2),
    count: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    e = tid // raw
    if active[e] == 0:
        return
    i = tid - e * raw
    kc = wp.min(ctrl_count[e], kmax)
    if i == 0:
        count[e] = wp.max(kc, 0) * samples
    if i >= kc * samples or kc < 3:
        xy[tid] = wp.vec2(wp.nan, wp.nan)
        return
    k = i // samples
    t = float(i - k * samples) / float(samples)
    b = e * kmax
    xy[tid] = catmull_rom(
        ctrl[b + (k + kc - 1) % kc], ctrl[b + k], ctrl[b + (k + 1) % kc], ctrl[b + (k + 2) % kc], t
    )


@wp.func
def _clamped(h: wp.vec2, cap: float) -> wp.vec2:
    """``h`` shortened to length ``cap`` when longer."""
    ln = wp.length(h)
    if ln > cap:
        return h * (cap / ln)
    return h


@wp.func
def bezier_chain_point(
    tid: int,
    corners: wp.array(dtype=wp.vec2),
    corner_count: wp.array(dtype=wp.int32),
    kmax: int,
    samples: int,
    tension: float,
    clamp: int,
    raw: int,
    xy: wp.array(dtype=wp.vec2),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
):
    """Point ``tid`` of the closed chain of cubic Beziers through an env's corners
    (handles ``tension / 6`` of the chord of the neighbours; with ``clamp`` != 0 each
    handle is at most a third of its own span). Thread 0 of an env writes ``count[e]``
    and ``valid[e] = 0`` under 3 corners; points past the count are NaN."""
    e = tid // raw
    i = tid - e * raw
    kc = wp.min(corner_count[e], kmax)
    if i == 0:
        count[e] = wp.max(kc, 0) * samples
        if kc < 3:
            valid[e] = 0
    if i >= kc * samples or kc < 3:
        xy[tid] = wp.vec2(wp.nan, wp.nan)
    else:
        k = i // samples
        t = float(i - k * samples) / float(samples)
        b = e * kmax
        pm = corners[b + (k + kc - 1) % kc]
        p0 = corners[b + k]
        p3 = corners[b + (k + 1) % kc]
        p4 = corners[b + (k + 2) % kc]
        h1 = (p3 - pm) * (tension / 6.0)
        h2 = (p4 - p0) * (tension / 6.0)
        if clamp != 0:
            cap = wp.length(p3 - p0) / 3.0
            h1 = _clamped(h1, cap)
            h2 = _clamped(h2, cap)
        p1 = p0 + h1
        p2 = p3 - h2
        s = 1.0 - t
        xy[tid] = (
            p0 * (s * s * s) + p1 * (3.0 * s * s * t) + p2 * (3.0 * s * t * t) + p3 * (t * t * t)
        )


@wp.kernel
def _bezier_chain_k(
    corners: wp.array(dtype=wp.vec2),
    corner_count: wp.array(dtype=wp.int32),
    kmax: int,
    samples: int,
    tension: float,
    active: wp.array(dtype=wp.int32),
    raw: int,
    xy: wp.array(dtype=wp.vec2),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    if active[tid // raw] != 0:
        bezier_chain_point(
            tid, corners, corner_count, kmax, samples, tension, 0, raw, xy, count, valid
        )


@wp.kernel
def _hull_k(
    seeds: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    salt: int,
    pts: wp.array(dtype=wp.vec2),
    pts_count: wp.array(dtype=wp.int32),
    pmax: int,
    displacement: float,
    ctrl: wp.array(dtype=wp.vec2),
    ctrl_count: wp.array(dtype=wp.int32),
    used: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    n = wp.min(pts_count[e], pmax)
    b = e * pmax
    cb = e * 2 * pmax
    ctrl_count[e] = 0
    if n < 3:
        valid[e] = 0
        return
    start = wp.int32(0)
    for j in range(1, n):
        p = pts[b + j]
        q = pts[b + start]
        if p[0] < q[0] or (p[0] == q[0] and p[1] < q[1]):
            start = j
    key = stream_key(seeds[e], salt)
    cur = start
    h = wp.int32(0)
    for _it in range(n):
        used[b + h] = cur
        h += 1
        nxt = (cur + 1) % n
        for j in range(n):
            if j == cur:
                continue
            o = ccw(pts[b + cur], pts[b + nxt], pts[b + j])
            if o < wp.float64(0.0):
                nxt = j
            elif o == wp.float64(0.0):
                if wp.length_sq(pts[b + j] - pts[b + cur]) > wp.length_sq(
                    pts[b + nxt] - pts[b + cur]
                ):
                    nxt = j
        cur = nxt
        if cur == start:
            break
    if h < 3:
        valid[e] = 0
        return
    for k in range(h):
        a = pts[b + used[b + k]]
        c = pts[b + used[b + (k + 1) % h]]
        d = c - a
        ln = wp.length(d)
        nrm = wp.vec2(d[1], -d[0])
        if ln > 0.0:
            nrm = nrm / ln
        off = displacement * ln * (2.0 * rand01(key, k) - 1.0)
        ctrl[cb + 2 * k] = a
        ctrl[cb + 2 * k + 1] = (a + c) * 0.5 + nrm * off
    ctrl_count[e] = 2 * h


@wp.func
def voronoi_walk_ring(
    seed: wp.int32,
    salt_sites: int,
    salt_ring: int,
    grid: int,
    jitter: float,
    ring: float,
    wobble: float,
    ring_samples: int,
    scale: float,
    ctrl: wp.array(dtype=wp.vec2),
    b: int,
) -> int:
    """Writes the sites of the cells the ring crosses at ``ctrl[b:]``; returns their count."""
    ks = stream_key(seed, salt_sites)
    kr = stream_key(seed, salt_ring)
    p1 = _TWO_PI * rand01(kr, 0)
    p2 = _TWO_PI * rand01(kr, 1)
    r0 = ring * (0.85 + 0.3 * rand01(kr, 2))
    cnt = wp.int32(0)
    first = wp.int32(-1)
    last = wp.int32(-1)
    for m in range(ring_samples):
        th = _TWO_PI * float(m) / float(ring_samples)
        rho = r0 * (1.0 + wobble * (0.6 * wp.cos(2.0 * th + p1) + 0.4 * wp.sin(3.0 * th + p2)))
        q = wp.vec2(wp.cos(th), wp.sin(th)) * rho
        best = wp.int32(0)
        bestd = wp.float32(1.0e30)
        site = wp.vec2(0.0, 0.0)
        for c in range(grid * grid):
            cx = c % grid
            cy = c // grid
            s = wp.vec2(
                (float(cx) + 0.5 + jitter * (rand01(ks, 2 * c) - 0.5)) / float(grid) * 2.0 - 1.0,
                (float(cy) + 0.5 + jitter * (rand01(ks, 2 * c + 1) - 0.5)) / float(grid) * 2.0
                - 1.0,
            )
            d = wp.length_sq(s - q)
            if d < bestd:
                bestd = d
                best = c
                site = s
        if best != last:
            if cnt == 0:
                first = best
            ctrl[b + cnt] = site * scale
            cnt += 1
            last = best
    if cnt > 1 and last == first:
        cnt -= 1
    return cnt


#: sites held in registers by ``_voronoi_sites_k`` (VoronoiParams.grid <= 12)
_MAX_SITES = 144
_vsites = wp.types.vector(length=_MAX_SITES, dtype=wp.float32)


@wp.func
def _voronoi_walk_cached(
    seed: wp.int32,
    salt_sites: int,
    salt_ring: int,
    grid: int,
    jitter: float,
    ring: float,
    wobble: float,
    ring_samples: int,
    scale: float,
    ctrl: wp.array(dtype=wp.vec2),
    b: int,
) -> int:
    """``voronoi_walk_ring`` with each site computed once (not once per ring sample): the
    same floats, so the same bytes. Needs ``grid * grid <= _MAX_SITES``."""
    ks = stream_key(seed, salt_sites)
    kr = stream_key(seed, salt_ring)
    sx = _vsites()
    sy = _vsites()
    for c in range(grid * grid):
        cx = c % grid
        cy = c // grid
        sx[c] = (float(cx) + 0.5 + jitter * (rand01(ks, 2 * c) - 0.5)) / float(grid) * 2.0 - 1.0
        sy[c] = (float(cy) + 0.5 + jitter * (rand01(ks, 2 * c + 1) - 0.5)) / float(grid) * 2.0 - 1.0
    p1 = _TWO_PI * rand01(kr, 0)
    p2 = _TWO_PI * rand01(kr, 1)
    r0 = ring * (0.85 + 0.3 * rand01(kr, 2))
    cnt = wp.int32(0)
    first = wp.int32(-1)
    last = wp.int32(-1)
    for m in range(ring_samples):
        th = _TWO_PI * float(m) / float(ring_samples)
        rho = r0 * (1.0 + wobble * (0.6 * wp.cos(2.0 * th + p1) + 0.4 * wp.sin(3.0 * th + p2)))
        q = wp.vec2(wp.cos(th), wp.sin(th)) * rho
        best = wp.int32(0)
        bestd = wp.float32(1.0e30)
        for c in range(grid * grid):
            d = wp.length_sq(wp.vec2(sx[c], sy[c]) - q)
            if d < bestd:
                bestd = d
                best = c
        if best != last:
            if cnt == 0:
                first = best
            ctrl[b + cnt] = wp.vec2(sx[best], sy[best]) * scale
            cnt += 1
            last = best
    if cnt > 1 and last == first:
        cnt -= 1
    return cnt


@wp.kernel
def _voronoi_sites_k(
    seeds: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    salt_sites: int,
    salt_ring: int,
    grid: int,
    jitter: float,
    ring: float,
    wobble: float,
    ring_samples: int,
    scale: float,
    ctrl: wp.array(dtype=wp.vec2),
    ctrl_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
):
    """``_voronoi_anchors_k`` with the sites computed once per env (the same bytes)."""
    e = wp.tid()
    if active[e] == 0:
        return
    b = e * ring_samples
    cnt = wp.int32(0)
    if grid * grid <= _MAX_SITES:
        cnt = _voronoi_walk_cached(
            seeds[e],
            salt_sites,
            salt_ring,
            grid,
            jitter,
            ring,
            wobble,
            ring_samples,
            scale,
            ctrl,
            b,
        )
    else:
        cnt = voronoi_walk_ring(
            seeds[e],
            salt_sites,
            salt_ring,
            grid,
            jitter,
            ring,
            wobble,
            ring_samples,
            scale,
            ctrl,
            b,
        )
    ctrl_count[e] = cnt
    if cnt < 3:
        valid[e] = 0


@wp.kernel
def _voronoi_anchors_k(
    seeds: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    salt_sites: int,
    salt_ring: int,
    grid: int,
    jitter: float,
    ring: float,
    wobble: float,
    ring_samples: int,
    scale: float,
    ctrl: wp.array(dtype=wp.vec2),
    ctrl_count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    b = e * ring_samples
    cnt = voronoi_walk_ring(
        seeds[e], salt_sites, salt_ring, grid, jitter, ring, wobble, ring_samples, scale, ctrl, b
    )
    ctrl_count[e] = cnt
    if cnt < 3:
        valid[e] = 0


@wp.kernel
def _z_profile_k(
    seeds: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    salt: int,
    knots: int,
    amplitude: wp.array(dtype=float),
    n: int,
    z: wp.array(dtype=float),
):
    tid = wp.tid()
    e = tid // n
    if active[e] == 0:
        return
    i = tid - e * n
    key = stream_key(seeds[e], salt)
    u = float(i) * float(knots) / float(n)
    k = int(wp.floor(u))
    t = u - float(k)
    v = catmull_rom_f(
        2.0 * rand01(key, (k + knots - 1) % knots) - 1.0,
        2.0 * rand01(key, k % knots) - 1.0,
        2.0 * rand01(key, (k + 1) % knots) - 1.0,
        2.0 * rand01(key, (k + 2) % knots) - 1.0,
        t,
    )
    z[tid] = amplitude[0] * v
