"""Tracks per second of every registered generator, beside NumPy and shapely references.

For each generator in ``track_gen.plugin.registry`` it builds a plain ``TrackGenConfig``
(``num_envs`` x ``num_points``), warms it up, and times steady ``generate()`` calls (replays
of the recording), reporting tracks/s, the valid fraction and the readbacks per call. For
every built-in a NumPy implementation of the same generator (the same integer hash and
streams, so the same tracks: ``max|dxy|`` is the largest coordinate difference), the same
arc-length resampling and the same validity checks (turning number by summed angles,
brute-force segment intersection) runs in the same process and the ratio is printed; for a
plugin without a NumPy port (marked ``*``) the NumPy column times the validity checks alone
on the same tracks.

The self-intersection check alone (``ops.self_intersections``: x-monotone chains merged
along x) is
timed against ``shapely.is_simple`` (GEOS) and a NumPy brute force on the same rings, with
their agreement.

Usage::

    python benchmarks/compare_generators.py              # E=1024, N=256
    python benchmarks/compare_generators.py --smoke      # a few seconds (the test suite)

Warp runs CPU kernels on one thread; the targets (E=1024, N=256, one core) are printed
beside the measurements, not asserted.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable

import numpy as np

TARGET_TRACKS = 20_000  # valid tracks/s for polar and checkpoint with full validity


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


def numpy_bezier(seeds, n, salt, mn=5, mx=10, g=4, jitter=0.8, tension=1.0, scale=1.0):
    """``bezier`` in NumPy: a list of [count, 2] raw loops."""
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


def numpy_hull(seeds, n, salt, mn=8, mx=16, g=6, displacement=0.35, scale=1.0):
    """``hull`` in NumPy: a list of [count, 2] raw loops."""
    counts, pts = _grid_points(
        seeds,
        [salt(f"hull.{s}") for s in ("count", "cells", "points")],
        mn,
        mx,
        g,
        1.0,
        scale,
        mx,
    )
    kd = _stream_key(seeds, salt("hull.displace"))
    samples = 2 * mx * max(2, math.ceil(n / 6)) // (2 * mx)
    out = []
    for e in range(len(seeds)):
        p = pts[e, : counts[e]]
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
                if o < 0 or (
                    o == 0 and ((p[j] - p[cur]) ** 2).sum() > ((p[nxt] - p[cur]) ** 2).sum()
                ):
                    nxt = j
            cur = nxt
            if cur == start:
                break
        a = p[hull]
        c = np.roll(a, -1, axis=0)
        d = c - a
        ln = np.hypot(d[:, 0], d[:, 1])
        nrm = np.stack([d[:, 1], -d[:, 0]], -1) / np.where(ln > 0, ln, 1)[:, None]
        off = displacement * ln * (2 * _rand01(kd[e], np.arange(len(hull))) - 1)
        ctrl = np.empty((2 * len(hull), 2))
        ctrl[0::2] = a
        ctrl[1::2] = (a + c) / 2 + nrm * off[:, None]
        out.append(_closed_cr(ctrl, len(ctrl), samples))
    return out


def numpy_voronoi(seeds, n, salt, g=6, jitter=0.9, ring=0.6, wobble=0.25, m=64, scale=1.0):
    """``voronoi`` in NumPy: a list of [count, 2] raw loops."""
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
    out = []
    for e in range(len(seeds)):
        o = owner[e]
        keep = np.r_[True, o[1:] != o[:-1]]
        seq = o[keep]
        if len(seq) > 1 and seq[-1] == seq[0]:
            seq = seq[:-1]
        out.append(_closed_cr(sites[e, seq] * scale, len(seq), samples))
    return out


def numpy_repulsive(
    seeds,
    n,
    salt,
    n0=16,
    levels=3,
    iters=24,
    growth=1.5,
    repulsion=1.0,
    smoothing=0.05,
    step=0.3,
    tol=0.002,
    jitter=0.75,
    confine=1.0,
    scale=1.0,
):
    """``repulsive`` in NumPy (float32, all envs at once): a list of [raw, 2] loops."""
    f32 = np.float32
    E = len(seeds)
    key = _stream_key(seeds, salt("repulsive.init"))[:, None]
    i = np.arange(n0)[None]
    th = 2 * np.pi * i / n0 + 2 * np.pi * _rand01(key, n0)
    r = 0.3 * scale * (1 + jitter * (2 * _rand01(key, i) - 1))
    pos = np.stack([np.cos(th) * r, np.sin(th) * r], -1).astype(f32)
    rest = (growth * np.linalg.norm(np.roll(pos, -1, 1) - pos, axis=-1)).astype(f32)
    perimeter = growth * 2 * np.pi * 0.3 * scale
    box = f32(confine * scale)
    for level in range(levels):
        m = n0 << level
        if level:
            new = np.empty((E, m, 2), f32)
            new[:, 0::2] = pos
            new[:, 1::2] = (pos + np.roll(pos, -1, 1)) * f32(0.5)
            pos = new
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
    lo, hi = pos.min(1), pos.max(1)
    c = (lo + hi) * 0.5
    ext = (hi - lo).max(1) * 0.5
    k = np.where(ext > 0, 0.95 * scale / np.where(ext > 0, ext, 1), 1.0)
    return list((pos - c[:, None]) * k[:, None, None])


def numpy_resample_loops(loops: list[np.ndarray], n: int) -> np.ndarray:
    """Resamples closed loops of any sizes to n points each: [E, n, 2]."""
    return np.concatenate([numpy_resample(lp[None], n) for lp in loops])


def numpy_resample(loops: np.ndarray, n: int) -> np.ndarray:
    """Resamples [E, R, 2] closed loops to n points evenly spaced along their length."""
    nxt = np.roll(loops, -1, axis=1)
    seg = np.hypot(*(nxt - loops).transpose(2, 0, 1))
    cum = np.concatenate([np.zeros((len(loops), 1)), np.cumsum(seg, 1)], 1)
    s = cum[:, -1:] * np.arange(n)[None] / n
    j = np.clip((cum[:, None, 1:-1] <= s[:, :, None]).sum(-1), 0, loops.shape[1] - 1)
    rows = np.arange(len(loops))[:, None]
    t = np.clip((s - cum[rows, j]) / np.maximum(seg[rows, j], 1e-30), 0, 1)[..., None]
    return loops[rows, j] + (nxt[rows, j] - loops[rows, j]) * t


def numpy_crossings(xy: np.ndarray) -> np.ndarray:
    """Brute-force count of crossing non-adjacent segment pairs per loop, [E, N, 2] -> [E]."""
    E, n = xy.shape[:2]
    i, j = np.triu_indices(n, k=2)
    keep = ~((i == 0) & (j == n - 1))
    i, j = i[keep], j[keep]
    out = np.empty(E, dtype=np.int64)
    nxt = np.roll(xy, -1, axis=1)
    for e in range(E):
        a, b, c, d = xy[e, i], nxt[e, i], xy[e, j], nxt[e, j]

        def orient(p, q, r):
            return (q[:, 0] - p[:, 0]) * (r[:, 1] - p[:, 1]) - (q[:, 1] - p[:, 1]) * (
                r[:, 0] - p[:, 0]
            )

        d1, d2, d3, d4 = orient(c, d, a), orient(c, d, b), orient(a, b, c), orient(a, b, d)
        out[e] = np.count_nonzero((d1 * d2 < 0) & (d3 * d4 < 0))
    return out


def numpy_turning(xy: np.ndarray) -> np.ndarray:
    """Turning numbers by summed exterior angles, [E, N, 2] -> [E]."""
    u = xy - np.roll(xy, 1, axis=1)
    v = np.roll(xy, -1, axis=1) - xy
    ang = np.arctan2(u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0], (u * v).sum(-1))
    return np.rint(ang.sum(1) / (2 * np.pi)).astype(int)


def numpy_pipeline(name: str, seeds: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The whole reference pipeline for ``name``: generate, resample, validity.

    Returns (valid [E] bool, xy [E, n, 2]).
    """
    from procgen_nb.track_gen.exec import salt

    if name == "polar":
        xy = numpy_resample(numpy_polar(seeds, n, (salt("polar.radius"), salt("polar.phase"))), n)
    elif name == "checkpoint":
        loops = numpy_checkpoint(seeds, n, (salt("checkpoint.radius"), salt("checkpoint.angle")))
        xy = numpy_resample(loops, n)
    else:
        xy = numpy_resample_loops(NUMPY_PORTS[name](seeds, n, salt), n)
    return (numpy_crossings(xy) == 0) & (np.abs(numpy_turning(xy)) == 1), xy


