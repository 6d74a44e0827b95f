"""The ops library: results against NumPy, no allocation or sync inside an op."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

import procgen_nb
from procgen_nb.track_gen import ops
from procgen_nb.track_gen._kit import watching as _watching
from procgen_nb.track_gen.exec import LaunchContext, salt

E = 64


@pytest.fixture
def ctx(device):
    return LaunchContext(device)


def _seeds(ctx, n=E):
    return wp.array(np.arange(1000, 1000 + n, dtype=np.int32), dtype=wp.int32, device=ctx.device)


def test_sampling_ops(ctx):
    seeds = _seeds(ctx)
    counts = wp.zeros(E, dtype=wp.int32, device=ctx.device)
    g, mx = 4, 12
    perm = wp.zeros(E * g * g, dtype=wp.int32, device=ctx.device)
    cells = wp.zeros(E * mx, dtype=wp.int32, device=ctx.device)
    pts = wp.zeros(E * mx, dtype=wp.vec2, device=ctx.device)
    with _watching(ctx.device) as w, procgen_nb.collect() as c:
        ops.sample_counts(ctx, seeds, salt("t.count"), 3, 10, counts)
        ops.grid_cells(ctx, seeds, salt("t.cells"), counts, g, perm, cells, mx)
        ops.sample_grid_points(ctx, seeds, salt("t.pts"), cells, counts, g, 1.0, 2.0, pts, mx)
        ops.angle_sort(ctx, pts, counts, mx)
    assert w.allocs == 0 and w.readbacks == 0 and w.direct == 0
    assert c.readbacks == 0 and c.waits == 0 and c.launches == 4
    n = counts.numpy()
    assert n.min() >= 3 and n.max() <= 10 and len(set(n.tolist())) > 3
    cl = cells.numpy().reshape(E, mx)
    xy = pts.numpy().reshape(E, mx, 2)
    for e in range(E):
        k = n[e]
        assert len(set(cl[e, :k].tolist())) == k and (cl[e, k:] == -1).all()
        assert ((cl[e, :k] >= 0) & (cl[e, :k] < g * g)).all()
        p = xy[e, :k]
        assert np.isfinite(p).all() and np.isnan(xy[e, k:]).all()
        assert (np.abs(p) <= 2.0).all()
        c0 = p.mean(0)
        ang = np.arctan2(p[:, 1] - c0[1], p[:, 0] - c0[0])
        assert (np.diff(ang) >= 0).all()
    with pytest.raises(ValueError, match=r"sample_counts lo, hi: expected lo <= hi, got \(5, 2\)"):
        ops.sample_counts(ctx, seeds, 1, 5, 2, counts)


def test_angle_sort_treats_non_positive_counts_as_empty(ctx):
    xy = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]] * 2, dtype=np.float32)
    arr = wp.array(xy, dtype=wp.vec2, device=ctx.device)
    counts = wp.array([0, -3], dtype=wp.int32, device=ctx.device)
    ops.angle_sort(ctx, arr, counts, 4)
    np.testing.assert_array_equal(arr.numpy(), xy)


def test_arc_resample_even_spacing_and_active_mask(ctx):
    raw, n = 40, 100
    t = np.linspace(0, 2 * np.pi, raw, endpoint=False) ** 1.3 / (2 * np.pi) ** 0.3  # uneven
    loops = np.stack([np.c_[np.cos(t), 2 * np.sin(t)]] * 3).astype(np.float32)
    src = wp.array(loops.reshape(-1, 2), dtype=wp.vec2, device=ctx.device)
    dst = wp.zeros(3 * n, dtype=wp.vec2, device=ctx.device)
    scratch = ops.ArcScratch.alloc(ctx.device, 3, raw, n)
    counts = wp.array([raw, raw, 2], dtype=wp.int32, device=ctx.device)
    active = wp.array([1, 0, 1], dtype=wp.int32, device=ctx.device)
    with _watching(ctx.device) as w:
        ops.arc_resample(ctx, src, dst, scratch, 3, raw, n, counts, active)
    assert w.allocs == 0 and w.readbacks == 0
    out = dst.numpy().reshape(3, n, 2)
    seg = np.hypot(*(np.roll(out[0], -1, 0) - out[0]).T)
    perim = np.hypot(*(np.roll(loops[0], -1, 0) - loops[0]).T).sum()
    # evenly spaced along the polyline: chords at most the arc step, nearly all equal to it
    assert seg.max() <= perim / n * (1 + 1e-4)
    assert np.median(seg) == pytest.approx(perim / n, rel=1e-3)
    assert (out[1] == 0).all()  # inactive: untouched
    assert np.isnan(out[2]).all()  # fewer than 3 points: NaN


def test_resample_constant_spacing(ctx):
    n0 = 256
    t = np.linspace(0, 2 * np.pi, n0, endpoint=False)
    circle = np.c_[np.cos(t), np.sin(t)].astype(np.float32)
    src = wp.array(np.concatenate([circle, 3 * circle]), dtype=wp.vec2, device=ctx.device)
    dst = wp.zeros(2 * 50, dtype=wp.vec2, device=ctx.device)
    count = wp.zeros(2, dtype=wp.int32, device=ctx.device)
    trunc = wp.zeros(2, dtype=wp.int32, device=ctx.device)
    before = procgen_nb.traffic()
    ops.resample_constant_spacing(ctx, src, 2, n0, 0.25, dst, 50, count, trunc)
    assert (procgen_nb.traffic() - before).readbacks == 0
    perim = np.hypot(*(np.roll(circle, -1, 0) - circle).T).sum()
    assert count.numpy().tolist() == [math.floor(perim / 0.25), 50]
    assert trunc.numpy().tolist() == [0, 1]
    out = dst.numpy().reshape(2, 50, 2)
    k = count.numpy()[0]
    np.testing.assert_allclose(np.hypot(*out[0, :k].T), 1.0, atol=1e-3)
    assert np.isnan(out[0, k:]).all()
    with pytest.raises(
        ValueError, match=r"resample_constant_spacing spacing: expected a positive number, got 0"
    ):
        ops.resample_constant_spacing(ctx, src, 2, n0, 0, dst, 50, count, trunc)


def test_fill_and_streams(ctx):
    arr = wp.zeros(5, dtype=wp.int32, device=ctx.device)
    ops.fill(ctx, arr, 3)
    assert arr.numpy().tolist() == [3] * 5
    assert salt("a") != salt("b") and salt("a") == salt("a") and 0 <= salt("a") < 2**31
    seeds = _seeds(ctx)
    a = wp.zeros(E, dtype=wp.int32, device=ctx.device)
    b = wp.zeros(E, dtype=wp.int32, device=ctx.device)
    ops.sample_counts(ctx, seeds, salt("one"), 0, 1000, a)
    ops.sample_counts(ctx, seeds, salt("two"), 0, 1000, b)
    # independent streams: about 1 in 1000 equal, not correlated
    assert (a.numpy() == b.numpy()).mean() < 0.05
    assert abs(np.corrcoef(a.numpy(), b.numpy())[0, 1]) < 0.35
