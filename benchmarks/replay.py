"""Replaying a cook's recording against cooking it again and against launching its kernels.

A graph of ``--nodes`` small nodes (each a kernel over ``--n`` points taking a dynamic
value) is cooked once; then, for each new dynamic value, it is

* cooked again eagerly (``Graph(record=False)``: Python runs every node),
* launched again (the same kernels, one ``wp.launch`` each, no graph machinery),
* replayed (``Graph(record=True)``: the cook's recording, no Python per node),

and the same arithmetic is done in NumPy for scale. Two kinds of dynamic value: a kernel
uniform (the recording replays as recorded Warp launches with that param set) and a live
count in a device word (``device.bound(live=True)``: the recording replays as one Warp
graph capture). Ratios are printed; nothing is asserted.
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


def build(nodes: int, n: int, record: bool, word: bool = False) -> pg.Graph:
    """The graph: ``points`` and ``nodes`` flag nodes taking a dynamic value, either as a
    kernel uniform (``radius``) or, with ``word``, as a live count held in a device word."""
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

    @pg.node(params={"live": pg.Field(n // 2, bounds=(0, n), dynamic=True)})
    def flag_live(points, live):
        count = ops.device.bound(value=live, live=True)
        return ops.device.kernel(
            kernel=INSIDE,
            bind={"points": points},
            domain=count,
            uniforms={"center": (0.0, 0.0), "radius": 0.5},
        )["columns"]["flags"]

    g = pg.Graph("bench", record=record)
    g.add("points", points)
    for i in range(nodes):
        g.add(f"flag{i}", flag_live if word else flag, points="points")
    return g


def scenario(label: str, nodes: int, n: int, reps: int, word: bool) -> dict[str, float]:
    """Times eager cooks, launching again, replays and NumPy for one kind of dynamic value."""
    keys = [f"flag{i}.{'live' if word else 'radius'}" for i in range(nodes)]
    if word:
        values = iter(np.arange(10_000) % (n // 2) + n // 4)
    else:
        values = iter(np.linspace(0.1, 0.9, 10_000))

    eager = build(nodes, n, record=False, word=word)
    eager.cook()
    t_eager = timeit(lambda: eager.cook(params=dict.fromkeys(keys, next(values))), reps)

    rec = build(nodes, n, record=True, word=word)
    rec.cook()
    before = pg.traffic()
    t_replay = timeit(lambda: rec.cook(params=dict.fromkeys(keys, next(values))), reps)
    d = pg.traffic() - before
    assert rec.last.report.replayed
    launches = [e for e in rec._recording.log if e[0] == "launch"]

    def launch_again():
        for _, kernel, dim, a, ctx in launches:
            wp.launch(kernel, dim=dim, inputs=list(a), device=ctx.device)

    t_launch = timeit(launch_again, reps)
    pts = np.random.default_rng(0).uniform(-1, 1, size=(n, 2)).astype(np.float32)
    t_numpy = timeit(
        lambda: [(np.linalg.norm(pts, axis=1) <= 0.5).astype(np.int32) for _ in range(nodes)],
        reps,
    )
    return {
        f"[{label}] recording replayed as": rec._recording.mode,
        f"[{label}] eager cook (ms)": t_eager * 1e3,
        f"[{label}] launch again (ms)": t_launch * 1e3,
        f"[{label}] replay (ms)": t_replay * 1e3,
        f"[{label}] numpy (ms)": t_numpy * 1e3,
        f"[{label}] replay speedup vs eager cook": t_eager / t_replay,
        f"[{label}] replay speedup vs launching again": t_launch / t_replay,
        f"[{label}] replay vs numpy": t_numpy / t_replay,
        f"[{label}] readbacks per replayed cook": d.readbacks / (reps + 1),
    }


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
    rows = {
        **scenario("uniform", args.nodes, args.n, args.reps, word=False),
        **scenario("device word", args.nodes, args.n, args.reps, word=True),
    }
    print(f"{args.nodes} nodes x {args.n} points, {args.reps} cooks each, device {pg.get_device()}")
    for k, v in rows.items():
        print(f"  {k:50s} {v:>10.3f}" if isinstance(v, float) else f"  {k:50s} {v:>10s}")
    return rows


if __name__ == "__main__":
    main()
