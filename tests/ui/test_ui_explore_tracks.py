"""explore() on track_gen generators: "polar" by name, a Stage class and a GeneratorSpec."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pytest
import warp as wp

from procgen_nb.errors import ParamsError
from procgen_nb.params import Field, Params
from procgen_nb.track_gen import presets
from procgen_nb.track_gen.config import ValidityParams
from procgen_nb.track_gen.plugin import GeneratorSpec, registry
from procgen_nb.ui import TrackTarget, explore
from procgen_nb.ui._controls import IntBox


def _reference(**kw):
    """The same tracks made directly with presets.track, read back with NumPy."""
    own = {k: kw.pop(k) for k in ("lobes", "radius_jitter", "min_radius") if k in kw}
    validity = {k: kw.pop(k) for k in ValidityParams.fields() if k in kw}
    epoch = kw.pop("epoch", 0)
    gen = presets.track(generator="polar", generator_params=own, validity=validity, **kw)
    res = gen.generate(epoch=epoch)
    e, n = kw["num_envs"], kw["num_points"]
    return res.xy.numpy().reshape(e, n, 2), res.valid.numpy(), res.reason.numpy()


@pytest.fixture(scope="module")
def polar():
    v = explore("polar", num_envs=9, num_points=64, min_interval=0.0)
    v.wait(300)
    yield v
    v.close()


def test_polar_controls(polar):
    f = polar.form
    assert list(f.controls)[:3] == ["lobes", "radius_jitter", "min_radius"]
    assert isinstance(f.widget("lobes"), widgets.IntSlider)
    # the slider starts on the soft range (3, 24) of the bounds (3, 64), num_envs on
    # (1, 64) of (1, 65536): the default is not at the left edge
    assert (f.widget("lobes").min, f.widget("lobes").max) == (3, 24)
    assert (f.widget("num_envs").min, f.widget("num_envs").max) == (1, 64)
    assert isinstance(f.widget("radius_jitter"), widgets.FloatSlider)
    assert isinstance(f.widget("track_width"), widgets.FloatSlider)
    assert isinstance(f.widget("seed"), IntBox)
    assert isinstance(f.widget("epoch"), IntBox)
    assert isinstance(f.widget("num_envs"), widgets.IntSlider)
    assert f.widget("lobes").tooltip.startswith("lobes — control radii around the turn")
    assert f.widget("radius_jitter").description == "radius jitter [x radius]"


def test_polar_first_cook_matches_presets(polar):
    frame = polar.frame
    assert polar.error == ""
    xy, valid, reason = _reference(num_envs=9, num_points=64, seed=0)
    np.testing.assert_array_equal(frame.tracks, xy)
    assert frame.counts["valid envs"] == int(np.count_nonzero(valid))
    assert frame.counts["envs"] == 9 and frame.counts["points per env"] == 64
    names = [r.name for r in frame.report]
    assert names == ["polar: built", "generate", "read back for the view"]
    assert frame.report[1].launches > 0 and frame.report[1].readbacks == 0
    assert frame.report[2].readbacks > 0


def test_polar_slider_follows(polar):
    seq = polar.canvas.seq
    polar.form.widget("lobes").value = 5
    polar.form.widget("radius_jitter").value = 0.9
    frame = polar.wait(120)
    assert polar.error == ""
    xy, valid, reason = _reference(num_envs=9, num_points=64, seed=0, lobes=5, radius_jitter=0.9)
    np.testing.assert_array_equal(frame.tracks, xy)
    assert frame.counts["valid envs"] == int(np.count_nonzero(valid))
    assert polar.canvas.seq > seq
    got = np.frombuffer(polar.canvas.tracks, dtype="<f4").reshape(9, 64, 2)
    np.testing.assert_array_equal(got, xy.astype(np.float32))
    np.testing.assert_array_equal(np.frombuffer(polar.canvas.reasons, dtype="<i4"), reason)


def test_polar_validity_updates_in_place_and_epoch_reuses(polar):
    polar.set(track_width=0.3)
    frame = polar.wait(120)
    assert frame.report[0].name == "polar: updated"
    p = polar.value.to_dict()
    xy, valid, reason = _reference(**{k: p[k] for k in p})
    assert frame.counts["valid envs"] == int(np.count_nonzero(valid))
    clearance = int(np.count_nonzero(reason & 32))
    assert frame.counts["invalid: clearance"] == clearance
    polar.set(epoch=2)
    frame = polar.wait(120)
    assert frame.report[0].name == "polar: reused"
    p = polar.value.to_dict()
    xy, valid, reason = _reference(**{k: p[k] for k in p})
    np.testing.assert_array_equal(frame.tracks, xy)


def test_polar_code_recreates_the_generator(polar):
    polar.set(lobes=6, min_radius=0.3, seed=5)
    polar.wait(120)
    ns: dict = {}
    exec(compile(polar.code(), "<copied>", "exec"), ns)
    gen = ns["generator"]
    p = polar.value.to_dict()
    assert gen.params.to_dict() == {k: p[k] for k in ("lobes", "radius_jitter", "min_radius")}
    assert gen.config.validity.to_dict() == {k: p[k] for k in ValidityParams.fields()}
    cfg = gen.config
    assert (cfg.num_envs, cfg.num_points, cfg.seed, cfg.epoch) == (9, 64, 5, p["epoch"])
    np.testing.assert_array_equal(ns["result"].xy.numpy().reshape(9, 64, 2), polar.frame.tracks)


def test_a_stage_class_explores_like_its_name():
    stage = registry.get("generator", "polar")
    v = explore(stage, num_envs=2, num_points=32, min_interval=0.0)
    try:
        assert isinstance(v.target, TrackTarget) and v.target.generator == "polar"
        frame = v.wait(120)
        assert v.error == "" and frame.tracks.shape == (2, 32, 2)
    finally:
        v.close()


class RingParams(Params):
    radius: float = Field(0.5, bounds=(0.1, 1.0), doc="ring radius")


@wp.kernel
def _ring(seeds: wp.array(dtype=wp.int32), n: int, r: float, xy: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    e = i // n
    a = 2.0 * wp.pi * float(i % n) / float(n)
    s = r * (1.0 + 0.05 * float(seeds[e] % 7))
    xy[i] = wp.vec2(s * wp.cos(a), s * wp.sin(a))


def _ring_generate(seeds, config, out_xy, out_valid, scratch, ctx=None):
    n = config.num_points
    ctx.launch(_ring, config.num_envs * n, [seeds, n, config.generator_params.radius, out_xy])
    ctx.fill(out_valid, 1)


RING = GeneratorSpec(
    name="uitest.ring",
    alloc_scratch=lambda config: None,
    generate=_ring_generate,
    accepts_ctx=True,
    params=RingParams,
)


def test_a_generator_spec_is_registered_and_explored():
    registry.remove("generator", "uitest.ring")
    v = explore(RING, num_envs=3, num_points=16, min_interval=0.0)
    try:
        assert registry.get("generator", "uitest.ring") is RING
        assert list(v.form.controls)[0] == "radius"
        frame = v.wait(120)
        assert v.error == ""
        r = np.hypot(frame.tracks[..., 0], frame.tracks[..., 1])
        v.set(radius=0.8)
        frame2 = v.wait(120)
        r2 = np.hypot(frame2.tracks[..., 0], frame2.tracks[..., 1])
        assert r2.mean() > r.mean()
        assert frame2.counts["valid envs"] == 3
        other = GeneratorSpec(
            name="uitest.ring", alloc_scratch=lambda c: None, generate=_ring_generate
        )
        with pytest.raises(ParamsError, match="expected the generator registered as"):
            explore(other)
        # the copied code imports the plugin and registers it: run it where it is not
        code = v.code()
        assert "registry.add(RING)" in code and "'radius': 0.8" in code
        registry.remove("generator", "uitest.ring")
        ns: dict = {}
        exec(compile(code, "<copied>", "exec"), ns)
        assert registry.get("generator", "uitest.ring") is RING
        got = ns["result"].xy.numpy().reshape(3, 16, 2)
        np.testing.assert_array_equal(got, frame2.tracks)
    finally:
        v.close()
        registry.remove("generator", "uitest.ring")


def test_an_unknown_generator_name_is_refused():
    with pytest.raises(ValueError, match="expected one of .*got 'nope'"):
        explore("nope")


def test_lobes_40_is_set_from_python_and_cooked_with_40(polar):
    """The Params bound is 64 (the soft range 24): update sets 40, the slider widens to
    the bounds and shows 40, and the cook uses 40 (against presets.track)."""
    before = polar.value
    try:
        polar.update(lobes=40)
        frame = polar.wait(120)
        assert polar.value.lobes == 40 and polar.form.widget("lobes").value == 40
        assert (polar.form.widget("lobes").min, polar.form.widget("lobes").max) == (3, 64)
        xy, _, _ = _reference(**polar.value.to_dict())  # every value in effect, lobes 40
        np.testing.assert_array_equal(frame.tracks, xy)
    finally:
        polar.update(**before.to_dict())
        polar.wait(120)


def test_select_rebuilds_exactly_the_env_clicked(polar):
    """Run the code ``select`` gives: its one track has the bytes of env 4 of the batch
    (epoch 2, seed 3), and ``result`` is the TrackResult drawn."""
    before = polar.value
    try:
        polar.update(seed=3, epoch=2)
        frame = polar.wait(120)
        sel = polar.select(4)
        assert (sel.env, sel.seed, sel.epoch) == (4, 7, 2)
        scope: dict = {}
        exec(sel.code(), scope)  # noqa: S102 - the code the view hands a person
        one = scope["result"].xy.numpy().reshape(-1, 64, 2)
        assert one.shape[0] == 1
        assert one[0].tobytes() == frame.tracks[4].astype(one.dtype).tobytes()
        assert type(polar.result).__name__ == "TrackResult"
        drawn = polar.result.xy.numpy().reshape(9, 64, 2)
        np.testing.assert_array_equal(drawn, frame.tracks)
    finally:
        polar.update(**before.to_dict())
        polar.wait(120)


def test_explore_a_generator_with_saved_values(polar, tmp_path):
    path = polar.save(tmp_path / "polar.json")
    v = explore("polar", params=path, cook=False)
    try:
        assert v.value.to_dict() == polar.value.to_dict()  # every value, exactly
    finally:
        v.close()
    v = explore("polar", params={"lobes": 11, "seed": 4}, cook=False)
    try:
        assert (v.value.lobes, v.value.seed) == (11, 4)
    finally:
        v.close()
