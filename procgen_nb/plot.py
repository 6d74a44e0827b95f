"""Plot helpers: tracks, gates and counts drawn onto a matplotlib Axes.

Each function draws onto the Axes it is given, or onto a new one (``plt.subplots()``)
when ``ax`` is None, and returns what it drew on, so the helpers serve scripts, notebooks
and the ``explore`` view alike::

    import procgen_nb.plot as pplot

    layout = pplot.plot_tracks(result.xy, result.valid, ax=ax)
    pplot.plot_gates(gates.positions, gates.count, ax=ax, layout=layout)
    pplot.plot_counts({"valid envs": 14, "envs": 16}, ax=ax2)
    pplot.plot_racing_line(line, ax=ax, layout=layout, scale=100.0)  # coloured by speed

Tracks are drawn as a grid of envs on one Axes: each env is centred in its own cell,
every env at the same scale, its centerline green when valid and red when not.
``figure_png`` renders a figure to PNG bytes with the Agg canvas (no pyplot state).
"""

from __future__ import annotations

import dataclasses
import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import ParamsError

__all__ = [
    "EnvGrid",
    "as_points",
    "draw_tracks",
    "figure_png",
    "new_figure",
    "plot_counts",
    "plot_gates",
    "plot_points",
    "plot_racing_line",
    "plot_tracks",
]

#: colours of a valid and an invalid env's centerline.
VALID_COLOR = "#2a9d4b"
INVALID_COLOR = "#d1495b"
GATE_COLOR = "#1d5fa8"
POINT_COLORS = ("#b0b0b0", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")


@dataclasses.dataclass(frozen=True)
class EnvGrid:
    """Where each env sits on a grid Axes: its cell, centre and the shared scale.

    Attributes:
        columns: cells per row.
        rows: number of rows.
        centers: ``[E, 2]`` the point of each env that lands on its cell's centre.
        scale: the factor every env's coordinates are multiplied by (one for all envs).
        envs: the indices of the envs drawn, in cell order.
    """

    columns: int
    rows: int
    centers: np.ndarray
    scale: float
    envs: tuple[int, ...]

    def cell_of(self, env: int) -> tuple[int, int]:
        """Returns (column, row) of ``env``'s cell; refuses an env that is not drawn."""
        try:
            k = self.envs.index(env)
        except ValueError:
            raise ParamsError(f"env: expected one of the drawn envs, got {env!r}") from None
        return k % self.columns, k // self.columns

    def place(self, env: int, points: np.ndarray) -> np.ndarray:
        """Returns ``points`` ([..., 2] or more lanes; x, y used) moved into ``env``'s cell."""
        col, row = self.cell_of(env)
        pts = np.asarray(points, dtype=np.float64)[..., :2]
        origin = np.array([col + 0.5, -(row + 0.5)])
        return (pts - self.centers[env]) * self.scale + origin


def as_points(values: Any, lanes: int = 2) -> np.ndarray:
    """Returns ``values`` (a ``wp.array`` of vectors, a NumPy array or nested lists) as NumPy.

    Args:
        values: ``[M]`` vectors, ``[M, lanes]`` or ``[E, N, lanes]`` numbers.
        lanes: the lanes of one element when ``values`` is flat (``[M * lanes]``).

    Returns:
        A float64 array whose last axis holds the lanes.

    Raises:
        ParamsError: when ``values`` cannot be read as vectors.
    """
    if hasattr(values, "numpy"):
        values = values.numpy()
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 1:
        if arr.size % lanes:
            raise ParamsError(f"points: expected a multiple of {lanes} numbers, got {arr.size}")
        arr = arr.reshape(-1, lanes)
    if arr.ndim < 2 or arr.shape[-1] < 2:
        raise ParamsError(f"points: expected [..., 2] or [..., 3] numbers, got shape {arr.shape}")
    return arr


def _as_ints(values: Any) -> np.ndarray:
    if hasattr(values, "numpy"):
        values = values.numpy()
    return np.asarray(values).reshape(-1).astype(np.int64)


def _tracks(xy: Any, valid: Any, num_envs: int | None) -> tuple[np.ndarray, np.ndarray]:
    pts = as_points(xy)
    ok = None if valid is None else _as_ints(valid)
    if pts.ndim == 2:
        envs = num_envs or (len(ok) if ok is not None else 1)
        if envs <= 0 or pts.shape[0] % envs:
            raise ParamsError(
                f"xy: expected a multiple of num_envs={envs} points, got {pts.shape[0]}"
            )
        pts = pts.reshape(envs, -1, pts.shape[-1])
    if ok is None:
        ok = np.ones(pts.shape[0], dtype=np.int64)
    if len(ok) != pts.shape[0]:
        raise ParamsError(f"valid: expected {pts.shape[0]} flags (one per env), got {len(ok)}")
    return pts[..., :2], ok


def new_figure(width: float = 6.0, height: float = 6.0, dpi: int = 80) -> Any:
    """Returns a matplotlib ``Figure`` on the Agg canvas, outside pyplot (nothing piles up)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def figure_png(fig: Any, dpi: int | None = None) -> bytes:
    """Returns ``fig`` rendered as PNG bytes with the Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi or fig.dpi)
    return buf.getvalue()


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    return ax


