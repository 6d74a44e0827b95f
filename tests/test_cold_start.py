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
