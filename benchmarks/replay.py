"""Replaying a cook's recording against cooking it again and against launching its kernels.

A graph of ``--nodes`` small nodes (each a kernel over ``--n`` points taking a dynamic
value) is cooked once; then, for each new dynamic value, it is

* cooked again eagerly (``Graph(record=False)``: Python runs every node),
* launched again (the same kernels, one ``wp.launch`` each, no graph machinery),
* replayed (``Graph(record=True)``: the cook's recording, no Python per node),

and the same arithmetic is done in NumPy for scale. Two kinds of dynamic value: a kernel
uniform (the recording replays as recorded Warp launches with that param set) and a live
count in a device word (``device.bound(live=True)``: the recording replays as one Warp
graph capture). A third kind, ``derived``, is an expression of two dynamic values
(``radius * scale + 0.05`` as the uniform, ``count // 2 + extra`` as the live count the
kernel runs over): the recording evaluates it at each replay, so it too replays with no
plan (``plans per replayed cook`` is 0). A fourth, ``params field``, is a track generator's
dynamic Params field (``polar``'s ``radius_jitter``) moved by a node's dynamic parameter
inside a graph: the node's ``tg.update`` + ``tg.generate`` replay with the graph (0 plans
and 0 readbacks per cook), against the same graph planning again each cook. A fifth,
``shared generator``, is two ``tg.node()`` of one generator in one graph, one of them
moving that dynamic field: each node's call replays with its own value (0 plans).
Ratios are printed; nothing is asserted.
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


def build(nodes: int, n: int, record: bool, word: bool = False, derived: bool = False) -> pg.Graph:
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

    @pg.node(
        params={
            "radius": pg.Field(0.5, dynamic=True),
            "scale": pg.Field(1.0, dynamic=True),
            "count": pg.Field(n // 2, bounds=(0, n), dynamic=True),
            "extra": pg.Field(0, bounds=(0, n // 2), dynamic=True),
        }
    )
    def flag_derived(points, radius, scale, count, extra):
        live = ops.device.bound(value=count // 2 + extra, live=True)
        return ops.device.kernel(
            kernel=INSIDE,
            bind={"points": points},
            domain=live,
            uniforms={"center": (0.0, 0.0), "radius": radius * scale + 0.05},
        )["columns"]["flags"]

    g = pg.Graph("bench", record=record)
    g.add("points", points)
    body = flag_derived if derived else flag_live if word else flag
    for i in range(nodes):
        g.add(f"flag{i}", body, points="points")
    return g


def _params(nodes: int, n: int, kind: str, value: float) -> dict:
    if kind == "uniform":
        return {f"flag{i}.radius": float(value) for i in range(nodes)}
    if kind == "word":
        return {f"flag{i}.live": int(value) for i in range(nodes)}
    out = {}
    for i in range(nodes):
        out[f"flag{i}.radius"] = float(value)
        out[f"flag{i}.scale"] = 1.0 + float(value)
        out[f"flag{i}.count"] = int(value * n) % (n // 2) + n // 4
        out[f"flag{i}.extra"] = int(value * 97) % 8
    return out


def scenario(label: str, nodes: int, n: int, reps: int, kind: str) -> dict[str, float]:
    """Times eager cooks, launching again, replays and NumPy for one kind of dynamic value."""
    word, derived = kind == "word", kind == "derived"
    if word:
        values = iter(np.arange(10_000) % (n // 2) + n // 4)
    else:
        values = iter(np.linspace(0.1, 0.9, 10_000))

    eager = build(nodes, n, record=False, word=word, derived=derived)
    eager.cook()
    t_eager = timeit(lambda: eager.cook(params=_params(nodes, n, kind, next(values))), reps)

    rec = build(nodes, n, record=True, word=word, derived=derived)
    rec.cook()
    before, plans = pg.traffic(), pg.cookrun.counts().plans
    t_replay = timeit(lambda: rec.cook(params=_params(nodes, n, kind, next(values))), reps)
    d = pg.traffic() - before
    plans = pg.cookrun.counts().plans - plans
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
        f"[{label}] plans per replayed cook": plans / (reps + 1),
    }


def params_field(envs: int, reps: int) -> dict[str, float]:
    """A dynamic Params field of a track generator moved inside a graph: replayed vs planned
    again (``Graph(record=False)``), with the plans and readbacks of the replayed cooks."""
    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator

    def graph(record: bool) -> pg.Graph:
        tg = TrackGenerator(TrackGenConfig(generator="polar", num_envs=envs, num_points=64))

        @pg.node(params={"jitter": pg.Field(0.35, bounds=(0.0, 1.0), dynamic=True)})
        def tracks(jitter):
            tg.update(generator_params={"radius_jitter": jitter})
            return pg.Column(tg.generate().valid)

        g = pg.Graph("params field", record=record)
        g.add("tracks", tracks)
        g.cook()
        return g

    return _replay_vs_replan("params field", graph, "tracks.jitter", reps)


def shared_generator(envs: int, reps: int) -> dict[str, float]:
    """Two nodes of one track generator, one moving its dynamic ``radius_jitter``: the
    graph's recording replays both calls (each with its own value) vs planning again."""
    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator

    def graph(record: bool) -> pg.Graph:
        tg = TrackGenerator(TrackGenConfig(generator="polar", num_envs=envs, num_points=64))
        g = pg.Graph("shared generator", record=record)
        g.add("a", tg.node())
        g.add("b", tg.node())
        g.cook(params={"b.radius_jitter": 0.1, "b.epoch": 9})
        return g

    return _replay_vs_replan("shared generator", graph, "a.radius_jitter", reps)


def _replay_vs_replan(label: str, graph, key: str, reps: int) -> dict[str, float]:
    """Times cooks moving the dynamic ``key`` of ``graph(record=False)`` (a plan each cook)
    against ``graph(record=True)`` (replays), and counts the replays' plans and readbacks."""
    values = iter(np.linspace(0.05, 0.95, 10_000))
    replan = graph(record=False)
    t_replan = timeit(lambda: replan.cook(params={key: next(values)}), reps)
    rec = graph(record=True)
    before, plans = pg.traffic(), pg.cookrun.counts().plans
    t_replay = timeit(lambda: rec.cook(params={key: next(values)}), reps)
    d = pg.traffic() - before
    plans = pg.cookrun.counts().plans - plans
    assert rec.last.report.replayed
    return {
        f"[{label}] replan (ms)": t_replan * 1e3,
        f"[{label}] replay (ms)": t_replay * 1e3,
        f"[{label}] replay speedup vs replan": t_replan / t_replay,
        f"[{label}] readbacks per replayed cook": d.readbacks / (reps + 1),
        f"[{label}] plans per replayed cook": plans / (reps + 1),
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
        **scenario("uniform", args.nodes, args.n, args.reps, "uniform"),
        **scenario("device word", args.nodes, args.n, args.reps, "word"),
        **scenario("derived", args.nodes, args.n, args.reps, "derived"),
        **params_field(args.nodes, args.reps),
        **shared_generator(args.nodes, args.reps),
    }
    print(f"{args.nodes} nodes x {args.n} points, {args.reps} cooks each, device {pg.get_device()}")
    for k, v in rows.items():
        print(f"  {k:50s} {v:>10.3f}" if isinstance(v, float) else f"  {k:50s} {v:>10s}")
    return rows


if __name__ == "__main__":
    main()
