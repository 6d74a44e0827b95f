"""benchmarks/crossings.py runs in smoke mode: six families x sizes rows, agreement 1.000."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "crossings.py"


def test_crossings_benchmark_smoke():
    out = subprocess.run(
        [sys.executable, "-W", "error", str(SCRIPT), "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    rows = [
        ln.split() for ln in out.splitlines() if ln.split()[:1] in (["smooth"], ["noisy"], ["walk"])
    ]
    assert [r[0] for r in rows] == ["smooth", "noisy", "walk"], out
    assert all(r[-4] == "1.000" for r in rows), out  # ring-by-ring agreement with GEOS
    assert "target >= 1.0x" in out
