"""Ahead-of-time CUDA compile without a GPU: ``procgen-nb warmup --cuda-arch sm_80,sm_90``.

Every built-in Warp module, every kernel-asset variant and fieldc's kernel for each of the
notebooks' Fields compiles to PTX for sm_80 and sm_90 on this CPU-only machine, into Warp's
kernel cache (the first run on a machine takes minutes; later runs find the PTX there). The
references are independent of the warmup code: the modules with kernels found by a scan of
the package's syntax trees, the variant count from the bindings.yaml files, and in each
PTX file its ``.target`` line and one ``.entry`` per kernel.
"""

from __future__ import annotations

import ast
import itertools
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from procgen_nb import _warmup
from procgen_nb.errors import ParamsError

ROOT = Path(__file__).resolve().parents[1]
ARCHS = [80, 90]
#: The notebooks' Fields have four shapes (04's two ``Int column < constant`` Fields share one).
NOTEBOOK_FIELD_SHAPES = 4


def kernel_modules() -> set[str]:
    """Python modules of the package that define a ``@wp.kernel`` (by their syntax tree)."""
    out = set()
    for path in (ROOT / "procgen_nb").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(
                ast.unparse(d).startswith("wp.kernel") for d in node.decorator_list
            ):
                rel = path.relative_to(ROOT).with_suffix("")
                out.add(".".join(rel.parts))
                break
    return out


def variant_count() -> int:
    """Variants of every built-in kernel asset: the product of its options' counts."""
    n = 0
    for spec_file in sorted((ROOT / "kernels").glob("*/bindings.yaml")):
        spec = yaml.safe_load(spec_file.read_text()) or {}
        n += math.prod(len(s["options"]) for s in spec.get("specialize") or [])
    return n


@pytest.mark.parametrize(
    ("text", "want"),
    [("sm_90", [90]), ("sm_90,sm_80", [80, 90]), (" sm_86 , sm_86,sm_120", [86, 120])],
)
def test_architectures_parse_sorted_without_repeats(text, want):
    assert _warmup.parse_archs(text) == want


@pytest.mark.parametrize("text", ["", "sm_9", "sm_90,", "90", "sm_49", "sm_130", "compute_90"])
def test_a_bad_architecture_is_refused_naming_it(text):
    with pytest.raises(ParamsError, match=r"--cuda-arch: expected a comma list of sm_<NN>"):
        _warmup.parse_archs(text)


def test_the_command_line_refuses_a_bad_architecture_in_one_line():
    res = subprocess.run(
        [sys.executable, "-m", "procgen_nb.cli", "warmup", "--cuda-arch", "sm_80,sm90"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert res.returncode == 2
    assert "argument --cuda-arch: expected a comma list of sm_<NN>" in res.stderr
    assert "got 'sm90' in 'sm_80,sm90'" in res.stderr


BROKEN = textwrap.dedent(
    """
    import warp as wp

    @wp.func_native("return x +;")
    def broken_native(x: float) -> float: ...

    @wp.kernel
    def uses_broken(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = broken_native(a[i])
    """
)


def test_a_cuda_compile_error_names_the_module_and_the_kernel(tmp_path, monkeypatch):
    import importlib

    from procgen_nb import _warp_compat

    (tmp_path / "aot_broken_mod.py").write_text(BROKEN)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("aot_broken_mod")
    ptx, failed, _ = _warmup.compile_ptx([_warp_compat.module_of(mod)], [80])
    assert ptx == {}
    ((arch, name, kernels, err),) = failed
    assert (arch, name, kernels) == ("sm_80", "aot_broken_mod", ["uses_broken"])
    assert "error" in err.lower()


@pytest.mark.slow
def test_warmup_compiles_every_module_and_variant_for_sm80_and_sm90():
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env["PROCGEN_NB_PROGRESS"] = "0"
    res = subprocess.run(
        [sys.executable, "-m", "procgen_nb.cli", "warmup", "--cuda-arch", "sm_80,sm_90"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=3600,  # cold on a shared 2-core box: 377 s; warm: 6.5 s
    )
    lines = res.stdout.strip().splitlines()
    failures = [ln for ln in lines if "failed to compile" in ln]
    assert res.returncode == 0 and not failures, "\n".join(failures) or res.stderr[-3000:]
    own = kernel_modules() - {"procgen_nb.asset._variants", "procgen_nb.fieldc._codegen"}
    want = variant_count() + NOTEBOOK_FIELD_SHAPES
    assert lines[-1] == f"{len(own)} modules, {want} variants, 0 failed"

    # in process, warm: every module's PTX is there, for each arch, one entry per kernel
    got = _warmup.cuda_warmup(ARCHS)
    assert got["compiled"] == 0 and got["failed"] == []
    assert {name for name, _ in got["ptx"]} >= own
    from procgen_nb import _warp_compat

    modules = {m.name: m for m in _warmup.builtin_modules() + _warmup.legacy_modules()}
    modules |= {m.name: m for m in _warmup.variant_modules()[0] + _warmup.field_modules()}
    assert len(got["ptx"]) == len(modules) * len(ARCHS)
    for (name, arch), paths in got["ptx"].items():
        (path,) = paths
        text = Path(path).read_bytes().decode("utf-8", "replace")
        assert re.search(rf"^\.target sm_{arch}\b", text, re.M), (name, arch)
        entries = set(re.findall(r"\.entry (\w+)_cuda_kernel_forward", text))
        keys = sorted(_warp_compat.kernels(modules[name]))
        for key in keys:
            assert any(e.startswith(f"{key}_") for e in entries), (name, arch, key)
    assert list(itertools.islice(got["ptx"], 1))  # (not empty)
