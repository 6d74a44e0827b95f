"""``Graph.edges()``: every wire of a hand-built graph, and none for constants."""

from __future__ import annotations

import numpy as np

from procgen_nb import Const, Graph
from procgen_nb.graph import Edge


def _points(n=4):
    return {"xy": n, "count": n}


def _keep(points, radius=0.5):
    return points


def _join(a, b, scale=1.0):
    return (a, b, scale)


def _hand_built() -> Graph:
    g = Graph("wires")
    g.add("points", _points, n=Const(8))
    g.add("keep", _keep, points="points", radius=0.25)
    g.add("join", _join, a="points.xy", b="keep", scale=np.ones(3))
    g.add("again", _keep, points="join")
    return g


def test_edges_of_a_hand_built_graph():
    g = _hand_built()
    # by hand: who reads whom, through which input, with which entry of the output
    assert g.edges() == [
        Edge("points", "", "keep", "points"),
        Edge("points", "xy", "join", "a"),
        Edge("keep", "", "join", "b"),
        Edge("join", "", "again", "points"),
    ]
    e = g.edges()[1]
    assert (e.source, e.key, e.target, e.input) == ("points", "xy", "join", "a")


def test_constants_are_no_edges_and_a_dotted_path_keeps_its_tail():
    g = Graph("consts")
    g.add("points", _points, n=3)
    assert g.edges() == []  # n is a number: no wire
    g.add("join", _join, a="points.xy.deep", b=Const("points"))
    # a Const holding a node's name is a constant, not a wire; the key is the whole tail
    assert g.edges() == [Edge("points", "xy.deep", "join", "a")]


def test_edges_cook_nothing():
    g = _hand_built()
    g.edges()
    assert g.last is None


def test_node_of_hands_back_the_node_added_under_a_name():
    import pytest

    from procgen_nb.errors import GraphError
    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator

    g = _hand_built()
    assert [g.node_of(n).fn for n in g.nodes] == [_points, _keep, _join, _keep]
    tg = TrackGenerator(TrackGenConfig(num_envs=2, num_points=32, device="cpu"))
    g.add("tracks", tg.node())
    assert g.node_of("tracks").generator is tg  # what a view's selection reads
    with pytest.raises(GraphError, match=r"node name: expected one of \[.*'again'.*\], got 'nope'"):
        g.node_of("nope")
