"""Formula Student cone files: the CSV of EUFS/FSDS-style tracks and FSSIM's YAML."""

from __future__ import annotations

import io
import math

import numpy as np
import yaml

from ...errors import ExportError
from ._track import Track

#: libyaml's emitter when PyYAML has it (the pure-Python one is 10x slower)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

CSV_HEADER = "tag,x,y,direction,x_variance,y_variance,xy_covariance"

#: the most boundary cones a track's files hold (a spacing is refused below its length / this)
MAX_CONES = 1_000_000


def _length(ring: np.ndarray) -> float:
    """The length of a closed polyline (its last point joined to its first)."""
    return float(np.linalg.norm(np.diff(ring, axis=0, append=ring[:1]), axis=1).sum())


def _along(ring: np.ndarray, spacing: float, skip: list[np.ndarray], clear: float) -> np.ndarray:
    """Points every ``spacing`` metres along a closed polyline from its point 0 (an equal
    spacing that divides its length), less those within ``clear`` of a ``skip`` point."""
    pts = np.concatenate([ring, ring[:1]])
    seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    count = max(3, int(round(s[-1] / spacing)))
    at = np.arange(count) * (s[-1] / count)
    out = np.stack([np.interp(at, s, pts[:, 0]), np.interp(at, s, pts[:, 1])], 1)
    for q in skip:
        out = out[np.hypot(*(out - q).T) > clear]
    return out


def cones(track: Track, spacing: float | None = None) -> dict[str, np.ndarray]:
    """The cones of a track: ``blue`` (left boundary), ``yellow`` (right), ``big_orange``
    (two each side of the start line, ``0.5 m`` before and after it) as ``(k, 2)``
    metres, and ``car_start`` ``(x, y, yaw)``.

    Raises:
        ExportError: a spacing not > 0, or so small that the boundaries would hold more
            than ``MAX_CONES`` cones (the message gives this track's smallest spacing).

    Example:
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, cones
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> c = cones(oval, spacing=5.0)
        >>> {k: v.shape for k, v in c.items()}
        {'blue': (17, 2), 'yellow': (21, 2), 'big_orange': (4, 2), 'car_start': (3,)}
    """
    spacing = float(np.mean(track.left + track.right)) if spacing is None else spacing
    if isinstance(spacing, bool) or not isinstance(spacing, int | float) or not spacing > 0:
        raise ExportError(f"fs-cones spacing: expected metres > 0, got {spacing!r}")
    if not math.isfinite(spacing):
        raise ExportError(f"fs-cones spacing: expected metres > 0, got {spacing!r}")
    lb, rb = track.boundaries()
    total = _length(lb) + _length(rb)
    if total / spacing > MAX_CONES:
        raise ExportError(
            f"fs-cones spacing: expected metres >= {total / MAX_CONES:.6g} for this track "
            f"({total:.6g} m of boundaries, at most {MAX_CONES} cones), got {spacing!r}"
        )
    i = track.start_index()
    t = track.tangents()[i]
    big = np.array([q + f * 0.5 * t for q in (lb[i], rb[i]) for f in (-1.0, 1.0)])
    clear = min(spacing, 1.0) * 0.75
    return {
        "blue": _along(lb, spacing, list(big), clear),
        "yellow": _along(rb, spacing, list(big), clear),
        "big_orange": big,
        "car_start": track.start_poses(1)[0],
    }


def fsds_csv(track: Track, spacing: float | None = None) -> bytes:
    """Returns the cone CSV (``tag,x,y,direction,x_variance,y_variance,xy_covariance``).

    Units and frame: metres, the track's frame; ``direction`` 0 for cones, the start yaw
    (radians) for the ``car_start`` row; variances 0. Blue cones on the left of travel,
    yellow on the right, big orange at the start line. Tolerance: every cone lies on its
    boundary (linear between the centerline points' boundary points), printed with 6
    decimals; the spacing is ``spacing`` (default: the mean full width) adjusted so that a
    whole number of gaps fills each boundary.

    Example:
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, fsds_csv
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> fsds_csv(oval).decode().splitlines()[:2]  # the first blue cone at point 0
        ['tag,x,y,direction,x_variance,y_variance,xy_covariance', 'blue,18.000000,0.000000,0,0,0,0']
    """
    c = cones(track, spacing)
    buf = io.StringIO()
    buf.write(CSV_HEADER + "\n")
    for tag in ("blue", "yellow", "big_orange"):
        for x, y in c[tag]:
            buf.write(f"{tag},{x:.6f},{y:.6f},0,0,0,0\n")
    x, y, yaw = c["car_start"]
    buf.write(f"car_start,{x:.6f},{y:.6f},{yaw:.6f},0,0,0\n")
    return buf.getvalue().encode()


def fssim_yaml(track: Track, spacing: float | None = None) -> bytes:
    """Returns FSSIM's track YAML: ``cones_left`` (blue), ``cones_right`` (yellow),
    ``cones_orange`` (none), ``cones_orange_big``, ``tk_device`` (the start line's two
    ends) and ``starting_pose_front_wing`` (``x, y, yaw``). Units, frame and tolerance as
    ``fsds_csv`` (values as YAML floats, not rounded).

    Example:
        >>> import yaml
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, fssim_yaml
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> doc = yaml.safe_load(fssim_yaml(oval))
        >>> list(doc)
        ['cones_left', 'cones_right', 'cones_orange', 'cones_orange_big', 'tk_device',
         'starting_pose_front_wing']
        >>> len(doc["cones_orange_big"]), doc["cones_orange"]
        (4, [])
    """
    c = cones(track, spacing)
    a, b = track.start_line()
    doc = {
        "cones_left": c["blue"].tolist(),
        "cones_right": c["yellow"].tolist(),
        "cones_orange": [],
        "cones_orange_big": c["big_orange"].tolist(),
        "tk_device": [a.tolist(), b.tolist()],
        "starting_pose_front_wing": c["car_start"].tolist(),
    }
    return yaml.dump(Dumper=_DUMPER, data=doc, sort_keys=False, default_flow_style=None).encode()


def render(track: Track, spacing: float | None = None) -> dict[str, bytes]:
    """``<stem>_cones.csv`` and ``<stem>_fssim.yaml``.

    Example:
        >>> import tempfile
        >>> import numpy as np
        >>> from procgen_nb.track_gen import export
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = export.Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> with tempfile.TemporaryDirectory() as out:
        ...     entry = export.fs_cones(oval, out)
        >>> entry["tracks"][0]["files"]
        ['track_env0_cones.csv', 'track_env0_fssim.yaml']
    """
    return {
        f"{track.stem}_cones.csv": fsds_csv(track, spacing),
        f"{track.stem}_fssim.yaml": fssim_yaml(track, spacing),
    }


__all__ = ["CSV_HEADER", "cones", "fsds_csv", "fssim_yaml", "render"]
