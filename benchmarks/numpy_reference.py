"""NumPy references of the built-in track generators, the resampling and the validity
checks, for ``compare_generators.py``: the same lowbias32 hash and streams as the Warp
generators, so the same tracks (float32 rounding apart).

- ``numpy_pipeline(name, seeds, n)``: generate, resample (``np.interp`` over the cumulative
  arc length, O(N)), validity (``shapely.is_simple`` and the summed turning angle): the best
  a user would write (the corner repair of ``bezier``, ``hull`` and ``voronoi`` for every
  env at once: ``numpy_repair.round_corners_batch``, ``smooth_chain_batch``);
- ``numpy_pipeline(..., old=True)``: the former reference, an O(N^2) resampler and a
  brute-force crossing loop (kept to print the old ratio beside the new one).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # loaded by path (a test): its sibling is imported by name
    sys.path.insert(0, _HERE)
from numpy_repair import round_corners_batch, smooth_chain_batch  # noqa: E402

#: the repair switch and its fields at their defaults (``BezierParams`` and the others)
REPAIR = {"repair": True, "spacing": 0.1, "corner_radius": 0.12}

# -- NumPy reference: the same hash, generators, resampling and validity ------------------
_M = np.uint32(0xFFFFFFFF)


def _hash(x: np.ndarray) -> np.ndarray:
    """lowbias32, as ``ops.funcs.hash_u32`` (wrapping uint32 arithmetic)."""
    x = np.array(x, dtype=np.uint32)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint32(16)
        x *= np.uint32(0x7FEB352D)
        x ^= x >> np.uint32(15)
        x *= np.uint32(0x846CA68B)
        x ^= x >> np.uint32(16)
    return x


def _stream_key(seeds: np.ndarray, salt: int) -> np.ndarray:
    return _hash(seeds.astype(np.uint32) ^ _hash((int(salt) + 0x9E3779B9) & 0xFFFFFFFF))


def _rand01(key: np.ndarray, index: np.ndarray) -> np.ndarray:
    idx = (np.asarray(index, dtype=np.int64) * 0x9E3779B9 + 1) & 0xFFFFFFFF
    u = _hash(key ^ _hash(idx))
    return (u >> np.uint32(8)).astype(np.float64) / 16777216.0


def base_seeds(seed: int, epoch: int, num_envs: int) -> np.ndarray:
    """The per-env base seeds of ``TrackGenerator`` for attempt 0."""
    env = ((np.arange(num_envs, dtype=np.int64) + seed) & 0xFFFFFFFF).astype(np.uint32)
    e = (int(epoch) * 0x9E3779B9 + 0x3C6EF372) & 0xFFFFFFFF
    return _hash(_hash(env) ^ np.uint32(e))


def _cr(p0, p1, p2, p3, t):
    t2, t3 = t * t, t * t * t
    return 0.5 * (
        2 * p1
        + (p2 - p0) * t
        + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t2
        + (3 * p1 - p0 - 3 * p2 + p3) * t3
    )


def numpy_polar(seeds, n, salts, lobes=8, jitter=0.35, floor_r=0.2, scale=1.0):
    """``polar`` in NumPy: [E, n, 2]."""
    kr, ka = _stream_key(seeds, salts[0])[:, None], _stream_key(seeds, salts[1])
    radii = 1.0 + jitter * (2.0 * _rand01(kr, np.arange(lobes)[None]) - 1.0)
    i = np.arange(n)
    u = i * lobes / n
    k = np.floor(u).astype(int)
    t = u - k
    r = _cr(*(radii[:, (k + d) % lobes] for d in (-1, 0, 1, 2)), t)
    r = np.maximum(r, floor_r) / (1.0 + jitter)
    th = 2 * np.pi * i / n + (2 * np.pi * _rand01(ka, 0))[:, None]
    return np.stack([np.cos(th), np.sin(th)], -1) * (r * scale)[..., None]


def numpy_checkpoint(seeds, n, salts, k=10, rj=0.35, aj=0.5, scale=1.0):
    """``checkpoint`` in NumPy: [E, k*ceil(n/k), 2]."""
    kr, ka = _stream_key(seeds, salts[0])[:, None], _stream_key(seeds, salts[1])[:, None]
    idx = np.arange(k)[None]
    phase = 2 * np.pi * _rand01(ka, k)
    ang = 2 * np.pi * (idx + aj * (_rand01(ka, idx) - 0.5)) / k + phase
    rad = (1.0 + rj * (2.0 * _rand01(kr, idx) - 1.0)) / (1.0 + rj)
    ctrl = np.stack([np.cos(ang), np.sin(ang)], -1) * (rad * scale)[..., None]
    s = max(2, math.ceil(n / k))
    i = np.arange(k * s)
    seg, t = i // s, (i % s / s)[None, :, None]
    return _cr(*(ctrl[:, (seg + d) % k] for d in (-1, 0, 1, 2)), t)


def _rand_int(key: np.ndarray, index, lo, hi) -> np.ndarray:
    """``funcs.rand_int`` (the product in float32, as on the device)."""
    lo, hi = np.asarray(lo), np.asarray(hi)
    span = (hi - lo + 1).astype(np.float32)
    k = (_rand01(key, index).astype(np.float32) * span).astype(np.int64)
    return np.where(hi <= lo, lo, lo + np.minimum(k, (hi - lo + 1) - 1))


def _grid_points(seeds, salts, lo, hi, g, jitter, scale, mx):
    """``ops.sample_counts``, ``grid_cells`` and ``sample_grid_points``: counts [E], xy [E, mx, 2]."""
    E = len(seeds)
    counts = _rand_int(_stream_key(seeds, salts[0]), 0, lo, hi)
    kc = _stream_key(seeds, salts[1])
    perm = np.tile(np.arange(g * g), (E, 1))
    rows = np.arange(E)
    for k in range(mx):
        act = k < counts
        j = _rand_int(kc, k, k, g * g - 1)
        a, b = perm[rows, k].copy(), perm[rows, j].copy()
        perm[rows[act], k] = b[act]
        perm[rows[act], j[act]] = a[act]
    cells = perm[:, :mx]
    kp = _stream_key(seeds, salts[2])[:, None]
    k = np.arange(mx)[None]
    u = (cells % g + 0.5 + jitter * (_rand01(kp, 2 * k) - 0.5)) / g
    v = (cells // g + 0.5 + jitter * (_rand01(kp, 2 * k + 1) - 0.5)) / g
    return counts, np.stack([(2 * u - 1) * scale, (2 * v - 1) * scale], -1)


def _closed_cr(ctrl: np.ndarray, kc: int, samples: int) -> np.ndarray:
    """A closed Catmull-Rom loop through ``ctrl[:kc]``, ``samples`` points per span."""
    i = np.arange(kc * samples)
    seg, t = i // samples, (i % samples / samples)[:, None]
    return _cr(*(ctrl[(seg + d) % kc] for d in (-1, 0, 1, 2)), t)


def numpy_bezier(
    seeds, n, salt, mn=5, mx=10, g=4, jitter=0.8, tension=1.0, scale=1.0, repair=REPAIR
):
    """``bezier`` in NumPy: a list of [count, 2] raw loops (``repair``: the switch and its
    fields, ``REPAIR``; None or ``repair=False``: the 0.1 tracks)."""
    counts, pts = _grid_points(
        seeds,
        [salt(f"bezier.{s}") for s in ("count", "cells", "points")],
        mn,
        mx,
        g,
        jitter,
        scale,
        mx,
    )
    samples = mx * max(4, math.ceil(n / mn)) // mx
    if repair and repair.get("repair", True):  # every env at once, padded to mx points
        have = np.arange(mx)[None] < counts[:, None]
        cen = np.where(have[..., None], pts, 0).sum(1) / counts[:, None]
        ang = np.arctan2(pts[..., 1] - cen[:, 1:], pts[..., 0] - cen[:, :1])
        order = np.argsort(np.where(have, ang, np.inf), axis=1, kind="stable")
        c = np.take_along_axis(pts, order[..., None], axis=1)
        return _smooth_batch(c, counts, samples, scale, repair, tension)
    out = []
    for e in range(len(seeds)):
        c = pts[e, : counts[e]]
        cen = c.mean(0)
        c = c[np.argsort(np.arctan2(c[:, 1] - cen[1], c[:, 0] - cen[0]), kind="stable")]
        kc = len(c)
        i = np.arange(kc * samples)
        k, t = i // samples, (i % samples / samples)[:, None]
        pm, p0, p3, p4 = (c[(k + d) % kc] for d in (-1, 0, 1, 2))
        p1 = p0 + (p3 - pm) * (tension / 6)
        p2 = p3 - (p4 - p0) * (tension / 6)
        s_ = 1 - t
        out.append(p0 * s_**3 + p1 * 3 * s_ * s_ * t + p2 * 3 * s_ * t * t + p3 * t**3)
    return out


def _smooth_batch(c, n, samples, scale, repair, tension=1.0) -> list[np.ndarray]:
    """The repaired control polygons ``c`` [E, K, 2] (counts ``n``) of every env at once
    (``round_corners_batch``) and their Bezier chains: a list of [n_e * samples, 2] loops."""
    c, n = round_corners_batch(c, n, repair["spacing"] * scale, repair["corner_radius"] * scale)
    return smooth_chain_batch(c, n, samples, tension)


def _hull_points(seeds, salt, mn, mx, g, scale):
    return _grid_points(
        seeds,
        [salt(f"hull.{s}") for s in ("count", "cells", "points")],
        mn,
        mx,
        g,
        1.0,
        scale,
        mx,
    )


def gift_wrap(p: np.ndarray) -> np.ndarray:
    """The convex hull of [m, 2] points by a pure-Python gift wrap (the generator's rule):
    indices, counterclockwise from the lowest-x (then lowest-y) point, collinear points
    left out. A correctness check for :func:`shapely_hull_order`, not a timed reference."""
    m = len(p)
    start = int(np.lexsort((p[:, 1], p[:, 0]))[0])
    hull, cur = [], start
    for _ in range(m):
        hull.append(cur)
        nxt = (cur + 1) % m
        for j in range(m):
            if j == cur:
                continue
            o = (p[nxt, 0] - p[cur, 0]) * (p[j, 1] - p[cur, 1]) - (p[nxt, 1] - p[cur, 1]) * (
                p[j, 0] - p[cur, 0]
            )
            if o < 0 or (o == 0 and ((p[j] - p[cur]) ** 2).sum() > ((p[nxt] - p[cur]) ** 2).sum()):
                nxt = j
        cur = nxt
        if cur == start:
            break
    return p[hull]


def shapely_hulls(pts: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """The convex hulls of every env's first ``counts[e]`` points of ``pts`` [E, M, 2], one
    vectorised ``shapely.convex_hull`` (GEOS) call over all envs: each hull's vertices
    counterclockwise from the lowest-x (then lowest-y) one, as the generator orders them."""
    import shapely

    e = np.repeat(np.arange(len(counts)), counts)
    k = np.arange(len(e)) - np.repeat(np.cumsum(counts) - counts, counts)
    ring = shapely.get_exterior_ring(shapely.convex_hull(shapely.multipoints(pts[e, k], indices=e)))
    xy, idx = shapely.get_coordinates(ring, return_index=True)
    keep = np.r_[idx[1:] == idx[:-1], False]  # the ring repeats its first vertex
    xy, idx = xy[keep], idx[keep]
    m = np.bincount(idx, minlength=len(counts))
    first = np.cumsum(m) - m
    pos = np.arange(len(idx)) - first[idx]
    start = np.lexsort((xy[:, 1], xy[:, 0], idx))[first] - first  # lowest x, then y
    ccw = shapely.is_ccw(ring)[idx]  # GEOS gives the shell clockwise
    rank = np.where(ccw, pos - start[idx], start[idx] - pos) % m[idx]
    return np.split(xy[np.lexsort((rank, idx))], first[1:])


def numpy_hull(
    seeds, n, salt, mn=8, mx=16, g=6, displacement=0.35, scale=1.0, hulls=None, repair=REPAIR
):
    """``hull`` in NumPy: a list of [count, 2] raw loops (the hulls from
    :func:`shapely_hulls`, or ``hulls(points)`` per env, e.g. :func:`gift_wrap`; ``repair``
    as :func:`numpy_bezier`)."""
    counts, pts = _hull_points(seeds, salt, mn, mx, g, scale)
    kd = _stream_key(seeds, salt("hull.displace"))
    samples = 2 * mx * max(2, math.ceil(n / 6)) // (2 * mx)
    if hulls is None:
        loops = shapely_hulls(pts, counts)
    else:
        loops = [hulls(pts[e, : counts[e]]) for e in range(len(seeds))]
    m = np.array([len(a) for a in loops])
    M = int(m.max())
    a = np.zeros((len(m), M, 2))
    a[np.arange(M)[None] < m[:, None]] = np.concatenate(loops)
    k = np.arange(M)[None]
    c = np.take_along_axis(a, ((k + 1) % m[:, None])[..., None], axis=1)
    d = c - a
    ln = np.hypot(d[..., 0], d[..., 1])
    nrm = np.stack([d[..., 1], -d[..., 0]], -1) / np.where(ln > 0, ln, 1)[..., None]
    off = displacement * ln * (2 * _rand01(kd[:, None], k) - 1)
    ctrl = np.empty((len(m), 2 * M, 2))
    ctrl[:, 0::2] = a
    ctrl[:, 1::2] = (a + c) / 2 + nrm * off[..., None]
    return _spline(ctrl, 2 * m, samples, scale, repair)


def _spline(ctrl: np.ndarray, n: np.ndarray, samples: int, scale: float, repair) -> list:
    """The closed loops of ``hull`` and ``voronoi`` through ``ctrl`` [E, K, 2] (counts
    ``n``): repaired and Bezier-chained when asked (every env at once), else Catmull-Rom."""
    if repair and repair.get("repair", True):
        return _smooth_batch(ctrl, n, samples, scale, repair)
    return [_closed_cr(ctrl[e], int(n[e]), samples) for e in range(len(n))]


def numpy_voronoi(
    seeds, n, salt, g=6, jitter=0.9, ring=0.6, wobble=0.25, m=64, scale=1.0, repair=REPAIR
):
    """``voronoi`` in NumPy: a list of [count, 2] raw loops (``repair`` as
    :func:`numpy_bezier`)."""
    ks = _stream_key(seeds, salt("voronoi.sites"))[:, None]
    kr = _stream_key(seeds, salt("voronoi.ring"))
    c = np.arange(g * g)[None]
    sites = np.stack(
        [
            (c % g + 0.5 + jitter * (_rand01(ks, 2 * c) - 0.5)) / g * 2 - 1,
            (c // g + 0.5 + jitter * (_rand01(ks, 2 * c + 1) - 0.5)) / g * 2 - 1,
        ],
        -1,
    )
    p1, p2 = 2 * np.pi * _rand01(kr, 0), 2 * np.pi * _rand01(kr, 1)
    r0 = ring * (0.85 + 0.3 * _rand01(kr, 2))
    th = 2 * np.pi * np.arange(m) / m
    rho = r0[:, None] * (
        1 + wobble * (0.6 * np.cos(2 * th + p1[:, None]) + 0.4 * np.sin(3 * th + p2[:, None]))
    )
    q = np.stack([np.cos(th) * rho, np.sin(th) * rho], -1)
    owner = np.argmin(((q[:, :, None] - sites[:, None]) ** 2).sum(-1), axis=2)
    samples = m * max(4, math.ceil(2 * n / m)) // m
    keep = np.c_[np.ones(len(owner), bool), owner[:, 1:] != owner[:, :-1]]
    runs = keep.sum(1)
    # the owners' runs in order, padded; the last run dropped when it is the first's site
    at = np.argsort(~keep, axis=1, kind="stable")[:, : int(runs.max())]
    seq = np.take_along_axis(owner, at, axis=1)
    count = runs - ((runs > 1) & (owner[:, -1] == owner[:, 0]))
    ctrl = np.take_along_axis(sites, seq[..., None], axis=1) * scale
    return _spline(ctrl, count, samples, scale, repair)


def repulsive_initial(seeds, salt, n0=16, jitter=0.75, scale=1.0) -> np.ndarray:
    """The initial star polygons of ``repulsive`` (stream ``repulsive.init``), [E, n0, 2]."""
    key = _stream_key(seeds, salt("repulsive.init"))[:, None]
    i = np.arange(n0)[None]
    th = 2 * np.pi * i / n0 + 2 * np.pi * _rand01(key, n0)
    r = 0.3 * scale * (1 + jitter * (2 * _rand01(key, i) - 1))
    return np.stack([np.cos(th) * r, np.sin(th) * r], -1).astype(np.float32)


def tangent_point_energy(xy: np.ndarray, chunk: int = 32) -> np.ndarray:
    """Discrete tangent-point energy of closed loops, [E, N, 2] -> [E] (float64).

    ``sum_{i != j, not neighbours} w_i w_j |T_i x (x_i - x_j)|^2 / |x_i - x_j|^4`` with
    ``T_i`` the unit central-difference tangent and ``w_i`` half the two edges at ``i``:
    a quadrature of the curve's tangent-point integral, so it does not depend on the
    loop's size or position (lower: more relaxed, no near-contacts, no sharp corners).
    """
    xy = np.asarray(xy, dtype=np.float64)
    n = xy.shape[1]
    idx = np.arange(n)
    sep = np.abs(idx[:, None] - idx[None])
    far = (sep > 1) & (sep < n - 1)
    out = []
    for lo in range(0, len(xy), chunk):
        p = xy[lo : lo + chunk]
        t = np.roll(p, -1, 1) - np.roll(p, 1, 1)
        t /= np.maximum(np.linalg.norm(t, axis=-1, keepdims=True), 1e-300)
        w = 0.5 * (
            np.linalg.norm(p - np.roll(p, 1, 1), axis=-1)
            + np.linalg.norm(np.roll(p, -1, 1) - p, axis=-1)
        )
        d = p[:, :, None] - p[:, None]
        cross = t[:, :, None, 0] * d[..., 1] - t[:, :, None, 1] * d[..., 0]
        r2 = np.where(far, (d * d).sum(-1), 1.0)
        k = np.where(far, cross * cross / np.maximum(r2 * r2, 1e-300), 0.0)
        out.append(np.einsum("eij,ei,ej->e", k, w, w))
    return np.concatenate(out)


def four_point(p: np.ndarray, w: float = 1.0 / 16.0) -> np.ndarray:
    """One subdivision of closed loops [E, n, 2] -> [E, 2n, 2]: the points stay, a new one
    between ``p_i`` and ``p_i+1`` is ``(p_i + p_i+1) (1/2 + w) - (p_i-1 + p_i+2) w``
    (``w = 1/16``: the 4-point interpolating scheme; ``w = 0``: the midpoint)."""
    a, b, c, d = np.roll(p, 1, 1), p, np.roll(p, -1, 1), np.roll(p, -2, 1)
    out = np.empty((p.shape[0], 2 * p.shape[1], 2), p.dtype)
    out[:, 0::2] = b
    out[:, 1::2] = (b + c) * p.dtype.type(0.5 + w) - (a + d) * p.dtype.type(w)
    return out


def numpy_repulsive(
    seeds,
    n,
    salt,
    n0=16,
    levels=2,
    iters=16,
    refine=3,
    growth=1.5,
    repulsion=1.0,
    smoothing=0.05,
    step=0.45,
    tol=0.002,
    jitter=0.75,
    confine=1.0,
    scale=1.0,
):
    """``repulsive`` in NumPy (float32, all envs at once): a list of [raw, 2] loops.

    Written from the generator's account (``track_gen/_src/warp_generate_repulsive.py``),
    not from its kernels: every ordered pair of every env at once ([E, m, m] arrays), the
    gradient per vertex as a sum over its row, the step from a copy of the positions.
    """
    f32 = np.float32
    E = len(seeds)
    pos = repulsive_initial(seeds, salt, n0, jitter, scale)
    rest = (growth * np.linalg.norm(np.roll(pos, -1, 1) - pos, axis=-1)).astype(f32)
    perimeter = growth * 2 * np.pi * 0.3 * scale
    box = f32(confine * scale)
    for level in range(levels):
        m = n0 << level
        if level:
            pos = four_point(pos)
            rest = np.repeat(rest * f32(0.5), 2, axis=1)
        h = f32(perimeter / m)
        steps = iters if level == 0 else max(1, iters >> level)
        frozen = np.zeros(E, bool)
        idx = np.arange(m)
        sep = np.abs(idx[:, None] - idx[None])
        far = (sep > 1) & (sep < m - 1)
        for _ in range(steps):
            live = ~frozen
            if not live.any():
                break
            p = pos[live]
            tan = np.roll(p, -1, 1) - np.roll(p, 1, 1)
            ln = np.linalg.norm(tan, axis=-1, keepdims=True)
            tan = np.where(ln > 0, tan / np.where(ln > 0, ln, 1), np.array([1, 0], f32))
            perp = np.stack([-tan[..., 1], tan[..., 0]], -1)
            d = (p[:, :, None] - p[:, None]) / h
            r2 = np.maximum((d * d).sum(-1), f32(1e-6))
            r4 = r2 * r2
            ci = tan[:, :, None, 0] * d[..., 1] - tan[:, :, None, 1] * d[..., 0]
            cj = tan[:, None, :, 0] * d[..., 1] - tan[:, None, :, 1] * d[..., 0]
            term = (
                perp[:, :, None] * (2 * ci)[..., None] + perp[:, None] * (2 * cj)[..., None]
            ) / r4[..., None] - d * (4 * (ci * ci + cj * cj) / (r4 * r2))[..., None]
            g = (term * far[None, :, :, None]).sum(2)
            dmin = np.where(far[None], r2, np.inf).min(2)
            pp, pn = np.roll(p, 1, 1), np.roll(p, -1, 1)
            e0, e1 = p - pp, pn - p
            l0 = np.maximum(np.linalg.norm(e0, axis=-1), f32(1e-9))
            l1 = np.maximum(np.linalg.norm(e1, axis=-1), f32(1e-9))
            rl = rest[live]
            t0, t1 = np.roll(rl, 1, 1), rl
            gs = e0 * ((l0 - t0) / (l0 * h))[..., None] - e1 * ((l1 - t1) / (l1 * h))[..., None]
            dirn = -(g * repulsion + gs) + ((pp + pn) * f32(0.5) - p) * f32(smoothing / h)
            rp = np.linalg.norm(p, axis=-1)
            out = rp > box
            dirn = np.where(
                out[..., None],
                dirn - p * (2 * (rp - box) / np.where(out, rp, 1) / h)[..., None],
                dirn,
            )
            mag = np.linalg.norm(dirn, axis=-1)
            lim = np.minimum(f32(step), f32(0.3) * np.sqrt(dmin))
            nxt = p + dirn * (h * lim / np.maximum(mag, f32(1)))[..., None]
            moved = np.linalg.norm(nxt - p, axis=-1).max(1)
            pos[live] = nxt.astype(f32)
            fz = frozen[live]
            fz |= moved < tol * h
            frozen[live] = fz
    for _ in range(refine):
        pos = four_point(pos)
    lo, hi = pos.min(1), pos.max(1)
    c = (lo + hi) * 0.5
    ext = (hi - lo).max(1) * 0.5
    k = np.where(ext > 0, 0.95 * scale / np.where(ext > 0, ext, 1), 1.0)
    return list((pos - c[:, None]) * k[:, None, None])


def numpy_resample_loops(loops: list[np.ndarray] | np.ndarray, n: int) -> np.ndarray:
    """Resamples closed loops (of any sizes) to n points evenly spaced along their length:
    one ``np.interp`` per coordinate over every loop's cumulative arc length, O(N) per loop
    (each loop's normalised length is offset by 2 x its index so the loops never mix)."""
    keys, xs, ys = [], [], []
    for e, lp in enumerate(loops):
        closed = np.concatenate([lp, lp[:1]]).astype(np.float64)
        cum = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(closed, axis=0).T))])
        keys.append(cum / cum[-1] + 2.0 * e)
        xs.append(closed[:, 0])
        ys.append(closed[:, 1])
    k, q = np.concatenate(keys), (np.arange(n) / n + 2.0 * np.arange(len(loops))[:, None]).ravel()
    out = np.stack([np.interp(q, k, np.concatenate(xs)), np.interp(q, k, np.concatenate(ys))], -1)
    return out.reshape(len(loops), n, 2)


