"""TUMFTM race-trajectory CSV (the ``traj_race_cl.csv`` of TUMFTM's
global_racetrajectory_optimization): the racing line and its speed profile.

The line is ``track_gen.racing_line`` of the track (its widths, the vehicle given as the
renderer's options), in metres.
"""

from __future__ import annotations

import io
import math

import numpy as np

from ...errors import ExportError, ParamsError
from ..racing import VehicleParams, racing_line
from ._track import Track

HEADER = "# s_m; x_m; y_m; psi_rad; kappa_radpm; vx_mps; ax_mps2"


def trajectory(
    track: Track,
    mu: float = 1.0,
    v_max: float = 80.0,
    a_max: float = 8.0,
    vehicle_width: float = 2.0,
    g: float = 9.81,
) -> np.ndarray:
    """Returns the race trajectory of ``track`` as ``(N + 1, 7)`` float64 rows
    ``s_m, x_m, y_m, psi_rad, kappa_radpm, vx_mps, ax_mps2`` (the first point repeated last).

    Definitions (``q_i`` the line's points, ``v_i`` its speeds): ``s`` the summed segment
    lengths from point 0 (the lap's length on the last row); ``psi`` the heading of the
    central tangent ``q_{i+1} - q_{i-1}``, 0 north (+y) and positive to the left (TUMFTM's
    convention: ``atan2(t_y, t_x) - pi/2`` in ``[-pi, pi)``); ``kappa`` the signed curvature of
    the circle through ``q_{i-1}, q_i, q_{i+1}`` (+ turning left); ``ax`` the forward
    difference ``(v_{i+1}^2 - v_i^2) / (2 |q_{i+1} - q_i|)``.

    Raises:
        ExportError: vehicle values ``VehicleParams`` refuses, widths narrower than the
            vehicle (named by point, with the ``scale`` hint), or a centerline the racing line cannot be driven on.
    """
    try:
        veh = VehicleParams(mu=mu, v_max=v_max, a_max=a_max, width=vehicle_width, g=g)
        total = np.asarray(track.left, np.float64) + np.asarray(track.right, np.float64)
        i = int(np.argmin(total))
        if total[i] < veh.width:
            raise ExportError(
                f"tumftm-traj track {track.stem}: expected the track at least as wide as "
                f"vehicle_width {veh.width:g} m at every point, got {total[i]:.6g} m at point "
                f"{i}; the widths are world units times scale (metres per world unit: "
                "scale= in Python, --scale on the command line), so raise the scale or "
                "give a narrower vehicle_width (--option vehicle_width=...)"
            )
        xy = np.asarray(track.xy, np.float64)[None]
        line = racing_line(xy, track.right[None], track.left[None], veh).numpy()
    except ParamsError as exc:
        raise ExportError(f"tumftm-traj track {track.stem}: {exc}") from None
    q = line["xy"][0].astype(np.float64)
    v = line["speed"][0].astype(np.float64)
    kappa = line["curvature"][0].astype(np.float64)
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
        raise ExportError(
            f"tumftm-traj track {track.stem}: expected a drivable centerline (finite, no "
            "repeated points), got no racing line"
        )
    ds = np.linalg.norm(np.roll(q, -1, 0) - q, axis=1)
    s = np.concatenate([[0.0], np.cumsum(ds)])
    t = np.roll(q, -1, 0) - np.roll(q, 1, 0)
    psi = np.mod(np.arctan2(t[:, 1], t[:, 0]) - math.pi / 2 + math.pi, 2 * math.pi) - math.pi
    ax = (np.roll(v, -1) ** 2 - v**2) / (2 * ds)
    rows = np.column_stack([s[:-1], q, psi, kappa, v, ax])
    last = rows[:1].copy()
    last[0, 0] = s[-1]
    return np.vstack([rows, last])


def race_traj_csv(track: Track, **vehicle: float) -> bytes:
    """Returns the TUMFTM race-trajectory CSV of a track: ``HEADER``, then one row per line
    point, its values ``%.7f`` joined by ``"; "`` (TUMFTM's ``export_traj_race`` writes
    ``np.savetxt(..., fmt="%.7f; %.7f; ...")``; ``trajectory``'s rows; ``vehicle``: its
    options).

    Units and frame: metres, seconds, radians, x east / y north (the track's frame); travel
    along increasing point index, the first point repeated at the end (a closed lap, as
    TUMFTM's ``traj_race_cl``). Tolerance: 7 decimals (within 5e-8 of each value).

    Example:
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, race_traj_csv
        >>> a = np.linspace(0, 2 * np.pi, 64, endpoint=False)
        >>> xy = np.stack([50 * np.cos(a), 50 * np.sin(a)], 1)  # a ring of radius 50 m
        >>> ring = Track(xy, left=np.full(64, 5.0), right=np.full(64, 5.0))
        >>> rows = race_traj_csv(ring).decode().splitlines()
        >>> rows[0]
        '# s_m; x_m; y_m; psi_rad; kappa_radpm; vx_mps; ax_mps2'
        >>> x, v = (float(rows[1].split(";")[k]) for k in (1, 5))
        >>> round(x, 3), round(v, 3)  # the widest circle a 2 m car fits: r = 54, v = sqrt(g r)
        (54.0, 23.016)
    """
    buf = io.StringIO()
    buf.write(HEADER + "\n")
    for row in trajectory(track, **vehicle):
        buf.write("; ".join(f"{x:.7f}" for x in row) + "\n")
    return buf.getvalue().encode()


def render(
    track: Track,
    mu: float = 1.0,
    v_max: float = 80.0,
    a_max: float = 8.0,
    vehicle_width: float = 2.0,
    g: float = 9.81,
) -> dict[str, bytes]:
    """``<stem>_traj_race_cl.csv``: ``race_traj_csv`` (options: the vehicle's ``mu``,
    ``v_max`` m/s, ``a_max`` m/s^2, ``vehicle_width`` m, ``g`` m/s^2).

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> from procgen_nb.track_gen import export
        >>> a = np.linspace(0, 2 * np.pi, 64, endpoint=False)
        >>> xy = np.stack([50 * np.cos(a), 50 * np.sin(a)], 1)  # a ring of radius 50 m
        >>> ring = export.Track(xy, left=np.full(64, 5.0), right=np.full(64, 5.0))
        >>> with tempfile.TemporaryDirectory() as out:
        ...     entry = export.tumftm_traj(ring, out, mu=1.2)
        >>> entry["tracks"][0]["files"]
        ['track_env0_traj_race_cl.csv']
    """
    veh = {"mu": mu, "v_max": v_max, "a_max": a_max, "vehicle_width": vehicle_width, "g": g}
    return {f"{track.stem}_traj_race_cl.csv": race_traj_csv(track, **veh)}


__all__ = ["HEADER", "race_traj_csv", "render", "trajectory"]
