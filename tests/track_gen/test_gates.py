"""Gate generators and ``GateGenerator``: orderings, capacity, stages, validity, determinism.

References are NumPy re-derivations of what each stage promises (angles around the
centroid, arc positions, window turns, spacing), never the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest

from procgen_nb import _traffic
from procgen_nb.errors import GeneratorError, ParamsError
from procgen_nb.track_gen import presets as track_presets
from procgen_nb.track_gen.gates import (
    ArcLength,
    Curvature,
    Free,
    GateGenConfig,
    GateGenerator,
    GateStage,
)
from procgen_nb.track_gen.gates._registry import available, lookup
from procgen_nb.track_gen.gates.presets import gates
from procgen_nb.track_gen.plugin import registry

#: sha256 of GateGenerator(GateGenConfig(num_envs=16, generator="free", seed=3)).generate()
FREE_FP = "e06e7503cf7641a222f3bb6a3dd05b6586c63723fbbd97fc165d2029c21c3e63"


@pytest.fixture(scope="module")
def track():
    return track_presets.track(generator="polar", num_envs=64, num_points=128, seed=5)


def _polyline(xy):
    seg = np.roll(xy, -1, axis=0) - xy
    length = np.linalg.norm(seg, axis=1)
    return seg, length, np.concatenate([[0.0], np.cumsum(length)])


def test_builtins_registered_under_the_gate_kind():
    names = available(registry)
    assert {"arc_length", "curvature", "free"} <= set(names)
    assert lookup(registry, "free") is Free
    assert registry.get("gate_generator", "arc_length") is ArcLength
    with pytest.raises(GeneratorError, match="gate_generator: expected one of .*got 'nope'"):
        lookup(registry, "nope")


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("num_envs", 0, r"GateGenConfig.num_envs: expected an integer in \[1, "),
        ("max_gates", 2, r"GateGenConfig.max_gates: expected an integer >= min_gates=3, got 2"),
        ("gate_ordering", "zigzag", r"gate_ordering: expected one of \['ccw', 'random_pairs'"),
        ("min_spacing", -1.0, r"GateGenConfig.min_spacing: expected a number >= 0, got -1.0"),
        ("gate_size", 0, r"GateGenConfig.gate_size: expected a positive number, got 0"),
    ],
)
def test_config_refusals(field, value, match):
    with pytest.raises(ParamsError, match=match):
        GateGenConfig(**{field: value})


class _Pairs(Free):
    name = "test.pairs"
    orderings = frozenset({"raw", "random_pairs"})


class _NoCcw(Free):
    name = "test.noccw"
    excluded_orderings = frozenset({"ccw"})


def test_none_ordering_resolves(track):
    assert GateGenerator(GateGenConfig(num_envs=2)).ordering == "ccw"
    g = GateGenerator(GateGenConfig(num_envs=64, generator="arc_length"), track=track)
    assert g.ordering == "raw" and g.step_names[2] == "order.raw"
    # not ccw: the first of the sorted supported set ("random_pairs" < "raw")
    assert GateGenerator(GateGenConfig(num_envs=2), generator=_Pairs).ordering == "random_pairs"
    assert GateGenerator(GateGenConfig(num_envs=2), generator=_NoCcw).ordering == "random_pairs"


def test_unsupported_ordering_is_a_value_error(track):
    cfg = GateGenConfig(num_envs=64, generator="arc_length", gate_ordering="ccw")
    with pytest.raises(
        ValueError, match=r"gate_ordering of 'arc_length': expected one of \['raw'\], got 'ccw'"
    ):
        GateGenerator(cfg, track=track)


def test_capacity_outside_range_is_a_value_error():
    cfg = GateGenConfig(num_envs=2, max_gates=6, generator_params={"gates": 8})
    with pytest.raises(
        ValueError, match=r"'free' capacity: expected gates in \[min_gates=3, max_gates=6\], got 8"
    ):
        GateGenerator(cfg)
    cfg = GateGenConfig(num_envs=2, min_gates=5, generator_params={"gates": 4})
    with pytest.raises(
        GeneratorError, match=r"expected gates in \[min_gates=5, max_gates=32\], got 4"
    ):
        GateGenerator(cfg)


def test_centerline_generator_needs_a_track():
    with pytest.raises(GeneratorError, match="'arc_length' track: expected the TrackGenerator"):
        GateGenerator(GateGenConfig(num_envs=2, generator="arc_length"))


def test_bad_generator_params_name_the_field():
    with pytest.raises(
        GeneratorError,
        match=r"generator_params of 'free': free.gates: expected a value in \[1, 4096\], got 0",
    ):
        GateGenerator(GateGenConfig(num_envs=2, generator_params={"gates": 0}))


def _angles(pts):
    c = pts.mean(axis=0)
    return np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])


def test_ccw_order_and_extent(device):
    g = gates(num_envs=256, device=device, order="ccw", scale=2.0)
    d = g.generate().numpy()
    for e in range(256):
        pts = d["xy"][e, : d["count"][e]].astype(np.float64)
        assert np.all(np.diff(_angles(pts)) >= -1e-6)
        half = max(np.ptp(pts[:, 0]), np.ptp(pts[:, 1])) / 2
        assert half == pytest.approx(2.0, rel=1e-5)
        mid = (pts.max(axis=0) + pts.min(axis=0)) / 2
        assert np.allclose(mid, 0.0, atol=1e-5)
        assert np.all(np.isnan(d["xy"][e, d["count"][e] :]))


def test_random_pairs_is_a_permutation_of_raw():
    raw = gates(num_envs=128, order="raw", seed=9).generate().numpy()
    shuffled = gates(num_envs=128, order="random_pairs", seed=9).generate().numpy()
    assert np.array_equal(raw["count"], shuffled["count"])
    moved = 0
    for e in range(128):
        c = raw["count"][e]
        a, b = raw["xy"][e, :c], shuffled["xy"][e, :c]
        assert sorted(map(tuple, a)) == sorted(map(tuple, b))
        moved += not np.array_equal(a, b)
    assert moved > 100


class _FreeRaw(Free):
    name = "test.free_raw"
    preferred = {"order": "raw", "normalize": None}


def test_free_layout_keeps_its_minimum_distance():
    g = GateGenerator(
        GateGenConfig(num_envs=512, gate_ordering="raw", max_gates=12, min_spacing=0.0),
        generator=_FreeRaw,
    )
    assert "normalize.extent" not in g.step_names
    # min_distance 0.5 in the unit square with 4 tries per gate: some envs run out of tries
    g2 = GateGenerator(
        GateGenConfig(
            num_envs=512,
            gate_ordering="raw",
            max_gates=12,
            min_spacing=0.0,
            generator_params={"gates": 12, "min_distance": 0.5, "tries": 4},
        ),
        generator=_FreeRaw,
    )
    for gen in (g, g2):
        d = gen.generate().numpy()
        p = gen.params
        assert np.all(d["count"] >= 1) and np.all(d["count"] <= p.gates)
        for e in range(512):
            pts = d["xy"][e, : d["count"][e]].astype(np.float64)
            assert np.all(np.abs(pts) <= 1.0)
            dist = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
            assert np.all(dist[np.triu_indices(len(pts), 1)] >= p.min_distance - 1e-6)
    assert (g2.generate().numpy()["count"] < 12).any()


def test_arc_length_gates_against_reference(track):
    spacing, jitter = 0.45, 0.5
    g = GateGenerator(
        GateGenConfig(
            num_envs=64,
            generator="arc_length",
            generator_params={"spacing": spacing, "jitter": jitter, "max_count": 16},
        ),
        track=track,
    )
    d = g.generate().numpy()
    center = track.result.numpy()["xy"].astype(np.float64)
    for e in range(64):
        seg, length, cum = _polyline(center[e])
        total = cum[-1]
        want = int(np.clip(np.floor(total / spacing), 3, 16))
        assert d["count"][e] == want
        gap = total / want
        pts = d["xy"][e, :want].astype(np.float64)
        # nearest point on the polyline: on it, at its arc position
        a = center[e][None]
        t = np.clip(((pts[:, None] - a) * seg[None]).sum(-1) / (length**2)[None], 0, 1)
        q = a + seg[None] * t[..., None]
        dist = np.linalg.norm(pts[:, None] - q, axis=-1)
        i = dist.argmin(axis=1)
        assert dist.min(axis=1).max() < 1e-5
        s = cum[i] + t[np.arange(want), i] * length[i]
        k = np.arange(want)
        lo = (k + 0.5 - jitter / 2) * gap - 1e-4
        hi = (k + 0.5 + jitter / 2) * gap + 1e-4
        assert np.all((s >= lo) & (s <= hi)), (e, s / gap)


def _window_turn(xy, w):
    u = xy - np.roll(xy, 1, axis=0)
    v = np.roll(xy, -1, axis=0) - xy
    theta = np.arctan2(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0], (u * v).sum(1))
    return sum(np.roll(theta, -j) for j in range(-w, w + 1))


def test_curvature_gates_against_reference(track):
    w, thr = 3, 0.3
    g = GateGenerator(
        GateGenConfig(
            num_envs=64,
            generator="curvature",
            min_gates=1,
            min_spacing=0.0,
            generator_params={"window": w, "threshold": thr, "max_count": 32},
        ),
        track=track,
    )
    d = g.generate().numpy()
    center = track.result.numpy()["xy"].astype(np.float64)
    n = center.shape[1]
    for e in range(64):
        c = np.abs(_window_turn(center[e], w))
        ref, fuzzy = [], set()
        for i in range(n):
            before = [c[(i - j) % n] for j in range(1, w + 1)]
            after = [c[(i + j) % n] for j in range(1, w + 1)]
            near = min(abs(c[i] - x) for x in before + after + [thr])
            if near < 1e-4:
                fuzzy.add(i)
            if c[i] >= thr and all(c[i] > x for x in before) and all(c[i] >= x for x in after):
                ref.append(i)
        got = [
            int(np.argmin(np.linalg.norm(center[e] - p, axis=1)))
            for p in d["xy"][e, : d["count"][e]]
        ]
        assert got == sorted(got)
        assert set(got) ^ set(ref) <= fuzzy


def _valid_ref(xy, count, min_gates, max_gates, min_spacing):
    out, margin = [], []
    for e in range(len(count)):
        c = count[e]
        pts = xy[e, :c].astype(np.float64)
        if c < min_gates or c > max_gates or not np.isfinite(pts).all():
            out.append(0)
            margin.append(np.inf)
            continue
        d = np.linalg.norm(np.roll(pts, -1, axis=0) - pts, axis=1) if c > 1 else np.array([np.inf])
        out.append(int(d.min() >= min_spacing))
        margin.append(abs(d.min() - min_spacing))
    return np.array(out), np.array(margin)


def test_validity_against_reference_on_thousands():
    # spacing 0.3 in [-1, 1]^2 rejects a good share of the layouts
    g = gates(
        num_envs=4096,
        seed=11,
        min_spacing=0.3,
        min_gates=6,
        max_gates=10,
        generator_params={"gates": 10, "min_distance": 0.1, "tries": 2},
    )
    d = g.generate().numpy()
    ref, margin = _valid_ref(d["xy"], d["count"], 6, 10, 0.3)
    sure = margin > 1e-5
    assert np.array_equal(d["valid"][sure], ref[sure])
    assert 0.1 < ref.mean() < 0.9
    assert g.result.num_valid() == int(d["valid"].sum())
    assert int(g.ctx.readback(g.result.total)[0]) == int(d["count"].sum())


def test_heading_points_from_previous_to_next_gate():
    d = gates(num_envs=32).generate().numpy()
    for e in range(32):
        c = d["count"][e]
        pts = d["xy"][e, :c].astype(np.float64)
        v = np.roll(pts, -1, axis=0) - np.roll(pts, 1, axis=0)
        assert np.allclose(d["heading"][e, :c], np.arctan2(v[:, 1], v[:, 0]), atol=1e-5)
        assert np.all(d["size"][e, :c] == np.float32(0.1))
        assert np.all(d["position"][e, :c, 2] == 0.0)


def test_steady_call_reads_nothing_back(device):
    g = gates(num_envs=64, device=device)
    g.generate()
    with _traffic.collect() as t:
        for epoch in range(3):
            g.generate(epoch=epoch)
    assert t.readbacks == 0 and t.replays == 3


def test_determinism_and_epochs():
    a = gates(num_envs=16, seed=3).generate().fingerprint()
    b = gates(num_envs=16, seed=3).generate().fingerprint()
    assert a == b == FREE_FP
    g = gates(num_envs=16, seed=3)
    assert g.generate(epoch=1).fingerprint() != a
    assert g.generate(epoch=0).fingerprint() == a


def test_epoch_refusal():
    with pytest.raises(
        ParamsError, match=r"generate epoch: expected an integer in \[0, 2147483647\], got -1"
    ):
        gates(num_envs=2).generate(epoch=-1)


class _Broken(GateStage):
    name = "test.broken"


def test_stage_without_capacity_is_refused():
    with pytest.raises(GeneratorError, match="_Broken.capacity: expected an override"):
        GateGenerator(GateGenConfig(num_envs=2), generator=_Broken)


def test_unknown_orderings_declared_are_refused():
    class Odd(Free):
        name = "test.odd"
        orderings = frozenset({"zigzag"})

    with pytest.raises(
        GeneratorError, match=r"'test.odd' orderings: expected names among .*got \['zigzag'\]"
    ):
        GateGenerator(GateGenConfig(num_envs=2), generator=Odd)


def test_curvature_class_is_a_gate_stage():
    assert Curvature.phase == "anchors" and Curvature.per == "anchors"
    assert Curvature.writes == ("anchors.xy", "anchors.count")


def test_dynamic_field_updates_without_a_new_recording(track):
    cfg = GateGenConfig(num_envs=64, generator="arc_length", generator_params={"jitter": 0.1})
    g = GateGenerator(cfg, track=track)
    g.generate()
    plan = g.recordings["generate"]
    assert g.update({"jitter": 0.8}) is False
    with _traffic.collect() as t:
        got = g.generate().fingerprint()
    now = g.recordings["generate"]
    assert len(now) == len(plan) and all(a is b for a, b in zip(now, plan, strict=True))
    assert t.replays == 1
    fresh = GateGenerator(
        GateGenConfig(num_envs=64, generator="arc_length", generator_params={"jitter": 0.8}),
        track=track,
    )
    assert got == fresh.generate().fingerprint()
    assert g.update({"spacing": 0.3}) is True  # a static field rebuilds
    assert g.params.spacing == 0.3 and g.params.jitter == 0.8
    with pytest.raises(
        GeneratorError, match=r"generator_params of 'arc_length': arc_length.jitter"
    ):
        g.update({"jitter": 2.0})


def test_public_lookup():
    from procgen_nb.track_gen.gates import gate_generators, get_gate_generator

    assert {"arc_length", "curvature", "free"} <= set(gate_generators())
    assert get_gate_generator("curvature") is Curvature