def numpy_resample_quadratic(loops: np.ndarray, n: int) -> np.ndarray:
    """The former reference: [E, R, 2] loops to n points, O(N^2) per loop (each output
    point counts the cumulative lengths below it)."""
    nxt = np.roll(loops, -1, axis=1)
    seg = np.hypot(*(nxt - loops).transpose(2, 0, 1))
    cum = np.concatenate([np.zeros((len(loops), 1)), np.cumsum(seg, 1)], 1)
    s = cum[:, -1:] * np.arange(n)[None] / n
    j = np.clip((cum[:, None, 1:-1] <= s[:, :, None]).sum(-1), 0, loops.shape[1] - 1)
    rows = np.arange(len(loops))[:, None]
    t = np.clip((s - cum[rows, j]) / np.maximum(seg[rows, j], 1e-30), 0, 1)[..., None]
    return loops[rows, j] + (nxt[rows, j] - loops[rows, j]) * t


def shapely_simple(xy: np.ndarray) -> np.ndarray:
    """``shapely.is_simple`` (GEOS) of [E, N, 2] closed loops -> [E] bool."""
    import shapely

    e, n = xy.shape[:2]
    rings = shapely.linearrings(
        xy.reshape(-1, 2).astype(np.float64), indices=np.repeat(np.arange(e), n)
    )
    return shapely.is_simple(rings)


