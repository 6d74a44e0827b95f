"""TrackGenerator: recording, zero readbacks, masked regeneration, dynamic params, capture."""

from __future__ import annotations

import types

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

import procgen_nb
from procgen_nb.errors import (
    GeneratorError,
    LegacyPluginStreamError,
    NotCapturableError,
    ParamsError,
)
from procgen_nb.track_gen import TrackGenConfig, TrackGenerator, presets
from procgen_nb.track_gen.exec import LaunchContext, salt
from procgen_nb.track_gen.pipeline import _check_legacy_stream
from procgen_nb.track_gen.plugin import Field, GeneratorSpec, Stage
from procgen_nb.track_gen.plugin import Params as Params_


def _rough(device: str, **kw) -> TrackGenerator:
    """A checkpoint generator with enough jitter that some envs come out invalid."""
    params = {"radius_jitter": 0.8, "angle_jitter": 0.95, "checkpoints": 14}
    return presets.track(
        generator="checkpoint",
        generator_params=params,
        num_envs=128,
        num_points=64,
        device=device,
        **kw,
    )


def test_steady_call_reads_nothing_back(device):
    tg = presets.track(generator="polar", num_envs=64, num_points=64, device=device, z_profile=True)
    tg.generate()
    tg.regenerate()
    before = procgen_nb.traffic()
    for _ in range(3):
        res = tg.generate()
        tg.regenerate()
    delta = procgen_nb.traffic() - before
    assert delta.readbacks == 0
    assert delta.waits == 0
    assert delta.uploads == 0
    assert delta.replays == 6
    assert res.xy.shape == (64 * 64,) and res.xy.dtype == wp.vec2
    assert res.valid.shape == (64,) and res.valid.dtype == wp.int32
    assert res["z"].shape == (64 * 64,)


def test_regenerate_replaces_only_invalid_envs(device):
    tg = _rough(device, validity={"min_turn_radius": 0.03})
    first = tg.generate().numpy()
    bad = first["valid"] == 0
    assert 0 < bad.sum() < len(bad)
    second = tg.regenerate().numpy()
    np.testing.assert_array_equal(second["xy"][~bad], first["xy"][~bad])
    assert (second["valid"][~bad] == 1).all()
    changed = np.any(second["xy"][bad] != first["xy"][bad], axis=(1, 2))
    assert changed.all()
    for _ in range(8):
        tg.regenerate()
    assert tg.result.num_valid() > int((~bad).sum())


def test_regenerate_with_a_mask(device):
    tg = _rough(device)
    first = tg.generate().numpy()
    mask = np.zeros(128, dtype=np.int32)
    mask[[3, 77]] = 1
    second = tg.regenerate(mask).numpy()
    moved = np.any(second["xy"] != first["xy"], axis=(1, 2))
    assert np.flatnonzero(moved).tolist() == [3, 77]
    with pytest.raises(ParamsError, match=r"regenerate mask: expected 128 values, got \(3,\)"):
        tg.regenerate([1, 0, 1])


def test_generation_sequence_is_deterministic(device):
    a, b = _rough(device), _rough(device)
    for tg in (a, b):
        tg.generate()
        tg.regenerate()
        tg.generate(epoch=5)
        tg.regenerate()
    assert a.result.fingerprint() == b.result.fingerprint()


def test_epoch_changes_tracks_and_back(device):
    tg = presets.track(generator="polar", num_envs=16, num_points=64, device=device)
    fp0 = tg.generate().fingerprint()
    assert tg.generate(epoch=1).fingerprint() != fp0
    assert tg.generate(epoch=0).fingerprint() == fp0
    with pytest.raises(
        ParamsError, match=r"generate epoch: expected an integer in \[0, 2147483647\], got -1"
    ):
        tg.generate(epoch=-1)


def test_env_seeds_select_tracks(device):
    a = presets.track(generator="polar", num_envs=4, num_points=32, device=device, seed=10)
    b = presets.track(
        generator="polar", num_envs=2, num_points=32, device=device, env_seeds=[12, 13]
    )
    xa, xb = a.generate().numpy()["xy"], b.generate().numpy()["xy"]
    np.testing.assert_array_equal(xa[2:], xb)


def test_dynamic_fields_change_without_new_recording(device):
    tg = presets.track(
        generator="polar", num_envs=32, num_points=64, device=device, z_profile={"amplitude": 0.1}
    )
    z1 = tg.generate().numpy()["z"]
    plan = tg.recordings["generate"]
    assert tg.update(z_profile={"amplitude": 0.3}) is False
    z3 = tg.generate().numpy()["z"]
    assert tg.recordings["generate"] == plan
    np.testing.assert_allclose(z3, 3 * z1, rtol=1e-5, atol=1e-7)
    n0 = tg.result.num_valid()
    assert tg.update(validity={"track_width": 1.2}) is False
    tg.generate()
    assert tg.recordings["generate"] == plan
    assert tg.result.num_valid() < n0
    assert tg.update(generator_params={"lobes": 5}) is True  # static: rebuilt
    assert "generate" not in tg.recordings


