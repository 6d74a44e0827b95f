"""``benchmarks/explore_overhead.py`` runs in smoke mode (nothing timed is asserted)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "explore_overhead.py"


def test_explore_overhead_smoke(capsys):
    spec = importlib.util.spec_from_file_location("bench_explore_overhead", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    for label in ("plain generate()", "view cook (target.cook)", "view edit (target.cook)"):
        line = next(x for x in out.splitlines() if x.strip().startswith(label))
        us = float(line.split()[-2])
        assert math.isfinite(us) and us > 0, line
