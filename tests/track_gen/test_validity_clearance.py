"""The clearance check of the validity stage against an every-pair NumPy reference that
evaluates the definition in float32 as ``ops.check_tracks`` documents it: points more than
``pi * width / 2`` apart along the loop (ring index distance times the mean spacing) must
be at least ``width`` apart (``length_sq < width * width`` flags a pair).

The search itself skips pairs by boxes of blocks of consecutive points; the reference tests
every pair, so block edges (loops whose length is no multiple of a block), coarse loops
(where neighbours count as far apart) and pairs exactly at the width are covered here.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from track_reference import upload_tracks

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import TrackGenConfig, TrackGenerator, ops, presets
from procgen_nb.track_gen.exec import LaunchContext

CLEARANCE = 32
F = np.float32


def _f32_lengths(p: np.ndarray) -> np.ndarray:
    """``|p_i - p_{i-1}|`` in float32, the closing segment first (the kernel's order)."""
    v = p - np.roll(p, 1, axis=0)
    return np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1])


def closed_f32(xy: np.ndarray) -> bool:
    """Every point finite and every float32 segment length positive."""
    p = np.asarray(xy, dtype=F)
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(len(p) >= 3 and np.isfinite(p).all() and (_f32_lengths(p) > 0).all())


def clearance_bad(xy: np.ndarray, width: float, far_ge: bool = False, le: bool = False) -> bool:
    """True when two points far apart along the closed loop ``xy`` are closer than
    ``width``: every pair tested, in float32 (``far_ge`` / ``le``: the mutated comparisons
    ``>=`` / ``<=``, to show that a case tells them apart)."""
    return len(close_offsets(xy, width, far_ge, le)) > 0


def close_offsets(xy: np.ndarray, width: float, far_ge: bool = False, le: bool = False) -> set[int]:
    """The ring offsets of the pairs ``clearance_bad`` flags."""
    p = np.asarray(xy, dtype=F)
    n = len(p)
    w = F(width)
    if not w > 0:
        return set()
    with np.errstate(over="ignore", invalid="ignore"):
        total = F(0.0)
        for length in _f32_lengths(p):
            total = F(total + length)
        h = F(total / F(n))
        window = F(F(F(0.5) * F(3.14159265358979)) * w)
        w2 = F(w * w)
        i, j = np.triu_indices(n, k=1)
        d = np.minimum(j - i, n - (j - i))
        along = d.astype(F) * h
        far = along >= window if far_ge else along > window
        diff = p[i] - p[j]
        lsq = diff[:, 0] * diff[:, 0] + diff[:, 1] * diff[:, 1]
        near = lsq <= w2 if le else lsq < w2
    return set(d[far & near].tolist())


def reasons(xy: np.ndarray, width: float, r_min: float = 0.0) -> np.ndarray:
    """``check_tracks``'s reason bits of ``[E, N, 2]`` loops (CPU)."""
    E, N = xy.shape[:2]
    ctx = LaunchContext("cpu")
    outs = [wp.zeros(E, dtype=wp.int32, device="cpu") for _ in range(4)]
    ops.check_tracks(
        ctx,
        upload_tracks(np.ascontiguousarray(xy, dtype=F), "cpu"),
        E,
        N,
        ops.GridScratch.alloc("cpu", E, N),
        wp.array([r_min], dtype=float, device="cpu"),
        wp.array([width], dtype=float, device="cpu"),
        *outs,
        first_crossing=True,
    )
    return outs[1].numpy()


def assert_matches(xy: np.ndarray, width: float) -> np.ndarray:
    """The clearance bit of every loop equals the reference, and the other bits equal those
    of the same loops without the check; returns the reference verdicts."""
    got = reasons(xy, width)
    base = reasons(xy, 0.0)
    want = np.array([closed_f32(t) and clearance_bad(t, width) for t in xy])
    np.testing.assert_array_equal((got & CLEARANCE) != 0, want, err_msg=f"width {width!r}")
    np.testing.assert_array_equal(got & ~CLEARANCE, base)
    return want


