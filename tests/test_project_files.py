"""The files a project has: LICENSE (Apache-2.0, the licence pyproject names),
CHANGELOG.md and CONTRIBUTING.md, and what each must say."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_license_is_the_full_apache_2_text_pyproject_names():
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License\n")
    assert "Version 2.0, January 2004" in text
    # the nine sections of the terms and the appendix, in order
    sections = re.findall(r"^\s+(\d)\. (\w+)", text, re.M)
    assert [int(n) for n, _ in sections] == list(range(1, 10))
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX" in text
    assert len(text.splitlines()) >= 200
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["license"] == {"text": "Apache-2.0"}


def test_changelog_groups_the_history_by_capability():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert f"## {version}" in text
    groups = re.findall(r"^### (.+)$", text, re.M)
    assert len(groups) >= 6 and "Race tracks (`track_gen`)" in groups


def test_contributing_says_how_to_test_the_layers_and_the_commit_style():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    readme = (ROOT / "README.md").read_text()
    second = re.findall(r"^```bash\n(.*?)^```", readme, re.S | re.M)[0].splitlines()[1]
    assert second in text  # the test command is the README's, word for word
    assert "docs/architecture.md" in text
    assert "at most 72 characters" in text


def test_contributing_lists_the_layers_of_the_architecture_page_in_order():
    arch = (ROOT / "docs" / "architecture.md").read_text()
    table = arch[arch.index("## Layers") : arch.index("### Inside track_gen")]
    layers = re.findall(r"^\| ([a-z ]+) \| `", table, re.M)
    assert layers[:2] == ["base", "runtime"] and len(layers) == 7
    listed = re.findall(r"^\d\. \*\*([a-z ]+)\*\*", (ROOT / "CONTRIBUTING.md").read_text(), re.M)
    assert listed == layers
