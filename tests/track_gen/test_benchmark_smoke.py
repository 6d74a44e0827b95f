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
    names = ("bezier", "checkpoint", "hull", "polar", "repulsive", "voronoi")
    main, road = out.split("\nroad overlap (ValidityParams(road_overlap=True))")
    main, repair = main.split("\ncorner repair (repair=True")
    # the repair table: valid fraction and valid tracks/s with the switch on and off
    fixed = [
        ln.split()
        for ln in repair.splitlines()
        if ln.split()[:1] in (["bezier"], ["hull"], ["voronoi"])
    ]
    assert [r[0] for r in fixed] == ["bezier", "hull", "voronoi"], out
    assert all(float(r[1]) >= float(r[2]) and r[-1].endswith("x") for r in fixed), out
    # every check on (the default validity), in the pipeline and in the NumPy reference
    assert "validity: every check" in main and "the NumPy reference applies the same" in main
    # readbacks per steady call are zero for every generator
    rows = [ln.split() for ln in main.splitlines() if ln.split()[:1] and ln.split()[0] in names]
    assert rows and all(r[3] == "0.0" for r in rows)
    # every built-in has a NumPy port that makes the same tracks (float32 rounding apart)
    # and the same validity verdicts
    # (repulsive iterates, so float32 summation order shows more: a looser bound)
    assert all(float(r[7]) < (1e-2 if r[0] == "repulsive" else 1e-4) for r in rows), out
    assert all(r[2] == r[6] for r in rows), out
    # the road-overlap table: a row per generator, agreeing with its shapely reference
    road_rows = [
        ln.split() for ln in road.splitlines() if ln.split()[:1] and ln.split()[0] in names
    ]
    assert sorted(r[0] for r in road_rows) == sorted(names), out
    assert all(r[-1] == "1.000" for r in road_rows), out
