"""The corner repair of ``bezier``, ``hull`` and ``voronoi`` in NumPy (their ``repair``
switch, ``track_gen/generators/_repair_kernels.py``), written from its account:

- ``round_corners(c, spacing, corner_radius)``: at most 20 rounds of: walk the edges in
  order, merging the ends of each edge shorter than ``spacing`` into their midpoint (and
  testing the new edge from there; never below 3 points), then move every vertex whose
  corner is tight (turn ``phi`` above ``1.25 * 2 pi / n`` and fillet radius
  ``min(a, b) / 2 / tan(phi / 2)`` under ``corner_radius``) halfway to its neighbours'
  midpoint (all at once), stopping at a round with none; a polygon that changed is scaled
  about its box's centre back into the box it had.
- ``smooth_chain(c, samples, tension)``: the closed cubic Bezier chain with handles
  ``tension / 6`` of the neighbours' chord, each clamped to a third of its span.
"""

from __future__ import annotations

import numpy as np

ROUNDS = 20


def _merge(c: np.ndarray, spacing: float) -> tuple[np.ndarray, bool]:
    merged, i = False, 0
    while i < len(c) and len(c) > 3:
        j = (i + 1) % len(c)
        if ((c[j] - c[i]) ** 2).sum() < spacing * spacing:
            c[i] = (c[i] + c[j]) / 2
            c = np.delete(c, j, 0)
            merged = True
        else:
            i += 1
    return c, merged


def round_corners(c: np.ndarray, spacing: float, corner_radius: float) -> np.ndarray:
    """The repaired control polygon of ``c`` [k, 2] (a new array; k >= 3 or returned as is)."""
    c = np.array(c, np.float64)
    if len(c) < 3:
        return c
    lo, hi = c.min(0), c.max(0)
    changed = False
    for _ in range(ROUNDS):
        c, merged = _merge(c, spacing)
        changed |= merged
        n = len(c)
        u = c - np.roll(c, 1, 0)
        v = np.roll(c, -1, 0) - c
        lu, lv = np.hypot(*u.T), np.hypot(*v.T)
        den = lu * lv
        cs = (u * v).sum(1) / np.where(den > 0, den, 1)
        floor = np.cos(1.25 * 2 * np.pi / n)
        r = 0.5 * np.minimum(lu, lv) * np.sqrt(np.maximum(1 + cs, 0) / np.maximum(1 - cs, 1e-30))
        sharp = (den > 0) & (cs < floor) & (r < corner_radius)
        if not sharp.any():
            break
        mid = (np.roll(c, 1, 0) + np.roll(c, -1, 0)) / 2
        c[sharp] += (mid[sharp] - c[sharp]) / 2
        changed = True
    if not changed:
        return c
    lo2, hi2 = c.min(0), c.max(0)
    w0, w = hi - lo, hi2 - lo2
    if not (w > 0).any():
        return c
    s = np.min(w0[w > 0] / w[w > 0])
    return (lo + hi) / 2 + (c - (lo2 + hi2) / 2) * s


def smooth_chain(c: np.ndarray, samples: int, tension: float = 1.0) -> np.ndarray:
    """The closed Bezier chain through ``c`` [k, 2]: [k * samples, 2]."""
    kc = len(c)
    i = np.arange(kc * samples)
    k, t = i // samples, (i % samples / samples)[:, None]
    pm, p0, p3, p4 = (c[(k + d) % kc] for d in (-1, 0, 1, 2))
    cap = np.hypot(*(p3 - p0).T)[:, None] / 3

    def clamp(h: np.ndarray) -> np.ndarray:
        ln = np.hypot(*h.T)[:, None]
        return np.where(ln > cap, h * (cap / np.where(ln > 0, ln, 1)), h)

    p1 = p0 + clamp((p3 - pm) * (tension / 6))
    p2 = p3 - clamp((p4 - p0) * (tension / 6))
    s = 1 - t
    return p0 * s**3 + p1 * 3 * s * s * t + p2 * 3 * s * t * t + p3 * t**3
