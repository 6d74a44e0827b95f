"""Cold start: the first demo and the first polar track batch, on an empty and a warm cache.

Each case runs in a fresh Python process, first with an empty Warp kernel cache
(``WARP_CACHE_PATH``) and an empty variant cache (``PROCGEN_NB_CACHE``), both temporary
folders, then again on the cache the cold run filled. It prints the wall times, the
difference (what the builds cost), the modules compiled (with ``--detail``, each one's
build time: the log of ``PROCGEN_NB_BUILD_LOG``) and the targets.

    python benchmarks/cold_start.py              # demo and polar (E=1024, N=256)
    python benchmarks/cold_start.py --detail     # and the build time of every module
    python benchmarks/cold_start.py --smoke      # polar at E=8, N=32 only (the test suite)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

POLAR = (
    "from procgen_nb.track_gen import presets\n"
    "presets.track('polar', num_envs={E}, num_points={N})\n"
)

#: case -> (command line, cold target in seconds on the 2-core dev box)
TARGETS = {"demo": 15.0, "polar": 12.0}


def command(case: str, out: Path, smoke: bool) -> list[str]:
    if case == "demo":
        return [sys.executable, "-m", "procgen_nb.cli", "demo", "--out", str(out / "demo.png")]
    e, n = (8, 32) if smoke else (1024, 256)
    return [sys.executable, "-c", POLAR.format(E=e, N=n)]


def run_once(cmd: list[str], cache: Path, log: Path) -> tuple[float, float]:
    """Runs ``cmd`` once on ``cache``; returns its wall time and the CPU time of its process
    tree (build processes included), which a busy machine does not inflate."""
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    env.update(
        WARP_CACHE_PATH=str(cache / "warp"),
        PROCGEN_NB_CACHE=str(cache / "procgen_nb"),
        PROCGEN_NB_PROGRESS="0",
        PROCGEN_NB_BUILD_LOG=str(log),
        PROCGEN_DEVICE=os.environ.get("PROCGEN_DEVICE", "cpu"),
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"cold_start: {' '.join(cmd)} failed:\n{res.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def read_log(log: Path) -> list[tuple[int, float, str]]:
    if not log.exists():
        return []
    rows = []
    for line in log.read_text().splitlines():
        pid, sec, name = line.split("\t")
        rows.append((int(pid), float(sec), name))
    return rows


def measure(case: str, smoke: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="cold_start_") as tmp:
        root = Path(tmp)
        cmd = command(case, root, smoke)
        cold, cold_cpu = run_once(cmd, root, root / "cold.log")
        warm, warm_cpu = run_once(cmd, root, root / "warm.log")
        builds = read_log(root / "cold.log")
        rebuilt = read_log(root / "warm.log")
    return {
        "case": case,
        "cold": cold,
        "warm": warm,
        "cold_cpu": cold_cpu,
        "warm_cpu": warm_cpu,
        "builds": builds,
        "processes": len({pid for pid, _, _ in builds}),
        "rebuilt_warm": len(rebuilt),
    }


def main(argv: Sequence[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cases", nargs="+", default=["demo", "polar"], choices=sorted(TARGETS))
    ap.add_argument("--smoke", action="store_true", help="polar at E=8, N=32 only")
    ap.add_argument("--detail", action="store_true", help="print each module's build time")
    args = ap.parse_args(argv)
    cases = ["polar"] if args.smoke else args.cases
    load = os.getloadavg()[0]
    print(
        f"cold start on {os.cpu_count()} CPUs (load average {load:.1f} before), "
        f"device {os.environ.get('PROCGEN_DEVICE', 'cpu')}; cpu = CPU seconds of the process tree"
    )
    header = (
        f"{'case':8} {'cold s':>8} {'warm s':>8} {'builds s':>9} {'cold cpu':>9} {'warm cpu':>9} "
        f"{'modules':>8} {'procs':>6}"
    )
    print(header + "  target (cold)")
    print("-" * (len(header) + 15))
    rows = []
    for case in cases:
        r = measure(case, args.smoke)
        rows.append(r)
        target = TARGETS[case]
        verdict = "" if args.smoke else ("meets" if r["cold"] <= target else "misses")
        print(
            f"{case:8} {r['cold']:8.2f} {r['warm']:8.2f} {r['cold'] - r['warm']:9.2f} "
            f"{r['cold_cpu']:9.2f} {r['warm_cpu']:9.2f} "
            f"{len(r['builds']):8d} {r['processes']:6d}  <= {target:g} s {verdict}"
        )
        if args.detail:
            for pid, sec, name in sorted(r["builds"], key=lambda b: -b[1]):
                print(f"    {sec:6.2f} s  pid {pid}  {name}")
    return rows


if __name__ == "__main__":
    main()
