"""The docstring examples of the public functions run as written (doctest), and every
public function of ``ops``, ``track_gen.ops`` and ``mesh`` has one: in its docstring, or
for ``mesh`` (a module at its size limit) on the docs page ``docs/meshes.md``."""

from __future__ import annotations

import doctest
import inspect
import re
from pathlib import Path

import pytest

from procgen_nb import mesh
from procgen_nb import track_gen as _tg
from procgen_nb.ops import cpu, device, transfer

ROOT = Path(__file__).resolve().parents[1]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _public(module, names=None):
    names = names if names is not None else module.__all__
    return {f"{module.__name__}.{n}": getattr(module, n) for n in names}


#: every public function whose docstring carries its example
DOCUMENTED = {
    **_public(transfer, ["upload", "readback"]),
    **_public(device),
    **_public(cpu, ["call", "read"]),
    **{
        k: v
        for k, v in _public(_tg.ops).items()
        if inspect.isfunction(v)  # the scratch classes and the funcs module are not calls
    },
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_the_docstring_example_runs(name):
    obj = DOCUMENTED[name]
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, globs={})
    examples = [ex for t in tests for ex in t.examples]
    assert examples, f"{name} has no example in its docstring"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for t in tests:
        runner.run(t)
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) failed (see above)"


def test_a_wrong_expected_value_fails():
    """The runner compares outputs: a changed expectation is a failure (not skipped)."""
    doc = transfer.upload.__doc__.replace("('Vec2', 3)", "('Vec2', 4)")
    test = doctest.DocTestParser().get_doctest(doc, {}, "upload", None, 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=lambda s: None)
    assert runner.failures == 1


def test_the_mesh_page_runs_and_shows_every_public_function():
    page = (ROOT / "docs" / "meshes.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", page, re.S | re.M)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    parser = doctest.DocTestParser()
    for k, block in enumerate(blocks):
        runner.run(parser.get_doctest(block, {}, f"meshes.md[{k}]", "docs/meshes.md", 0))
    assert runner.tries >= 20 and runner.failures == 0
    shown = "\n".join(blocks)
    functions = [n for n in mesh.__all__ if inspect.isfunction(getattr(mesh, n))]
    for name in [*functions, "mesh_intersect"]:
        assert re.search(rf">>> .*\b{name}\(", shown), f"docs/meshes.md runs no {name}()"
