"""The registry does not import the packages that import it, and still has every built-in.

``plugin.py`` must not import ``gates`` or ``generators`` (both import ``plugin``); the
built-ins reach the registry through ``track_gen._builtins``. The names listed here are
the built-ins the library documents, written out by hand.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import procgen_nb.track_gen.plugin as plugin_module

GENERATORS = ["bezier", "checkpoint", "hull", "polar", "repulsive", "voronoi"]
GATE_GENERATORS = ["arc_length", "curvature", "free"]
STAGES = ["z_profile"]


def _imported_modules(path: Path) -> list[str]:
    """Every module an import statement of ``path`` names, nested ones included, as written
    (``.gates``, ``..errors``, ``procgen_nb.track_gen.gates.builtins``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            found.append(base)
            found += [f"{base}.{alias.name}".replace("..", ".") for alias in node.names]
    return found


def test_plugin_py_imports_neither_gates_nor_generators():
    names = _imported_modules(Path(plugin_module.__file__))
    assert names, "expected plugin.py to import something"
    bad = [
        n
        for n in names
        if any(part in ("gates", "generators", "_builtins") for part in n.split("."))
    ]
    assert bad == []


def test_the_ast_check_sees_a_nested_import(tmp_path):
    # the check above must catch the form the import circle used to take
    src = tmp_path / "m.py"
    src.write_text(
        "class R:\n    def f(self):\n        from .gates import register_builtins as g\n"
    )
    assert ".gates" in _imported_modules(src)


_PROBE = """
import json, sys
from procgen_nb.track_gen.plugin import Registry, registry
fresh = Registry()
out = {
    "before": sorted(n for n in fresh._specs["generator"]),
    "generator": registry.available("generator"),
    "gate_generator": registry.available("gate_generator"),
    "stage": registry.available("stage"),
    "fresh": fresh.available("generator"),
    "fresh_gates": fresh.available("gate_generator"),
}
print(json.dumps(out))
"""


def test_a_fresh_process_lists_every_builtin_on_first_use():
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["before"] == []  # nothing registered before the first lookup
    for key, want in (
        ("generator", GENERATORS),
        ("fresh", GENERATORS),
        ("gate_generator", GATE_GENERATORS),
        ("fresh_gates", GATE_GENERATORS),
        ("stage", STAGES),
    ):
        assert set(want) <= set(got[key]), key


def test_a_loader_added_late_still_runs_on_the_next_lookup():
    reg = plugin_module.Registry()
    reg.available("generator")
    calls = []

    def loader(r):
        calls.append(r)

    plugin_module._add_builtin_loader(loader)
    try:
        reg.available("stage")
        reg.available("stage")
        assert calls == [reg]
    finally:
        plugin_module._builtin_loaders.remove(loader)


def test_a_loader_that_looks_up_does_not_mark_the_registry_loaded_early():
    reg = plugin_module.Registry()
    seen = []

    def loader(r):
        r.available("stage")  # a lookup from inside a loader: skips it, no recursion
        seen.append(r._loaded_count == len(plugin_module._builtin_loaders))

    plugin_module._add_builtin_loader(loader)
    try:
        reg.available("generator")
        assert seen == [False]  # still loading while inside the loader
        assert reg._loaded_count == len(plugin_module._builtin_loaders)
        assert set(GENERATORS) <= set(reg.available("generator"))
    finally:
        plugin_module._builtin_loaders.remove(loader)


# names other modules, the tests and the legacy shims import from the two split modules
PIPELINE_NAMES = [
    "REASONS",
    "TrackGenerator",
    "TrackResult",
    "_SpecStage",
    "_check_legacy_stream",
    "_legacy_lock",
    "as_stage",
    "resolve_params",
]
KERNEL_NAMES = [
    "CLEARANCE",
    "NOT_CLOSED",
    "RADIUS",
    "REJECTED",
    "SELF_INTERSECTING",
    "TURNING",
    "_all_active_k",
    "_angle_sort_k",
    "_arc_resample_k",
    "_attr_resample_k",
    "_constant_spacing_k",
    "_count_k",
    "_grid_cells_k",
    "_masked_copy_f_k",
    "_masked_copy_k",
    "_sample_counts_k",
    "_sample_grid_points_k",
    "_seeds_k",
    "_select_k",
    "_self_intersections_k",
    "_turning_number_k",
    "_validity_k",
]


def test_the_split_modules_still_export_their_old_names():
    import warp as wp

    from procgen_nb.track_gen import _spec_stage, pipeline
    from procgen_nb.track_gen.ops import _kernels

    for name in PIPELINE_NAMES:
        assert hasattr(pipeline, name), name
    assert pipeline._legacy_lock is _spec_stage._legacy_lock  # one lock, not two
    for name in KERNEL_NAMES:
        obj = getattr(_kernels, name)
        assert isinstance(obj, wp.Kernel) or name.isupper(), name


def test_track_gen_modules_stay_under_600_lines():
    root = Path(plugin_module.__file__).parent
    sizes = {str(p.relative_to(root)): len(p.read_text().splitlines()) for p in root.rglob("*.py")}
    assert {k: v for k, v in sizes.items() if v >= 600} == {}
