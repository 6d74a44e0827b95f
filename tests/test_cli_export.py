"""``procgen-nb export``: every format from the command line; refused input in one line."""

from __future__ import annotations

import csv
import json

import pytest

from procgen_nb import cli
from procgen_nb.track_gen import export


@pytest.mark.parametrize("fmt", sorted(set(export.FORMATS) - {"gates"}))
def test_each_format(tmp_path, capsys, fmt):
    argv = [
        "export",
        "--format",
        fmt,
        "--generator",
        "polar",
        "--count",
        "3",
        "--seed",
        "11",
        "--num-points",
        "64",
        "--scale",
        "20",
        "--param",
        "lobes=5",
        "--width",
        "variation=0.2",
        "--out",
        str(tmp_path),
    ]
    if fmt == "tumftm-traj":  # the tracks are 0.9 m wide at their narrowest: a small car
        argv += ["--option", "vehicle_width=0.5"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert f"{fmt} tracks under" in out
    index = json.loads((tmp_path / "index.json").read_text())
    rows = index["formats"][fmt]["tracks"]
    assert [r["seed"] for r in rows] == [11, 12, 13]
    for r in rows:
        for name in r["files"]:
            assert (tmp_path / name).stat().st_size > 0
            assert name.startswith(f"polar_s{r['seed']}_e0")


def test_tumftm_takes_the_params(tmp_path):
    base = ["export", "--format", "tumftm", "--count", "1", "--num-points", "32", "--scale", "10"]
    assert cli.main([*base, "--out", str(tmp_path / "a"), "--width", "left=0.05"]) == 0
    assert cli.main([*base, "--out", str(tmp_path / "b"), "--direction", "cw"]) == 0
    rows_a = list(csv.reader((tmp_path / "a" / "polar_s0_e0.csv").read_text().splitlines()[1:]))
    rows_b = list(csv.reader((tmp_path / "b" / "polar_s0_e0.csv").read_text().splitlines()[1:]))
    assert {r[3] for r in rows_a} == {"0.500000"}  # left 0.05 units * 10 m
    assert [r[:2] for r in rows_b] == [rows_a[(32 - i) % 32][:2] for i in range(32)]


def test_gates_course(tmp_path):
    argv = [
        "export",
        "--format",
        "gates",
        "--gates",
        "arc_length",
        "--count",
        "2",
        "--num-points",
        "64",
        "--out",
        str(tmp_path),
    ]
    assert cli.main(argv) == 0
    index = json.loads((tmp_path / "index.json").read_text())
    assert index["formats"]["gates"]["tracks"]


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--format", "kml"], "--format: expected one of"),
        (["--format", "tumftm", "--param", "lobes=-3"], "lobes"),
        (["--format", "tumftm", "--direction", "up"], "direction"),
        (["--format", "gates"], "gates: expected a Course"),
        (["--format", "opendrive", "--option", "tolerance=0"], "tolerance"),
        (["--format", "tumftm", "--option", "dpi=3"], "tumftm options"),
    ],
)
def test_refused(tmp_path, capsys, extra, needle):
    argv = ["export", "--count", "2", "--num-points", "32", "--out", str(tmp_path / "o"), *extra]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_out_is_a_file(tmp_path, capsys):
    f = tmp_path / "f"
    f.write_text("")
    assert cli.main(["export", "--format", "tumftm", "--out", str(f)]) == 2
    assert "--out: expected a folder" in capsys.readouterr().err
