"""Every bad input of the mesh helpers is the package's own error naming the input, the
value and what is accepted (the Mesh constructor, the shapes, mesh_volume, the rooms of
mesh_intersect, the roads' centerlines)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from procgen_nb.errors import ParamsError, UploadError
from procgen_nb.mesh import (
    Mesh,
    box_mesh,
    mesh_intersect,
    mesh_volume,
    road_mesh,
    road_overlap,
    road_overlap_batch,
    sphere_mesh,
)

# a unit box by hand: 8 corners, 12 faces
V = np.array([[(k >> j) & 1 for j in range(3)] for k in range(8)], np.float32)
F = box_mesh((0, 0, 0), (1, 1, 1)).faces


@pytest.mark.parametrize(
    ("vertices", "faces", "message"),
    [
        (V, F + 100, "Mesh faces: expected (F, 3) integer vertex ids in [0, 8), got 100 at [0, 0]"),
        (V, F - 8, "Mesh faces: expected (F, 3) integer vertex ids in [0, 8), got -8 at [0, 0]"),
        (V, F.astype(float), "Mesh faces: expected (F, 3) integer vertex ids in [0, 8), got shape"),
        (V, np.zeros((2, 4), np.int32), "Mesh faces: expected (F, 3) integer vertex ids in [0, 8), "
         "got shape (2, 4), dtype int32"),
        (V, None, "Mesh faces: expected (F, 3) integer vertex ids in [0, 8), got None"),
        (None, F, "Mesh vertices: expected (V, 3) finite numbers, got None"),
        (V[:, :2], F, "Mesh vertices: expected (V, 3) finite numbers, got shape (8, 2), dtype "
         "float32"),
        (np.where(V == 1, np.nan, V)[::-1], F, "Mesh vertices: expected (V, 3) finite numbers, "
         "got nan at [0, 0]"),
        ([["a", "b", "c"]], [[0, 0, 0]], "Mesh vertices: expected (V, 3) finite numbers, got "
         "shape (1, 3), dtype <U1"),
    ],
)  # fmt: skip
def test_mesh_refuses_bad_arrays(vertices, faces, message):
    with pytest.raises(ParamsError, match=re.escape(message)):
        Mesh(vertices, faces)


def test_mesh_keeps_floating_vertices_and_takes_integer_ones_as_float32():
    m = Mesh(V.astype(np.float64), F)
    assert m.vertices.dtype == np.float64  # the export's metres keep their precision
    assert Mesh(V.astype(np.int64), F).vertices.dtype == np.float32
    empty = Mesh(np.zeros((0, 3)), [])
    assert empty.faces.shape == (0, 3) and empty.soup().shape == (0, 3)


def test_mesh_intersect_refuses_a_mesh_changed_after_construction():
    a = box_mesh((0, 0, 0), (1, 1, 1))
    a.faces = a.faces + 100
    with pytest.raises(UploadError, match=re.escape("mesh_intersect a: Mesh faces: expected")):
        mesh_intersect(a, box_mesh((0.5, 0, 0), (1.5, 1, 1)))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: box_mesh((0, 0), (1, 1)), "box_mesh lo: expected 3 finite numbers (x, y, z), "
         "got (0, 0)"),
        (lambda: box_mesh("a", "b"), "box_mesh lo: expected 3 finite numbers (x, y, z), got 'a'"),
        (lambda: box_mesh((0, 0, 0), (1, np.inf, 1)), "box_mesh hi: expected 3 finite numbers"),
        (lambda: box_mesh((1, 0, 0), (0, 1, 1)), "box_mesh lo, hi: expected lo <= hi on every "
         "axis, got lo=(1, 0, 0), hi=(0, 1, 1)"),
        (lambda: sphere_mesh(radius=-1), "sphere_mesh radius: expected a finite number > 0, "
         "got -1"),
        (lambda: sphere_mesh(radius=float("nan")), "sphere_mesh radius: expected a finite number "
         "> 0, got nan"),
        (lambda: sphere_mesh(radius="a"), "sphere_mesh radius: expected a finite number > 0, "
         "got 'a'"),
        (lambda: sphere_mesh(center=(0, 0)), "sphere_mesh center: expected 3 finite numbers (x, "
         "y, z), got (0, 0)"),
        (lambda: sphere_mesh(n=10**5), "sphere_mesh n: expected an integer in [2, 4096], got "
         "100000"),
        (lambda: mesh_volume("abc"), "mesh_volume mesh: expected a Mesh or (3m, 3) triangle "
         "corners, got str"),
        (lambda: mesh_volume(np.zeros((4, 3))), "mesh_volume mesh: expected a Mesh or (3m, 3) "
         "triangle corners, got shape (4, 3)"),
        (lambda: mesh_volume(np.full((3, 3), np.nan)), "mesh_volume mesh: expected finite "
         "triangle corners, got a NaN or an inf"),
        (lambda: Mesh.from_soup(np.zeros((4, 3))), "Mesh.from_soup corners: expected a Mesh or "
         "(3m, 3) triangle corners, got shape (4, 3)"),
    ],
)  # fmt: skip
def test_shape_helpers_name_each_bad_argument(call, message):
    with pytest.raises(ParamsError, match=re.escape(message)):
        call()


def test_mesh_volume_of_corners_by_hand():
    # the tetrahedron (0, e_x, e_y, e_z): volume 1/6, given (m, 3, 3) or (3m, 3)
    o, x, y, z = np.eye(4, 3, -1)
    tris = np.array([[o, y, x], [o, x, z], [o, z, y], [x, y, z]])
    assert mesh_volume(tris) == pytest.approx(1 / 6)
    assert mesh_volume(tris.reshape(-1, 3)) == pytest.approx(1 / 6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"room": 2**40}, "mesh_intersect room: expected an integer in [1, 4096], got 1099511627776"),
        ({"room": 0}, "mesh_intersect room: expected an integer in [1, 4096], got 0"),
        ({"max_room": 2**20}, "mesh_intersect max_room: expected an integer in [1, 65536], got "
         "1048576"),
    ],
)  # fmt: skip
def test_mesh_intersect_bounds_its_rooms(kwargs, message):
    a = box_mesh((0, 0, 0), (1, 1, 1))
    with pytest.raises(ParamsError, match=re.escape(message)):
        mesh_intersect(a, a, "union", **kwargs)


def _circle(n=20):
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([np.cos(t), np.sin(t)], 1) * 30


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda xy: road_overlap(xy, 1.0, other="x"), "road_overlap other: expected (n, 2) "
         "finite points, n >= 3, got 'x'"),
        (lambda xy: road_overlap(xy, 1.0, other=np.zeros((2, 2))), "road_overlap other: "
         "expected (n, 2) finite points, n >= 3, got shape (2, 2)"),
        (lambda xy: road_overlap(xy[:, :1], 1.0), "road_overlap xy: expected (n, 2) finite "
         "points, n >= 3, got shape (20, 1)"),
        (lambda xy: road_overlap(xy, 0.0), "road_overlap width: expected a finite number > 0, "
         "got 0.0"),
        (lambda xy: road_mesh(np.where(xy > 29, np.inf, xy), 1.0), "road_mesh xy: expected (n, "
         "2) finite points, n >= 3, got inf at [0, 0]"),
        (lambda xy: road_overlap_batch(np.full((2, 20, 2), np.nan), 1.0), "road_overlap_batch "
         "xy: expected (E, N, 2) finite centerlines, got nan at [0, 0, 0]"),
        (lambda xy: road_overlap_batch(xy[None], 1.0, other=np.stack([xy, xy])[None] * np.nan),
         "road_overlap_batch other: expected (E, N, 2) centerlines, N >= 3, got shape"),
        (lambda xy: road_overlap_batch(xy[None], 1.0, other=(xy * [1, np.nan])[None]),
         "road_overlap_batch other: expected (E, N, 2) finite centerlines, got nan at [0, 0, 1]"),
    ],
)  # fmt: skip
def test_road_helpers_name_their_own_inputs(call, message):
    with pytest.raises((ParamsError, UploadError), match=re.escape(message)):
        call(_circle())
