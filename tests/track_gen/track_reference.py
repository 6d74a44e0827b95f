"""Independent NumPy references for the validity checks (brute force, summed angles)."""

from __future__ import annotations

import math

import numpy as np
import warp as wp


def _orient(ax, ay, bx, by, cx, cy):
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


def _on_seg(ax, ay, bx, by, cx, cy):
    return (
        (np.minimum(ax, bx) <= cx)
        & (cx <= np.maximum(ax, bx))
        & (np.minimum(ay, by) <= cy)
        & (cy <= np.maximum(ay, by))
    )


def crossings(xy: np.ndarray) -> int:
    """Counts pairs of non-adjacent segments of the closed loop ``xy`` [N, 2] that share a
    point, by testing every pair (float64 orientation tests)."""
    p = np.asarray(xy, dtype=np.float64)
    n = len(p)
    q = np.roll(p, -1, axis=0)
    i, j = np.triu_indices(n, k=2)
    keep = ~((i == 0) & (j == n - 1))
    i, j = i[keep], j[keep]
    a, b, c, d = p[i], q[i], p[j], q[j]
    d1 = _orient(c[:, 0], c[:, 1], d[:, 0], d[:, 1], a[:, 0], a[:, 1])
    d2 = _orient(c[:, 0], c[:, 1], d[:, 0], d[:, 1], b[:, 0], b[:, 1])
    d3 = _orient(a[:, 0], a[:, 1], b[:, 0], b[:, 1], c[:, 0], c[:, 1])
    d4 = _orient(a[:, 0], a[:, 1], b[:, 0], b[:, 1], d[:, 0], d[:, 1])
    proper = (((d1 > 0) & (d2 < 0)) | ((d1 < 0) & (d2 > 0))) & (
        ((d3 > 0) & (d4 < 0)) | ((d3 < 0) & (d4 > 0))
    )
    touch = (
        ((d1 == 0) & _on_seg(c[:, 0], c[:, 1], d[:, 0], d[:, 1], a[:, 0], a[:, 1]))
        | ((d2 == 0) & _on_seg(c[:, 0], c[:, 1], d[:, 0], d[:, 1], b[:, 0], b[:, 1]))
        | ((d3 == 0) & _on_seg(a[:, 0], a[:, 1], b[:, 0], b[:, 1], c[:, 0], c[:, 1]))
        | ((d4 == 0) & _on_seg(a[:, 0], a[:, 1], b[:, 0], b[:, 1], d[:, 0], d[:, 1]))
    )
    return int(np.count_nonzero(proper | touch))


def turning_number(xy: np.ndarray) -> int:
    """Sums the signed exterior angles of the closed loop and divides by 2 pi."""
    p = np.asarray(xy, dtype=np.float64)
    u = p - np.roll(p, 1, axis=0)
    v = np.roll(p, -1, axis=0) - p
    ok = (np.hypot(*u.T) > 0) & (np.hypot(*v.T) > 0)
    ang = np.arctan2(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0], (u * v).sum(1))
    return int(round(ang[ok].sum() / (2 * math.pi)))


def min_radius_ok(xy: np.ndarray, r_min: float) -> bool:
    """True when every circumradius of three consecutive points is >= r_min."""
    if r_min <= 0:
        return True
    p = np.asarray(xy, dtype=np.float64)
    a, b, c = np.roll(p, 1, axis=0), p, np.roll(p, -1, axis=0)
    la = np.hypot(*(b - a).T)
    lb = np.hypot(*(c - b).T)
    lc = np.hypot(*(c - a).T)
    area2 = np.abs(_orient(a[:, 0], a[:, 1], b[:, 0], b[:, 1], c[:, 0], c[:, 1]))
    with np.errstate(divide="ignore", invalid="ignore"):
        radius = np.where(area2 > 0, la * lb * lc / (2 * area2), np.inf)
    return bool((radius >= r_min).all())


def clearance_ok(xy: np.ndarray, width: float) -> bool:
    """True when points more than pi*width/2 apart along the loop are >= width apart."""
    if width <= 0:
        return True
    p = np.asarray(xy, dtype=np.float64)
    n = len(p)
    h = np.hypot(*(np.roll(p, -1, axis=0) - p).T).sum() / n
    i, j = np.triu_indices(n, k=1)
    d = np.minimum(j - i, n - (j - i))
    far = d * h > 0.5 * math.pi * width
    dist2 = ((p[i] - p[j]) ** 2).sum(1)
    return bool(not np.any(far & (dist2 < width * width)))


def closed(xy: np.ndarray) -> bool:
    """True when every point is finite and every segment, the closing one too, has length."""
    p = np.asarray(xy, dtype=np.float64)
    return bool(
        len(p) >= 3
        and np.isfinite(p).all()
        and (np.hypot(*(np.roll(p, -1, axis=0) - p).T) > 0).all()
    )


def valid(xy: np.ndarray, r_min: float = 0.0, width: float = 0.0) -> bool:
    """The whole validity rule, from the references above."""
    if not closed(xy):
        return False
    return (
        crossings(xy) == 0
        and abs(turning_number(xy)) == 1
        and min_radius_ok(xy, r_min)
        and clearance_ok(xy, width)
    )


def random_loops(rng: np.random.Generator, count: int, n: int) -> np.ndarray:
    """Random closed loops [count, n, 2]: a mix of star polygons (mostly simple), jittered
    stars (some crossing), figure-eights (turning number 0), closed random walks and
    scribbles (points in random order: long segments, many crossings)."""
    out = np.empty((count, n, 2), dtype=np.float32)
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    for k in range(count):
        kind = k % 5
        if kind == 0:
            r = 0.5 + 0.45 * rng.random(n)
            th = np.sort(rng.random(n)) * 2 * np.pi
            pts = np.c_[r * np.cos(th), r * np.sin(th)]
        elif kind == 1:
            r = 0.6 + 0.2 * rng.standard_normal(n)
            th = t + rng.normal(0, 2 * np.pi / n * 1.2, n)
            pts = np.c_[r * np.cos(th), r * np.sin(th)]
        elif kind == 2:
            a = 0.5 + 0.1 * rng.random()
            pts = np.c_[a * np.sin(t), a * np.sin(t) * np.cos(t)]
            pts += rng.normal(0, 0.01, pts.shape)
        elif kind == 3:
            steps = rng.standard_normal((n, 2))
            steps -= steps.mean(0)
            pts = np.cumsum(steps, 0) * 0.1
        else:
            pts = rng.uniform(-1, 1, (n, 2))
        if rng.random() < 0.5:
            pts = pts[::-1]
        out[k] = pts
    return out


def upload_tracks(xy: np.ndarray, device: str) -> wp.array:
    """Returns ``[E, N, 2]`` float32 tracks as an ``[E*N]`` vec2 device array."""
    flat = np.ascontiguousarray(xy, dtype=np.float32).reshape(-1, 2)
    return wp.array(flat, dtype=wp.vec2, device=device)
