"""The README and the docs' Markdown pages run as written: the README's commands, every
Python block of each page in order, the kernel asset of docs/assets.md."""

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
ASSETS = ROOT / "docs" / "assets.md"
# a block whose first line is `# some/path.ext` (a colon and words may follow) is a file
FILE_HEADER = re.compile(r"^# ([\w./-]+\.(?:py|yaml))(?::.*)?$")


def blocks(page: Path = README) -> list[tuple[str, str]]:
    """Every fenced block of ``page`` as (language, text), in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```", page.read_text(), re.S | re.M)


def files_and_code(page: Path = README) -> tuple[dict[str, str], list[str]]:
    """The page's files (path -> text) and its runnable Python blocks, in order."""
    files, code = {}, []
    for lang, text in blocks(page):
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


def _run_page(page: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    files, code = files_and_code(page)
    tmp_path.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    script = tmp_path / "page_blocks.py"
    script.write_text("\n\n".join(code))
    # the procgen_nb of this checkout, wherever the venv's editable install points
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = dict(os.environ, PROCGEN_NB_PROGRESS="0", MPLBACKEND="Agg", PYTHONPATH=path)
    res = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def test_the_readme_makes_tracks_with_two_generators_and_draws_them(tmp_path):
    files, code = files_and_code(README)
    assert files == {}
    first = code[0]
    assert len(first.strip().splitlines()) <= 12
    assert '"polar"' in first and '"bezier"' in first and "plot_tracks" in first
    res = _run_page(README, tmp_path)
    lines = res.stdout.strip().splitlines()
    # one line per generator, each naming it; the valid count is one of 0..16
    assert [ln.split()[0].split("(")[0] for ln in lines[:2]] == ["TrackGenerator"] * 2
    assert "polar" in lines[0] and "bezier" in lines[1]
    for ln in lines[:2]:
        assert 0 <= int(ln.split("->")[1].split()[0]) <= 16
    # the drawing: a PNG of both grids, its valid centerlines in plot.VALID_COLOR
    import matplotlib.image as mpimg

    img = mpimg.imread(tmp_path / "tracks.png")
    green = np.abs(img[..., :3] - np.array([0x2A, 0x9D, 0x4B]) / 255.0).max(axis=-1) < 0.12
    assert green[:, : img.shape[1] // 2].sum() > 500 and green[:, img.shape[1] // 2 :].sum() > 500


def test_the_readme_picture_and_thumbnails_are_committed():
    text = README.read_text()
    pictures = re.findall(r"!\[[^\]]*\]\((docs/images/[\w.]+)\)", text)
    assert pictures[0] == "docs/images/tracks.png"
    # the picture comes before the commands: it is on the first screen
    assert text.index("docs/images/tracks.png") < text.index("```bash")
    for rel in pictures:
        assert (ROOT / rel).is_file(), rel
    from procgen_nb.track_gen.plugin import registry

    thumbs = {p.removeprefix("docs/images/gen_").removesuffix(".png") for p in pictures[1:]}
    assert thumbs == set(registry.available("generator"))


def test_command_one_installs_what_opening_the_notebooks_needs():
    import tomllib

    from packaging.requirements import Requirement

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {Requirement(d).name for d in deps}
    assert {"jupyterlab", "ipykernel"} <= names
    assert "jupyter lab notebooks/" in README.read_text()
    assert "mybinder.org/badge_logo.svg" in README.read_text()


def test_every_python_block_of_the_docs_pages_runs_in_order(tmp_path):
    files, _ = files_and_code(ASSETS)
    assert set(files) == {"mylab/kernels/scale/bindings.yaml", "mylab/kernels/scale/scale.py"}
    res = _run_page(ASSETS, tmp_path / "assets")
    # the scale kernel doubles [1, 2, 3]: the reference is NumPy's
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    assert res.stdout.strip().splitlines()[-1] == str([float(v) for v in a * np.float32(2.0)])
    _run_page(ROOT / "docs" / "lua.md", tmp_path / "lua")


def test_readme_kernel_asset_counts_live_slots_only(tmp_path):
    """The asset's COUNT=device variant zeroes the slots past a live count of 2."""
    files, _ = files_and_code(ASSETS)
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
