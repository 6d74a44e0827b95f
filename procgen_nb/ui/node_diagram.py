"""A graph's nodes as a small diagram: each node's cook state and time (SVG in HTML).

Each node is a box in cook order (an arrow where it reads the node before it; its
tooltip names every node it reads: ``graph.edges()`` when the graph states them, else the
node before it), coloured by what its last cook did, from the cook report: ``replayed`` (its recording replayed, or its output reused),
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
    """Returns the diagram as HTML: one box per node in cook order, an arrow between
    consecutive ones, wrapping to the width it has (a row or two beside the picture);
    each box's tooltip says what the node reads.

    Args:
        states: (node, state, ms) in cook order (``node_states``).
        edges: (from, to) node pairs; None: each node reads the one before it.
    """
    if not states:
        return ""
    if edges is None:
        edges = [(states[i - 1][0], states[i][0]) for i in range(1, len(states))]
    reads: dict[str, list[str]] = {}
    for a, b in edges:
        reads.setdefault(b, []).append(a)
    boxes = []
    for i, (name, state, ms) in enumerate(states):
        fill, stroke = COLORS[state]
        when = f"{ms:.1f} ms" if state in ("planned", "replayed") else ""
        ins = reads.get(name, [])
        tip = f"{name}: {state}{' in ' + when if when else ''}"
        tip += f"; reads {', '.join(ins)}" if ins else "; reads no node"
        if i:
            arrow = "→" if states[i - 1][0] in ins else "·"
            boxes.append(f'<span class="procgen-node-arrow">{arrow}</span>')
        boxes.append(
            f'<span class="procgen-node" data-node="{html.escape(name)}" data-state="{state}" '
            f'title="{html.escape(tip)}" style="display:inline-block;padding:2px 6px;'
            f"margin:2px 0;border:1.5px solid {stroke};background:{fill};border-radius:5px;"
            f'line-height:1.25;vertical-align:middle"><b>{html.escape(name)}</b> '
            f'<span style="color:{stroke}">{state}{" · " + when if when else ""}</span></span>'
        )
    legend = " ".join(
        f'<span style="white-space:nowrap"><i style="display:inline-block;width:10px;'
        f'height:10px;background:{f};border:1px solid {s};margin-right:3px"></i>{k}</span>'
        for k, (f, s) in COLORS.items()
    )
    return (
        '<div class="procgen-nodes" style="font-size:12px"><b>nodes</b> (last cook) '
        f"{legend}<div>{''.join(boxes)}</div></div>"
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
