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
    """
    buf = io.StringIO()
    buf.write(HEADER + "\n")
    for (x, y), wr, wl in zip(track.xy, track.right, track.left, strict=True):
        buf.write(f"{x:.6f},{y:.6f},{wr:.6f},{wl:.6f}\n")
    return buf.getvalue().encode()


def render(track: Track) -> dict[str, bytes]:
    """``<stem>.csv``: ``tumftm_csv``."""
    return {f"{track.stem}.csv": tumftm_csv(track)}


__all__ = ["HEADER", "render", "tumftm_csv"]
