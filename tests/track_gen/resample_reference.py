"""Independent NumPy references for resampling a closed polyline (float64).

A closed loop of ``m`` points has ``m`` edges (the last one back to point 0). A point at
arc length ``s`` lies on the edge ``j`` whose cumulative range holds ``s``, at
``p[j] + (p[j+1] - p[j]) * (s - cum[j]) / len[j]``.
"""

from __future__ import annotations

import math

import numpy as np


def _edges(loop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(loop, dtype=np.float64)
    lens = np.hypot(*(np.roll(p, -1, axis=0) - p).T)
    return p, np.concatenate([[0.0], np.cumsum(lens)])


def point_at(loop: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The points at arc lengths ``s`` (each in ``[0, perimeter)``) along the closed loop."""
    p, cum = _edges(loop)
    m = len(p)
    j = np.clip(np.searchsorted(cum, s, side="right") - 1, 0, m - 1)
    t = (s - cum[j]) / (cum[j + 1] - cum[j])
    return p[j] + (p[(j + 1) % m] - p[j]) * t[:, None]


def perimeter(loop: np.ndarray) -> float:
    """The length of the closed loop."""
    return float(_edges(loop)[1][-1])


def arc_resample(loop: np.ndarray, n: int) -> np.ndarray:
    """``n`` points evenly spaced by arc length, the first at point 0."""
    return point_at(loop, perimeter(loop) * np.arange(n) / n)


def constant_spacing(loop: np.ndarray, spacing: float) -> np.ndarray:
    """Points about ``spacing`` apart by arc length: ``floor(perimeter / spacing)`` of them
    (at least 3), evenly spaced, so the loop closes with the same step."""
    total = perimeter(loop)
    count = max(math.floor(total / spacing), 3)
    return point_at(loop, total * np.arange(count) / count)


def arc_positions(loop: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """The arc length of each of ``pts`` along the loop (each is projected on its nearest
    edge): how far along the track a resampled point sits."""
    p, cum = _edges(loop)
    a = p[None, :, :]
    d = np.roll(p, -1, axis=0)[None, :, :] - a
    q = np.asarray(pts, dtype=np.float64)[:, None, :]
    t = np.clip(((q - a) * d).sum(-1) / (d * d).sum(-1), 0.0, 1.0)
    dist = np.hypot(*(a + d * t[..., None] - q).transpose(2, 0, 1))
    j = dist.argmin(axis=1)
    return cum[j] + t[np.arange(len(pts)), j] * (cum[j + 1] - cum[j])


__all__ = ["arc_positions", "arc_resample", "constant_spacing", "perimeter", "point_at"]
