"""The 0.1 ``warp_generate_hull`` sampling helpers (deprecated, silent).

- ``point_count_sample_inplace``: ``ops.sample_counts`` (stream ``hull.count``);
- ``point_sample_inplace``: ``ops.grid_cells`` and ``ops.sample_grid_points`` with full
  jitter (streams ``hull.cells``, ``hull.points``).

They read ``min_points``, ``max_points`` and ``grid`` from the config (its
``generator_params``, else a legacy attribute, else ``HullParams``' default), take
``ctx=None`` last (the ambient context) and sync after their launches in debug mode.
"""

from __future__ import annotations

from typing import Any

import warp as wp

from .. import ops
from ..exec import salt
from ..generators import HullParams
from ._knobs import knob
from ._legacy import ambient, debug_sync
from .warp_generate import GenScratch


def point_count_sample_inplace(
    seeds_wp: wp.array, config: Any, out_counts_wp: wp.array, ctx: Any = None
) -> None:
    """Writes each env's point count, uniform in ``[min_points, max_points]``."""
    ctx = ambient(ctx)
    lo, hi = knob(config, "min_points", HullParams), knob(config, "max_points", HullParams)
    ops.sample_counts(ctx, seeds_wp, salt("hull.count"), lo, hi, out_counts_wp)
    debug_sync(ctx)


def point_sample_inplace(
    seeds_wp: wp.array,
    config: Any,
    counts_wp: wp.array,
    scratch: GenScratch,
    out_xy_wp: wp.array,
    ctx: Any = None,
) -> None:
    """Writes ``counts[e]`` points, one in each of distinct cells of a ``grid`` lattice over
    ``[-scale, scale]^2`` (``[E*max_points]`` vec2, NaN past the count)."""
    ctx = ambient(ctx)
    g, mx = knob(config, "grid", HullParams), knob(config, "max_points", HullParams)
    scale = float(config.scale)
    ops.grid_cells(ctx, seeds_wp, salt("hull.cells"), counts_wp, g, scratch.perm, scratch.cells, mx)
    ops.sample_grid_points(
        ctx, seeds_wp, salt("hull.points"), scratch.cells, counts_wp, g, 1.0, scale, out_xy_wp, mx
    )
    debug_sync(ctx)


__all__ = ["point_count_sample_inplace", "point_sample_inplace"]
