"""Kernel-level parameters of a graph: each kernel call's uniforms and specialize options."""

from __future__ import annotations

import numpy as np
import pytest

import procgen_nb as pg
from procgen_nb import ops
from procgen_nb.demo import build_demo_graph

PTS = np.random.default_rng(7).uniform(-1.0, 1.0, size=(2000, 2)).astype(np.float32)


def kept(result):
    return ops.transfer.readback(columns={"n": result["keep"]["indices_count"]})["values"]["n"]


def inside(radius, shape="disk", center=(0.0, 0.0)):
    d = PTS - np.asarray(center, dtype=np.float32)
    if shape == "square":
        return int((np.abs(d) <= np.float32(radius)).all(axis=1).sum())
    return int((np.linalg.norm(d, axis=1) <= np.float32(radius)).sum())


def test_kernel_params_are_found_by_a_cook_and_only_literals_are_offered():
    """The node passes radius and SHAPE from its own params: no kernel-level control for
    them (it would shadow the node's); the literal center and gather TYPE are offered."""
    g = build_demo_graph()
    assert g.kernel_params() == {}
    g.cook()
    kp = g.kernel_params()
    assert {"keep.inside.center_x", "keep.inside.center_y", "kept.gather.TYPE"} <= set(kp)
    assert not {"keep.inside.radius", "keep.inside.SHAPE", "keep.inside.inner"} & set(kp)
    assert "keep.compact.COUNT" not in kp  # COUNT follows the domain, it is no parameter
    assert kp["kept.gather.TYPE"].choices == ["vec2"]  # gathers vec2 points: only vec2 binds
    assert kp["keep.inside.center_x"].type is float
    assert g.values["keep.inside.center_x"] == 0.0 and g.values["kept.gather.TYPE"] == "vec2"
    assert set(kp) <= set(g.params())


def test_a_node_slider_moves_the_picture_after_kernel_params_are_found():
    """The dead-slider case: keep.radius reaches the kernel on every cook."""
    g = build_demo_graph()
    for radius in (0.6, 0.2, 0.9, 0.45):
        assert kept(g.cook(params={"keep.radius": radius})) == inside(radius)
    assert kept(g.cook(params={"keep.shape": "square", "keep.radius": 0.5})) == inside(
        0.5, "square"
    )


def test_an_override_of_a_literal_wins_until_cleared_and_the_node_params_still_move():
    g = build_demo_graph()
    assert kept(g.cook()) == inside(0.6)
    r = g.cook(params={"keep.inside.center_x": 0.5})
    assert kept(r) == inside(0.6, center=(0.5, 0.0)) and r.report.reused == ["points"]
    r = g.cook(params={"keep.radius": 0.3})  # the node's own value moves; the override stays
    assert kept(r) == inside(0.3, center=(0.5, 0.0))
    g.clear_kernel_overrides()
    r = g.cook()
    assert kept(r) == inside(0.3) and g.values["keep.inside.center_x"] == 0.0