def _layout(pts: np.ndarray, envs: Sequence[int], columns: int | None) -> EnvGrid:
    n = max(len(envs), 1)
    cols = columns or max(1, math.ceil(math.sqrt(n)))
    rows = max(1, math.ceil(n / cols))
    centers = np.zeros((pts.shape[0], 2))
    extent = 0.0
    for e in envs:
        p = pts[e][np.all(np.isfinite(pts[e]), axis=-1)]
        if len(p):
            lo, hi = p.min(axis=0), p.max(axis=0)
            centers[e] = (lo + hi) / 2
            extent = max(extent, float((hi - lo).max()))
    scale = 0.85 / extent if extent > 0 else 1.0
    return EnvGrid(cols, rows, centers, scale, tuple(int(e) for e in envs))


def plot_tracks(
    xy: Any,
    valid: Any = None,
    *,
    ax: Any = None,
    num_envs: int | None = None,
    max_envs: int = 64,
    columns: int | None = None,
    labels: bool = True,
    linewidth: float = 1.2,
    legend: bool = False,
) -> EnvGrid:
    """Draws each env's closed centerline in its own cell of a grid on one Axes.

    Args:
        xy: ``[E * N]`` vec2 ``wp.array``, ``[E * N, 2]`` or ``[E, N, 2]`` numbers.
        valid: ``[E]`` flags (nonzero is valid); all valid when None.
        ax: the Axes to draw on; a new one when None.
        num_envs: E when ``xy`` is flat and ``valid`` is None.
        max_envs: draw at most the first this many envs.
        columns: cells per row (about the square root of the count when None).
        labels: write each env's index in its cell.
        linewidth: line width of the centerlines.
        legend: a legend of the colours (valid, invalid) above the grid (outside it, at
            the axis labels' size, on a white background); a title says when fewer envs
            are drawn than given.

    Returns:
        The ``EnvGrid`` used, to place gates (``plot_gates(..., layout=...)``) on the same
        cells.

    Raises:
        ParamsError: when the shapes of ``xy`` and ``valid`` disagree.
    """
    from matplotlib.collections import LineCollection

    pts, ok = _tracks(xy, valid, num_envs)
    ax = _axes(ax)
    envs = list(range(min(pts.shape[0], max(1, max_envs))))
    layout = _layout(pts, envs, columns)
    segs, colors = [], []
    for e in envs:
        p = pts[e][np.all(np.isfinite(pts[e]), axis=-1)]
        if len(p) < 2:
            continue
        closed = layout.place(e, np.vstack([p, p[:1]]))
        segs.append(closed)
        colors.append(VALID_COLOR if ok[e] else INVALID_COLOR)
        if labels:
            col, row = layout.cell_of(e)
            ax.text(col + 0.04, -row - 0.06, str(e), fontsize=7, color="#555555", va="top")
    ax.add_collection(LineCollection(segs, colors=colors, linewidths=linewidth))
    if legend:
        from matplotlib.lines import Line2D

        handles = [
            Line2D([], [], color=VALID_COLOR, lw=2, label="valid"),
            Line2D([], [], color=INVALID_COLOR, lw=2, label="invalid"),
        ]
        ax.legend(
            handles=handles,
            loc="lower left",
            bbox_to_anchor=(0.0, 1.01),
            borderaxespad=0.0,
            ncols=2,
            fontsize=legend_size(ax),
            framealpha=0.92,
            facecolor="white",
            edgecolor="#bbbbbb",
        )
    if len(envs) < pts.shape[0]:
        ax.set_title(f"the first {len(envs)} of {pts.shape[0]} envs", fontsize=8, loc="right")
    ax.set_xlim(0, layout.columns)
    ax.set_ylim(-layout.rows, 0)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for k in range(1, layout.columns):
        ax.axvline(k, color="#dddddd", linewidth=0.5)
    for k in range(1, layout.rows):
        ax.axhline(-k, color="#dddddd", linewidth=0.5)
    return layout


