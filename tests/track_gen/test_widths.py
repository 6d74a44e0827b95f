"""Widths, direction and the boundary-crossing op (track_gen.widths), against NumPy and
shapely references."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procgen_nb.device import available_devices as pg_devices
from procgen_nb.errors import ParamsError, ProcgenError
from procgen_nb.track_gen import REASONS, TrackGenConfig, exec, presets, widths


def _band(xy: np.ndarray, left: np.ndarray, right: np.ndarray):
    """The boundaries in float64, normals of the central tangent (the op's definition)."""
    t = np.roll(xy, -1, 0) - np.roll(xy, 1, 0)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    n = np.stack([-t[:, 1], t[:, 0]], 1)
    return xy + n * left[:, None], xy - n * right[:, None]


def _reference_ok(xy, left, right) -> bool:
    lb, rb = _band(xy.astype(np.float64), left.astype(np.float64), right.astype(np.float64))
    a, b = shapely.LinearRing(lb), shapely.LinearRing(rb)
    d = np.roll(xy, -1, 0) - xy
    folds = [np.einsum("ij,ij->i", np.roll(q, -1, 0) - q, d) <= 0 for q in (lb, rb)]
    return bool(a.is_simple and b.is_simple and not a.intersects(b) and not np.any(folds))


def _run_op(loops: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    E, N = loops.shape[:2]
    ctx = exec.LaunchContext("cpu")
    out = wp.zeros(E, dtype=wp.int32, device="cpu")
    widths.boundary_crossings(
        ctx,
        wp.array(loops.reshape(-1, 2).astype(np.float32), dtype=wp.vec2, device="cpu"),
        wp.array(left.reshape(-1).astype(np.float32), dtype=float, device="cpu"),
        wp.array(right.reshape(-1).astype(np.float32), dtype=float, device="cpu"),
        E,
        N,
        out,
        widths.BoundaryScratch("cpu", E, N),
        wp.full(E, 1, dtype=wp.int32, device="cpu"),
        wp.zeros(E, dtype=wp.int32, device="cpu"),
    )
    return out.numpy()


def _wobbly(n: int, lobes: int, amp: float, phase: float) -> np.ndarray:
    t = np.arange(n) / n * 2 * np.pi
    r = 1.0 + amp * np.sin(lobes * t + phase)
    return np.stack([r * np.cos(t), r * np.sin(t)], 1)


def test_circle_band_is_clean_and_too_wide_crosses():
    xy = _wobbly(32, 0, 0.0, 0.0)[None]
    ok = _run_op(xy, np.full((1, 32), 0.2), np.full((1, 32), 0.2))
    assert ok.tolist() == [0]
    # the left (inner) boundary past the centre is a smaller circle run backwards: no
    # crossing of the two, but every left segment folded
    wide = _run_op(xy, np.full((1, 32), 1.5), np.full((1, 32), 0.2))
    assert wide[0] >= 32  # (and the cut now crosses the inner circle)
    # a boundary crossing the other one: the right (outer) side swings inside the left
    right = np.full((1, 32), 0.2)
    right[0, 5] = -1.0
    assert _run_op(xy, np.full((1, 32), 0.2), right)[0] > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lobes=st.integers(0, 6),
    amp=st.floats(0.0, 0.45),
    phase=st.floats(0.0, 6.28),
    wl=st.floats(0.01, 0.9),
    wr=st.floats(0.01, 0.9),
    n=st.sampled_from([12, 33, 64]),
)
def test_boundary_crossings_match_shapely(lobes, amp, phase, wl, wr, n):
    xy = _wobbly(n, lobes, amp, phase)
    left = np.full(n, wl) * (1 + 0.3 * np.cos(np.arange(n) / n * 2 * np.pi))
    right = np.full(n, wr)
    got = _run_op(xy[None], left[None], right[None])[0]
    assert (got == 0) == _reference_ok(xy, left, right)


def test_boundary_crossings_refuses_a_short_array():
    ctx = exec.LaunchContext("cpu")
    with pytest.raises(ParamsError, match="left"):
        widths.boundary_crossings(
            ctx,
            wp.zeros(16, dtype=wp.vec2),
            wp.zeros(3, dtype=float),
            wp.zeros(16, dtype=float),
            1,
            16,
            wp.zeros(1, dtype=wp.int32),
            widths.BoundaryScratch("cpu", 1, 16),
            wp.full(1, 1, dtype=wp.int32),
            wp.zeros(1, dtype=wp.int32),
        )


@pytest.mark.parametrize("generator, n", [("polar", 40), ("bezier", 41)])
def test_cw_reverses_each_loop_keeping_point_zero(generator, n, device):
    kw = dict(num_envs=6, num_points=n, z_profile=True, device=device)
    a = presets.track(generator, direction="ccw", **kw).result.numpy()
    b = presets.track(generator, direction="cw", **kw).result.numpy()
    idx = (-np.arange(n)) % n  # i -> (N - i) % N (an odd N has no middle point to keep)
    assert np.array_equal(b["xy"], a["xy"][:, idx])
    assert np.array_equal(b["z"], a["z"][:, idx])
    assert np.array_equal(b["turning"], -a["turning"])
    assert np.array_equal(b["valid"], a["valid"])


def test_random_direction_is_per_env_seed():
    kw = dict(num_points=40, direction="random")
    big = presets.track("polar", num_envs=64, **kw).result.numpy()
    assert 10 < (big["turning"] == -1).sum() < 54  # both ways, about half each
    # env seed 37 alone runs the same way as env 37 of the batch
    one = presets.track("polar", num_envs=1, env_seeds=[37], **kw).result.numpy()
    assert one["turning"][0] == big["turning"][37]
    assert np.array_equal(one["xy"][0], big["xy"][37])


def test_constant_and_varying_widths():
    N = 128
    cw = presets.track("polar", num_envs=4, num_points=N, width={"left": 0.03, "right": 0.02})
    r = cw.result.numpy()
    assert np.all(r["width_left"] == np.float32(0.03))
    assert np.all(r["width_right"] == np.float32(0.02))
    v = 0.5
    g = presets.track("polar", num_envs=4, num_points=N, width={"left": 0.03, "variation": v})
    r = g.result.numpy()
    wl, wr = r["width_left"], r["width_right"]
    assert wl.min() >= 0.03 * (1 - v) - 1e-7 and wl.max() <= 0.03 * (1 + v) + 1e-7
    assert wl.std(axis=1).min() > 1e-3  # it varies along every lap
    assert not np.allclose(wl, wr)  # each side its own wave
    assert not np.allclose(wl[0], wl[1])  # each env its own stream
    # smooth and periodic: the step across the seam is no larger than the steps inside
    steps = np.abs(np.diff(wl, axis=1)).max(axis=1)
    assert np.all(np.abs(wl[:, 0] - wl[:, -1]) <= 1.5 * steps)
    same = presets.track(
        "polar",
        num_envs=4,
        num_points=N,
        width={"left": 0.03, "right": 0.015, "variation": v, "same": True},
    ).result.numpy()
    np.testing.assert_allclose(same["width_left"], 2 * same["width_right"], rtol=1e-6)


def test_too_wide_is_rejected_by_validity(device):
    g = presets.track(
        "polar", num_envs=8, num_points=64, width={"left": 0.6, "right": 0.6}, device=device
    )
    r = g.result.numpy()
    assert r["valid"].sum() == 0 and np.all(r["reason"] & widths.BOUNDARY_CROSSING)
    assert "boundaries" in REASONS[widths.BOUNDARY_CROSSING]
    assert g.result.num_valid() == 0
    ok = presets.track("polar", num_envs=8, num_points=64, width={"left": 0.02}).result.numpy()
    assert ok["valid"].sum() == 8 and not np.any(ok["reason"] & widths.BOUNDARY_CROSSING)
    unchecked = presets.track(
        "polar", num_envs=8, num_points=64, width={"left": 0.6, "right": 0.6, "check": False}
    ).result.numpy()
    assert unchecked["valid"].sum() == 8


def test_regenerate_keeps_the_other_envs():
    g = presets.track(
        "bezier", num_envs=16, num_points=48, direction="random", width={"variation": 0.4}
    )
    before = g.result.numpy()
    mask = np.zeros(16, np.int32)
    mask[3] = 1
    after = g.regenerate(mask).numpy()
    keep = np.arange(16) != 3
    for key in ("xy", "width_left", "width_right", "turning"):
        assert np.array_equal(after[key][keep], before[key][keep])
    assert not np.array_equal(after["xy"][3], before["xy"][3])


@pytest.mark.skipif(
    not any(d.startswith("cuda") for d in pg_devices()), reason="no CUDA device on this machine"
)
def test_cuda_widths_and_directions_match_the_cpu():
    kw = dict(num_envs=32, num_points=96, direction="random", width={"variation": 0.4})
    cpu = presets.track("bezier", device="cpu", **kw).result.numpy()
    gpu = presets.track("bezier", device="cuda:0", **kw).result.numpy()
    for key in ("turning", "valid", "reason"):
        assert np.array_equal(cpu[key], gpu[key]), key
    for key in ("xy", "width_left", "width_right"):
        np.testing.assert_allclose(cpu[key], gpu[key], atol=1e-5)


def test_default_config_adds_no_attribute():
    g = presets.track("polar", num_envs=2, num_points=32)
    assert g.result.attributes == {}
    assert not any(s.name.startswith(("direction", "widths")) for s in g._steps)


@pytest.mark.parametrize(
    "kw, needle",
    [
        ({"direction": "left"}, "TrackGenConfig.direction"),
        ({"direction": None}, "TrackGenConfig.direction"),
        ({"width": "wide"}, "TrackGenConfig.width"),
        ({"width": {"left": 0.0}}, "TrackGenConfig.width.left"),
        ({"width": {"variation": 2.0}}, "variation"),
        ({"width": {"lanes": 2}}, "lanes"),
    ],
)
def test_bad_width_and_direction(kw, needle):
    with pytest.raises(ParamsError, match=needle) as info:
        TrackGenConfig(**kw)
    assert isinstance(info.value, ProcgenError) and "expected" in str(info.value)
