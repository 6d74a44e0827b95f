"""A frame drawn for the explore view: PNG bytes of the envs and counts, HTML tables."""

from __future__ import annotations

import html
import math
from typing import Any

from .. import plot
from .frame import Frame


def tracks_png(frame: Frame, *, max_envs: int, size: float = 6.0, dpi: int = 80) -> bytes:
    """Returns PNG bytes of the grid of envs (and gates) of ``frame`` (``tracks_figure``)."""
    return plot.figure_png(tracks_figure(frame, max_envs=max_envs, size=size, dpi=dpi))


def tracks_figure(frame: Frame, *, max_envs: int, size: float = 6.0, dpi: int = 80) -> Any:
    """Returns the matplotlib figure ``tracks_png`` draws: the grid of envs (and gates),
    or the point clouds (as the canvas draws them: none hides another), with the legend
    in a band above the Axes (it hides no data) at the axis labels' size."""
    clouds = frame.points if frame.points and frame.tracks is None else {}
    rows = math.ceil(len(clouds) / 3) if clouds else 1
    band = 0.2 + 0.3 * rows  # inches above the Axes for the legend (and the title)
    fig = plot.new_figure(size, size + band, dpi)
    ax = fig.add_axes((0.01, 0.01, 0.98, 0.98 * size / (size + band)))
    layout = None
    if frame.tracks is not None:
        layout = plot.plot_tracks(frame.tracks, frame.valid, ax=ax, max_envs=max_envs, legend=True)
    if frame.gates is not None:
        g = frame.gates
        plot.plot_gates(
            g.positions, g.count, ax=ax, layout=layout, heading=g.heading, order=g.order
        )
    if clouds:
        plot.plot_points(clouds, ax=ax)
        ax.set_xticks([])
        ax.set_yticks([])
    if frame.tracks is None and frame.gates is None and not frame.points:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "nothing to draw", ha="center", va="center")
    return fig


def counts_png(frame: Frame, *, width: float = 6.0, dpi: int = 80) -> bytes:
    """Returns PNG bytes of the counts of ``frame`` as a small bar chart ``width`` inches wide."""
    longest = max((len(k) for k in frame.counts), default=4)
    label_in = min(0.3 + 0.075 * longest, width / 2)  # inches the tick labels take at 8 pt
    height = 0.5 + 0.28 * max(1, len(frame.counts))
    fig = plot.new_figure(width, height, dpi)
    plot_w = width - label_in - 0.5
    ax = fig.add_axes((label_in / width, 0.3 / height, plot_w / width, 1 - 0.4 / height))
    plot.plot_counts(frame.counts, ax=ax)
    return plot.figure_png(fig)


def _cell(v: object) -> str:
    return f"<td style='text-align:right;padding:0 6px'>{html.escape(str(v))}</td>"


def counts_html(frame: Frame) -> str:
    """Returns the counts and fingerprint of ``frame`` as an HTML table."""
    rows = "".join(
        f"<tr><td style='white-space:nowrap'>{html.escape(k)}</td>{_cell(f'{v:g}')}</tr>"
        for k, v in frame.counts.items()
    )
    if frame.fingerprint:
        rows += (
            f"<tr><td style='white-space:nowrap'>fingerprint</td>{_cell(frame.fingerprint)}</tr>"
        )
    return f"<table class='procgen-counts'>{rows}</table>"


def report_html(frame: Frame) -> str:
    """Returns the cook report of ``frame`` (time per node, launches, readbacks, builds)."""
    head = "".join(
        f"<th style='padding:0 6px'>{h}</th>"
        for h in ("node", "mode", "ms", "launches", "readbacks", "builds")
    )
    body = ""
    for r in frame.report:
        reused = r.mode or ("" if r.reused is None else ("reused" if r.reused else "cooked"))
        body += (
            f"<tr><td>{html.escape(r.name)}</td>{_cell(reused)}{_cell(f'{r.time_ms:.1f}')}"
            f"{_cell(r.launches)}{_cell(r.readbacks)}{_cell(r.builds)}</tr>"
        )
    t = frame.traffic
    body += (
        f"<tr style='border-top:1px solid #ccc'><td><i>total</i></td>{_cell('')}"
        f"{_cell(f'{frame.elapsed_ms:.1f}')}{_cell(t.launches)}{_cell(t.readbacks)}"
        f"{_cell(t.builds)}</tr>"
    )
    return f"<table class='procgen-report'><tr>{head}</tr>{body}</table>"