def _square(n_side: int, step: float, height: float) -> np.ndarray:
    """A closed rectangle walked counter-clockwise, ``n_side`` steps along each long side
    and ``round(height / step)`` along each short one."""
    k = round(height / step)
    bottom = [(i * step, 0.0) for i in range(n_side)]
    right = [(n_side * step, i * step) for i in range(k)]
    top = [(n_side * step - i * step, height) for i in range(n_side)]
    left = [(0.0, height - i * step) for i in range(k)]
    return np.array(bottom + right + top + left, dtype=F)


def test_a_pair_exactly_at_the_width_is_clear():
    # a 4 x 0.5 rectangle, points 0.25 apart: the long sides face each other exactly 0.5
    # apart (representable, so length_sq == width * width); every other far pair is farther
    xy = _square(16, 0.25, 0.5)
    assert len(xy) == 36
    at = F(0.5)
    assert not clearance_bad(xy, at) and clearance_bad(xy, at, le=True)
    above = np.nextafter(at, F(1.0))
    assert clearance_bad(xy, above)
    loops = xy[None]
    assert reasons(loops, float(at))[0] & CLEARANCE == 0
    assert reasons(loops, float(above))[0] & CLEARANCE == CLEARANCE
    assert reasons(loops, float(np.nextafter(at, F(0.0))))[0] & CLEARANCE == 0


def _vee(d: int, half_angle: float, step: float = 0.1) -> np.ndarray:
    """A closed loop with a sharp spike: two legs of ``d`` steps meeting at an apex under
    ``2 * half_angle``, closed by a wide arc (its points ``step`` apart too, so the mean
    spacing is about ``step``); the pairs across the apex are the closest far pairs."""
    k = d
    u = np.array([np.sin(half_angle), np.cos(half_angle)])
    v = np.array([-np.sin(half_angle), np.cos(half_angle)])
    leg_out = [(k - i) * step * u for i in range(k)]
    leg_in = [i * step * v for i in range(k + 1)]
    a, b = leg_in[-1], leg_out[0]
    # close the loop with a circular arc from a back to b over the top, far from the apex
    c = (a + b) / 2 + np.array([0.0, 6 * k * step])
    r = np.linalg.norm(a - c)
    ta = np.arctan2(*(a - c)[::-1])
    tb = np.arctan2(*(b - c)[::-1])
    tb = tb if tb < ta else tb - 2 * np.pi
    m = max(int(abs(ta - tb) * r / step), 3)
    arc = [c + r * np.array([np.cos(t), np.sin(t)]) for t in np.linspace(ta, tb, m + 1)[1:-1]]
    return np.array(leg_in + arc + leg_out, dtype=F)


def rotations(xy: np.ndarray) -> np.ndarray:
    """Every cyclic shift of one loop ``[N, 2]`` as ``[N, N, 2]`` loops: each pair lands in
    every place of the search's blocks, across the loop's seam too."""
    return np.stack([np.roll(xy, s, axis=0) for s in range(len(xy))])


@pytest.mark.parametrize("axis", [0, 1])
def test_a_pinch_exactly_at_the_width_between_blocks_whose_boxes_touch_it(axis):
    # two V-shaped chains meet point to point 0.5 apart (along y, or x when swapped): the
    # boxes of the blocks holding the two tips are exactly 0.5 apart, so a box test that
    # skipped "nearly w apart" would miss the pair one float above 0.5
    x = np.round(np.arange(-20, 21) * 0.1, 6)
    bottom = np.c_[x, -0.5 * np.abs(x)]
    top = np.c_[x[::-1], 0.5 + 0.5 * np.abs(x[::-1])]
    # each end closed by a half circle bulging outward, points about 0.1 apart
    t = np.linspace(-np.pi / 2, np.pi / 2, 41)[1:-1]
    right = np.c_[2.0 + 1.25 * np.cos(t), 0.25 + 1.25 * np.sin(t)]
    left = np.c_[-2.0 - 1.25 * np.cos(t), 0.25 - 1.25 * np.sin(t)]
    xy = np.concatenate([bottom, right, top, left])
    xy = xy.astype(F)[:, [0, 1] if axis == 0 else [1, 0]]
    at = F(0.5)
    above = np.nextafter(at, F(1.0))
    assert close_offsets(xy, at) == set() and len(close_offsets(xy, above)) == 1
    loops = rotations(xy)
    assert not assert_matches(loops, float(at)).any()
    assert assert_matches(loops, float(above)).all()


