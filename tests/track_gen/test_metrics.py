"""Per-track metrics against a NumPy brute force written here (float64, every pair)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import REASONS, TrackResult, metrics, ops, presets
from procgen_nb.track_gen.exec import LaunchContext

CLEARANCE_BIT = next(bit for bit, text in REASONS.items() if "clearance" in text)


# -- the reference -----------------------------------------------------------------------
def _cross(u, v):
    return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]


def reference(xy: np.ndarray, straight_ratio: float = 2.0) -> dict[str, np.ndarray]:
    """Every metric of ``[E, N, 2]`` float32 loops, by brute force in float64."""
    p = xy.astype(np.float64)
    E, N, _ = p.shape
    nxt, prv = np.roll(p, -1, axis=1), np.roll(p, 1, axis=1)
    u, v = p - prv, nxt - p
    lu, lv = np.linalg.norm(u, axis=2), np.linalg.norm(v, axis=2)
    L = lv.sum(axis=1)
    cr = _cross(u, v)
    with np.errstate(divide="ignore", invalid="ignore"):
        circ = np.where(
            cr != 0, lu * lv * np.linalg.norm(nxt - prv, axis=2) / (2 * abs(cr)), np.inf
        )
    theta = np.arctan2(cr, (u * v).sum(axis=2))
    curv = np.abs(theta) / (0.5 * (lu + lv))
    # clearance: every pair (i, j), index distance d along the loop, mean spacing h = L/N
    i, j = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
    d = np.minimum(abs(i - j), N - abs(i - j))
    dist = np.linalg.norm(p[:, :, None, :] - p[:, None, :, :], axis=3)
    h = (L / N)[:, None, None]
    qualifies = (d[None] > 0) & (dist < 2 * d[None] * h / math.pi)
    clear = np.where(qualifies, dist, np.inf).min(axis=(1, 2))
    clear = np.minimum(clear, L / math.pi)
    ext = xy.max(axis=1) - xy.min(axis=1)
    return {
        "length": L,
        "min_turn_radius": circ.min(axis=1),
        "max_curvature": curv.max(axis=1),
        "min_clearance": clear,
        "turning_number": np.rint(theta.sum(axis=1) / (2 * math.pi)).astype(np.int32),
        "crossings": crossings_reference(p),
        "straight_fraction": (curv < (2 * math.pi / (straight_ratio * L))[:, None]).mean(axis=1),
        "extent_x": ext[:, 0],
        "extent_y": ext[:, 1],
    }


def crossings_reference(p: np.ndarray) -> np.ndarray:
    """Pairs of non-adjacent segments that properly cross (orientation tests, every pair)."""
    E, N, _ = p.shape
    a, b = p, np.roll(p, -1, axis=1)
    out = np.zeros(E, dtype=np.int32)
    for s in range(N):
        t = np.arange(s + 2, N)
        if s == 0:
            t = t[t != N - 1]
        if t.size == 0:
            continue
        a1, b1 = a[:, s : s + 1], b[:, s : s + 1]
        a2, b2 = a[:, t], b[:, t]
        o1 = np.sign(_cross(b1 - a1, a2 - a1))
        o2 = np.sign(_cross(b1 - a1, b2 - a1))
        o3 = np.sign(_cross(b2 - a2, a1 - a2))
        o4 = np.sign(_cross(b2 - a2, b1 - a2))
        out += ((o1 * o2 < 0) & (o3 * o4 < 0)).sum(axis=1).astype(np.int32)
    return out


def _compare(got: dict, want: dict, envs: np.ndarray | None = None) -> None:
    assert list(got) == list(metrics.METRICS)
    n = len(next(iter(want.values())))
    for name, (dtype, _, _) in metrics.METRICS.items():
        assert got[name].dtype == np.dtype(dtype), name
        assert got[name].shape == (n,), name
        if dtype == "int32":
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        elif name == "straight_fraction":
            # a point within rounding of the threshold may flip: at most one per loop
            N = 1.0 / np.min(np.diff(np.unique(np.r_[0.0, 1.0, want[name]]))) if n else 1
            assert np.all(abs(got[name] - want[name]) <= 1.0 / max(N, 8) + 1e-6), name
        else:
            np.testing.assert_allclose(got[name], want[name], rtol=2e-6, atol=1e-6, err_msg=name)


# -- a TrackResult of hand-made loops ---------------------------------------------------------
def result_of(xy: np.ndarray, device: str) -> TrackResult:
    """Wraps ``[E, N, 2]`` loops as a TrackResult, validity decided by ``ops.check_tracks``."""
    E, N, _ = xy.shape
    ctx = LaunchContext(device)
    z = lambda: wp.zeros(E, dtype=wp.int32, device=device)  # noqa: E731
    res = TrackResult(
        xy=wp.array(xy.reshape(E * N, 2).astype(np.float32), dtype=wp.vec2, device=device),
        valid=z(),
        attributes={},
        reason=z(),
        crossings=z(),
        turning=z(),
        valid_count=wp.zeros(1, dtype=wp.int32, device=device),
        num_envs=E,
        num_points=N,
        ctx=ctx,
    )
    zero = wp.zeros(1, dtype=wp.float32, device=device)
    grid = ops.GridScratch.alloc(device, E, N)
    ops.check_tracks(
        ctx, res.xy, E, N, grid, zero, zero, res.valid, res.reason, res.crossings, res.turning
    )
    return res


def _circle(n: int, r: float, clockwise: bool = False, phase: float = 0.0) -> np.ndarray:
    t = phase + 2 * np.pi * np.arange(n) / n
    if clockwise:
        t = -t
    return np.stack([r * np.cos(t), r * np.sin(t)], axis=1)


# -- tests ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "generator, params",
    [
        ("polar", {}),
        ("polar", {"radius_jitter": 0.9, "lobes": 12}),
        ("checkpoint", {"radius_jitter": 0.9, "angle_jitter": 0.95}),
        ("bezier", {}),
    ],
)
def test_generated_tracks_match_the_numpy_reference(device, generator, params):
    gen = presets.track(generator, params, num_envs=48, num_points=96, device=device, seed=7)
    res = gen.generate()
    xy = res.numpy()["xy"]
    _compare(res.metrics(), reference(xy))


def test_some_generated_tracks_cross_and_the_counts_match(device):
    gen = presets.track(
        "checkpoint",
        {"radius_jitter": 0.9, "angle_jitter": 0.95, "checkpoints": 16},
        num_envs=64,
        num_points=96,
        device=device,
    )
    res = gen.generate()
    got = res.metrics()
    want = crossings_reference(res.numpy()["xy"].astype(np.float64))
    assert want.max() > 0, "expected some crossing tracks to test the count on"
    np.testing.assert_array_equal(got["crossings"], want)
    assert np.all(got["turning_number"][want == 0] != 0)


def test_hand_made_loops_have_the_values_computed_by_hand(device):
    n = 64
    t = 2 * np.pi * (np.arange(n) + 0.5) / n  # the crossing falls between points
    eight = np.stack([np.sin(t), np.sin(2 * t) / 2], axis=1)
    # a stadium: two half circles of radius 1 joined by straights of length 4
    half = np.pi * np.arange(16) / 16
    right = np.stack([2 + np.sin(half), np.cos(half)], axis=1)  # (2, 1) down to (2, -1)
    left = np.stack([-2 - np.sin(half), -np.cos(half)], axis=1)
    top = np.stack([np.linspace(-2, 2, 16, endpoint=False), np.ones(16)], axis=1)
    bottom = -top
    stadium = np.concatenate([top, right, bottom, left])
    loops = np.stack([_circle(n, 2.0), _circle(n, 0.5, clockwise=True, phase=0.3), eight, stadium])
    res = result_of(loops, device)
    m = res.metrics()
    _compare(m, reference(loops.astype(np.float32)))
    chord = 2 * 2.0 * math.sin(math.pi / n)
    # circle of radius 2: every triple's circumradius is 2; no pinch, so the cap L/pi
    assert m["length"][0] == pytest.approx(n * chord, rel=1e-6)
    assert m["min_turn_radius"][0] == pytest.approx(2.0, rel=1e-5)
    assert m["min_clearance"][0] == pytest.approx(n * chord / math.pi, rel=1e-6)
    assert m["straight_fraction"][0] == 0.0
    np.testing.assert_array_equal(m["turning_number"], [1, -1, 0, -1])  # the stadium runs clockwise
    np.testing.assert_array_equal(m["crossings"], [0, 0, 1, 0])
    # the stadium: straights are straight (half its points), the bends have radius 1, and
    # its two straights are 2 apart (a chord of a bend just short of its diameter counts
    # too: index distance times the mean spacing overstates the arc of a bend)
    assert m["straight_fraction"][3] == pytest.approx(0.5, abs=2 / 64)
    assert m["min_turn_radius"][3] == pytest.approx(1.0, rel=1e-3)
    assert m["min_clearance"][3] == pytest.approx(2.0, rel=0.03)
    np.testing.assert_allclose(m["extent_x"], [4.0, 1.0, 2.0, 6.0], rtol=3e-3)  # sampled


def test_min_clearance_is_the_largest_track_width_that_passes():
    gen = presets.track(
        "polar", {"radius_jitter": 0.9}, num_envs=32, num_points=96, seed=3, device="cpu"
    )
    res = gen.generate()
    m = res.metrics()
    cap = m["length"] / math.pi
    envs = np.flatnonzero(m["min_clearance"] < 0.99 * cap)[:4]
    assert envs.size, "expected pinched tracks"
    for e in envs:
        c = float(m["min_clearance"][e])
        for factor, flagged in ((0.999, False), (1.001, True)):
            gen.update(validity={"track_width": c * factor})
            reason = gen.generate().numpy()["reason"][e]
            assert bool(reason & CLEARANCE_BIT) is flagged, (e, factor)


def test_min_turn_radius_is_the_threshold_of_the_turn_radius_check():
    gen = presets.track("polar", num_envs=16, num_points=64, seed=11, device="cpu")
    m = gen.generate().metrics()
    radius_bit = next(bit for bit, text in REASONS.items() if "turn radius" in text)
    e = int(np.argmin(m["min_turn_radius"]))
    r = float(m["min_turn_radius"][e])
    for factor, flagged in ((0.999, False), (1.001, True)):
        gen.update(validity={"min_turn_radius": r * factor, "track_width": 0.0})
        assert bool(gen.generate().numpy()["reason"][e] & radius_bit) is flagged


def test_a_loop_with_a_non_finite_point_gets_nan():
    loops = np.stack([_circle(16, 1.0), _circle(16, 1.0)])
    loops[1, 5] = np.nan
    m = result_of(loops, "cpu").metrics()
    assert np.isfinite(m["length"][0]) and np.isnan(m["length"][1])
    for name in ("min_turn_radius", "max_curvature", "min_clearance", "straight_fraction"):
        assert np.isnan(m[name][1]), name
    assert m["turning_number"][1] == 0


def test_metrics_make_a_pyarrow_table_without_pandas():
    res = presets.track("polar", num_envs=8, num_points=32, device="cpu").generate()
    direct = pa.table(res.metrics())
    assert direct.num_rows == 8 and direct.column_names == list(metrics.METRICS)
    t = metrics.table(res)
    assert t.column_names[:3] == ["env", "valid", "reason"]
    np.testing.assert_array_equal(t["valid"].to_numpy(), res.numpy()["valid"])
    np.testing.assert_array_equal(t["length"].to_numpy(), direct["length"].to_numpy())


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "2", True, None])
def test_a_bad_straight_ratio_is_refused(bad):
    res = presets.track("polar", num_envs=2, num_points=16, device="cpu").generate()
    with pytest.raises(ParamsError, match="straight_ratio"):
        res.metrics(straight_ratio=bad)


def test_drivable_validity_scales_and_keeps_only_tracks_a_car_that_wide_can_drive():
    from procgen_nb.track_gen import TrackGenConfig
    from procgen_nb.track_gen.config import DRIVABLE

    v = TrackGenConfig(validity="drivable", scale=2.0).validity
    assert (v.min_turn_radius, v.track_width) == (
        2 * DRIVABLE["min_turn_radius"],
        2 * DRIVABLE["track_width"],
    )
    assert DRIVABLE["min_turn_radius"] == DRIVABLE["track_width"] / 2  # no fold at a bend
    with pytest.raises(ParamsError, match="drivable"):
        TrackGenConfig(validity="safe")
    # N=256: the point spacing (about 0.02) well below the width; at a spacing near the
    # width the discrete turn radius and clearance no longer bound each other
    # the 0.1 tracks (repair off): the repaired bezier keeps nearly every track
    off = {"repair": False}
    gen = presets.track("bezier", off, num_envs=48, num_points=256, seed=2, validity="drivable")
    d = gen.generate().numpy()
    ref = reference(d["xy"])
    w, r = DRIVABLE["track_width"], DRIVABLE["min_turn_radius"]
    ok = d["valid"] == 1
    assert 0 < ok.sum() < 48, "expected some bezier tracks rejected and some kept"
    # every kept track: turn radius and clearance (the NumPy brute force) at least the limits
    # (a bend of radius >= w/2 has no two points closer than 2/pi of the arc between them, so
    # the turn radius check covers the pairs the clearance check leaves to it)
    assert np.all(ref["min_turn_radius"][ok] >= r * (1 - 1e-5))
    assert np.all(ref["min_clearance"][ok] >= w * (1 - 1e-5))
    radius_bit = next(bit for bit, text in REASONS.items() if "turn radius" in text)
    flagged = (d["reason"] & radius_bit) != 0
    np.testing.assert_array_equal(flagged, ref["min_turn_radius"] < r)


# -- the clearance search against every pair ---------------------------------------------------
def _loops(seed: int, n: int) -> np.ndarray:
    """Eight loops of ``n`` points that stress the clearance search: a circle (every pair
    within rounding of the threshold at n/2), a jittered star, a pinched star, a loop sampled
    unevenly (its shortest segment far below the mean: the turning rule steps aside), a
    random polygon (crossings everywhere), a zigzag (every turn sharp), a loop with a
    repeated point (a segment of length 0), and a stadium sampled coarsely."""
    rng = np.random.default_rng(seed)
    t = 2 * np.pi * np.arange(n) / n
    ring = lambda r, tt=t: np.stack([r * np.cos(tt), r * np.sin(tt)], axis=1)  # noqa: E731
    star = ring(1 + 0.4 * rng.uniform(-1, 1) * np.sin(rng.integers(2, 7) * t + rng.uniform(0, 6)))
    pinch = ring(np.maximum(0.05, 1 - 0.97 * np.abs(np.cos(t))))
    uneven = ring(1.0, np.sort(rng.uniform(0, 2 * np.pi, n)))
    poly = rng.uniform(-1, 1, (n, 2))
    zig = ring(1 + 0.3 * (-1.0) ** np.arange(n))
    rep = ring(1.0 + 0.2 * np.sin(3 * t))
    rep[n // 2] = rep[n // 2 - 1]
    u = np.linspace(0, 4 + np.pi * 2, n, endpoint=False)  # perimeter of a 2x... stadium
    sx = np.where(u < 2, u - 1, np.where(u < 2 + np.pi, 1 + np.sin(u - 2), 0))
    stad = np.stack([sx, np.where(u < 2, 1.0, np.cos(np.clip(u - 2, 0, np.pi)))], axis=1)
    loops = np.stack([ring(1.0), star, pinch, uneven, poly, zig, rep, stad, _teardrop(rng, n)])
    return (loops * rng.uniform(0.1, 10)).astype(np.float32)


def _teardrop(rng: np.random.Generator, n: int) -> np.ndarray:
    """A unit circle with a corner: two tangents meeting at a point that turns by T, sampled
    evenly along the loop from the corner. A corner is the case where the chord is shortest
    for the turning (cos(T/2) of the arc): with T about the limit 2 acos(2/pi) of the
    turning rule, the pairs across it decide the clearance on either side of that limit."""
    T = rng.uniform(1.70, 1.85)
    D = 1 / math.sin((math.pi - T) / 2)  # the corner's distance from the centre
    phi, leg = math.acos(1 / D), math.sqrt(D * D - 1)
    total = 2 * leg + 2 * math.pi - 2 * phi
    s = total * np.arange(n) / n
    corner = np.array([D, 0.0])
    down = corner + (np.array([math.cos(phi), -math.sin(phi)]) - corner) * (s / leg)[:, None]
    a = -phi - (s - leg)  # clockwise round the far side of the circle
    arc = np.stack([np.cos(a), np.sin(a)], axis=1)
    up = (
        np.array([math.cos(phi), math.sin(phi)])
        + (corner - [math.cos(phi), math.sin(phi)])
        * (((s - leg - (2 * math.pi - 2 * phi)) / leg)[:, None])
    )
    on_arc = (s >= leg) & (s < total - leg)
    return np.where((s < leg)[:, None], down, np.where(on_arc[:, None], arc, up))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 90))
def test_min_clearance_equals_the_every_pair_minimum(seed, n):
    loops = _loops(seed, n)
    got = result_of(loops, "cpu").metrics()["min_clearance"]
    with np.errstate(divide="ignore", invalid="ignore"):  # a segment of length 0
        want = reference(loops)["min_clearance"]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


def test_split_across_threads_the_metrics_are_the_same_bytes(monkeypatch):
    def run(threads: str) -> dict[str, np.ndarray]:
        monkeypatch.setenv("PROCGEN_NB_THREADS", threads)
        gen = presets.track("polar", {"radius_jitter": 0.8}, num_envs=600, num_points=64)
        res = gen.generate()
        res.metrics()
        return res.metrics()  # the second call runs the shares at once

    one, two = run("1"), run("2")
    for name in metrics.METRICS:
        np.testing.assert_array_equal(one[name], two[name], err_msg=name)
    assert np.count_nonzero(one["min_clearance"] < one["length"] / math.pi) > 100


def test_a_split_metrics_call_runs_its_shares_here_when_the_pool_is_shut_down(monkeypatch):
    # interpreter exit, or the pool replaced by a larger one between lookup and submit
    import concurrent.futures as cf

    from procgen_nb.track_gen import _threads

    monkeypatch.setenv("PROCGEN_NB_THREADS", "2")
    gen = presets.track("polar", {"radius_jitter": 0.8}, num_envs=600, num_points=64)
    res = gen.generate()
    want = res.metrics()
    dead = cf.ThreadPoolExecutor(1)
    dead.shutdown()
    monkeypatch.setattr(_threads, "_get_pool", lambda workers: dead)
    got = res.metrics()  # the second call runs the shares side by side
    assert len(res.metric_scratch["scratch"].shares) == 2
    for name in metrics.METRICS:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


def test_enqueue_inside_a_recording_records_every_launch_and_replays_the_same(monkeypatch):
    monkeypatch.setenv("PROCGEN_NB_THREADS", "2")
    gen = presets.track("polar", {"radius_jitter": 0.8}, num_envs=600, num_points=64)
    res = gen.generate()
    want = res.metrics()
    arrays = metrics.enqueue(res)
    rec = res.ctx.record(lambda: metrics.enqueue(res))
    arrays.pop("crossings")  # the result's own array
    for arr in arrays.values():
        arr.zero_()
    rec.replay()  # every env's values come from the recording: no launch went elsewhere
    for name, arr in arrays.items():
        np.testing.assert_array_equal(res.ctx.readback(arr), want[name], err_msg=name)
