"""``plot.plot_racing_line``: the segments drawn are the line's, placed in the cells of
``plot_tracks``, coloured by the mean speed of their ends (checked against NumPy), with a
colorbar and each env's lap time."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from procgen_nb import plot
from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import VehicleParams, presets, racing_line


def test_line_over_the_tracks_coloured_by_speed():
    gen = presets.track(num_envs=4, num_points=48, seed=2)
    tw = gen.config.validity.track_width
    line = racing_line(gen, vehicle=VehicleParams(v_max=40.0, width=1.0), scale=100.0)
    o = line.numpy()
    ax = Figure().add_subplot()
    layout = plot.plot_tracks(gen.result.xy, gen.result.valid, ax=ax)
    lc = plot.plot_racing_line(line, ax=ax, layout=layout, scale=100.0)
    segs = lc.get_segments()
    assert len(segs) == 4 * 48
    vals = np.asarray(lc.get_array())
    for e in range(4):
        p = (o["xy"][e].astype(np.float64) / 100.0 - layout.centers[e]) * layout.scale
        col, row = layout.cell_of(e)
        p += [col + 0.5, -(row + 0.5)]
        got = np.array(segs[e * 48 : (e + 1) * 48])
        np.testing.assert_allclose(got[:, 0], p, atol=1e-9)
        np.testing.assert_allclose(got[:, 1], np.roll(p, -1, 0), atol=1e-9)
        v = o["speed"][e].astype(np.float64)
        np.testing.assert_allclose(vals[e * 48 : (e + 1) * 48], (v + np.roll(v, -1)) / 2)
        # the line stays within the track: its offset is at most half the width less the car
        assert np.all(np.abs(o["offset"][e]) <= tw * 50.0 - 0.5 + 1e-3)
    texts = [t.get_text() for t in ax.texts]
    for e in range(4):
        assert f"{o['lap_time'][e]:.2f} s" in texts
    assert len(ax.figure.axes) == 2  # the colorbar
    assert ax.figure.axes[1].get_ylabel() == "speed (m/s)"
    lo, hi = lc.get_clim()
    assert lo == pytest.approx(vals.min()) and hi == pytest.approx(vals.max())


def test_own_grid_from_a_dict_without_colorbar():
    th = np.arange(32) * 2 * np.pi / 32
    xy = np.stack([50 * np.cos(th), 50 * np.sin(th)], -1)[None].repeat(2, 0)
    d = racing_line(xy, 3.0, 3.0, VehicleParams(width=1.0)).numpy()
    ax = Figure().add_subplot()
    lc = plot.plot_racing_line(d, ax=ax, colorbar=False, lap_time=False)
    assert len(lc.get_segments()) == 64 and len(ax.figure.axes) == 1 and not ax.texts
    assert ax.get_xlim() == (0.0, 2.0)


@pytest.mark.parametrize(
    ("line", "kwargs", "match"),
    [
        ("line", {}, r"line: expected a RacingLine or a dict of xy .*got str"),
        (
            {"xy": np.zeros((2, 8, 2)), "speed": np.zeros((2, 7))},
            {},
            r"got \[2, 8, 2\] and \[2, 7\]",
        ),
        ({"xy": np.zeros((8, 2)), "speed": np.zeros(8)}, {}, r"xy \[E, N, 2\] and speed"),
        (
            {"xy": np.zeros((2, 8, 2)), "speed": np.zeros((2, 8)), "lap_time": np.zeros(3)},
            {},
            r"line lap_time: expected \[2\], got \[3\]",
        ),
        ({"xy": np.zeros((1, 8, 2)), "speed": np.zeros((1, 8))}, {"scale": 0}, r"scale: expected"),
    ],
)
def test_bad_lines_are_refused(line, kwargs, match):
    with pytest.raises(ParamsError, match=match):
        plot.plot_racing_line(line, ax=Figure().add_subplot(), **kwargs)
