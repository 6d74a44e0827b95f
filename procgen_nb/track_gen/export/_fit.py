"""Fitting a closed centerline with OpenDRIVE plan-view pieces: lines, arcs and cubic
``paramPoly3`` curves, each within a tolerance of the points it covers.

Greedy: from the current point, the longest run of points that one piece fits (the
simplest kind first: a line, then an arc, then a cubic Hermite curve with the centerline's
tangents at both ends, which keeps the heading continuous), found by doubling then
bisection. A piece of one segment always fits (a paramPoly3 through both ends).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np


@dataclasses.dataclass
class Piece:
    """One plan-view geometry: ``kind`` is ``"line"``, ``"arc"`` or ``"paramPoly3"``.

    ``x, y, hdg``: its start and heading; ``length``: its arc length; ``curvature`` (arc);
    ``u, v``: ``(a, b, c, d)`` cubics of the normalized parameter p in [0, 1], in the frame
    at the start turned by ``hdg`` (paramPoly3). ``first, last``: the points it covers.

    Example:
        A quarter of the unit circle, from (1, 0) heading north:

        >>> import math
        >>> from procgen_nb.track_gen.export import Piece
        >>> arc = Piece("arc", 1.0, 0.0, math.pi / 2, math.pi / 2, 0, 1, curvature=1.0)
        >>> arc.sample(3).round(4).tolist()
        [[1.0, 0.0], [0.7071, 0.7071], [0.0, 1.0]]
    """

    kind: str
    x: float
    y: float
    hdg: float
    length: float
    first: int
    last: int
    curvature: float = 0.0
    u: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    v: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)

    def sample(self, m: int) -> np.ndarray:
        """``(m, 2)`` points along the piece, both ends included (world frame)."""
        c, s = math.cos(self.hdg), math.sin(self.hdg)
        if self.kind == "line":
            t = np.linspace(0.0, self.length, m)
            return np.stack([self.x + c * t, self.y + s * t], 1)
        if self.kind == "arc":
            t = np.linspace(0.0, self.length, m)
            k = self.curvature
            lu, lv = np.sin(k * t) / k, (1.0 - np.cos(k * t)) / k
        else:
            p = np.linspace(0.0, 1.0, m)
            lu = self.u[0] + self.u[1] * p + self.u[2] * p**2 + self.u[3] * p**3
            lv = self.v[0] + self.v[1] * p + self.v[2] * p**2 + self.v[3] * p**3
        return np.stack([self.x + c * lu - s * lv, self.y + s * lu + c * lv], 1)


def _dist_to_polyline(q: np.ndarray, line: np.ndarray) -> np.ndarray:
    """Distance of each point of ``q`` to the polyline ``line`` (its segments)."""
    a, b = line[:-1], line[1:]
    d = b - a
    dd = np.maximum((d * d).sum(1), 1e-300)
    w = q[:, None, :] - a[None]
    t = np.clip((w * d[None]).sum(2) / dd[None], 0.0, 1.0)
    near = a[None] + t[..., None] * d[None]
    return np.sqrt(((q[:, None, :] - near) ** 2).sum(2)).min(1)


def _heading(t: np.ndarray) -> float:
    return math.atan2(t[1], t[0])


def _try(kind: str, pts: np.ndarray, t0: np.ndarray, t1: np.ndarray, first: int, last: int):
    p0, p1 = pts[0], pts[-1]
    d = p1 - p0
    chord = float(np.hypot(*d))
    if chord <= 0.0:
        return None
    if kind == "line":
        return Piece("line", p0[0], p0[1], _heading(d), chord, first, last)
    h0 = _heading(t0)
    if kind == "arc":
        cross = t0[0] * d[1] - t0[1] * d[0]
        dot = t0[0] * d[0] + t0[1] * d[1]
        if abs(cross) < 1e-12 * chord:
            return None
        k = 2.0 * cross / chord**2
        theta = 2.0 * math.atan2(cross, dot)  # heading change along the arc
        return Piece("arc", p0[0], p0[1], h0, theta / k, first, last, curvature=k)
    c, s = math.cos(h0), math.sin(h0)
    rot = np.array([[c, s], [-s, c]])  # world -> local
    P1 = rot @ d
    T0 = rot @ t0 * chord
    T1 = rot @ t1 * chord
    u = (0.0, T0[0], 3 * P1[0] - 2 * T0[0] - T1[0], -2 * P1[0] + T0[0] + T1[0])
    v = (0.0, T0[1], 3 * P1[1] - 2 * T0[1] - T1[1], -2 * P1[1] + T0[1] + T1[1])
    return Piece("paramPoly3", p0[0], p0[1], h0, 0.0, first, last, u=u, v=v)


def _error(piece: Piece, run: np.ndarray, tol: float) -> float:
    """The largest distance of the points ``run`` to the piece (exact for a line and an
    arc within its sweep; to a dense polyline of the curve for a paramPoly3), or the end's
    miss when larger."""
    if piece.kind == "line":
        c, s = math.cos(piece.hdg), math.sin(piece.hdg)
        d = run - run[0]
        along = d[:, 0] * c + d[:, 1] * s
        off = np.abs(-d[:, 0] * s + d[:, 1] * c)
        out = np.maximum(np.maximum(-along, along - piece.length), 0.0)
        return float(np.hypot(off, out).max())
    if piece.kind == "arc":
        k = piece.curvature
        centre = np.array([piece.x - math.sin(piece.hdg) / k, piece.y + math.cos(piece.hdg) / k])
        rel = run - centre
        r = np.hypot(*rel.T)
        # a point whose angle lies outside the arc's sweep is as far as the nearer end
        a0 = math.atan2(piece.y - centre[1], piece.x - centre[0])
        swept = np.mod(np.sign(k) * (np.arctan2(rel[:, 1], rel[:, 0]) - a0), 2 * math.pi)
        ends = piece.sample(2)
        near_end = np.minimum(*(np.hypot(*(run - e).T) for e in ends))
        err = np.where(swept <= abs(k) * piece.length + 1e-12, np.abs(r - 1.0 / abs(k)), near_end)
        return float(max(err.max(), np.hypot(*(ends[-1] - run[-1]))))
    # a polyline of the curve fine enough that its chords sag at most tol / 8 (from the
    # points' own curvature, doubled) so that it cannot hide a miss
    seg = np.linalg.norm(np.diff(run, axis=0), axis=1)
    a, b, c = run[:-2], run[1:-1], run[2:]
    cross = np.abs((b - a)[:, 0] * (c - b)[:, 1] - (b - a)[:, 1] * (c - b)[:, 0])
    prod = (
        np.linalg.norm(b - a, axis=1)
        * np.linalg.norm(c - b, axis=1)
        * np.linalg.norm(c - a, axis=1)
    )
    kappa = 2.0 * float((2.0 * cross / np.maximum(prod, 1e-300)).max(initial=0.0))
    m = int(min(8192, max(16, 4 * len(run), math.ceil(seg.sum() * math.sqrt(kappa / tol)) + 1)))
    curve = piece.sample(m)
    return float(max(_dist_to_polyline(run, curve).max(), np.hypot(*(curve[-1] - run[-1]))))


def _fit_span(pts, tang, i: int, j: int, tol: float):
    """The simplest piece fitting points i..j (indices into the closed run), or None."""
    run = pts[i : j + 1]
    for kind in ("line", "arc", "paramPoly3"):
        piece = _try(kind, run, tang[i], tang[j], i, j)
        if piece is None:
            continue
        # the points lie within tol of the curve, and the curve ends within tol of the end
        # a paramPoly3's polyline may pass up to tol / 8 closer to a point than the curve
        slack = tol / 8 if piece.kind == "paramPoly3" else 0.0
        if _error(piece, run, tol) + slack <= tol:
            if piece.kind == "paramPoly3":
                fine = piece.sample(64)
                piece.length = float(np.linalg.norm(np.diff(fine, axis=0), axis=1).sum())
            return piece
    return None


def fit_closed(xy: np.ndarray, tangents: np.ndarray, tol: float) -> list[Piece]:
    """Fits the closed centerline ``xy`` (N points, the first not repeated) from point 0
    around to point 0 again.

    Args:
        xy: ``(N, 2)`` points of the closed centerline.
        tangents: ``(N, 2)`` unit tangents at the points (an arc or a cubic starts along
            its first point's, a cubic ends along its last point's).
        tol: the largest distance of a point from its piece.

    Returns:
        Pieces in order; piece k covers points ``first..last`` (``last`` N is point 0), and
        every point lies within ``tol`` of its piece.

    Example:
        A square of side 2 with a point at each corner and mid-side is four lines; a
        circle of radius 10 is an arc of that radius (and one line closing it):

        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track, fit_closed
        >>> sq = np.array([[0, 0], [1, 0], [2, 0], [2, 1], [2, 2], [1, 2], [0, 2], [0, 1]], float)
        >>> t = Track(sq, np.ones(8), np.ones(8)).tangents()
        >>> [(p.kind, p.first, p.last, p.length) for p in fit_closed(sq, t, 0.01)]
        [('line', 0, 2, 2.0), ('line', 2, 4, 2.0), ('line', 4, 6, 2.0), ('line', 6, 8, 2.0)]
        >>> a = np.linspace(0, 2 * np.pi, 32, endpoint=False)
        >>> circle = 10 * np.stack([np.cos(a), np.sin(a)], 1)
        >>> pieces = fit_closed(circle, np.stack([-np.sin(a), np.cos(a)], 1), 0.01)
        >>> [(p.kind, p.first, p.last) for p in pieces], round(1 / float(pieces[0].curvature), 6)
        ([('arc', 0, 31), ('line', 31, 32)], 10.0)
    """
    N = len(xy)
    pts = np.concatenate([xy, xy[:1]])
    tang = np.concatenate([tangents, tangents[:1]])
    pieces: list[Piece] = []
    i = 0
    while i < N:
        # one segment: a line through both points always fits (nothing between them)
        good = _fit_span(pts, tang, i, i + 1, tol) or _fit_span(pts, tang, i, i + 1, math.inf)
        lo, step = i + 1, 1
        hi = None
        while True:  # doubling
            j = min(i + 2 * step, N)
            if j == lo:
                break
            piece = _fit_span(pts, tang, i, j, tol)
            if piece is None:
                hi = j
                break
            good, lo = piece, j
            if j == N:
                break
            step *= 2
        if hi is not None:
            while hi - lo > 1:  # bisection between a fit (lo) and a miss (hi)
                mid = (lo + hi) // 2
                piece = _fit_span(pts, tang, i, mid, tol)
                if piece is None:
                    hi = mid
                else:
                    good, lo = piece, mid
        pieces.append(good)
        i = good.last
    return pieces


def fit_linear(s: np.ndarray, w: np.ndarray, tol: float) -> list[tuple[float, float, float]]:
    """Fits values ``w`` at positions ``s`` with linear pieces (``s0, a, b``: ``a + b (s -
    s0)`` from ``s0`` to the next piece), each within ``tol`` of the values it covers."""
    out = []
    i, n = 0, len(s)
    while i < n - 1:
        j = i + 1
        while j + 1 < n:
            k = j + 1
            b = (w[k] - w[i]) / max(s[k] - s[i], 1e-300)
            if np.abs(w[i : k + 1] - (w[i] + b * (s[i : k + 1] - s[i]))).max() > tol:
                break
            j = k
        b = (w[j] - w[i]) / max(s[j] - s[i], 1e-300)
        out.append((float(s[i]), float(w[i]), float(b)))
        i = j
    return out


__all__ = ["Piece", "fit_closed", "fit_linear"]
