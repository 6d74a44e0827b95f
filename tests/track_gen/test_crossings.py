"""The crossing test (ops.is_simple, ops.self_intersections) against shapely (GEOS) and a
brute force, ring by ring, on smooth, noisy and random-walk loops and on degenerate ones."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
import track_reference as ref
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from track_reference import upload_tracks

from procgen_nb.track_gen import ops
from procgen_nb.track_gen.exec import LaunchContext


def smooth_rings(rng: np.random.Generator, e: int, n: int) -> np.ndarray:
    th = 2 * np.pi * np.arange(n) / n
    r = np.ones((e, n))
    for h in range(2, 8):
        r += rng.uniform(-0.25, 0.25, (e, 1)) / (h / 2) * np.cos(h * th + rng.uniform(0, 7, (e, 1)))
    return np.stack([r * np.cos(th), r * np.sin(th)], -1).astype(np.float32)


def noisy_rings(rng: np.random.Generator, e: int, n: int) -> np.ndarray:
    xy = smooth_rings(rng, e, n).astype(np.float64)
    return (xy + rng.normal(0, 0.4 * 2 * np.pi / n, xy.shape)).astype(np.float32)


def walk_rings(rng: np.random.Generator, e: int, n: int) -> np.ndarray:
    steps = rng.normal(0, 1, (e, n, 2))
    return np.cumsum(steps - steps.mean(1, keepdims=True), 1).astype(np.float32)


def geos_simple(xy: np.ndarray) -> np.ndarray:
    e, n = xy.shape[:2]
    rings = shapely.linearrings(
        xy.reshape(-1, 2).astype(np.float64), indices=np.repeat(np.arange(e), n)
    )
    return shapely.is_simple(rings)


def run_op(xy: np.ndarray, device: str, op: str, **kw) -> np.ndarray:
    e, n = xy.shape[:2]
    ctx = LaunchContext(device)
    out = wp.zeros(e, dtype=wp.int32, device=ctx.device)
    grid = ops.GridScratch.alloc(ctx.device, e, n)
    getattr(ops, op)(ctx, upload_tracks(xy, ctx.device), e, n, out, grid, **kw)
    return out.numpy()


FAMILIES = {"smooth": smooth_rings, "noisy": noisy_rings, "walk": walk_rings}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("n", [64, 256])
def test_is_simple_agrees_with_geos_ring_by_ring(family, n, device):
    xy = FAMILIES[family](np.random.default_rng(n), 400, n)
    want = geos_simple(xy)
    got = run_op(xy, device, "is_simple")
    np.testing.assert_array_equal(got == 1, want)
    if family == "noisy":
        assert 0.1 < want.mean() < 0.9  # both outcomes, many near misses


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_self_intersections_count_and_first_only_match_brute_force(family, device):
    xy = FAMILIES[family](np.random.default_rng(3), 150, 48)
    want = np.array([ref.crossings(t) for t in xy])
    np.testing.assert_array_equal(run_op(xy, device, "self_intersections"), want)
    first = run_op(xy, device, "self_intersections", first_only=True)
    np.testing.assert_array_equal(first, (want > 0).astype(np.int32))


_coord = st.integers(-3, 3)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_coord, _coord), min_size=3, max_size=12))
def test_is_simple_agrees_with_geos_on_degenerate_integer_rings(points):
    # small integer coordinates: repeated points, spikes, collinear overlaps, touching
    # vertices, zero-area rings
    xy = np.array(points, dtype=np.float32)[None]
    assert run_op(xy, "cpu", "is_simple")[0] == int(geos_simple(xy)[0]), points
    # the count is the brute force's, whatever the degeneracy
    assert run_op(xy, "cpu", "self_intersections")[0] == ref.crossings(xy[0])


# multiples of 2**-20 in [-1, 1]: float32 values whose float64 orientations are exact (the
# domain where the predicates are exact: coordinates of one scale, not 1 beside 2**-52)
_fine = st.integers(-(1 << 20), 1 << 20).map(lambda k: k / (1 << 20))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_fine, _fine), min_size=3, max_size=40), st.integers(0, 39))
def test_is_simple_agrees_with_geos_on_float_rings(points, dup):
    xy = np.array(points, dtype=np.float32)
    # a repeated point somewhere (GEOS drops it)
    k = dup % len(xy)
    xy = np.insert(xy, k, xy[k], axis=0)[None]
    assert run_op(xy, "cpu", "is_simple")[0] == int(geos_simple(xy)[0]), xy.tolist()


def test_is_simple_hand_cases():
    cases = {
        "square": ([(0, 0), (1, 0), (1, 1), (0, 1)], 1),
        "repeated point": ([(0, 0), (1, 0), (1, 0), (1, 1), (0, 1)], 1),
        "closing repeat": ([(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)], 1),
        "spike": ([(0, 0), (2, 0), (1, 0), (1, 1), (0, 1)], 0),
        "collinear run": ([(0, 0), (1, 0), (2, 0), (2, 1), (0, 1)], 1),
        "vertex on an edge": ([(0, 0), (2, 0), (2, 2), (1, 0), (0, 2)], 0),
        "flat triangle": ([(0, 0), (1, 0), (2, 0)], 0),
        "bow tie": ([(0, 0), (1, 1), (1, 0), (0, 1)], 0),
        "one point": ([(3, 3), (3, 3), (3, 3)], 1),
    }
    for name, (pts, want) in cases.items():
        xy = np.array(pts, dtype=np.float32)[None]
        assert int(geos_simple(xy)[0]) == want, name  # the reference says so too
        assert run_op(xy, "cpu", "is_simple")[0] == want, name


def test_check_tracks_first_crossing_keeps_the_verdicts(device):
    from test_validity import run_checks

    xy = ref.random_loops(np.random.default_rng(11), 600, 48)
    full = run_checks(xy, device)
    first = run_checks(xy, device, first_crossing=True)
    np.testing.assert_array_equal(first["valid"], full["valid"])
    np.testing.assert_array_equal(first["reason"], full["reason"])
    np.testing.assert_array_equal(first["crossings"], (full["crossings"] > 0).astype(np.int32))
