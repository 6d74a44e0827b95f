"""Small modules: every module of the package stays under 600 lines (the project's rule)."""

from __future__ import annotations

from pathlib import Path

import procgen_nb

ROOT = Path(procgen_nb.__file__).parent


def test_every_module_is_under_600_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for p in ROOT.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) >= 600
    }
    assert long == {}, f"modules of 600 lines or more: {long}"


def test_the_named_modules_exist_and_are_small():
    for rel in ("graph.py", "track_gen/pipeline.py", "track_gen/ops/_kernels.py"):
        assert len((ROOT / rel).read_text(encoding="utf-8").splitlines()) < 600, rel
