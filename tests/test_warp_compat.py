"""Warp behind one adapter: only ``_warp_compat`` imports Warp's private modules, and a
Warp that lacks a private name costs a feature (one warning), not the import or a launch.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from procgen_nb import _warp_compat

PACKAGE = Path(__file__).resolve().parents[1] / "procgen_nb"
#: Warp's modules that are not its public API (before 1.10 they sat at the top level).
OLD_PRIVATE = {"context", "codegen", "build", "native", "builtins", "tape", "stubs"}


def _private(name: str) -> bool:
    parts = name.split(".")
    if parts[0] != "warp" or len(parts) == 1:
        return False
    if parts[-1].startswith("__"):
        return False  # wp.__file__, warp.__version__: not modules
    return any(p.startswith("_") for p in parts[1:]) or parts[1] in OLD_PRIVATE


def private_warp_uses(tree: ast.AST) -> list[str]:
    """Every import of a private Warp module in a module, in functions too.

    Counts ``import warp._src.x``, ``from warp._src import x``, ``from warp import _src``,
    ``importlib.import_module("warp._src...")`` and attribute reads ``wp._src``/``warp.context``.
    """
    found = []
    aliases = {"warp"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "warp":
                    aliases.add(a.asname or "warp")
                if _private(a.name):
                    found.append(a.name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if _private(node.module):
                found.append(node.module)
            elif node.module == "warp":
                found += [f"warp.{a.name}" for a in node.names if _private(f"warp.{a.name}")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _private(node.value) and " " not in node.value:
                found.append(node.value)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and _private(f"warp.{node.attr}")
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_the_scan_sees_every_form_of_a_private_import():
    src = textwrap.dedent(
        """
        import warp as wp
        import warp._src.types
        from warp._src import context
        from warp import _src
        from warp.context import runtime
        import importlib
        def f():
            from warp._src.context import Module
            importlib.import_module("warp._src.build")
            return wp._src, wp.context
        from warp import types, config
        import warp.types
        x = wp.types.vector, wp.config.version
        """
    )
    assert sorted(private_warp_uses(ast.parse(src))) == [
        "warp._src",
        "warp._src",
        "warp._src.build",
        "warp._src.context",
        "warp._src.types",
        "warp.context",
        "wp._src",
        "wp.context",
    ]


def test_only_the_adapter_reaches_warps_private_modules():
    users = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        uses = private_warp_uses(ast.parse(path.read_text(encoding="utf-8")))
        if uses:
            users[str(path.relative_to(PACKAGE.parent))] = uses
    assert list(users) == ["procgen_nb/_warp_compat.py"], users


def test_this_warp_is_in_the_tested_range_and_has_every_private_name():
    import warp as wp

    assert _warp_compat.version()[:3] == tuple(int(p) for p in wp.config.version.split(".")[:3])
    assert _warp_compat.tested()
    for feature in _warp_compat.FEATURES:
        assert _warp_compat.missing(feature) == [], feature


def test_the_range_is_the_one_pyproject_pins():
    text = (PACKAGE.parent / "pyproject.toml").read_text()
    lo, hi = (".".join(map(str, v)) for v in _warp_compat.TESTED)
    assert f'"warp-lang>={lo},<{hi}"' in text


class _Hide:
    """A stand-in for Warp's ``context`` without some names (``Module._compile``, ...)."""

    def __init__(self, real, hidden, prefix=""):
        self._real, self._hidden, self._prefix = real, hidden, prefix

    def __getattr__(self, name):
        path = self._prefix + name
        if path in self._hidden:
            raise AttributeError(path)
        value = getattr(self._real, name)
        if any(h.startswith(path + ".") for h in self._hidden):
            return _Hide(value, self._hidden, path + ".")
        return value


@pytest.fixture
def fresh_compat(monkeypatch):
    _warp_compat._reset()
    yield
    _warp_compat._reset()


