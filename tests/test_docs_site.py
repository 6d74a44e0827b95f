"""The docs site builds with no warning (warnings are errors), from the pages, the
notebooks' stored outputs and the docstrings, and says what a newcomer looks for."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: every term the glossary defines (a newcomer meets each in the first hour)
TERMS = [
    "cook",
    "cook report",
    "live count",
    "domain",
    "readback",
    "replay",
    "recording",
    "dynamic field",
    "Stage",
    "GeneratorSpec",
    "epoch",
    "salt",
    "seed",
    "env",
    "computeShader",
    "Column",
    "node",
    "op",
    "kernel asset",
    "launch context",
    "digest",
    "validity",
    "inert value",
]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, PROCGEN_NB_PROGRESS="0", PROCGEN_DEVICE="cpu")
    res = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
        + ["-d", str(out / ".doctrees"), str(DOCS), str(out / "html")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    assert res.stderr.strip() == "", res.stderr[-4000:]  # not one warning
    return out / "html"


def test_the_glossary_defines_every_term(site):
    html = (site / "glossary.html").read_text()
    defined = set(re.findall(r'<dt id="term-([^"]+)"', html))
    want = {t.replace(" ", "-") for t in TERMS}
    assert want <= defined, sorted(want - defined)


def test_every_notebook_is_a_page_with_its_stored_pictures(site):
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert len(notebooks) >= 9
    for name in notebooks:
        page = site / "notebooks" / f"{name}.html"
        assert page.is_file(), name
    # the tracks notebook keeps its figures: they come from the stored outputs
    assert (site / "notebooks" / "02_tracks.html").read_text().count("<img") >= 2


def test_the_contract_numbers_its_hard_rules_and_names_the_kit_checks(site):
    text = (DOCS / "generator-contract.md").read_text()
    rows = re.findall(r"^\| (\d) \| \*\*", text, re.M)
    assert rows == ["1", "2", "3", "4", "5"]
    from procgen_nb.track_gen import testing

    kit = testing.__doc__
    for check in (
        "no allocation or readback",
        "determinism",
        "batch independence",
        "closed loop",
        "stream discipline",
    ):
        assert f"``{check}``" in kit and f"`{check}`" in text
    assert "rules 2 and 3" in text  # the opt-out the code cites by number


def test_the_api_reference_documents_the_entry_points(site):
    html = (site / "api.html").read_text()
    for target in (
        "track_gen.pipeline.TrackGenerator",
        "track_gen.plugin.GeneratorSpec",
        "track_gen.plugin.Stage",
        "ops.transfer.readback",
        "track_gen.testing.check_generator",
        "graph.Graph",
        "columns.Column",
    ):
        assert f'id="procgen_nb.{target}"' in html, target
    # the docstrings speak of the interfaces by name, never of "the seed" as a document
    text = re.sub(r"<[^>]+>", "", html)
    assert not re.search(r"the seed(’|')s|the seed says|the seed writes", text)


def test_no_page_points_to_documents_a_clone_does_not_have():
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *DOCS.glob("*.md")]
    for page in pages:
        text = page.read_text()
        for gone in ("../shared", "seeds/0", "seed 004", "DESIGN.md", "notes on the seed"):
            assert gone not in text, f"{page.name} names {gone!r}"
        # "the seed" is a random seed here, never a design document
        assert not re.search(r"the seed (says|describes|asks|lets|defines)", text), page.name
        assert "the seed's" not in text, page.name


#: a design document a clone does not have, named as "the seed" or by its path
DESIGN_DOC = re.compile(
    r"the seed's|abi seed|seeds?/0|seed 0\d\d|\.\./shared|DESIGN\.md"
    r"|the seed (says|describes|asks|lets|defines|charges|names)",
    re.IGNORECASE,
)


def test_no_docstring_notebook_or_page_speaks_of_a_design_document():
    """The package's docstrings and comments, the notebooks' cells and the pages speak of
    the project alone: "the seed" is a random seed, a rule of the 0.1 interface says so."""
    sources = [*(ROOT / "procgen_nb").rglob("*.py"), *(ROOT / "kernels").rglob("*.py")]
    texts = {str(p.relative_to(ROOT)): p.read_text() for p in sources}
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        cells = json.loads(nb.read_text())["cells"]
        texts[nb.name] = "\n".join("".join(c["source"]) for c in cells)
    for page in [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "benchmarks" / "README.md"]:
        texts[page.name] = page.read_text()
    found = {k: m.group(0) for k, t in texts.items() if (m := DESIGN_DOC.search(t))}
    assert found == {}, f"names a design document a reader does not have: {found}"
    assert len(texts) > 100  # the package was read
    assert DESIGN_DOC.search("as the seed says") and not DESIGN_DOC.search(
        "seed=3, the seed of env 0"
    )


def test_the_writing_a_generator_page_runs_and_both_forms_agree(tmp_path):
    from test_readme import _run_page

    res = _run_page(DOCS / "writing-a-generator.md", tmp_path)
    assert res.stdout.strip().endswith("of 8 valid")


def test_the_getting_started_page_links_binder_at_the_repository_of_pyproject(site):
    import tomllib

    url = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    repo = url.removeprefix("https://github.com/")
    html = (site / "getting-started.html").read_text()
    assert f'href="https://mybinder.org/v2/gh/{repo}/main?urlpath=lab/tree/notebooks"' in html
    assert f'href="{url}"' in html and "{{" not in html
