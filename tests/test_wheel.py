"""The built wheel: kernels ship inside it, and it cooks a graph in a fresh virtual environment."""

from __future__ import annotations

import os
import site
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


def _caller_site_dirs() -> list[str]:
    """The folders this interpreter imports installed packages from (a venv's included)."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(dirs) if Path(d).is_dir()]


def _nested_venv(env_dir: Path) -> Path:
    """A fresh venv that also sees this interpreter's packages (warp, numpy, ...).

    ``system_site_packages`` would show the *base* interpreter's packages, which lack
    them when the tests run inside a virtual environment (the README's commands do); a
    .pth file listing this interpreter's site folders works from a venv or not. Its
    folders come after the venv's own, so procgen_nb is imported from the wheel.
    """
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    own = subprocess.run(
        [str(py), "-c", "import site; print(site.getsitepackages()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(own) / "_caller_site.pth").write_text("\n".join(_caller_site_dirs()) + "\n")
    return py


def test_nested_venv_sees_the_callers_packages(tmp_path):
    py = _nested_venv(tmp_path / "venv")
    code = "import sys, warp; print(sys.prefix); print(warp.__file__)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run(
        [str(py), "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120, env=env
    )
    assert res.returncode == 0, res.stderr
    prefix, warp_file = res.stdout.splitlines()
    assert prefix == str(tmp_path / "venv")
    import warp

    assert Path(warp_file).resolve() == Path(warp.__file__).resolve()


def test_wheel_cooks_in_a_fresh_venv(wheel, tmp_path):
    # the heavy dependencies (warp, numpy, ...) come from this interpreter's site folders;
    # procgen_nb itself is installed from the wheel, not editable and not the source tree
    py = _nested_venv(tmp_path / "venv")
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
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the wheel, not a tree
    res = subprocess.run(
        [str(py), "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env
    )
    assert res.returncode == 0, res.stderr
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("COOKED")][-1]
    _, n, readbacks = line.split()
    import numpy as np

    pts = np.random.default_rng(1).uniform(-1, 1, size=(500, 2)).astype(np.float32)
    assert int(n) == int((np.linalg.norm(pts, axis=1) <= np.float32(0.5)).sum())
    assert readbacks == "0"