def test_a_missing_name_warns_once_and_the_public_fallback_finds_the_same(
    monkeypatch, fresh_compat
):
    import warp as wp

    from procgen_nb import _progress, _warmup

    _warmup.track_modules()
    want = {
        n: m
        for n, m in _warp_compat.user_modules().items()
        if n.startswith("procgen_nb.") and _warp_compat.kernels(m)
    }
    dims = {n: _warp_compat.launch_block_dim(m, "cpu") for n, m in want.items()}
    real = _warp_compat.context()
    hidden = {"user_modules", "_resolve_launch_block_dim", "Module._get_meta_name"}
    monkeypatch.setattr(_warp_compat, "context", lambda: _Hide(real, hidden))
    _warp_compat._reset()  # (names are checked once per process)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        found = {
            n: m for n, m in _warp_compat.user_modules().items() if n.startswith("procgen_nb.")
        }
        assert {n: _warp_compat.launch_block_dim(m, "cpu") for n, m in found.items()} == dims
        assert not _progress.cached(next(iter(want.values())), "cpu")  # unknown layout
        names = [m.name for m in _progress.warp_modules("procgen_nb.track_gen")]
    assert found == want
    # (other modules may hold kernels too: a doctest's example kernel takes its module's name)
    assert names == sorted(n for n in want if n.startswith("procgen_nb.track_gen."))
    assert len(got) == 1 and got[0].category is _warp_compat.WarpCompatWarning
    msg = str(got[0].message)
    assert f"Warp {wp.config.version}: missing user_modules" in msg
    assert "warp-lang>=1.18,<1.20" in msg
    assert _warp_compat.missing("block_dim") == ["_resolve_launch_block_dim"]
    assert _warp_compat.missing("module_cache") == ["Module._get_meta_name"]


def test_an_untested_warp_warns_once_and_keeps_every_feature(monkeypatch, fresh_compat):
    monkeypatch.setattr(_warp_compat, "version", lambda: (1, 20, 0))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert all(_warp_compat.available(f) for f in _warp_compat.FEATURES)
    assert [str(w.message) for w in got] == [
        "procgen_nb: Warp 1.20.0: untested; procgen_nb is tested with warp-lang>=1.18,<1.20"
    ]


FALLBACK = textwrap.dedent(
    """
    import sys, warnings
    sys.path.insert(0, {here!r})
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as got:
        from procgen_nb import _warp_compat
        real = _warp_compat.context()
        sys.path.insert(0, {tests!r})
        from test_warp_compat import _Hide
        hidden = {{"Module._run_codegen", "runtime._get_or_create_pch_dir"}}
        _warp_compat.context = lambda: _Hide(real, hidden)
        import numpy as np, warp as wp
        from procgen_nb.device import _init_warp
        _init_warp()
        import tiny_fallback as mod
        a = wp.array(np.arange(5, dtype=np.float32))
        b = wp.zeros(5, dtype=float)
        wp.launch(mod.k, dim=5, inputs=[a, b])
        print(b.numpy().tolist())
        print(hasattr(real.Module._compile, "__wrapped__"), getattr(real.runtime, "_procgen_pch", False))
    print([(w.category.__name__, str(w.message)) for w in got])
    """
)


def test_without_the_hooks_warp_builds_and_launches_with_no_bar_and_one_warning(tmp_path):
    (tmp_path / "tiny_fallback.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\n"
        "def k(a: wp.array(dtype=float), b: wp.array(dtype=float)):\n"
        "    i = wp.tid()\n    b[i] = 3.0 * a[i] + 1.0\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env.update(WARP_CACHE_PATH=str(tmp_path / "cache"), PROCGEN_NB_PROGRESS="1")
    code = FALLBACK.format(here=str(tmp_path), tests=str(Path(__file__).parent))
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert res.returncode == 0, res.stderr
    out, hooks, warned = res.stdout.splitlines()[:3]
    assert out == str((3.0 * np.arange(5) + 1.0).tolist())
    assert hooks == "False False"  # neither hook went in
    assert "building Warp kernels" not in res.stderr  # a real compile, but no bar
    assert list((tmp_path / "cache").glob("*/wp_tiny_fallback_*/*.o"))  # it did compile
    warned = eval(warned)  # noqa: S307  (the child's own repr of a list of tuples)
    assert len(warned) == 1 and warned[0][0] == "WarpCompatWarning", warned
    assert "missing Module._run_codegen (build_hook falls back)" in warned[0][1]