def test_config_refusals():
    with pytest.raises(
        ParamsError, match=r"TrackGenConfig.num_envs: expected an integer in \[1, 16777216\], got 0"
    ):
        TrackGenConfig(num_envs=0)
    with pytest.raises(ParamsError, match="TrackGenConfig.scale: expected a positive number"):
        TrackGenConfig(scale=-1.0)
    with pytest.raises(ParamsError, match="TrackGenConfig.env_seeds: expected 2 seeds, got 3"):
        TrackGenConfig(num_envs=2, env_seeds=[1, 2, 3])
    with pytest.raises(
        ParamsError,
        match=r"presets.track: expected TrackGenConfig fields .*"
        r"got \['num_env'\]",
    ):
        presets.track(num_env=3)
    with pytest.raises(
        ParamsError, match=r"validity.track_width: expected a value >= 0.0, got -1.0"
    ):
        TrackGenConfig(validity={"track_width": -1})


# -- capture classes and legacy specs -----------------------------------------------------
@wp.kernel
def _ring_k(seeds: wp.array(dtype=wp.int32), n: int, xy: wp.array(dtype=wp.vec2)):
    tid = wp.tid()
    e = tid // n
    th = 6.283185307179586 * float(tid - e * n) / float(n)
    r = 0.5 + 0.1 * float(seeds[e] & 7) / 7.0
    xy[tid] = wp.vec2(wp.cos(th), wp.sin(th)) * r


def _legacy_generate(seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx=None):
    # a 0.1 plugin: direct wp.launch on Warp's current stream and device
    wp.launch(
        _ring_k, config.num_envs * config.num_points, [seeds_wp, config.num_points, out_centerline]
    )
    out_valid_wp.fill_(1)


def _host_generate(seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx=None):
    with ctx.host():
        seeds = ctx.readback(seeds_wp)  # a host-side decision per call
        scratch.seen.append(int(seeds[0]))
    ctx.launch(
        _ring_k, config.num_envs * config.num_points, [seeds_wp, config.num_points, out_centerline]
    )
    ctx.fill(out_valid_wp, 1)


LEGACY = GeneratorSpec(
    name="test.legacy_ring", alloc_scratch=lambda c: None, generate=_legacy_generate
)
HOST = GeneratorSpec(
    name="test.host_ring",
    alloc_scratch=lambda c: types.SimpleNamespace(seen=[]),
    generate=_host_generate,
    capturable=False,
    accepts_ctx=True,
)


def test_legacy_plugin_runs_inside_scope_and_replays():
    tg = TrackGenerator(TrackGenConfig(num_envs=8, num_points=32, device="cpu"), generator=LEGACY)
    fp = tg.generate().fingerprint()
    tg.generate(epoch=2)
    assert tg.generate(epoch=0).fingerprint() == fp
    assert tg.result.num_valid() == 8


def test_legacy_plugin_on_another_stream_is_refused():
    fake = types.SimpleNamespace(recording=True, stream=object(), device="cpu")
    with pytest.raises(
        LegacyPluginStreamError,
        match=r"generator 'test.legacy_ring' \(accepts_ctx=False\): expected the "
        r"capture stream to be Warp's current stream",
    ):
        _check_legacy_stream(fake, "test.legacy_ring")


def test_host_generator_runs_eagerly_each_call():
    tg = TrackGenerator(TrackGenConfig(num_envs=4, num_points=32, device="cpu"), generator=HOST)
    assert tg.host_driven
    seen = tg.builder.stage  # the adapter
    before = procgen_nb.traffic()
    tg.generate()
    tg.generate()
    delta = procgen_nb.traffic() - before
    assert delta.readbacks == 2  # one per call, inside ctx.host()
    assert delta.replays == 4  # head and the rest replay around the eager generator
    assert seen is not None
    ctx = LaunchContext("cpu")
    with pytest.raises(
        NotCapturableError,
        match=r"generator 'test.host_ring': expected a "
        r"capturable generator inside a caller's recording, got a HOST one",
    ):
        ctx.record(lambda: tg.enqueue(ctx))


def test_enqueue_into_a_callers_recording():
    tg = presets.track(generator="polar", num_envs=8, num_points=32, device="cpu")
    fp = tg.generate().fingerprint()
    tg.generate(epoch=3)
    ctx = tg.ctx
    tg.config.epoch = 0
    ctx.fill(tg._epoch, 0)
    rec = ctx.record(lambda: tg.enqueue(ctx))
    rec.replay()
    assert tg.result.fingerprint() == fp


def test_readback_in_a_capturable_stage_is_refused():
    def gen(seeds_wp, config, out, valid, scratch, ctx=None):
        ctx.readback(seeds_wp)

    spec = GeneratorSpec(
        name="test.reads", alloc_scratch=lambda c: None, generate=gen, accepts_ctx=True
    )
    with pytest.raises(
        NotCapturableError,
        match=r"readback: expected host reads only inside "
        r"ctx.host\(\) of a HOST stage",
    ):
        TrackGenerator(TrackGenConfig(num_envs=2, num_points=16, device="cpu"), generator=spec)


