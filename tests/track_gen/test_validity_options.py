"""The validity stage's options: the early-exit crossing test the pipeline records (with the
full counts when ``crossings`` is read), and the opt-in road-overlap check
(``ValidityParams(road_overlap=True)``), each against an independent reference."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
import track_reference as ref
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_validity import run_checks
from track_reference import upload_tracks

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import REASONS, TrackGenConfig, TrackGenerator, ops
from procgen_nb.track_gen.exec import LaunchContext
from procgen_nb.track_gen.ops._validity import count_crossing_envs
from procgen_nb.track_gen.plugin import Stage

SELF_INTERSECTING, NOT_CLOSED, ROAD = 4, 2, 64
NO_DRIVE = {"min_turn_radius": 0.0, "track_width": 0.0}


def fixed_loops(loops: np.ndarray) -> type[Stage]:
    """A generator Stage whose env e is ``loops[e]`` ([E, N, 2]), unresampled."""
    E, N = loops.shape[:2]

    class Fixed(Stage):
        name = "test.fixed_loops"
        writes = ("xy",)
        provides = frozenset({"uniform"})

        def raw_points(self, config, params):
            return N

        def build(self, b, params):
            xy = b.write("xy")
            src = upload_tracks(loops, xy.device)

            def enqueue(ctx):
                ctx.copy(xy, src)

            return enqueue

    return Fixed


def pipeline(loops: np.ndarray, **validity) -> TrackGenerator:
    E, N = loops.shape[:2]
    cfg = TrackGenConfig(num_envs=E, num_points=N, device="cpu", validity=validity)
    return TrackGenerator(cfg, generator=fixed_loops(loops))


# -- early exit ---------------------------------------------------------------------------
# multiples of 2**-20 in [-1, 1]: the float64 orientations of the brute force are exact
_fine = st.integers(-(1 << 20), 1 << 20).map(lambda k: k / (1 << 20))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(st.tuples(_fine, _fine), min_size=12, max_size=12), min_size=1, max_size=6)
)
def test_early_exit_and_counting_agree_with_brute_force_on_random_rings(rings):
    xy = np.array(rings, dtype=np.float32)
    full = run_checks(xy, "cpu")
    first = run_checks(xy, "cpu", first_crossing=True)
    want = np.array([ref.crossings(t) for t in xy])
    closed = np.array([ref.closed(t) for t in xy])
    # the verdicts: the same bytes in both modes, and the reference's crossing verdict
    np.testing.assert_array_equal(first["valid"], full["valid"])
    np.testing.assert_array_equal(first["reason"], full["reason"])
    crossing = (full["reason"] & SELF_INTERSECTING) != 0
    np.testing.assert_array_equal(crossing[closed], want[closed] > 0)
    np.testing.assert_array_equal(full["crossings"][closed], want[closed])
    np.testing.assert_array_equal(first["crossings"], (full["crossings"] > 0).astype(np.int32))


def test_count_crossing_envs_completes_an_early_exit_run():
    xy = ref.random_loops(np.random.default_rng(5), 300, 40)
    E, N = xy.shape[:2]
    ctx = LaunchContext("cpu")
    first = run_checks(xy, "cpu", first_crossing=True)
    reason = wp.array(first["reason"], dtype=wp.int32)
    out = wp.array(first["crossings"], dtype=wp.int32)
    grid = ops.GridScratch.alloc("cpu", E, N)
    count_crossing_envs(ctx, upload_tracks(xy, "cpu"), E, N, reason, out, grid)
    np.testing.assert_array_equal(out.numpy(), run_checks(xy, "cpu")["crossings"])


def test_pipeline_stops_at_the_first_crossing_and_reports_full_counts():
    xy = ref.random_loops(np.random.default_rng(9), 200, 48)
    tg = pipeline(xy, **NO_DRIVE)
    res = tg.generate()
    res = tg.generate()  # a replay of the recording
    early = res._crossings.numpy().copy()  # what the recorded stage wrote: 0 or 1
    want = np.array([ref.crossings(t) for t in xy])
    full = run_checks(xy, "cpu")
    assert set(early.tolist()) <= {0, 1} and want.max() > 1
    np.testing.assert_array_equal(early, (want > 0).astype(np.int32))
    got = res.numpy()  # reading crossings counts the crossing envs in full
    np.testing.assert_array_equal(got["crossings"], want)
    np.testing.assert_array_equal(got["valid"], full["valid"])
    np.testing.assert_array_equal(got["reason"], full["reason"])
    assert res.metrics()["crossings"].tolist() == want.tolist()


# -- road overlap -------------------------------------------------------------------------
def _pinched(n: int, gap: float) -> np.ndarray:
    """A dumbbell: two lobes whose upper and lower strands pass ``gap`` apart at x = 0; the
    centerline never crosses itself (y > 0 on the upper half, < 0 on the lower)."""
    t = 2 * np.pi * (np.arange(n) + 0.5) / n
    return np.c_[np.cos(t), np.sin(t) * (gap / 2 + np.cos(t) ** 2)]


def _oval(n: int) -> np.ndarray:
    t = 2 * np.pi * np.arange(n) / n
    return np.c_[np.cos(t), 0.6 * np.sin(t)]


def road_overlap_reference(xy: np.ndarray, width: float) -> bool:
    """True when two triangles of the road (the ribbon at ``width`` around the closed
    centerline, offset along the normal of the central tangent, two triangles per quad)
    from quads more than one apart along the loop overlap with a positive area (shapely)."""
    p = np.asarray(xy, np.float64)
    n = len(p)
    t = np.roll(p, -1, 0) - np.roll(p, 1, 0)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    nrm = np.c_[-t[:, 1], t[:, 0]] * (width / 2)
    left, right = p + nrm, p - nrm
    j = (np.arange(n) + 1) % n
    tris = [shapely.Polygon([left[i], right[i], right[j[i]]]) for i in range(n)]
    tris += [shapely.Polygon([left[i], right[j[i]], left[j[i]]]) for i in range(n)]
    quad = np.r_[np.arange(n), np.arange(n)]
    tree = shapely.STRtree(tris)
    a, b = tree.query(tris, predicate="intersects")
    d = np.abs(quad[a] - quad[b])
    far = np.minimum(d, n - d) > 1
    for i, k in zip(a[far], b[far], strict=True):
        if tris[i].intersection(tris[k]).area > 1e-12:
            return True
    return False


def test_road_overlap_rejects_a_pinch_the_centerline_does_not_cross():
    n, w = 128, 0.05
    loops = np.stack([_pinched(n, 0.03), _oval(n), _pinched(n, 0.2)]).astype(np.float32)
    # the reference: the pinch's road overlaps, the oval's and the wide waist's do not,
    # and no centerline crosses itself
    assert [road_overlap_reference(t, w) for t in loops] == [True, False, False]
    assert [ref.crossings(t) for t in loops] == [0, 0, 0]
    tg = pipeline(loops, track_width=w, min_turn_radius=0.0, road_overlap=True)
    assert tg.host_driven  # the check is a HOST step
    for _ in range(2):  # the first call and a later one
        got = tg.generate().numpy()
        assert got["reason"][0] & ROAD and not got["reason"][0] & SELF_INTERSECTING
        assert got["valid"].tolist() == [0, 1, 1] and got["reason"][1:].tolist() == [0, 0]
        assert tg.result.num_valid() == 2
    assert REASONS[ROAD].startswith("road surface overlaps itself")


def test_road_overlap_matches_the_reference_on_generated_tracks():
    from procgen_nb.track_gen import presets

    w = 0.05
    off = {"repair": False}  # the 0.1 tracks: the repaired ones rarely overlap
    tg = presets.track("bezier", off, num_envs=24, num_points=64, seed=3, validity=NO_DRIVE)
    xy = tg.generate().numpy()["xy"]
    got = pipeline(xy, track_width=w, min_turn_radius=0.0, road_overlap=True).generate().numpy()
    want = np.array([road_overlap_reference(t, w) for t in xy])
    assert 0 < want.sum() < len(want)  # both outcomes
    np.testing.assert_array_equal((got["reason"] & ROAD) != 0, want)


def test_road_overlap_is_off_by_default_and_update_rebuilds_for_it():
    loops = np.stack([_pinched(64, 0.03), _oval(64)]).astype(np.float32)
    tg = pipeline(loops, min_turn_radius=0.0)
    assert not tg.host_driven
    assert not (tg.generate().numpy()["reason"] & ROAD).any()
    assert tg.update(validity={"road_overlap": True}) is True
    assert tg.host_driven and tg.generate().numpy()["reason"][0] & ROAD
    # track_width 0 skips the road test (a road of no width)
    assert tg.update(validity={"track_width": 0.0}) is False
    assert not (tg.generate().numpy()["reason"] & ROAD).any()
    assert tg.update(validity={"road_overlap": False}) is True and not tg.host_driven


@pytest.mark.parametrize("generator", ["polar", "hull"])
def test_default_validity_is_drivable(generator):
    from procgen_nb.track_gen.config import DRIVABLE

    cfg = TrackGenConfig(generator=generator, num_envs=8, num_points=64, scale=2.0)
    assert cfg.validity.min_turn_radius == 2 * DRIVABLE["min_turn_radius"]
    assert cfg.validity.track_width == 2 * DRIVABLE["track_width"]
    assert not cfg.validity.road_overlap
    # a dict names the fields it changes; the others keep the scaled default
    part = TrackGenConfig(scale=2.0, validity={"min_turn_radius": 0.0}).validity
    assert part.min_turn_radius == 0.0 and part.track_width == 2 * DRIVABLE["track_width"]
    assert TrackGenConfig(validity="drivable").validity == TrackGenConfig().validity


def test_road_overlap_of_many_envs_matches_the_reference():
    # enough roads that one grid of width-sized cells would pass mesh.MAX_CELLS: the check
    # splits them into batches that keep the cells (a wider cell lost whole roads)
    from procgen_nb.track_gen import presets

    w, E = 0.05, 600
    off = {"repair": False}  # the 0.1 hulls: the repaired ones rarely overlap
    tg = presets.track("hull", off, num_envs=E, num_points=32, seed=4, validity=NO_DRIVE)
    xy = tg.generate().numpy()["xy"]
    got = pipeline(xy, track_width=w, min_turn_radius=0.0, road_overlap=True).generate().numpy()
    want = np.array([road_overlap_reference(t, w) for t in xy])
    assert want.sum() >= 10 and not want.all()
    np.testing.assert_array_equal((got["reason"] & ROAD) != 0, want)


def test_update_with_an_unchanged_road_overlap_does_not_rebuild():
    loops = np.stack([_oval(64), _oval(64)]).astype(np.float32)
    tg = pipeline(loops)
    assert tg.update(validity={"road_overlap": False, "track_width": 0.1}) is False
    assert tg.config.validity.track_width == 0.1 and not tg.host_driven


@pytest.mark.parametrize("width", [1e-30, 1e-320])
def test_road_overlap_of_a_tiny_track_width_tests_each_road_alone(width):
    # cells of a tiny width overflow float32 (1e-30) and float64 (1e-320) when counted: the
    # check runs each road on its own instead of failing to size its chunks
    loops = np.stack([_pinched(64, 0.03), _oval(64)]).astype(np.float32)
    got = pipeline(loops, track_width=width, min_turn_radius=0.0, road_overlap=True)
    res = got.generate().numpy()
    assert not (res["reason"] & ROAD).any() and res["valid"].tolist() == [1, 1]


def test_a_validity_dict_with_a_key_that_is_not_a_name_is_a_params_error():
    # a non-string key reached ValidityParams(**...) and raised a bare TypeError
    with pytest.raises(ParamsError, match=r"^TrackGenConfig.validity: expected a dict of field"):
        TrackGenConfig(num_envs=2, num_points=16, device="cpu", validity={1: 0.1})
    loops = np.stack([_oval(64), _oval(64)]).astype(np.float32)
    tg = pipeline(loops)
    for kw, label in (
        ({"validity": {1: True}}, "update validity"),
        ({"validity": {"road_overlap": True, None: 0}}, "update validity"),
        ({"z_profile": {2: 0.1}}, "update z_profile"),
    ):
        with pytest.raises(ParamsError, match=rf"^{label}: expected a dict of fields, got"):
            tg.update(**kw)
    assert not tg.host_driven and not tg.config.validity.road_overlap  # nothing applied
