"""Triangle meshes on the host: the ``Mesh`` type, boxes, spheres and volumes."""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import ParamsError


@dataclasses.dataclass
class Mesh:
    """A triangle mesh: ``vertices`` (n, 3) float32 and ``faces`` (m, 3) int32.

    Attributes:
        vertices: (n, 3) float32 corner positions.
        faces: (m, 3) int32 vertex ids of each triangle, counter-clockwise seen from
            outside for a closed mesh.

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

    def soup(self) -> np.ndarray:
        """Returns the (3m, 3) float32 corners, three per face."""
        return np.ascontiguousarray(self.vertices[self.faces].reshape(-1, 3), np.float32)

    @classmethod
    def from_soup(cls, corners: np.ndarray) -> Mesh:
        """The mesh of a triangle soup: (3m, 3) corners (or (m, 3, 3)), one vertex each
        (nothing welded)."""
        corners = np.asarray(corners, np.float32).reshape(-1, 3)
        return cls(corners, np.arange(len(corners), dtype=np.int32).reshape(-1, 3))


def box_mesh(lo, hi) -> Mesh:
    """An axis-aligned box from corner ``lo`` to ``hi``, 12 triangles facing outward.

    Args:
        lo: the (x, y, z) corner with the smallest coordinates.
        hi: the opposite corner.

    Returns:
        A closed Mesh of 8 vertices and 12 faces.

    Example:
        >>> from procgen_nb.mesh import box_mesh
        >>> box = box_mesh((0, 0, 0), (2, 3, 4))
        >>> box.vertices.shape, box.faces.shape
        ((8, 3), (12, 3))
        >>> box.vertices.max(axis=0).tolist()
        [2.0, 3.0, 4.0]
    """
    lo = np.asarray(lo, np.float32)
    hi = np.asarray(hi, np.float32)
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
        center: the (x, y, z) centre.
        radius: the radius (the vertices lie on the sphere, the faces inside it).
        n: the rings from pole to pole, an integer >= 2.

    Returns:
        A closed Mesh of ``4n(n - 1)`` faces.

    Raises:
        ParamsError: ``n`` not an integer >= 2.

    Example:
        >>> from procgen_nb.mesh import sphere_mesh
        >>> s = sphere_mesh(radius=2.0, n=4)
        >>> len(s.faces)  # two caps of 8 triangles and 2 bands of 16
        48
        >>> float(abs(s.vertices).max())
        2.0
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 2:
        raise ParamsError(f"sphere_mesh n: expected an integer >= 2, got {n!r}")
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
    v = np.concatenate([[[0, 0, 1]], ring, [[0, 0, -1]]]) * radius + np.asarray(center)
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
        mesh: a Mesh, or its (3m, 3) triangle corners.

    Returns:
        The volume; negative where the faces turn inward.

    Example:
        >>> from procgen_nb.mesh import box_mesh, mesh_volume
        >>> mesh_volume(box_mesh((0, 0, 0), (2, 3, 4)))
        24.0
        >>> mesh_volume(box_mesh((0, 0, 0), (1, 1, 1)).soup()[::-1])  # turned inward
        -1.0
    """
    c = (mesh.soup() if isinstance(mesh, Mesh) else np.asarray(mesh)).astype(np.float64)
    c = c.reshape(-1, 3, 3)
    return float(np.einsum("ij,ij->i", c[:, 0], np.cross(c[:, 1], c[:, 2])).sum() / 6.0)
