"""Graphs and cooks: parameters, re-cooking only what a change reaches, failures, reports."""

from __future__ import annotations

import numpy as np
import pytest

import procgen_nb as pg
from procgen_nb import ops
from procgen_nb.demo import build_demo_graph


def test_params_declared_and_validated():
    g = build_demo_graph()
    fields = g.params()
    assert set(fields) == {"points.n", "points.seed", "keep.shape", "keep.radius", "keep.inner"}
    assert fields["keep.shape"].choices == ["disk", "square", "ring"]
    with pytest.raises(
        pg.ParamsError, match=r"keep.radius: expected a value in \[0.0, 2.0\], got 5"
    ):
        g.cook(params={"keep.radius": 5})
    with pytest.raises(
        pg.ParamsError, match=r"expected names among \[.*'keep.radius'.*\], got 'keep.radiu'"
    ):
        g.cook(params={"keep.radiu": 1.0})
    with pytest.raises(
        pg.ParamsError,
        match=r"keep.shape: expected one of \['disk', 'square', 'ring'\], got 'star'",
    ):
        g.cook(params={"keep.shape": "star"})


def test_demo_graph_against_numpy():
    g = build_demo_graph()
    r = g.cook(params={"points.n": 3000, "points.seed": 3, "keep.radius": 0.5})
    pts = np.random.default_rng(3).uniform(-1, 1, size=(3000, 2)).astype(np.float32)
    inside = np.linalg.norm(pts, axis=1) <= np.float32(0.5)
    got = ops.transfer.readback(
        columns={"n": r["keep"]["indices_count"], "kept": r["kept"], "total": r["offsets"]["total"]}
    )["values"]
    assert got["n"] == int(inside.sum()) == got["total"][0]
    kept = np.array([[p["x"], p["y"]] for p in got["kept"]], np.float32)
    np.testing.assert_array_equal(kept, pts[inside])  # in slot order on the CPU


def test_cook_that_only_launches_counts_zero_readbacks():
    g = build_demo_graph()
    g.cook()
    r = g.cook(params={"keep.radius": 0.3})
    assert r.report.totals.readbacks == 0 and r.report.totals.waits == 0
    assert r.report.totals.launches == 4
    assert r.report.waits == []


def test_recook_reuses_nodes_a_change_does_not_reach():
    g = build_demo_graph()
    first = g.cook()
    assert first.report.reused == []
    r = g.cook(params={"keep.radius": 0.3})
    assert r.report.reused == ["points"]
    assert r.report.cooked == ["keep", "kept", "offsets"]
    assert r["points"] is first["points"]
    r = g.cook()
    assert r.report.reused == ["points", "keep", "kept", "offsets"]
    assert r.report.totals.launches == 0
    r = g.cook(params={"points.seed": 8})
    assert r.report.cooked == ["points", "keep", "kept", "offsets"]


def test_time_and_frame_reach_only_nodes_that_take_them():
    calls = []

    @pg.node
    def still():
        calls.append("still")
        return 1

    @pg.node
    def moving(x, time, frame):
        calls.append("moving")
        return x + time + frame

    g = pg.Graph("t")
    g.add("still", still)
    g.add("moving", moving, x="still")
    assert g.cook(time=0.5, frame=2)["moving"] == 3.5
    again = g.cook(time=1.5, frame=2)
    # x + time + frame is an expression over the dynamic time and frame: it answers the
    # new value without running the node again (hand-worked: 1 + 1.5 + 2)
    assert again.report.reused == ["still", "moving"] and again.report.totals.launches == 0
    assert float(again["moving"]) == 4.5 and calls == ["still", "moving"]

    @pg.node
    def branching(x, time):
        calls.append("branching")
        return 10 if time > 1 else 20  # read in Python: the node plans again

    g.add("branching", branching, x="still")
    assert g.cook(time=0.5)["branching"] == 20
    assert g.cook(time=2.0)["branching"] == 10
    assert calls.count("branching") == 2


def test_failed_cook_keeps_last_good_outputs_and_names_node_and_op():
    g = build_demo_graph()
    good = g.cook()
    with pytest.raises(
        pg.CookError,
        match=r"node 'keep' \(broken\) failed in op device.kernel: BindingError: .*uniform 'centre_x'",
    ) as info:
        # a node that passes a bad uniform: replace keep's function for this check
        @pg.node(params={"radius": pg.Field(0.5)})
        def broken(points, radius):
            return ops.device.kernel(
                kernel=pg.asset.resolve("procgen/inside"),
                bind={"points": points},
                domain=points,
                uniforms={"centre": (0, 0), "radius": radius},
            )

        g._nodes["keep"].node = broken
        g.cook(params={"keep.radius": 0.2})
    assert info.value.node == "keep" and info.value.op == "device.kernel"
    assert g.last is good
    assert g.values["keep.radius"] == 0.6  # the failed cook's values are not kept


def test_graph_wiring_refusals():
    g = pg.Graph("w")

    @pg.node
    def a():
        return 1

    @pg.node
    def b(x):
        return x

    g.add("a", a)
    with pytest.raises(pg.GraphError, match=r"add\(name\): expected a new name, got 'a' again"):
        g.add("a", a)
    with pytest.raises(
        pg.GraphError, match=r"input 'x': expected a node added before it among \['a'\], got 'z'"
    ):
        g.add("b", b, x="z")
    with pytest.raises(pg.GraphError, match=r"expected inputs among \['x'\], got \['y'\]"):
        g.add("b", b, y="a")
    with pytest.raises(pg.GraphError, match=r"expected a value for inputs \['x'\], got none"):
        g.add("b", b)
    with pytest.raises(pg.GraphError, match=r"add\(name\): expected an identifier, got 'b c'"):
        g.add("b c", b, x="a")
    with pytest.raises(pg.GraphError, match=r"expected the function to take its params \['k'\]"):
        pg.node(params={"k": 1})(lambda: 0)
    g.add("b", b, x=pg.Const("a"))
    assert g.cook()["b"] == "a"


def test_report_text_and_html():
    g = build_demo_graph()
    r = g.cook()
    text = r.report.to_text(timing=False)
    assert text.splitlines()[0].split() == [
        "node",
        "mode",
        "launches",
        "uploads",
        "readbacks",
        "waits",
        "loads",
        "replays",
    ]
    assert "total: launches=4 uploads=1 readbacks=0" in text
    assert "<table>" in r.report._repr_html_()


def test_moved_digests_names_the_nodes_a_cook_would_cook_again():
    """Seed (cpu.read): "the graph's live digest folds it in, so a Generator cooks the graph
    again when that state moves" -- polled without cooking."""

    @pg.node
    def reader():
        return ops.cpu.read(
            fn="function() return world_n end", digest="function() return world_v end"
        )["values"][0]

    @pg.node
    def plain():
        return 1

    g = pg.Graph("poll")
    g.add("reader", reader)
    g.add("plain", plain)
    assert g.moved_digests() == []  # nothing cooked yet
    lua = g._lua_state()
    lua.env["world_n"], lua.env["world_v"] = 3, 1
    assert g.cook()["reader"] == 3
    assert g.moved_digests() == []
    lua.env["world_n"], lua.env["world_v"] = 4, 2
    assert g.moved_digests() == ["reader"]
    assert g.moved_digests() == ["reader"]  # polling changes nothing
    assert g.cook()["reader"] == 4 and g.moved_digests() == []