def test_a_pair_exactly_at_the_far_threshold_is_near():
    # find a spike and a width with float(d) * h == window exactly for the offset d of the
    # only close pairs (across the apex): the pair is not far apart along the loop (> is
    # strict), so the loop is clear, and a ">=" would reject it
    found = 0
    for d in range(6, 16, 2):
        for half in np.linspace(0.45, 0.75, 13):
            xy = _vee(d // 2, half)
            total = F(0.0)
            for length in _f32_lengths(xy):
                total = F(total + length)
            h = F(total / F(len(xy)))
            target = F(F(d) * h)
            c = F(F(0.5) * F(3.14159265358979))
            w = F(target / c)
            for _ in range(8):
                if F(c * w) == target:
                    break
                w = np.nextafter(w, F(np.inf) if F(c * w) < target else F(0.0))
            if F(c * w) != target:
                continue
            if clearance_bad(xy, w) or not clearance_bad(xy, w, far_ge=True):
                continue
            found += 1
            # the tie holds for the loop as summed from its first point (a rotation sums
            # its mean spacing in another order); every rotation still matches the reference
            assert not assert_matches(rotations(xy), float(w))[0]
            # a float below: offset d counts as far, and the pairs across the apex reject
            below = np.nextafter(w, F(0.0))
            if close_offsets(xy, below) == {d}:
                assert assert_matches(rotations(xy), float(below))[0]
    assert found > 0


def test_the_only_close_pairs_at_the_smallest_far_offset_in_every_place():
    # spikes whose only close far pairs sit across the apex at exactly the smallest offset
    # that counts as far (dmin): every rotation must find them, whichever blocks hold them
    found = 0
    c = F(F(0.5) * F(3.14159265358979))
    for d in range(4, 13, 2):
        for half in np.linspace(0.3, 0.8, 26):
            xy = _vee(d // 2, half)
            total = F(0.0)
            for length in _f32_lengths(xy):
                total = F(total + length)
            h = F(total / F(len(xy)))
            w = F(F(F(d) - F(0.5)) * h / c)
            if close_offsets(xy, w) != {d}:
                continue
            found += 1
            assert assert_matches(rotations(xy), float(w)).all()
    assert found >= 3


_WIDTHS = st.sampled_from(["pair", "below", "above", "scale"])


@st.composite
def _rings(draw):
    """A random ring: a wobbly circle or a random walk closed on itself, of 3 to 160 points
    (no multiple of the search's blocks needed), scaled by a power of two."""
    n = draw(st.one_of(st.integers(3, 70), st.integers(71, 160)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["wobble", "walk", "spiky", "lattice"]))
    if kind == "wobble":
        t = np.sort(rng.random(n)) * 2 * np.pi
        r = 1.0 + draw(st.floats(0.0, 0.9)) * rng.standard_normal(n)
        xy = np.c_[r * np.cos(t), r * np.sin(t)]
    elif kind == "walk":
        xy = np.cumsum(rng.standard_normal((n, 2)), axis=0)
        xy -= np.linspace(0, 1, n)[:, None] * (xy[-1] - xy[0])
    elif kind == "spiky":
        t = np.linspace(0, 2 * np.pi, n, endpoint=False)
        r = np.where(np.arange(n) % 2 == 0, 1.0, 0.2 + rng.random(n))
        xy = np.c_[r * np.cos(t), r * np.sin(t)]
    else:
        xy = rng.integers(-6, 7, size=(n, 2)).astype(float)
    return (xy * 2.0 ** draw(st.integers(-6, 6))).astype(F)


def _width(xy: np.ndarray, how: str, frac: float) -> float:
    """A width at (or one float below or above) the distance of some pair, or a fraction
    of the loop's size: where the verdict turns."""
    p = xy.astype(F)
    i, j = np.triu_indices(len(p), k=1)
    diff = p[i] - p[j]
    dist = np.sqrt((diff[:, 0] * diff[:, 0] + diff[:, 1] * diff[:, 1]).astype(np.float64))
    dist = dist[dist > 0]
    if how == "scale" or len(dist) == 0:
        return float(F(max(float(np.ptp(p)), 1e-3) * frac))
    w = F(np.sort(dist)[int(frac * (len(dist) - 1))])
    if how == "below":
        w = np.nextafter(w, F(0.0))
    elif how == "above":
        w = np.nextafter(w, F(np.inf))
    return float(w)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rings(), _WIDTHS, st.floats(0.0, 1.0))
def test_clearance_matches_every_pair_on_random_rings(xy, how, frac):
    w = _width(xy, how, frac)
    if w > 0:
        assert_matches(xy[None], w)


GENERATED = {}


def _generated(name: str, n: int) -> np.ndarray:
    if (name, n) not in GENERATED:
        tg = presets.track(
            generator=name,
            num_envs=24,
            num_points=n,
            validity={"min_turn_radius": 0.0, "track_width": 0.0},
        )
        GENERATED[name, n] = tg.generate().numpy()["xy"]
    return GENERATED[name, n]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["polar", "voronoi", "hull", "checkpoint", "bezier"]),
    st.sampled_from([16, 37, 64, 100, 256]),
    st.floats(0.002, 0.4),
)
def test_clearance_matches_every_pair_on_generated_rings(name, n, width):
    assert_matches(_generated(name, n), float(F(width)))


