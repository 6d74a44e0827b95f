"""Sphinx configuration of the procgen_nb docs site.

Built from the Markdown pages here (MyST), the tutorial notebooks with their stored
outputs (myst-nb, nothing re-executed) and the package's docstrings (autodoc, Google
style through napoleon). ``tests/test_docs_site.py`` builds it with warnings as errors:

    sphinx-build -W -b html docs docs/_build/html
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the procgen_nb of this checkout
os.environ.setdefault("PROCGEN_NB_PROGRESS", "0")
os.environ.setdefault("PROCGEN_DEVICE", "cpu")

project = "procgen_nb"
author = "the procgen_nb authors"
copyright = "the procgen_nb authors, Apache License 2.0"  # noqa: A001 - Sphinx's name

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]

exclude_patterns = ["_build", "notebooks/sanitize.cfg", "**/.ipynb_checkpoints"]
# the notebooks keep their outputs: the test command runs them under nbval already
nb_execution_mode = "off"
# a widget's view needs its live kernel: a saved page shows the PNG each view carries
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
myst_enable_extensions = ["colon_fence", "deflist", "substitution"]

#: the repository's address, from its one place: pyproject.toml's [project.urls]
REPOSITORY = tomllib.loads((HERE.parent / "pyproject.toml").read_text())["project"]["urls"][
    "Repository"
]
_OWNER_REPO = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)", REPOSITORY).group(1)
#: Binder's launch of the notebooks in JupyterLab, built from the repository's address
BINDER = f"https://mybinder.org/v2/gh/{_OWNER_REPO}/main?urlpath=lab/tree/notebooks"
myst_substitutions = {
    "binder_badge": f"[![Binder](https://mybinder.org/badge_logo.svg)]({BINDER})",
    "repository": f"[the repository]({REPOSITORY})",
}
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "undoc-members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "alabaster"
html_static_path: list[str] = []
html_title = "procgen_nb"

napoleon_use_ivar = True  # "Attributes:" as fields of the class, not a second entry


def _drop_missing_pages(app, docname, source):
    """The index's toctree names docs/architecture.md (the layers and their import
    rules, written beside this site); until that page exists the entry is left out."""
    if docname == "index" and not (HERE / "architecture.md").exists():
        source[0] = source[0].replace("\narchitecture\n", "\n")


def setup(app):
    app.connect("source-read", _drop_missing_pages)
