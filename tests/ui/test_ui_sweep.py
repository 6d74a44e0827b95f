"""explore()'s sweep mode: a field over its range through track_gen.sweep, drawn as curves."""

from __future__ import annotations

import numpy as np
import pytest
from ui_fake_target import FakeParams, fake_tracks

from procgen_nb.errors import ParamsError
from procgen_nb.params import Field
from procgen_nb.track_gen import presets
from procgen_nb.ui import explore
from procgen_nb.ui.sweep_panel import sweep_values

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def view():
    v = explore("polar", num_envs=16, num_points=64)
    v.wait(120)
    yield v
    v.close()


def test_sweep_values_span_the_slider_range():
    f = Field(0.5, bounds=(0.0, None), soft=(0.0, 2.0), type=float)
    assert np.allclose(sweep_values(f, 5), [0.0, 0.5, 1.0, 1.5, 2.0])
    n = Field(4, bounds=(3, 6), type=int)
    assert sweep_values(n, 21).tolist() == [3, 4, 5, 6]  # each integer once
    with pytest.raises(ParamsError, match="expected at least 2, got 1"):
        sweep_values(f, 1)
    for bad in (Field(True, type=bool), Field("a", choices=["a", "b"]), Field(1.0, type=float)):
        with pytest.raises(ParamsError, match="expected a number with a finite range"):
            sweep_values(bad, 3)


def test_the_panel_offers_the_generator_and_validity_numbers_and_follows_the_last_edit(view):
    panel = view.sweep_panel
    assert panel is not None
    assert {"lobes", "radius_jitter", "min_radius", "track_width"} <= set(panel.fields)
    assert not {"num_envs", "num_points", "seed", "epoch"} & set(panel.fields)
    view.form.widget("min_radius").value = 0.25
    view.wait(60)
    assert panel.field.value == "min_radius"  # the parameter just moved
    assert view.browser_values == 0 and panel.result is None  # nothing swept on its own


def test_a_sweep_matches_plain_generators_at_each_value(view):
    """Each point's valid fraction equals that of a generator built at that value with the
    view's other values (an independent build, no sweep code)."""
    panel = view.sweep_panel
    res = panel.run("radius_jitter", points=4, num_envs=48, wait=True)
    assert panel.error == "" and res.keys == ["generator.radius_jitter"]
    values = res.values[0]
    assert np.allclose(values, np.linspace(0.0, 1.0, 4))
    d = view.value.to_dict()
    own = {k: d[k] for k in ("lobes", "min_radius")}
    validity = {k: d[k] for k in ("min_turn_radius", "track_width")}
    for v, frac in zip(values, res.valid_fraction, strict=True):
        gen = presets.track(
            generator="polar",
            generator_params={**own, "radius_jitter": float(v)},
            validity=validity,
            num_envs=48,
            num_points=64,
            seed=d["seed"],
        )
        assert frac == pytest.approx(gen.generate().num_valid() / 48)
    assert res.quantiles["length"].shape == (4, len(res.q))
    assert panel.progress.value == 1.0 and bytes(panel.image.value).startswith(PNG)
    assert "4 points of 48 envs" in panel.note.value and panel.runs == 1


def test_a_new_sweep_replaces_a_running_one_and_cooks_still_run(view):
    panel = view.sweep_panel
    panel.run("track_width", points=40, num_envs=64)  # in the background
    view.form.widget("lobes").value = 5  # a cook meanwhile (they take turns on the device)
    assert view.wait(120).counts["envs"] == 16
    res = panel.run("lobes", points=3, num_envs=32, wait=True)
    assert res.keys == ["generator.lobes"] and len(res.valid_fraction) == 3
    assert panel.result is res and panel.error == ""


def test_a_failed_sweep_is_shown_in_the_panel(view, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("no device")

    monkeypatch.setattr(view.target, "sweep", boom)
    assert view.sweep_panel.run("lobes", points=2, num_envs=8, wait=True) is None
    assert view.sweep_panel.error == "RuntimeError: no device"
    assert "sweep failed" in view.sweep_panel.note.value
    with pytest.raises(ParamsError, match="sweep field: expected one of"):
        view.sweep_panel.run("seed")


@pytest.mark.parametrize(
    ("kw", "label", "accepted"),
    [
        ({"points": 1}, "sweep points", "in [2, 201]"),
        ({"points": 0}, "sweep points", "in [2, 201]"),
        ({"points": 5000}, "sweep points", "in [2, 201]"),
        ({"points": 2.5}, "sweep points", "an integer"),
        ({"points": "21"}, "sweep points", "an integer"),
        ({"num_envs": 0}, "sweep envs", "in [1, 65536]"),
        ({"num_envs": -3}, "sweep envs", "in [1, 65536]"),
        ({"num_envs": 10**9}, "sweep envs", "in [1, 65536]"),
        ({"num_envs": True}, "sweep envs", "an integer"),
    ],
)
def test_bad_sweep_counts_are_refused_naming_them_before_anything_runs(view, kw, label, accepted):
    panel = view.sweep_panel
    with pytest.raises(ParamsError) as err:
        panel.run("lobes", **{"points": 3, "num_envs": 8, **kw})
    msg = str(err.value)
    assert msg.startswith(f"{label}: expected an integer") and accepted in msg
    assert f"got {next(iter(kw.values()))!r}" in msg
    assert not panel.busy and panel.runs == 0 and panel.progress.layout.visibility == "hidden"
    assert (panel.points.min, panel.points.max, panel.envs.min, panel.envs.max) == (
        2,
        201,
        1,
        65536,
    )


def test_only_a_track_generator_view_has_a_sweep_mode():
    v = explore(fake_tracks, params=FakeParams, cook=False)
    try:
        assert v.sweep_panel is None
    finally:
        v.close()


def test_the_curves_show_in_place_of_the_picture_until_a_control_moves(view):
    panel = view.sweep_panel
    panel.run("min_radius", points=3, num_envs=16, wait=True)
    assert view._picture.children[:1] == (view.canvas,)  # run from Python: the picture stays
    panel.run("min_radius", points=3, num_envs=16, wait=True, show=True)  # as the button
    assert panel.shows.value == "sweep" and view._picture.children[:1] == (panel.image,)
    view.form.widget("lobes").value = 6
    view.wait(60)
    assert panel.shows.value == "picture" and view._picture.children[:1] == (view.canvas,)
    panel.shows.value = "sweep"  # the toggle
    assert view._picture.children[:1] == (panel.image,)
