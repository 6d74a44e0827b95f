"""The built-in generators' 0.1 module functions (seed: "Legacy _src helpers", last paragraph).

Every name and parameter list is pinned; each ``generate_*_warp`` writes the registered
Stage's raw loop (and, given ``[E*N]`` points, the pipeline's resampled loop) byte for
byte (``bezier``, ``hull`` and ``voronoi`` with their ``repair`` off: the 0.1 bytes); a ``GeneratorSpec`` made from each pair passes the conformance kit; the sampling
helpers give the Stage's samples, and their ``*_per_env`` forms the same samples with the
per-env values clamped to the Params bounds; the z profile functions give the stage's
heights. The reference for every comparison is the registered Stage run by the pipeline
(``tg._raw_xy``, ``tg._gen_valid`` and the Stage's scratch buffers are what
``testing.check_generator`` reads too). The functions are deprecated but silent.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import numpy as np
import pytest
import warp as wp

from procgen_nb.errors import GeneratorError
from procgen_nb.track_gen._src import (
    warp_generate,
    warp_generate_checkpoint,
    warp_generate_hull,
    warp_generate_polar,
    warp_generate_repulsive,
    warp_generate_voronoi,
    warp_zprofile,
)
from procgen_nb.track_gen.config import TrackGenConfig
from procgen_nb.track_gen.generators import PolarParams
from procgen_nb.track_gen.pipeline import TrackGenerator
from procgen_nb.track_gen.plugin import GeneratorSpec, registry
from procgen_nb.track_gen.testing import check_generator

_GEN = (
    "(seeds_wp: 'wp.array', config: 'Any', out_centerline: 'wp.array', out_valid_wp: "
    "'wp.array', scratch: 'BuiltinScratch', ctx: 'Any' = None) -> 'None'"
)
_ALLOC = "(config: 'Any') -> 'BuiltinScratch'"

SIGNATURES = {
    warp_generate.bezier_alloc_scratch: _ALLOC,
    warp_generate.generate_centerline_warp: _GEN,
    warp_generate_hull.hull_alloc_scratch: _ALLOC,
    warp_generate_hull.generate_hull_warp: _GEN,
    warp_generate_polar.polar_alloc_scratch: _ALLOC,
    warp_generate_polar.generate_polar_warp: _GEN,
    warp_generate_voronoi.voronoi_alloc_scratch: _ALLOC,
    warp_generate_voronoi.generate_voronoi_warp: _GEN,
    warp_generate_checkpoint.checkpoint_alloc_scratch: _ALLOC,
    warp_generate_checkpoint.generate_checkpoint_warp: _GEN,
    warp_generate_repulsive.repulsive_alloc_scratch: _ALLOC,
    warp_generate_repulsive.generate_repulsive_warp: _GEN,
    warp_zprofile.apply_z_profile: "(seeds_wp: 'wp.array', config: 'Any', out_z_wp: "
    "'wp.array', ctx: 'Any' = None) -> 'None'",
    warp_zprofile.apply_z_profile_knots: "(seeds_wp: 'wp.array', knots: 'int', amplitude: "
    "'float', num_points: 'int', out_z_wp: 'wp.array', ctx: 'Any' = None) -> 'None'",
    warp_generate_polar.sample_polar_controls: "(seeds_wp: 'wp.array', lobes: 'int', "
    "radius_jitter: 'float', out_radii_wp: 'wp.array', out_phase_wp: 'wp.array', ctx: "
    "'Any' = None) -> 'None'",
    warp_generate_polar.sample_polar_controls_per_env: "(seeds_wp: 'wp.array', lobes: 'int', "
    "radius_jitter_wp: 'wp.array', out_radii_wp: 'wp.array', out_phase_wp: 'wp.array', "
    "ctx: 'Any' = None) -> 'None'",
    warp_generate_checkpoint.sample_checkpoint_rings: "(seeds_wp: 'wp.array', checkpoints: "
    "'int', radius_jitter: 'float', angle_jitter: 'float', scale: 'float', out_ctrl_wp: "
    "'wp.array', ctx: 'Any' = None) -> 'None'",
    warp_generate_checkpoint.sample_checkpoint_rings_per_env: "(seeds_wp: 'wp.array', "
    "checkpoints: 'int', radius_jitter_wp: 'wp.array', angle_jitter_wp: 'wp.array', scale: "
    "'float', out_ctrl_wp: 'wp.array', ctx: 'Any' = None) -> 'None'",
    warp_generate_voronoi.select_voronoi_anchors: "(seeds_wp: 'wp.array', grid: 'int', "
    "jitter: 'float', ring: 'float', wobble: 'float', ring_samples: 'int', scale: 'float', "
    "out_anchors_wp: 'wp.array', out_count_wp: 'wp.array', ctx: 'Any' = None) -> 'None'",
    warp_generate_voronoi.select_voronoi_anchors_per_env: "(seeds_wp: 'wp.array', grid: "
    "'int', jitter_wp: 'wp.array', ring_wp: 'wp.array', wobble_wp: 'wp.array', ring_samples: "
    "'int', scale: 'float', out_anchors_wp: 'wp.array', out_count_wp: 'wp.array', ctx: "
    "'Any' = None) -> 'None'",
}

# name -> (alloc_scratch, generate, non-default params)
PAIRS = {
    "bezier": (
        warp_generate.bezier_alloc_scratch,
        warp_generate.generate_centerline_warp,
        {"min_corners": 4, "max_corners": 7, "tension": 0.7},
    ),
    "checkpoint": (
        warp_generate_checkpoint.checkpoint_alloc_scratch,
        warp_generate_checkpoint.generate_checkpoint_warp,
        {"checkpoints": 7, "angle_jitter": 0.8},
    ),
    "hull": (
        warp_generate_hull.hull_alloc_scratch,
        warp_generate_hull.generate_hull_warp,
        {"min_points": 6, "max_points": 9, "displacement": 0.2},
    ),
    "polar": (
        warp_generate_polar.polar_alloc_scratch,
        warp_generate_polar.generate_polar_warp,
        {"lobes": 5, "radius_jitter": 0.6},
    ),
    "repulsive": (
        warp_generate_repulsive.repulsive_alloc_scratch,
        warp_generate_repulsive.generate_repulsive_warp,
        {"start_points": 12, "levels": 2, "iterations": 10},
    ),
    "voronoi": (
        warp_generate_voronoi.voronoi_alloc_scratch,
        warp_generate_voronoi.generate_voronoi_warp,
        {"grid": 5, "wobble": 0.4, "ring_samples": 48},
    ),
}

E, N = 8, 48


def _bytes(arr: wp.array) -> bytes:
    return np.ascontiguousarray(arr.numpy()).tobytes()


#: the generators whose Stage repairs its corners by default: the 0.1 functions write the
#: Stage's bytes with ``repair=False`` (the 0.1 tracks), whatever their config says
REPAIRED = {"bezier", "hull", "voronoi"}


def _pipeline(name, device, params=None, **kw):
    """``(cfg, tg)``: the config given to the 0.1 function (``params`` as they are) and the
    pipeline of the same Stage, its repair off."""
    cfg = TrackGenConfig(
        num_envs=E,
        num_points=N,
        seed=7,
        epoch=3,
        generator=name,
        device=device,
        generator_params=params,
        **kw,
    )
    if name in REPAIRED:
        off = dataclasses.replace(cfg, generator_params={**(params or {}), "repair": False})
        return cfg, TrackGenerator(off)
    return cfg, TrackGenerator(cfg)


@pytest.mark.parametrize("fn", list(SIGNATURES), ids=lambda f: f.__qualname__)
def test_signature_is_pinned(fn):
    assert str(inspect.signature(fn)) == SIGNATURES[fn]


@pytest.mark.parametrize("use_params", [False, True], ids=["defaults", "params"])
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_generate_writes_the_stage_raw_loop(name, use_params, device):
    alloc, generate, params = PAIRS[name]
    cfg, tg = _pipeline(name, device, params if use_params else None)
    scratch = alloc(cfg)
    assert scratch.raw == tg.raw
    raw = wp.zeros(E * scratch.raw, dtype=wp.vec2, device=device)
    valid = wp.zeros(E, dtype=wp.int32, device=device)
    generate(tg.seeds, cfg, raw, valid, scratch, ctx=tg.ctx)
    assert _bytes(raw) == _bytes(tg._raw_xy)
    assert _bytes(valid) == _bytes(tg._gen_valid)
    if tg._counts_written is not None:
        assert _bytes(scratch.count) == _bytes(tg._counts_written)
    # [E*N] (the GeneratorSpec contract): the pipeline's resampled loop, unless raw == N
    out = wp.zeros(E * N, dtype=wp.vec2, device=device)
    generate(tg.seeds, cfg, out, valid, scratch)  # ctx=None: a LaunchContext on cfg.device
    want = tg._raw_xy if scratch.raw == N else tg.result.xy
    assert _bytes(out) == _bytes(want)
    assert _bytes(valid) == _bytes(tg._gen_valid)


def test_from_legacy_config_subclass(device):
    @dataclasses.dataclass
    class LegacyConfig(TrackGenConfig):
        lobes: int = 5
        radius_jitter: float = 0.6

    cfg = LegacyConfig(num_envs=E, num_points=N, seed=7, epoch=3, device=device)
    scratch = warp_generate_polar.polar_alloc_scratch(cfg)
    assert scratch.params == PolarParams(lobes=5, radius_jitter=0.6)
    _, tg = _pipeline("polar", device, {"lobes": 5, "radius_jitter": 0.6})
    out = wp.zeros(E * N, dtype=wp.vec2, device=device)
    valid = wp.zeros(E, dtype=wp.int32, device=device)
    warp_generate_polar.generate_polar_warp(tg.seeds, cfg, out, valid, scratch)
    assert _bytes(out) == _bytes(tg._raw_xy)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_generator_spec_from_the_pair_conforms(name):
    alloc, generate, params = PAIRS[name]
    spec = GeneratorSpec(
        name=f"legacy.{name}", alloc_scratch=alloc, generate=generate, accepts_ctx=True
    )
    check_generator(spec, num_envs=E, num_points=N).raise_if_failed()
    spec = dataclasses.replace(spec, params=registry.get("generator", name).Params)
    if spec.params.dynamic_fields():
        # polar's radius_jitter and min_radius are dynamic: its Params cannot be a
        # GeneratorSpec's (the pair with Params is checked against the Stage's bytes above)
        report = check_generator(spec, num_envs=E, num_points=N, generator_params=params)
        assert not report.ok and "use a Stage" in str(report)
        return
    check_generator(spec, num_envs=E, num_points=N, generator_params=params).raise_if_failed()


@pytest.mark.parametrize("name", ["hull", "polar"])
def test_pair_as_a_legacy_plugin_runs_in_the_call_scope(name):
    alloc, generate, _ = PAIRS[name]
    spec = GeneratorSpec(name=f"legacy.{name}", alloc_scratch=alloc, generate=generate)
    check_generator(spec, num_envs=E, num_points=N).raise_if_failed()


def _stage_buffers(name, device, params=None):
    cfg, tg = _pipeline(name, device, params)
    return cfg, tg, tg.params, tg.builder.scratch_buffers


def test_sample_polar_controls_match_the_stage(device):
    _, tg, p, bufs = _stage_buffers("polar", device, {"lobes": 6, "radius_jitter": 0.5})
    radii = wp.zeros(E * 6, dtype=float, device=device)
    phase = wp.zeros(E, dtype=float, device=device)
    warp_generate_polar.sample_polar_controls(tg.seeds, 6, 0.5, radii, phase, ctx=tg.ctx)
    assert _bytes(radii) == _bytes(bufs["radii"]) and _bytes(phase) == _bytes(bufs["phase"])
    # per env: env e uses its own jitter, clamped to PolarParams' bounds [0, 1] (NaN: 0)
    jit = np.array([0.5, 0.0, 0.95, 2.0, -1.0, np.nan, 0.3, 0.5], dtype=np.float32)
    clamped = [0.5, 0.0, 0.95, 1.0, 0.0, 0.0, 0.3, 0.5]
    warp_generate_polar.sample_polar_controls_per_env(
        tg.seeds, 6, wp.array(jit, device=device), radii, phase
    )
    got_r, got_p = radii.numpy().reshape(E, 6), phase.numpy()
    for e, j in enumerate(clamped):
        warp_generate_polar.sample_polar_controls(tg.seeds, 6, j, radii, phase)
        assert got_r[e].tobytes() == radii.numpy().reshape(E, 6)[e].tobytes()
    assert got_p.tobytes() == _bytes(bufs["phase"])
    # pre-clamped jitters are the caller's job: the scalar form uses 2.0 as given
    warp_generate_polar.sample_polar_controls(tg.seeds, 6, 2.0, radii, phase)
    u = (bufs["radii"].numpy() - 1.0) / 0.5
    np.testing.assert_allclose(radii.numpy(), 1.0 + 2.0 * u, rtol=1e-5, atol=1e-5)


def test_sample_checkpoint_rings_match_the_stage(device):
    params = {"checkpoints": 9, "radius_jitter": 0.4, "angle_jitter": 0.7}
    cfg, tg, p, bufs = _stage_buffers("checkpoint", device, params)
    ctrl = wp.zeros(E * 9, dtype=wp.vec2, device=device)
    fn = warp_generate_checkpoint.sample_checkpoint_rings
    fn(tg.seeds, 9, 0.4, 0.7, cfg.scale, ctrl, ctx=tg.ctx)
    assert _bytes(ctrl) == _bytes(bufs["ctrl"])
    fn(tg.seeds, 9, 5.0, -1.0, cfg.scale, ctrl)  # clamped on the host to [0, 0.9], [0, 0.95]
    ref = wp.zeros_like(ctrl)
    fn(tg.seeds, 9, 0.9, 0.0, cfg.scale, ref)
    assert _bytes(ctrl) == _bytes(ref)
    rj = np.array([0.4, 0.4, 5.0, 0.0, 0.4, np.nan, 0.1, 0.4], dtype=np.float32)
    aj = np.array([0.7, 2.0, 0.7, 0.7, -3.0, 0.7, 0.2, 0.7], dtype=np.float32)
    warp_generate_checkpoint.sample_checkpoint_rings_per_env(
        tg.seeds, 9, wp.array(rj, device=device), wp.array(aj, device=device), cfg.scale, ctrl
    )
    got = ctrl.numpy().reshape(E, 9, 2)
    for e in range(E):
        r = 0.0 if np.isnan(rj[e]) else float(min(max(rj[e], 0.0), 0.9))
        fn(tg.seeds, 9, r, float(aj[e]), cfg.scale, ref)
        assert got[e].tobytes() == ref.numpy().reshape(E, 9, 2)[e].tobytes()


def test_select_voronoi_anchors_match_the_stage(device):
    params = {"grid": 5, "jitter": 0.7, "ring": 0.5, "wobble": 0.3, "ring_samples": 40}
    cfg, tg, p, bufs = _stage_buffers("voronoi", device, params)
    anchors = wp.zeros(E * 40, dtype=wp.vec2, device=device)
    count = wp.zeros(E, dtype=wp.int32, device=device)
    fn = warp_generate_voronoi.select_voronoi_anchors
    fn(tg.seeds, 5, 0.7, 0.5, 0.3, 40, cfg.scale, anchors, count, ctx=tg.ctx)
    want_c = bufs["anchor_count"].numpy()
    assert count.numpy().tolist() == want_c.tolist() and (want_c >= 3).all()
    got_a, want_a = anchors.numpy().reshape(E, 40, 2), bufs["anchors"].numpy().reshape(E, 40, 2)
    for e in range(E):
        assert got_a[e, : want_c[e]].tobytes() == want_a[e, : want_c[e]].tobytes()
    jit = np.array([0.7, 1.5, 0.7, 0.0, 0.7, 0.7, 0.7, 0.2], dtype=np.float32)
    ring = np.array([0.5, 0.5, 0.1, 0.5, 0.95, 0.5, 0.5, 0.3], dtype=np.float32)
    wob = np.array([0.3, 0.3, 0.3, 0.3, 0.3, 9.0, np.nan, 0.1], dtype=np.float32)
    arrs = [wp.array(a, device=device) for a in (jit, ring, wob)]
    warp_generate_voronoi.select_voronoi_anchors_per_env(
        tg.seeds, 5, *arrs, 40, cfg.scale, anchors, count
    )
    got_a, got_c = anchors.numpy().reshape(E, 40, 2), count.numpy()
    ra, rc = wp.zeros_like(anchors), wp.zeros_like(count)
    for e in range(E):
        w = 0.0 if np.isnan(wob[e]) else float(wob[e])
        fn(tg.seeds, 5, float(jit[e]), float(ring[e]), w, 40, cfg.scale, ra, rc)
        c = int(rc.numpy()[e])
        assert got_c[e] == c
        assert got_a[e, :c].tobytes() == ra.numpy().reshape(E, 40, 2)[e, :c].tobytes()


@pytest.mark.parametrize("zp", [True, {"knots": 5, "amplitude": 0.3}], ids=["default", "dict"])
def test_apply_z_profile_matches_the_stage(zp, device):
    cfg, tg = _pipeline("polar", device, z_profile=zp)
    want = _bytes(tg.result.attributes["z"])
    z = wp.zeros(E * N, dtype=float, device=device)
    warp_zprofile.apply_z_profile(tg.seeds, cfg, z, ctx=tg.ctx)
    assert _bytes(z) == want
    knots, amp = (6, 0.1) if zp is True else (5, 0.3)
    z2 = wp.zeros_like(z)
    warp_zprofile.apply_z_profile_knots(tg.seeds, knots, amp, N, z2)
    assert _bytes(z2) == want
    warp_zprofile.apply_z_profile(tg.seeds, dataclasses.replace(cfg, z_profile=None), z2)
    assert not z2.numpy().any()


def test_functions_are_silent():
    cfg = TrackGenConfig(num_envs=2, num_points=16, device="cpu")
    seeds = wp.array([1, 2], dtype=wp.int32, device="cpu")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        s = warp_generate_polar.polar_alloc_scratch(cfg)
        out, valid = wp.zeros(32, dtype=wp.vec2), wp.zeros(2, dtype=wp.int32)
        warp_generate_polar.generate_polar_warp(seeds, cfg, out, valid, s)
        radii, phase = wp.zeros(16, dtype=float), wp.zeros(2, dtype=float)
        warp_generate_polar.sample_polar_controls(seeds, 8, 0.3, radii, phase)
        z = wp.zeros(32, dtype=float)
        warp_zprofile.apply_z_profile(seeds, dataclasses.replace(cfg, z_profile=True), z)
    assert [str(w.message) for w in seen] == []


def test_refusals():
    cfg = TrackGenConfig(num_envs=2, num_points=16, device="cpu")
    seeds = wp.array([1, 2], dtype=wp.int32, device="cpu")
    s = warp_generate.bezier_alloc_scratch(cfg)
    valid = wp.zeros(2, dtype=wp.int32)
    with pytest.raises(GeneratorError, match=r"out_centerline: expected 32 points .* got 31"):
        warp_generate.generate_centerline_warp(seeds, cfg, wp.zeros(31, dtype=wp.vec2), valid, s)
    with pytest.raises(GeneratorError, match=r"scratch: expected what hull's alloc_scratch"):
        warp_generate_hull.generate_hull_warp(seeds, cfg, wp.zeros(32, dtype=wp.vec2), valid, s)
    with pytest.raises(GeneratorError, match=r"min_corners <= max_corners"):
        warp_generate.bezier_alloc_scratch(
            dataclasses.replace(cfg, generator_params={"min_corners": 9, "max_corners": 5})
        )
    with pytest.raises(GeneratorError, match=r"lobes: expected an integer in \[3, 64\], got 2"):
        warp_generate_polar.sample_polar_controls(
            seeds, 2, 0.3, wp.zeros(4, dtype=float), wp.zeros(2, dtype=float)
        )
    with pytest.raises(GeneratorError, match=r"radius_jitter: expected a finite number, got nan"):
        warp_generate_polar.sample_polar_controls(
            seeds, 3, float("nan"), wp.zeros(6, dtype=float), wp.zeros(2, dtype=float)
        )
    with pytest.raises(GeneratorError, match=r"amplitude: expected a number >= 0, got -1"):
        warp_zprofile.apply_z_profile_knots(seeds, 4, -1, 8, wp.zeros(16, dtype=float))
