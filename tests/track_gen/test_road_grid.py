"""``mesh.road_overlap_batch`` called directly on a large batch: the triangle grid is binned
on the host with the kernel's float32 arithmetic, so no road loses its hits to a rounding."""

from __future__ import annotations

import numpy as np
from test_validity_options import NO_DRIVE, road_overlap_reference

from procgen_nb import mesh
from procgen_nb.track_gen import presets


def test_road_overlap_batch_of_a_thousand_roads_matches_shapely():
    """1024 roads of width 0.05 need about 8x ``mesh.MAX_CELLS`` cells of their width, so
    the grid widens its cells and layers fall near cell edges. Binned in float64 while the
    kernel looks cells up in float32, 6 of these roads lost their overlap (the former
    ``_grid``); every road must agree with the shapely reference."""
    w, e = 0.05, 1024
    off = {"repair": False}  # the 0.1 hulls: the repaired ones rarely overlap
    xy = presets.track("hull", off, num_envs=e, num_points=32, seed=4, validity=NO_DRIVE)
    xy = xy.generate().numpy()["xy"]
    ext = xy.max(axis=(0, 1)) - xy.min(axis=(0, 1)) + 2.0 * w
    assert 4 * np.prod(np.ceil(ext / w) + 2) * e > mesh.MAX_CELLS  # the widened grid
    got = mesh.road_overlap_batch(xy, w)
    want = np.array([road_overlap_reference(t, w) for t in xy])
    assert 20 <= want.sum() < e  # both outcomes, many overlaps
    np.testing.assert_array_equal(got, want)
