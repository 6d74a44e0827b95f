"""The ``procgen-nb`` command: the demo's figure and counts, and one line for every mistake."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest

from procgen_nb.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs ``procgen-nb ARGS`` in a fresh interpreter; reports whether Warp was imported."""
    code = (
        "import sys\n"
        "from procgen_nb.cli import main\n"
        "try:\n"
        f"    rc = main({list(args)!r})\n"
        "except SystemExit as e:\n"
        "    rc = e.code\n"
        "print('WARP' if 'warp' in sys.modules else 'NOWARP')\n"
        "sys.exit(rc)\n"
    )
    env = dict(os.environ, PROCGEN_NB_PROGRESS="0")
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def png_size(data: bytes) -> tuple[int, int, float]:
    """(width, height, dots per inch) read from a PNG's IHDR and pHYs chunks."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    at = data.index(b"pHYs")
    ppm_x, _, unit = struct.unpack(">IIB", data[at + 4 : at + 13])
    assert unit == 1  # metres
    return width, height, ppm_x * 0.0254


def test_demo_writes_a_150_dpi_png_with_the_counts_numpy_finds(tmp_path, capsys):
    out = tmp_path / "demo.png"
    args = ["--out", str(out), "--n", "800", "--seed", "3", "--radius", "0.5", "--tracks", "4"]
    assert main(["demo", *args]) == 0
    width, height, dpi = png_size(out.read_bytes())
    assert round(dpi) == 150
    assert (width, height) == (13 * 150, round(6.8 * 150))
    pts = np.random.default_rng(3).uniform(-1, 1, size=(800, 2)).astype(np.float32)
    n = int((np.linalg.norm(pts, axis=1) <= np.float32(0.5)).sum())
    text = capsys.readouterr().out
    assert f"kept {n} of 800 points; " in text
    assert " of 4 polar courses valid; " in text
    assert text.rstrip().endswith(f"wrote {out}")


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--out", "/nonexistent/dir/x.png"],
            "--out: expected a path in an existing folder, got '/nonexistent/dir/x.png' "
            "(no folder '/nonexistent/dir')",
        ),
        (["--out", "x.txt"], "--out: expected a file name ending in one of "),
        (["--out", "noext"], "got 'noext' (did you mean 'noext.png'?)"),
        (["--out", "."], "--out: expected a file path, got the folder '.'"),
        (["--out", ""], "--out: expected a file path, got ''"),
        (["--n", "-5"], "argument --n: expected an integer in [0, 1000000], got '-5'"),
        (["--n", "many"], "argument --n: expected an integer, got 'many'"),
        (["--seed", "-1"], "argument --seed: expected an integer in [0, 2147483647], got '-1'"),
        (["--radius", "3"], "argument --radius: expected a number in [0.0, 2.0], got '3'"),
        (["--radius", "nan"], "argument --radius: expected a number in [0.0, 2.0], got 'nan'"),
        (["--tracks", "0"], "argument --tracks: expected an integer in [1, 64], got '0'"),
        (["--shape", "star"], "argument --shape: invalid choice: 'star'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_demo_refuses_a_mistake_in_one_line_before_any_work(tmp_path, args, message):
    res = run_cli("demo", *args, cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("procgen-nb")
    assert "error: " in lines[0] and message in lines[0]
    assert "Traceback" not in res.stderr
    assert res.stdout.splitlines() == ["NOWARP"]  # refused before Warp was even imported
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_out_lists_the_formats_matplotlib_writes(tmp_path):
    res = run_cli("demo", "--out", "x.txt", cwd=tmp_path)
    listed = res.stderr.split("one of ")[1].split(", got")[0].split(", ")
    # the formats every matplotlib Agg build writes, by hand
    assert {".png", ".pdf", ".svg", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff"} <= set(listed)
    assert ".txt" not in listed


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "the following arguments are required: {demo,warmup,"),
        (["paint"], "invalid choice: 'paint'"),
        (["warmup", "--workers", "0"], "argument --workers: expected an integer in [1, 64]"),
    ],
)
def test_command_line_mistakes_are_one_line(args, message):
    res = run_cli(*args)
    assert res.returncode == 2
    assert len(res.stderr.splitlines()) == 1 and message in res.stderr, res.stderr


def test_warmup_refuses_an_unknown_device_in_one_line():
    res = run_cli("warmup", "--device", "tpu:7")
    assert res.returncode == 2
    (line,) = res.stderr.splitlines()
    assert line.startswith("procgen-nb: error: device: expected one of ['cpu'")
    assert line.endswith("got 'tpu:7'")


def test_version_names_the_package_and_warp_versions():
    res = run_cli("--version")
    assert res.returncode == 0
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    from importlib import metadata

    first = res.stdout.splitlines()[0]
    assert first.startswith(f"procgen-nb {version} (warp-lang {metadata.version('warp-lang')}")
    assert res.stdout.splitlines()[1] == "NOWARP"


def test_help_states_every_default_without_rst_and_without_warp():
    res = run_cli("demo", "--help")
    assert res.returncode == 0
    text = res.stdout
    for option, default in [
        ("--out", "demo.png"),
        ("--n", "4000"),
        ("--seed", "7"),
        ("--radius", "0.6"),
        ("--shape", "disk"),
        ("--tracks", "6"),
    ]:
        block = text[text.index(f"  {option} ") :]
        assert f"(default: {default})" in " ".join(block.split()[:60]), option
    assert "`" not in text
    assert text.splitlines()[-1] == "NOWARP"
    top = run_cli("--help")
    assert "warmup" in top.stdout and "demo" in top.stdout and "`" not in top.stdout


def best_of_3(cmd: list[str]) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, timeout=60)
        best = min(best, time.perf_counter() - t)
        assert res.returncode == 0
    return best


def test_help_answers_in_under_half_a_second():
    # on a loaded machine Python itself starts slowly: measured against a bare interpreter
    # that imports argparse, --help may take at most half a second more (about 0.1 s on a
    # quiet 2-core box, where a bare interpreter takes about 0.03 s)
    bare = best_of_3([sys.executable, "-c", "import argparse"])
    helped = best_of_3([sys.executable, "-m", "procgen_nb.cli", "demo", "--help"])
    assert helped < bare + 0.5, f"--help {helped:.2f} s, bare interpreter {bare:.2f} s"


def test_dataset_help_names_its_options_without_warp():
    res = run_cli("dataset", "--help")
    assert res.returncode == 0
    for option in ("--out", "--count", "--shard-size", "--scheduler", "--workers", "--param"):
        assert option in res.stdout, option
    assert res.stdout.splitlines()[-1] == "NOWARP"
    assert "dataset" in run_cli("--help").stdout


def test_dataset_writes_shards_plain_pyarrow_reads_and_a_rerun_skips(tmp_path, capsys):
    import pyarrow.parquet as pq

    out = tmp_path / "tracks"
    args = ["dataset", "--out", str(out), "--count", "10", "--shard-size", "4"]
    args += ["--num-points", "16", "--seed", "3", "--param", "radius_jitter=0.5", "--no-progress"]
    assert main(args) == 0
    assert "10 tracks in 3 shards" in capsys.readouterr().out
    table = pq.read_table(out)
    assert table.num_rows == 10
    assert sorted(table["env_seed"].to_pylist()) == list(range(3, 13))
    assert main(args) == 0
    assert "(0 written, 3 already complete)" in capsys.readouterr().out


def test_dataset_refuses_a_bad_param_in_one_line(tmp_path):
    res = run_cli("dataset", "--out", str(tmp_path / "t"), "--count", "4", "--param", "bogus=1")
    assert res.returncode == 2
    lines = [x for x in res.stderr.splitlines() if "error" in x]
    assert len(lines) == 1 and "bogus" in lines[0]
    res = run_cli("dataset", "--out", str(tmp_path / "t"), "--param", "nokey")
    assert res.returncode == 2 and "expected KEY=VALUE" in res.stderr


def test_explore_help_names_its_options_without_warp():
    res = run_cli("explore", "--help")
    assert res.returncode == 0
    for option, default in [("--out", "generators.html"), ("--num-envs", "6"), ("--seed", "0")]:
        block = res.stdout[res.stdout.index(f"  {option} ") :]
        assert f"(default: {default})" in " ".join(block.split()[:40]), option
    assert res.stdout.splitlines()[-1] == "NOWARP"
    assert "explore" in run_cli("--help").stdout


def test_explore_writes_a_page_of_every_registered_generator(tmp_path, capsys):
    """Issue 14 item 11: ``procgen-nb explore`` writes a static HTML page of every
    generator (its default Params table and a PNG of a few tracks)."""
    import base64

    from procgen_nb.track_gen.plugin import registry

    out = tmp_path / "gens.html"
    args = ["explore", "--out", str(out), "--num-envs", "2", "--num-points", "32"]
    assert main(args) == 0
    names = registry.available("generator")
    assert f"explore: {len(names)}/{len(names)} generators drawn" in capsys.readouterr().out
    page = out.read_text()
    for name in names:
        assert f'<section id="{name}"><h2>{name}</h2>' in page
    pngs = page.split("data:image/png;base64,")[1:]
    assert len(pngs) == len(names)
    assert all(base64.b64decode(p.split('"', 1)[0])[:4] == b"\x89PNG" for p in pngs)
    assert main(["explore", "--out", str(out), "--generator", "polar"]) == 0
    assert page.count("<section") > out.read_text().count("<section") == 1


def test_explore_refuses_a_bad_out_or_an_unknown_generator_in_one_line(tmp_path, capsys):
    assert main(["explore", "--out", str(tmp_path / "no" / "x.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("procgen-nb: error: --out: expected a file path in an existing folder")
    assert len(err.splitlines()) == 1
    assert main(["explore", "--out", str(tmp_path / "x.html"), "--generator", "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert "write_html generators: expected names among" in err and "got ['nope']" in err


def test_dataset_with_gates_and_drivable_validity_writes_courses(tmp_path, capsys):
    import json

    import pyarrow.parquet as pq

    out = tmp_path / "courses"
    args = ["dataset", "--out", str(out), "--count", "6", "--shard-size", "3", "--no-progress"]
    args += ["--num-points", "64", "--gates", "arc_length", "--drivable"]
    args += ["--gate-param", 'gate_params={"spacing": 0.6}', "--validity", "track_width=0.08"]
    assert main(args) == 0
    manifest = json.loads((out / "_manifest.json").read_text())
    want = {"min_turn_radius": 0.025, "track_width": 0.08, "road_overlap": False}
    assert manifest["config"]["validity"] == want
    assert manifest["config"]["course"]["gate_params"] == {"spacing": 0.6}
    table = pq.read_table(out)
    assert table.num_rows == 6 and "gate_position" in table.column_names
    assert min(table["gate_count"].to_pylist()) >= 3
    assert main(["dataset", "--out", str(tmp_path / "x"), "--gate-param", "a=1"]) == 2
    assert "expected --gates NAME" in capsys.readouterr().err


def test_dataset_refuses_a_bad_scheduler_in_one_line_and_makes_nothing(tmp_path, capsys):
    import socket

    import dask
    import distributed  # noqa: F401  (its config defaults, before dask.config.set)

    with socket.socket() as s:  # a local port nothing listens on
        s.bind(("127.0.0.1", 0))
        refused = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    out = tmp_path / "d"
    for address in ("notanaddress", refused):
        args = ["dataset", "--out", str(out), "--count", "4", "--scheduler", address]
        with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
            assert main([*args, "--no-progress"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--out" not in err[0] and "writable" not in err[0], err
        assert err[0].startswith("procgen-nb: error: dataset.write scheduler: expected")
        assert repr(address) in err[0]
        assert not out.exists()
