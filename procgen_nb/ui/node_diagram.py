"""A graph's nodes as a small diagram: its wires and each node's cook state and time (SVG).

Each node is a box, placed in columns by depth (a node one column right of the deepest
node it reads) and in cook order down each column; each wire of ``Graph.edges()`` is an
arrow from the node read to the node reading it, labelled with the input when it is not
named for the node it reads (and the entry of the output, ``points.xy``). A box is coloured
by what the node's last cook did, from the cook report: ``replayed`` (its recording
replayed, or its output reused), ``planned`` (planned and cooked again), ``failed`` (the
cook stopped there), ``not cooked`` (a node a failure reached: it reads the failed
node); after a failure the other nodes keep the last good cook's state and time. The time
under the name is the node's from the report. A graph that states no wires (no ``edges()``) is drawn as a chain
in cook order.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from .frame import ReportRow

#: state -> (fill, stroke) of a node's box
COLORS = {
    "replayed": ("#e6f4ea", "#2a9d4b"),
    "planned": ("#e8f0fb", "#1d5fa8"),
    "failed": ("#fde8ea", "#d1495b"),
    "not cooked": ("#f1f1f1", "#999999"),
}


def node_states(
    nodes: Sequence[str],
    rows: Sequence[ReportRow],
    failed: str | None = None,
    edges: Sequence[Sequence[str]] | None = None,
) -> list[tuple[str, str, float]]:
    """Returns (node, state, time in ms) per node of ``nodes`` from a cook report's
    ``rows`` (a node the rows leave out is "not cooked").

    With ``failed`` (the node a failed cook stopped at; ``rows`` then are the last good
    cook's) that node is "failed" and the nodes it reaches "not cooked": those reading it,
    directly or through others, by ``edges`` (``graph.edges()`` or (from, to) pairs), or
    every node after it in cook order when ``edges`` is None. The nodes the failure did
    not reach keep their state and time in ``rows``.
    """
    by_name = {r.name: r for r in rows}
    reached: set[str] = set()
    if failed is not None:
        if edges is None:
            reached = set(nodes[list(nodes).index(failed) + 1 :]) if failed in nodes else set()
        else:
            reached = _downstream(failed, _wires(edges))
    out = []
    for n in nodes:
        r = by_name.get(n)
        if n == failed:
            out.append((n, "failed", 0.0))
        elif n in reached or r is None:
            out.append((n, "not cooked", 0.0))
        elif r.mode in ("replayed", "reused") or r.reused:
            out.append((n, "replayed", float(r.time_ms)))
        else:
            out.append((n, "planned", float(r.time_ms)))
    return out


def _downstream(node: str, wires: Sequence[tuple[str, str, str, str]]) -> set[str]:
    """The nodes that read ``node``, directly or through others."""
    readers: dict[str, set[str]] = {}
    for a, _k, b, _i in wires:
        readers.setdefault(a, set()).add(b)
    seen: set[str] = set()
    todo = [node]
    while todo:
        for b in readers.get(todo.pop(), ()):
            if b not in seen and b != node:
                seen.add(b)
                todo.append(b)
    return seen


def graph_html(graph: Any, rows: Sequence[ReportRow], failure: str = "") -> str:
    """Returns ``graph``'s diagram ("" for a graph with no nodes). After a cook that
    succeeded, ``rows`` is its report; after one that failed with the message
    ``failure``, ``rows`` is the last good cook's report (() before any): the node the
    message names is "failed", the nodes it reaches "not cooked", the others as in
    ``rows``; a message that names no node blames none (every node as in ``rows``)."""
    names = list(getattr(graph, "nodes", []) or [])
    if not names:
        return ""
    edges = graph_edges(graph)
    failed = failed_node(failure, names) if failure else None
    states = node_states(names, rows, failed, edges)
    return diagram_html(states, edges, failed=bool(failure))


def failed_node(message: str, nodes: Sequence[str]) -> str | None:
    """Returns the node a failure message names (``node 'x'`` or ``x:``), or None."""
    m = re.search(r"node '([A-Za-z_][A-Za-z0-9_]*)'", message)
    if m and m.group(1) in nodes:
        return m.group(1)
    for n in nodes:
        if re.search(rf"(^|[\s'\"]){re.escape(n)}[':.]", message):
            return n
    return None


#: a node box's height, the gaps between columns and rows, and the diagram's margin (px)
_BOX_H, _GAP_X, _GAP_Y, _PAD = 28, 40, 4, 4
#: the band above the boxes that wires past a column arc through (px)
_ARC = 16


def _wires(edges: Sequence[Sequence[str]]) -> list[tuple[str, str, str, str]]:
    """(source, key, target, input) of each edge: a ``graph.edges()`` entry as it is, a
    (source, target) pair with no key and no input."""
    out = []
    for e in edges:
        if len(e) == 4:
            out.append((str(e[0]), str(e[1]), str(e[2]), str(e[3])))
        else:
            a, b = e
            out.append((str(a), "", str(b), ""))
    return out


def layout(
    names: Sequence[str], wires: Sequence[tuple[str, str, str, str]]
) -> dict[str, tuple[int, int]]:
    """Returns node -> (column, row): column 0 for a node that reads none, else one more
    than the deepest node it reads; rows in cook order down each column. Wires naming a
    node not in ``names`` are ignored."""
    known = set(names)
    reads: dict[str, list[str]] = {}
    for a, _k, b, _i in wires:
        if a in known and b in known:
            reads.setdefault(b, []).append(a)
    col: dict[str, int] = {}
    for n in names:  # cook order: every node read comes first
        col[n] = 1 + max((col.get(a, 0) for a in reads.get(n, ())), default=-1)
    rows: dict[int, int] = {}
    out = {}
    for n in names:
        out[n] = (col[n], rows.get(col[n], 0))
        rows[col[n]] = rows.get(col[n], 0) + 1
    return out


def diagram_html(
    states: Sequence[tuple[str, str, float]],
    edges: Sequence[Sequence[str]] | None = None,
    failed: bool = False,
) -> str:
    """Returns the diagram as HTML: an SVG of one box per node and an arrow per wire, a
    legend of the states above it; each box's and arrow's tooltip says what it is.

    Args:
        states: (node, state, ms) in cook order (``node_states``).
        edges: ``graph.edges()`` (``Edge(source, key, target, input)``) or (from, to)
            pairs; None: each node reads the one before it.
        failed: whether the last cook failed (the heading says the states of the nodes
            it did not reach are the last good cook's).
    """
    if not states:
        return ""
    names = [s[0] for s in states]
    if edges is None:
        edges = [(names[i - 1], names[i]) for i in range(1, len(names))]
    wires = [w for w in _wires(edges) if w[0] in names and w[2] in names]
    place = layout(names, wires)
    reads: dict[str, list[str]] = {}
    for a, k, b, _i in wires:
        reads.setdefault(b, []).append(f"{a}.{k}" if k else a)
    texts = [(n, _when(st, ms)) for n, st, ms in states]
    longest = max(
        max(len(n), len(st) + len(w)) for (n, w), (_, st, _m) in zip(texts, states, strict=True)
    )
    box_w = max(56, 7 * longest + 12)
    cols = 1 + max(c for c, _r in place.values())
    rows = 1 + max(r for _c, r in place.values())
    width = _PAD * 2 + cols * box_w + (cols - 1) * _GAP_X
    # a wire past a column arcs over the boxes between: a band above them for it
    skips = any(place[b][0] - place[a][0] > 1 for a, _k, b, _i in wires)
    top = _PAD + (_ARC if skips else 0)
    height = top + _PAD + rows * _BOX_H + (rows - 1) * _GAP_Y

    def at(n: str) -> tuple[float, float]:
        c, r = place[n]
        return _PAD + c * (box_w + _GAP_X), top + r * (_BOX_H + _GAP_Y)

    parts = []
    for a, k, b, inp in wires:
        ax, ay = at(a)
        bx, by = at(b)
        x0, y0, x1, y1 = ax + box_w, ay + _BOX_H / 2, bx - 2, by + _BOX_H / 2
        mid = (x0 + x1) / 2
        if place[b][0] - place[a][0] > 1:  # over the boxes between, through the band
            c0, c1, ly = (x0 + _GAP_X, 0.0), (x1 - _GAP_X, 0.0), 0.25 * min(y0, y1) + 3
        else:
            c0, c1, ly = (mid, y0), (mid, y1), (y0 + y1) / 2 - 3
        src = f"{a}.{k}" if k else a
        tip = f"{b}.{inp} reads {src}" if inp else f"{b} reads {src}"
        label = "" if not inp or (inp == a and not k) else (f"{inp} ({k})" if k else inp)
        parts.append(
            f'<g class="procgen-edge" data-edge="{html.escape(a)}->{html.escape(b)}">'
            f"<title>{html.escape(tip)}</title>"
            f'<path d="M{x0:.1f},{y0:.1f} C{c0[0]:.1f},{c0[1]:.1f} {c1[0]:.1f},{c1[1]:.1f} {x1:.1f},{y1:.1f}"'
            ' fill="none" stroke="#777" stroke-width="1.3" marker-end="url(#procgen-arrow)"/>'
            + (
                f'<text x="{mid:.1f}" y="{ly:.1f}" text-anchor="middle" '
                f'font-size="9" fill="#555">{html.escape(label)}</text>'
                if label
                else ""
            )
            + "</g>"
        )
    for (name, state, _ms), (_n, when) in zip(states, texts, strict=True):
        fill, stroke = COLORS[state]
        x, y = at(name)
        ins = reads.get(name, [])
        tip = f"{name}: {state}{' in ' + when[3:] if when else ''}"
        tip += f"; reads {', '.join(ins)}" if ins else "; reads no node"
        parts.append(
            f'<g class="procgen-node" data-node="{html.escape(name)}" data-state="{state}">'
            f"<title>{html.escape(tip)}</title>"
            f'<rect x="{x}" y="{y}" width="{box_w}" height="{_BOX_H}" rx="5" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="1.5"/>'
            f'<text x="{x + 6}" y="{y + 12}" font-size="12" font-weight="bold" '
            f'fill="#222">{html.escape(name)}</text>'
            f'<text x="{x + 6}" y="{y + 23}" font-size="10" fill="{stroke}">'
            f"{html.escape(state + when)}</text></g>"
        )
    legend = " ".join(
        f'<span style="white-space:nowrap"><i style="display:inline-block;width:10px;'
        f'height:10px;background:{f};border:1px solid {s};margin-right:3px"></i>{k}</span>'
        for k, (f, s) in COLORS.items()
    )
    svg = (
        f'<svg class="procgen-nodes-svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" style="max-width:100%;height:auto" role="img" '
        'aria-label="the graph\'s nodes and wires">'
        '<defs><marker id="procgen-arrow" viewBox="0 0 8 8" refX="7" refY="4" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L8,4 L0,8 z" fill="#777"/></marker></defs>'
        f"{''.join(parts)}</svg>"
    )
    when = "(last cook failed; the nodes it did not reach as in the last good cook)"
    return (
        '<div class="procgen-nodes" style="font-size:12px"><b>nodes</b> '
        f"{when if failed else '(last cook)'} {legend}<div>{svg}</div></div>"
    )


def _when(state: str, ms: float) -> str:
    """`` · 2.5 ms`` for a node that cooked or replayed, "" otherwise."""
    return f" · {ms:.1f} ms" if state in ("planned", "replayed") else ""


def graph_edges(graph: Any) -> list[tuple[str, str, str, str]] | None:
    """The wires of ``graph`` as (source, key, target, input) when it states them
    (``edges()``: ``Edge`` tuples, or (from, to) pairs), else None."""
    edges = getattr(graph, "edges", None)
    if callable(edges):
        try:
            return _wires(edges())
        except (TypeError, ValueError):
            return None
    return None