def plot_gates(
    positions: Any,
    count: Any,
    *,
    ax: Any = None,
    layout: EnvGrid | None = None,
    heading: Any = None,
    order: Any = None,
    numbers: bool = True,
) -> Any:
    """Draws each env's gates with their order, the start gate and the direction of travel.

    Args:
        positions: ``[E * G]`` vec2/vec3 (``wp.array`` or NumPy), or ``[E, G, 2|3]``.
        count: ``[E]`` the real gate count of each env (slots past it are ignored).
        ax: the Axes to draw on; a new one when None.
        layout: the ``EnvGrid`` that ``plot_tracks`` returned; without one the gates are
            laid out on a grid of their own.
        heading: optional ``[E * G]`` directions of travel in radians; each gate is drawn
            as a short bar across it (its opening) and the start arrow follows it.
        order: optional ``[E * G]`` visiting order; slot order when None.
        numbers: write each gate's place in the order beside it.

    Returns:
        The Axes drawn on.

    Raises:
        ParamsError: when the shapes disagree.
    """
    from matplotlib.collections import LineCollection

    counts = _as_ints(count)
    pts = as_points(positions)
    envs = len(counts)
    if pts.ndim == 2:
        if envs == 0 or pts.shape[0] % envs:
            raise ParamsError(f"positions: expected a multiple of {envs} gates, got {pts.shape[0]}")
        pts = pts.reshape(envs, -1, pts.shape[-1])
    slots = pts.shape[1]
    heads = None if heading is None else _floats(heading).reshape(envs, slots)
    orders = None if order is None else _as_ints(order).reshape(envs, slots)
    ax = _axes(ax)
    if layout is None:
        layout = _layout(pts[..., :2], list(range(envs)), None)
        ax.set_xlim(0, layout.columns)
        ax.set_ylim(-layout.rows, 0)
        ax.set_aspect("equal")
    for e in layout.envs:
        if e >= envs:
            continue
        n = int(min(max(counts[e], 0), slots))
        if n == 0:
            continue
        seq = np.arange(n) if orders is None else np.argsort(orders[e, :n], kind="stable")
        placed = layout.place(e, pts[e, seq, :2])
        ax.plot(placed[:, 0], placed[:, 1], "o", ms=3, color=GATE_COLOR, zorder=3)
        ax.plot(placed[0, 0], placed[0, 1], "s", ms=6, mfc="none", mec="#000000", zorder=4)
        if n > 1 or heads is not None:
            if heads is not None:
                d = np.array([np.cos(heads[e, seq[0]]), np.sin(heads[e, seq[0]])])
            else:
                d = placed[1] - placed[0]
            d = 0.12 * d / (np.linalg.norm(d) or 1.0)
            ax.annotate(
                "",
                xy=placed[0] + d,
                xytext=placed[0],
                arrowprops={"arrowstyle": "->", "color": "#000000", "lw": 1.0},
                zorder=4,
            )
        if heads is not None:
            h = heads[e, seq]
            bar = 0.04 * np.stack([-np.sin(h), np.cos(h)], axis=-1)  # across the travel
            segs = np.stack([placed - bar, placed + bar], axis=1)
            ax.add_collection(LineCollection(segs, colors=GATE_COLOR, linewidths=1.5, zorder=3))
        if numbers:
            for k, p in enumerate(placed):
                ax.text(p[0] + 0.015, p[1] + 0.015, str(k), fontsize=8, color=GATE_COLOR)
    return ax


def _floats(values: Any) -> np.ndarray:
    if hasattr(values, "numpy"):
        values = values.numpy()
    return np.asarray(values, dtype=np.float64).reshape(-1)


