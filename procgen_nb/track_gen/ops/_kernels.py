"""The Warp kernels of the ops library and of the pipeline's own stages, by what they do.

- ``_seed_kernels``: each env's base seed, the active mask of a call, the valid count;
- ``_resample_kernels``: arc-length and constant-spacing resampling, masked copies;
- ``_sample_kernels``: random counts, grid cells, jittered points, the angle sort;
- ``_crossing_funcs``, ``_validity_funcs`` and ``_validity_kernels``: the crossing,
  turning-number and clearance checks, and the reason bits.

This module gathers them under the names the ops, the pipeline and the gates launch
(``_k._seeds_k``). Every kernel that reads a per-env ``active`` mask leaves inactive envs
untouched, so masked regeneration replays the same recording.
"""

from __future__ import annotations

from ._resample_kernels import (
    _arc_resample_k,
    _attr_resample_k,
    _constant_spacing_k,
    _masked_copy_f_k,
    _masked_copy_k,
)
from ._sample_kernels import (
    _angle_sort_k,
    _grid_cells_k,
    _sample_counts_k,
    _sample_grid_points_k,
)
from ._seed_kernels import _ATTEMPT, _GOLDEN, _all_active_k, _count_k, _seeds_k, _select_k
from ._validity_funcs import _bounds, _far_offset, _too_close, _turn_step, _turning
from ._validity_kernels import (
    CLEARANCE,
    NOT_CLOSED,
    RADIUS,
    REJECTED,
    SELF_INTERSECTING,
    TURNING,
    _is_simple_k,
    _self_intersections_k,
    _turning_number_k,
    _validity_k,
)

__all__ = [
    "CLEARANCE",
    "NOT_CLOSED",
    "RADIUS",
    "REJECTED",
    "SELF_INTERSECTING",
    "TURNING",
    "_ATTEMPT",
    "_GOLDEN",
    "_all_active_k",
    "_angle_sort_k",
    "_arc_resample_k",
    "_attr_resample_k",
    "_bounds",
    "_constant_spacing_k",
    "_count_k",
    "_far_offset",
    "_grid_cells_k",
    "_masked_copy_f_k",
    "_masked_copy_k",
    "_sample_counts_k",
    "_sample_grid_points_k",
    "_seeds_k",
    "_select_k",
    "_is_simple_k",
    "_self_intersections_k",
    "_too_close",
    "_turn_step",
    "_turning",
    "_turning_number_k",
    "_validity_k",
]