#: the generators with a NumPy port (the same tracks as the Warp ones)
NUMPY_PORTS = {
    "bezier": numpy_bezier,
    "checkpoint": numpy_checkpoint,
    "hull": numpy_hull,
    "polar": numpy_polar,
    "repulsive": numpy_repulsive,
    "voronoi": numpy_voronoi,
}


# -- timing ---------------------------------------------------------------------------------
def _best(fn: Callable[[], object], repeats: int) -> float:
    fn()
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run(num_envs: int, num_points: int, repeats: int, only: list[str] | None) -> int:
    """Runs the comparison and prints the tables; returns a process exit status."""
    import shapely
    import warp as wp

    import procgen_nb
    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator, ops
    from procgen_nb.track_gen.plugin import registry

    E, N = num_envs, num_points
    names = only or registry.available("generator")
    print(
        f"track_gen generators: E={E} envs, N={N} points, best of {repeats}, "
        f"device cpu (Warp: one thread)"
    )
    header = (
        f"{'generator':<12} {'tracks/s':>10} {'valid':>6} {'rb/call':>7} "
        f"{'numpy tr/s':>10} {'ratio':>7} {'valid(np)':>9} {'max|dxy|':>9}"
    )
    print(header)
    print("-" * len(header))
    rings = None
    starred = False
    for name in names:
        tg = TrackGenerator(TrackGenConfig(generator=name, num_envs=E, num_points=N, device="cpu"))
        tg.generate()

        def call(tg: TrackGenerator = tg) -> None:
            tg.generate()
            tg.ctx.synchronize()

        before = procgen_nb.traffic()
        dt = _best(call, repeats)
        delta = procgen_nb.traffic() - before
        readbacks = delta.readbacks / (repeats + 1)
        valid = tg.result.num_valid() / E
        rate = E / dt
        np_rate = ratio = np_valid = dxy = "-"
        if name in NUMPY_PORTS:
            seeds = base_seeds(0, 0, E)
            t_np = _best(
                lambda name=name, seeds=seeds: numpy_pipeline(name, seeds, N), max(1, repeats // 5)
            )
            np_rate = f"{E / t_np:.0f}"
            ratio = f"{t_np / dt:.1f}x"
            ref_valid, ref_xy = numpy_pipeline(name, seeds, N)
            np_valid = f"{ref_valid.mean():.3f}"
            dxy = f"{np.abs(ref_xy - tg.result.numpy()['xy']).max():.1e}"
        else:
            # no NumPy port of this generator: its validity checks alone, on the same tracks
            ours_xy = tg.result.numpy()["xy"].astype(np.float64)

            def checks(xy: np.ndarray = ours_xy) -> np.ndarray:
                return (numpy_crossings(xy) == 0) & (np.abs(numpy_turning(xy)) == 1)

            t_np = _best(checks, max(1, repeats // 5))
            np_rate = f"{E / t_np:.0f}*"
            starred = True
            ratio = f"{t_np / dt:.1f}x"
            np_valid = f"{checks().mean():.3f}"
        if name == "polar":
            rings = tg.result.numpy()["xy"]
        print(
            f"{name:<12} {rate:>10.0f} {valid:>6.3f} {readbacks:>7.1f} {np_rate:>10} "
            f"{ratio:>7} {np_valid:>9} {dxy:>9}"
        )
        if name in ("polar", "checkpoint"):
            mark = "meets" if rate * valid >= TARGET_TRACKS else "below"
            print(f"{'':<12} valid tracks/s {rate * valid:.0f} ({mark} the {TARGET_TRACKS} target)")

    if starred:
        print("* validity checks only (no NumPy port of the generator), on the same tracks")
    if rings is None:
        return 0
    # the self-intersection check alone, on the same rings
    ctx = tg.ctx
    xy_wp = wp.array(rings.reshape(-1, 2), dtype=wp.vec2, device="cpu")
    out = wp.zeros(E, dtype=wp.int32, device="cpu")
    grid = ops.GridScratch.alloc("cpu", E, N)

    def ours() -> None:
        ops.self_intersections(ctx, xy_wp, E, N, out, grid)
        ctx.synchronize()

    geoms = shapely.linearrings(
        rings.reshape(-1, 2).astype(np.float64), indices=np.repeat(np.arange(E), N)
    )
    t_ours = _best(ours, repeats)
    t_geos = _best(lambda: shapely.is_simple(geoms), repeats)
    sub = rings[: max(1, E // 16)].astype(np.float64)
    t_np = _best(lambda: numpy_crossings(sub), 1) * (E / len(sub))
    simple_ours = out.numpy() == 0
    agree = float((simple_ours == shapely.is_simple(geoms)).mean())
    print()
    print(f"self-intersection check on the same {E} polar rings of {N} points")
    print(f"{'method':<28} {'rings/s':>10} {'ratio':>8}")
    print(f"{'ops.self_intersections':<28} {E / t_ours:>10.0f} {'1.0x':>8}")
    print(f"{'shapely.is_simple (GEOS)':<28} {E / t_geos:>10.0f} {t_ours / t_geos:>7.2f}x")
    print(f"{'numpy brute force':<28} {E / t_np:>10.0f} {t_ours / t_np:>7.3f}x")
    verdict = "at least" if t_ours <= t_geos else "slower than"
    print(
        f"ops.self_intersections is {t_geos / t_ours:.2f}x shapely ({verdict} shapely); "
        f"agreement {agree:.3f}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parses the command line and runs the benchmark."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, default=1024)
    p.add_argument("--points", type=int, default=256)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--generators", nargs="*", default=None)
    p.add_argument("--smoke", action="store_true", help="tiny sizes, for the test suite")
    a = p.parse_args(argv)
    if a.smoke:
        a.envs, a.points, a.repeats = 32, 64, 2
    return run(a.envs, a.points, a.repeats, a.generators)


if __name__ == "__main__":
    sys.exit(main())