def plot_counts(
    counts: Mapping[str, float],
    *,
    ax: Any = None,
    color: str = "#4c72b0",
) -> Any:
    """Draws counts as a small horizontal bar chart with each number written at its bar.

    Args:
        counts: label -> number, drawn top to bottom in the mapping's order.
        ax: the Axes to draw on; a new one when None.
        color: the bars' colour.

    Returns:
        The Axes drawn on.

    Raises:
        ParamsError: when a count is not a finite number.
    """
    labels = list(counts)
    values = []
    for k in labels:
        v = counts[k]
        if (
            isinstance(v, bool)
            or not isinstance(v, int | float | np.number)
            or not math.isfinite(v)
        ):
            raise ParamsError(f"counts[{k!r}]: expected a finite number, got {v!r}")
        values.append(float(v))
    ax = _axes(ax)
    ys = np.arange(len(labels))
    ax.barh(ys, values, color=color, height=0.6)
    ax.set_yticks(ys, labels=labels, fontsize=8)
    ax.invert_yaxis()
    top = max(values, default=0.0)
    for y, v in zip(ys, values, strict=True):
        ax.text(v + 0.01 * (top or 1), y, f"{v:g}", va="center", fontsize=8)
    ax.set_xlim(0, (top or 1) * 1.25)
    ax.tick_params(axis="x", labelsize=7)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def draw_tracks(ax: Any, xy: Any, valid: Any = None, **options: Any) -> EnvGrid:
    """Same as ``plot_tracks(xy, valid, ax=ax, **options)``, with the Axes first."""
    return plot_tracks(xy, valid, ax=ax, **options)


def cloud_marks(sizes: Sequence[int]) -> list[tuple[int, float]]:
    """Returns (cloud index, mark radius in px) in drawing order, the explore canvas's
    rule: the largest cloud first in the smallest marks, each later (smaller or equal)
    cloud in marks smaller than the one drawn before it, so a cloud that repeats another's
    points shows as a ring around them and no cloud hides another. Ties keep the given
    order."""
    order = sorted(range(len(sizes)), key=lambda c: (-int(sizes[c]), c))
    n = len(order)
    return [
        (c, 1.8 if n == 1 else 1.2 if rank == 0 else 1.2 + 1.4 * (n - rank) / (n - 1))
        for rank, c in enumerate(order)
    ]


def legend_size(ax: Any) -> float:
    """Returns the font size (pt) of ``ax``'s axis labels: the least a legend is drawn at."""
    return max(float(ax.xaxis.label.get_size()), float(ax.yaxis.label.get_size()))


def plot_points(
    clouds: Mapping[str, Any],
    *,
    ax: Any = None,
    size: float = 10.0,
    max_points: int = 100_000,
) -> Any:
    """Draws named point clouds on one Axes, one colour each, with a legend of their sizes.

    The clouds are drawn as the explore view draws them (``cloud_marks``): the largest
    first in the smallest marks, each later one in smaller marks on top, so a cloud that
    repeats another's points shows as a ring around them. The legend (the clouds in the
    given order) sits above the Axes, outside the points, at the axis labels' size on a
    white background.

    Args:
        clouds: label -> ``[M, 2|3]`` points (NumPy, nested lists or a vector ``wp.array``).
        ax: the Axes to draw on; a new one when None.
        size: the marker area (pt^2) of a lone cloud; the others scale with their radius.
        max_points: draw at most the first this many points of each cloud.

    Returns:
        The Axes drawn on.

    Raises:
        ParamsError: when a cloud cannot be read as points.
    """
    from matplotlib.lines import Line2D

    ax = _axes(ax)
    items = []
    for label, values in clouds.items():
        pts = as_points(values)
        items.append((label, pts.reshape(-1, pts.shape[-1])[:max_points]))
    for z, (c, radius) in enumerate(cloud_marks([len(p) for _l, p in items])):
        label, pts = items[c]
        ax.scatter(
            pts[:, 0],
            pts[:, 1],
            s=size * (radius / 1.8) ** 2,
            marker="s",
            color=POINT_COLORS[c % len(POINT_COLORS)],
            label=f"{label} ({len(pts)})",
            linewidths=0,
            zorder=2 + z,
        )
    ax.set_aspect("equal")
    if items:
        handles = [
            Line2D([], [], ls="", marker="s", ms=7, color=POINT_COLORS[c % len(POINT_COLORS)])
            for c in range(len(items))
        ]
        ax.legend(
            handles,
            [f"{label} ({len(p)})" for label, p in items],
            loc="lower left",
            bbox_to_anchor=(0.0, 1.01),
            borderaxespad=0.0,
            ncols=min(3, len(items)),
            fontsize=legend_size(ax),
            framealpha=0.92,
            facecolor="white",
            edgecolor="#bbbbbb",
        )
    return ax


