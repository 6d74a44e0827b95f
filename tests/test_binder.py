"""binder/ has what Binder (repo2docker) needs to run the notebooks: the dependencies of
pyproject.toml and of the extras the notebooks use, pinned within their ranges, every
module a notebook imports, and a postBuild that installs the package. The repository's
address is written once (pyproject.toml's ``[project.urls] Repository``): the README's
Binder badge and the docs' agree with it."""

from __future__ import annotations

import ast
import importlib.metadata as md
import json
import pathlib
import re
import sys
import tomllib

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
#: the extras of pyproject.toml a notebook needs (notebook 10 drives Gymnasium's CarRacing);
#: JupyterLab and ipykernel are among the package's own dependencies (`pip install .`
#: opens the notebooks too)
EXTRAS = ["gym"]


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


def _needed() -> list[Requirement]:
    project = _pyproject()["project"]
    extras = [d for e in EXTRAS for d in project["optional-dependencies"][e]]
    return [Requirement(d) for d in project["dependencies"] + extras]


def test_binder_names_the_dependencies_of_pyproject_and_the_notebooks_extras():
    assert set(_binder_pins()) == {canonicalize_name(r.name) for r in _needed()}


def test_every_binder_pin_is_exact_and_within_the_pyproject_range():
    ranges = {canonicalize_name(r.name): r.specifier for r in _needed()}
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


def _notebook_imports() -> dict[str, set[str]]:
    """The top-level modules each notebook's code cells import (shell and magic lines
    left out) -> the notebooks importing them."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            src = "".join(cell["source"])
            src = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
            for node in ast.walk(ast.parse(src)):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                else:
                    continue
                for n in names:
                    found.setdefault(n.partition(".")[0], set()).add(path.stem)
    return found


def _installed_by(pins: list[str]) -> set[str]:
    """The distributions that installing ``pins`` brings, by this venv's metadata (each
    pin and what it requires, recursively; optional extras left out)."""
    seen: set[str] = set()
    todo = list(pins)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        for line in md.requires(name) or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def test_every_module_a_notebook_imports_is_installed_by_binder():
    imports = _notebook_imports()
    assert {"numpy", "procgen_nb", "gymnasium", "pyarrow"} <= set(imports)  # the finder works
    owners = md.packages_distributions()
    installed = _installed_by(list(_binder_pins()))
    missing = {}
    for module, notebooks in sorted(imports.items()):
        if module in sys.stdlib_module_names or module == "procgen_nb":
            continue
        dists = {canonicalize_name(d) for d in owners.get(module, [])}
        if not dists & installed:
            missing[module] = (sorted(notebooks), sorted(dists) or "no distribution here")
    assert missing == {}, f"binder/requirements.txt installs nothing that provides {missing}"


# -- the repository's address, written once --------------------------------------------
#: a link to this project's repository, on GitHub or Binder: (owner, name)
REPO_LINK = re.compile(
    r"(?:github\.com|mybinder\.org/v2/gh)/([\w.-]+)/(procgen[_-]nb)\b", re.IGNORECASE
)


def _repository() -> str:
    url = _pyproject()["project"]["urls"]["Repository"]
    m = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)", url)
    assert m, f"[project.urls] Repository: expected https://github.com/OWNER/NAME, got {url!r}"
    return m.group(1)


def _wrong_links(text: str, repo: str) -> list[str]:
    return [f"{o}/{n}" for o, n in REPO_LINK.findall(text) if f"{o}/{n}" != repo]


def test_the_readme_badge_and_the_docs_name_the_repository_of_pyproject():
    repo = _repository()
    binder = f"https://mybinder.org/v2/gh/{repo}/main?urlpath=lab/tree/notebooks"
    readme = (ROOT / "README.md").read_text()
    assert f"(https://mybinder.org/badge_logo.svg)]({binder})" in readme
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]
    pages += [*(ROOT / "docs").glob("*.md"), ROOT / "docs" / "conf.py", *BINDER.iterdir()]
    wrong = {p.name: w for p in pages if (w := _wrong_links(p.read_text(), repo))}
    assert wrong == {}, f"links to another repository than pyproject.toml's {repo}: {wrong}"
    # the docs build their badge from pyproject.toml (docs/conf.py), never a second copy
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert '["project"]["urls"]' in conf and not REPO_LINK.search(conf)
    assert "{{ binder_badge }}" in (ROOT / "docs" / "getting-started.md").read_text()


def test_the_link_check_finds_another_owner():
    repo = "someone/procgen_nb"
    text = "[b](https://mybinder.org/v2/gh/other/procgen_nb/main) github.com/NVIDIA/warp"
    assert _wrong_links(text, repo) == ["other/procgen_nb"]
    assert _wrong_links("https://github.com/someone/procgen_nb/issues", repo) == []