def numpy_crossings(xy: np.ndarray) -> np.ndarray:
    """The former reference: brute-force count of crossing non-adjacent segment pairs per
    loop (every pair tested, O(N^2)), [E, N, 2] -> [E]."""
    E, n = xy.shape[:2]
    i, j = np.triu_indices(n, k=2)
    keep = ~((i == 0) & (j == n - 1))
    i, j = i[keep], j[keep]
    nxt = np.roll(xy, -1, axis=1)

    def orient(p, q, r):
        return (q[:, 0] - p[:, 0]) * (r[:, 1] - p[:, 1]) - (q[:, 1] - p[:, 1]) * (r[:, 0] - p[:, 0])

    out = np.empty(E, dtype=np.int64)
    for e in range(E):
        a, b, c, d = xy[e, i], nxt[e, i], xy[e, j], nxt[e, j]
        d1, d2, d3, d4 = orient(c, d, a), orient(c, d, b), orient(a, b, c), orient(a, b, d)
        out[e] = np.count_nonzero((d1 * d2 < 0) & (d3 * d4 < 0))
    return out


def ccw_loops(xy: np.ndarray) -> np.ndarray:
    """The pipeline's default direction (``direction="ccw"``): each loop of negative turning
    number reversed, point i becoming point (n - i) % n (point 0 stays), [E, N, 2]."""
    n = xy.shape[1]
    back = xy[:, (n - np.arange(n)) % n]
    return np.where((numpy_turning(xy) < 0)[:, None, None], back, xy)