# -- attributes and provides ---------------------------------------------------------------
@wp.kernel
def _circle_attr_k(raw: int, xy: wp.array(dtype=wp.vec2), u: wp.array(dtype=float)):
    tid = wp.tid()
    i = tid % raw
    th = 6.283185307179586 * float(i) / float(raw)
    xy[tid] = wp.vec2(wp.cos(th), wp.sin(th))
    u[tid] = float(i)


class _AttrStage(Stage):
    name = "test.attr"
    writes = ("xy", "u")
    attributes = {"u": "raw index of the point"}

    def raw_points(self, config, params):
        return 2 * config.num_points

    def build(self, b, params):
        xy, u = b.write("xy"), b.write("u")

        def enqueue(ctx):
            ctx.launch(_circle_attr_k, b.E * b.raw, [b.raw, xy, u])

        return enqueue


class _UniformStage(_AttrStage):
    name = "test.uniform"
    provides = frozenset({"uniform"})

    def raw_points(self, config, params):
        return config.num_points


def test_generator_attributes_are_resampled_with_xy():
    tg = TrackGenerator(
        TrackGenConfig(num_envs=3, num_points=32, device="cpu"), generator=_AttrStage
    )
    data = tg.generate().numpy()
    # evenly spaced on a circle sampled at twice the rate: point k came from raw point 2k
    np.testing.assert_allclose(data["u"], np.tile(2.0 * np.arange(32), (3, 1)), atol=1e-3)
    assert data["valid"].tolist() == [1, 1, 1]


def test_uniform_provider_skips_resampling():
    tg = TrackGenerator(
        TrackGenConfig(num_envs=2, num_points=32, device="cpu"), generator=_UniformStage
    )
    data = tg.generate().numpy()
    raw = tg._raw_xy.numpy().reshape(2, 32, 2)
    np.testing.assert_array_equal(data["xy"], raw)
    np.testing.assert_array_equal(data["u"], np.tile(np.arange(32.0), (2, 1)))


def test_undeclared_write_is_refused():
    class Sneaky(Stage):
        name = "test.sneaky"
        writes = ("xy",)

        def build(self, b, params):
            b.write("valid")

    with pytest.raises(
        GeneratorError,
        match=r"test.sneaky b.write: expected a name declared "
        r"in writes \['xy'\], got 'valid'",
    ):
        TrackGenerator(TrackGenConfig(num_envs=2, num_points=16, device="cpu"), generator=Sneaky)


@settings(max_examples=25, deadline=None)
@given(
    lobes=st.integers(3, 24),
    jitter=st.floats(0.0, 0.95),
    floor=st.floats(0.01, 1.0),
    seed=st.integers(0, 2**31 - 1),
)
def test_polar_is_always_a_simple_ccw_loop(lobes, jitter, floor, seed):
    tg = presets.track(
        generator="polar",
        generator_params={"lobes": lobes, "radius_jitter": jitter, "min_radius": floor},
        num_envs=8,
        num_points=64,
        seed=seed,
        device="cpu",
        # a closed simple loop of turning number +1 whatever the params: the drivable checks
        # (turn radius, clearance) off, since lobes=24 with a low floor makes tight corners
        validity={"min_turn_radius": 0.0, "track_width": 0.0},
    )
    data = tg.generate().numpy()
    assert data["valid"].tolist() == [1] * 8
    assert data["turning"].tolist() == [1] * 8
    assert np.hypot(data["xy"][..., 0], data["xy"][..., 1]).max() <= 1.125 + 1e-6


def test_mask_as_a_device_array(device):
    tg = _rough(device)
    first = tg.generate().numpy()
    mask = wp.zeros(128, dtype=wp.int32, device=tg.ctx.device)
    mask.fill_(0)
    wp.copy(mask, wp.array(np.eye(1, 128, 5, dtype=np.int32)[0], device=tg.ctx.device))
    second = tg.regenerate(mask).numpy()
    moved = np.any(second["xy"] != first["xy"], axis=(1, 2))
    assert np.flatnonzero(moved).tolist() == [5]
    with pytest.raises(ParamsError, match=r"regenerate mask: expected an \[128\] int32 array"):
        tg.regenerate(wp.zeros(4, dtype=wp.int32, device=tg.ctx.device))


def test_builder_refusals():
    class UsesStatic(Stage):
        name = "test.static"
        writes = ("xy",)
        Params = type("P", (Params_,), {"__annotations__": {"k": int}, "k": Field(2)})

        def build(self, b, params):
            b.param("k")

    with pytest.raises(
        GeneratorError,
        match=r"generator b.param: expected a dynamic field "
        r"\[\], got 'k'",
    ):
        TrackGenerator(
            TrackGenConfig(num_envs=2, num_points=16, device="cpu"), generator=UsesStatic
        )
    ctx = LaunchContext("cpu")
    with pytest.raises(
        ValueError,
        match=r"bounded_loop iterations: expected an integer >= 0, "
        r"got -1",
    ):
        ctx.bounded_loop(-1, lambda i: None)
    with pytest.raises(GeneratorError, match=r"b.salt stream: expected a non-empty name, got ''"):
        salt("")
