"""``benchmarks/browser_latency.py --smoke`` runs: a slider press in Chromium reaches the
kernel, cooks, and the new picture is drawn, with every timing of the split recorded."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import lab  # noqa: E402

pytestmark = pytest.mark.browser

SCRIPT = lab.ROOT / "benchmarks" / "browser_latency.py"


@pytest.mark.skipif(lab.missing() is not None, reason=f"browser: {lab.missing()}")
def test_browser_latency_smoke():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=lab.ROOT,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "E=4, N=32: 3 presses" in out.stdout, out.stdout
    for label in ("key to picture", "cook (target.cook", "draw (canvas)", "send and transfer"):
        line = next(x for x in out.stdout.splitlines() if x.startswith(label))
        median, p90 = (float(v) for v in line.split()[-2:])
        assert 0 <= median <= p90 < 60_000, line