def numpy_turning(xy: np.ndarray) -> np.ndarray:
    """Turning numbers by summed exterior angles, [E, N, 2] -> [E]."""
    u = xy - np.roll(xy, 1, axis=1)
    v = np.roll(xy, -1, axis=1) - xy
    ang = np.arctan2(u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0], (u * v).sum(-1))
    return np.rint(ang.sum(1) / (2 * np.pi)).astype(int)


def numpy_closed(xy: np.ndarray) -> np.ndarray:
    """Every point finite and every segment (the closing one too) of positive length,
    [E, N, 2] -> [E] bool."""
    seg = np.hypot(*(np.roll(xy, -1, axis=1) - xy).transpose(2, 0, 1))
    return np.isfinite(xy).all(axis=(1, 2)) & (seg > 0).all(axis=1)


def numpy_radius_ok(xy: np.ndarray, r_min: float) -> np.ndarray:
    """Every circumradius of three consecutive points ``|ab| |bc| |ca| / (2 |ab x ac|)`` is at
    least ``r_min`` (0: no check), [E, N, 2] -> [E] bool."""
    if r_min <= 0:
        return np.ones(len(xy), bool)
    p = np.asarray(xy, np.float64)
    a, c = np.roll(p, 1, axis=1), np.roll(p, -1, axis=1)
    ab, bc, ca = p - a, c - p, a - c
    cross = np.abs(ab[..., 0] * (c - a)[..., 1] - ab[..., 1] * (c - a)[..., 0])
    prod = np.hypot(*ab.transpose(2, 0, 1)) * np.hypot(*bc.transpose(2, 0, 1))
    prod *= np.hypot(*ca.transpose(2, 0, 1))
    return ~(prod < 2 * r_min * cross).any(axis=1)


