"""The ``random_pairs`` gate order is a uniform shuffle (a chi-square over 4096 envs).

Each env's gates in ``random_pairs`` order are matched, point for point, to the same
env's gates in ``raw`` order (same seed: the same anchors), which gives the permutation
the shuffle applied. Over 4096 envs every permutation of 4 gates, and every position of
each of 8 gates, must be about equally frequent. The seed is fixed, so the statistic is
the same number every run; the bounds are the 0.999 quantiles of the chi-square
distribution (from the standard tables), so a fair shuffle passes with room to spare
while a biased one (Sattolo's cycles only, swapping with any slot, or skipping a step)
lands far above them.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from procgen_nb.track_gen.presets import gates

ENVS = 4096
#: chi-square 0.999 quantiles by degrees of freedom
CHI2_999 = {9: 27.877, 23: 49.728, 49: 85.351}


def _permutations(n: int, seed: int) -> np.ndarray:
    """``[ENVS, n]``: for each env, the raw index of the gate at each shuffled position."""
    kw = dict(
        num_envs=ENVS,
        seed=seed,
        device="cpu",
        max_gates=n,
        generator_params={"gates": n, "min_distance": 0.0},
    )
    raw = gates(order="raw", **kw).generate().numpy()
    shuffled = gates(order="random_pairs", **kw).generate().numpy()
    assert (raw["count"] == n).all() and (shuffled["count"] == n).all()
    out = np.empty((ENVS, n), dtype=np.int64)
    for e in range(ENVS):
        a, b = raw["xy"][e, :n], shuffled["xy"][e, :n]
        hits = (b[:, None, :] == a[None, :, :]).all(-1)  # [shuffled, raw]
        assert (hits.sum(1) == 1).all(), "expected each gate once, at the same coordinates"
        out[e] = hits.argmax(1)
    assert (np.sort(out, axis=1) == np.arange(n)).all()  # a permutation in every env
    return out


def _chi2(observed: np.ndarray, expected: float) -> float:
    return float(((observed - expected) ** 2 / expected).sum())


@pytest.fixture(scope="module")
def perms4() -> np.ndarray:
    return _permutations(4, seed=9)


@pytest.fixture(scope="module")
def perms8() -> np.ndarray:
    return _permutations(8, seed=21)


def test_every_permutation_of_four_gates_is_equally_likely(perms4):
    index = {p: i for i, p in enumerate(itertools.permutations(range(4)))}
    counts = np.zeros(24)
    for row in perms4:
        counts[index[tuple(row.tolist())]] += 1
    assert (counts > 0).all()  # every permutation reachable (Sattolo's shuffle: 6 of 24)
    assert _chi2(counts, ENVS / 24) < CHI2_999[23]


@pytest.mark.parametrize("which", ["perms4", "perms8"])
def test_every_gate_lands_in_every_position_equally_often(which, request):
    perms = request.getfixturevalue(which)
    n = perms.shape[1]
    table = np.zeros((n, n))  # [raw index, shuffled position]
    for row in perms:
        table[row, np.arange(n)] += 1
    # both margins are fixed (each gate lands once, each position holds one): df (n-1)^2
    assert _chi2(table, ENVS / n) < CHI2_999[(n - 1) ** 2]
    # and no gate stays in place much more or less often than 1 in n
    stay = np.trace(table) / (ENVS * n)
    assert abs(stay - 1 / n) < 4 * np.sqrt((1 / n) * (1 - 1 / n) / (ENVS * n))
