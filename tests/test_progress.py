"""Build progress: a bar naming each Warp module that compiles, nothing when all is cached.

Each case runs in a fresh interpreter with its own empty Warp kernel cache, so a build
really happens; the reference for "built" is the cache folder on disk.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml

KERNELS = {
    "tiny_twice": "b[i] = 2.0 * a[i]",
    "tiny_square": "b[i] = a[i] * a[i]",
}

LAUNCH = textwrap.dedent(
    """
    import sys, importlib
    sys.path.insert(0, {here!r})
    import warp as wp
    from procgen_nb.device import _init_warp
    _init_warp()
    out = []
    for name in {names!r}:
        mod = importlib.import_module(name)
        a = wp.array([1.0, 2.0, 3.0], dtype=float, device="cpu")
        b = wp.zeros(3, dtype=float, device="cpu")
        wp.launch(mod.k, dim=3, inputs=[a, b], device="cpu")
        out.append(b.numpy().tolist())
    print(out)
    """
)

BUILD = textwrap.dedent(
    """
    import sys, importlib
    sys.path.insert(0, {here!r})
    from procgen_nb import _progress
    from procgen_nb.device import _init_warp
    _init_warp()
    from procgen_nb import _warp_compat
    mods = [_warp_compat.module_of(importlib.import_module(n)) for n in {names!r}]
    with _progress.session(total=len(mods)) as st:
        failed = _progress.build(mods, "cpu", workers=2)
    print(st.compiled, st.cached, failed)
    """
)


def write_kernels(folder: Path) -> None:
    for name, body in KERNELS.items():
        (folder / f"{name}.py").write_text(
            "import warp as wp\n\n\n@wp.kernel\n"
            "def k(a: wp.array(dtype=float), b: wp.array(dtype=float)):\n"
            f"    i = wp.tid()\n    {body}\n"
        )


def run(code: str, cache: Path, progress: str | None, pytest_var: bool = False):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_CURRENT_TEST",)}
    env.pop("PROCGEN_NB_PROGRESS", None)
    if progress is not None:
        env["PROCGEN_NB_PROGRESS"] = progress
    if pytest_var:
        env["PYTEST_CURRENT_TEST"] = "tests/x.py::y (call)"
    env["WARP_CACHE_PATH"] = str(cache)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )


def built_modules(cache: Path) -> set[str]:
    """The tiny modules Warp's cache holds a CPU binary for (folders wp_<module>_<hash>)."""
    out = set()
    for d in cache.glob("*/wp_tiny_*"):
        if any(f.suffix == ".o" for f in d.iterdir()):
            out.add(next(n for n in KERNELS if d.name.startswith(f"wp_{n}_")))
    return out


@pytest.fixture
def folder(tmp_path):
    write_kernels(tmp_path)
    return tmp_path


def test_a_cold_build_shows_a_bar_naming_the_module_and_a_warm_run_prints_nothing(folder):
    cache = folder / "cache"
    code = LAUNCH.format(here=str(folder), names=["tiny_twice"])
    cold = run(code, cache, progress=None)
    assert cold.returncode == 0, cold.stderr
    assert cold.stdout.strip() == str([[2.0, 4.0, 6.0]])
    assert built_modules(cache) == {"tiny_twice"}
    lines = cold.stderr.replace("\r", "\n").splitlines()
    assert any(
        "procgen_nb: building Warp kernels" in ln and "now: tiny_twice" in ln for ln in lines
    )
    assert lines[-1].startswith("procgen_nb: built Warp kernels: 1 built")
    assert f"cache {cache}" in lines[-1]
    warm = run(code, cache, progress=None)
    assert warm.returncode == 0 and warm.stdout == cold.stdout
    assert warm.stderr == ""


@pytest.mark.parametrize("progress, pytest_var", [("0", False), (None, True)])
def test_the_bar_is_off_when_asked_and_under_pytest(folder, progress, pytest_var):
    cache = folder / "cache"
    res = run(LAUNCH.format(here=str(folder), names=["tiny_square"]), cache, progress, pytest_var)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == str([[1.0, 4.0, 9.0]])
    assert built_modules(cache) == {"tiny_square"}  # it did build, silently
    assert res.stderr == ""


def test_build_shares_modules_between_processes_and_counts_each_once(folder):
    cache = folder / "cache"
    names = sorted(KERNELS)
    res = run(BUILD.format(here=str(folder), names=names), cache, progress="1")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["2", "0", "[]"]
    assert built_modules(cache) == set(KERNELS)
    assert "procgen_nb: built Warp kernels: 2/2" in res.stderr.replace("\r", "\n")
    again = run(BUILD.format(here=str(folder), names=names), cache, progress="1")
    assert again.stdout.split() == ["0", "2", "[]"] and again.stderr == ""
    # the modules built by the other process give the same results as NumPy
    launched = run(LAUNCH.format(here=str(folder), names=names), cache, progress="1")
    a = np.array([1.0, 2.0, 3.0])
    assert launched.stdout.strip() == str([(a * a).tolist(), (2 * a).tolist()])
    assert launched.stderr == ""


