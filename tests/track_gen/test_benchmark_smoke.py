"""benchmarks/compare_generators.py runs in smoke mode and prints its tables with ratios."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "compare_generators.py"


def test_compare_generators_smoke():
    out = subprocess.run(
        [sys.executable, "-W", "error", str(SCRIPT), "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    assert "generator      tracks/s  valid rb/call numpy tr/s   ratio" in out
    for name in ("bezier", "checkpoint", "hull", "polar", "repulsive", "voronoi"):
        assert f"\n{name} " in out
    assert "shapely.is_simple (GEOS)" in out
    assert "agreement 1.000" in out
    # readbacks per steady call are zero for every generator
    rows = [
        ln.split()
        for ln in out.splitlines()
        if ln.split()[:1]
        and ln.split()[0] in ("bezier", "checkpoint", "hull", "polar", "repulsive", "voronoi")
    ]
    assert rows and all(r[3] == "0.0" for r in rows)
    # every built-in has a NumPy port that makes the same tracks (float32 rounding apart)
    # and the same validity verdicts
    # (repulsive iterates, so float32 summation order shows more: a looser bound)
    assert all(float(r[7]) < (1e-2 if r[0] == "repulsive" else 1e-4) for r in rows), out
    assert all(r[2] == r[6] for r in rows), out
