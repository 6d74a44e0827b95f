"""A graph's nodes as a small diagram: each node's cook state and time (SVG in HTML).

Each node is a box in cook order, an arrow from each node it reads (``graph.edges()``
when the graph states them, else from the node before it), coloured by what its last cook
did, from the cook report: ``replayed`` (its recording replayed, or its output reused),
``planned`` (planned and cooked again), ``failed`` (the cook stopped there), ``not
cooked`` (after a failure); the time beside it is the node's from the report.
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
_BOX_W, _BOX_H, _GAP = 150, 34, 14


def node_states(
    nodes: Sequence[str], rows: Sequence[ReportRow], failed: str | None = None
) -> list[tuple[str, str, float]]:
    """Returns (node, state, time in ms) per node of ``nodes`` from a cook report's
    ``rows``; with ``failed`` (the node a failed cook stopped at) that node is "failed"
    and those after it "not cooked"."""
    by_name = {r.name: r for r in rows}
    out = []
    hit = False
    for n in nodes:
        r = by_name.get(n)
        if failed is not None and (hit or n == failed):
            out.append((n, "not cooked" if hit else "failed", 0.0))
            hit = True
            continue
        if r is None:
            out.append((n, "not cooked", 0.0))
        elif r.mode in ("replayed", "reused") or r.reused:
            out.append((n, "replayed", float(r.time_ms)))
        else:
            out.append((n, "planned", float(r.time_ms)))
    return out


def failed_node(message: str, nodes: Sequence[str]) -> str | None:
    """Returns the node a failure message names (``node 'x'`` or ``x:``), or None."""
    m = re.search(r"node '([A-Za-z_][A-Za-z0-9_]*)'", message)
    if m and m.group(1) in nodes:
        return m.group(1)
    for n in nodes:
        if re.search(rf"(^|[\s'\"]){re.escape(n)}[':.]", message):
            return n
    return None


def diagram_html(
    states: Sequence[tuple[str, str, float]], edges: Sequence[tuple[str, str]] | None = None
) -> str:
    """Returns the diagram as HTML (an inline SVG and a legend).

    Args:
        states: (node, state, ms) in cook order (``node_states``).
        edges: (from, to) node pairs; None: each node reads the one before it.
    """
    if not states:
        return ""
    index = {n: i for i, (n, _, _) in enumerate(states)}
    if edges is None:
        edges = [(states[i - 1][0], states[i][0]) for i in range(1, len(states))]
    h = len(states) * (_BOX_H + _GAP) + 4
    w = _BOX_W + 60
    parts = [
        f'<svg class="procgen-nodes-svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" font-size="12">',
        '<defs><marker id="pg-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#777"/></marker></defs>',
    ]
    for a, b in edges:
        if a not in index or b not in index:
            continue
        i, j = index[a], index[b]
        y0 = 2 + i * (_BOX_H + _GAP) + _BOX_H
        y1 = 2 + j * (_BOX_H + _GAP)
        if j == i + 1:
            x = 2 + _BOX_W / 2
            parts.append(
                f'<line x1="{x}" y1="{y0}" x2="{x}" y2="{y1 - 1}" stroke="#777" '
                'marker-end="url(#pg-arrow)"/>'
            )
        else:  # a skip: an arc on the right side
            xr = 2 + _BOX_W
            ya, yb = y0 - _BOX_H / 2, y1 + _BOX_H / 2
            parts.append(
                f'<path d="M{xr},{ya} C{xr + 40},{ya} {xr + 40},{yb} {xr + 1},{yb}" '
                'fill="none" stroke="#777" marker-end="url(#pg-arrow)"/>'
            )
    for i, (name, state, ms) in enumerate(states):
        fill, stroke = COLORS[state]
        y = 2 + i * (_BOX_H + _GAP)
        when = f"{ms:.1f} ms" if state in ("planned", "replayed") else ""
        parts.append(
            f'<g class="procgen-node" data-node="{html.escape(name)}" data-state="{state}">'
            f"<title>{html.escape(name)}: {state}{' in ' + when if when else ''}</title>"
            f'<rect x="2" y="{y}" width="{_BOX_W}" height="{_BOX_H}" rx="5" fill="{fill}" '
            f'stroke="{stroke}" stroke-width="1.5"/>'
            f'<text x="10" y="{y + 14}" font-weight="bold">{html.escape(name[:20])}</text>'
            f'<text x="10" y="{y + 28}" fill="{stroke}">{state}'
            f"{' · ' + when if when else ''}</text></g>"
        )
    parts.append("</svg>")
    legend = " ".join(
        f'<span style="white-space:nowrap"><i style="display:inline-block;width:10px;'
        f'height:10px;background:{f};border:1px solid {s};margin-right:3px"></i>{k}</span>'
        for k, (f, s) in COLORS.items()
    )
    return (
        '<div class="procgen-nodes"><b>nodes</b> (last cook)'
        f'<div>{"".join(parts)}</div><div style="font-size:12px">{legend}</div></div>'
    )


def graph_edges(graph: Any) -> list[tuple[str, str]] | None:
    """The (from, to) node pairs of ``graph`` when it states them (``edges()``), else None."""
    edges = getattr(graph, "edges", None)
    if callable(edges):
        try:
            return [(str(a), str(b)) for a, b in edges()]
        except (TypeError, ValueError):
            return None
    return None
