"""Tracks per second of every registered generator, beside NumPy and shapely references.

For each generator in ``track_gen.plugin.registry`` it builds a plain ``TrackGenConfig``
(``num_envs`` x ``num_points``, the default validity: every check on, drivable at
``track_width`` and ``min_turn_radius``), warms it up, and times steady ``generate()`` calls
(replays of the recording), reporting tracks/s, the valid fraction, valid tracks/s and the
readbacks per call. For every built-in a NumPy implementation of the same generator (the
same integer hash and streams, so the same tracks: ``max|dxy|`` is the largest coordinate
difference), the same arc-length resampling (``np.interp`` over the cumulative length, O(N))
and the same validity checks (closed, ``shapely.is_simple`` for the crossings, turning number
by summed angles, circumradii for the turn radius, one ``scipy.spatial.cKDTree``
``query_pairs`` for the clearance, ``shapely.convex_hull`` for ``hull``'s hulls: the best a
user would write; each row names it) runs in the same process and the ratio is
printed; for a plugin without a NumPy port (marked ``*``) the NumPy column times the
validity checks alone on the same tracks. ``--old-reference`` also times the former
reference (an O(N^2) resampler and a brute-force crossing loop) and prints both ratios.

The opt-in road-overlap check (``ValidityParams(road_overlap=True)``: the road ribbon at
``track_width``, triangulated, tested against itself by ``mesh.road_overlap_batch``, a HOST
step) is timed per generator in its own table, with a shapely reference (the same triangles,
``STRtree`` and intersection areas, on a subset of the envs) and its agreement.

For ``repulsive`` a section shows how relaxed its loops are: the tangent-point energy of
the initial polygons and of the output, beside the former implementation's figures
(``benchmarks/repulsive_quality.py``).

The self-intersection check alone (``ops.is_simple``, stopping at the first crossing, and
``ops.self_intersections``, counting them all) is timed against ``shapely.is_simple`` (GEOS)
on the same rings, with their agreement (``benchmarks/crossings.py``: more families).

Usage::

    python benchmarks/compare_generators.py              # E=1024, N=256
    python benchmarks/compare_generators.py --smoke      # a few seconds (the test suite)

A call is split over ``PROCGEN_NB_THREADS`` CPU threads (default: the cores available;
column ``thr`` prints the count each generator used); the targets are printed beside the
measurements, not asserted.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable

import numpy as np
from numpy_reference import (
    NUMPY_PORTS,
    base_seeds,
    numpy_pipeline,
    numpy_validity,
    shapely_road_overlap,
)
from repulsive_quality import TARGET_TRACKS as REPULSIVE_TARGET
from repulsive_quality import relaxation_lines

TARGET_TRACKS = 20_000  # valid tracks/s for polar and checkpoint with full validity
#: envs of the shapely road-overlap reference (it runs one STRtree per env)
ROAD_REFERENCE_ENVS = 32
#: the reference each row's ratio is against (printed beside it)
REFERENCE_NAMES = {
    "port": "np+GEOS+cKDTree",
    "hull": "np+GEOS+cKDTree+hull",
    "checks": "checks: GEOS+cKDTree*",
}
REFERENCE_LEGEND = {
    "np": "the generator in NumPy, np.interp arc-length resampling",
    "GEOS": "shapely.is_simple crossings",
    "cKDTree": "scipy cKDTree.query_pairs clearance",
    "hull": "shapely.convex_hull hulls",
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


def run(
    num_envs: int,
    num_points: int,
    repeats: int,
    only: list[str] | None,
    old_reference: bool = False,
    device: str = "cpu",
    reference: bool = True,
    out: list[dict] | None = None,
    repair_out: list[dict] | None = None,
) -> int:
    """Runs the comparison and prints the tables; returns a process exit status. ``out``:
    a list that gets one dict per generator (the printed figures, for ``report.py``);
    ``repair_out``: one per generator of the repair table."""
    import shapely
    import warp as wp

    import procgen_nb
    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator, ops
    from procgen_nb.track_gen.plugin import registry

    E, N = num_envs, num_points
    names = only or registry.available("generator")
    print(
        f"track_gen generators: E={E} envs, N={N} points, best of {repeats}, "
        f"device {device} (thr: the CPU threads a call is split over); "
        "validity: every check (closed, simple, turning number, turn radius, clearance)"
    )
    header = (
        f"{'generator':<12} {'tracks/s':>10} {'valid':>6} {'rb/call':>7} "
        f"{'numpy tr/s':>10} {'ratio':>7} {'valid(np)':>9} {'max|dxy|':>9} {'valid tr/s':>10} "
        f"{'thr':>3} {'reference':<22}"
    )
    print(header)
    print("-" * len(header))
    rings = None
    relax: list[str] = []
    starred = False
    old_rows: list[str] = []
    measured: dict[str, tuple[float, float]] = {}  # name: (valid, tracks/s), the repair-on row
    for name in names:
        tg = TrackGenerator(TrackGenConfig(generator=name, num_envs=E, num_points=N, device=device))
        tg.generate()
        vp = tg.config.validity
        checks_on = {"r_min": vp.min_turn_radius, "width": vp.track_width}

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
        ref_name, t_np = "-", math.nan
        threads = len(getattr(tg, "_parts", ())) or 1
        if not reference:
            pass
        elif name in NUMPY_PORTS:
            seeds = base_seeds(0, 0, E)
            t_np = _best(
                lambda name=name, seeds=seeds, kw=checks_on: numpy_pipeline(name, seeds, N, **kw),
                max(1, repeats // 5),
            )
            np_rate = f"{E / t_np:.0f}"
            ratio = f"{t_np / dt:.1f}x"
            ref_name = REFERENCE_NAMES.get(name, REFERENCE_NAMES["port"])
            ref_valid, ref_xy = numpy_pipeline(name, seeds, N, **checks_on)
            np_valid = f"{ref_valid.mean():.3f}"
            dxy = f"{np.abs(ref_xy - tg.result.numpy()['xy']).max():.1e}"
            if old_reference:
                t_old = _best(
                    lambda name=name, seeds=seeds, kw=checks_on: numpy_pipeline(
                        name, seeds, N, True, **kw
                    ),
                    1,
                )
                old_rows.append(f"{name:<12} {t_old / dt:>9.1f}x {t_np / dt:>9.1f}x")
        else:
            # no NumPy port of this generator: its validity checks alone, on the same tracks
            ours_xy = tg.result.numpy()["xy"].astype(np.float64)

            def checks(xy: np.ndarray = ours_xy, kw: dict = checks_on) -> np.ndarray:
                return numpy_validity(xy, **kw)

            t_np = _best(checks, max(1, repeats // 5))
            np_rate = f"{E / t_np:.0f}*"
            ref_name = REFERENCE_NAMES["checks"]
            starred = True
            ratio = f"{t_np / dt:.1f}x"
            np_valid = f"{checks().mean():.3f}"
        measured[name] = (valid, rate)
        if name == "polar":
            rings = tg.result.numpy()["xy"]
        print(
            f"{name:<12} {rate:>10.0f} {valid:>6.3f} {readbacks:>7.1f} {np_rate:>10} "
            f"{ratio:>7} {np_valid:>9} {dxy:>9} {rate * valid:>10.0f} {threads:>3} {ref_name:<22}"
        )
        if out is not None:
            out.append(
                {
                    "generator": name,
                    "threads": threads,
                    "tracks/s": rate,
                    "valid": valid,
                    "valid tracks/s": rate * valid,
                    "readbacks/call": readbacks,
                    "numpy tracks/s": E / t_np,
                    "ratio": t_np / dt,
                    "valid(np)": np_valid,
                    "reference": ref_name,
                }
            )
        if name in ("polar", "checkpoint"):
            mark = "meets" if rate * valid >= TARGET_TRACKS else "below"
            print(f"{'':<12} valid tracks/s {rate * valid:.0f} ({mark} the {TARGET_TRACKS} target)")
        if name == "repulsive":
            mark = "meets" if rate * valid >= REPULSIVE_TARGET else "below"
            print(
                f"{'':<12} valid tracks/s {rate * valid:.0f} ({mark} the {REPULSIVE_TARGET} target)"
            )
            relax = relaxation_lines(tg.result.numpy()["xy"], tg.params)

    if starred:
        print("* validity checks only (no NumPy port of the generator), on the same tracks")
    if reference:
        print("reference: " + "; ".join(f"{k} = {v}" for k, v in REFERENCE_LEGEND.items()))
    print(
        f"checks: min_turn_radius {checks_on['r_min']:g}, track_width {checks_on['width']:g} "
        "(the defaults, DRIVABLE * scale); the NumPy reference applies the same ones"
    )
    if "repulsive" in names:
        print()
        print("\n".join(relax))
    if old_rows:
        print()
        print("ratio against the former NumPy reference (O(N^2) resampler, brute-force crossings)")
        print(f"{'generator':<12} {'old ratio':>10} {'new ratio':>10}")
        print("\n".join(old_rows))
    repair_table(names, E, N, repeats, device, repair_out, measured)
    if reference:
        road_table(names, E, N, max(1, repeats // 3), device)
    if rings is None:
        return 0
    # the self-intersection check alone, on the same rings (benchmarks/crossings.py: more)
    if not reference:
        return 0
    from procgen_nb.track_gen.exec import LaunchContext

    ctx = LaunchContext("cpu")
    xy_wp = wp.array(rings.reshape(-1, 2), dtype=wp.vec2, device="cpu")
    out = wp.zeros(E, dtype=wp.int32, device="cpu")
    cnt = wp.zeros(E, dtype=wp.int32, device="cpu")
    grid = ops.GridScratch.alloc("cpu", E, N)

    def ours() -> None:
        ops.is_simple(ctx, xy_wp, E, N, out, grid)
        ctx.synchronize()

    def counting() -> None:
        ops.self_intersections(ctx, xy_wp, E, N, cnt, grid)
        ctx.synchronize()

    geoms = shapely.linearrings(
        rings.reshape(-1, 2).astype(np.float64), indices=np.repeat(np.arange(E), N)
    )
    t_ours = _best(ours, repeats)
    t_cnt = _best(counting, repeats)
    t_geos = _best(lambda: shapely.is_simple(geoms), repeats)
    simple_ours = out.numpy() == 1
    agree = float((simple_ours == shapely.is_simple(geoms)).mean())
    print()
    print(f"self-intersection check on the same {E} polar rings of {N} points")
    print(f"{'method':<28} {'rings/s':>10} {'ratio':>8}")
    print(f"{'ops.is_simple':<28} {E / t_ours:>10.0f} {'1.0x':>8}")
    print(f"{'ops.self_intersections':<28} {E / t_cnt:>10.0f} {t_ours / t_cnt:>7.2f}x")
    print(f"{'shapely.is_simple (GEOS)':<28} {E / t_geos:>10.0f} {t_ours / t_geos:>7.2f}x")
    verdict = "at least" if t_ours <= t_geos else "slower than"
    print(
        f"ops.is_simple is {t_geos / t_ours:.2f}x shapely ({verdict} shapely); "
        f"agreement {agree:.3f}"
    )
    return 0


#: the generators with a ``repair`` switch (on by default)
REPAIRED = ("bezier", "hull", "voronoi")


def repair_table(
    names: list[str],
    E: int,
    N: int,
    repeats: int,
    device: str,
    out: list[dict] | None = None,
    measured: dict[str, tuple[float, float]] | None = None,
) -> None:
    """Valid fraction and valid tracks/s of the generators with a ``repair`` switch, on
    (the default) and off (the 0.1 tracks), at the default validity. The repair-on figures
    are the main table's (``measured``: name to (valid, tracks/s), the same generator and
    measurement; timed here, as the main table does, where missing); the repair-off ones
    are timed as the main table times its rows (``_best`` of ``repeats`` steady calls).
    ``out`` gets a dict per generator."""
    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator

    names = [n for n in names if n in REPAIRED]
    if not names:
        return
    measured = measured or {}
    print()
    print(
        f"corner repair (repair=True, the default, against False: the 0.1 tracks), E={E}, "
        f"N={N}, best of {repeats}; repair on: the main table's figures"
    )
    print(
        f"{'generator':<12} {'valid on':>9} {'valid off':>9} {'valid tr/s on':>13} "
        f"{'valid tr/s off':>14} {'gain':>6}"
    )
    for name in names:
        got = []
        for repair in (True, False):
            if repair and name in measured:
                got.append(measured[name])
                continue
            cfg = TrackGenConfig(
                generator=name,
                num_envs=E,
                num_points=N,
                device=device,
                generator_params={"repair": repair},
            )
            tg = TrackGenerator(cfg)
            tg.generate()

            def call(tg: TrackGenerator = tg) -> None:
                tg.generate()
                tg.ctx.synchronize()

            dt = _best(call, repeats)
            got.append((tg.result.num_valid() / E, E / dt))
        (v_on, t_on), (v_off, t_off) = got
        r_on, r_off = t_on * v_on, t_off * v_off
        gain = f"{r_on / r_off:.1f}x" if r_off > 0 else "-"
        print(f"{name:<12} {v_on:>9.3f} {v_off:>9.3f} {r_on:>13.0f} {r_off:>14.0f} {gain:>6}")
        if out is not None:
            out.append(
                {
                    "generator": name,
                    "valid on": v_on,
                    "valid off": v_off,
                    "valid tracks/s on": r_on,
                    "valid tracks/s off": r_off,
                }
            )


def road_table(names: list[str], E: int, N: int, repeats: int, device: str) -> None:
    """Tracks/s with the opt-in road-overlap check (a HOST step: read back, NumPy road
    meshes and triangle grid, one intersect_pairs launch), the envs it rejects beyond the
    other checks, and a shapely reference on the first envs with its agreement."""
    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator

    k = min(E, ROAD_REFERENCE_ENVS)
    print()
    print(f"road overlap (ValidityParams(road_overlap=True)), E={E}, N={N}, best of {repeats}")
    print(
        f"{'generator':<12} {'tracks/s':>10} {'off tr/s':>10} {'valid':>6} {'road rej':>8} "
        f"{'shapely tr/s':>12} {'agree':>6}"
    )
    for name in names:
        on = TrackGenerator(
            TrackGenConfig(
                generator=name,
                num_envs=E,
                num_points=N,
                device=device,
                validity={"road_overlap": True},
            )
        )
        off = TrackGenerator(
            TrackGenConfig(generator=name, num_envs=E, num_points=N, device=device)
        )
        rates = []
        for tg in (on, off):
            tg.generate()

            def call(tg: TrackGenerator = tg) -> None:
                tg.generate()
                tg.ctx.synchronize()

            rates.append(E / _best(call, repeats))
        d = on.result.numpy()
        road = (d["reason"] & 64) != 0
        xy = d["xy"][:k].astype(np.float64)
        width = on.config.validity.track_width
        t0 = time.perf_counter()
        want = shapely_road_overlap(xy, width)
        t_ref = time.perf_counter() - t0
        print(
            f"{name:<12} {rates[0]:>10.0f} {rates[1]:>10.0f} {d['valid'].mean():>6.3f} "
            f"{road.mean():>8.3f} {k / t_ref:>12.0f} {(want == road[:k]).mean():>6.3f}"
        )
    print(f"road rej: fraction of envs with the road-overlap bit; shapely on the first {k} envs")


def split_table(names: list[str], E: int, N: int, threads: int, repeats: int) -> None:
    """Tracks/s of calls split across ``threads`` worker threads (PROCGEN_NB_THREADS) against
    one thread, timed alternately call by call; min/median/max of the wall-clock ratio, the
    bytes compared, and the ratio the CPU times predict on idle cores (one thread's CPU time
    per call over the split call's longest thread: the caller's thread, which runs the
    first share, the hand-off and the count, or a worker). The load average is printed:
    on a shared machine a busy core makes a worker wait, and the wall ratio falls to 1."""
    import os
    import statistics

    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator

    def load() -> str:
        try:
            return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
        except OSError:
            return "load ?"

    repeats = max(repeats, 15)
    print()
    print(
        f"split calls: {threads} threads against 1 (PROCGEN_NB_THREADS), E={E}, N={N}, "
        f"{repeats} alternate pairs, {os.cpu_count()} cores, {load()}"
    )
    print(
        f"{'generator':<12} {'1 thread tr/s':>13} {'split tr/s':>11} "
        f"{'wall ratio min/med/max':>23} {'CPU-time ratio':>14}"
    )
    old = os.environ.get("PROCGEN_NB_THREADS")
    try:
        for name in names:
            tgs = []
            for t in (1, threads):
                os.environ["PROCGEN_NB_THREADS"] = str(t)
                cfg = TrackGenConfig(generator=name, num_envs=E, num_points=N, device="cpu")
                tgs.append(TrackGenerator(cfg))
            same = tgs[0].generate().fingerprint() == tgs[1].generate().fingerprint()
            for tg in tgs:
                tg.generate()  # every part has recorded: the calls below replay in threads
            worker_cpu: list[float] = []
            for p in tgs[1]._parts[1:]:

                def timed(mode: str, run=p._run, out=worker_cpu) -> None:
                    t0 = time.thread_time()
                    run(mode)
                    out.append(time.thread_time() - t0)

                p._run = timed
            wall: list[list[float]] = [[], []]
            cpu: list[list[float]] = [[], []]
            crit: list[float] = []
            for _ in range(repeats):
                for k, tg in enumerate(tgs):
                    worker_cpu.clear()
                    c0, t0 = time.thread_time(), time.perf_counter()
                    tg.generate()
                    wall[k].append(time.perf_counter() - t0)
                    cpu[k].append(time.thread_time() - c0)
                crit.append(max([cpu[1][-1], *worker_cpu]))
            r = sorted(a / b for a, b in zip(wall[0], wall[1], strict=True))
            med = statistics.median
            parts = len(tgs[1]._parts) or 1
            print(
                f"{name:<12} {E / min(wall[0]):>13.0f} {E / min(wall[1]):>11.0f} "
                f"{r[0]:>7.2f}/{med(r):>5.2f}/{r[-1]:>5.2f}x {med(cpu[0]) / med(crit):>13.2f}x"
                f"{'' if parts == threads else f'  ({parts} of {threads} threads: the threshold)'}"
                f"{'' if same else '  BYTES DIFFER'}"
            )
    finally:
        if old is None:
            os.environ.pop("PROCGEN_NB_THREADS", None)
        else:
            os.environ["PROCGEN_NB_THREADS"] = old
    print(load())


def main(argv: list[str] | None = None) -> int:
    """Parses the command line and runs the benchmark."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, default=1024)
    p.add_argument("--points", type=int, default=256)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--generators", nargs="*", default=None)
    p.add_argument("--smoke", action="store_true", help="tiny sizes, for the test suite")
    p.add_argument(
        "--old-reference",
        action="store_true",
        help="also time the former NumPy reference and print its ratio beside the new one",
    )
    p.add_argument("--device", default="cpu", help="cpu or cuda (the pipeline's device)")
    p.add_argument(
        "--no-reference", action="store_true", help="time the pipeline only (no NumPy, GEOS)"
    )
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="only time calls split across this many threads against one thread",
    )
    a = p.parse_args(argv)
    if a.smoke:
        a.envs, a.points, a.repeats = 32, 64, 2
    if a.threads:
        from procgen_nb.track_gen.plugin import registry

        split_table(
            a.generators or registry.available("generator"), a.envs, a.points, a.threads, a.repeats
        )
        return 0
    return run(
        a.envs, a.points, a.repeats, a.generators, a.old_reference, a.device, not a.no_reference
    )


if __name__ == "__main__":
    sys.exit(main())
