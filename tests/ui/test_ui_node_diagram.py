"""A graph's view draws its nodes: each node's state and time in the last cook."""

from __future__ import annotations

import re

from test_ui_explore import _gathered

from procgen_nb import ops
from procgen_nb.demo import GATHER, build_demo_graph
from procgen_nb.ui import explore
from procgen_nb.ui.frame import ReportRow
from procgen_nb.ui.node_diagram import (
    diagram_html,
    failed_node,
    graph_html,
    layout,
    node_states,
)


def _states(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-node="([^"]+)" data-state="([^"]+)"', html))


def test_states_from_a_report_by_hand():
    rows = (
        ReportRow("a", 0.0, reused=True, mode="reused"),
        ReportRow("b", 2.5, reused=False, mode="cooked"),
        ReportRow("c", 0.4, reused=False, mode="replayed"),
    )
    assert node_states(["a", "b", "c"], rows) == [
        ("a", "replayed", 0.0),
        ("b", "planned", 2.5),
        ("c", "replayed", 0.4),
    ]
    assert node_states(["a", "b", "c"], rows, failed="b") == [
        ("a", "replayed", 0.0),
        ("b", "failed", 0.0),
        ("c", "not cooked", 0.0),
    ]
    html = diagram_html(node_states(["a", "b", "c"], rows), edges=[("a", "b"), ("a", "c")])
    assert _states(html) == {"a": "replayed", "b": "planned", "c": "replayed"}
    assert "planned · 2.5 ms" in html
    # one arrow per wire, none between b and c (c does not read b)
    assert _edges(html) == ["a->b", "a->c"]
    assert "<title>c: replayed in 0.4 ms; reads a</title>" in html


def _tips(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-node="([^"]+)" data-state="[^"]+"><title>([^<]*)</title>', html))


def _scaled(picked, keep):
    """A node reading ``picked`` (it does not cook when picked fails): picked's points
    gathered again."""
    return ops.device.kernel(
        kernel=GATHER,
        specialize={"TYPE": "vec2"},
        bind={"src": picked, "idx": keep["indices"]},
        domain=keep["indices"],
    )["columns"]["dst"]


def test_a_failure_blames_the_node_it_names_and_keeps_the_others():
    class Graph:  # what graph_html reads of a graph: nodes and edges
        nodes = ["a", "b", "c", "d"]

        def edges(self):  # a -> b -> c, a -> d (d does not read b)
            return [("a", "b"), ("b", "c"), ("a", "d")]

    rows = (
        ReportRow("a", 1.5, reused=False, mode="replayed"),
        ReportRow("b", 2.0, reused=False, mode="cooked"),
        ReportRow("c", 3.0, reused=False, mode="cooked"),
        ReportRow("d", 4.0, reused=False, mode="cooked"),
    )
    html = graph_html(Graph(), rows, "graph 'g' node 'b' (k): expected f32, got vec2")
    assert _states(html) == {"a": "replayed", "b": "failed", "c": "not cooked", "d": "planned"}
    assert "<title>d: planned in 4.0 ms; reads a</title>" in html
    # a message naming no node blames none: each node as in the last good cook
    html = graph_html(Graph(), rows, "device lost")
    assert _states(html) == {"a": "replayed", "b": "planned", "c": "planned", "d": "planned"}
    assert "last cook failed" in html
    # a failure before any good cook: nothing cooked but the node named
    assert _states(graph_html(Graph(), (), "node 'a': expected x")) == {
        "a": "failed",
        "b": "not cooked",
        "c": "not cooked",
        "d": "not cooked",
    }


def _edges(html: str) -> list[str]:
    return re.findall(r'data-edge="([^"]+)"', html)


def _boxes(html: str) -> dict[str, tuple[float, float]]:
    found = re.findall(
        r'data-node="([^"]+)"[^>]*><title>[^<]*</title><rect x="([\d.]+)" y="([\d.]+)"', html
    )
    return {n: (float(x), float(y)) for n, x, y in found}


def test_wires_from_edges_placed_by_depth():
    # points -> keep -> join, points.xy -> join (past keep's column), lone reads nothing
    wires = [
        ("points", "", "keep", "points"),
        ("points", "xy", "join", "a"),
        ("keep", "", "join", "b"),
    ]
    names = ["points", "lone", "keep", "join"]
    assert layout(names, wires) == {
        "points": (0, 0),
        "lone": (0, 1),
        "keep": (1, 0),
        "join": (2, 0),
    }
    html = diagram_html([(n, "planned", 1.0) for n in names], wires)
    assert _edges(html) == ["points->keep", "points->join", "keep->join"]
    boxes = _boxes(html)
    # columns left to right by depth, rows down in cook order
    assert boxes["points"][0] < boxes["keep"][0] < boxes["join"][0]
    assert boxes["points"][0] == boxes["lone"][0] and boxes["lone"][1] > boxes["points"][1]
    # the input is named where it is not the node it reads, with the entry read
    labels = re.findall(r'font-size="9" fill="#555">([^<]*)</text>', html)
    assert labels == ["a (xy)", "b"]  # keep.points reads points: no label
    assert "<title>join.a reads points.xy</title>" in html
    assert "<title>join: planned in 1.0 ms; reads points.xy, keep</title>" in html
    # the wire past keep's column arcs above the boxes (a control point over them)
    path = re.search(r'data-edge="points->join"><title>[^<]*</title><path d="([^"]+)"', html)[1]
    top = min(y for _x, y in boxes.values())
    assert "C" in path and float(path.split("C")[1].split(",")[1].split()[0]) < top
    # no edges given: a chain in cook order
    assert _edges(diagram_html([(n, "planned", 1.0) for n in names])) == [
        "points->lone",
        "lone->keep",
        "keep->join",
    ]


def test_the_node_a_failure_names():
    nodes = ["points", "keep", "picked"]
    assert failed_node("graph 'demo' node 'picked' (gather): expected f32", nodes) == "picked"
    assert failed_node("keep: expected a radius", nodes) == "keep"
    assert failed_node("something else", nodes) is None


def test_a_graph_view_shows_its_nodes_planned_replayed_and_failed():
    g = build_demo_graph()
    g.add("picked", _gathered, points="points", keep="keep")
    g.add("after", _scaled, picked="picked", keep="keep")
    v = explore(g, min_interval=0.0)
    try:
        frame = v.wait(60)
        states = _states(v.nodes.value)
        assert list(states) == g.nodes and set(states.values()) == {"planned"}
        # an arrow per wire of the graph (its edges), not per cook-order neighbour
        assert _edges(v.nodes.value) == [f"{e.source}->{e.target}" for e in g.edges()]
        ms = {r.name: r.time_ms for r in frame.report}
        for name in g.nodes:  # the time of each node is the report's
            assert f"<title>{name}: planned in {ms[name]:.1f} ms" in v.nodes.value
        v.form.widget("keep.radius").value = 0.3
        v.wait(60)
        good = _states(v.nodes.value)
        # by hand: points did not change (replayed); keep and what reads it cook again
        assert good == {
            "points": "replayed",
            "keep": "planned",
            "kept": "planned",
            "offsets": "planned",
            "picked": "planned",
            "after": "planned",
        }
        good_tips = _tips(v.nodes.value)
        v.form.widget("picked.as_type").value = "f32"  # gather cannot bind: the cook fails
        v.wait(60)
        assert v.error
        # picked failed, after (which reads it) did not cook, the others are as in the
        # last good cook, with its times
        assert _states(v.nodes.value) == {**good, "picked": "failed", "after": "not cooked"}
        tips = _tips(v.nodes.value)
        for name in ("points", "keep", "kept", "offsets"):
            assert tips[name] == good_tips[name]
        assert "last cook failed" in v.nodes.value
    finally:
        v.close()
