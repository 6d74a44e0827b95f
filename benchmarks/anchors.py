"""procgen_nb's valid tracks/s beside two peers, in one run.

The peers, each seed timed in a child process that a timeout ends (some seeds never
return: random-track-generator retries a failing seed forever):

- Gymnasium's CarRacing (``gymnasium[box2d]``, the ``anchors`` extra): ``_create_track()``
  of a ``CarRacing`` whose ``np_random`` is seeded with the seed (the former road's bodies
  destroyed, as ``reset()`` does: one attempt, not ``reset``'s retries); valid when it returns
  True (CarRacing's ``reset`` retries the others);
- random-track-generator's ``generate_track("medium", seed=seed)``: valid when it returns
  within the timeout. It declares ``numpy<2``, which procgen_nb's numpy pin excludes, so no
  extra can hold it; its code runs on numpy 2 (nothing it calls was removed in 2.0, and
  it imports and generates with every warning an error). Where it does not import, this
  script installs the versions pinned in ``pyproject.toml``
  (``[tool.procgen_nb.anchors] no-deps``: it and ``gpxpy``) with ``pip install --no-deps
  --target`` into a cached folder (``~/.cache/procgen_nb/anchors``; ``XDG_CACHE_HOME``,
  ``PROCGEN_NB_ANCHORS`` overrides it), built once, which its child process puts first on
  ``PYTHONPATH``: the child runs on this interpreter's numpy, SciPy, shapely and PyYAML
  (the ``anchors`` extra). ``--no-install`` leaves it out instead.

Each peer's figure is the seeds that gave a track over the seconds its calls took inside the
child (a timed-out seed counts its whole timeout: a user waits that long), so process
start-up is left out. procgen_nb's figure is ``TrackGenerator.generate()`` at ``--envs`` x
``--points`` with the default validity, steady calls, for each of ``--generators``; the
ratios are procgen_nb's valid tracks/s over each peer's. Nothing is asserted.
Run: ``python benchmarks/anchors.py`` (``--smoke``: a few seeds, tiny sizes).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import selectors
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

#: the peers: name -> the module each needs
PEERS = {"CarRacing._create_track": "Box2D", "random-track-generator": "random_track_generator"}
#: the peer installed on demand, without its declared dependencies (see the module)
NO_DEPS_PEER = "random-track-generator"
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def no_deps_pins(pyproject: Path = PYPROJECT, table: str = "anchors") -> list[str]:
    """The ``name==version`` pins of ``[tool.procgen_nb.<table>] no-deps`` (``anchors``: the
    peers of this benchmark; ``racing``: TUMFTM's package for the racing-line checks).

    Raises:
        ValueError: the table is missing, or a pin is not ``name==version``.
    """
    tool = tomllib.loads(pyproject.read_text()).get("tool", {}).get("procgen_nb", {})
    pins = tool.get(table, {}).get("no-deps")
    if not pins:
        raise ValueError(f"{pyproject}: expected [tool.procgen_nb.{table}] no-deps, got none")
    for pin in pins:
        if pin.count("==") != 1:
            raise ValueError(f"{pyproject}: expected name==version pins, got {pin!r}")
    return list(pins)


def _cache() -> Path:
    base = os.environ.get("PROCGEN_NB_ANCHORS")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "procgen_nb" / "anchors"


def no_deps_folder(install: bool = True, table: str = "anchors") -> tuple[Path | None, str]:
    """The cached folder holding the ``no-deps`` pins of ``table`` (installed there first
    when missing and ``install``), and a note; ``(None, why)`` when it cannot be had."""
    pins = no_deps_pins(table=table)
    folder = _cache() / "-".join(p.replace("==", "-") for p in pins)
    ready = folder / ".ready"
    if ready.exists() and ready.read_text().split() == pins:
        return folder, f"{', '.join(pins)} (--no-deps, cached in {folder})"
    if not install:
        return None, "not installed (--no-install)"
    tmp = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(tmp)]
    got = subprocess.run([*cmd, *pins], capture_output=True, text=True, timeout=600)
    if got.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        last = (got.stderr.strip().splitlines() or ["pip failed"])[-1]
        return None, f"could not install {', '.join(pins)} --no-deps: {last}"
    (tmp / ".ready").write_text(" ".join(pins))
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder, f"{', '.join(pins)} (--no-deps, installed in {folder})"


def available() -> bool:
    """Whether at least one peer can be imported (the ``anchors`` extra)."""
    return any(importlib.util.find_spec(m) is not None for m in PEERS.values())


def _child(peer: str) -> None:
    """The child process: reads seeds from stdin, writes ``{"seed", "ok", "s"}`` lines."""
    import warnings

    warnings.simplefilter("ignore")
    if peer == "CarRacing._create_track":
        from gymnasium.envs.box2d.car_racing import CarRacing
        from gymnasium.utils import seeding

        env = CarRacing()

        def make(seed: int) -> bool:
            env.np_random, _ = seeding.np_random(seed)
            for body in env.road or ():  # _destroy() without a car: the road bodies
                env.world.DestroyBody(body)
            env.road, env.road_poly = [], []  # as reset() leaves them for _create_track
            return bool(env._create_track())
    else:
        import contextlib
        import io

        from random_track_generator import generate_track

        def make(seed: int) -> bool:
            with contextlib.redirect_stdout(io.StringIO()):
                generate_track("medium", seed=seed)
            return True

    for line in sys.stdin:
        seed = int(line)
        t0 = time.perf_counter()
        ok = make(seed)
        dt = time.perf_counter() - t0
        print(json.dumps({"seed": seed, "ok": ok, "s": dt}), flush=True)


def time_peer(
    peer: str, seeds: list[int], timeout: float, path: Path | None = None
) -> dict[str, float]:
    """Runs ``seeds`` through ``peer`` in a child process, one at a time, killing and
    restarting the child on a seed that takes over ``timeout`` seconds; returns the counts
    and the seconds the calls took. ``path``: a folder put first on the child's
    ``PYTHONPATH`` (the no-deps install)."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), *filter(None, [env.get("PYTHONPATH")])])
    done = ok = timeouts = 0
    seconds = 0.0
    todo = list(seeds)
    while todo:
        proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--child", peer],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        first = True
        try:
            while todo:
                seed = todo.pop(0)
                proc.stdin.write(f"{seed}\n")
                proc.stdin.flush()
                # the first seed also waits for the child's imports
                if not sel.select(timeout + (60 if first else 0)):
                    timeouts += 1
                    done += 1
                    seconds += timeout
                    break
                line = proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"{peer}: the child process ended on seed {seed}")
                r = json.loads(line)
                first = False
                if r["s"] > timeout:
                    timeouts += 1
                    seconds += timeout
                else:
                    ok += r["ok"]
                    seconds += r["s"]
                done += 1
        finally:
            proc.kill()
            proc.wait()
            proc.stdin.close()
            proc.stdout.close()
            sel.close()
    return {"tracks": done, "valid": ok, "timeouts": timeouts, "seconds": seconds}


