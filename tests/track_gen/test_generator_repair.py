"""The corner repair of ``bezier``, ``hull`` and ``voronoi`` (their ``repair`` switch).

- Every built-in generator keeps at least 0.9 of its tracks under the default validity at
  its default Params (E=1024, N=256, seeds 0 and ``1 << 20``: env e has the seed
  ``seed + e``, so the two batches share no env): the count is the pipeline's, the
  verdicts are checked against the NumPy and shapely validity of ``benchmarks``.
- The repaired control polygons are those of the NumPy port written from the account
  (``benchmarks/numpy_repair.py``), started from the polygons the Stage samples with the
  switch off; the whole raw loops are those of the NumPy ports of the generators.
- Hand-worked polygons: one left alone, one merged and moved back into its box, the
  triangle spared by the ``2 pi / n`` floor, the edge of exactly ``spacing`` kept.
- ``repair=False`` gives the 0.1 bytes (``test_determinism``'s former pins).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import warp as wp

from procgen_nb.track_gen import TrackGenConfig, TrackGenerator, presets
from procgen_nb.track_gen.exec import LaunchContext, salt
from procgen_nb.track_gen.generators import BUILTINS
from procgen_nb.track_gen.generators import _repair_kernels as rk

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"

#: sha256 of the 0.1 tracks (``test_determinism``'s case: E=16, N=64, seed 7, epoch 3,
#: generate + regenerate), which ``repair=False`` must still give
PINNED_0_1 = {
    "bezier": "84ab0bf23692a9c32c7d66f904b09a20a50bd7fd7e934d7dad9b80c26b539691",
    "hull": "11524238bf81128e2562e37fc22c2a2c34cebb641c38f472966a52341ba7ec50",
    "voronoi": "d171fec510cc76f0e45c2667caf09182facff6f42af23f11027d81600f856b67",
}
#: the Stage's scratch buffers of its control polygon and their count
CTRL = {
    "bezier": ("corners", "counts"),
    "hull": ("ctrl", "ctrl_count"),
    "voronoi": ("anchors", "anchor_count"),
}
REPAIRED = sorted(CTRL)


def _load(name: str):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"_repair_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def npref():
    return _load("numpy_reference")


@pytest.fixture(scope="module")
def nprep():
    return _load("numpy_repair")


# -- the 0.9 floor ---------------------------------------------------------------------------
#: two batches with no env in common (env e of a batch has the seed ``seed + e``; seeds 0
#: and 1 would share 1023 of 1024 tracks)
FLOOR_SEEDS = (0, 1 << 20)


@pytest.mark.parametrize("name", sorted(cls.name for cls in BUILTINS))
def test_every_builtin_keeps_nine_tenths_of_its_tracks(name, npref):
    fractions, tracks = [], []
    for seed in FLOOR_SEEDS:
        tg = TrackGenerator(
            TrackGenConfig(generator=name, num_envs=1024, num_points=256, seed=seed, device="cpu")
        )
        res = tg.generate()
        valid = res.valid.numpy().astype(bool)
        assert res.num_valid() == valid.sum()
        fractions.append(valid.mean())
        xy = res.numpy()["xy"]
        tracks.append({row.tobytes() for row in xy})
        if seed == 0:  # the verdicts are those of the NumPy and shapely checks
            vp = tg.config.validity
            want = npref.numpy_validity(xy, vp.min_turn_radius, vp.track_width)
            assert (want == valid).mean() >= 0.998
    assert not tracks[0] & tracks[1], f"{name}: the two batches share tracks"
    assert min(fractions) >= 0.9, f"{name}: {fractions}"  # each batch, so their mean too


@pytest.mark.parametrize("name", REPAIRED)
def test_the_switch_off_keeps_fewer(name):
    def fraction(repair: bool) -> float:
        cfg = TrackGenConfig(
            generator=name,
            num_envs=512,
            num_points=256,
            device="cpu",
            generator_params={"repair": repair},
        )
        return TrackGenerator(cfg).generate().valid.numpy().mean()

    off, on = fraction(False), fraction(True)
    assert off < 0.75 and on >= 0.95


# -- against the NumPy port ----------------------------------------------------------------
def _polygons(tg: TrackGenerator, name: str) -> list[np.ndarray]:
    pts, cnt = (tg.builder.scratch_buffers[k].numpy() for k in CTRL[name])
    k = len(pts) // tg.config.num_envs
    pts = pts.reshape(tg.config.num_envs, k, 2)
    return [pts[e, : min(int(cnt[e]), k)] for e in range(tg.config.num_envs)]


@pytest.mark.parametrize("name", REPAIRED)
def test_repaired_polygons_are_the_numpy_ports(name, nprep, device):
    def make(params):
        cfg = TrackGenConfig(
            generator=name,
            num_envs=256,
            num_points=128,
            seed=3,
            device=device,
            scale=2.0,
            generator_params=params,
        )
        tg = TrackGenerator(cfg)
        tg.generate()
        return tg

    params = {"spacing": 0.12, "corner_radius": 0.15}
    before = _polygons(make({"repair": False}), name)
    after = _polygons(make(params), name)
    changed = 0
    for e, (b, a) in enumerate(zip(before, after, strict=True)):
        want = nprep.round_corners(b.astype(np.float64), 0.12 * 2.0, 0.15 * 2.0)
        assert len(a) == len(want), f"env {e}: {len(a)} points, the port {len(want)}"
        np.testing.assert_allclose(a, want, atol=2e-5, err_msg=f"env {e}")
        changed += len(a) < len(b) or not np.array_equal(a, b)
    assert changed > 20  # the repair did something on many envs


@pytest.mark.parametrize("name", REPAIRED)
def test_raw_loops_are_the_numpy_generators(name, npref):
    tg = TrackGenerator(TrackGenConfig(generator=name, num_envs=128, num_points=96, device="cpu"))
    res = tg.generate()
    ports = {"bezier": npref.numpy_bezier, "hull": npref.numpy_hull, "voronoi": npref.numpy_voronoi}
    loops = ports[name](npref.base_seeds(0, 0, 128), 96, salt)
    raw = tg._raw_xy.numpy().reshape(128, -1, 2)
    for e, lp in enumerate(loops):
        np.testing.assert_allclose(raw[e, : len(lp)], lp, atol=2e-5, err_msg=f"env {e}")
        assert np.isnan(raw[e, len(lp) :]).all()
    xy = npref.numpy_resample_loops(loops, 96)
    np.testing.assert_allclose(res.numpy()["xy"], xy, atol=2e-4)


# -- hand-worked polygons ------------------------------------------------------------------
def _repair(polys: list[list[tuple[float, float]]], spacing: float, corner_radius: float):
    """Runs ``_round_corners_k`` on the polygons (one env each); returns them repaired."""
    kmax = max(len(p) for p in polys)
    E = len(polys)
    pts = np.zeros((E, kmax, 2), np.float32)
    for e, p in enumerate(polys):
        pts[e, : len(p)] = p
    ctrl = wp.array(pts.reshape(-1, 2), dtype=wp.vec2, device="cpu")
    count = wp.array([len(p) for p in polys], dtype=wp.int32, device="cpu")
    active = wp.ones(E, dtype=wp.int32, device="cpu")
    tmp = wp.zeros(E * kmax, dtype=wp.vec2, device="cpu")
    args = [active, ctrl, count, kmax, spacing, corner_radius, tmp]
    LaunchContext("cpu").launch(rk._round_corners_k, E, args)
    out, n = ctrl.numpy().reshape(E, kmax, 2), count.numpy()
    return [out[e, : n[e]] for e in range(E)]


def test_hand_worked_polygons():
    square = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
    # B and C are 0.11 apart: merged into (2.05, 0.025); the box x in [0, 2.05] is moved
    # back to the centre of [0, 2.1] (scale min(2.1 / 2.05, 2 / 2) = 1, x + 0.025)
    notched = [(0.0, 0.0), (2.0, 0.0), (2.1, 0.05), (0.0, 2.0)]
    # turns of 90 and 135 degrees: under the floor 1.25 * 2 pi / 3 (150 degrees), though
    # the fillet of the 135 degree corner, 0.5 tan(22.5 deg) = 0.207, is under 0.3
    triangle = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)]
    got = _repair([square, notched, triangle], 0.15, 0.3)
    np.testing.assert_array_equal(got[0], square)  # corners of 90 < 1.25 * 90 degrees
    want = [(0.025, 0.0), (2.075, 0.025), (0.025, 2.0)]
    np.testing.assert_allclose(got[1], want, atol=1e-6)
    np.testing.assert_array_equal(got[2], triangle)


def test_an_edge_of_exactly_spacing_is_kept():
    notched = [(0.0, 0.0), (0.25, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
    kept, merged = _repair([notched, notched], 0.25, 0.0), _repair([notched], 0.2500001, 0.0)
    np.testing.assert_array_equal(kept[0], notched)
    assert len(merged[0]) == 4


def test_a_spike_is_pulled_in_and_the_box_kept(nprep):
    # a quadrilateral with one vertex pulled deep inside: its turn is near 180 degrees (no
    # right angle: a turn of exactly the floor pi / 2 rounds either way in float32)
    spiked = [(0.0, 0.0), (2.0, 0.1), (2.1, 2.0), (1.0, 0.3), (-0.1, 1.9)]
    # its fillet radius: 0.5 min(a, b) / tan(phi / 2) = 0.65 for edges about 2 long
    got = _repair([spiked], 0.15, 1.0)[0]
    want = nprep.round_corners(np.array(spiked), 0.15, 1.0)
    np.testing.assert_allclose(got, want, atol=1e-6)
    u = got - np.roll(got, 1, 0)
    v = np.roll(got, -1, 0) - got
    a, b = np.hypot(*u.T), np.hypot(*v.T)
    cos = (u * v).sum(1) / (a * b)
    fillet = 0.5 * np.minimum(a, b) * np.sqrt((1 + cos) / (1 - cos))
    assert ((cos >= np.cos(1.25 * 2 * np.pi / 5) - 1e-6) | (fillet >= 1.0 - 1e-5)).all()
    assert not np.allclose(got, spiked)
    # back in its box [-0.1, 2.1] x [0, 2], about its centre, filling it along x
    lo, hi = got.min(0), got.max(0)
    np.testing.assert_allclose((lo + hi) / 2, [1.0, 1.0], atol=1e-6)
    np.testing.assert_allclose([lo[0], hi[0]], [-0.1, 2.1], atol=1e-6)
    assert 0 < lo[1] and hi[1] < 2


# -- the 0.1 bytes -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", REPAIRED)
def test_the_switch_off_gives_the_0_1_bytes(name):
    tg = presets.track(
        generator=name,
        generator_params={"repair": False},
        num_envs=16,
        num_points=64,
        seed=7,
        epoch=3,
        device="cpu",
    )
    tg.generate()
    tg.regenerate()
    assert tg.result.fingerprint() == PINNED_0_1[name]
