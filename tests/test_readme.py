"""The README runs as written: its commands, its Python blocks in order, its kernel asset."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import warp as wp

import procgen_nb as pg

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# a block whose first line is `# some/path.ext` (a colon and words may follow) is a file
FILE_HEADER = re.compile(r"^# ([\w./-]+\.(?:py|yaml))(?::.*)?$")


def blocks() -> list[tuple[str, str]]:
    """Every fenced block of the README as (language, text), in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```", README.read_text(), re.S | re.M)


def files_and_code() -> tuple[dict[str, str], list[str]]:
    """The README's files (path -> text) and its runnable Python blocks, in order."""
    files, code = {}, []
    for lang, text in blocks():
        first = text.splitlines()[0] if text.strip() else ""
        m = FILE_HEADER.match(first)
        if m and lang in ("python", "yaml"):
            files[m.group(1)] = text
        elif lang == "python":
            code.append(text)
    return files, code


def test_readme_commands_are_one_line_each_and_ci_runs_the_second_verbatim():
    lang, text = blocks()[0]
    assert lang == "bash"
    first, second = text.strip().splitlines()
    for line in (first, second):
        # each works without an active venv: it makes one (or reuses it) and installs into it
        assert line.startswith(
            "(test -d .venv || python3 -m venv .venv) && . .venv/bin/activate && pip install "
        )
    assert first.endswith("procgen-nb demo --out demo.png")
    assert second.endswith("python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert second in ci
    # nothing else of CI's own runs after `cd` to the clone's root
    runs = [ln for ln in ci if ln.strip() and not ln.startswith(("#", "set ", "cd "))]
    assert runs == [second]


def test_every_python_block_runs_in_order_in_a_fresh_process(tmp_path):
    files, code = files_and_code()
    assert set(files) == {"mylab/kernels/scale/bindings.yaml", "mylab/kernels/scale/scale.py"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    script = tmp_path / "readme_blocks.py"
    script.write_text("\n\n".join(code))
    env = dict(os.environ, PROCGEN_NB_PROGRESS="0")
    res = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    # the scale kernel doubles [1, 2, 3]: the reference is NumPy's
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    assert res.stdout.strip().splitlines()[-1] == str([float(v) for v in a * np.float32(2.0)])


def test_readme_kernel_asset_counts_live_slots_only(tmp_path):
    """The asset's COUNT=device variant zeroes the slots past a live count of 2."""
    files, _ = files_and_code()
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    pg.asset.add_path("mylab", tmp_path / "mylab" / "kernels")
    try:
        scale = pg.asset.resolve("mylab/scale", "computeShader")
        col = pg.ops.transfer.upload(values={"a": [1.0, 2.0, 3.0]})["columns"]["a"]
        live = pg.LiveCount(wp.array([2], dtype=wp.uint32, device=col.device), 3)
        out = pg.ops.device.kernel(
            kernel=scale, bind={"a": col}, domain=live, uniforms={"factor": 2.0}
        )
        np.testing.assert_array_equal(out["columns"]["b"].numpy(), [2.0, 4.0, 0.0])
    finally:
        pg.asset.remove_path("mylab")


def test_import_is_cheap_and_dir_lists_the_lazy_exports():
    code = (
        "import sys, procgen_nb as pg\n"
        "print('warp' in sys.modules)\n"
        "print(' '.join(dir(pg)))\n"
        "print(' '.join(pg.__all__))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    warp_loaded, names, exported = res.stdout.splitlines()
    assert warp_loaded == "False"  # nothing heavy until a name is used
    listed = set(names.split())
    for name in (
        "explore",
        "track_gen",
        "plot",
        "node",
        "Graph",
        "ops",
        "asset",
        "Field",
        "Part",
        "count",
        "mesh",
    ):
        assert name in listed
    assert set(exported.split()) <= listed
    assert exported.split() == sorted(exported.split())
    for name in exported.split():
        assert getattr(pg, name) is not None


def test_package_docstring_names_five_entry_points_that_exist():
    doc = pg.__doc__
    assert len(doc.strip().splitlines()) > 10
    bullets = [ln for ln in doc.splitlines() if ln.startswith("- **")]
    assert [b.split("**")[1] for b in bullets] == [
        "Nodes and graphs",
        "Ops",
        "Assets",
        "track_gen",
        "explore / plot",
    ]
    # every `pg.a.b` the docstring names resolves
    for dotted in set(re.findall(r"``pg\.([\w.]+)", doc)):
        obj = pg
        for part in dotted.split("."):
            obj = getattr(obj, part)
