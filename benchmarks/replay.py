"""Replaying a cook's recording against cooking it again and against launching its kernels.

A graph of ``--nodes`` small nodes (each a kernel over ``--n`` points taking a dynamic
uniform) is cooked once; then, for each new value of the dynamic uniform, it is

* cooked again eagerly (``Graph(record=False)``: Python runs every node),
* launched again (the same kernels, one ``wp.launch`` each, no graph machinery),
* replayed (``Graph(record=True)``: the cook's recording, no Python per node),

and the same arithmetic is done in NumPy for scale. Ratios are printed; nothing is asserted.
Run: ``python benchmarks/replay.py`` (``--smoke`` for a quick run in the test suite).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import warp as wp

import procgen_nb as pg
from procgen_nb import asset, ops

INSIDE = asset.resolve("procgen/inside", "computeShader")


def build(nodes: int, n: int, record: bool) -> pg.Graph:
    pts = np.random.default_rng(0).uniform(-1, 1, size=(n, 2)).astype(np.float32)

    @pg.node
    def points():
        return ops.transfer.upload(values={"P": pts})["columns"]["P"]

    @pg.node(params={"radius": pg.Field(0.5, dynamic=True)})
    def flag(points, radius):
        return ops.device.kernel(
            kernel=INSIDE,
            bind={"points": points},
            domain=points,
            uniforms={"center": (0.0, 0.0), "radius": radius},
        )["columns"]["flags"]

    g = pg.Graph("bench", record=record)
    g.add("points", points)
    for i in range(nodes):
        g.add(f"flag{i}", flag, points="points")
    return g


def timeit(fn, reps: int) -> float:
    fn()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def main(argv=None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=32)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--smoke", action="store_true", help="a quick run for the test suite")
    args = ap.parse_args(argv)
    if args.smoke:
        args.nodes, args.reps = 8, 20
    keys = [f"flag{i}.radius" for i in range(args.nodes)]
    radii = iter(np.linspace(0.1, 0.9, 10_000))

    eager = build(args.nodes, args.n, record=False)
    eager.cook()
    t_eager = timeit(lambda: eager.cook(params=dict.fromkeys(keys, next(radii))), args.reps)

    rec = build(args.nodes, args.n, record=True)
    rec.cook()
    before = pg.traffic()
    t_replay = timeit(lambda: rec.cook(params=dict.fromkeys(keys, next(radii))), args.reps)
    d = pg.traffic() - before
    assert rec.last.report.replayed

    log = rec._recording.log
    launches = [e for e in log if e[0] == "launch"]

    def launch_again():
        for _, kernel, dim, a, ctx in launches:
            wp.launch(kernel, dim=dim, inputs=list(a), device=ctx.device)

    t_launch = timeit(launch_again, args.reps)
    pts = np.random.default_rng(0).uniform(-1, 1, size=(args.n, 2)).astype(np.float32)
    t_numpy = timeit(
        lambda: [(np.linalg.norm(pts, axis=1) <= 0.5).astype(np.int32) for _ in range(args.nodes)],
        args.reps,
    )
    rows = {
        "eager cook (ms)": t_eager * 1e3,
        "launch again (ms)": t_launch * 1e3,
        "replay (ms)": t_replay * 1e3,
        "numpy (ms)": t_numpy * 1e3,
        "replay speedup vs eager cook": t_eager / t_replay,
        "replay speedup vs launching again": t_launch / t_replay,
        "replay vs numpy": t_numpy / t_replay,
        "readbacks per replayed cook": d.readbacks / (args.reps + 1),
    }
    print(f"{args.nodes} nodes x {args.n} points, {args.reps} cooks each, device {pg.get_device()}")
    for k, v in rows.items():
        print(f"  {k:36s} {v:10.3f}")
    return rows


if __name__ == "__main__":
    main()
