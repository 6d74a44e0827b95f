"""The code matches docs/architecture.md: no import circle, imports only go down the layers,
every module is in a layer and stays under 600 lines.

Every module of procgen_nb is parsed with ``ast``; every import counts (module level,
inside functions, under ``if TYPE_CHECKING:``). The layer tables are read from
docs/architecture.md itself, so the page and the code cannot drift apart.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

import pytest

import procgen_nb

PKG = Path(procgen_nb.__file__).parent
DOC = PKG.parent / "docs" / "architecture.md"
MAX_LINES = 600


def module_name(path: Path, root: Path) -> str:
    """``procgen_nb.track_gen.pipeline`` for ``root/procgen_nb/track_gen/pipeline.py``
    (a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(pkg: Path) -> dict[str, set[str]]:
    """Each module of the package ``pkg`` and the package's modules it imports.

    ``from P import n`` imports the module ``P.n`` when there is one, else ``P``;
    ``import a.b`` imports ``a.b`` (or its nearest module above). Imports of modules
    outside the package are left out.
    """
    root = pkg.parent
    files = {module_name(p, root): p for p in pkg.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - node.level + 1]
                    src = ".".join(base + ([node.module] if node.module else []))
                else:
                    src = node.module or ""
                subs = [f"{src}.{a.name}" for a in node.names if f"{src}.{a.name}" in files]
                targets = subs if len(subs) == len(node.names) else [*subs, src]
            else:
                continue
            for t in targets:
                while t and t not in files:
                    t = t.rpartition(".")[0]
                if t and t != name:
                    found.add(t)
        graph[name] = found
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def layer_table(heading: str) -> list[list[str]]:
    """The module patterns of each row of the table under ``heading`` in the doc, in order
    (the lowest layer first)."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(heading)
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("#"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[1].startswith("`"):
            rows.append(re.findall(r"`([^`]+)`", cells[1]))
    assert rows, f"no layer table under {heading!r} in {DOC}"
    return rows


def layer_of(rel: str, table: list[list[str]]) -> list[int]:
    """The rows of ``table`` whose patterns name the module ``rel`` (relative to the
    package; ``__init__`` for the package itself): the rows naming it exactly, else those
    whose patterns (``x.*``) match it."""
    exact = [i for i, pats in enumerate(table) if rel in pats]
    return exact or [
        i for i, pats in enumerate(table) if any(fnmatch.fnmatchcase(rel, p) for p in pats)
    ]


def _rel(name: str) -> str:
    return name.partition(".")[2] or "__init__"


GRAPH = import_graph(PKG)
TOP = layer_table("## Layers")
TRACK = layer_table("### Inside track_gen")


def test_no_import_circle():
    found = circles(GRAPH)
    assert found == [], "import circles (docs/architecture.md, rule 1):\n" + "\n".join(
        f"  {c}: " + "; ".join(f"{a} -> {sorted(GRAPH[a] & set(c))}" for a in c) for c in found
    )


def test_every_module_is_in_one_layer():
    bad = {}
    for name in GRAPH:
        rel = _rel(name)
        rows = layer_of(rel, TOP)
        if len(rows) != 1:
            bad[rel] = f"{len(rows)} layers"
        elif rel.startswith("track_gen") and len(layer_of(rel, TRACK)) != 1:
            bad[rel] = f"{len(layer_of(rel, TRACK))} track_gen layers"
    assert bad == {}, f"add each module to one row of docs/architecture.md: {bad}"


def upward(graph: dict[str, set[str]], top: list[list[str]], track: list[list[str]]) -> list[str]:
    """Every import of ``graph`` from a layer of ``top`` to a higher one, and inside
    track_gen from a layer of ``track`` to a higher one, as ``"a -> b"``."""
    up = []
    for name, targets in sorted(graph.items()):
        a = _rel(name)
        (la,) = layer_of(a, top)
        for t in sorted(targets):
            b = _rel(t)
            (lb,) = layer_of(b, top)
            if lb > la:
                up.append(f"{a} -> {b}")
            elif la == lb and a.startswith("track_gen") and b.startswith("track_gen"):
                if layer_of(b, track)[0] > layer_of(a, track)[0]:
                    up.append(f"{a} -> {b} (inside track_gen)")
    return up


def test_imports_only_go_down_the_layers():
    up = upward(GRAPH, TOP, TRACK)
    assert up == [], "imports upwards (docs/architecture.md, rule 2):\n  " + "\n  ".join(up)


def test_every_module_is_under_600_lines():
    long = {
        str(p.relative_to(PKG)): n
        for p in PKG.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) >= MAX_LINES
    }
    assert long == {}, f"modules of {MAX_LINES} lines or more (rule 3): {long}"


# -- the checker itself, on hand-written packages --
def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    pkg = tmp_path / "pkg"
    for rel, src in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(src)
    return pkg


def test_the_checker_counts_nested_type_checking_and_relative_imports(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "from .a import x\n",
            "a.py": "x = 1\ndef f():\n    from .sub import b\n",
            "sub/__init__.py": "",
            "sub/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import x\n",
            "c.py": "import pkg.sub.b\nfrom . import a, sub\nfrom .sub.b import nothing_there\n",
            "d.py": "import os\nfrom .missing import y\n",
        },
    )
    g = import_graph(pkg)
    assert g["pkg"] == {"pkg.a"}
    assert g["pkg.a"] == {"pkg.sub.b"}  # inside a function
    assert g["pkg.sub.b"] == {"pkg.a"}  # under TYPE_CHECKING, two levels up
    assert g["pkg.c"] == {"pkg.sub.b", "pkg.a", "pkg.sub"}
    assert g["pkg.d"] == {"pkg"}  # a missing module: the package above it
    assert circles(g) == [["pkg.a", "pkg.sub.b"]]


def test_the_checker_finds_a_three_module_circle_and_no_false_one(tmp_path):
    pkg = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from . import b\n",
            "b.py": "def f():\n    from .c import z\n",
            "c.py": "import pkg.a\n",
            "d.py": "from . import a, b, c\n",
        },
    )
    assert circles(import_graph(pkg)) == [["pkg.a", "pkg.b", "pkg.c"]]


@pytest.mark.parametrize(
    ("rel", "rows"),
    [("ops.device", [2]), ("ops._op", [1]), ("__init__", [6]), ("track_gen.gates.course", [3])],
)
def test_the_layer_table_is_read_from_the_doc(rel, rows):
    assert layer_of(rel, TOP) == rows


def test_the_checker_flags_an_upward_import_only():
    top = [["errors"], ["device", "columns"], ["track_gen", "track_gen.*"]]
    track = [["track_gen.config"], ["track_gen.pipeline", "track_gen"]]
    graph = {
        "procgen_nb.errors": set(),
        "procgen_nb.device": {"procgen_nb.errors", "procgen_nb.columns"},  # down, and across
        "procgen_nb.columns": {"procgen_nb.track_gen.config"},  # up a layer
        "procgen_nb.track_gen": {"procgen_nb.track_gen.pipeline"},  # same track_gen layer
        "procgen_nb.track_gen.pipeline": {"procgen_nb.track_gen.config"},
        "procgen_nb.track_gen.config": {"procgen_nb.track_gen.pipeline", "procgen_nb.device"},
    }
    assert upward(graph, top, track) == [
        "columns -> track_gen.config",
        "track_gen.config -> track_gen.pipeline (inside track_gen)",
    ]
