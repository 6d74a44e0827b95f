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

The references time ``round_corners_batch`` and ``smooth_chain_batch``: every env at once
(padded [E, K, 2] polygons with their counts; loops over the walk's steps and the rounds,
never over the envs), the same bytes as the per-env ``round_corners`` and ``smooth_chain``,
which stay as their check (``tests/test_benchmarks.py``) and the kernels' (one polygon).
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


# -- every env at once: padded [E, K, 2] polygons with their counts ---------------------------
def _gather(c: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return np.take_along_axis(c, idx[..., None], axis=1)


def _merge_batch(c: np.ndarray, n: np.ndarray, live: np.ndarray, spacing: float) -> np.ndarray:
    """:func:`_merge` of the ``live`` envs of ``c`` [E, K, 2] (counts ``n``, both updated in
    place), one step of every env's walk at a time; returns which envs merged."""
    E, K, _ = c.shape
    pos = np.arange(K)
    i = np.zeros(E, np.int64)
    merged = np.zeros(E, bool)
    while True:
        act = live & (i < n) & (n > 3)
        if not act.any():
            return merged
        a = np.flatnonzero(act)
        ia = i[a]
        ja = (ia + 1) % n[a]
        ci, cj = c[a, ia], c[a, ja]
        m = ((cj - ci) ** 2).sum(1) < spacing * spacing
        i[a[~m]] += 1
        if m.any():
            a, ia, ja = a[m], ia[m], ja[m]
            c[a, ia] = (ci[m] + cj[m]) / 2
            src = np.minimum(pos + (pos >= ja[:, None]), K - 1)  # j deleted: the rest move down
            c[a] = _gather(c[a], src)
            n[a] -= 1
            merged[a] = True


def round_corners_batch(
    c: np.ndarray, n: np.ndarray, spacing: float, corner_radius: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`round_corners` of every env at once: ``c`` [E, K, 2] polygons, env e's first
    ``n[e]`` points (the rest ignored); returns (repaired [E, K, 2] float64, counts [E]),
    the points past a count unspecified. Loops over the walk's steps and the rounds, never
    over the envs."""
    c = np.array(c, np.float64)
    n = np.array(n, np.int64)
    E, K, _ = c.shape
    pos = np.arange(K)
    valid = pos < n[:, None]
    big = np.inf

    def box(c: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = valid[..., None]
        return np.where(m, c, big).min(1), np.where(m, c, -big).max(1)

    lo, hi = box(c, valid)
    live = n >= 3
    changed = np.zeros(E, bool)
    for _ in range(ROUNDS):
        if not live.any():
            break
        changed |= _merge_batch(c, n, live, spacing)
        a = np.flatnonzero(live)
        ca, na = c[a], n[a][:, None]
        k = np.minimum(pos[None], na - 1)
        prv, nxt = _gather(ca, (k - 1) % na), _gather(ca, (k + 1) % na)
        u, v = ca - prv, nxt - ca
        lu, lv = np.hypot(u[..., 0], u[..., 1]), np.hypot(v[..., 0], v[..., 1])
        den = lu * lv
        cs = (u * v).sum(2) / np.where(den > 0, den, 1)
        floor = np.cos(1.25 * 2 * np.pi / na)
        r = 0.5 * np.minimum(lu, lv) * np.sqrt(np.maximum(1 + cs, 0) / np.maximum(1 - cs, 1e-30))
        sharp = (den > 0) & (cs < floor) & (r < corner_radius) & (pos[None] < na)
        any_sharp = sharp.any(1)
        live[a[~any_sharp]] = False
        mid = (prv + nxt) / 2
        ca = np.where(sharp[..., None], ca + (mid - ca) / 2, ca)
        c[a] = ca
        changed[a[any_sharp]] = True
    lo2, hi2 = box(c, pos < n[:, None])
    with np.errstate(invalid="ignore"):  # an env of no points: its box is empty
        w0, w = hi - lo, hi2 - lo2
        pos_w = w > 0
        s = np.where(pos_w, w0 / np.where(pos_w, w, 1), np.inf).min(1)
        fit = changed & pos_w.any(1)
        out = (lo + hi)[:, None] / 2 + (c - (lo2 + hi2)[:, None] / 2) * s[:, None, None]
    return np.where(fit[:, None, None], out, c), n


def smooth_chain_batch(
    c: np.ndarray, n: np.ndarray, samples: int, tension: float = 1.0
) -> list[np.ndarray]:
    """:func:`smooth_chain` of every env at once: ``c`` [E, K, 2] with counts ``n`` (>= 1);
    returns the chains, a list of [n[e] * samples, 2] arrays (views of one flat array: every
    env's points computed together, no padding)."""
    E, K, _ = c.shape
    n = np.asarray(n, np.int64)
    size = n * samples
    env = np.repeat(np.arange(E), size)
    i = np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
    k, t = i // samples, (i % samples / samples)[:, None]
    flat, base, ne = c.reshape(-1, 2), env * K, n[env]
    pm, p0, p3, p4 = (flat[base + (k + d) % ne] for d in (-1, 0, 1, 2))
    cap = np.hypot(*(p3 - p0).T)[:, None] / 3

    def clamp(h: np.ndarray) -> np.ndarray:
        ln = np.hypot(*h.T)[:, None]
        return np.where(ln > cap, h * (cap / np.where(ln > 0, ln, 1)), h)

    p1 = p0 + clamp((p3 - pm) * (tension / 6))
    p2 = p3 - clamp((p4 - p0) * (tension / 6))
    s = 1 - t
    out = p0 * s**3 + p1 * 3 * s * s * t + p2 * 3 * s * t * t + p3 * t**3
    return np.split(out, np.cumsum(size)[:-1]) if E else []
