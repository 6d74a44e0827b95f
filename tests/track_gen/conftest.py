"""Fixtures of the track_gen tests: devices, the acme plugin distribution, helpers."""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from procgen_nb.device import available_devices

ASSETS = Path(__file__).resolve().parents[1] / "assets"
ACME = ASSETS / "acme_plugin"

DEVICES = ["cpu"] + [d for d in available_devices() if d.startswith("cuda")][:1]


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    """Every test taking ``device`` runs on the CPU, and on CUDA where present."""
    return request.param


def install_distribution(src: Path, site: Path) -> str:
    """Installs the plugin project ``src`` into the directory ``site`` the way pip lays it
    out (its package plus a ``.dist-info`` with METADATA and entry_points.txt, taken from
    its pyproject.toml). Returns the distribution name."""
    meta = tomllib.loads((src / "pyproject.toml").read_text())["project"]
    name, version = meta["name"], meta["version"]
    for pkg in tomllib.loads((src / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ]:
        shutil.copytree(src / pkg, site / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: {meta['description']}\n"
    )
    lines = []
    for group, eps in meta.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{k} = {v}" for k, v in eps.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    (info / "RECORD").write_text("")
    return name


@pytest.fixture(scope="session")
def acme_site(tmp_path_factory: pytest.TempPathFactory):
    """The acme plugin installed as a separate distribution on sys.path for the session."""
    from procgen_nb.track_gen.plugin import registry

    site = tmp_path_factory.mktemp("acme_site")
    install_distribution(ACME, site)
    sys.path.insert(0, str(site))
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        registry.remove("generator", "acme.wobbly")
        for mod in [m for m in sys.modules if m == "acme_tracks" or m.startswith("acme_tracks.")]:
            del sys.modules[mod]
