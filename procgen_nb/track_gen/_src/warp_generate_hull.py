"""The 0.1 ``warp_generate_hull`` helpers and the hull generator (deprecated, silent).

``generate_hull_warp`` / ``hull_alloc_scratch`` are the hull generator's 0.1 module
functions, writing the bytes of the registered ``hull`` Stage. The sampling helpers:

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


# -- the built-in hull generator's 0.1 module functions (deprecated, silent; removed in 1.0) ---

from ..generators import Hull  # noqa: E402
from ..generators import _kernels as _gk  # noqa: E402
from ..generators.sampled import _need  # noqa: E402
from .warp_generate import (  # noqa: E402
    BuiltinScratch,
    _alloc_builtin,
    _begin_builtin,
    _finish_builtin,
)


def hull_alloc_scratch(config: Any) -> BuiltinScratch:
    """Allocates ``generate_hull_warp``'s buffers for ``config`` (call it once).

    Args:
        config: a ``TrackGenConfig`` (or a subclass carrying the 0.1 knobs ``min_points``,
            ``max_points``, ``grid``, ``displacement``); its ``generator_params`` (a
            ``HullParams``, a dict or None for the defaults) is resolved here.

    Returns:
        A ``BuiltinScratch`` (the ``hull`` Stage's buffers ``counts``, ``perm``, ``cells``,
        ``points``, ``hull``, ``ctrl``, ``ctrl_count``; the raw loop,
        ``raw = 2 * max_points * max(2, ceil(N / 6))``).

    Raises:
        GeneratorError: Params the ``hull`` Stage refuses (``min_points > max_points``,
            ``grid * grid < max_points``, a field out of its bounds) or a config without
            ``num_envs`` / ``num_points`` / ``scale``.
    """

    def make(E: int, raw: int, p: Any, dev: str | None) -> dict[str, wp.array]:
        mn, mx, g = p.min_points, p.max_points, p.grid
        _need(mn <= mx, "hull", "min_points <= max_points", (mn, mx))
        _need(g * g >= mx, "hull", "grid*grid >= max_points", (g, mx))
        return {
            "counts": wp.zeros(E, dtype=wp.int32, device=dev),
            "perm": wp.zeros(E * g * g, dtype=wp.int32, device=dev),
            "cells": wp.zeros(E * mx, dtype=wp.int32, device=dev),
            "points": wp.zeros(E * mx, dtype=wp.vec2, device=dev),
            "hull": wp.zeros(E * mx, dtype=wp.int32, device=dev),
            "ctrl": wp.zeros(E * 2 * mx, dtype=wp.vec2, device=dev),
            "ctrl_count": wp.zeros(E, dtype=wp.int32, device=dev),
        }

    return _alloc_builtin(Hull, config, make)


def generate_hull_warp(
    seeds_wp: wp.array,
    config: Any,
    out_centerline: wp.array,
    out_valid_wp: wp.array,
    scratch: BuiltinScratch,
    ctx: Any = None,
) -> None:
    """The ``hull`` generator as a 0.1 function: the convex hull of random points, a
    displaced midpoint on every edge, joined by a closed Catmull-Rom spline.

    It launches the ``hull`` Stage's own kernels and ops, with the same salts
    (``hull.count``, ``hull.cells``, ``hull.points``, ``hull.displace``): those kernels
    already take every Params field as a scalar argument, so separate scalar kernels would
    duplicate them wholesale; the helper packs the rest (the all-envs mask, the buffers)
    from ``scratch``. For the same seeds and Params it writes the Stage's bytes with
    ``repair=False`` (the 0.1 tracks: the field and its ``spacing`` and ``corner_radius`` are not
    read).

    Args:
        seeds_wp: ``[E]`` int32 base seeds (read-only).
        config: the config given to ``hull_alloc_scratch``; the Params used are the ones it
            resolved (``scratch.params``).
        out_centerline: ``[E * N]`` vec2 (the ``GeneratorSpec`` contract): the raw loop
            resampled by arc length to ``N = config.num_points`` points, as the pipeline
            resamples the Stage's; or ``[E * scratch.raw]`` vec2: the Stage's raw loop itself
            (``scratch.count[e]`` points, NaN after them).
        out_valid_wp: ``[E]`` int32, filled with 1, and 0 for an env whose hull has under
            3 vertices.
        scratch: from ``hull_alloc_scratch(config)``.
        ctx: the launch context to emit through (``LaunchContext`` on ``config.device``
            when None).

    Raises:
        GeneratorError: a scratch from another function, a config of another size, or
            arrays of the wrong dtype or size.
    """
    ctx, xy, resample = _begin_builtin(
        "hull", seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx
    )
    p, b = scratch.params, scratch.buffers
    E, raw, mx, g = scratch.num_envs, scratch.raw, p.max_points, p.grid
    kmax = 2 * mx
    counts, pts = b["counts"], b["points"]
    ops.sample_counts(ctx, seeds_wp, salt("hull.count"), p.min_points, mx, counts)
    ops.grid_cells(ctx, seeds_wp, salt("hull.cells"), counts, g, b["perm"], b["cells"], mx)
    ops.sample_grid_points(
        ctx, seeds_wp, salt("hull.points"), b["cells"], counts, g, 1.0, float(config.scale), pts, mx
    )
    ctx.launch(
        _gk._hull_k,
        E,
        [seeds_wp, scratch.active, salt("hull.displace"), pts, counts, mx, p.displacement]
        + [b["ctrl"], b["ctrl_count"], b["hull"], out_valid_wp],
    )
    ctx.launch(
        _gk._closed_cr_k,
        E * raw,
        [b["ctrl"], b["ctrl_count"], kmax, raw // kmax, scratch.active, raw, xy, scratch.count],
    )
    _finish_builtin(ctx, scratch, out_centerline, resample)


__all__ += ["generate_hull_warp", "hull_alloc_scratch"]
