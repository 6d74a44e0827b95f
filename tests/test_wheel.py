"""The built wheel: kernels ship inside it, and it cooks a graph in a fresh virtual environment."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import sys, pathlib
import procgen_nb as pg
from procgen_nb import asset, ops
from procgen_nb.demo import build_demo_graph
here = pathlib.Path(pg.__file__).resolve()
assert sys.prefix in str(here), (sys.prefix, here)
assert str(asset.builtin_folder()).startswith(str(here.parent)), asset.builtin_folder()
from procgen_nb.ui.clipboard import _asset
assert str(_asset("copy_button/copy_button.js")).startswith(str(here.parent))
r = build_demo_graph().cook(params={"points.n": 500, "points.seed": 1, "keep.radius": 0.5})
n = ops.transfer.readback(columns={"n": r["keep"]["indices_count"]})["values"]["n"]
print("COOKED", n, r.report.totals.readbacks)
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        check=True,
        timeout=600,
    )
    (whl,) = out.glob("procgen_nb-*.whl")
    return whl


def test_wheel_holds_kernels_and_widget_assets_as_package_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for k in ("gather", "compact", "scan"):
        assert f"procgen_nb/_assets/kernels/{k}/{k}.py" in names
        assert f"procgen_nb/_assets/kernels/{k}/bindings.yaml" in names
    assert "procgen_nb/_assets/widgets/copy_button/copy_button.js" in names
    assert not any(n.startswith(("kernels/", "widgets/")) for n in names)


def test_wheel_cooks_in_a_fresh_venv(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    # the heavy dependencies (warp, numpy, ...) come from this interpreter's site-packages;
    # procgen_nb itself is installed from the wheel, not editable and not the source tree
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "--no-deps",
            "-q",
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    res = subprocess.run(
        [str(py), "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("COOKED")][-1]
    _, n, readbacks = line.split()
    import numpy as np

    pts = np.random.default_rng(1).uniform(-1, 1, size=(500, 2)).astype(np.float32)
    assert int(n) == int((np.linalg.norm(pts, axis=1) <= np.float32(0.5)).sum())
    assert readbacks == "0"
