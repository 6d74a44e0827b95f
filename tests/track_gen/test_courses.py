"""``Course`` and ``build``: gates on their centerline, z, heading, and course validity
checked against an independent NumPy reference on thousands of courses."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from procgen_nb import _traffic
from procgen_nb.errors import GeneratorError, ParamsError
from procgen_nb.track_gen.config import TrackGenConfig
from procgen_nb.track_gen.gates import GateGenConfig, GateStage
from procgen_nb.track_gen.gates.course import COURSE_REASONS, Course, build
from procgen_nb.track_gen.ops.funcs import rand01, rand_int, stream_key

#: sha256 of build(16, seed=2, num_points=64).fingerprint()
ARC_FP = "d3c968a0b11c430a3933ba9f71f74c5e2aaffd8c9f4acc155d589d4ebb0d3bec"


@wp.kernel
def _scatter_k(
    center: wp.array(dtype=wp.vec2),
    n: int,
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    stride: int,
    xy: wp.array(dtype=wp.vec2),
    count: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    key = stream_key(seeds[e], salt)
    m = rand_int(key, 0, 3, stride)
    count[e] = m
    for g in range(stride):
        if g >= m:
            xy[e * stride + g] = wp.vec2(wp.nan, wp.nan)
            continue
        u = (float(g) + 0.5 + 1.4 * (rand01(key, 3 * g + 1) - 0.5)) / float(m)
        f = u * float(n)
        f = f - wp.floor(f / float(n)) * float(n)
        i = wp.min(int(f), n - 1)
        t = f - float(i)
        a = center[e * n + i]
        b = center[e * n + (i + 1) % n]
        d = wp.normalize(b - a)
        lat = 0.16 * (rand01(key, 3 * g + 2) - 0.5)
        xy[e * stride + g] = a + (b - a) * t + wp.vec2(-d[1], d[0]) * lat


class Scatter(GateStage):
    """A test gate generator: gates near the centerline, sometimes out of order or off it."""

    name = "test.scatter"
    reads = ("xy",)
    orderings = frozenset({"raw"})
    preferred = {"order": "raw", "normalize": None}

    def capacity(self, params, layout):
        return {"gates": 8, "min_gates": 3}

    def build(self, b, params):
        xy, count = b.write("anchors.xy"), b.write("anchors.count")
        args = [b.read("xy"), b.num_points, b.seed, b.salt("test.scatter"), b.raw, xy, count]
        E = b.E

        def enqueue(ctx):
            ctx.launch(_scatter_k, E, args)

        return enqueue


def _reference(d, width, min_gates, max_gates, min_spacing):
    """Course validity from the read-back centerline and gates, in float64."""
    center = d["xy"].astype(np.float64)
    E, N, _ = center.shape
    pts = d["gate_xy"].astype(np.float64)
    cnt = d["gate_count"]
    size = d["gate_size"].astype(np.float64)
    seg = np.roll(center, -1, axis=1) - center
    slen = np.linalg.norm(seg, axis=-1)
    cum = np.concatenate([np.zeros((E, 1)), np.cumsum(slen, axis=1)], axis=1)
    L = cum[:, -1]
    rel = pts[:, :, None, :] - center[:, None, :, :]
    t = np.clip((rel * seg[:, None]).sum(-1) / np.maximum(slen**2, 1e-300)[:, None], 0, 1)
    q = center[:, None] + seg[:, None] * t[..., None]
    dist = np.linalg.norm(pts[:, :, None] - q, axis=-1)
    dist = np.where(np.isnan(dist), np.inf, dist)
    i = dist.argmin(-1)
    best = dist.min(-1)
    # a tie: a segment not adjacent to the nearest one is as near (adjacent ones share a
    # vertex, where both codes pick the first segment)
    k = np.arange(N)[None, None, :]
    far = np.abs((k - i[..., None] + 1) % N - 1) > 1
    other = np.where(far, dist, np.inf).min(-1)
    with np.errstate(invalid="ignore"):
        tie = (other - best) < 1e-5
    ee, gg = np.meshgrid(np.arange(E), np.arange(pts.shape[1]), indexing="ij")
    s = cum[ee, i] + t[ee, gg, i] * slen[ee, i]
    cross = seg[ee, i, 0] * rel[ee, gg, i, 1] - seg[ee, i, 1] * rel[ee, gg, i, 0]
    lat = np.where(cross < 0, -1, 1) * best
    z = d.get("z")
    reason = np.zeros(E, dtype=np.int32)
    unsure = np.zeros(E, dtype=bool)
    for e in range(E):
        c = cnt[e]
        r = 0 if d["track_valid"][e] else 1
        p = pts[e, :c]
        gap = np.linalg.norm(np.roll(p, -1, axis=0) - p, axis=1) if c > 1 else np.array([np.inf])
        if c < min_gates or c > max_gates or not np.isfinite(p).all() or gap.min() < min_spacing:
            r |= 2
        unsure[e] |= c > 1 and abs(gap.min() - min_spacing) < 1e-5
        ds = np.roll(s[e, :c], -1) - s[e, :c]
        ds = np.where(ds <= 0, ds + L[e], ds)
        if c > 0 and not ds.sum() < 1.5 * L[e]:
            r |= 4
        over = np.abs(lat[e, :c]) + size[e, :c] / 2 - width / 2
        if (over > 1e-5).any():
            r |= 8
        unsure[e] |= bool((np.abs(over - 1e-5) < 1e-5).any()) or bool(tie[e, :c].any())
        reason[e] = r
    return {"reason": reason, "unsure": unsure, "s": s, "lateral": lat, "seg": i, "t": t, "z": z}


def test_course_validity_against_reference_on_thousands():
    course = build(
        2048,
        gate_generator=Scatter,
        num_points=64,
        seed=1,
        track_width=0.2,
        validity={"track_width": 0.0},
        max_gates=8,
        min_spacing=0.05,
    )
    d = course.numpy()
    ref = _reference(d, 0.2, 3, 8, 0.05)
    sure = ~ref["unsure"]
    assert sure.mean() > 0.95
    assert np.array_equal(d["reason"][sure], ref["reason"][sure])
    assert np.array_equal(d["valid"][sure], (ref["reason"] == 0)[sure].astype(np.int32))
    # every outcome happens
    for bit in (2, 4, 8):
        assert (ref["reason"] & bit).any(), COURSE_REASONS[bit]
    assert 0.05 < (ref["reason"] == 0).mean() < 0.95
    assert course.num_valid() == int(d["valid"].sum())


def test_gate_position_heading_and_z_follow_the_centerline():
    course = build(256, gate_generator=Scatter, num_points=64, seed=4, max_gates=8)
    d = course.numpy()
    ref = _reference(d, 0.2, 3, 8, 0.1)
    E, N = d["xy"].shape[:2]
    for e in range(E):
        if ref["unsure"][e]:
            continue
        c = d["gate_count"][e]
        i, t = ref["seg"][e, :c], ref["t"][e, np.arange(c), ref["seg"][e, :c]]
        z = d["z"][e, i] + (d["z"][e, (i + 1) % N] - d["z"][e, i]) * t
        assert np.allclose(d["gate_position"][e, :c, 2], z, atol=1e-5)
        assert np.allclose(d["gate_position"][e, :c, :2], d["gate_xy"][e, :c])
        v = d["xy"][e, (i + 1) % N] - d["xy"][e, i]
        assert np.allclose(d["gate_heading"][e, :c], np.arctan2(v[:, 1], v[:, 0]), atol=1e-5)
        assert np.allclose(d["s"][e, :c], ref["s"][e, :c], atol=1e-4)
        assert np.allclose(d["lateral"][e, :c], ref["lateral"][e, :c], atol=1e-5)


@pytest.mark.parametrize("gate_generator", ["arc_length", "curvature", "free"])
def test_builtins_make_valid_courses(gate_generator, device):
    course = build(64, gate_generator=gate_generator, num_points=128, device=device, seed=3)
    d = course.numpy()
    assert course.gates_first == (gate_generator == "free")
    ref = _reference(d, 0.2, 3, 32, 0.1)
    sure = ~ref["unsure"]
    assert np.array_equal(d["reason"][sure], ref["reason"][sure])
    assert d["valid"].mean() > (0.9 if gate_generator != "free" else 0.2)
    ok = d["valid"] == 1
    # gates in order along the track: arc positions increase once around the lap
    for e in np.flatnonzero(ok):
        c = d["gate_count"][e]
        ds = np.diff(np.concatenate([d["s"][e, :c], [d["s"][e, 0]]]))
        assert (ds < 0).sum() <= 1


def test_gates_first_centerline_runs_through_the_gates():
    course = build(128, gate_generator="free", num_points=256, seed=8)
    d = course.numpy()
    ok = d["track_valid"] == 1
    assert ok.mean() > 0.2
    lat = np.abs(d["lateral"][ok])
    assert np.nanmax(lat) < 0.03


def test_a_gates_first_centerline_says_its_samples_per_gate():
    course = build(8, gate_generator="free", num_points=64, seed=8, samples=5, max_gates=12)
    stage = course.track.stage
    assert stage.samples == 5
    assert course.track.raw == 12 * 5  # raw points: max_gates x samples


def test_steady_course_reads_nothing_back():
    course = build(32, num_points=64)
    course.generate()
    with _traffic.collect() as t:
        course.generate(epoch=1)
        course.generate(epoch=2)
    assert t.readbacks == 0 and t.uploads == 0


def test_course_fingerprint_is_pinned():
    a = build(16, seed=2, num_points=64).fingerprint()
    assert a == build(16, seed=2, num_points=64).fingerprint() == ARC_FP
    c = build(16, seed=2, num_points=64)
    assert c.generate(epoch=1).fingerprint() != a
    assert c.generate(epoch=0).fingerprint() == a


def test_build_refusals():
    with pytest.raises(
        GeneratorError, match="build generator: expected None with gate generator 'free'"
    ):
        build(4, generator="polar", gate_generator="free")
    with pytest.raises(ParamsError, match=r"build: expected keywords among .*got \['colour'\]"):
        build(4, colour="red")
    with pytest.raises(ParamsError, match="Course track_width: expected a positive number, got 0"):
        build(4, track_width=0)
    with pytest.raises(
        ParamsError, match="Course gates.num_envs: expected track.num_envs=4, got 5"
    ):
        Course(TrackGenConfig(num_envs=4), GateGenConfig(num_envs=5))
    with pytest.raises(
        ParamsError, match=r"Course samples: expected an integer in \[2, 256\], got 1"
    ):
        Course(TrackGenConfig(num_envs=4), GateGenConfig(num_envs=4), samples=1)
