"""The docstring examples of the public functions run as written (doctest), and every
public function of ``ops``, ``track_gen.ops``, ``mesh`` and ``track_gen.export`` has one
that calls it (functions, ops and nodes; the examples of their public classes run too).

A module's public functions are its ``__all__``'s; where a module has no ``__all__``
(``ops.transfer``, ``ops.cpu``) they are the ops and functions it defines whose names do
not start with ``_``. The docs page ``docs/meshes.md`` runs as a doctest too.
"""

from __future__ import annotations

import doctest
import inspect
import re
from pathlib import Path

import pytest

from procgen_nb import mesh, ops
from procgen_nb import track_gen as _tg
from procgen_nb.nodes import Node
from procgen_nb.ops import cpu, device, transfer
from procgen_nb.ops._op import Op
from procgen_nb.track_gen import export

ROOT = Path(__file__).resolve().parents[1]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

#: the modules whose public functions each carry a runnable example
MODULES = [ops, device, transfer, cpu, _tg.ops, mesh, export]


def _callable(obj) -> bool:
    """A function, an op or a node (what a user calls), not a class, module or constant."""
    return inspect.isfunction(obj) or isinstance(obj, Op | Node)


def _names(module) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        n
        for n, v in vars(module).items()
        if not n.startswith("_")
        and (isinstance(v, Op) or (inspect.isfunction(v) and v.__module__ == module.__name__))
    ]


def public(kind) -> dict[str, object]:
    """``module.name`` -> object for each public name of MODULES that ``kind`` accepts."""
    out = {}
    for module in MODULES:
        for n in _names(module):
            obj = getattr(module, n)
            if kind(obj):
                out[f"{module.__name__}.{n}"] = obj
    return out


FUNCTIONS = public(_callable)
CLASSES = public(
    lambda o: inspect.isclass(o) and not issubclass(o, BaseException) and o.__doc__ is not None
)


def _run(tests) -> doctest.DocTestRunner:
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for t in tests:
        runner.run(t)
    return runner


def test_the_public_functions_are_found():
    """The discovery finds what each module offers (a broken finder would pass vacuously)."""
    short = {k.rpartition(".")[2] for k in FUNCTIONS}
    for name in ["upload", "readback", "call", "read", "kernel", "current_cook"]:
        assert name in short
    for name in ["arc_resample", "check_tracks", "box_mesh", "mesh_intersect", "road_overlap"]:
        assert name in short
    for name in ["export", "tracks", "tumftm", "tumftm_csv", "ros_map", "ros_map_files"]:
        assert name in short
    assert "procgen_nb.track_gen.export.FORMATS" not in FUNCTIONS  # a constant
    assert "procgen_nb.ops.device" not in FUNCTIONS  # a module
    assert {"procgen_nb.mesh.Mesh", "procgen_nb.track_gen.export.Track"} <= set(CLASSES)
    assert len(FUNCTIONS) >= 50


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_the_docstring_example_runs(name):
    obj = FUNCTIONS[name]
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, globs={})
    examples = [ex for t in tests for ex in t.examples]
    assert examples, f"{name} has no >>> example in its docstring"
    short = name.rpartition(".")[2]
    calls = "\n".join(ex.source for ex in examples)
    assert re.search(rf"\b{short}\(", calls), f"{name}'s example never calls {short}()"
    runner = _run(tests)
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) failed (see above)"


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_the_examples_of_a_public_class_run(name):
    tests = doctest.DocTestFinder().find(CLASSES[name], name, globs={})
    runner = _run(tests)
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) failed (see above)"


def test_a_wrong_expected_value_fails():
    """The runner compares outputs: a changed expectation is a failure (not skipped)."""
    doc = transfer.upload.__doc__.replace("('Vec2', 3)", "('Vec2', 4)")
    test = doctest.DocTestParser().get_doctest(doc, {}, "upload", None, 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=lambda s: None)
    assert runner.failures == 1


def test_a_function_without_an_example_is_found():
    """The check that an example exists sees a docstring with none (a module's own)."""

    def undocumented():
        """Says what it does, and shows nothing."""

    tests = doctest.DocTestFinder(recurse=False).find(undocumented, "undocumented", globs={})
    assert [ex for t in tests for ex in t.examples] == []
    assert _callable(undocumented) and not _callable(export.Track) and not _callable(device)


def test_the_mesh_page_runs_and_shows_every_public_function():
    page = (ROOT / "docs" / "meshes.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", page, re.S | re.M)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    parser = doctest.DocTestParser()
    for k, block in enumerate(blocks):
        runner.run(parser.get_doctest(block, {}, f"meshes.md[{k}]", "docs/meshes.md", 0))
    assert runner.tries >= 20 and runner.failures == 0
    shown = "\n".join(blocks)
    for name in [n for n in mesh.__all__ if _callable(getattr(mesh, n))]:
        assert re.search(rf">>> .*\b{name}\(", shown), f"docs/meshes.md runs no {name}()"
