"""``mesh_intersect``: the cut curves and the booleans of two triangle meshes."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..columns import column_from_numpy
from ..device import resolve_device
from ..errors import CapacityError, ParamsError
from ..nodes import node
from ..params import Field
from ._checks import _length, _whole
from ._kernels import RETRI, UNIFY, _cuts, _pairs, _run
from ._shapes import Mesh, _soup

#: the most room (pieces per triangle) a call takes: the node's own bound on ``room``
ROOM_MAX = 4096
#: the most ``max_room`` a call takes (memory: 36 bytes x room per triangle)
MAX_ROOM_MAX = 1 << 16

MODES = ("cut", "union", "difference", "intersection")

#: intersect_retri's classes of a piece lying on the other surface
SAME, OPPOSITE = 2, 3


@dataclasses.dataclass
class IntersectResult:
    """What ``mesh_intersect(mode="cut")`` answers.

    Attributes:
        vertices: (v, 3) float32, the welded ends of the cuts.
        edges: (e, 2) int32, each cut segment of a length as two vertex ids, once (the
            rims of faces lying in one plane are cut curves too).
        pairs: (p, 2) int32, the crossing (triangle of A, triangle of B) pairs.

    Example:
        Two unit boxes overlapping by half: the cut curves lie on B's face x = 0.5 inside
        A and on A's face x = 1 inside B.

        >>> import numpy as np
        >>> from procgen_nb.mesh import box_mesh, mesh_intersect
        >>> a, b = box_mesh((0, 0, 0), (1, 1, 1)), box_mesh((0.5, 0, 0), (1.5, 1, 1))
        >>> cut = mesh_intersect(a, b)
        >>> np.unique(cut.vertices[:, 0]).tolist()
        [0.5, 1.0]
        >>> bool(cut.edges.max() < len(cut.vertices)), cut.pairs.shape[1]
        (True, 2)
    """

    vertices: np.ndarray
    edges: np.ndarray
    pairs: np.ndarray


@node(
    params={
        "mode": Field("cut", choices=MODES, doc="cut curves or a boolean"),
        "room": Field(64, bounds=(1, ROOM_MAX), soft=(8, 256), doc="most pieces per triangle"),
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
        ParamsError: an unknown mode, a room not an integer in [1, 4096] or a max_room not
            one in [1, 65536], a cell not a finite number > 0.
        UploadError: a mesh that is not (3m, 3) finite corners, or a Mesh whose arrays
            changed since into ones ``Mesh`` refuses.
        CapacityError: a triangle whose pieces did not fit in ``max_room``.

    Example:
        >>> from procgen_nb.mesh import box_mesh, mesh_intersect, mesh_volume
        >>> a, b = box_mesh((0, 0, 0), (1, 1, 1)), box_mesh((0.5, 0, 0), (1.5, 1, 1))
        >>> modes = ("union", "intersection", "difference")
        >>> [round(mesh_volume(mesh_intersect(a, b, mode=m)), 4) for m in modes]
        [1.5, 0.5, 0.5]
        >>> len(mesh_intersect(a, b).edges) > 0  # mode "cut": the curves where they cross
        True
    """
    if not isinstance(mode, str) or mode not in MODES:
        raise ParamsError(f"mesh_intersect mode: expected one of {list(MODES)}, got {mode!r}")
    room = _whole(room, "mesh_intersect room", 1, ROOM_MAX)
    max_room = _whole(max_room, "mesh_intersect max_room", 1, MAX_ROOM_MAX)
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