def _shifted(xy: np.ndarray, width: float):
    e, n = xy.shape[:2]
    p = np.asarray(xy, np.float64)
    h = np.hypot(*(np.roll(p, -1, axis=1) - p).transpose(2, 0, 1)).sum(1) / n
    span = np.abs(p).max() * 4 + 4 * width
    return p, h, p + np.stack([span * np.arange(e), np.zeros(e)], -1)[:, None]


def _clearance_verdict(p, h, i, j, width: float) -> np.ndarray:
    e, n = p.shape[:2]
    keep = i < j
    i, j = i[keep], j[keep]
    env, di = i // n, np.abs(i % n - j % n)
    d = np.minimum(di, n - di)
    q = p.reshape(-1, 2)
    close = ((q[i] - q[j]) ** 2).sum(1) < width * width
    bad = close & (d * h[env] > 0.5 * np.pi * width)
    return np.bincount(env[bad], minlength=e) == 0


def numpy_clearance_ok(xy: np.ndarray, width: float) -> np.ndarray:
    """Points more than ``pi * width / 2`` apart along the loop (index distance times the
    mean spacing) are at least ``width`` apart (0: no check), [E, N, 2] -> [E] bool.

    One ``scipy.spatial.cKDTree`` over every point of every loop (loop e shifted far along
    x, so loops never meet) gives the pairs within ``width`` (``query_pairs``); the pairs
    close along the loop are dropped. :func:`shapely_clearance_ok` gives the same verdicts.
    """
    from scipy.spatial import cKDTree

    if width <= 0:
        return np.ones(xy.shape[0], bool)
    p, h, shifted = _shifted(xy, width)
    ij = cKDTree(shifted.reshape(-1, 2)).query_pairs(width, output_type="ndarray")
    return _clearance_verdict(p, h, ij[:, 0], ij[:, 1], width)


