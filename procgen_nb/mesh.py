"""Meshes: triangle-triangle intersection, booleans and road overlap on the device.

``mesh_intersect(a, b, mode)`` (a node: ``mode`` and ``room`` are its params; it is
called like a function too) wires the kernels ``procgen/intersect_pairs`` (the
triangles of B each triangle of A crosses, through a uniform grid over B),
``procgen/intersect_cuts`` (the segment of each pair), ``procgen/intersect_unify`` (the
cut ends welded into vertices) and ``procgen/intersect_retri`` (the cut triangles split
along their cuts, each piece classified inside or outside the other closed mesh by its
ray parity). ``mode="cut"`` answers the cut curves (welded vertices and edges); the
booleans keep the pieces of A and B by side (``union``: both outside; ``intersection``:
both inside; ``difference``: A outside B and B inside A turned over).

Coplanar faces (boxes stacked or side by side, or flush with each other): the rim of
the overlap of two faces in one plane is where the faces of the other mesh out of that
plane touch it, and those pairs are cut like any other, so no piece straddles it; a
piece lying on the other surface is classified by its normal against the other's
there (the "same/opposite" rule of Carve, Cork and libigl): ``union`` and
``intersection`` keep the pieces of A whose normals agree with B's (once: B's copies
are dropped) and drop both where they oppose; ``difference`` keeps A's where they
oppose and drops both where they agree. On axis-aligned planes and float32 corners the
tests are exact; off the axes a corner within ``1e-6`` of the corners' reach from a
plane lies on it. The output is a soup with T-junctions (a piece's corner may lie on
a neighbour's edge): closed once each edge is split at the corners lying on it.

``road_mesh(xy, width)`` triangulates the ribbon of a closed centerline (two triangles
per segment); ``road_overlap`` lists the triangles of a road that overlap (in the xy
plane) non-adjacent triangles of the same road, or the triangles of another road.

What is read back: the grid over a mesh is built on the host from its corners (the
inputs are host arrays); the pair total is read once to size the pair list (a pair list
has no smaller bound than A times B); the result mesh is read back at the end. Between
those, every count stays on the device and each kernel runs over it as a live count.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from . import asset, ops
from .columns import column_from_numpy
from .device import resolve_device
from .errors import CapacityError, ParamsError, UploadError
from .launch import through
from .nodes import node
from .params import Field

__all__ = [
    "IntersectResult",
    "Mesh",
    "RoadOverlap",
    "box_mesh",
    "mesh_intersect",
    "mesh_volume",
    "road_mesh",
    "road_overlap",
    "road_overlap_batch",
    "sphere_mesh",
]

MODES = ("cut", "union", "difference", "intersection")
PAIRS = asset.resolve("procgen/intersect_pairs", "computeShader")
CUTS = asset.resolve("procgen/intersect_cuts", "computeShader")
UNIFY = asset.resolve("procgen/intersect_unify", "computeShader")
RETRI = asset.resolve("procgen/intersect_retri", "computeShader")
SCAN = asset.resolve("procgen/scan", "computeShader")
#: intersect_retri's classes of a piece lying on the other surface
SAME, OPPOSITE = 2, 3
#: the most grid cells the node allocates over a mesh
MAX_CELLS = 1 << 21


def _whole(value: Any, what: str, low: int) -> int:
    """``value`` as an int, or a ParamsError naming ``what``: a whole number >= ``low``."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer) or value < low:
        raise ParamsError(f"{what}: expected an integer >= {low}, got {value!r}")
    return int(value)


def _length(value: Any, what: str) -> float:
    """``value`` as a float, or a ParamsError naming ``what``: a finite number > 0."""
    real = isinstance(value, int | float | np.integer | np.floating)
    if isinstance(value, bool | np.bool_) or not real or not (np.isfinite(value) and value > 0):
        raise ParamsError(f"{what}: expected a finite number > 0, got {value!r}")
    return float(value)


@dataclasses.dataclass
class Mesh:
    """A triangle mesh: ``vertices`` (n, 3) float32 and ``faces`` (m, 3) int32."""

    vertices: np.ndarray
    faces: np.ndarray

    def soup(self) -> np.ndarray:
        """Returns the (3m, 3) float32 corners, three per face."""
        return np.ascontiguousarray(self.vertices[self.faces].reshape(-1, 3), np.float32)

    @classmethod
    def from_soup(cls, corners: np.ndarray) -> Mesh:
        corners = np.asarray(corners, np.float32).reshape(-1, 3)
        return cls(corners, np.arange(len(corners), dtype=np.int32).reshape(-1, 3))


