"""What the command line and the errors say is true: the limits the help states are the
limits the code keeps, half-open ranges are stated as such, and mistakes are the
package's own errors."""

from __future__ import annotations

import pytest

import procgen_nb as pg
from procgen_nb.cli import build_parser, main
from procgen_nb.errors import ParamsError, ProcgenError
from procgen_nb.params import Field, Params
from procgen_nb.track_gen import dataset


def test_dataset_count_help_states_the_limit_dataset_write_keeps(capsys):
    ds = build_parser()._subparsers._group_actions[0].choices["dataset"]
    (count,) = [a for a in ds._actions if a.dest == "count"]
    assert "at most 2**31" in count.help and "65536 shards" in count.help
    assert dataset.MAX_TRACKS == 2**31 and dataset.MAX_SHARDS == 65536
    assert count.type(str(dataset.MAX_TRACKS)) == dataset.MAX_TRACKS  # the limit itself passes
    with pytest.raises(SystemExit) as exit_:
        main(["dataset", "--out", "x", "--count", str(dataset.MAX_TRACKS + 1)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --count: expected an integer in [1, {2**31}], got '{2**31 + 1}'" in err


@pytest.mark.parametrize(
    ("bounds", "value", "accepted"),
    [
        ((0.0, None), -1.0, ">= 0.0"),
        ((None, 2.0), 3.0, "<= 2.0"),
        ((0.0, 2.0), 3.0, "in [0.0, 2.0]"),
        ((0, None), -1, ">= 0"),
    ],
)
def test_a_refused_value_names_the_range_without_none(bounds, value, accepted):
    class Knobs(Params):
        width: float = Field(1.0, bounds=bounds) if isinstance(value, float) else 0
        count: int = Field(1, bounds=bounds)

    name = "width" if isinstance(value, float) else "count"
    with pytest.raises(ParamsError) as err:
        Knobs(**{name: value})
    assert str(err.value).endswith(f"{name}: expected a value {accepted}, got {value!r}")
    assert "None" not in str(err.value)


def test_dataset_validity_message_states_the_half_open_range(tmp_path, capsys):
    out = tmp_path / "t"
    args = ["dataset", "--out", str(out), "--count", "4", "--validity", "track_width=-1"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "validity.track_width: expected a value >= 0.0, got -1.0" in err


def test_drivable_is_hidden_and_says_it_does_nothing(tmp_path, capsys):
    ds = build_parser()._subparsers._group_actions[0].choices["dataset"]
    assert "--drivable" not in ds.format_help()
    out = tmp_path / "t"
    base = ["dataset", "--out", str(out), "--count", "2", "--num-points", "32", "--no-progress"]
    assert main([*base, "--drivable"]) == 0
    assert "--drivable does nothing (drivable validity is the default)" in capsys.readouterr().err
    a = dataset.read(out)
    assert main(["dataset", "--out", str(tmp_path / "u"), *base[3:]]) == 0
    b = dataset.read(tmp_path / "u")
    assert a.equals(b)  # the same tracks with and without it


def test_track_generator_update_refuses_a_config_field_with_a_package_error():
    tg = pg.track_gen.presets.track("polar", num_envs=2, num_points=32)
    with pytest.raises(ParamsError) as err:
        tg.update(num_envs=3)
    assert isinstance(err.value, ProcgenError) and isinstance(err.value, ValueError)
    assert str(err.value) == (
        "TrackGenerator.update: expected generator_params, validity or z_profile "
        "(other config fields need a new TrackGenerator), got ['num_envs']"
    )
    assert tg.config.num_envs == 2


def test_tools_holds_no_notebook_generator_that_would_drift():
    """The notebooks are edited and re-executed in place; a script that wrote them once
    (tools/make_quickstart.py, tools/make_nb05.py) would regress them if run again."""
    from pathlib import Path

    tools = Path(__file__).resolve().parents[1] / "tools"
    writers = [p.name for p in tools.glob("*.py") if "nbformat" in p.read_text()]
    assert writers == []
