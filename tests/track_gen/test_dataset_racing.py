"""A dataset's racing columns: the lap metrics of one batch of the same tracks, read back
from the Parquet shards, against ``racing_line`` run on those tracks as plain arrays."""

from __future__ import annotations

import json

import numpy as np
import pytest

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import VehicleParams, dataset, racing_line

CONFIG = {"generator": "polar", "num_points": 48, "seed": 11, "epoch": 2}
RACING = {"mu": 1.1, "v_max": 45.0, "a_max": 7.0, "width": 1.0, "scale": 100.0}


def test_racing_columns_hold_the_lap_metrics_of_the_rows(tmp_path):
    out = tmp_path / "racing"
    dataset.write({**CONFIG, "racing": RACING}, 20, out, shard_size=8, progress=False)
    table = dataset.read(out)
    names = ["lap_time", "mean_speed", "full_throttle_fraction", "difficulty"]
    assert table.column_names[-4:] == names
    xy = dataset.centerlines(table).astype(np.float64) * 100.0
    spec = json.loads((out / dataset.MANIFEST).read_text())["config"]["racing"]
    tw = 0.05  # the default validity track_width: half each side
    assert spec == {**RACING, "g": 9.81, "w_right": tw / 2, "w_left": tw / 2}
    veh = VehicleParams(mu=1.1, v_max=45.0, a_max=7.0, width=1.0)
    ref = racing_line(xy, tw * 50.0, tw * 50.0, veh).numpy()
    for name in names:
        got = table[name].to_numpy()
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref[name], rtol=2e-5, err_msg=name)
    assert np.all((table["difficulty"].to_numpy() >= 0) & (table["difficulty"].to_numpy() < 1))


def test_a_dataset_without_racing_keeps_its_columns_and_config(tmp_path):
    dataset.write(CONFIG, 4, tmp_path / "plain", shard_size=4, progress=False)
    table = dataset.read(tmp_path / "plain")
    assert "difficulty" not in table.column_names
    manifest = json.loads((tmp_path / "plain" / dataset.MANIFEST).read_text())
    assert "racing" not in manifest["config"]


@pytest.mark.parametrize(
    ("racing", "match"),
    [
        ("fast", r"dataset config racing: expected True or a dict of .*got 'fast'"),
        ({"speed": 3}, r"dataset config racing: expected keys among .*got \['speed'\]"),
        ({"mu": 0}, r"VehicleParams mu: expected a finite number > 0, got 0"),
        ({"v_max": -1.0}, r"VehicleParams v_max: expected a finite number > 0, got -1.0"),
        ({"scale": float("nan")}, r"dataset config racing scale: expected a finite number > 0"),
        ({"w_right": 0.1}, r"racing w_right/w_left: expected both or neither, got one"),
        ({"w_right": "a", "w_left": 1}, r"racing w_right: expected a number, got 'a'"),
        ({"w_right": -1, "w_left": 1}, r"racing w_right: expected a finite number >= 0, got -1"),
    ],
)
def test_bad_racing_configs_are_refused(tmp_path, racing, match):
    with pytest.raises(ParamsError, match=match):
        dataset.write({**CONFIG, "racing": racing}, 4, tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").glob("*.parquet"))


def test_no_widths_and_no_track_width_is_refused(tmp_path):
    cfg = {**CONFIG, "validity": {"track_width": 0.0}, "racing": True}
    with pytest.raises(ParamsError, match=r"expected widths \(world units\) or a validity"):
        dataset.write(cfg, 4, tmp_path / "x", progress=False)


def test_a_course_dataset_takes_racing_columns_too(tmp_path):
    course = {"gate_generator": "arc_length", "gate_params": {"spacing": 0.6}, "track_width": 0.2}
    racing = {"v_max": 45.0, "width": 1.0, "scale": 100.0, "w_right": 0.04, "w_left": 0.04}
    dataset.write({**CONFIG, "course": course, "racing": racing}, 6, tmp_path, 6, progress=False)
    table = dataset.read(tmp_path)
    assert "gate_position" in table.column_names and "difficulty" in table.column_names
    xy = dataset.centerlines(table).astype(np.float64) * 100.0
    ref = racing_line(xy, 4.0, 4.0, VehicleParams(v_max=45.0, width=1.0)).numpy()
    np.testing.assert_allclose(table["lap_time"].to_numpy(), ref["lap_time"], rtol=2e-5)
