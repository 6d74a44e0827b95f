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


def inside(radius, shape="disk"):
    if shape == "square":
        return int((np.abs(PTS) <= np.float32(radius)).all(axis=1).sum())
    return int((np.linalg.norm(PTS, axis=1) <= np.float32(radius)).sum())


def test_kernel_params_are_found_by_a_cook():
    g = build_demo_graph()
    assert g.kernel_params() == {}
    g.cook()
    kp = g.kernel_params()
    assert {
        "keep.inside.radius",
        "keep.inside.center_x",
        "keep.inside.SHAPE",
        "kept.gather.TYPE",
    } <= set(kp)
    assert "keep.compact.COUNT" not in kp  # COUNT follows the domain, it is no parameter
    assert kp["keep.inside.SHAPE"].choices == ["disk", "square", "ring"]
    assert kp["keep.inside.radius"].type is float
    assert g.values["keep.inside.radius"] == 0.6 and g.values["keep.inside.SHAPE"] == "disk"
    assert set(kp) <= set(g.params())


def test_an_override_wins_over_the_node_until_cleared():
    g = build_demo_graph()
    assert kept(g.cook()) == inside(0.6)
    r = g.cook(params={"keep.inside.radius": 0.3})
    assert kept(r) == inside(0.3) and r.report.reused == ["points"]
    r = g.cook(params={"keep.radius": 0.9})  # the node's own value changes: the override stays
    assert kept(r) == inside(0.3)
    r = g.cook(params={"keep.inside.SHAPE": "square"})
    assert kept(r) == inside(0.3, "square")
    g.clear_kernel_overrides()
    r = g.cook()
    assert kept(r) == inside(0.9) and g.values["keep.inside.radius"] == 0.9


def test_kernel_param_refusals():
    g = build_demo_graph()
    with pytest.raises(pg.ParamsError, match=r"expected names among .*got 'keep.inside.radius'"):
        g.cook(params={"keep.inside.radius": 0.3})  # not found before the first cook
    g.cook()
    with pytest.raises(
        pg.ParamsError,
        match=r"keep.inside.SHAPE: expected one of \['disk', 'square', 'ring'\], got 'star'",
    ):
        g.cook(params={"keep.inside.SHAPE": "star"})
    with pytest.raises(pg.ParamsError, match=r"keep.inside.radius: expected a number, got 'big'"):
        g.cook(params={"keep.inside.radius": "big"})


def test_a_specialize_override_leaves_out_uniforms_its_variant_does_not_declare():
    g = build_demo_graph()
    g.cook(params={"keep.shape": "ring", "keep.inner": 0.2})  # the node passes inner
    r = g.cook(params={"keep.inside.SHAPE": "disk"})  # disk declares no inner: left out
    assert kept(r) == inside(0.6)
    g.clear_kernel_overrides()
    g.cook(params={"keep.shape": "disk"})
    with pytest.raises(
        pg.CookError, match=r"uniforms \['inner'\]: expected a value for each declared param"
    ):
        g.cook(params={"keep.inside.SHAPE": "ring"})  # ring needs inner, the node gives none
