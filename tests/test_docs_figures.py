"""The README's pictures are what tools/make_figures.py draws today, byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"


def test_make_figures_redraws_the_committed_pictures(tmp_path):
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = dict(os.environ, PROCGEN_NB_PROGRESS="0", PROCGEN_DEVICE="cpu", PYTHONPATH=path)
    res = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_figures.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    drawn = sorted(p.name for p in tmp_path.iterdir())
    assert drawn == sorted(p.name for p in IMAGES.glob("*.png"))
    assert "tracks.png" in drawn
    for name in drawn:
        assert (tmp_path / name).read_bytes() == (IMAGES / name).read_bytes(), (
            f"docs/images/{name} differs from what tools/make_figures.py draws: "
            "run python tools/make_figures.py and commit the pictures"
        )
        # no version or date in the file: the bytes depend on the drawing alone
        assert b"Software" not in (IMAGES / name).read_bytes()