@dataclasses.dataclass
class IntersectResult:
    """What ``mesh_intersect(mode="cut")`` answers.

    Attributes:
        vertices: (v, 3) float32, the welded ends of the cuts.
        edges: (e, 2) int32, each cut segment of a length as two vertex ids, once (the
            rims of faces lying in one plane are cut curves too).
        pairs: (p, 2) int32, the crossing (triangle of A, triangle of B) pairs.
    """

    vertices: np.ndarray
    edges: np.ndarray
    pairs: np.ndarray


@dataclasses.dataclass
class RoadOverlap:
    """What ``road_overlap`` answers: the overlapping triangle pairs, and their quads."""

    pairs: np.ndarray

    @property
    def quads(self) -> np.ndarray:
        """The (i, j) ribbon quads of each pair (triangle // 2), unique, sorted."""
        if len(self.pairs) == 0:
            return np.zeros((0, 2), np.int32)
        return np.unique(self.pairs // 2, axis=0).astype(np.int32)

    @property
    def overlaps(self) -> bool:
        return len(self.pairs) > 0


# -- host helpers --------------------------------------------------------------------------
def box_mesh(lo, hi) -> Mesh:
    """An axis-aligned box from corner ``lo`` to ``hi``, 12 triangles facing outward."""
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
    """A UV sphere: ``n`` rings of ``2n`` segments, closed, facing outward."""
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
    """The signed volume a closed, outward mesh holds (divergence theorem, float64)."""
    c = (mesh.soup() if isinstance(mesh, Mesh) else np.asarray(mesh)).astype(np.float64)
    c = c.reshape(-1, 3, 3)
    return float(np.einsum("ij,ij->i", c[:, 0], np.cross(c[:, 1], c[:, 2])).sum() / 6.0)


def _soup(m: Any, name: str) -> np.ndarray:
    if isinstance(m, Mesh):
        s = m.soup()
    else:
        try:
            with np.errstate(over="ignore"):  # past float32's range: refused below
                s = np.asarray(m, np.float32)
        except (TypeError, ValueError) as e:
            raise UploadError(
                f"mesh_intersect {name}: expected a Mesh or (3m, 3) triangle corners, got "
                f"{type(m).__name__} ({e})"
            ) from None
        if s.ndim == 3:
            s = s.reshape(-1, 3)
    if s.ndim != 2 or s.shape[1] != 3 or len(s) % 3:
        raise UploadError(
            f"mesh_intersect {name}: expected a Mesh or (3m, 3) triangle corners, got shape {s.shape}"
        )
    if not np.isfinite(s).all():
        raise UploadError(
            f"mesh_intersect {name}: expected corners finite in float32 (|x| < 3.4e38), got a "
            "NaN, an inf or a value past that range"
        )
    return np.ascontiguousarray(s, np.float32)


def _cells_of(x: np.ndarray, o: np.ndarray, cell: np.float32, dims: np.ndarray, side: int):
    """The grid cell of each float32 coordinate as the kernel's ``cell_of`` finds it, one
    cell wider on ``side`` (-1 low, 1 high) within 1e-4 of a cell's edge, so a rounding the
    two sides do differently still leaves the kernel's cell among a triangle's cells."""
    f = (x - o) / cell  # float32, as in the kernel
    c = np.where(f >= dims, dims - 1, np.where(f > 0, np.trunc(f), 0)).astype(np.int64)
    near = (f - np.floor(f) < 1e-4) if side < 0 else (np.ceil(f) - f < 1e-4)
    return np.clip(c + side * near, 0, dims - 1)


def _grid(soup: np.ndarray, cell: float | None = None):
    """Bins the triangles of a soup into a uniform grid; returns (words, uniforms)."""
    # the kernel reads float32 corners: every box is theirs (float64 where cells are sized)
    t32 = np.asarray(soup, np.float32).reshape(-1, 3, 3)
    n = len(t32)
    if n == 0:
        return np.zeros(2, np.int32), dict(origin=(0.0, 0.0, 0.0), cell=1.0, nx=1, ny=1, nz=1)
    lo32, hi32 = t32.min(axis=1), t32.max(axis=1)
    lo, hi = lo32.astype(np.float64), hi32.astype(np.float64)
    glo, ghi = lo.min(axis=0), hi.max(axis=0)
    span = np.maximum(ghi - glo, 0.0)
    if cell is None:
        cell = float(np.mean((hi - lo).max(axis=1))) * 1.5
    cell = max(float(cell), float(span.max()) * 1e-6, 1e-6)
    while True:
        dims = np.maximum(np.ceil(span / cell).astype(np.int64), 1)
        if int(np.prod(dims)) <= MAX_CELLS:
            break
        cell *= 1.5
    origin = glo - 0.25 * cell * (span == 0)  # a flat extent sits inside its one cell
    # the kernel takes origin and cell as float32 and finds a triangle's cells from its
    # float32 corners: bin with the same numbers and the same float32 arithmetic
    origin, cell = origin.astype(np.float32), np.float32(cell)
    c0 = _cells_of(lo32, origin, cell, dims, -1)
    c1 = _cells_of(hi32, origin, cell, dims, 1)
    ext = c1 - c0 + 1
    per = ext.prod(axis=1)
    owner = np.repeat(np.arange(n), per)
    local = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    ex, ey = ext[owner, 0], ext[owner, 1]
    cx = c0[owner, 0] + local % ex
    cy = c0[owner, 1] + (local // ex) % ey
    cz = c0[owner, 2] + local // (ex * ey)
    cid = (cz * dims[1] + cy) * dims[0] + cx
    order = np.argsort(cid, kind="stable")
    cells = int(np.prod(dims))
    start = np.searchsorted(cid[order], np.arange(cells + 1)) + cells + 1
    words = np.concatenate([start, owner[order]]).astype(np.int32)
    uni = dict(
        origin=tuple(float(x) for x in origin),
        cell=float(cell),
        nx=int(dims[0]),
        ny=int(dims[1]),
        nz=int(dims[2]),
    )
    return words, uni


def _run(kernel, spec, bind, domain, uniforms=None):
    return ops.device.kernel(
        kernel=kernel, specialize=spec, bind=bind, domain=domain, uniforms=uniforms
    )["columns"]


def _pairs(a, na: int, b_soup: np.ndarray, device: str, test="tri3", cell=None, skip=None):
    """Runs intersect_pairs (count, scan, write); returns (hits, start, pairs record, total,
    (grid over b, its uniforms))."""
    words, uni = _grid(b_soup, cell)
    b = column_from_numpy(b_soup, "Vec3", device)
    grid = column_from_numpy(words, "Int", device)
    kuni = {**uni, **(skip or dict(self_pairs=0, group=1, period=0, near=0))}
    bind = {"a": a, "b": b, "grid": grid}
    hits = _run(PAIRS, {"STAGE": "count", "TEST": test}, bind, na, kuni)["hits"]
    scanned = _run(SCAN, {"TYPE": "i32"}, {"src": hits}, na)
    total = int(scanned["total"].numpy()[0])  # one read: the pair list has no smaller bound
    out = _run(
        PAIRS,
        {"STAGE": "write", "TEST": test},
        {**bind, "start": scanned["dst"], "n": total},
        na,
        kuni,
    )
    return hits, scanned["dst"], out, total, (grid, uni)


def _cuts(pairs, a, b):
    dom = pairs["pair_a_count"]  # the live count: the pairs written
    return _run(
        CUTS, None, {"pair_a": pairs["pair_a"], "pair_b": pairs["pair_b"], "a": a, "b": b}, dom
    )


@node(
    params={
        "mode": Field("cut", choices=MODES, doc="cut curves or a boolean"),
        "room": Field(64, bounds=(1, 4096), soft=(8, 256), doc="most pieces per triangle"),
    }
)
def mesh_intersect(
    a: Any,
    b: Any,
    mode: str = "cut",
    room: int = 64,
    cell: float | None = None,
    device=None,
    max_room: int = 1024,
):
    """Intersects two triangle meshes on the device.

    Args:
        a: a Mesh, or (3m, 3) triangle corners (a soup).
        b: the same for B. For a boolean both are closed and face outward.
        mode: ``cut`` (the cut curves), ``union``, ``difference`` (A minus B) or
            ``intersection``.
        room: the pieces one triangle may be split into at first; a split where a
            triangle does not fit runs again with twice the room, up to ``max_room``.
        cell: the edge of the grid cells (default: 1.5 times the mean triangle extent).
        device: the Warp device (default: procgen_nb's).
        max_room: the most room a split is given (memory: 36 bytes x room per triangle).

    Returns:
        ``IntersectResult`` for ``cut``; a ``Mesh`` (a triangle soup) for a boolean.

    Raises:
        ParamsError: an unknown mode, a room or max_room below 1, a cell not > 0.
        UploadError: a mesh that is not (3m, 3) finite corners.
        CapacityError: a triangle whose pieces did not fit in ``max_room``.
    """
    if not isinstance(mode, str) or mode not in MODES:
        raise ParamsError(f"mesh_intersect mode: expected one of {list(MODES)}, got {mode!r}")
    room = _whole(room, "mesh_intersect room", 1)
    max_room = _whole(max_room, "mesh_intersect max_room", 1)
    cell = None if cell is None else _length(cell, "mesh_intersect cell")
    device = resolve_device(device)
    sa, sb = _soup(a, "a"), _soup(b, "b")
    na, nb = len(sa) // 3, len(sb) // 3
    ca = column_from_numpy(sa, "Vec3", device)
    cb = column_from_numpy(sb, "Vec3", device)
    hits_a, start_a, pairs_ab, total, grid_b = _pairs(ca, na, sb, device, cell=cell)
    cuts_ab = _cuts(pairs_ab, ca, cb)
    if mode == "cut":
        return _cut_result(pairs_ab, cuts_ab, total, device)
    hits_b, start_b, pairs_ba, _, grid_a = _pairs(cb, nb, sa, device, cell=cell)
    cuts_ba = _cuts(pairs_ba, cb, ca)
    most = max(room, max_room)
    keep_a = _pieces(ca, na, hits_a, start_a, cuts_ab, cb, grid_b, room, most, "a")
    keep_b = _pieces(cb, nb, hits_b, start_b, cuts_ba, ca, grid_a, room, most, "b")
    (pa, ia), (pb, ib) = keep_a, keep_b
    # a piece on the other surface (2: facing the same way, 3: the opposite way) is kept
    # once, from A: in a union or an intersection where the normals agree, in a
    # difference where they oppose
    if mode == "union":
        parts = [pa[(ia == 0) | (ia == SAME)], pb[ib == 0]]
    elif mode == "intersection":
        parts = [pa[(ia == 1) | (ia == SAME)], pb[ib == 1]]
    else:
        parts = [pa[(ia == 0) | (ia == OPPOSITE)], pb[ib == 1][:, ::-1]]
    return Mesh.from_soup(np.concatenate(parts).reshape(-1, 3))


def _cut_result(pairs, cuts, total: int, device: str) -> IntersectResult:
    size = 1 << max(4, int(2 * 2 * total).bit_length())
    table = column_from_numpy(np.full(size, -1, np.int32), "Int", device)
    dom = pairs["pair_a_count"]
    out = _run(
        UNIFY,
        None,
        {"p0": cuts["p0"], "p1": cuts["p1"], "table": table, "n": 2 * total},
        dom,
    )
    p0, p1 = cuts["p0"].numpy()[:total], cuts["p1"].numpy()[:total]
    nv = min(int(out["fresh_count"].words.numpy()[0]), 2 * total)
    slots = out["fresh"].numpy()[:nv]
    tab = out["table"].numpy()
    ends = np.concatenate([p0[:, None], p1[:, None]], axis=1).reshape(-1, 3)
    verts = ends[tab[slots]] if nv else np.zeros((0, 3), np.float32)
    index = np.full(size, -1, np.int64)
    index[slots] = np.arange(nv)
    id0, id1 = out["id0"].numpy()[:total], out["id1"].numpy()[:total]
    edges = np.stack([index[id0], index[id1]], axis=1) if total else np.zeros((0, 2))
    edges = edges[edges[:, 0] != edges[:, 1]].astype(np.int32)
    # each segment once: a segment along a shared edge, or on the rim of faces in one
    # plane, is the cut of several pairs
    _, first = np.unique(np.sort(edges, axis=1), axis=0, return_index=True)
    edges = edges[np.sort(first)]
    pa, pb = pairs["pair_a"].numpy()[:total], pairs["pair_b"].numpy()[:total]
    return IntersectResult(
        verts.astype(np.float32), edges, np.stack([pa, pb], axis=1).astype(np.int32)
    )


def _pieces(tris, nt: int, hits, start, cuts, other, other_grid, room: int, most: int, name):
    """Splits a mesh along its cuts (twice the room while a triangle does not fit, up to
    ``most``) and classifies the pieces; returns (pieces, inside)."""
    while True:
        bind = {
            "tris": tris,
            "start": start,
            "hits": hits,
            "p0": cuts["p0"],
            "p1": cuts["p1"],
            "n": 3 * room * nt,
        }
        split = _run(RETRI, {"STAGE": "split"}, bind, nt, {"room": room})
        count = split["piece_count"].numpy()
        if not (count < 0).any():
            break
        if 2 * room > most:
            t = int(np.flatnonzero(count < 0)[0])
            raise CapacityError(
                f"mesh_intersect room: expected the pieces of every triangle of {name} to fit "
                f"in {room} (max_room {most}), got triangle {t} past it"
            )
        room *= 2
    cls = _run(
        RETRI,
        {"STAGE": "classify"},
        {
            "pieces": split["pieces"],
            "piece_count": split["piece_count"],
            "other": other,
            "grid": other_grid[0],
            "m": room * nt,
        },
        nt,
        {"room": room, **other_grid[1]},
    )
    pieces = split["pieces"].numpy().reshape(nt, room, 3, 3)
    inside = cls["inside"].numpy().reshape(nt, room)
    mask = np.arange(room)[None, :] < count[:, None]
    return pieces[mask], inside[mask]


# -- roads ---------------------------------------------------------------------------------
def road_mesh(xy: Any, width: float) -> Mesh:
    """The road surface of a closed centerline: its ribbon at ``width``, triangulated.

    Args:
        xy: (n, 2) points of a closed centerline (the last joins the first), n >= 3.
        width: the road's full width (track_width).

    Returns:
        A Mesh in the z = 0 plane: vertex 2i is the left edge at point i, 2i + 1 the
        right; quad i (point i to i + 1) is triangles 2i and 2i + 1.
    """
    p = np.asarray(xy, np.float64)
    if p.ndim != 2 or p.shape[1] != 2 or len(p) < 3 or not np.isfinite(p).all():
        raise UploadError(f"road_mesh xy: expected (n, 2) finite points, n >= 3, got {p.shape}")
    width = _length(width, "road_mesh width")
    t = np.roll(p, -1, axis=0) - np.roll(p, 1, axis=0)  # central tangent
    t /= np.maximum(np.linalg.norm(t, axis=1, keepdims=True), 1e-30)
    nrm = np.stack([-t[:, 1], t[:, 0]], axis=1)
    left, right = p + nrm * (width / 2), p - nrm * (width / 2)
    v = np.zeros((2 * len(p), 3), np.float32)
    v[0::2, :2], v[1::2, :2] = left, right
    i = np.arange(len(p))
    j = (i + 1) % len(p)
    f = np.empty((2 * len(p), 3), np.int32)
    f[0::2] = np.stack([2 * i, 2 * i + 1, 2 * j + 1], axis=1)
    f[1::2] = np.stack([2 * i, 2 * j + 1, 2 * j], axis=1)
    return Mesh(v, f)


def road_overlap(
    xy: Any, width: float, other: Any = None, near: int = 1, device=None, ctx=None
) -> RoadOverlap:
    """The overlapping triangles of a road's surface, with itself or another road.

    Args:
        xy: (n, 2) closed centerline.
        width: the road's width.
        other: another road's (m, 2) closed centerline (same width), or None for the
            road against itself.
        near: against itself, quads ``near`` or fewer apart along the loop are adjacent
            and not tested (1: the quad and its two neighbours).
        device: the Warp device.
        ctx: the LaunchContext to launch through (None: ``device``'s default context).

    Returns:
        RoadOverlap: ``pairs`` (k, 2): triangle of this road, triangle of the other (or of
        itself, with the first below the second) whose xy interiors overlap.
    """
    near = _whole(near, "road_overlap near", 0)
    with through(ctx, device, "road_overlap") as device:
        return _road_overlap(xy, width, other, near, device)


def _road_overlap(xy: Any, width: float, other: Any, near: int, device: str) -> RoadOverlap:
    sa = road_mesh(xy, width).soup()
    ca = column_from_numpy(sa, "Vec3", device)
    na = len(sa) // 3
    if other is None:
        sb, skip = sa, dict(self_pairs=1, group=2, period=na // 2, near=near)
    else:
        sb, skip = road_mesh(other, width).soup(), None
    _, _, pairs, total, _ = _pairs(ca, na, sb, device, test="tri2", cell=width, skip=skip)
    pa, pb = pairs["pair_a"].numpy()[:total], pairs["pair_b"].numpy()[:total]
    return RoadOverlap(np.stack([pa, pb], axis=1).astype(np.int32))


def _layers(p: np.ndarray, width: float, cell: float) -> np.ndarray:
    """The stacked road soups of (E, N, 2) centerlines, road e lifted to z = 4 e cells."""
    soups = np.stack([road_mesh(c, width).soup() for c in p])  # (E, 6N, 3)
    soups[:, :, 2] = (4.0 * cell * np.arange(len(p)))[:, None]
    return soups.reshape(-1, 3)


def _centerlines(xy: Any, name: str) -> np.ndarray:
    try:
        p = np.asarray(xy, np.float64)
    except (TypeError, ValueError) as e:
        raise UploadError(
            f"road_overlap_batch {name}: expected (E, N, 2) centerlines, got {type(xy).__name__} "
            f"({e})"
        ) from None
    if p.ndim != 3 or p.shape[2] != 2 or p.shape[1] < 3:
        raise UploadError(
            f"road_overlap_batch {name}: expected (E, N, 2) centerlines, N >= 3, got {p.shape}"
        )
    return p


def road_overlap_batch(
    xy: Any, width: float, other: Any = None, near: int = 1, device=None, ctx=None
) -> np.ndarray:
    """Whether each road of a batch overlaps itself (or road e of ``other``), in one launch.

    The E roads (``road_mesh`` of each closed centerline) are stacked into one soup, each
    lifted to its own layer of grid cells (road e at z = 4 e cells); pairs on different
    layers are not tested (their boxes share no z, even where the grid widens its cells
    past ``MAX_CELLS`` and layers share them), and TEST=tri2 compares only xy. Against itself, quads ``near`` or
    fewer apart along a loop are adjacent and not tested. Only the count stage runs: a
    road overlaps when any of its triangles has a hit.

    Args:
        xy: (E, N, 2) closed centerlines, N >= 3.
        width: the roads' width (track_width).
        other: None (each road against itself) or (E, M, 2): road e against other[e].
        near: the adjacency along the loop left out (against itself).
        device: the Warp device.
        ctx: the LaunchContext to launch through (None: ``device``'s default context).

    Returns:
        (E,) bool: True where road e overlaps itself (or other[e]).
    """
    cell = _length(width, "road_overlap_batch width")
    near = _whole(near, "road_overlap_batch near", 0)
    with through(ctx, device, "road_overlap_batch") as device:
        return _road_overlap_batch(xy, width, other, near, device, cell)


def _road_overlap_batch(
    xy: Any, width: float, other: Any, near: int, device: str, cell: float
) -> np.ndarray:
    p = _centerlines(xy, "xy")
    e, n = p.shape[:2]
    q = None if other is None else _centerlines(other, "other")
    if q is not None and len(q) != e:
        raise UploadError(
            f"road_overlap_batch other: expected {e} centerlines (one per road of xy), got {len(q)}"
        )
    if e == 0:
        return np.zeros(0, bool)
    soup = _layers(p, width, cell)
    col = column_from_numpy(soup, "Vec3", device)
    if q is None:
        words, uni = _grid(soup, cell)
        uni.update(self_pairs=1, group=2, period=n, near=near)
        b = col
    else:
        sb = _layers(q, width, cell)
        words, uni = _grid(sb, cell)  # layer e of b at the z of layer e of a
        uni.update(self_pairs=0, group=1, period=0, near=0)
        b = column_from_numpy(sb, "Vec3", device)
    bind = {"a": col, "b": b, "grid": column_from_numpy(words, "Int", device)}
    hits = _run(PAIRS, {"STAGE": "count", "TEST": "tri2"}, bind, 2 * n * e, uni)["hits"]
    return hits.numpy().reshape(e, 2 * n).sum(axis=1) > 0
