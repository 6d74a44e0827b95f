"""The crossing test alone: ``ops.is_simple`` against ``shapely.is_simple`` (GEOS).

Three families of closed rings, ``E`` rings of ``N`` points each, float32:

- smooth: polar rings, radius 1 plus six random harmonics (all simple);
- noisy: the smooth rings plus Gaussian noise scaled so that about half intersect;
- walk: random walks closed by removing their mean step (almost all intersect).

Both sides run op against op on prepared input (a Warp array of points; shapely
LinearRing geometries); the input conversion (upload; ``shapely.linearrings``) is timed
apart. The two are timed alternately, ``--repeats`` times, and the ratio GEOS time / our
time is printed as min / median / max over the repeats, with the agreement ring by ring.
``ops.self_intersections`` (counting every crossing pair) is printed beside it.

Usage::

    python benchmarks/crossings.py                 # E=1024, N=256 and 2048
    python benchmarks/crossings.py --smoke         # tiny sizes (the test suite)

Target (reported, not asserted): ratio >= 1.0 on every family at N=256 and N=2048,
agreement 1.000.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

# the noise of the noisy family, in units of the point spacing, for about half simple
_NOISE = {256: 0.40, 2048: 0.285}


def smooth(rng: np.random.Generator, e: int, n: int) -> np.ndarray:
    """Polar rings with six random harmonics: [e, n, 2] float32."""
    th = 2 * np.pi * np.arange(n) / n
    r = np.ones((e, n))
    for h in range(2, 8):
        amp = rng.uniform(-0.25, 0.25, (e, 1)) / (h / 2)
        r += amp * np.cos(h * th + rng.uniform(0, 2 * np.pi, (e, 1)))
    return np.stack([r * np.cos(th), r * np.sin(th)], -1).astype(np.float32)


def noisy(rng: np.random.Generator, e: int, n: int) -> np.ndarray:
    """Smooth rings plus Gaussian noise (about half of them self-intersect)."""
    k = np.interp(np.log2(n), [8, 11], [_NOISE[256], _NOISE[2048]])
    xy = smooth(rng, e, n).astype(np.float64)
    return (xy + rng.normal(0, k * 2 * np.pi / n, xy.shape)).astype(np.float32)


def walk(rng: np.random.Generator, e: int, n: int) -> np.ndarray:
    """Closed random walks (Gaussian steps less their mean)."""
    steps = rng.normal(0, 1, (e, n, 2))
    return np.cumsum(steps - steps.mean(1, keepdims=True), 1).astype(np.float32)


FAMILIES = {"smooth": smooth, "noisy": noisy, "walk": walk}


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run(num_envs: int, sizes: list[int], repeats: int) -> list[tuple[str, int, float]]:
    """Prints the table; returns (family, N, median ratio) for each case."""
    import shapely
    import warp as wp

    from procgen_nb.track_gen import ops
    from procgen_nb.track_gen.exec import LaunchContext

    ctx = LaunchContext("cpu")
    E = num_envs
    print(
        f"crossing test, {E} rings per call, op against op, {repeats} alternate repeats, "
        "device cpu (Warp: one thread)"
    )
    head = (
        f"{'family':<7} {'N':>5} {'simple':>6} {'GEOS us/ring':>12} {'ours us/ring':>12} "
        f"{'ratio min/med/max':>19} {'agree':>6} {'count/GEOS':>10} {'upload':>7} {'to GEOS':>8}"
    )
    print(head)
    print("-" * len(head))
    out = []
    for n in sizes:
        for fam, make in FAMILIES.items():
            xy = make(np.random.default_rng(1000 + n), E, n)
            flat = xy.reshape(-1, 2)
            t_up = _timed(lambda flat=flat: wp.array(flat, dtype=wp.vec2, device="cpu"))
            t_conv = _timed(
                lambda flat=flat, n=n: shapely.linearrings(
                    flat.astype(np.float64), indices=np.repeat(np.arange(E), n)
                )
            )
            geoms = shapely.linearrings(flat.astype(np.float64), indices=np.repeat(np.arange(E), n))
            x = wp.array(flat, dtype=wp.vec2, device="cpu")
            res = wp.zeros(E, dtype=wp.int32, device="cpu")
            cnt = wp.zeros(E, dtype=wp.int32, device="cpu")
            grid = ops.GridScratch.alloc("cpu", E, n)

            def ours(x=x, n=n, res=res, grid=grid) -> None:
                ops.is_simple(ctx, x, E, n, res, grid)
                ctx.synchronize()

            def counting(x=x, n=n, cnt=cnt, grid=grid) -> None:
                ops.self_intersections(ctx, x, E, n, cnt, grid)
                ctx.synchronize()

            def geos(geoms=geoms) -> None:
                shapely.is_simple(geoms)

            ours(), geos(), counting()
            ratios, t_o, t_g, c_ratio = [], [], [], []
            for _ in range(repeats):
                a = _timed(ours)
                b = _timed(geos)
                c = _timed(counting)
                ratios.append(b / a)
                c_ratio.append(b / c)
                t_o.append(a)
                t_g.append(b)
            want = shapely.is_simple(geoms)
            agree = float(((res.numpy() == 1) == want).mean())
            med = statistics.median(ratios)
            print(
                f"{fam:<7} {n:>5} {want.mean():>6.2f} {min(t_g) / E * 1e6:>12.2f} "
                f"{min(t_o) / E * 1e6:>12.2f} "
                f"{min(ratios):>5.2f}/{med:>5.2f}/{max(ratios):>5.2f}x {agree:>6.3f} "
                f"{statistics.median(c_ratio):>9.2f}x {t_up / E * 1e6:>6.2f}u {t_conv / E * 1e6:>7.2f}u"
            )
            out.append((fam, n, med))
    meet = all(r >= 1.0 for _, _, r in out)
    print(
        "ratio = GEOS time / ours (> 1: ours faster); count/GEOS: ops.self_intersections "
        "(every pair) against GEOS; upload, to GEOS: input conversion, us per ring"
    )
    print(f"target >= 1.0x on every family and size: {'met' if meet else 'NOT met'} (median)")
    return out


def main(argv: list[str] | None = None) -> int:
    """Parses the command line and runs the benchmark."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, default=1024)
    p.add_argument("--points", type=int, nargs="*", default=[256, 2048])
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--smoke", action="store_true", help="tiny sizes, for the test suite")
    a = p.parse_args(argv)
    if a.smoke:
        a.envs, a.points, a.repeats = 32, [64], 2
    run(a.envs, a.points, a.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
