"""The 0.1 ``warp_generate`` sampling helpers and ``GenScratch`` (deprecated, silent).

- ``corner_count_sample_inplace``: ``ops.sample_counts`` (stream ``bezier.count``);
- ``corner_sample_inplace``: ``ops.grid_cells`` and ``ops.sample_grid_points`` (streams
  ``bezier.cells``, ``bezier.points``);
- ``ccw_sort_inplace``: ``ops.angle_sort`` (a count below 1 sorts nothing either way).

They read ``min_corners``, ``max_corners``, ``grid`` and ``jitter`` from the config (its
``generator_params``, else a legacy attribute, else ``BezierParams``' default), take
``ctx=None`` last (the ambient context) and sync after their launches in debug mode.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import warp as wp

from .. import ops
from ..exec import salt
from ..generators import BezierParams
from ._knobs import knob
from ._legacy import ambient, debug_sync


@dataclasses.dataclass
class GenScratch:
    """The sampling buffers of a corner generator.

    Attributes:
        counts: ``[E]`` int32. perm: ``[E*grid*grid]`` int32. cells: ``[E*max_count]``
            int32. points: ``[E*max_count]`` vec2.
    """

    counts: wp.array
    perm: wp.array
    cells: wp.array
    points: wp.array

    @classmethod
    def alloc(cls, config: Any, max_count: int, grid: int) -> GenScratch:
        """Allocates the buffers for ``config.num_envs`` envs on ``config.device``."""
        E, dev = int(config.num_envs), str(config.device) if config.device else None
        return cls(
            counts=wp.zeros(E, dtype=wp.int32, device=dev),
            perm=wp.zeros(E * grid * grid, dtype=wp.int32, device=dev),
            cells=wp.zeros(E * max_count, dtype=wp.int32, device=dev),
            points=wp.zeros(E * max_count, dtype=wp.vec2, device=dev),
        )


def corner_count_sample_inplace(
    seeds_wp: wp.array, config: Any, out_counts_wp: wp.array, ctx: Any = None
) -> None:
    """Writes each env's corner count, uniform in ``[min_corners, max_corners]``."""
    ctx = ambient(ctx)
    lo, hi = knob(config, "min_corners", BezierParams), knob(config, "max_corners", BezierParams)
    ops.sample_counts(ctx, seeds_wp, salt("bezier.count"), lo, hi, out_counts_wp)
    debug_sync(ctx)


def corner_sample_inplace(
    seeds_wp: wp.array,
    config: Any,
    counts_wp: wp.array,
    scratch: GenScratch,
    out_xy_wp: wp.array,
    ctx: Any = None,
) -> None:
    """Writes ``counts[e]`` jittered corners in distinct cells of a ``grid`` lattice over
    ``[-scale, scale]^2`` (``[E*max_corners]`` vec2, NaN past the count)."""
    ctx = ambient(ctx)
    g, mx = knob(config, "grid", BezierParams), knob(config, "max_corners", BezierParams)
    jitter, scale = knob(config, "jitter", BezierParams), float(config.scale)
    ops.grid_cells(
        ctx, seeds_wp, salt("bezier.cells"), counts_wp, g, scratch.perm, scratch.cells, mx
    )
    ops.sample_grid_points(
        ctx,
        seeds_wp,
        salt("bezier.points"),
        scratch.cells,
        counts_wp,
        g,
        jitter,
        scale,
        out_xy_wp,
        mx,
    )
    debug_sync(ctx)


def ccw_sort_inplace(xy_wp: wp.array, counts_wp: wp.array, max_count: int, ctx: Any = None) -> None:
    """Sorts each env's points counter-clockwise around their centroid, in place."""
    ctx = ambient(ctx)
    ops.angle_sort(ctx, xy_wp, counts_wp, max_count)
    debug_sync(ctx)


__all__ = [
    "GenScratch",
    "ccw_sort_inplace",
    "corner_count_sample_inplace",
    "corner_sample_inplace",
]
