"""benchmarks/export.py runs in smoke mode and prints a row per format (nothing timed is
asserted)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

from procgen_nb.track_gen import export

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "export.py"


def test_export_benchmark_smoke(capsys):
    spec = importlib.util.spec_from_file_location("bench_export", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke"])
    out = capsys.readouterr().out
    assert "format       tracks/s  x generate  KiB/track" in out
    for fmt in export.FORMATS:
        assert f"\n{fmt} " in out
        assert math.isfinite(rows[f"{fmt} tracks/s"]) and rows[f"{fmt} tracks/s"] > 0
        assert rows[f"{fmt} x generate"] > 0
