"""Roads: the triangulated ribbon of a closed centerline and the overlaps of its triangles,
with itself or another road, one road or a batch at a time."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..columns import column_from_numpy
from ..errors import UploadError
from ..launch import through
from ._cells import _grid
from ._checks import _first_bad, _length, _whole
from ._kernels import PAIRS, _pairs, _run
from ._shapes import Mesh


@dataclasses.dataclass
class RoadOverlap:
    """What ``road_overlap`` answers: the overlapping triangle pairs, and their quads.

    Attributes:
        pairs: (k, 2) int32 triangle ids (of the road, of the other road or itself).

    Example:
        >>> import numpy as np
        >>> from procgen_nb.mesh import RoadOverlap
        >>> hit = RoadOverlap(np.array([[14, 30], [15, 30]], np.int32))
        >>> hit.overlaps, hit.quads.tolist()  # triangles 2i and 2i + 1 make quad i
        (True, [[7, 15]])
    """

    pairs: np.ndarray

    @property
    def quads(self) -> np.ndarray:
        """The (i, j) ribbon quads of each pair (triangle // 2), unique, sorted."""
        if len(self.pairs) == 0:
            return np.zeros((0, 2), np.int32)
        return np.unique(self.pairs // 2, axis=0).astype(np.int32)

    @property
    def overlaps(self) -> bool:
        """Whether any pair overlaps."""
        return len(self.pairs) > 0


def road_mesh(xy: Any, width: float) -> Mesh:
    """The road surface of a closed centerline: its ribbon at ``width``, triangulated.

    Args:
        xy: (n, 2) points of a closed centerline (the last joins the first), n >= 3.
        width: the road's full width (track_width).

    Returns:
        A Mesh in the z = 0 plane: vertex 2i is the left edge at point i, 2i + 1 the
        right; quad i (point i to i + 1) is triangles 2i and 2i + 1.

    Raises:
        UploadError: ``xy`` not (n, 2) finite points with n >= 3.
        ParamsError: a width that is not a finite number > 0.

    Example:
        >>> from procgen_nb.mesh import road_mesh
        >>> road = road_mesh([[0, 0], [4, 0], [4, 4], [0, 4]], 1.0)
        >>> road.vertices.shape, road.faces[:2].tolist()  # quad 0: vertices 0, 1, 3, 2
        ((8, 3), [[0, 1, 3], [0, 3, 2]])
        >>> float(abs(road.vertices[:, 2]).max())  # flat, in z = 0
        0.0
    """
    return _ribbon(_points(xy, "road_mesh xy"), _length(width, "road_mesh width"))


def _points(xy: Any, what: str) -> np.ndarray:
    """``xy`` as (n, 2) float64 points, or an UploadError naming ``what``."""
    want = f"{what}: expected (n, 2) finite points, n >= 3"
    try:
        p = np.asarray(xy)
    except (TypeError, ValueError) as e:
        raise UploadError(f"{want}, got {type(xy).__name__} ({e})") from None
    if p.dtype.kind not in "iuf":
        raise UploadError(f"{want}, got {xy!r:.80}")
    if p.ndim != 2 or p.shape[1] != 2 or len(p) < 3:
        raise UploadError(f"{want}, got shape {p.shape}")
    p = p.astype(np.float64)
    if not np.isfinite(p).all():
        raise UploadError(f"{want}, got {_first_bad(~np.isfinite(p), p)}")
    return p


def _ribbon(p: np.ndarray, width: float) -> Mesh:
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

    Raises:
        UploadError: a centerline that ``road_mesh`` refuses.
        ParamsError: a width not > 0, or ``near`` not an integer >= 0.

    Example:
        A figure of eight crosses itself (quads 7 and 15 of its 16); a circle does not,
        and overlaps a copy of itself moved by half the road's width:

        >>> import numpy as np
        >>> from procgen_nb.mesh import road_overlap
        >>> t = (np.arange(16) + 0.5) * 2 * np.pi / 16
        >>> circle = np.stack([np.cos(t), np.sin(t)], 1)
        >>> eight = np.stack([np.sin(t), np.sin(t) * np.cos(t)], 1)
        >>> road_overlap(eight, 0.1).quads.tolist()
        [[7, 15]]
        >>> road_overlap(circle, 0.1).overlaps
        False
        >>> road_overlap(circle, 0.1, other=circle + [0.05, 0]).overlaps
        True
    """
    p = _points(xy, "road_overlap xy")
    width = _length(width, "road_overlap width")
    q = None if other is None else _points(other, "road_overlap other")
    near = _whole(near, "road_overlap near", 0)
    with through(ctx, device, "road_overlap") as device:
        return _road_overlap(p, width, q, near, device)


def _road_overlap(
    xy: np.ndarray, width: float, other: np.ndarray | None, near: int, device: str
) -> RoadOverlap:
    sa = _ribbon(xy, width).soup()
    ca = column_from_numpy(sa, "Vec3", device)
    na = len(sa) // 3
    if other is None:
        sb, skip = sa, dict(self_pairs=1, group=2, period=na // 2, near=near)
    else:
        sb, skip = _ribbon(other, width).soup(), None
    _, _, pairs, total, _ = _pairs(ca, na, sb, device, test="tri2", cell=width, skip=skip)
    pa, pb = pairs["pair_a"].numpy()[:total], pairs["pair_b"].numpy()[:total]
    return RoadOverlap(np.stack([pa, pb], axis=1).astype(np.int32))


def _layers(p: np.ndarray, width: float, cell: float) -> np.ndarray:
    """The stacked road soups of (E, N, 2) centerlines, road e lifted to z = 4 e cells."""
    soups = np.stack([_ribbon(c, width).soup() for c in p])  # (E, 6N, 3)
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
            f"road_overlap_batch {name}: expected (E, N, 2) centerlines, N >= 3, got shape "
            f"{p.shape}"
        )
    if not np.isfinite(p).all():
        raise UploadError(
            f"road_overlap_batch {name}: expected (E, N, 2) finite centerlines, got "
            f"{_first_bad(~np.isfinite(p), p)} (road, point, axis)"
        )
    return p


def road_overlap_batch(
    xy: Any, width: float, other: Any = None, near: int = 1, device=None, ctx=None
) -> np.ndarray:
    """Whether each road of a batch overlaps itself (or road e of ``other``), in one launch.

    The E roads (``road_mesh`` of each closed centerline) are stacked into one soup, each
    lifted to its own layer of grid cells (road e at z = 4 e cells); pairs on different
    layers are not tested (their boxes share no z, even where the grid widens its cells
    past ``MAX_CELLS`` and layers share them), and TEST=tri2 compares only xy. Against
    itself, quads ``near`` or fewer apart along a loop are adjacent and not tested. Only
    the count stage runs: a road overlaps when any of its triangles has a hit.

    Args:
        xy: (E, N, 2) closed centerlines, N >= 3.
        width: the roads' width (track_width).
        other: None (each road against itself) or (E, M, 2): road e against other[e].
        near: the adjacency along the loop left out (against itself).
        device: the Warp device.
        ctx: the LaunchContext to launch through (None: ``device``'s default context).

    Returns:
        (E,) bool: True where road e overlaps itself (or other[e]).

    Raises:
        UploadError: ``xy`` or ``other`` not (E, N, 2) with N >= 3, or ``other`` with
            another number of roads.
        ParamsError: a width not > 0, or ``near`` not an integer >= 0.

    Example:
        >>> import numpy as np
        >>> from procgen_nb.mesh import road_overlap_batch
        >>> t = (np.arange(16) + 0.5) * 2 * np.pi / 16
        >>> circle = np.stack([np.cos(t), np.sin(t)], 1)
        >>> eight = np.stack([np.sin(t), np.sin(t) * np.cos(t)], 1)
        >>> road_overlap_batch(np.stack([circle, eight]), 0.1).tolist()
        [False, True]
        >>> far, near = circle + [3, 0], circle + [0.5, 0]
        >>> pairs = np.stack([circle, circle]), np.stack([far, near])
        >>> road_overlap_batch(pairs[0], 0.1, other=pairs[1]).tolist()
        [False, True]
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
