"""Resampled points sit where a NumPy reference puts them, evenly spaced along the loop.

Coarse, irregular loops (few vertices, uneven edges) make the check bite: a resampler
that snapped each point to a vertex instead of interpolating along the edge would still
put every point on the loop, but not at the right arc length.
"""

from __future__ import annotations

import numpy as np
import pytest
import resample_reference as ref
import warp as wp

from procgen_nb.track_gen import ops
from procgen_nb.track_gen._src import warp_pipeline
from procgen_nb.track_gen.exec import LaunchContext

ATOL = 1e-4  # float32 sums over a loop of length ~5; an edge is ~0.5 long


def _star_loops(seed: int, count: int, m: int) -> np.ndarray:
    """``count`` star-shaped loops of ``m`` vertices, radii uneven, angles uneven."""
    rng = np.random.default_rng(seed)
    ang = np.sort(rng.uniform(0, 2 * np.pi, (count, m)), axis=1)
    r = rng.uniform(0.4, 1.0, (count, m))
    return np.stack([r * np.cos(ang), r * np.sin(ang)], axis=-1).astype(np.float32)


def _upload(loops: np.ndarray, device: str) -> wp.array:
    return wp.array(loops.reshape(-1, 2), dtype=wp.vec2, device=device)


@pytest.mark.parametrize("spacing", [0.05, 0.137, 0.31])
def test_constant_spacing_points_match_the_reference(device, spacing):
    E, m, mp = 6, 9, 256
    loops = _star_loops(11, E, m)
    dst = wp.zeros(E * mp, dtype=wp.vec2, device=device)
    count = wp.zeros(E, dtype=wp.int32, device=device)
    trunc = wp.zeros(E, dtype=wp.int32, device=device)
    ctx = LaunchContext(device)
    ops.resample_constant_spacing(ctx, _upload(loops, device), E, m, spacing, dst, mp, count, trunc)
    got = dst.numpy().reshape(E, mp, 2)
    counts = count.numpy()
    assert trunc.numpy().tolist() == [0] * E
    for e in range(E):
        want = ref.constant_spacing(loops[e], spacing)
        k = len(want)
        assert counts[e] == k
        np.testing.assert_allclose(got[e, :k], want, atol=ATOL)
        assert np.isnan(got[e, k:]).all()
        # the spacing itself: arc positions of the points step by perimeter / k
        pos = ref.arc_positions(loops[e], got[e, :k])
        step = ref.perimeter(loops[e]) / k
        np.testing.assert_allclose(np.diff(pos), step, atol=ATOL)


def test_constant_spacing_of_the_legacy_helper_matches_the_reference(device):
    E, m, spacing = 3, 7, 0.2
    loops = _star_loops(5, E, m)
    dst, count, _ = warp_pipeline.resample_constant_spacing(
        _upload(loops, device), E, m, spacing, max_points=64, ctx=LaunchContext(device)
    )
    got = dst.numpy().reshape(E, 64, 2)
    for e in range(E):
        want = ref.constant_spacing(loops[e], spacing)
        assert count.numpy()[e] == len(want)
        np.testing.assert_allclose(got[e, : len(want)], want, atol=ATOL)


def test_a_square_by_hand(device):
    # a 2 x 2 square (perimeter 8) at spacing 0.75: floor(8 / 0.75) = 10 points, 0.8 apart,
    # so point 3 is 0.4 up the second edge: (1, -1 + 0.4)
    sq = np.array([[[-1, -1], [1, -1], [1, 1], [-1, 1]]], dtype=np.float32)
    dst = wp.zeros(16, dtype=wp.vec2, device=device)
    count = wp.zeros(1, dtype=wp.int32, device=device)
    trunc = wp.zeros(1, dtype=wp.int32, device=device)
    ops.resample_constant_spacing(
        LaunchContext(device), _upload(sq, device), 1, 4, 0.75, dst, 16, count, trunc
    )
    assert count.numpy().tolist() == [10]
    got = dst.numpy()[:10]
    np.testing.assert_allclose(got[1], [-0.2, -1.0], atol=1e-6)
    np.testing.assert_allclose(got[3], [1.0, -0.6], atol=1e-6)
    np.testing.assert_allclose(got[6], [0.2, 1.0], atol=1e-6)


@pytest.mark.parametrize("n", [16, 50])
def test_arc_resample_and_resample_uniform_match_the_reference(device, n):
    E, m = 5, 8
    loops = _star_loops(23, E, m)
    src = _upload(loops, device)
    ctx = LaunchContext(device)
    a = wp.zeros(E * n, dtype=wp.vec2, device=device)
    ops.arc_resample(ctx, src, a, ops.ArcScratch.alloc(device, E, m, n), E, m, n)
    b = wp.zeros(E * n, dtype=wp.vec2, device=device)
    s = ops.ArcScratch.alloc(device, E, m, n)
    ops.resample_uniform(ctx, src, E, m, b, n, s.seg, s.cum, s.counts, s.t)
    for got in (a.numpy().reshape(E, n, 2), b.numpy().reshape(E, n, 2)):
        for e in range(E):
            np.testing.assert_allclose(got[e], ref.arc_resample(loops[e], n), atol=ATOL)
            pos = ref.arc_positions(loops[e], got[e])
            np.testing.assert_allclose(np.diff(pos), ref.perimeter(loops[e]) / n, atol=ATOL)
