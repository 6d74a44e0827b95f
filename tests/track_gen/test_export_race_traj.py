"""The TUMFTM race-trajectory CSV, read back by ``numpy.loadtxt`` (``"; "``-separated): on a
circle worked by hand (the widest circle that fits, driven at ``sqrt(mu g r)``), its psi,
kappa and ax columns against finite differences of its own x, y, s and vx columns; on an
oval, ax against the forward difference and the a_max bound."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from procgen_nb.errors import ExportError
from procgen_nb.track_gen import export, presets

G = 9.81


def _read(path):
    first = path.read_text().splitlines()[0]
    assert first == "# s_m; x_m; y_m; psi_rad; kappa_radpm; vx_mps; ax_mps2"
    return np.loadtxt(path, delimiter=";", comments="#")


def _circle(N, R):
    th = np.arange(N) * 2 * np.pi / N
    return np.stack([R * np.cos(th), R * np.sin(th)], -1), th


def test_circle_by_hand_and_by_finite_differences(tmp_path):
    N, R = 128, 50.0
    xy, th = _circle(N, R)
    track = export.Track(xy=xy, left=np.full(N, 3.0), right=np.full(N, 4.0), env=0)
    export.export(track, "tumftm-traj", tmp_path, vehicle_width=1.0, mu=1.2, v_max=70.0)
    rows = _read(tmp_path / "track_env0_traj_race_cl.csv")
    assert rows.shape == (N + 1, 7)
    np.testing.assert_array_equal(rows[-1, 1:], rows[0, 1:])  # closed: point 0 again
    s, x, y, psi, kappa, vx, ax = rows[:-1].T
    # by hand: counter-clockwise, right is outward; the widest circle keeps 0.5 m off the edge
    r = R + 4.0 - 0.5
    np.testing.assert_allclose(np.hypot(x, y), r, rtol=1e-4)
    np.testing.assert_allclose(kappa, 1 / r, rtol=1e-3)
    np.testing.assert_allclose(vx, math.sqrt(1.2 * G * r), rtol=1e-3)
    np.testing.assert_allclose(ax, 0.0, atol=1e-2)  # float32 speeds: 1e-5 relative noise
    np.testing.assert_allclose(np.angle(np.exp(1j * (psi - th))), 0.0, atol=1e-5)  # north = 0
    chord = 2 * r * math.sin(math.pi / N)
    np.testing.assert_allclose(s, chord * np.arange(N), rtol=1e-4)
    np.testing.assert_allclose(rows[-1, 0], N * chord, rtol=1e-4)
    # finite differences of the file's own columns
    X, Y, S = rows[:, 1], rows[:, 2], rows[:, 0]
    Xc, Yc = np.r_[X[-2], X], np.r_[Y[-2], Y]  # point N-1 before point 0
    heading = np.arctan2(Yc[2:] - Yc[:-2], Xc[2:] - Xc[:-2]) - np.pi / 2
    np.testing.assert_allclose(np.angle(np.exp(1j * (psi - heading))), 0.0, atol=1e-6)
    up = np.unwrap(np.r_[psi, psi[0]])
    kfd = np.diff(up) / np.diff(S)  # heading change per metre, point i to i+1
    np.testing.assert_allclose(kfd, 1 / r, rtol=2e-3)
    V = rows[:, 5]
    np.testing.assert_allclose(ax, (V[1:] ** 2 - V[:-1] ** 2) / (2 * np.diff(S)), atol=1e-5)


def test_oval_accelerates_within_a_max(tmp_path):
    N = 200
    t = np.arange(N) * 2 * np.pi / N
    xy = np.stack([120 * np.cos(t), 40 * np.sin(t)], -1)
    track = export.Track(xy=xy, left=np.full(N, 5.0), right=np.full(N, 5.0), env=3)
    export.export(track, "tumftm-traj", tmp_path, a_max=4.0, v_max=60.0)
    rows = _read(tmp_path / "track_env3_traj_race_cl.csv")
    S, V, AX = rows[:, 0], rows[:, 5], rows[:-1, 6]
    np.testing.assert_allclose(AX, (V[1:] ** 2 - V[:-1] ** 2) / (2 * np.diff(S)), atol=2e-5)
    assert AX.max() > 1.0 and AX.min() < -1.0  # it brakes and accelerates
    assert np.all(np.abs(AX) <= 4.0 * (1 + 1e-4))
    # psi: the heading of the central difference of the file's points
    X, Y = rows[:-1, 1], rows[:-1, 2]
    h = np.arctan2(np.roll(Y, -1) - np.roll(Y, 1), np.roll(X, -1) - np.roll(X, 1)) - np.pi / 2
    np.testing.assert_allclose(np.angle(np.exp(1j * (rows[:-1, 3] - h))), 0.0, atol=1e-6)
    assert np.all((rows[:, 3] >= -np.pi - 1e-7) & (rows[:, 3] < np.pi))  # 7 decimals


def test_rows_are_tumftms_format_by_hand(tmp_path):
    # TUMFTM's export_traj_race: np.savetxt(fmt="%.7f; %.7f; ...", header=...): "; " apart.
    # A ring of radius 50 m, 4 m right (outside) and a 1 m car: the line is the circle of
    # r = 53.5 m; point 0 is due east, heading north (psi 0), kappa 1/r = 0.0186916, at
    # v_max = 20 m/s (sqrt(1.2 g r) = 25.1 is above it), ax 0.
    xy, _ = _circle(16, 50.0)
    track = export.Track(xy=xy, left=np.full(16, 3.0), right=np.full(16, 4.0), env=0)
    export.export(track, "tumftm-traj", tmp_path, vehicle_width=1.0, mu=1.2, v_max=20.0)
    lines = (tmp_path / "track_env0_traj_race_cl.csv").read_text().splitlines()
    assert (
        lines[1] == "0.0000000; 53.5000000; 0.0000000; 0.0000000; 0.0186916; 20.0000000; 0.0000000"
    )
    assert all(line.count("; ") == 6 and line.count(";") == 6 for line in lines)


def test_a_generator_at_scale_1_names_the_scale(tmp_path):
    gen = presets.track(num_envs=2, num_points=64, seed=0)  # world units: 0.05 wide tracks
    with pytest.raises(ExportError, match=r"vehicle_width 2 m .*got 0.05 m .*raise the scale"):
        export.tumftm_traj(gen, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_generator_exports_one_file_per_valid_track(tmp_path):
    gen = presets.track(num_envs=4, num_points=64, seed=3, width={"left": 0.03, "right": 0.03})
    entry = export.tumftm_traj(gen, tmp_path, scale=100.0, vehicle_width=1.0)
    assert entry["tracks"]
    for row in entry["tracks"]:
        (name,) = row["files"]
        assert name.endswith("_traj_race_cl.csv")
        got = _read(tmp_path / name)
        assert got.shape == (65, 7) and np.all(np.isfinite(got))
    index = json.loads((tmp_path / "index.json").read_text())
    assert "tumftm-traj" in index["formats"]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (
            {"vehicle_width": 10.0},
            r"track_env0: expected the track at least as wide as vehicle_width 10 m at every "
            r"point, got 6 m at point 0; .*--scale on the command line",
        ),
        ({"mu": 0.0}, r"VehicleParams mu: expected a finite number > 0, got 0.0"),
        ({"v_max": -3.0}, r"VehicleParams v_max: expected a finite number > 0, got -3.0"),
        ({"a_max": math.nan}, r"VehicleParams a_max: expected a finite number > 0, got nan"),
        ({"top_speed": 3.0}, r"tumftm-traj options: expected some of \['mu'"),
    ],
)
def test_refused_options_write_nothing(tmp_path, options, match):
    xy, _ = _circle(64, 30.0)
    track = export.Track(xy=xy, left=np.full(64, 3.0), right=np.full(64, 3.0), env=0)
    with pytest.raises(ExportError, match=match):
        export.export(track, "tumftm-traj", tmp_path / "out", **options)
    assert not (tmp_path / "out").exists()
