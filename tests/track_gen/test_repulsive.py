"""``repulsive`` against references: its gradient against finite differences of the pair
energy written here (float64), a mutated kernel against the same check, its subdivision
against the 4-point formula, and whole runs against the NumPy port of
``benchmarks/numpy_reference.py`` (written from the generator's account, every ordered pair
at once)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procgen_nb.track_gen import TrackGenConfig, TrackGenerator
from procgen_nb.track_gen.exec import salt
from procgen_nb.track_gen.generators import _repulsive_kernels as K
from procgen_nb.track_gen.generators.repulsive import Repulsive, RepulsiveParams

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def npref():
    """``benchmarks/numpy_reference.py``, loaded by path."""
    return _load(BENCH / "numpy_reference.py", "_repulsive_numpy_reference")


# -- the gradient of one step ----------------------------------------------------------------
def _cross(t: np.ndarray, d: np.ndarray) -> np.ndarray:
    return t[..., 0] * d[..., 1] - t[..., 1] * d[..., 0]


def _pair_energy(x: np.ndarray, t: np.ndarray, h: float) -> float:
    """Sum over the unordered pairs of non-neighbours of ``(|T_i x d|^2 + |T_j x d|^2) /
    |d|^4``, ``d = (x_i - x_j) / h``, the tangents ``t`` held fixed (float64)."""
    n = len(x)
    i, j = np.triu_indices(n, 2)
    keep = ~((i == 0) & (j == n - 1))
    i, j = i[keep], j[keep]
    d = (x[i] - x[j]) / h
    r2 = np.maximum((d * d).sum(1), 1e-6)
    return float(((_cross(t[i], d) ** 2 + _cross(t[j], d) ** 2) / (r2 * r2)).sum())


def _loops(E: int, n: int, seed: int) -> np.ndarray:
    """Wavy closed loops of radius about 1, [E, n, 2] float32 (no two points close)."""
    rng = np.random.default_rng(seed)
    th = 2 * np.pi * np.arange(n) / n
    out = []
    for _ in range(E):
        k = rng.integers(2, 5)
        r = 1 + 0.25 * np.sin(k * th + rng.uniform(0, 6.3)) + rng.uniform(-0.03, 0.03, n)
        out.append(np.stack([r * np.cos(th), r * np.sin(th)], -1))
    return np.asarray(out, np.float32)


def _one_step(kernels, x: np.ndarray, h: float, device: str):
    """One ``_rep_step_k`` launch on loops ``x`` [E, n, 2]: (tangents, grad, new x)."""
    E, n = x.shape[:2]
    pos = wp.array(x.reshape(-1, 2), dtype=wp.vec2, device=device)
    grad = wp.zeros(E * n, dtype=wp.vec2, device=device)
    tan = wp.zeros(E * n, dtype=wp.vec2, device=device)
    dmin = wp.zeros(E * n, dtype=float, device=device)
    rest = wp.full(E * n, h, dtype=float, device=device)
    active = wp.ones(E, dtype=wp.int32, device=device)
    frozen = wp.zeros(E, dtype=wp.int32, device=device)
    args = [pos, grad, tan, dmin, rest, n, n, active, frozen, h, 0.3, 1.0, 0.05, 10.0, 0.0]
    wp.launch(kernels._rep_step_k, E, args, device=device)
    return (
        tan.numpy().reshape(E, n, 2),
        grad.numpy().reshape(E, n, 2),
        pos.numpy().reshape(E, n, 2),
    )


def _gradient_error(kernels, device: str) -> float:
    """Largest difference between the kernel's gradient and central finite differences of
    ``_pair_energy``, relative to the largest gradient."""
    n, h = 20, 2 * np.pi / 20
    x = _loops(3, n, 5)
    tan, grad, _ = _one_step(kernels, x, h, device)
    worst = 0.0
    for e in range(len(x)):
        x64, t64 = x[e].astype(np.float64), tan[e].astype(np.float64)
        fd = np.zeros((n, 2))
        eps = 1e-6
        for i in range(n):
            for k in range(2):
                xp, xm = x64.copy(), x64.copy()
                xp[i, k] += eps
                xm[i, k] -= eps
                fd[i, k] = (_pair_energy(xp, t64, h) - _pair_energy(xm, t64, h)) / (2 * eps)
        # the kernel sums S_i with dE/dd_i = 2 h^3 S_i, and dE/dx_i = dE/dd_i / h
        got = 2 * h * h * grad[e].astype(np.float64)
        worst = max(worst, float(np.abs(got - fd).max() / np.abs(fd).max()))
    return worst


def test_step_gradient_matches_finite_differences_of_the_pair_energy(device):
    assert _gradient_error(K, device) < 1e-3


def test_step_tangents_and_move_follow_the_account(device):
    n, h = 20, 2 * np.pi / 20
    x = _loops(2, n, 9)
    tan, _, moved = _one_step(K, x, h, device)
    t = np.roll(x, -1, 1) - np.roll(x, 1, 1)
    t /= np.linalg.norm(t, axis=-1, keepdims=True)
    np.testing.assert_allclose(tan, t, atol=1e-6)
    # every move is at most step * h = 0.3 h, and the loop did move
    step = np.linalg.norm(moved - x, axis=-1)
    assert step.max() <= 0.3 * h * (1 + 1e-5)
    assert step.max() > 1e-3 * h


MUTANTS = {
    "the c_j P_j term dropped": ("pi * ci + pj * cj - d", "pi * ci - d"),
    "the |d|^-6 term dropped": (" - d * (2.0 * (ci * ci + cj * cj) * q2)", ""),
    "j's share of a pair dropped": ("            grad[b + j] = grad[b + j] - t\n", ""),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_a_mutated_gradient_fails_the_finite_difference_check(tmp_path, mutant):
    old, new = MUTANTS[mutant]
    src = Path(K.__file__).read_text()
    assert src.count(old) == 1, f"expected the kernel to contain {old!r} once"
    src = src.replace(old, new).replace("from ..ops.funcs", "from procgen_nb.track_gen.ops.funcs")
    name = f"_rep_mutant_{sorted(MUTANTS).index(mutant)}"
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    mutated = _load(path, name)
    try:
        assert _gradient_error(mutated, "cpu") > 1e-2
    finally:
        sys.modules.pop(name, None)


# -- subdivision -----------------------------------------------------------------------------
@pytest.mark.parametrize("w", [0.0, K.FOUR_POINT])
def test_subdivision_is_the_four_point_formula(device, w):
    E, n, raw = 3, 12, 24
    x = _loops(E, n, 3)
    buf = np.zeros((E, raw, 2), np.float32)
    buf[:, :n] = x
    pos = wp.array(buf.reshape(-1, 2), dtype=wp.vec2, device=device)
    rest = wp.array(np.tile(np.arange(raw, dtype=np.float32), E), dtype=float, device=device)
    active = wp.ones(E, dtype=wp.int32, device=device)
    frozen = wp.ones(E, dtype=wp.int32, device=device)
    wp.launch(K._rep_subdivide_k, E, [pos, rest, n, raw, active, frozen, w], device=device)
    got = pos.numpy().reshape(E, raw, 2)
    a, b, c, d = np.roll(x, 1, 1), x, np.roll(x, -1, 1), np.roll(x, -2, 1)
    np.testing.assert_array_equal(got[:, 0::2], x)
    np.testing.assert_allclose(got[:, 1::2], (b + c) * (0.5 + w) - (a + d) * w, atol=1e-6)
    halves = np.broadcast_to(np.arange(n) * 0.5, (E, n))
    np.testing.assert_array_equal(rest.numpy().reshape(E, raw)[:, 0::2], halves)
    np.testing.assert_array_equal(rest.numpy().reshape(E, raw)[:, 1::2], halves)
    assert (frozen.numpy() == 0).all()


# -- whole runs against the NumPy port --------------------------------------------------------
def _compare_runs(npref, device: str, seed: int, params: dict, E: int = 8) -> np.ndarray:
    tg = TrackGenerator(
        TrackGenConfig(
            generator="repulsive",
            num_envs=E,
            num_points=64,
            device=device,
            seed=seed,
            generator_params=params,
        )
    )
    tg.generate()
    raw = tg._raw_xy.numpy().reshape(E, -1, 2)
    p = RepulsiveParams(**params)
    ref = npref.numpy_repulsive(
        npref.base_seeds(seed, 0, E),
        64,
        salt,
        n0=p.start_points,
        levels=p.levels,
        iters=p.iterations,
        refine=p.refine,
        growth=p.growth,
        repulsion=p.repulsion,
        smoothing=p.smoothing,
        step=p.step,
        tol=p.tolerance,
        jitter=p.jitter,
        confine=p.confine,
    )
    assert raw.shape == (E, Repulsive().raw_points(None, p), 2)
    return np.abs(raw - np.stack(ref)).reshape(E, -1).max(1)


def test_default_run_matches_the_numpy_port(npref, device):
    d = _compare_runs(npref, device, 7, {}, E=16)
    assert d.max() < 1e-4, d


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    start_points=st.sampled_from([8, 12, 16, 24]),
    levels=st.integers(1, 3),
    iterations=st.integers(1, 32),
    refine=st.integers(0, 2),
    growth=st.floats(1.0, 2.5),
    repulsion=st.floats(0.0, 3.0),
    smoothing=st.floats(0.0, 0.5),
    step=st.floats(0.05, 0.6),
    jitter=st.floats(0.0, 0.9),
)
def test_runs_match_the_numpy_port(npref, seed, **params):
    # float32 sums in another order: most runs agree to 1e-5, but the growth buckles (an
    # instability: it amplifies rounding, up to 1e-4 at boundary values such as
    # repulsion=0), and an env whose freeze falls on the other side of the tolerance may
    # drift further. A dropped term moves the median env far more (measured at seed 3,
    # defaults: smoothing off 2e-2, repulsion off 0.6, growth 1.45 for 1.5: 5e-3)
    d = _compare_runs(npref, "cpu", seed, params)
    assert np.median(d) < 1e-3, d
    assert (d < 1e-2).mean() >= 0.75, d


def test_the_loops_relax(npref):
    """The output's tangent-point energy is far below the initial polygons' (the same
    seeds), and below the former implementation's on its seeds (benchmarks/
    repulsive_quality.py prints the E=1024 figures)."""
    E, N = 64, 256
    tg = TrackGenerator(TrackGenConfig(generator="repulsive", num_envs=E, num_points=N))
    xy = tg.generate().numpy()["xy"]
    init = npref.repulsive_initial(npref.base_seeds(0, 0, E), salt)
    before = npref.tangent_point_energy(npref.numpy_resample_loops(init, N))
    after = npref.tangent_point_energy(xy)
    assert np.median(after) < 0.3 * np.median(before)
    assert np.median(after) < 25.94  # the former implementation's median (E=1024)