def _racing_arrays(line: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(xy [E, N, 2], speed [E, N], lap_time [E])`` of a ``RacingLine`` (read back) or a
    dict of those arrays (``RacingLine.numpy()``'s)."""
    got = line.numpy() if hasattr(line, "numpy") else line
    try:
        xy = np.asarray(got["xy"], dtype=np.float64)
        speed = np.asarray(got["speed"], dtype=np.float64)
        lap = np.asarray(got.get("lap_time", np.full(xy.shape[:1], np.nan)), dtype=np.float64)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ParamsError(
            "line: expected a RacingLine or a dict of xy [E, N, 2] and speed [E, N], got "
            f"{type(line).__name__}"
        ) from None
    if xy.ndim != 3 or xy.shape[-1] != 2 or speed.shape != xy.shape[:2]:
        raise ParamsError(
            f"line: expected xy [E, N, 2] and speed [E, N], got {list(xy.shape)} and "
            f"{list(speed.shape)}"
        )
    if lap.shape != xy.shape[:1]:
        raise ParamsError(f"line lap_time: expected [{xy.shape[0]}], got {list(lap.shape)}")
    return xy, speed, lap


def plot_racing_line(
    line: Any,
    *,
    ax: Any = None,
    layout: EnvGrid | None = None,
    scale: float = 1.0,
    max_envs: int = 64,
    columns: int | None = None,
    cmap: str = "viridis",
    colorbar: bool = True,
    lap_time: bool = True,
    linewidth: float = 2.0,
) -> Any:
    """Draws each env's racing line coloured by speed, in its grid cell, with a colorbar.

    Args:
        line: a ``track_gen.RacingLine`` (read back here) or its ``numpy()`` dict.
        ax: the Axes to draw on; a new one when None.
        layout: the ``EnvGrid`` of ``plot_tracks`` to draw over (its centerlines' cells);
            a grid of the lines' own when None.
        scale: metres per world unit of ``layout`` (``racing_line``'s ``scale``): the line,
            in metres, is divided by it before it is placed.
        max_envs, columns: as ``plot_tracks`` when ``layout`` is None.
        cmap: the colormap of speed (m/s); one colour scale for every env drawn.
        colorbar: add a colorbar labelled ``speed (m/s)``.
        lap_time: write each env's lap time in the lower right of its cell.
        linewidth: the line's width.

    Returns:
        The ``LineCollection`` drawn: one segment per pair of consecutive points (the
        closing one too), its colour value the mean speed of the segment's two ends.

    Raises:
        ParamsError: a ``line`` that is neither, mismatched shapes, a ``scale`` not > 0.
    """
    from matplotlib.collections import LineCollection

    xy, speed, lap = _racing_arrays(line)
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ParamsError(f"scale: expected a finite number > 0, got {scale!r}")
    world = xy / float(scale)
    if layout is None:
        ax = _axes(ax)
        envs = list(range(min(xy.shape[0], max(1, max_envs))))
        layout = _layout(world, envs, columns)
        ax.set_xlim(0, layout.columns)
        ax.set_ylim(-layout.rows, 0)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    else:
        ax = _axes(ax)
    segs, vals = [], []
    for e in layout.envs:
        if e >= xy.shape[0] or not np.all(np.isfinite(xy[e])):
            continue
        p = layout.place(e, world[e])
        segs.extend(np.stack([p, np.roll(p, -1, 0)], 1))
        vals.extend(0.5 * (speed[e] + np.roll(speed[e], -1)))
        if lap_time and math.isfinite(lap[e]):
            col, row = layout.cell_of(e)
            ax.text(col + 0.96, -row - 0.94, f"{lap[e]:.2f} s", fontsize=7, ha="right")
    lc = LineCollection(segs, cmap=cmap, linewidths=linewidth)
    lc.set_array(np.asarray(vals, dtype=np.float64))
    ax.add_collection(lc)
    if colorbar and segs:
        ax.figure.colorbar(lc, ax=ax, label="speed (m/s)", shrink=0.8)
    return lc