def shapely_clearance_ok(xy: np.ndarray, width: float) -> np.ndarray:
    """:func:`numpy_clearance_ok` by one ``shapely.STRtree`` ``dwithin`` query (the former
    reference, about 2-6x slower): a correctness check of the cKDTree verdicts."""
    import shapely

    if width <= 0:
        return np.ones(xy.shape[0], bool)
    p, h, shifted = _shifted(xy, width)
    pts = shapely.points(shifted.reshape(-1, 2))
    i, j = shapely.STRtree(pts).query(pts, predicate="dwithin", distance=width)
    return _clearance_verdict(p, h, i, j, width)


def numpy_validity(xy: np.ndarray, r_min: float = 0.0, width: float = 0.0) -> np.ndarray:
    """The validity stage's rule in NumPy and shapely, [E, N, 2] -> [E] bool: closed,
    simple (``shapely.is_simple``), turning number +-1, turn radius >= ``r_min``, clearance
    ``width`` (both 0: off)."""
    ok = numpy_closed(xy)
    ok &= shapely_simple(xy) & (np.abs(numpy_turning(xy)) == 1)
    return ok & numpy_radius_ok(xy, r_min) & numpy_clearance_ok(xy, width)


def shapely_road_overlap(xy: np.ndarray, width: float) -> np.ndarray:
    """Whether each road overlaps itself, [E, N, 2] -> [E] bool, with shapely: the ribbon at
    ``width`` (each point offset by half the width along the normal of its central tangent),
    two triangles per quad, and a pair of triangles from quads more than one apart along the
    loop overlapping with a positive area (``STRtree`` candidates, then intersection areas).
    One tree per env: slow, for checking the device check on a few envs."""
    import shapely

    out = np.zeros(len(xy), bool)
    for e, p in enumerate(np.asarray(xy, np.float64)):
        n = len(p)
        t = np.roll(p, -1, 0) - np.roll(p, 1, 0)
        t /= np.maximum(np.linalg.norm(t, axis=1, keepdims=True), 1e-30)
        off = np.stack([-t[:, 1], t[:, 0]], 1) * (width / 2)
        left, right = p + off, p - off
        j = (np.arange(n) + 1) % n
        tri = np.concatenate(
            [np.stack([left, right, right[j]], 1), np.stack([left, right[j], left[j]], 1)]
        )
        polys = shapely.polygons(tri)
        quad = np.r_[np.arange(n), np.arange(n)]
        a, b = shapely.STRtree(polys).query(polys, predicate="intersects")
        d = np.abs(quad[a] - quad[b])
        far = (a < b) & (np.minimum(d, n - d) > 1)
        area = shapely.area(shapely.intersection(polys[a[far]], polys[b[far]]))
        out[e] = bool((area > 1e-12).any())
    return out


