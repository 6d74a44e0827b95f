"""The field compiler: fused Fields against NumPy, one build per shape, readback, walk."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import procgen_nb as pg
from procgen_nb import asset, fieldc, ops
from procgen_nb import fieldc as F
from procgen_nb.columns import column_from_numpy
from procgen_nb.counts import count
from procgen_nb.errors import BindingError, UploadError

COMPACT = asset.resolve("procgen/compact", "computeShader")
WALK = asset.resolve("procgen/walk", "computeShader")


def _cols(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-3, 3, n).astype(np.float32)
    v = rng.uniform(-2, 2, (n, 2)).astype(np.float32)
    k = rng.integers(-20, 20, n).astype(np.int32)
    return a, v, k


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(0, 3000),
    seed=st.integers(0, 2**31 - 1),
    s=st.floats(-4, 4, width=32),
    t=st.floats(0, 1, width=32),
)
def test_fused_fields_match_numpy(n, seed, s, t):
    a, v, k = _cols(n, seed)
    A = column_from_numpy(a, "Float", "cpu")
    V = column_from_numpy(v, "Vec2", "cpu")
    K = column_from_numpy(k, "Int", "cpu")
    s32, t32 = np.float32(s), np.float32(t)
    idx = np.arange(n)
    cases = [
        (F.col(A) * s + 1.0, a * s32 + np.float32(1)),
        (F.clamp(F.col(A), -1.0, s), np.minimum(np.maximum(a, -1), s32)),
        (F.mix(F.col(A), F.to_float(F.col(K)), t), a + (k.astype(np.float32) - a) * t32),
        (F.length(F.col(V) * s), np.sqrt(((v * s32) ** 2).sum(1))),
        (F.dot(F.col(V), F.vec2(F.col(A), 1.0)), v[:, 0] * a + v[:, 1]),
        (F.normalize(F.col(V)).x, v[:, 0] / np.sqrt((v**2).sum(1))),
        ((F.col(A) > s) * 1, (a > s32).astype(np.float32)),
        (F.col(K) < F.index(), (k < idx).astype(np.int32)),
        (F.fmax(F.col(K), F.count() - F.index()), np.maximum(k, n - idx)),
        (F.where(F.col(K) >= 0, F.col(A), -F.col(A)), np.where(k >= 0, a, -a)),
    ]
    for field, want in cases:
        got = F.evaluate(field, domain=n).data.numpy()
        np.testing.assert_allclose(got, np.asarray(want).reshape(got.shape), rtol=2e-6, atol=2e-6)


def test_index_count_and_a_live_domain():
    n, live = 10, 6
    word = column_from_numpy(np.array([live], np.uint32), "UInt", "cpu")
    out = F.evaluate(F.index() * 10 + F.count(), domain={"count": word, "capacity": n})
    got = out.data.numpy()
    np.testing.assert_array_equal(got[:live], np.arange(live) * 10 + live)
    np.testing.assert_array_equal(got[live:], 0)  # past the live count: 0
    assert out.live is not None and out.live.capacity == n
    assert (
        ops.transfer.readback(columns={"o": out})["values"]["o"]
        == (np.arange(live) * 10.0 + live).tolist()
    )


def test_noise_and_hash_are_deterministic_and_in_range():
    p = column_from_numpy(np.random.default_rng(1).uniform(-9, 9, (500, 3)), "Vec3", "cpu")
    for field in (F.noise(F.col(p), 3), F.hash01(F.index(), 7), F.noise(F.col(p).x * 2.0)):
        a = (
            F.evaluate(field).data.numpy()
            if field.columns()
            else F.evaluate(field, 500).data.numpy()
        )
        b = F.evaluate(field, 500).data.numpy()
        np.testing.assert_array_equal(a, b)
        assert a.min() >= 0.0 and a.max() < 1.0 and a.std() > 0.05
    h1 = F.evaluate(F.hash01(F.index(), 1.0), 200).data.numpy()
    h2 = F.evaluate(F.hash01(F.index(), 2.0), 200).data.numpy()
    assert not np.array_equal(h1, h2)


def test_a_field_kernel_is_built_once_for_two_cooks_with_different_values():
    pts = column_from_numpy(np.random.default_rng(5).uniform(-1, 1, (300, 2)), "Vec2", "cpu")

    @pg.node(params={"radius": pg.Field(0.5, bounds=(0.0, 2.0)), "shift": pg.Field(0.0)})
    def keep(radius, shift):
        # an inline Field bound to compact's flags: fused into one dispatch
        flags = F.length(F.col(pts) - F.vec2(shift, 0.0)) < radius
        return ops.device.kernel(kernel=COMPACT, bind={"flags": flags}, domain=pts)["columns"]

    g = pg.Graph("fields")
    g.add("keep", keep)
    g.cook(params={"keep.radius": 0.5, "keep.shift": 0.0})
    built = F.shapes_built()
    before = pg.traffic()
    second = g.cook(params={"keep.radius": 0.8, "keep.shift": 0.25})
    assert (pg.traffic() - before).builds == 0
    assert F.shapes_built() == built
    assert second.report.totals.readbacks == 0
    p = pts.data.numpy()
    kept = np.flatnonzero(np.hypot(p[:, 0] - np.float32(0.25), p[:, 1]) < np.float32(0.8))
    got = ops.transfer.readback(columns={"i": second["keep"]["indices"]})["values"]["i"]
    assert got == kept.tolist()


def test_a_new_shape_counts_one_build():
    a = column_from_numpy(np.arange(4, dtype=np.float32), "Float", "cpu")
    before = pg.traffic()
    F.evaluate(F.sin(F.col(a)) * F.cos(F.col(a)) + 123.0 + F.floor(F.col(a) / 7.0))
    F.evaluate(F.sin(F.col(a)) * F.cos(F.col(a)) + 5.0 + F.floor(F.col(a) / 2.0))
    assert (pg.traffic() - before).builds <= 1


def test_readback_of_a_field():
    a = column_from_numpy(np.array([1.0, 4.0, 9.0], np.float32), "Float", "cpu")
    got = ops.transfer.readback(columns={"r": F.sqrt(F.col(a)) + 1.0})["values"]["r"]
    assert got == [2.0, 3.0, 4.0]


def test_readback_refuses_a_field_that_reads_no_column():
    with pytest.raises(
        UploadError,
        match=r"columns\['r'\].*reads none and has no length.*"
        r"fieldc.evaluate\(field, domain=n\)",
    ):
        ops.transfer.readback(columns={"r": F.index() * 2.0})


def test_fields_refuse_what_they_cannot_be():
    v2 = F.col(column_from_numpy(np.zeros((3, 2)), "Vec2", "cpu"))
    v3 = F.col(column_from_numpy(np.zeros((3, 3)), "Vec3", "cpu"))
    with pytest.raises(BindingError, match="vectors of the same size"):
        v2 + v3
    with pytest.raises(BindingError, match="Python truth value"):
        bool(v2.x < 1)
    with pytest.raises(BindingError, match="expected a lane below 2"):
        _ = v2.z
    with pytest.raises(BindingError, match="a Field, a Column, a number"):
        F.as_field("x")


def test_walk_spec_and_bind_spec_against_numpy():
    rng = np.random.default_rng(2)
    n = 200
    p0 = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    rate = rng.uniform(0.5, 2.0, n).astype(np.float32)
    P = column_from_numpy(p0, "Vec2", "cpu")
    R = column_from_numpy(rate, "Float", "cpu")
    pos = fieldc.position()
    step = F.vec2(-pos.y, pos.x) * F.col(R) + F.vec2(0.5, 0.0)
    spec = fieldc.walk_spec(step, {"dt": 0.05, "steps": 12, "done": pos.x - 0.9})
    assert spec.specialize == {
        "WALK_STEP": "add",
        "WALK_STEP_HI": "off",
        "WALK_DONE": "field",
        "WALK_PRELUDE": "none",
    }
    bound = fieldc.bind_spec(spec)
    out = ops.device.kernel(
        kernel=WALK,
        specialize=spec.specialize,
        bind={"pos": P, "cols": bound.cols, "u": bound.u},
        domain=P,
        uniforms=spec.uniforms,
    )["columns"]
    want = p0.copy()
    taken = np.zeros(n, np.int32)
    for i in range(n):
        p = want[i].copy()
        k = 0
        while k < 12 and not p[0] - np.float32(0.9) > 0:
            f = np.array([-p[1], p[0]], np.float32) * rate[i] + np.float32([0.5, 0.0])
            p = p + np.float32(0.05) * f
            k += 1
        want[i], taken[i] = p, k
    np.testing.assert_allclose(out["out"].data.numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out["taken"].data.numpy(), taken)
    bound.release()
    assert bound.released and bound.u is None


def test_every_step_field_runs_in_one_walk_build():
    P = column_from_numpy(np.zeros((5, 2), np.float32), "Vec2", "cpu")
    pos = fieldc.position()
    results = []
    before = None
    for k, step in enumerate((F.vec2(1.0, 2.0), F.normalize(pos + F.vec2(1.0, 1.0)) * 3.0)):
        spec = fieldc.walk_spec(step, {"dt": 1.0, "steps": 2, "hi": True})
        bound = fieldc.bind_spec(spec)
        if k == 1:
            before = pg.traffic()
        out = ops.device.kernel(
            kernel=WALK,
            specialize=spec.specialize,
            bind={"pos": P, "cols": bound.cols, "u": bound.u},
            domain=5,
            uniforms=spec.uniforms,
        )["columns"]
        results.append(out["out"].data.numpy()[0])
        bound.release()
    assert (pg.traffic() - before).builds == 0
    np.testing.assert_allclose(results[0], [2.0, 4.0])
    np.testing.assert_allclose(np.hypot(*results[1]), 6.0, rtol=1e-5)


def test_walk_spec_refusals():
    with pytest.raises(BindingError, match="expected a Vec2 Field, got f32"):
        fieldc.walk_spec(F.index() * 1.0)
    with pytest.raises(BindingError, match="expected keys among"):
        fieldc.walk_spec(fieldc.position(), {"speed": 1})
    with pytest.raises(BindingError, match="without count"):
        fieldc.walk_spec(fieldc.position() * F.count())


def test_walk_over_a_live_count():
    P = column_from_numpy(np.ones((6, 2), np.float32), "Vec2", "cpu")
    word = column_from_numpy(np.array([4], np.uint32), "UInt", "cpu")
    spec = fieldc.walk_spec(F.vec2(1.0, 0.0), {"dt": 0.5, "steps": 3})
    bound = fieldc.bind_spec(spec)
    out = ops.device.kernel(
        kernel=WALK,
        specialize=spec.specialize,
        bind={"pos": P, "cols": bound.cols, "u": bound.u},
        domain={"count": word, "capacity": 6},
        uniforms=spec.uniforms,
    )["columns"]
    np.testing.assert_allclose(out["out"].data.numpy()[:4], [[2.5, 1.0]] * 4)
    np.testing.assert_array_equal(out["out"].data.numpy()[4:], 0.0)  # past the live count
    np.testing.assert_array_equal(out["taken"].data.numpy(), [3, 3, 3, 3, 0, 0])
    bound.release()


def test_a_dynamic_constant_replays_without_a_new_plan():
    pts = column_from_numpy(np.random.default_rng(5).uniform(-1, 1, (300, 2)), "Vec2", "cpu")
    gather = asset.resolve("procgen/gather", "computeShader")

    @pg.node(params={"radius": pg.Field(0.5, bounds=(0.0, 2.0), dynamic=True)})
    def keep(radius):
        flags = F.length(F.col(pts)) < radius  # the radius stays a dynamic uniform
        out = ops.device.kernel(kernel=COMPACT, bind={"flags": flags}, domain=pts)["columns"]
        moved = ops.device.kernel(
            kernel=gather,
            specialize={"TYPE": "vec2"},
            bind={"src": pts, "idx": out["indices"]},
            domain=count(out["indices"]) + 0,
        )["columns"]["dst"]
        return {"idx": out["indices"], "moved": moved}

    g = pg.Graph("dynamic_fields")
    g.add("keep", keep)
    p = pts.data.numpy()
    for k, r in enumerate((0.5, 0.8, 0.3)):
        res = g.cook(params={"keep.radius": r})
        assert res.report.node("keep").mode == ("cooked" if k == 0 else "replayed")
        got = ops.transfer.readback(columns={"i": res["keep"]["idx"]})["values"]["i"]
        assert got == np.flatnonzero(np.hypot(p[:, 0], p[:, 1]) < np.float32(r)).tolist()
