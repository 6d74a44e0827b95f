"""The cook report: per node, time, launches, uploads, readbacks (wait points), loads, builds.

``loads`` counts the Warp kernel modules a node loaded into the process (its first launch
of each), ``builds`` those of them Warp compiled because its kernel cache did not hold
them: a cook on a warm cache reports loads and no builds; a second cook, neither.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any

from ._traffic import Traffic

#: The traffic columns of a report's rows and text; ``_STEADY_COLUMNS`` without ``builds``.
_COLUMNS = ("launches", "uploads", "readbacks", "waits", "loads", "builds", "replays")
_STEADY_COLUMNS = tuple(c for c in _COLUMNS if c != "builds")


@dataclasses.dataclass
class NodeReport:
    """What one node did in a cook.

    Attributes:
        name: the node's name in the graph.
        reused: True when the node's previous outputs were reused (nothing it reads moved).
        replayed: True when the node's launches ran from the cook's recording.
        time_ms: wall time of the node's cook (0 when reused).
        traffic: the node's device traffic (launches, uploads, readbacks, waits, loads,
            builds, ...).
        events: (kind, detail) pairs: "wait" for a readback, "folded" for a pure call made
            at planning, "launch" for a kernel, "guard", "digest" ...
    """

    name: str
    reused: bool
    time_ms: float
    traffic: Traffic
    events: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    replayed: bool = False

    @property
    def mode(self) -> str:
        """How the node took part: "cooked", "reused" or "replayed"."""
        return "replayed" if self.replayed else "reused" if self.reused else "cooked"

    def __getattr__(self, name: str) -> Any:
        if name in Traffic.__dataclass_fields__:
            return getattr(self.traffic, name)
        raise AttributeError(name)

    @property
    def waits_at(self) -> list[str]:
        """The wait points of the node (what it read back)."""
        return [d for k, d in self.events if k == "wait"]


@dataclasses.dataclass
class CookReport:
    """The report of one cook: a NodeReport per node in cook order, and the totals."""

    nodes: list[NodeReport]
    totals: Traffic
    time_ms: float
    time: float = 0.0
    frame: int = 0

    def node(self, name: str) -> NodeReport:
        """Returns the report of the node named ``name``."""
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"no node {name!r} in this report; nodes: {[n.name for n in self.nodes]}")

    @property
    def reused(self) -> list[str]:
        """Names of the nodes whose outputs were reused."""
        return [n.name for n in self.nodes if n.reused]

    @property
    def cooked(self) -> list[str]:
        """Names of the nodes that cooked (ran their Python)."""
        return [n.name for n in self.nodes if n.mode == "cooked"]

    @property
    def replayed(self) -> bool:
        """True when the cook replayed its recording."""
        return any(n.replayed for n in self.nodes)

    @property
    def waits(self) -> list[tuple[str, str]]:
        """(node, what) for every wait point of the cook."""
        return [(n.name, w) for n in self.nodes for w in n.waits_at]

    def rows(self, timing: bool = True) -> list[dict[str, Any]]:
        """Returns one dict per node: node, mode, time_ms, launches, uploads, readbacks,
        waits, loads, builds, replays.

        ``timing=False`` leaves out what differs between two runs of the same cook: the
        time, and ``builds`` (whether a load compiled depends on Warp's kernel cache).
        """
        out = []
        for n in self.nodes:
            row: dict[str, Any] = {"node": n.name, "mode": n.mode}
            if timing:
                row["time_ms"] = round(n.time_ms, 3)
            for f in _COLUMNS if timing else _STEADY_COLUMNS:
                row[f] = getattr(n.traffic, f)
            out.append(row)
        return out

    def to_text(self, timing: bool = True) -> str:
        """Returns the report as a fixed-width table and a line of totals.

        ``timing=False`` leaves out the times and the builds (as ``rows``), so that the
        text of a cook is the same on a warm and a cold kernel cache.
        """
        rows = self.rows(timing)
        if not rows:
            return "(empty graph)"
        cols = list(rows[0])
        width = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
        lines = ["  ".join(c.ljust(width[c]) for c in cols)]
        lines += ["  ".join(str(r[c]).ljust(width[c]) for c in cols) for r in rows]
        t = self.totals
        total = " ".join(f"{f}={getattr(t, f)}" for f in _COLUMNS if f in cols)
        lines.append(f"total: {total}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        t = self.totals
        return (
            f"CookReport({len(self.nodes)} nodes, {self.time_ms:.3f} ms, launches={t.launches}, "
            f"uploads={t.uploads}, readbacks={t.readbacks}, loads={t.loads}, builds={t.builds}, "
            f"replayed={self.replayed})"
        )

    def _repr_html_(self) -> str:
        rows = self.rows(True)
        if not rows:
            return "<p>(empty graph)</p>"
        head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r.values()) + "</tr>"
            for r in rows
        )
        return f"<table><tr>{head}</tr>{body}</table>"