def test_a_variant_is_named_by_its_identity_and_options():
    from procgen_nb import _progress, asset

    v = asset.resolve("procgen/inside").variant({"SHAPE": "ring", "COUNT": "device"})
    assert _progress.display_name(v.module.__name__) == "procgen/inside [COUNT=device,SHAPE=ring]"
    assert _progress.display_name("procgen_nb.track_gen.ops._seed_kernels") == (
        "track_gen.ops._seed_kernels"
    )


def test_warmup_lists_every_combination_of_every_builtin_kernels_options():
    from procgen_nb import _warmup, asset

    root = asset.builtin_folder()
    for folder in sorted(p for p in root.iterdir() if (p / "bindings.yaml").is_file()):
        spec = yaml.safe_load((folder / "bindings.yaml").read_text())
        expected = 1
        for s in spec.get("specialize") or []:
            expected *= len(s["options"])
        combos = _warmup.variant_options(f"procgen/{folder.name}")
        assert len(combos) == expected, folder.name
        assert len({tuple(sorted(c.items())) for c in combos}) == expected


def test_warmup_command_builds_then_finds_everything_cached(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env.update(WARP_CACHE_PATH=str(tmp_path / "cache"), PROCGEN_NB_PROGRESS="1")
    cmd = [
        sys.executable,
        "-m",
        "procgen_nb.cli",
        "warmup",
        "--kernels",
        "procgen/compact",
        "--no-generators",
    ]
    first = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    # compact's one specialize key has two options: two variants (bindings.yaml)
    spec = yaml.safe_load(
        (Path(__file__).resolve().parents[1] / "kernels/compact/bindings.yaml").read_text()
    )
    n = len(spec["specialize"][0]["options"])
    assert first.stdout.startswith(f"warmup: {n} kernel modules on cpu: {n} built, 0 already")
    assert f"Warp's kernel cache: {tmp_path / 'cache'}" in first.stdout
    assert "procgen/compact [COUNT=" in first.stderr
    second = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert second.stdout.startswith(f"warmup: {n} kernel modules on cpu: 0 built, {n} already")
    assert second.stderr == ""


def test_in_a_notebook_kernel_the_bar_is_a_widget(folder):
    """tqdm.auto: inside a Jupyter kernel the bar is an ipywidgets display, not stderr text."""
    from jupyter_client.manager import start_new_kernel

    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env.update(WARP_CACHE_PATH=str(folder / "cache"), PROCGEN_NB_PROGRESS="1")
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(folder))
    try:
        code = LAUNCH.format(here=str(folder), names=["tiny_twice"])
        code += "\nfrom procgen_nb import _progress\n_progress._bar.close()\n"
        msg_id = kc.execute(code)
        widgets, streams, status = [], [], None
        while True:
            msg = kc.get_iopub_msg(timeout=240)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "display_data":
                widgets.append(content["data"])
            elif kind == "stream":
                streams.append((content["name"], content["text"]))
            elif kind == "error":
                status = content["ename"] + ": " + content["evalue"]
            elif kind == "status" and content["execution_state"] == "idle":
                break
        assert status is None, status
        assert any("application/vnd.jupyter.widget-view+json" in d for d in widgets), widgets
        assert not [t for name, t in streams if name == "stderr"]
        assert ("stdout", "[[2.0, 4.0, 6.0]]\n") in streams
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


SEEDED = LAUNCH + "from procgen_nb import _pch\nprint(_pch.seeded_files())\n"


def shared_pch(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/procgen_nb_pch/*/*.pch"))


def test_the_precompiled_header_is_built_once_and_shared_with_later_processes(folder):
    cache = folder / "cache"
    first = run(SEEDED.format(here=str(folder), names=["tiny_twice"]), cache, progress="0")
    assert first.returncode == 0, first.stderr
    assert first.stdout.split("\n")[1] == "0"  # nothing to start from: it built the PCH
    (pch,) = shared_pch(cache)
    assert pch.read_bytes()[:4] == b"CPCH"  # Clang's PCH signature
    second = run(SEEDED.format(here=str(folder), names=["tiny_square"]), cache, progress="0")
    assert second.returncode == 0, second.stderr
    out, seeded = second.stdout.split("\n")[:2]
    assert out == str([[1.0, 4.0, 9.0]]) and seeded == "1"
    assert built_modules(cache) == set(KERNELS)


def test_a_damaged_shared_header_is_skipped_and_replaced(folder):
    cache = folder / "cache"
    run(SEEDED.format(here=str(folder), names=["tiny_twice"]), cache, progress="0")
    (pch,) = shared_pch(cache)
    pch.write_bytes(b"not a header")
    res = run(SEEDED.format(here=str(folder), names=["tiny_square"]), cache, progress="0")
    assert res.returncode == 0, res.stderr
    out, seeded = res.stdout.split("\n")[:2]
    assert out == str([[1.0, 4.0, 9.0]]) and seeded == "0"
    assert pch.read_bytes()[:4] == b"CPCH"


def test_sharing_the_header_can_be_turned_off(folder):
    cache = folder / "cache"
    code = SEEDED.format(here=str(folder), names=["tiny_twice"])
    env_code = "import os; os.environ['PROCGEN_NB_SHARE_PCH'] = '0'\n" + code
    res = run(env_code, cache, progress="0")
    assert res.returncode == 0, res.stderr
    assert shared_pch(cache) == []
