"""Sweeps against their oracle: a fresh generator built at each grid point, measured in NumPy."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from procgen_nb import _traffic
from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import REASONS, presets, sweep

BASE = {"num_envs": 24, "num_points": 48, "seed": 5, "device": "cpu"}


def numpy_measures(d: dict) -> dict[str, np.ndarray]:
    """Valid flags, reason bits, length and smallest circumradius of ``numpy()`` output."""
    p = d["xy"].astype(np.float64)
    nxt, prv = np.roll(p, -1, axis=1), np.roll(p, 1, axis=1)
    a, b, c = np.linalg.norm(p - prv, axis=2), np.linalg.norm(nxt - p, axis=2), None
    c = np.linalg.norm(nxt - prv, axis=2)
    u, v = p - prv, nxt - p
    cross = np.abs(u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0])
    with np.errstate(divide="ignore", invalid="ignore"):
        circ = np.where(cross > 0, a * b * c / (2 * cross), np.inf)
    return {"length": b.sum(axis=1), "min_turn_radius": circ.min(axis=1)}


def fresh(generator_params=None, validity=None):
    gen = presets.track("polar", generator_params, validity=validity, **BASE)
    return gen.generate().numpy()


def check_point(res, idx, d, levels):
    E = BASE["num_envs"]
    assert res.valid_fraction[idx] == np.count_nonzero(d["valid"]) / E
    for bit, text in REASONS.items():
        assert res.reasons[text][idx] == np.count_nonzero(d["reason"] & bit) / E, text
    ref = numpy_measures(d)
    for name in ("length", "min_turn_radius"):
        np.testing.assert_allclose(
            res.quantiles[name][idx], np.quantile(ref[name], levels), rtol=1e-5, err_msg=name
        )


def test_a_validity_sweep_replays_and_matches_fresh_generators():
    gen = presets.track("polar", **BASE)
    before = gen.config.validity.min_turn_radius
    radii = [0.0, 0.1, 0.15, 0.25]
    res = sweep(
        gen, {"min_turn_radius": radii}, metrics=["length", "min_turn_radius"], progress=False
    )
    assert res.rebuilds == 0 and res.shape == (4,)
    assert res.valid_fraction[0] == 1.0 > res.valid_fraction[-1]
    for i, r in enumerate(radii):
        check_point(res, (i,), fresh(validity={"min_turn_radius": r}), res.q)
    assert gen.config.validity.min_turn_radius == before  # put back


def test_a_static_generator_sweep_rebuilds_and_matches_fresh_generators():
    gen = presets.track("polar", **BASE)
    res = sweep(gen, {"lobes": [4, 12]}, metrics=["length", "min_turn_radius"], progress=False)
    assert res.rebuilds == 3  # one per value, one to put lobes back
    for i, lobes in enumerate([4, 12]):
        check_point(res, (i,), fresh(generator_params={"lobes": lobes}), res.q)
    assert gen.params.lobes == 8
    np.testing.assert_array_equal(gen.generate().numpy()["xy"], fresh()["xy"])


def test_a_2d_grid_visits_every_pair():
    gen = presets.track("polar", **BASE)
    res = sweep(
        gen,
        {"radius_jitter": [0.2, 0.9], "validity.track_width": [0.0, 0.3, 0.6]},
        metrics=["length", "min_turn_radius"],
        q=(0.5,),
        progress=False,
    )
    assert res.shape == (2, 3) and res.rebuilds == 0  # both fields dynamic: replays only
    for i, j in np.ndindex(2, 3):
        d = fresh(
            generator_params={"radius_jitter": [0.2, 0.9][i]},
            validity={"track_width": [0.0, 0.3, 0.6][j]},
        )
        check_point(res, (i, j), d, (0.5,))
    t = res.table()
    assert isinstance(t, pa.Table) and t.num_rows == 6
    assert t["radius_jitter"].to_pylist() == [0.2, 0.2, 0.2, 0.9, 0.9, 0.9]
    assert "length_q50" in t.column_names and "valid_fraction" in t.column_names
    fig = res.plot()
    assert len(fig.axes) == 2  # the image and its colorbar


def test_a_name_builds_its_generator_and_the_plot_has_a_panel_per_metric():
    res = sweep(
        "polar",
        {"track_width": [0.0, 0.5]},
        num_envs=8,
        num_points=32,
        device="cpu",
        metrics=["length", "min_clearance"],
        progress=False,
    )
    assert res.num_envs == 8
    assert np.all(np.isfinite(res.quantiles["min_clearance"]))
    assert len(res.plot().axes) == 3


@pytest.mark.parametrize(
    "grid, kwargs, match",
    [
        ({"bogus": [1]}, {}, "bogus"),
        ({"validity.lobes": [1]}, {}, "validity.lobes"),
        ({"lobes": []}, {}, "1-D sequence"),
        ({}, {}, "dict of field"),
        ({"lobes": [4]}, {"metrics": ["speed"]}, "speed"),
        ({"lobes": [4]}, {"q": [1.5]}, "quantile"),
        ({"lobes": [4], "generator.lobes": [6]}, {}, r"'generator.lobes'.*once.*'lobes'"),
        ({"lobes": [object()]}, {}, r"'lobes' \(value 0 of 1\).*got <object"),
        ({"radius_jitter": [0.5, None]}, {}, r"'radius_jitter' \(value 1 of 2\).*got None"),
    ],
)
def test_bad_arguments_are_refused(grid, kwargs, match):
    gen = presets.track("polar", **{**BASE, "num_envs": 2})
    with pytest.raises(ParamsError, match=match):
        sweep(gen, grid, progress=False, **kwargs)


@pytest.mark.parametrize(
    "key, values, where",
    [
        (
            "radius_jitter",
            [0.2, 0.5, 1.5],
            r"'radius_jitter' \(value 2 of 3\).*\[0\.0, 1\.0\], got 1\.5",
        ),
        ("lobes", [4, 2, 8], r"'lobes' \(value 1 of 3\).*\[3, 64\], got 2"),
        ("track_width", [0.1, -0.5], r"'track_width' \(value 1 of 2\).*got -0\.5"),
        ("min_radius", [0.5, float("nan")], r"'min_radius'.*finite number, got nan"),
    ],
)
def test_a_value_the_params_refuse_is_refused_before_any_point_is_cooked(key, values, where):
    gen = presets.track("polar", **{**BASE, "num_envs": 2})
    gen.generate()
    params, validity = gen.params, gen.config.validity
    with _traffic.collect() as t, pytest.raises(ParamsError, match=where):
        sweep(gen, {key: values}, progress=False)
    assert (t.launches, t.replays, t.builds) == (0, 0, 0)
    assert gen.params == params and gen.config.validity == validity


def test_an_outer_static_key_rebuilds_once_per_value():
    gen = presets.track("polar", **BASE)
    res = sweep(gen, {"lobes": [4, 6], "radius_jitter": [0.1, 0.5, 0.9]}, progress=False)
    assert res.shape == (2, 3) and res.rebuilds == 3  # lobes 4, lobes 6, lobes back to 8
    for i, j in np.ndindex(2, 3):
        params = {"lobes": [4, 6][i], "radius_jitter": [0.1, 0.5, 0.9][j]}
        check_point(res, (i, j), fresh(generator_params=params), res.q)


def test_the_issue_example_sweeps_polar_jitter_from_0_to_1_by_replays():
    # radius_jitter and min_radius are dynamic: a jitter sweep replays one recording
    gen = presets.track("polar", **BASE)
    grid = np.linspace(0, 1, 41)
    names = ["length", "min_turn_radius", "min_clearance"]
    res = sweep(gen, {"radius_jitter": grid}, metrics=names, progress=False)
    assert res.shape == (41,) and res.rebuilds == 0
    assert np.all(np.isfinite(res.quantiles["min_clearance"]))
    for i in (0, 40):
        check_point(res, (i,), fresh(generator_params={"radius_jitter": grid[i]}), res.q)


def test_a_replayed_point_has_the_bytes_of_a_fresh_generator():
    # what a sweep of polar's dynamic fields relies on: an update replays one recording,
    # and every point's bytes (xy, valid, reasons, full crossing counts) are a fresh cook's
    gen = presets.track("polar", **BASE)
    before = gen.generate().fingerprint()
    for jitter, floor_r in ((1.0, 0.2), (0.0, 0.01), (0.6, 1.0), (0.35, 0.2)):
        params = {"radius_jitter": jitter, "min_radius": floor_r}
        assert not gen.update(generator_params=params)  # no rebuild: a replay
        res = gen.generate()
        new = presets.track("polar", params, **BASE).generate()
        assert res.fingerprint() == new.fingerprint(), params
        got, want = res.numpy(), new.numpy()
        for key in ("reason", "crossings", "turning"):
            np.testing.assert_array_equal(got[key], want[key], err_msg=f"{params} {key}")
    sweep(gen, {"radius_jitter": [0.1, 0.9], "min_radius": [0.05, 0.5]}, progress=False)
    assert gen.generate().fingerprint() == before  # the sweep put the fields back


def test_the_sweep_benchmark_runs_in_smoke_mode(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "sweep.py"
    spec = importlib.util.spec_from_file_location("bench_sweep", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke"])
    out = capsys.readouterr().out
    assert "the 3 s target" in out and "load average" in out
    assert rows["rebuilds"] == 0 and rows["numpy agrees"] is True


def test_a_racing_sweep_measures_difficulty_like_fresh_generators():
    from matplotlib.figure import Figure

    from procgen_nb.track_gen import VehicleParams, racing_line

    veh = VehicleParams(mu=1.0, v_max=40.0, a_max=6.0, width=1.0)
    racing = {"vehicle": veh, "scale": 100.0}
    gen = presets.track("polar", **BASE)
    jitter = [0.0, 0.5, 1.0]
    res = sweep(
        gen,
        {"radius_jitter": jitter},
        metrics=["length", "difficulty", "lap_time"],
        racing=racing,
        progress=False,
    )
    assert list(res.quantiles) == ["length", "difficulty", "lap_time"]
    tw = gen.config.validity.track_width
    for i, j in enumerate(jitter):
        d = fresh({"radius_jitter": j})
        E, N = d["xy"].shape[:2]
        # the fresh tracks as plain arrays, in metres: another way into racing_line
        xy = d["xy"].astype(np.float64) * 100.0
        line = racing_line(xy, tw * 50.0, tw * 50.0, veh).numpy()
        for name in ("difficulty", "lap_time"):
            x = line[name].astype(np.float64)
            x = x[np.isfinite(x)]
            np.testing.assert_allclose(res.quantiles[name][i], np.quantile(x, res.q), rtol=2e-4)
            np.testing.assert_allclose(res.mean[name][i], x.mean(), rtol=2e-4)
    assert res.mean["difficulty"][-1] > res.mean["difficulty"][0]  # rougher: harder
    fig = res.plot(fig=Figure())
    titles = [ax.get_title() for ax in fig.axes]
    assert "difficulty" in titles and "lap_time" in titles
    cols = res.columns()
    assert "difficulty_q50" in cols and "lap_time_mean" in cols


def test_lap_metrics_need_racing():
    gen = presets.track("polar", **BASE)
    with pytest.raises(ParamsError, match=r"the lap metrics need racing=\), got \['difficulty'\]"):
        sweep(gen, {"radius_jitter": [0.1]}, metrics=["difficulty"], progress=False)
    with pytest.raises(ParamsError, match=r"sweep racing: expected a dict .*got 3"):
        sweep(gen, {"radius_jitter": [0.1]}, racing=3, progress=False)
    with pytest.raises(ParamsError, match=r"racing_line scale: expected a finite number > 0"):
        sweep(gen, {"radius_jitter": [0.1]}, racing={"scale": 0}, progress=False)


def test_with_config_keeps_the_generator_given_in_place_of_the_registry():
    """``sweep`` resizes a TrackGenerator with ``with_config``: the Stage it was given
    (here polar, under a config naming bezier) stays; the bytes are polar's."""
    import dataclasses

    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator
    from procgen_nb.track_gen.plugin import registry

    def cfg(**kw):
        return TrackGenConfig(**{"num_points": 64, "seed": 3, "device": "cpu", **kw})

    polar = registry.get("generator", "polar")
    gen = TrackGenerator(cfg(num_envs=8, generator="bezier"), generator=polar)
    small = gen.with_config(dataclasses.replace(gen.config, num_envs=4, env_seeds=None))
    assert small.stage.name == "polar" and small.config.num_envs == 4
    assert small.ctx is not gen.ctx and small.ctx.device == "cpu"
    want = TrackGenerator(cfg(num_envs=4, generator="polar")).generate().fingerprint()
    other = TrackGenerator(cfg(num_envs=4, generator="bezier")).generate().fingerprint()
    assert small.generate().fingerprint() == want != other
    res = sweep(gen, {"radius_jitter": [0.2]}, num_envs=4, metrics=["length"], progress=False)
    assert res.num_envs == 4


@pytest.mark.parametrize("metrics", [3, 1.5, {"length": 1}, object()])
def test_metrics_of_another_type_are_refused(metrics):
    gen = presets.track("polar", **BASE)
    with pytest.raises(ParamsError, match=r"sweep metrics: expected True, False, a name or a list"):
        sweep(gen, {"radius_jitter": [0.1]}, metrics=metrics, progress=False)


def test_the_generator_keeps_the_last_points_tracks_until_generate():
    """As the docstring says: params are put back, ``result`` is the last point's (a fresh
    generator at that point is the reference) until ``generate()``."""
    gen = presets.track("polar", {"radius_jitter": 0.1}, **BASE)
    before = gen.generate().numpy()["xy"]
    sweep(gen, {"radius_jitter": [0.1, 0.6]}, metrics=False, progress=False)
    assert gen.params.radius_jitter == 0.1
    np.testing.assert_array_equal(gen.result.numpy()["xy"], fresh({"radius_jitter": 0.6})["xy"])
    np.testing.assert_array_equal(gen.generate().numpy()["xy"], before)
