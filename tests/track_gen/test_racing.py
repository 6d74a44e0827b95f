"""The racing line against references written here and in ``racing_reference``: circles
(the widest circle that fits, the textbook lap time), a rounded rectangle (corners cut), a
NumPy projected-gradient solver (the objective), a NumPy speed profile swept to a fixed
point, and the constraints checked from the returned arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest
import racing_reference as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procgen_nb import _traffic
from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import VehicleParams, presets, racing_line

G = 9.81


def circle(N: int, R: float, E: int = 1) -> np.ndarray:
    th = np.arange(N) * 2 * np.pi / N
    return np.repeat(np.stack([R * np.cos(th), R * np.sin(th)], -1)[None], E, 0)


def rounded_rectangle(N: int, A: float, B: float, r: float) -> np.ndarray:
    """Counter-clockwise: straights 2A and 2B long, corners of radius r, N points evenly
    spaced along it."""
    pieces = [
        ("L", (-A, -B - r), (1, 0), 2 * A),
        ("C", (A, -B), -np.pi / 2, np.pi / 2 * r),
        ("L", (A + r, -B), (0, 1), 2 * B),
        ("C", (A, B), 0.0, np.pi / 2 * r),
        ("L", (A, B + r), (-1, 0), 2 * A),
        ("C", (-A, B), np.pi / 2, np.pi / 2 * r),
        ("L", (-A - r, B), (0, -1), 2 * B),
        ("C", (-A, -B), np.pi, np.pi / 2 * r),
    ]
    P = sum(p[3] for p in pieces)
    out = []
    for t in np.arange(N) * P / N:
        for kind, a0, d, ln in pieces:
            if t <= ln:
                if kind == "L":
                    out.append((a0[0] + d[0] * t, a0[1] + d[1] * t))
                else:
                    out.append((a0[0] + r * np.cos(d + t / r), a0[1] + r * np.sin(d + t / r)))
                break
            t -= ln
    return np.array(out)


def smooth_tracks(rng: np.random.Generator, E: int, N: int, R: float = 50.0) -> np.ndarray:
    th = np.arange(N) * 2 * np.pi / N
    rad = np.full((E, N), R)
    for k in range(2, 5):
        rad += rng.normal(0, 0.1 * R / k, (E, 1)) * np.cos(k * th + rng.uniform(0, 6.3, (E, 1)))
    return np.stack([rad * np.cos(th), rad * np.sin(th)], -1)


def check_profile(q, v, k, mg, vmax, amax, tol=2e-3):
    """The speed constraints of the module docstring, from the returned line alone."""
    q = q.astype(np.float64)
    v = v.astype(np.float64)
    kap = ref.menger(q)
    np.testing.assert_allclose(k, kap, rtol=1e-3, atol=1e-5)
    ds = np.linalg.norm(np.roll(q, -1, 0) - q, axis=1)
    u, un = v**2, np.roll(v, -1) ** 2
    a = (un - u) / (2 * ds)
    lat = np.maximum(u * np.abs(kap), un * np.abs(np.roll(kap, -1)))
    assert np.all(v <= vmax * (1 + 1e-5))
    assert np.all(u * np.abs(kap) <= mg * (1 + tol))
    assert np.all(np.abs(a) <= amax * (1 + tol) + 1e-6)
    assert np.all(a * a + lat * lat <= (mg * (1 + tol)) ** 2)
    return ds


@pytest.mark.parametrize("vmax", [80.0, 12.0])
def test_circle_is_the_widest_circle_that_fits(device, vmax):
    R, W, veh = 50.0, 10.0, VehicleParams(mu=1.1, v_max=vmax, a_max=6.0, width=2.0)
    o = racing_line(circle(256, R, 2), W / 2, W / 2, veh, device=device).numpy()
    r = R + W / 2 - veh.width / 2
    np.testing.assert_allclose(np.linalg.norm(o["xy"], axis=2), r, rtol=1e-5)
    np.testing.assert_allclose(o["offset"], -(W / 2 - veh.width / 2), atol=1e-4)  # outward
    v = min(vmax, math.sqrt(veh.mu * G * r))
    np.testing.assert_allclose(o["lap_time"], 2 * np.pi * r / v, rtol=0.01)
    np.testing.assert_allclose(o["speed"], v, rtol=1e-3)
    np.testing.assert_allclose(o["curvature"], 1 / r, rtol=1e-3)
    np.testing.assert_allclose(o["difficulty"], 1 - v / vmax, atol=2e-3)
    np.testing.assert_allclose(o["mean_speed"], v, rtol=1e-3)
    assert np.all(o["full_throttle_fraction"] == (1.0 if v == vmax else 0.0))


def test_clockwise_circle_goes_out_too(device):
    xy = circle(128, 40.0)[:, ::-1].copy()
    o = racing_line(xy, 4.0, 4.0, VehicleParams(width=1.0), device=device).numpy()
    np.testing.assert_allclose(np.linalg.norm(o["xy"], axis=2), 43.5, rtol=1e-5)


def test_rounded_rectangle_cuts_the_corners(device):
    p = rounded_rectangle(160, 60.0, 40.0, 10.0)
    o = racing_line(p[None], 6.0, 6.0, VehicleParams(width=2.0), device=device).numpy()
    d = p - np.array([60.0, 40.0])
    corner = (d[:, 0] >= 0) & (d[:, 1] >= 0)
    apex = np.flatnonzero(corner)[
        np.argmin(np.abs(np.arctan2(d[corner, 1], d[corner, 0]) - np.pi / 4))
    ]
    mid = np.argmin(np.abs(p[:, 0]) + 1e9 * (p[:, 1] > 0))
    assert o["offset"][0, apex] > 4.9  # at the inner edge (left of a counter-clockwise loop)
    assert o["offset"][0, mid] < -4.9  # the straight's middle at the outer edge
    # the line turns more gently than the centerline's corners
    assert np.abs(o["curvature"][0]).max() < 1 / 10.0 * 0.6


def test_objective_agrees_with_a_numpy_solver(device):
    rng = np.random.default_rng(3)
    E, N = 3, 24
    xy = smooth_tracks(rng, E, N)
    wl, wr = rng.uniform(3, 6, (E, N)), rng.uniform(3, 6, (E, N))
    o = racing_line(xy, wr, wl, VehicleParams(width=2.0), device=device).numpy()
    for e in range(E):
        a = ref.solve(xy[e], -(wr[e] - 1), wl[e] - 1, steps=600)
        f_ref = ref.objective(xy[e], a)
        f_ours = ref.objective(xy[e], o["offset"][e].astype(np.float64))
        assert f_ours <= f_ref * (1 + 1e-5)
        np.testing.assert_allclose(o["objective"][e], f_ours, rtol=1e-5)
        # and not a trivial line: the centerline costs more
        assert f_ours < ref.objective(xy[e], np.zeros(N)) * 0.99


def test_speed_profile_matches_a_swept_reference(device):
    rng = np.random.default_rng(5)
    xy = smooth_tracks(rng, 2, 40)
    veh = VehicleParams(mu=0.9, v_max=30.0, a_max=3.0, width=1.5)
    o = racing_line(xy, 4.0, 4.0, veh, device=device).numpy()
    mg = veh.mu * G
    for e in range(2):
        ds = check_profile(o["xy"][e], o["speed"][e], o["curvature"][e], mg, 30.0, 3.0)
        v = o["speed"][e].astype(np.float64)
        lap = np.sum(2 * ds / (v + np.roll(v, -1)))
        np.testing.assert_allclose(o["lap_time"][e], lap, rtol=1e-5)
        vr = ref.speed_profile(o["xy"][e].astype(np.float64), mg, 30.0, 3.0)
        lap_ref = np.sum(2 * ds / (vr + np.roll(vr, -1)))
        np.testing.assert_allclose(lap, lap_ref, rtol=5e-3)
        np.testing.assert_allclose(o["mean_speed"][e], ds.sum() / lap, rtol=1e-5)
        np.testing.assert_allclose(o["difficulty"][e], 1 - ds.sum() / 30.0 / lap, atol=1e-5)
        a = (np.roll(v, -1) ** 2 - v**2) / (2 * ds)
        flat = (a >= 0.95 * 3.0) | ((v >= 30 * 0.9999) & (np.roll(v, -1) >= 30 * 0.9999))
        np.testing.assert_allclose(
            o["full_throttle_fraction"][e], ds[flat].sum() / ds.sum(), atol=1e-4
        )
        assert 0 < o["full_throttle_fraction"][e] < 1


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    N=st.integers(8, 48),
    mu=st.floats(0.3, 2.0),
    vmax=st.floats(5.0, 90.0),
    amax=st.floats(0.5, 15.0),
    vw=st.floats(0.0, 3.0),
)
def test_random_tracks_stay_inside_and_within_grip(seed, N, mu, vmax, amax, vw):
    rng = np.random.default_rng(seed)
    E = 2
    xy = smooth_tracks(rng, E, N, R=rng.uniform(20, 200))
    wl = rng.uniform(vw / 2, vw / 2 + 8, (E, N))
    wr = rng.uniform(vw / 2, vw / 2 + 8, (E, N))
    veh = VehicleParams(mu=mu, v_max=vmax, a_max=amax, width=vw)
    o = racing_line(xy, wr, wl, veh).numpy()
    for e in range(E):
        n = ref.normals(xy[e])
        off = o["offset"][e].astype(np.float64)
        assert np.all(off >= -(wr[e] - vw / 2) - 1e-4) and np.all(off <= wl[e] - vw / 2 + 1e-4)
        np.testing.assert_allclose(o["xy"][e], xy[e] + off[:, None] * n, atol=1e-3)
        check_profile(o["xy"][e], o["speed"][e], o["curvature"][e], mu * G, vmax, amax)
        assert np.isfinite(o["lap_time"][e]) and 0 <= o["difficulty"][e] < 1


def test_track_result_reads_nothing_back_until_read(device):
    gen = presets.track(num_envs=8, num_points=64, device=device, seed=3)
    veh = VehicleParams(mu=1.0, v_max=50.0, a_max=5.0, width=1.0)
    rl = racing_line(gen, vehicle=veh, scale=100.0)  # validity track_width, half each side
    tw = gen.config.validity.track_width * 100.0
    with _traffic.collect() as t:
        rl = racing_line(gen, vehicle=veh, scale=100.0)
        again = racing_line(gen.result, tw / 200.0, tw / 200.0, veh, scale=100.0)
    assert t.readbacks == 0 and t.launches == 6
    o, d = again.numpy(), gen.result.numpy()
    ok = d["valid"] == 1
    assert ok.any()
    for e in np.flatnonzero(ok):
        off = o["offset"][e].astype(np.float64)
        assert np.all(np.abs(off) <= tw / 2 - 0.5 + 1e-3)
        n = ref.normals(d["xy"][e].astype(np.float64))
        np.testing.assert_allclose(o["xy"][e], d["xy"][e] * 100.0 + off[:, None] * n, atol=2e-3)
        check_profile(o["xy"][e], o["speed"][e], o["curvature"][e], G, 50.0, 5.0)
    assert rl.lap_time.data is not again.lap_time.data  # each call's own arrays


def test_a_repeated_point_on_the_device_gives_nan_for_that_env_only():
    import warp as wp

    gen = presets.track(num_envs=2, num_points=32, seed=1)
    xy = gen.result.xy  # env 1's point 5 becomes a copy of its point 4, on the device
    wp.copy(xy, xy, dest_offset=32 + 5, src_offset=32 + 4, count=1)
    o = racing_line(gen.result, 0.02, 0.02, VehicleParams(width=1.0), scale=100.0).numpy()
    assert np.isfinite(o["lap_time"][0]) and np.isnan(o["lap_time"][1])
    assert np.all(np.isnan(o["speed"][1])) and np.all(np.isfinite(o["speed"][0]))


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        ((1, 5, 4), r"expected no repeated points .* got env 1, point 5 equal to point 4"),
        ((1, 0, 31), r"expected no repeated points .* got env 1, point 0 equal to point 31"),
        ((0, 9, 7), r"expected a tangent at every point, got env 0, point 8 between"),
    ],
)
def test_repeated_host_points_are_refused(edit, match):
    xy = circle(32, 30.0, 2)
    e, dst, src = edit
    xy[e, dst] = xy[e, src]
    with pytest.raises(ParamsError, match=match):
        racing_line(xy, 3.0, 3.0, VehicleParams(width=1.0))


def test_all_points_equal_is_refused():
    with pytest.raises(ParamsError, match=r"got env 0, point 1 equal to point 0"):
        racing_line(np.zeros((2, 16, 2)), 3.0, 3.0)


# -- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["mu", "v_max", "a_max", "g"])
@pytest.mark.parametrize("value", [0.0, -1.0, math.nan, math.inf, True, "1"])
def test_vehicle_refuses_non_positive(name, value):
    with pytest.raises(
        ParamsError, match=rf"VehicleParams {name}: expected a finite number > 0, got"
    ):
        VehicleParams(**{name: value})


def test_vehicle_width_may_be_zero_not_negative():
    assert VehicleParams(width=0.0).width == 0.0
    with pytest.raises(
        ParamsError, match=r"VehicleParams width: expected a finite number >= 0, got -1"
    ):
        VehicleParams(width=-1.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"w_right": 0.5, "w_left": 0.5},
            r"w_right \+ w_left >= the vehicle width 2.0 m .*got 1 m",
        ),
        ({"w_right": math.nan, "w_left": 3.0}, r"w_right: expected finite widths >= 0, got nan"),
        ({"w_right": 3.0, "w_left": -1.0}, r"w_left: expected finite widths >= 0, got -1"),
        (
            {"w_right": np.ones((2, 31)), "w_left": 3.0},
            r"w_right: .*\[E, N\] = \[2, 32\] array, got shape \[2, 31\]",
        ),
        ({"w_right": "wide", "w_left": 3.0}, r"w_right: expected a number or an \[E, N\]"),
        ({"w_right": None, "w_left": None}, r"expected widths for plain centerlines"),
        (
            {"w_right": 3.0, "w_left": 3.0, "scale": 0.0},
            r"racing_line scale: expected a finite number > 0, got 0",
        ),
        (
            {"w_right": 3.0, "w_left": 3.0, "iterations": 0},
            r"racing_line iterations: expected an int in \[1, 2147483647\], got 0",
        ),
        (
            {"w_right": 3.0, "w_left": 3.0, "passes": 1.5},
            r"racing_line passes: expected an int in \[1, 2147483647\], got 1.5",
        ),
        (
            {"w_right": 3.0, "w_left": 3.0, "vehicle": {"mu": 1}},
            r"racing_line vehicle: expected VehicleParams, got dict",
        ),
    ],
)
def test_bad_widths_and_options(kwargs, match):
    with pytest.raises(ParamsError, match=match):
        racing_line(circle(32, 30.0, 2), **kwargs)


def test_narrow_spot_named_by_its_env_and_point():
    wl = np.full((2, 32), 3.0)
    wl[1, 7] = 0.5
    with pytest.raises(ParamsError, match=r"got 1.5 m at env 1, point 7 \(widths in world"):
        racing_line(circle(32, 30.0, 2), np.full((2, 32), 1.0), wl)
    with pytest.raises(ParamsError, match=r"got 1.5 m at every point .*times scale=0.5 metres"):
        racing_line(circle(32, 30.0, 2), 1.0, 2.0, scale=0.5, vehicle=VehicleParams(width=2.0))


@pytest.mark.parametrize(
    ("xy", "match"),
    [
        (np.zeros((2, 32, 3)), r"\[E, N, 2\] array .* got shape \[2, 32, 3\]"),
        (np.zeros((32, 2)), r"got shape \[32, 2\]"),
        (np.zeros((1, 7, 2)), r"N >= 8, got shape \[1, 7, 2\]"),
        ("track", r"got str"),
        (object(), r"got object"),
    ],
)
def test_bad_centerlines(xy, match):
    with pytest.raises(ParamsError, match=match):
        racing_line(xy, 3.0, 3.0)


def test_non_finite_centerline():
    xy = circle(32, 30.0)
    xy[0, 3, 1] = np.nan
    with pytest.raises(ParamsError, match=r"result_or_xy: expected finite points, got NaN"):
        racing_line(xy, 3.0, 3.0)


def test_result_without_widths_needs_them():
    gen = presets.track(num_envs=2, num_points=32, seed=1)
    with pytest.raises(ParamsError, match=r"expected widths \(world units\) for a TrackResult"):
        racing_line(gen.result)
    with pytest.raises(ParamsError, match=r"expected both or neither, got one"):
        racing_line(gen.result, w_right=0.1)


# -- metrics hook --------------------------------------------------------------------------
def test_metrics_opt_in_racing_columns():
    from procgen_nb.track_gen import metrics

    gen = presets.track(num_envs=6, num_points=64, seed=4)
    plain = metrics.compute(gen.result)
    assert list(plain) == list(metrics.METRICS)
    veh = VehicleParams(mu=1.2, v_max=40.0, a_max=6.0, width=1.0)
    tw = gen.config.validity.track_width
    racing = {"vehicle": veh, "w_right": tw / 2, "w_left": tw / 2, "scale": 100.0}
    m = metrics.compute(gen.result, racing=racing)
    assert list(m) == list(metrics.METRICS) + [
        "lap_time",
        "mean_speed",
        "full_throttle_fraction",
        "difficulty",
    ]
    for name in metrics.METRICS:
        np.testing.assert_array_equal(m[name], plain[name])
    o = racing_line(gen.result, tw / 2, tw / 2, veh, scale=100.0).numpy()
    for e in np.flatnonzero(gen.result.numpy()["valid"] == 1):
        q, v = o["xy"][e].astype(np.float64), o["speed"][e].astype(np.float64)
        ds = np.linalg.norm(np.roll(q, -1, 0) - q, axis=1)
        lap = np.sum(2 * ds / (v + np.roll(v, -1)))
        np.testing.assert_allclose(m["lap_time"][e], lap, rtol=1e-5)
        np.testing.assert_allclose(m["difficulty"][e], 1 - ds.sum() / 40.0 / lap, atol=1e-5)
        assert 0 <= m["difficulty"][e] < 1 and 0 <= m["full_throttle_fraction"][e] <= 1
    t = metrics.table(gen.result, racing=racing)
    assert "difficulty" in t.column_names
    with pytest.raises(ParamsError, match=r"metrics racing: expected a dict .*got VehicleParams"):
        metrics.compute(gen.result, racing=veh)


def test_cpu_thread_split_gives_the_same_bytes(monkeypatch):
    from procgen_nb.track_gen import _threads

    xy = smooth_tracks(np.random.default_rng(9), 256, 128)
    veh = VehicleParams()
    monkeypatch.setenv("PROCGEN_NB_THREADS", "1")
    one = racing_line(xy, 5.0, 5.0, veh, device="cpu").numpy()
    monkeypatch.setenv("PROCGEN_NB_THREADS", "2")
    assert _threads.threads_for(256, 128) == 2
    with _traffic.collect() as t:
        two = racing_line(xy, 5.0, 5.0, veh, device="cpu")
    assert t.launches == 6  # three kernels per thread
    two = two.numpy()
    for name in one:
        assert one[name].tobytes() == two[name].tobytes(), name


def test_benchmark_smoke(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "racing_line.py"
    spec = importlib.util.spec_from_file_location("bench_racing_line", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(["--envs", "8", "--points", "32", "--ref-envs", "1", "--tumftm", "1"])
    out = capsys.readouterr().out
    assert "racing_line  E=8 N=32" in out and "tracks/s" in out
    assert "NumPy/SciPy" in out and "TUMFTM" in out  # a ratio or the reason it was skipped


def test_width_attributes_bound_the_line_and_a_car_too_wide_gives_nan():
    gen = presets.track(
        num_envs=12, num_points=64, seed=6, width={"left": 0.03, "right": 0.02, "variation": 0.5}
    )
    d = gen.result.numpy()
    wl, wr = d["width_left"].astype(np.float64) * 100.0, d["width_right"].astype(np.float64) * 100.0
    narrowest = (wl + wr).min(axis=1)
    car = float(np.median(narrowest))
    o = racing_line(gen.result, vehicle=VehicleParams(width=car), scale=100.0).numpy()
    nan = np.isnan(o["lap_time"])
    np.testing.assert_array_equal(nan, narrowest < car)  # checked per env, on the device
    assert nan.any() and not nan.all()
    for e in np.flatnonzero(~nan):
        off = o["offset"][e].astype(np.float64)
        assert np.all(off <= wl[e] - car / 2 + 1e-3) and np.all(off >= -(wr[e] - car / 2) - 1e-3)
        assert np.all(np.isfinite(o["speed"][e]))
    assert np.all(np.isnan(o["speed"][nan])) and np.all(np.isnan(o["objective"][nan]))


def test_a_generator_without_a_track_width_needs_widths():
    gen = presets.track(num_envs=2, num_points=32, seed=1, validity={"track_width": 0.0})
    with pytest.raises(ParamsError, match=r"or a TrackGenerator with a validity track_width > 0"):
        racing_line(gen)


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_non_finite_widths_are_refused(bad):
    wl = np.full((2, 32), 3.0)
    wl[1, 9] = bad
    with pytest.raises(ParamsError, match=r"racing_line w_left: expected finite widths >= 0"):
        racing_line(circle(32, 30.0, 2), 3.0, wl)
