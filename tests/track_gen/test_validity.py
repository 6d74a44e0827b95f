"""The validity stage against independent references (brute force, summed angles)."""

from __future__ import annotations

import numpy as np
import pytest
import track_reference as ref
import warp as wp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from track_reference import upload_tracks

from procgen_nb.track_gen import ops, presets
from procgen_nb.track_gen.exec import LaunchContext


def run_checks(xy: np.ndarray, device: str, r_min: float = 0.0, width: float = 0.0, **kw) -> dict:
    """Runs ops.check_tracks on [E, N, 2] loops and reads every output back."""
    E, N = xy.shape[:2]
    ctx = LaunchContext(device)
    grid = ops.GridScratch.alloc(ctx.device, E, N)
    outs = {
        k: wp.zeros(E, dtype=wp.int32, device=ctx.device)
        for k in ("valid", "reason", "crossings", "turning")
    }
    ops.check_tracks(
        ctx,
        upload_tracks(xy, ctx.device),
        E,
        N,
        grid,
        wp.array([r_min], dtype=float, device=ctx.device),
        wp.array([width], dtype=float, device=ctx.device),
        outs["valid"],
        outs["reason"],
        outs["crossings"],
        outs["turning"],
        **kw,
    )
    return {k: v.numpy() for k, v in outs.items()}


def test_crossings_and_turning_match_brute_force_on_random_loops(device):
    rng = np.random.default_rng(20261130)
    xy = ref.random_loops(rng, 3000, 48)
    got = run_checks(xy, device)
    want_cross = np.array([ref.crossings(t) for t in xy])
    want_turn = np.array([ref.turning_number(t) for t in xy])
    np.testing.assert_array_equal(got["crossings"], want_cross)
    np.testing.assert_array_equal(got["turning"], want_turn)
    want_valid = np.array([ref.valid(t) for t in xy], dtype=np.int32)
    np.testing.assert_array_equal(got["valid"], want_valid)
    # the sample exercises both outcomes and every turning number class
    assert 0.2 < want_valid.mean() < 0.8
    assert {0, 1, -1} <= set(want_turn.tolist())


def test_self_intersections_op_matches_brute_force(device):
    rng = np.random.default_rng(7)
    xy = ref.random_loops(rng, 500, 64)
    E, N = xy.shape[:2]
    ctx = LaunchContext(device)
    out = wp.zeros(E, dtype=wp.int32, device=ctx.device)
    ops.self_intersections(
        ctx, upload_tracks(xy, ctx.device), E, N, out, ops.GridScratch.alloc(ctx.device, E, N)
    )
    np.testing.assert_array_equal(out.numpy(), [ref.crossings(t) for t in xy])


def test_radius_and_clearance_match_reference_on_generated_tracks(device):
    tg = presets.track(
        generator="checkpoint",
        generator_params={"radius_jitter": 0.6, "angle_jitter": 0.9, "checkpoints": 12},
        num_envs=400,
        num_points=64,
        device=device,
    )
    xy = tg.generate().numpy()["xy"]
    for r_min, width in [(0.08, 0.0), (0.0, 0.12), (0.05, 0.08)]:
        got = run_checks(xy, device, r_min, width)
        want = np.array([ref.valid(t, r_min, width) for t in xy], dtype=np.int32)
        np.testing.assert_array_equal(got["valid"], want)
        assert 0 < want.sum() < len(want)
        bits = got["reason"]
        np.testing.assert_array_equal(
            (bits & 16) != 0, [not ref.min_radius_ok(t, r_min) for t in xy]
        )
        np.testing.assert_array_equal(
            (bits & 32) != 0, [not ref.clearance_ok(t, width) for t in xy]
        )


def test_not_closed_envs_are_invalid(device):
    xy = np.stack([np.c_[np.cos(t), np.sin(t)] for t in [np.linspace(0, 6, 16)] * 3]).astype(
        np.float32
    )
    xy[1, 5] = np.nan
    xy[2, 7] = xy[2, 6]  # a zero-length segment
    got = run_checks(xy, device)
    assert got["valid"].tolist() == [1, 0, 0]
    assert got["reason"].tolist() == [0, 2, 2]


_coord = st.integers(-4, 4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_coord, _coord), min_size=4, max_size=12))
def test_crossings_exact_on_integer_polygons(points):
    xy = np.array(points, dtype=np.float32)[None]
    n = xy.shape[1]
    ctx = LaunchContext("cpu")
    out = wp.zeros(1, dtype=wp.int32, device="cpu")
    ops.self_intersections(
        ctx, upload_tracks(xy, "cpu"), 1, n, out, ops.GridScratch.alloc("cpu", 1, n)
    )
    assert out.numpy()[0] == ref.crossings(xy[0])
    p = xy[0].astype(np.float64)
    u = p - np.roll(p, 1, axis=0)
    v = np.roll(p, -1, axis=0) - p
    cross = u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]
    reversal = (cross == 0) & ((u * v).sum(1) < 0)
    assume(ref.closed(xy[0]) and not reversal.any())
    got = run_checks(xy, "cpu")
    assert got["crossings"][0] == ref.crossings(xy[0])
    assert got["turning"][0] == ref.turning_number(xy[0])
    assert got["valid"][0] == int(ref.valid(xy[0]))


@pytest.mark.parametrize("n", [8, 64, 256])
def test_turning_number_op_of_circles(n, device):
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    xy = np.stack(
        [
            np.c_[np.cos(t), np.sin(t)],
            np.c_[np.cos(-t), np.sin(-t)],
            np.c_[np.cos(2 * t), np.sin(2 * t)],
        ]
    ).astype(np.float32)
    ctx = LaunchContext(device)
    out = wp.zeros(3, dtype=wp.int32, device=ctx.device)
    ops.turning_number(ctx, upload_tracks(xy, ctx.device), 3, n, out)
    assert out.numpy().tolist() == [1, -1, 2 if n > 8 else ref.turning_number(xy[2])]
