"""NumPy references for the racing line tests: curvature, normals, the objective, a
projected-gradient solver of the minimum-curvature problem and a speed profile that sweeps
the loop until nothing changes (a different algorithm from the kernel's one pass each way
from the slowest point)."""

from __future__ import annotations

import numpy as np


def menger(q: np.ndarray) -> np.ndarray:
    """Signed curvature of the circle through each point and its neighbours, ``q [..., N, 2]``."""
    q0, q1, q2 = np.roll(q, 1, -2), q, np.roll(q, -1, -2)
    a, b, c = q1 - q0, q2 - q1, q2 - q0
    cross = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    g = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1) * np.linalg.norm(c, axis=-1)
    return np.where(g > 0, 2 * cross / np.where(g > 0, g, 1), 0.0)


def normals(p: np.ndarray) -> np.ndarray:
    """Left unit normals by central differences, ``p [N, 2]``."""
    t = np.roll(p, -1, 0) - np.roll(p, 1, 0)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    return np.stack([-t[:, 1], t[:, 0]], 1)


def weights(p: np.ndarray) -> np.ndarray:
    seg = np.linalg.norm(np.roll(p, -1, 0) - p, axis=1)
    return 0.5 * (seg + np.roll(seg, 1))


def objective(p: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """``sum h_i kappa_i^2`` for offsets ``alpha [..., N]`` along the normals of ``p``."""
    n, h = normals(p), weights(p)
    q = p + alpha[..., None] * n
    return np.sum(h * menger(q) ** 2, axis=-1)


def solve(p: np.ndarray, lo: np.ndarray, hi: np.ndarray, steps: int = 4000) -> np.ndarray:
    """Projected gradient descent with Armijo backtracking (central-difference gradient)."""
    N = len(p)
    alpha = np.zeros(N)
    eps = 1e-6
    step = 1.0
    eye = np.eye(N) * eps
    f = objective(p, alpha)
    for _ in range(steps):
        pert = np.concatenate([alpha + eye, alpha - eye])
        fs = objective(p, pert)
        grad = (fs[:N] - fs[N:]) / (2 * eps)
        while True:
            cand = np.clip(alpha - step * grad, lo, hi)
            fc = objective(p, cand)
            if fc <= f - 1e-4 * np.dot(grad, alpha - cand) or step < 1e-12:
                break
            step *= 0.5
        if fc < f:
            alpha, f = cand, fc
        step *= 2.0
    return alpha


def reach(u0, ds, k0, k1, mg, amax):
    """Largest squared end speed of a segment (the constraints of the module docstring),
    by bisection on ``u`` instead of the kernel's closed form."""
    if max(abs(k0), abs(k1)) * u0 > mg:  # not even coasting fits: the limit decides
        return u0
    lo_u, hi_u = u0, u0 + 2 * ds * amax  # coasting fits; feasible end speeds form [u0, top]
    for _ in range(200):
        u = 0.5 * (lo_u + hi_u)
        a = (u - u0) / (2 * ds)
        lat = max(u0 * abs(k0), u * abs(k1))
        ok = a <= amax and a * a + lat * lat <= mg * mg
        lo_u, hi_u = (u, hi_u) if ok else (lo_u, u)
    return max(lo_u, 0.0)


def speed_profile(q: np.ndarray, mg: float, vmax: float, amax: float) -> np.ndarray:
    """Squared-speed sweeps forward and backward round the loop until nothing moves."""
    k = menger(q)
    ds = np.linalg.norm(np.roll(q, -1, 0) - q, axis=1)
    N = len(q)
    with np.errstate(divide="ignore"):
        u = np.minimum(vmax**2, np.where(k != 0, mg / np.abs(k), np.inf))
    fw, bw = u.copy(), u.copy()
    for _ in range(4):
        for i in range(N):
            j = (i + 1) % N
            fw[j] = min(fw[j], reach(fw[i], ds[i], k[i], k[j], mg, amax))
    for _ in range(4):
        for j in range(N - 1, -1, -1):
            i = (j + 1) % N
            bw[j] = min(bw[j], reach(bw[i], ds[j], k[i], k[j], mg, amax))
    return np.sqrt(np.minimum(fw, bw))
