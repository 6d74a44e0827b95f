"""The oldest Warp release of the tested range, in a second virtual environment.

``pyproject.toml`` pins ``warp-lang`` to a range (``_warp_compat.TESTED``). This test keeps a
venv per (oldest release, Python) under ``~/.cache/procgen_nb/venvs`` (``XDG_CACHE_HOME``;
``PROCGEN_NB_VENVS`` overrides the folder) that holds only that ``warp-lang`` (installed
``--no-deps`` from a wheel kept next to it, so a rerun needs no network) and a ``.pth`` to
this environment's ``site-packages`` for the other dependencies (its own Warp comes first
on ``sys.path``). procgen_nb itself comes from the checkout under test (``PYTHONPATH``).
A small generate per built-in generator family there must match the same generate here to
the byte, with no warning (warnings are errors there).

It skips, saying why, only when the venv is missing and the wheel cannot be downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from procgen_nb import _warp_compat

ROOT = Path(__file__).resolve().parents[1]
OLDEST = ".".join(map(str, _warp_compat.TESTED[0])) + ".0"

SMOKE = """
import hashlib, json, sys, warnings
warnings.simplefilter("error")  # as pytest's filterwarnings: a WarpCompatWarning fails
import numpy as np, warp
import procgen_nb
from procgen_nb import _warp_compat
from procgen_nb.track_gen import TrackGenConfig, TrackGenerator
out = {"warp": warp.config.version, "package": procgen_nb.__file__,
       "missing": {f: _warp_compat.missing(f) for f in _warp_compat.FEATURES}}
for name in sys.argv[1:]:
    r = TrackGenerator(TrackGenConfig(generator=name, num_envs=8, num_points=64)).generate()
    xy = np.ascontiguousarray(r.xy.numpy())
    out[name] = [int(np.count_nonzero(r.valid.numpy())), hashlib.sha256(xy.tobytes()).hexdigest()]
print(json.dumps(out))
warnings.resetwarnings()  # (Warp's PCH folder is cleaned up at exit with a ResourceWarning)
"""
GENERATORS = ["polar", "voronoi"]


def _cache() -> Path:
    base = os.environ.get("PROCGEN_NB_VENVS")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "procgen_nb" / "venvs"


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)


def oldest_venv() -> Path:
    """Returns the Python of the cached venv with the oldest tested Warp (built once)."""
    tag = f"py{sys.version_info.major}{sys.version_info.minor}"
    venv = _cache() / f"warp-lang-{OLDEST}-{tag}"
    py = _venv_python(venv)
    ready = venv / ".ready"
    if ready.exists() and ready.read_text(encoding="utf-8").strip() == OLDEST and py.exists():
        return py
    wheels = _cache() / "wheels"
    have = list(wheels.glob(f"warp_lang-{OLDEST}-*.whl"))
    if not have:
        got = _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "-q",
                "-d",
                str(wheels),
                f"warp-lang=={OLDEST}",
            ]
        )
        if got.returncode != 0:
            pytest.skip(
                f"warp-lang=={OLDEST} is not cached and could not be downloaded: "
                f"{got.stderr.strip().splitlines()[-1:]}"
            )
    final, venv = venv, venv.with_name(f"{venv.name}.{os.getpid()}.tmp")  # built aside, renamed
    py = _venv_python(venv)
    made = _run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(venv)])
    assert made.returncode == 0, made.stderr
    inst = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--find-links",
            str(wheels),
            f"warp-lang=={OLDEST}",
        ]
    )
    assert inst.returncode == 0, inst.stderr
    site = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    here = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    Path(site.stdout.strip(), "_procgen_nb_base.pth").write_text("\n".join(here) + "\n")
    (venv / ".ready").write_text(OLDEST)
    try:
        os.replace(venv, final)
    except OSError:  # another run made it first (or a stale one is in the way)
        if not (final / ".ready").exists():
            shutil.rmtree(final, ignore_errors=True)
            os.replace(venv, final)
        else:
            shutil.rmtree(venv, ignore_errors=True)
    return _venv_python(final)


def _smoke(python: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_CURRENT_TEST", "PYTHONPATH")}
    env.update(PYTHONPATH=str(ROOT), PROCGEN_NB_PROGRESS="0", PROCGEN_DEVICE="cpu")
    res = _run([python, "-c", SMOKE, *GENERATORS], env=env, cwd=str(ROOT))
    assert res.returncode == 0, res.stderr[-4000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_oldest_tested_warp_generates_the_same_tracks():
    old = _smoke(str(oldest_venv()))
    new = _smoke(sys.executable)
    assert old["warp"] == OLDEST and new["warp"] != OLDEST
    assert old["package"] == new["package"] == str(ROOT / "procgen_nb" / "__init__.py")
    assert all(v == [] for v in old["missing"].values()), old["missing"]
    for name in GENERATORS:
        assert old[name][0] > 0, name
        assert old[name] == new[name], name