def test_a_value_computed_from_a_param_is_no_kernel_param_but_a_literal_is():
    @pg.node(params={"r": pg.Field(0.5, bounds=(0.0, 2.0)), "n": pg.Field(3, bounds=(1, 9))})
    def ring(points, r, n):
        return ops.device.kernel(
            kernel=pg.asset.resolve("procgen/inside", "computeShader"),
            specialize={"SHAPE": "ring"},
            bind={"points": points},
            domain=points,
            uniforms={"center": (r * 0.0 + 0.1, -(n // 2) * 0.05), "radius": r * 2, "inner": 0.2},
        )["columns"]["flags"]

    g = pg.Graph("computed")
    g.add("points", lambda: ops.transfer.upload(values={"P": PTS})["columns"]["P"])
    g.add("ring", ring, points="points")
    g.cook()
    kp = g.kernel_params()
    assert {"ring.inside.inner", "ring.inside.SHAPE"} <= set(kp)  # literals
    assert not {"ring.inside.radius", "ring.inside.center_x", "ring.inside.center_y"} & set(kp)


@pg.node(params={"radius": pg.Field(0.6, bounds=(0.0, 2.0))})
def literal_shape(points, radius):
    """Passes SHAPE and inner as literals: both are kernel-level params."""
    return ops.device.kernel(
        kernel=pg.asset.resolve("procgen/inside", "computeShader"),
        specialize={"SHAPE": "ring"},
        bind={"points": points},
        domain=points,
        uniforms={"center": (0.0, 0.0), "radius": radius, "inner": 0.2},
    )["columns"]


def literal_graph():
    g = pg.Graph("literal")
    g.add("points", lambda: ops.transfer.upload(values={"P": PTS})["columns"]["P"])
    g.add("keep", literal_shape, points="points")
    return g


def flagged(result):
    return int(result["keep"]["flags"].data.numpy().sum())


def test_kernel_param_refusals():
    g = literal_graph()
    with pytest.raises(pg.ParamsError, match=r"expected names among .*got 'keep.inside.inner'"):
        g.cook(params={"keep.inside.inner": 0.3})  # not found before the first cook
    g.cook()
    with pytest.raises(
        pg.ParamsError,
        match=r"keep.inside.SHAPE: expected one of \['disk', 'square', 'ring'\], got 'star'",
    ):
        g.cook(params={"keep.inside.SHAPE": "star"})
    with pytest.raises(pg.ParamsError, match=r"keep.inside.inner: expected a number, got 'big'"):
        g.cook(params={"keep.inside.inner": "big"})


def test_a_specialize_override_leaves_out_uniforms_its_variant_does_not_declare():
    g = literal_graph()
    ring = int(((d := np.linalg.norm(PTS, axis=1)) <= np.float32(0.6)).sum()) - int(
        (d < np.float32(0.2)).sum()
    )
    assert abs(flagged(g.cook()) - ring) <= 1  # the ring's inner edge: < or <= in float32
    r = g.cook(params={"keep.inside.SHAPE": "disk"})  # disk declares no inner: left out
    assert flagged(r) == inside(0.6)


def _cooks(build, override: dict) -> bool:
    """True when a fresh graph cooks with ``override`` after a first cook (the runtime's
    own binding checks are the reference)."""
    g = build()
    g.cook()
    try:
        g.cook(params=override)
    except pg.ProcgenError:
        return False
    return True


@pytest.mark.parametrize(
    "key",
    ["kept.gather.TYPE", "offsets.scan.TYPE", "offsets.scan.SEGMENTS", "keep.inside.SHAPE"],
)
def test_an_option_offers_exactly_the_choices_that_bind(key):
    """Seed-derived rule (issue 11, item 3): "a TYPE-like option offers only the choices
    that can bind to the columns given". Every choice the schema lists is tried on a fresh
    graph: the offered ones cook, the others are refused by device.kernel."""
    g = build_demo_graph() if key != "keep.inside.SHAPE" else literal_graph()
    g.cook()
    kp = g.kernel_params()
    offered = kp[key].choices
    node, site, opt = key.split(".")
    every = pg.asset.resolve(f"procgen/{site}", "computeShader").spec.option_names()[opt]
    build = build_demo_graph if key != "keep.inside.SHAPE" else literal_graph
    cooks = [c for c in every if _cooks(build, {key: c})]
    assert offered == cooks
    if key == "kept.gather.TYPE":  # vec2 points: f32, i32, u32, vec3 and vec4 cannot bind
        assert offered == ["vec2"]
    if key == "offsets.scan.TYPE":  # i32 flags: read as i32, or cast by value to f32
        assert offered == ["i32", "f32"]
    if key == "offsets.scan.SEGMENTS":  # device segments need a starts column: none bound
        assert offered == ["plain"]
    if key == "keep.inside.SHAPE":  # no binding depends on it: every shape
        assert offered == list(every)


def test_bindable_choices_follow_the_columns_bound():
    import warp as wp

    from procgen_nb._kernel_params import bindable_choices

    spec = pg.asset.resolve("procgen/gather", "computeShader").spec
    idx = wp.zeros(4, dtype=wp.int32)
    f32 = pg.Column(wp.zeros(4, dtype=wp.float32))
    vec3 = pg.Column(wp.zeros(4, dtype=wp.vec3f))

    def offered(src, given="f32"):
        return bindable_choices(spec, "TYPE", {"TYPE": given}, {"src": src, "idx": idx})

    assert offered(f32) == ["f32", "i32", "u32"]  # one lane: cast by value
    assert offered(vec3, "vec3") == ["vec3"]
    # src given through columns=: the same rule
    assert bindable_choices(spec, "TYPE", {"TYPE": "vec3"}, {"idx": idx}, {"src": vec3}) == ["vec3"]