def time_procgen(name: str, E: int, N: int, repeats: int) -> dict[str, float]:
    """Steady ``generate()`` calls of a built-in at E x N: tracks/s, valid fraction, threads."""
    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator

    tg = TrackGenerator(TrackGenConfig(generator=name, num_envs=E, num_points=N))
    tg.generate()
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        tg.generate()
        tg.ctx.synchronize()
        best = min(best, time.perf_counter() - t0)
    valid = tg.result.num_valid() / E
    return {"rate": E / best, "valid": valid, "threads": len(getattr(tg, "_parts", ())) or 1}


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100, help="seeds per peer")
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds per peer seed")
    ap.add_argument("--envs", type=int, default=1024)
    ap.add_argument("--points", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--generators", nargs="*", default=["checkpoint", "voronoi", "polar"])
    ap.add_argument("--smoke", action="store_true", help="a few seeds, tiny sizes")
    ap.add_argument(
        "--no-install", action="store_true", help=f"leave {NO_DEPS_PEER} out when missing"
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child)
        return []
    if args.smoke:
        args.seeds, args.envs, args.points, args.repeats = 3, 32, 64, 2
    print(f"anchors: {args.seeds} seeds per peer (timeout {args.timeout:g} s each, a child")
    print(f"process), procgen_nb at E={args.envs}, N={args.points}, best of {args.repeats}")
    print("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    peers = {}
    for peer, module in PEERS.items():
        path = None
        if importlib.util.find_spec(module) is None and peer == NO_DEPS_PEER:
            path, note = no_deps_folder(install=not args.no_install)
            print(f"{peer}: {note}")
            if path is None:
                continue
        elif importlib.util.find_spec(module) is None:
            print(f"{peer}: not installed ({module}), left out")
            continue
        peers[peer] = time_peer(peer, list(range(args.seeds)), args.timeout, path)
    ours = {g: time_procgen(g, args.envs, args.points, args.repeats) for g in args.generators}
    sizes = f"E={args.envs}, N={args.points}; {args.seeds} peer seeds, timeout {args.timeout:g} s"
    threads = "/".join(sorted({str(o["threads"]) for o in ours.values()}))
    rows = []
    head = f"{'generator':<26} {'tracks':>7} {'valid':>6} {'timeouts':>8} {'valid tracks/s':>14}"
    print(head + "  procgen_nb ratio (" + ", ".join(args.generators) + ")")
    print("-" * (len(head) + 30))
    for peer, r in peers.items():
        rate = r["valid"] / r["seconds"] if r["seconds"] > 0 else 0.0
        ratios = [o["rate"] * o["valid"] / rate if rate else math.inf for o in ours.values()]
        ratio = ", ".join(f"{x:,.0f}x" for x in ratios)
        print(
            f"{peer:<26} {r['tracks']:>7} {r['valid'] / r['tracks']:>6.3f} {r['timeouts']:>8} "
            f"{rate:>14,.1f}  {ratio}"
        )
        rows.append(
            {
                "name": peer,
                "tracks": r["tracks"],
                "valid": f"{r['valid'] / r['tracks']:.3f}",
                "valid tracks/s": rate,
                "ratio": ratio,
                "threads": threads,
                "sizes": sizes,
            }
        )
    for g, o in ours.items():
        print(
            f"{'procgen_nb ' + g:<26} {args.envs:>7} {o['valid']:>6.3f} {0:>8} "
            f"{o['rate'] * o['valid']:>14,.0f}  (threads per call {o['threads']})"
        )
        rows.append(
            {
                "name": f"procgen_nb {g}",
                "tracks": args.envs,
                "valid": f"{o['valid']:.3f}",
                "valid tracks/s": o["rate"] * o["valid"],
                "ratio": "1x",
                "threads": threads,
                "sizes": sizes,
            }
        )
    print("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return rows


if __name__ == "__main__":
    main()