def numpy_pipeline(
    name: str,
    seeds: np.ndarray,
    n: int,
    old: bool = False,
    r_min: float = 0.0,
    width: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The whole reference pipeline for ``name``: generate, resample, validity (shapely for
    the crossings, an O(N) resampler, turn radius ``r_min`` and clearance ``width`` as
    ``numpy_validity``); ``old``: the former O(N^2) resampler and brute-force crossing loop
    (and the same radius and clearance checks).

    Returns (valid [E] bool, xy [E, n, 2]).
    """
    from procgen_nb.track_gen.exec import salt

    if name == "polar":
        loops = numpy_polar(seeds, n, (salt("polar.radius"), salt("polar.phase")))
    elif name == "checkpoint":
        loops = numpy_checkpoint(seeds, n, (salt("checkpoint.radius"), salt("checkpoint.angle")))
    else:
        loops = NUMPY_PORTS[name](seeds, n, salt)
    if not old:
        xy = ccw_loops(numpy_resample_loops(loops, n))
        return numpy_validity(xy, r_min, width), xy
    if isinstance(loops, list):
        xy = np.concatenate([numpy_resample_quadratic(lp[None], n) for lp in loops])
    else:
        xy = numpy_resample_quadratic(loops, n)
    xy = ccw_loops(xy)
    ok = numpy_closed(xy) & (numpy_crossings(xy) == 0) & (np.abs(numpy_turning(xy)) == 1)
    return ok & numpy_radius_ok(xy, r_min) & numpy_clearance_ok(xy, width), xy


#: the generators with a NumPy port (the same tracks as the Warp ones)
NUMPY_PORTS = {
    "bezier": numpy_bezier,
    "checkpoint": numpy_checkpoint,
    "hull": numpy_hull,
    "polar": numpy_polar,
    "repulsive": numpy_repulsive,
    "voronoi": numpy_voronoi,
}
