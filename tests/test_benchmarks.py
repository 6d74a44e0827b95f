"""The runtime benchmarks run in smoke mode and print their ratios (nothing timed is asserted)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_replay_benchmark_smoke(capsys):
    rows = load("replay").main(["--smoke"])
    out = capsys.readouterr().out
    assert "replay speedup vs launching again" in out and "[device word]" in out
    for kind, mode in (("uniform", "launches"), ("device word", "graph"), ("derived", "launches")):
        assert rows[f"[{kind}] readbacks per replayed cook"] == 0
        assert rows[f"[{kind}] plans per replayed cook"] == 0  # no plan: the values replay
        assert rows[f"[{kind}] recording replayed as"] == mode
    # a track generator's dynamic Params field moved inside a graph replays too
    assert rows["[params field] readbacks per replayed cook"] == 0
    assert rows["[params field] plans per replayed cook"] == 0
    assert "[params field] replay speedup vs replan" in rows
    numbers = [v for v in rows.values() if isinstance(v, float)]
    assert all(math.isfinite(v) and v >= 0 for v in numbers)
