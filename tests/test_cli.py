"""The ``procgen-nb demo`` command: cooks on the CPU and writes a PNG with its live counts."""

from __future__ import annotations

import numpy as np
import pytest

from procgen_nb.cli import main


def test_demo_writes_a_png_with_the_counts_numpy_finds(tmp_path, capsys):
    out = tmp_path / "demo.png"
    assert main(["demo", "--out", str(out), "--n", "800", "--seed", "3", "--radius", "0.5"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pts = np.random.default_rng(3).uniform(-1, 1, size=(800, 2)).astype(np.float32)
    n = int((np.linalg.norm(pts, axis=1) <= np.float32(0.5)).sum())
    assert f"kept {n} of 800 points; wrote {out}" in capsys.readouterr().out


def test_demo_refuses_a_bad_shape(capsys):
    with pytest.raises(SystemExit) as info:
        main(["demo", "--shape", "star"])
    assert info.value.code == 2
    assert "invalid choice: 'star'" in capsys.readouterr().err
