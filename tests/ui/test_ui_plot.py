"""procgen_nb.plot: tracks, gates, points and counts drawn on a given or new Axes."""

from __future__ import annotations

import struct

import matplotlib
import numpy as np
import pytest
import warp as wp
from matplotlib.collections import LineCollection
from matplotlib.colors import to_rgba

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
