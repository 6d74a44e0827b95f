"""The racing line's masked band solve (``_racing_qp._masked_solve``) against a dense NumPy
solve of the same system: the cyclic pentadiagonal ``A = J^T J + d I`` of a random cyclic
tridiagonal ``J``, with random rows fixed at random values (identity rows and columns, the
fixed values moved to the right-hand side), including fixed rows at the wrap-around."""

from __future__ import annotations

import numpy as np
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procgen_nb.track_gen import _racing_qp as qp

F64 = wp.float64


@wp.kernel
def _solve_each(
    n: int,
    dd: wp.array(dtype=F64),
    ee: wp.array(dtype=F64),
    ff: wp.array(dtype=F64),
    gg: wp.array(dtype=F64),
    act: wp.array(dtype=wp.int32),
    cand: wp.array(dtype=F64),
    idg: wp.array(dtype=F64),
    b1: wp.array(dtype=F64),
    b2: wp.array(dtype=F64),
    tail: wp.array(dtype=F64),
    x: wp.array(dtype=F64),
):
    e = wp.tid()
    qp._masked_solve(dd, ee, ff, gg, act, cand, idg, b1, b2, tail, x, e * n, n)


def bands(rng: np.random.Generator, E: int, N: int):
    """Random ``J`` rows ``(jm, j0, jp)`` and the bands of ``J^T J + damp I`` the way the
    solve kernel builds them, with the dense matrices ``[E, N, N]``."""
    jm, j0, jp = (rng.normal(0, 1, (E, N)) for _ in range(3))
    J = np.zeros((E, N, N))
    i = np.arange(N)
    J[:, i, (i - 1) % N] += jm
    J[:, i, i] += j0
    J[:, i, (i + 1) % N] += jp
    A = np.einsum("eki,ekj->eij", J, J) + np.eye(N) * rng.uniform(1e-3, 1.0, (E, 1, 1))
    dd = A[:, i, i]
    ee = A[:, i, (i + 1) % N]
    ff = A[:, i, (i + 2) % N]
    return A, dd, ee, ff


def dense_solve(A, g, act, fixed):
    """The masked system solved densely: x[act] = fixed, A[free] x = -g[free]."""
    N = len(g)
    free = act == 0
    x = np.where(free, 0.0, fixed)
    M = A[np.ix_(free, free)]
    if free.any():
        x[free] = np.linalg.solve(M, -g[free] - A[np.ix_(free, ~free)] @ x[~free])
    assert x.shape == (N,)
    return x


def run(A, dd, ee, ff, g, act, fixed):
    E, N = g.shape
    cand = np.where(act != 0, fixed, 0.0)  # the kernel's convention: 0 at the free points
    f = lambda a: wp.array(np.ascontiguousarray(a, np.float64).reshape(-1), dtype=F64)  # noqa: E731
    x = wp.zeros(E * N, dtype=F64)
    args = [N, f(dd), f(ee), f(ff), f(g), wp.array(act.reshape(-1).astype(np.int32))]
    args += [f(cand), f(np.zeros((E, N))), f(np.zeros((E, N))), f(np.zeros((E, N)))]
    args += [f(np.zeros((E, 2 * N))), x]
    wp.launch(_solve_each, E, args, device="cpu")
    return x.numpy().reshape(E, N)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31),
    N=st.sampled_from([8, 9, 10, 13, 32]),
    frac=st.sampled_from([0.0, 0.2, 0.5, 0.9, 1.0]),
)
def test_masked_solve_matches_a_dense_solve(seed, N, frac):
    rng = np.random.default_rng(seed)
    E = 4
    A, dd, ee, ff = bands(rng, E, N)
    g = rng.normal(0, 1, (E, N))
    act = np.where(rng.uniform(size=(E, N)) < frac, rng.choice([-1, 1], (E, N)), 0)
    fixed = rng.normal(0, 1, (E, N))
    x = run(A, dd, ee, ff, g, act, fixed)
    for e in range(E):
        np.testing.assert_allclose(x[e], dense_solve(A[e], g[e], act[e], fixed[e]), atol=1e-8)


def test_fixed_rows_at_the_wrap_around():
    """Each single fixed row, and the pairs at the seam (rows N-2, N-1, 0, 1 couple through
    the wrap-around entries only): a dropped or misplaced wrap term shows here."""
    rng = np.random.default_rng(7)
    N = 11
    sets = [[k] for k in range(N)] + [[N - 1, 0], [N - 2, 1], [N - 2, N - 1], [0, 1], []]
    E = len(sets)
    A, dd, ee, ff = bands(rng, E, N)
    g = rng.normal(0, 1, (E, N))
    act = np.zeros((E, N), np.int64)
    for e, rows in enumerate(sets):
        act[e, rows] = 1
    fixed = rng.normal(0, 1, (E, N))
    x = run(A, dd, ee, ff, g, act, fixed)
    for e in range(E):
        np.testing.assert_allclose(x[e], dense_solve(A[e], g[e], act[e], fixed[e]), atol=1e-9)
        # and the solution is the system's: the free rows' residual is zero
        free = act[e] == 0
        np.testing.assert_allclose((A[e] @ x[e] + g[e])[free], 0.0, atol=1e-8)
