"""TUMFTM centerline CSV (the input of TUMFTM's global_racetrajectory_optimization)."""

from __future__ import annotations

import io

from ._track import Track

HEADER = "# x_m,y_m,w_tr_right_m,w_tr_left_m"


def tumftm_csv(track: Track) -> bytes:
    """Returns the TUMFTM CSV of a track.

    Units and frame: metres, x east, y north (the track's frame); one row per centerline
    point in the direction of travel, the first point not repeated at the end. Widths are
    measured along the normal to the right of travel (``w_tr_right_m``) and its opposite
    (``w_tr_left_m``), from the same central-tangent normal as the boundaries.
    Tolerance: every value printed with 6 decimals (within 5e-7 m).

    Example:
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, tumftm_csv
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> tumftm_csv(oval).decode().splitlines()[:2]
        ['# x_m,y_m,w_tr_right_m,w_tr_left_m', '20.000000,0.000000,2.000000,2.000000']
    """
    buf = io.StringIO()
    buf.write(HEADER + "\n")
    for (x, y), wr, wl in zip(track.xy, track.right, track.left, strict=True):
        buf.write(f"{x:.6f},{y:.6f},{wr:.6f},{wl:.6f}\n")
    return buf.getvalue().encode()


def render(track: Track) -> dict[str, bytes]:
    """``<stem>.csv``: ``tumftm_csv``.

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> from procgen_nb.track_gen import export
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = export.Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> with tempfile.TemporaryDirectory() as out:
        ...     entry = export.tumftm(oval, out)
        >>> entry["tracks"][0]["files"]
        ['track_env0.csv']
    """
    return {f"{track.stem}.csv": tumftm_csv(track)}


__all__ = ["HEADER", "render", "tumftm_csv"]
