"""Triangle meshes on the host: the ``Mesh`` type, boxes, spheres and volumes."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..errors import ParamsError, UploadError
from ._checks import _corners, _length, _mesh_arrays, _point3, _whole


@dataclasses.dataclass
class Mesh:
    """A triangle mesh: ``vertices`` (n, 3) float32 and ``faces`` (m, 3) int32.

    Attributes:
        vertices: (n, 3) corner positions, finite numbers (float32 for the meshes this
            package makes; a floating array keeps its dtype, integers become float32).
        faces: (m, 3) integer vertex ids in [0, n) of each triangle, counter-clockwise seen
            from outside for a closed mesh.

    Raises:
        ParamsError: vertices not (n, 3) finite numbers, or faces not (m, 3) integers in
            [0, n) (the message names the first bad value and where it is).

    Example:
        >>> from procgen_nb.mesh import Mesh
        >>> tri = Mesh.from_soup([[0, 0, 0], [1, 0, 0], [0, 1, 0]])
        >>> tri.faces.tolist(), tri.vertices.dtype.name
        ([[0, 1, 2]], 'float32')
        >>> tri.soup().shape  # three corners per face
        (3, 3)
    """

    vertices: np.ndarray
    faces: np.ndarray

    def __post_init__(self) -> None:
        self.vertices, self.faces = _mesh_arrays(self.vertices, self.faces, "Mesh")

    def soup(self) -> np.ndarray:
        """Returns the (3m, 3) float32 corners, three per face."""
        return np.ascontiguousarray(self.vertices[self.faces].reshape(-1, 3), np.float32)

    @classmethod
    def from_soup(cls, corners: np.ndarray) -> Mesh:
        """The mesh of a triangle soup: (3m, 3) corners (or (m, 3, 3)), one vertex each
        (nothing welded).

        Raises:
            ParamsError: corners of another shape, or not finite numbers.
        """
        c = _corners(corners, "Mesh.from_soup corners").astype(np.float32)
        return cls(c, np.arange(len(c), dtype=np.int32).reshape(-1, 3))


#: the most rings ``sphere_mesh`` lays (4n(n - 1) faces: 67 million at 4096)
SPHERE_MAX_N = 4096


def _soup(m: Any, name: str) -> np.ndarray:
    """A mesh_intersect input as (3m, 3) float32 corners, or an UploadError naming it."""
    if isinstance(m, Mesh):
        try:
            s = Mesh(m.vertices, m.faces).soup()  # its arrays may have changed since
        except ParamsError as e:
            raise UploadError(f"mesh_intersect {name}: {e}") from None
    else:
        s = _corners(m, f"mesh_intersect {name}", UploadError)
    with np.errstate(over="ignore"):  # past float32's range: refused below
        s = np.ascontiguousarray(s, np.float32)
    if not np.isfinite(s).all():
        raise UploadError(
            f"mesh_intersect {name}: expected corners finite in float32 (|x| < 3.4e38), got a "
            "NaN, an inf or a value past that range"
        )
    return s


def box_mesh(lo, hi) -> Mesh:
    """An axis-aligned box from corner ``lo`` to ``hi``, 12 triangles facing outward.

    Args:
        lo: the (x, y, z) corner with the smallest coordinates.
        hi: the opposite corner.

    Returns:
        A closed Mesh of 8 vertices and 12 faces.

    Raises:
        ParamsError: ``lo`` or ``hi`` not 3 finite numbers, or ``lo`` above ``hi`` on an
            axis (a box turned inside out).

    Example:
        >>> from procgen_nb.mesh import box_mesh
        >>> box = box_mesh((0, 0, 0), (2, 3, 4))
        >>> box.vertices.shape, box.faces.shape
        ((8, 3), (12, 3))
        >>> box.vertices.max(axis=0).tolist()
        [2.0, 3.0, 4.0]
    """
    lo32 = _point3(lo, "box_mesh lo").astype(np.float32)
    hi32 = _point3(hi, "box_mesh hi").astype(np.float32)
    if (lo32 > hi32).any():
        raise ParamsError(
            f"box_mesh lo, hi: expected lo <= hi on every axis, got lo={lo!r}, hi={hi!r}"
        )
    lo, hi = lo32, hi32
    v = np.array(
        [[(hi if (k >> j) & 1 else lo)[j] for j in range(3)] for k in range(8)], np.float32
    )
    f = [
        (0, 2, 1), (1, 2, 3),  # z lo
        (4, 5, 6), (5, 7, 6),  # z hi
        (0, 1, 4), (1, 5, 4),  # y lo
        (2, 6, 3), (3, 6, 7),  # y hi
        (0, 4, 2), (2, 4, 6),  # x lo
        (1, 3, 5), (3, 7, 5),  # x hi
    ]  # fmt: skip
    return Mesh(v, np.asarray(f, np.int32))


def sphere_mesh(center=(0.0, 0.0, 0.0), radius: float = 1.0, n: int = 16) -> Mesh:
    """A UV sphere: ``n`` rings of ``2n`` segments, closed, facing outward.

    Args:
        center: the (x, y, z) centre, 3 finite numbers.
        radius: the radius, a finite number > 0 (the vertices lie on the sphere, the faces
            inside it).
        n: the rings from pole to pole, an integer in [2, 4096].

    Returns:
        A closed Mesh of ``4n(n - 1)`` faces.

    Raises:
        ParamsError: ``center``, ``radius`` or ``n`` not as above.

    Example:
        >>> from procgen_nb.mesh import sphere_mesh
        >>> s = sphere_mesh(radius=2.0, n=4)
        >>> len(s.faces)  # two caps of 8 triangles and 2 bands of 16
        48
        >>> float(abs(s.vertices).max())
        2.0
    """
    n = _whole(n, "sphere_mesh n", 2, SPHERE_MAX_N)
    center = _point3(center, "sphere_mesh center")
    radius = _length(radius, "sphere_mesh radius")
    th = np.linspace(0, np.pi, n + 1)[1:-1]
    ph = np.linspace(0, 2 * np.pi, 2 * n, endpoint=False)
    ring = np.stack(
        [
            np.sin(th)[:, None] * np.cos(ph)[None],
            np.sin(th)[:, None] * np.sin(ph)[None],
            np.cos(th)[:, None] * np.ones_like(ph)[None],
        ],
        axis=-1,
    ).reshape(-1, 3)
    v = np.concatenate([[[0, 0, 1]], ring, [[0, 0, -1]]]) * radius + center
    m, k = 2 * n, len(th)
    faces = []
    for j in range(m):
        faces.append((0, 1 + j, 1 + (j + 1) % m))
        faces.append((len(v) - 1, 1 + (k - 1) * m + (j + 1) % m, 1 + (k - 1) * m + j))
    for r in range(k - 1):
        for j in range(m):
            a, b = 1 + r * m + j, 1 + r * m + (j + 1) % m
            c, d = a + m, b + m
            faces += [(a, c, b), (b, c, d)]
    return Mesh(v.astype(np.float32), np.asarray(faces, np.int32))


def mesh_volume(mesh: Mesh | np.ndarray) -> float:
    """The signed volume a closed, outward mesh holds (divergence theorem, float64).

    Args:
        mesh: a Mesh, or its (3m, 3) (or (m, 3, 3)) triangle corners, finite numbers.

    Returns:
        The volume; negative where the faces turn inward.

    Raises:
        ParamsError: corners of another shape, or not finite numbers.

    Example:
        >>> from procgen_nb.mesh import box_mesh, mesh_volume
        >>> mesh_volume(box_mesh((0, 0, 0), (2, 3, 4)))
        24.0
        >>> mesh_volume(box_mesh((0, 0, 0), (1, 1, 1)).soup()[::-1])  # turned inward
        -1.0
    """
    if isinstance(mesh, Mesh):
        c = mesh.soup().astype(np.float64)
    else:
        c = _corners(mesh, "mesh_volume mesh").astype(np.float64)
        if not np.isfinite(c).all():
            raise ParamsError(
                "mesh_volume mesh: expected finite triangle corners, got a NaN or an inf"
            )
    c = c.reshape(-1, 3, 3)
    return float(np.einsum("ij,ij->i", c[:, 0], np.cross(c[:, 1], c[:, 2])).sum() / 6.0)
