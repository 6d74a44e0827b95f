"""binder/ names the same dependencies as pyproject.toml, pinned within their ranges."""

from __future__ import annotations

import pathlib
import re
import tomllib

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
#: what Binder needs beyond the package's own dependencies (JupyterLab and ipykernel are
#: among those now: `pip install .` opens the notebooks too).
BINDER_ONLY: set[str] = set()


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _binder_pins() -> dict[str, Requirement]:
    pins = {}
    for line in (BINDER / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            pins[canonicalize_name(req.name)] = req
    return pins


def test_binder_names_the_dependencies_of_pyproject():
    deps = {canonicalize_name(Requirement(d).name) for d in _pyproject()["project"]["dependencies"]}
    pins = _binder_pins()
    assert set(pins) - BINDER_ONLY == deps


def test_every_binder_pin_is_exact_and_within_the_pyproject_range():
    ranges = {
        canonicalize_name(r.name): r.specifier
        for r in map(Requirement, _pyproject()["project"]["dependencies"])
    }
    test_ranges = {
        canonicalize_name(r.name): r.specifier
        for r in map(Requirement, _pyproject()["project"]["optional-dependencies"]["test"])
    }
    for name, req in _binder_pins().items():
        (spec,) = list(req.specifier)
        assert spec.operator == "==", f"{name}: expected an exact pin, got {req}"
        rng = ranges.get(name, test_ranges.get(name, SpecifierSet()))
        assert Version(spec.version) in rng, f"{name}=={spec.version} outside {rng}"


def test_postbuild_installs_the_package_and_python_matches():
    post = (BINDER / "postBuild").read_text()
    assert post.startswith("#!/bin/bash")
    assert re.search(r"pip install .*--no-deps.* \.$", post, re.M)
    assert (BINDER / "postBuild").stat().st_mode & 0o111
    m = re.fullmatch(r"python-(\d+\.\d+)\s*", (BINDER / "runtime.txt").read_text())
    assert m, "runtime.txt: expected python-X.Y"
    assert Version(m.group(1)) in SpecifierSet(_pyproject()["project"]["requires-python"])
