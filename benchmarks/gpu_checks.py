"""The device checks of benchmarks/gpu.sh in one process, printed as one table.

1. CUDA-graph capture and replay of every registered generator: a generator's steady
   call (``generate(epoch=e)``, a replay of its recording) must equal a fresh generator's
   first call at that epoch, to the byte (``TrackResult.fingerprint``).
2. A graph with live counts (``device.bound(live=True)`` from a dynamic Field): a cook that
   only moves the count replays the recording and must equal a fresh graph cooked at it.
3. Guards read deferred: a replay that runs past a ``device.guard`` adds a deferred read
   and no readback; the next cook raises the GuardError.
4. Throughput of every generator at ``--envs`` (65,536 on the GPU): tracks/s and valid
   tracks/s over ``--repeats`` steady calls (one wait at the end), against the goal of
   1,000,000 valid tracks/s for polar on an H100/H200-class GPU.

Run: ``python benchmarks/gpu_checks.py --device cuda --envs 65536`` (gpu.sh does);
``--smoke`` is a small CPU run (E=64) that checks the plumbing. Exit status 1 when a check
fails; the throughput rows are measurements (the goal is printed, not asserted).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import warp as wp

import procgen_nb as pg
from procgen_nb import asset, ops
from procgen_nb._traffic import traffic
from procgen_nb.columns import Column
from procgen_nb.track_gen import TrackGenConfig, TrackGenerator, plugin

INSIDE = asset.resolve("procgen/inside", "computeShader")
GOAL = {"polar": 1_000_000}


def _cfg(name: str, envs: int, points: int, device: str) -> TrackGenConfig:
    return TrackGenConfig(generator=name, num_envs=envs, num_points=points, device=device)


def check_generator_replay(name: str, envs: int, points: int, device: str) -> tuple[bool, str]:
    """Steady calls (replays) of one generator against fresh generators at the same epochs."""
    tg = TrackGenerator(_cfg(name, envs, points, device))
    tg.generate(epoch=0)
    recorded = ", ".join(sorted(tg.recordings))
    bad, seen = [], set()
    for epoch in (1, 2):
        steady = tg.generate(epoch=epoch).fingerprint()
        fresh = TrackGenerator(_cfg(name, envs, points, device)).generate(epoch=epoch).fingerprint()
        seen.add(fresh)
        if steady != fresh:
            bad.append(epoch)
    if len(seen) != 2:
        return False, "epochs 1 and 2 gave the same tracks (the epoch is not applied)"
    ok = not bad
    return (
        ok,
        f"epochs 1,2 equal a fresh call; recorded: {recorded}" if ok else f"differs at {bad}",
    )


def _points(n: int) -> np.ndarray:
    return np.random.default_rng(0).uniform(-1, 1, size=(n, 2)).astype(np.float32)


def live_graph(n: int) -> pg.Graph:
    """``points`` -> ``flags`` over a live count held in a device word (a dynamic Field)."""
    pts = _points(n)

    @pg.node
    def points():
        return ops.transfer.upload(values={"P": pts})["columns"]["P"]

    @pg.node(params={"live": pg.Field(n // 2, bounds=(0, n), dynamic=True)})
    def flags(points, live):
        count = ops.device.bound(value=live, live=True)
        return ops.device.kernel(
            kernel=INSIDE,
            bind={"points": points},
            domain=count,
            uniforms={"center": (0.0, 0.0), "radius": 0.5},
        )["columns"]["flags"]

    g = pg.Graph("gpu_live")
    g.add("points", points)
    g.add("flags", flags, points="points")
    return g


def _read(col: Column) -> np.ndarray:
    return ops.transfer.readback(columns={"c": col})["values"]["c"]


def check_graph_replay(n: int) -> tuple[bool, str]:
    g = live_graph(n)
    g.cook()
    bad, replays = [], 0
    for live in (n // 4, n // 2, 3):  # inside the room the first cook measured
        r = g.cook(params={"flags.live": live})
        replays += bool(r.report.replayed)
        fresh = live_graph(n).cook(params={"flags.live": live})
        if not np.array_equal(_read(r["flags"]), _read(fresh["flags"])):
            bad.append(live)
    ok = not bad and replays == 3
    return ok, f"{replays}/3 cooks replayed, equal to fresh cooks: {not bad} {bad}"


def guard_graph() -> pg.Graph:
    @pg.node
    def keep():
        return ops.transfer.upload(values={"P": _points(16)})["columns"]["P"]

    probe = np.array([[0.6, 0.0]], dtype=np.float32)

    @pg.node(params={"limit": pg.Field(0.5, dynamic=True)})
    def checked(keep, limit):
        pt = ops.transfer.upload(values={"P": probe})["columns"]["P"]
        flag = ops.device.kernel(
            kernel=INSIDE,
            bind={"points": pt},
            domain=1,
            uniforms={"center": (0.0, 0.0), "radius": limit},
        )["columns"]["flags"]
        return ops.device.guard(value=keep, flag=flag, why="the probe point fell inside")

    g = pg.Graph("gpu_guard")
    g.add("keep", keep)
    g.add("checked", checked, keep="keep")
    return g


def check_guards_deferred() -> tuple[bool, str]:
    g = guard_graph()
    g.cook()
    g.cook(params={"checked.limit": 0.55})
    before = traffic()
    r = g.cook(params={"checked.limit": 0.9})  # runs past the guard: read deferred
    after = traffic()
    deferred = after.deferred_reads - before.deferred_reads
    readbacks = after.readbacks - before.readbacks
    try:
        g.cook(params={"checked.limit": 0.9})
        raised = False
    except pg.CookError as e:
        raised = "GuardError" in str(e)
    ok = bool(r.report.replayed) and deferred >= 1 and readbacks == 0 and raised
    return ok, (
        f"replayed={bool(r.report.replayed)}, deferred reads +{deferred}, readbacks +{readbacks}, "
        f"next cook raised GuardError={raised}"
    )


def throughput(name: str, envs: int, points: int, device: str, repeats: int) -> tuple[float, float]:
    """(tracks/s, valid tracks/s) over ``repeats`` steady calls, one wait at the end."""
    tg = TrackGenerator(_cfg(name, envs, points, device))
    tg.generate(epoch=0)
    tg.generate(epoch=1)  # builds and records
    wp.synchronize_device(device)
    t0 = time.perf_counter()
    for i in range(repeats):
        r = tg.generate(epoch=2 + i)
    wp.synchronize_device(device)
    dt = time.perf_counter() - t0
    rate = repeats * envs / dt
    return rate, rate * r.num_valid() / envs


def prebuild(device: str) -> tuple[bool, str]:
    """Builds the runtime's, the generators' and the checks' modules on ``device`` at once,
    one thread per CPU core (``wp.force_load``): a cold cache then costs one parallel
    build instead of a serial one inside the first timed call."""
    import os

    from procgen_nb import _warmup

    modules = _warmup.builtin_modules() + _warmup.variant_modules(["procgen/inside"])[0]
    t0 = time.perf_counter()
    wp.force_load(device=device, modules=modules, max_workers=os.cpu_count() or 1)
    return True, f"{len(modules)} modules loaded in {time.perf_counter() - t0:.1f} s"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=None, help="cuda, cuda:0 or cpu (default: procgen_nb's)")
    ap.add_argument("--envs", type=int, default=65_536)
    ap.add_argument("--points", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--check-envs", type=int, default=1024, help="E of the replay checks")
    ap.add_argument("--smoke", action="store_true", help="a small CPU run (plumbing)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.device, args.envs, args.points, args.repeats, args.check_envs = "cpu", 64, 64, 2, 16
    if args.device:
        pg.set_device(args.device)
    device = pg.get_device()
    names = plugin.registry.available("generator")
    rows: list[tuple[str, str, str]] = []
    failed = 0

    def check(label: str, fn, *a) -> None:
        nonlocal failed
        try:
            ok, detail = fn(*a)
        except Exception as e:  # noqa: BLE001  (a row per check; the script goes on)
            ok, detail = False, f"{type(e).__name__}: {e}"[:160]
        failed += not ok
        rows.append((label, "PASS" if ok else "FAIL", detail))

    check("prebuild", prebuild, device)
    for name in names:
        check(f"replay {name}", check_generator_replay, name, args.check_envs, args.points, device)
    check("replay graph with live counts", check_graph_replay, 4096 if not args.smoke else 256)
    check("guards read deferred", check_guards_deferred)
    for name in names:
        try:
            rate, valid = throughput(name, args.envs, args.points, device, args.repeats)
            goal = GOAL.get(name)
            note = f"goal {goal:,} valid/s: {'met' if valid >= goal else 'not met'}" if goal else ""
            rows.append(
                (
                    f"throughput {name} E={args.envs:,}",
                    f"{valid:,.0f} valid/s",
                    f"{rate:,.0f} tracks/s {note}".strip(),
                )
            )
        except Exception as e:  # noqa: BLE001
            failed += 1
            rows.append(
                (f"throughput {name} E={args.envs:,}", "FAIL", f"{type(e).__name__}: {e}"[:160])
            )
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print(f"device {device}, N={args.points}, Warp {wp.config.version}")
    print(f"{'check':<{w0}}  {'result':<{w1}}  detail")
    for a, b, c in rows:
        print(f"{a:<{w0}}  {b:<{w1}}  {c}")
    print(f"{len(rows)} rows, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
