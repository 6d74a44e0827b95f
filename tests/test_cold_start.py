"""benchmarks/cold_start.py in smoke mode: a fresh empty cache builds, a warm one does not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "cold_start.py"


def test_cold_start_smoke(capsys):
    spec = importlib.util.spec_from_file_location("bench_cold_start", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (row,) = mod.main(["--smoke"])
    out = capsys.readouterr().out
    assert "polar" in out and "cold s" in out
    # an empty cache compiles the polar pipeline's modules (generator and track ops), each
    # once; the warm run, on the cache the cold run filled, compiles nothing
    names = [name for _, _, name in row["builds"]]
    assert len(names) == len(set(names)) > 0
    assert any(n.startswith("track_gen.generators") for n in names)
    assert any(n.startswith("track_gen.ops") for n in names)
    assert row["rebuilt_warm"] == 0
    assert row["cold"] > 0 and row["warm"] > 0


def test_a_cold_demo_builds_exactly_the_modules_it_prebuilds(tmp_path):
    """What ``procgen-nb demo`` builds up front (two processes) is all its cook needs.

    A module missing from ``demo.demo_modules`` would still be built, lazily, in one
    process (slower); one listed but unused would be wasted work. The reference is the
    build log of a real cold run.
    """
    import os
    import subprocess
    import sys

    log = tmp_path / "builds.log"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env.update(
        WARP_CACHE_PATH=str(tmp_path / "warp"),
        PROCGEN_NB_CACHE=str(tmp_path / "variants"),
        PROCGEN_NB_BUILD_LOG=str(log),
        PROCGEN_NB_PROGRESS="0",
        PROCGEN_DEVICE="cpu",
    )
    out = tmp_path / "demo.png"
    res = subprocess.run(
        [sys.executable, "-m", "procgen_nb.cli", "demo", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr
    built = [line.split("\t")[2] for line in log.read_text().splitlines()]
    listed = subprocess.run(
        [
            sys.executable,
            "-c",
            "from procgen_nb import demo, _progress\n"
            "for m in demo.demo_modules('disk'): print(_progress.display_name(m))",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert listed.returncode == 0, listed.stderr
    assert sorted(built) == sorted(listed.stdout.splitlines())
    assert len({int(line.split("\t")[0]) for line in log.read_text().splitlines()}) == 2