@pytest.mark.parametrize("n", [4, 6, 18, 34, 64, 66])
def test_coarse_loops_count_neighbours_as_far(n):
    # points in close pairs around a circle: with the mean spacing above pi * width / 2,
    # neighbours are far apart along the loop, and a close pair of neighbours rejects
    t = np.repeat(np.linspace(0, 2 * np.pi, n // 2, endpoint=False), 2)
    t[1::2] += 0.01
    xy = np.c_[np.cos(t), np.sin(t)].astype(F)[None]
    short = float(np.hypot(*(xy[0, 1] - xy[0, 0])))
    h = float(np.hypot(*(np.roll(xy[0], -1, axis=0) - xy[0]).T).mean())
    for w in (short * 0.99, short * 1.01, h * 0.5, h * 0.7, 1.9, 2.1):
        want = assert_matches(xy, w)
        if short < w < h * 2 / np.pi * 0.999:
            assert want[0]
    assert assert_matches(xy, short * 1.01)[0]


@pytest.mark.parametrize(("envs", "points"), [(1 << 24, 256), (1 << 15, 1 << 16)])
def test_a_pipeline_too_large_for_int32_indices_is_refused_before_allocating(
    envs, points, monkeypatch
):
    """The config accepts each size alone; together past 2**31 points the kernels' int32
    indices (``e * n``, ``e * (n + 1)``) would wrap, so the generator refuses them by name
    before allocating anything. (The config's memory check refuses these sizes first on a
    machine with less than ~70 GB; here it is told of a machine with 1 TiB.)"""
    from procgen_nb.track_gen import config as _config

    monkeypatch.setattr(_config, "memory_limit", lambda: (1 << 40, "a test's 1 TiB"))
    cfg = TrackGenConfig(num_envs=envs, num_points=points, device="cpu")
    with pytest.raises(ParamsError, match=r"^TrackGenerator num_envs \* \(points \+ 1\): expected"):
        TrackGenerator(cfg)
