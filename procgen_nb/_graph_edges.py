"""The wires of a graph: which node's output each node's input reads (``Graph.edges()``).

``Edge`` is one wire: ``source`` (the upstream node), ``key`` (the entry of its output
the input reads, ``""`` for the whole output: ``"points.xy"`` reads key ``"xy"``),
``target`` (the node reading it) and ``input`` (the input's name). An input given a
constant (a ``Const``, an array, a number) is no edge.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Edge(NamedTuple):
    """One wire of a graph: ``target``'s input ``input`` reads ``source``'s output (its
    entry ``key``; ``""``: the whole output)."""

    source: str
    key: str
    target: str
    input: str


class GraphEdges:
    """The ``edges()`` method of ``Graph`` (a mixin over its nodes' wiring)."""

    _nodes: dict[str, Any]

    def edges(self) -> list[Edge]:
        """Returns every wire of the graph as ``Edge(source, key, target, input)``, in cook
        order of the reading node, then in the order its inputs were given to ``add``.

        ``key`` is the dotted path after the node's name (``"points.xy"``: ``"xy"``;
        ``"a.b.c"``: ``"b.c"``), ``""`` when the input reads the whole output. Inputs given
        constants are left out. Takes nothing, refuses nothing; cooks nothing.
        """
        out = []
        for name, inst in self._nodes.items():
            for inp, src in inst.wiring.items():
                if isinstance(src, str):
                    up, _, key = src.partition(".")
                    out.append(Edge(up, key, name, inp))
        return out
