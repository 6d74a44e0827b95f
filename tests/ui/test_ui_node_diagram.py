"""A graph's view draws its nodes: each node's state and time in the last cook."""

from __future__ import annotations

import re

from test_ui_explore import _gathered

from procgen_nb.demo import build_demo_graph
from procgen_nb.ui import explore
from procgen_nb.ui.frame import ReportRow
from procgen_nb.ui.node_diagram import diagram_html, failed_node, node_states


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
    # b reads a (an arrow from the box before it); c reads a but not b (no arrow)
    assert html.count("→") == 1 and html.count(">·<") == 1
    assert 'title="c: replayed in 0.4 ms; reads a"' in html


def test_the_node_a_failure_names():
    nodes = ["points", "keep", "picked"]
    assert failed_node("graph 'demo' node 'picked' (gather): expected f32", nodes) == "picked"
    assert failed_node("keep: expected a radius", nodes) == "keep"
    assert failed_node("something else", nodes) is None


def test_a_graph_view_shows_its_nodes_planned_replayed_and_failed():
    g = build_demo_graph()
    g.add("picked", _gathered, points="points", keep="keep")
    v = explore(g, min_interval=0.0)
    try:
        frame = v.wait(60)
        states = _states(v.nodes.value)
        assert list(states) == g.nodes and set(states.values()) == {"planned"}
        ms = {r.name: r.time_ms for r in frame.report}
        for name in g.nodes:  # the time of each node is the report's
            assert f'title="{name}: planned in {ms[name]:.1f} ms' in v.nodes.value
        v.form.widget("keep.radius").value = 0.3
        v.wait(60)
        assert _states(v.nodes.value)["points"] == "replayed"
        assert _states(v.nodes.value)["keep"] == "planned"
        v.form.widget("picked.as_type").value = "f32"  # gather cannot bind: the cook fails
        v.wait(60)
        states = _states(v.nodes.value)
        assert v.error and states["picked"] == "failed", (v.error, states)
        assert states["points"] != "failed"
    finally:
        v.close()
