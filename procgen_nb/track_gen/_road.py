"""The validity stage's road-overlap check (``ValidityParams(road_overlap=True)``).

The road of a track is its centerline's ribbon at ``track_width``, triangulated
(``procgen_nb.mesh.road_mesh``); it overlaps when two triangles of non-adjacent quads
overlap in the plane (``procgen_nb.mesh.road_overlap_batch``). That catches what the point
checks can miss between samples: a pinch where the two edges of the road meet while the
centerline does not cross. It runs on the host side of the mesh library (road meshes and the
triangle grid are built with NumPy, one intersect_pairs launch tests every road), so the
check is a HOST step after the recorded validity stage, launched through the call's
launch context (no second context by device name): the pipeline reads the centerlines
back each call, it no longer replays as one recording, and it does not split across threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import warp as wp

from ._result import TrackResult
from .ops import _kernels as _k
from .ops._validity import mark_rejected

# the reason bits of the validity stage (``REASONS``): the check's own, and not-closed (such
# a loop has no road to test)
from .ops._validity_kernels import NOT_CLOSED, ROAD_OVERLAP


def _overlaps(xy: np.ndarray, width: float, ctx: Any) -> np.ndarray:
    """``mesh.road_overlap_batch`` over chunks of envs small enough that its grid keeps cells
    of ``width`` (each road on its own layer of cells): past ``mesh.MAX_CELLS`` it widens the
    cells, which stays exact (the grid is binned in the kernel's float32) but puts more
    triangles in each cell to test."""
    from .. import mesh

    # every ribbon's extent, in float64: a tiny width makes the cells of one layer (4 deep)
    # overflow float32, and float64 to inf for the tiniest, where a chunk is one env
    lo, hi = xy.min(axis=(0, 1)).astype(np.float64), xy.max(axis=(0, 1)).astype(np.float64)
    with np.errstate(over="ignore"):
        per_road = 4.0 * float(np.prod(np.ceil((hi - lo + 2.0 * width) / width) + 2.0))
    chunk = max(1, int(mesh.MAX_CELLS // per_road))
    parts = [
        mesh.road_overlap_batch(xy[a : a + chunk], width, ctx=ctx) for a in range(0, len(xy), chunk)
    ]
    return np.concatenate(parts)


def road_check(
    res: TrackResult, active: wp.array, width: Callable[[], float]
) -> Callable[[Any], None]:
    """Returns the HOST step's ``run(ctx)``: reads the loops back, tests the road of each
    active closed env at ``width()`` (the current ``track_width``; 0 skips the test), sets
    ``ROAD_OVERLAP`` in the reason of each overlapping env, clears its ``valid`` and counts
    the valid envs again."""
    E, N = res.num_envs, res.num_points

    def run(ctx: Any) -> None:
        w = float(width())
        hit = np.zeros(E, np.int32)
        if w > 0.0:
            with ctx.host():  # the reads and the mesh library's (road_overlap_batch's)
                xy = ctx.readback(res.xy).reshape(E, N, 2)
                reason = ctx.readback(res.reason)
                act = ctx.readback(active)
                ok = (act != 0) & ((reason & NOT_CLOSED) == 0)
                if ok.any():
                    hit[ok] = _overlaps(xy[ok], w, ctx)  # through the call's context
        mark_rejected(
            ctx, ctx.upload(hit, wp.int32), E, ROAD_OVERLAP, res.valid, res.reason, active
        )
        ctx.launch(_k._count_k, 1, [res.valid, E, res.valid_count])

    return run


__all__ = ["ROAD_OVERLAP", "road_check"]
