"""procgen_nb.plot: tracks, gates, points and counts drawn on a given or new Axes."""

from __future__ import annotations

import struct

import matplotlib
import numpy as np
import pytest
import warp as wp
from matplotlib.collections import LineCollection
from matplotlib.colors import to_rgba
from matplotlib.text import Annotation

from procgen_nb import plot
from procgen_nb.errors import ParamsError


def _circles(e: int, n: int) -> np.ndarray:
    ang = 2 * np.pi * np.arange(n) / n
    r = 1.0 + np.arange(e)[:, None] * 0.5
    return np.stack([r * np.cos(ang), r * np.sin(ang)], axis=-1)


def _ax():
    fig = plot.new_figure(4, 4)
    return fig, fig.add_subplot()


def test_tracks_one_line_per_env_coloured_by_validity():
    fig, ax = _ax()
    xy = _circles(5, 32)
    layout = plot.plot_tracks(xy, [1, 0, 1, 1, 0], ax=ax)
    (lines,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    segs = lines.get_segments()
    assert len(segs) == 5 and all(len(s) == 33 for s in segs)  # closed: first point again
    colors = [tuple(c) for c in lines.get_colors()]
    ok, bad = to_rgba(plot.VALID_COLOR), to_rgba(plot.INVALID_COLOR)
    assert colors == [ok, bad, ok, ok, bad]
    assert (layout.columns, layout.rows) == (3, 2)
    # every env sits inside its own cell, all at the shared scale
    for e, s in enumerate(segs):
        col, row = layout.cell_of(e)
        assert s[:, 0].min() > col and s[:, 0].max() < col + 1
        assert s[:, 1].max() < -row and s[:, 1].min() > -row - 1
    widths = [np.ptp(s[:, 0]) for s in segs]
    np.testing.assert_allclose(np.array(widths) / widths[0], 1.0 + np.arange(5) * 0.5, rtol=1e-6)


def test_tracks_from_a_flat_warp_array_match_numpy():
    xy = _circles(4, 16).astype(np.float32)
    arr = wp.array(xy.reshape(-1, 2), dtype=wp.vec2f, device="cpu")
    fig1, ax1 = _ax()
    fig2, ax2 = _ax()
    plot.plot_tracks(arr, wp.array([1, 1, 0, 1], dtype=wp.int32, device="cpu"), ax=ax1)
    plot.plot_tracks(xy, [1, 1, 0, 1], ax=ax2)
    s1 = ax1.collections[0].get_segments()
    s2 = ax2.collections[0].get_segments()
    assert len(s1) == 4
    for a, b in zip(s1, s2, strict=True):
        np.testing.assert_allclose(a, b)
    assert plot.figure_png(fig1) == plot.figure_png(fig2)


def test_tracks_refuse_mismatched_shapes_and_cap_envs():
    fig, ax = _ax()
    with pytest.raises(ParamsError, match="valid: expected 3 flags"):
        plot.plot_tracks(_circles(3, 8), [1, 1], ax=ax)
    with pytest.raises(ParamsError, match="expected a multiple of num_envs=3 points, got 10"):
        plot.plot_tracks(np.zeros((10, 2)), num_envs=3, ax=ax)
    layout = plot.plot_tracks(_circles(10, 8), ax=ax, max_envs=4)
    assert layout.envs == (0, 1, 2, 3)
    with pytest.raises(ParamsError, match="expected one of the drawn envs, got 7"):
        layout.cell_of(7)


def test_nan_points_are_skipped():
    fig, ax = _ax()
    xy = _circles(2, 8)
    xy[1, 3] = np.nan
    plot.plot_tracks(xy, ax=ax)
    segs = ax.collections[0].get_segments()
    assert [len(s) for s in segs] == [9, 8]


def test_gates_follow_their_order_and_share_the_track_cells():
    fig, ax = _ax()
    xy = _circles(2, 16)
    layout = plot.plot_tracks(xy, ax=ax)
    gates = xy[:, [0, 4, 8, 12]]
    order = np.array([[3, 2, 1, 0], [0, 1, 2, 3]])
    plot.plot_gates(gates, [4, 2], ax=ax, layout=layout, order=order)
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("0") >= 2 and "3" in texts
    starts = [ln for ln in ax.lines if ln.get_marker() == "s"]
    assert len(starts) == 2
    # env 0 starts at the gate whose order is 0 (slot 3), env 1 at slot 0
    np.testing.assert_allclose(starts[0].get_xydata()[0], layout.place(0, gates[0, 3]))
    np.testing.assert_allclose(starts[1].get_xydata()[0], layout.place(1, gates[1, 0]))
    dots = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert [len(d.get_xdata()) for d in dots] == [4, 2]


def test_gates_alone_vec3_and_flat():
    fig, ax = _ax()
    pos = np.zeros((2 * 3, 3))
    pos[:, 0] = np.arange(6)
    plot.plot_gates(pos, [3, 1], ax=ax, heading=np.zeros(6))
    dots = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert [len(d.get_xdata()) for d in dots] == [3, 1]
    bars = [s for c in ax.collections if isinstance(c, LineCollection) for s in c.get_segments()]
    assert len(bars) == 4
    for b in bars:  # heading 0 (travel along +x): each gate's bar stands across it, along y
        assert b[0, 0] == pytest.approx(b[1, 0]) and b[0, 1] != pytest.approx(b[1, 1])
    with pytest.raises(ParamsError, match="expected a multiple of 4 gates, got 6"):
        plot.plot_gates(pos, [1, 1, 1, 1], ax=ax)


def test_counts_bars_are_the_numbers():
    fig, ax = _ax()
    plot.plot_counts({"valid envs": 12, "envs": 16, "gates per env": 7.5}, ax=ax)
    widths = [p.get_width() for p in ax.patches]
    assert widths == [12.0, 16.0, 7.5]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["valid envs", "envs", "gates per env"]
    with pytest.raises(ParamsError, match=r"counts\['x'\]: expected a finite number"):
        plot.plot_counts({"x": float("nan")}, ax=ax)
    with pytest.raises(ParamsError, match=r"counts\['y'\]: expected a finite number"):
        plot.plot_counts({"y": "3"}, ax=ax)


def test_points_one_colour_per_cloud():
    fig, ax = _ax()
    a = np.random.default_rng(0).uniform(-1, 1, (50, 2))
    plot.plot_points({"all": a, "kept": a[:10]}, ax=ax)
    offs = [c.get_offsets() for c in ax.collections]
    assert [len(o) for o in offs] == [50, 10]
    np.testing.assert_allclose(offs[1], a[:10])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["all (50)", "kept (10)"]


def test_cloud_marks_by_hand():
    # the largest first in the smallest marks; the rest in marks shrinking in drawing
    # order (each ring around the next); ties in the order given
    assert plot.cloud_marks([7]) == [(0, 1.8)]
    assert [(c, round(r, 9)) for c, r in plot.cloud_marks([10, 50])] == [(1, 1.2), (0, 2.6)]
    marks = plot.cloud_marks([2000, 700, 700])
    assert [c for c, _r in marks] == [0, 1, 2]
    assert [round(r, 9) for _c, r in marks] == [1.2, 2.6, 1.9]


def test_equal_clouds_are_drawn_as_rings_none_hidden():
    """The issue's case: "kept" and "again" hold the same points; "again" used to hide
    "kept". Now "kept" is drawn first in larger marks and "again" on top in smaller ones
    (a ring of kept around each again point), over the larger "points" cloud."""
    fig, ax = _ax()
    pts = np.random.default_rng(1).uniform(-1, 1, (200, 2))
    plot.plot_points({"points": pts, "kept": pts[:60], "again": pts[:60]}, ax=ax)
    drawn = sorted(ax.collections, key=lambda c: c.get_zorder())
    assert [c.get_label() for c in drawn] == ["points (200)", "kept (60)", "again (60)"]
    sizes = [float(c.get_sizes()[0]) for c in drawn]
    assert sizes[1] > sizes[2] > sizes[0]  # kept rings around again, both over points
    # every colour differs: each cloud can be told apart
    colors = [tuple(c.get_facecolor()[0]) for c in drawn]
    assert len(set(colors)) == 3


def _legend_outside(fig, ax) -> None:
    """The legend sits above the Axes (it hides no point), inside the figure, at least
    at the axis labels' size, on a white background."""
    fig.canvas.draw()
    leg = ax.get_legend()
    r = fig.canvas.get_renderer()
    lb, ab, fb = leg.get_window_extent(r), ax.get_window_extent(r), fig.bbox
    assert lb.y0 >= ab.y1 - 0.5, (lb, ab)
    assert lb.y1 <= fb.y1 + 0.5 and lb.x0 >= fb.x0 - 0.5 and lb.x1 <= fb.x1 + 0.5
    size = max(ax.xaxis.label.get_size(), ax.yaxis.label.get_size())
    assert size >= 10 and all(t.get_fontsize() >= size for t in leg.get_texts())
    assert to_rgba(leg.get_frame().get_facecolor())[:3] == (1.0, 1.0, 1.0)
    assert leg.get_frame().get_alpha() >= 0.9


def test_the_points_legend_is_above_the_points_at_the_label_size():
    fig, ax = _ax()
    pts = np.random.default_rng(2).uniform(-1, 1, (100, 2))
    plot.plot_points({"points": pts, "kept": pts[:30]}, ax=ax)
    _legend_outside(fig, ax)


def test_the_saved_picture_of_a_view_has_its_legend_outside_the_data():
    from procgen_nb.ui._render import tracks_figure
    from procgen_nb.ui.frame import Frame

    pts = np.random.default_rng(3).uniform(-1, 1, (100, 2))
    clouds = {"points": pts, "kept": pts[:40], "again": pts[:40], "more": pts[:5]}
    frame = Frame(tracks=None, valid=None, gates=None, counts={}, points=clouds)
    fig = tracks_figure(frame, max_envs=16)
    (ax,) = fig.axes
    _legend_outside(fig, ax)
    assert len(ax.get_legend().get_texts()) == 4
    frame = Frame(tracks=_circles(4, 16), valid=np.array([1, 0, 1, 1]), gates=None, counts={})
    fig = tracks_figure(frame, max_envs=16)
    (ax,) = fig.axes
    _legend_outside(fig, ax)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["valid", "invalid"]


def test_gate_numbers_are_written_for_every_gate():
    fig, ax = _ax()
    layout = plot.plot_tracks(_circles(2, 16), ax=ax)
    pos = np.zeros((2, 5, 2))
    pos[0, :3] = [[1, 0], [0, 1], [-1, 0]]
    pos[1, :5] = [[1.5, 0], [0, 1.5], [-1.5, 0], [0, -1.5], [1, 1]]
    order = np.array([[2, 0, 1, 3, 4], [0, 1, 2, 3, 4]])
    before = len(ax.texts)
    plot.plot_gates(pos.reshape(-1, 2), [3, 5], ax=ax, layout=layout, order=order.reshape(-1))
    # the texts after the tracks' labels, less the start arrows (empty annotations)
    numbers = [t for t in ax.texts[before:] if not isinstance(t, Annotation)]
    assert [t.get_text() for t in numbers] == ["0", "1", "2", "0", "1", "2", "3", "4"]
    # env 0's number 0 is beside its first gate in the order (slot 1, at (0, 1))
    want = layout.place(0, np.array([[0.0, 1.0]]))[0]
    x, y = numbers[0].get_position()
    assert abs(x - want[0] - 0.015) < 1e-9 and abs(y - want[1] - 0.015) < 1e-9


def test_png_size_and_a_new_axes_when_none_given():
    fig = plot.new_figure(3, 2, dpi=50)
    fig.add_subplot().plot([0, 1], [0, 1])
    png = plot.figure_png(fig)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", png[16:24])
    assert (w, h) == (150, 100)
    import matplotlib.pyplot as plt

    before = set(plt.get_fignums())
    layout = plot.plot_tracks(_circles(2, 8))
    ax = plt.gca()
    assert len(ax.collections[0].get_segments()) == 2 and layout.columns == 2
    for num in set(plt.get_fignums()) - before:
        plt.close(num)
    assert matplotlib.get_backend()


def test_draw_tracks_takes_the_axes_first():
    fig, ax = _ax()
    layout = plot.draw_tracks(ax, _circles(3, 8), [1, 0, 1])
    assert len(ax.collections[0].get_segments()) == 3 and layout.rows == 2


def test_show_draws_in_the_browser_and_carries_a_png():
    """``ui.show``: a TrackCanvas holding the tracks as float32 bytes, whose output also
    carries a PNG (a saved notebook shows the picture)."""
    import base64

    import numpy as np

    from procgen_nb.ui import show

    a = 2 * np.pi * np.arange(32) / 32
    xy = np.stack([np.stack([np.cos(a) * (1 + 0.1 * k), np.sin(a)], axis=-1) for k in range(5)])
    canvas = show({"xy": xy, "valid": [1, 0, 1, 1, 0]})
    got = np.frombuffer(canvas.tracks, dtype="<f4").reshape(5, 32, 2)
    np.testing.assert_array_equal(got, xy.astype(np.float32))
    data, _meta = canvas._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert base64.b64decode(data["image/png"]).startswith(b"\x89PNG")
    canvas.close()


def test_legible_legends_redraws_a_small_legend_at_the_label_size():
    from procgen_nb.ui.sweep_panel import legible_legends

    fig = plot.new_figure(4, 3)
    a, b = fig.subplots(1, 2)
    a.plot([0, 1], [0, 1], label="valid fraction")
    a.plot([0, 1], [1, 0], label="p90")
    a.set_xlabel("lobes", fontsize=11)
    a.legend(fontsize=4, framealpha=0.1)  # the ~5 px legend the issue found
    b.plot([0, 1], [0, 1])  # no legend: left without one
    legible_legends(fig)
    leg = a.get_legend()
    assert [t.get_text() for t in leg.get_texts()] == ["valid fraction", "p90"]
    assert all(t.get_fontsize() == 11 for t in leg.get_texts())  # the axis label's size
    assert leg.get_frame().get_alpha() >= 0.9
    assert to_rgba(leg.get_frame().get_facecolor())[:3] == (1.0, 1.0, 1.0)
    assert leg._loc == 0  # "best": where it hides the fewest points
    assert b.get_legend() is None
