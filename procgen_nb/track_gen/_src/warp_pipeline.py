"""The 0.1 ``warp_pipeline`` helpers of track plugins (``_pipe``; deprecated, silent).

Each keeps its 0.1 name and parameter list and delegates to the same kernels as the
``track_gen.ops`` op that replaces it, so its results are unchanged:

- ``_init()``, ``_sync(device)``: not needed any more (the facades initialise Warp; the ops
  never sync);
- ``_fill_i32_k`` (a kernel): ``ops.fill(ctx, arr, value)``; ``_ccw`` (a ``wp.func``):
  ``ops.funcs.ccw``;
- ``_arc_resample_inplace`` / ``_arc_resample_selected_inplace`` and their
  ``arc_length_resample_*`` twins: ``ops.arc_resample(..., active=)`` with an
  ``ops.ArcScratch`` wrapping the same four buffers;
- ``self_intersections_inplace``: ``ops.self_intersections``; ``turning_number_inplace``:
  ``ops.turning_number``;
- ``resample_uniform``: ``ops.resample_uniform`` (the helper allocates when ``seg_wp`` or
  ``s_wp`` is None; the op never does);
- ``resample_constant_spacing``: ``ops.resample_constant_spacing`` (the helper's allocating
  mode also reads the truncation flag back to warn; the op leaves it on the device).

They take ``ctx=None`` last (the ambient context when omitted) and sync after their
launches in debug mode (``PROCGEN_NB_DEBUG_SYNC``). ``GenScratch`` moved to
``warp_generate.GenScratch``: the old name warns ``DeprecationWarning``.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from typing import Any

import numpy as np
import warp as wp

from ...device import _init_warp
from .. import ops
from ..gates._warn import warn_at_caller
from ..ops import funcs
from ._legacy import ambient, debug_sync

_ccw = funcs.ccw
_cache: dict[tuple, Any] = {}
_cache_lock = threading.Lock()


@wp.kernel
def _fill_i32_k(arr: wp.array(dtype=wp.int32), value: wp.int32):
    arr[wp.tid()] = value


def _init() -> None:
    """Initialises Warp (idempotent; the facades already do it)."""
    _init_warp()


def _sync(device: Any) -> None:
    """Waits for ``device`` (a debug aid; the ops never sync)."""
    wp.synchronize_device(device)


def _cached(key: tuple, make: Any, owner: wp.array | None = None) -> Any:
    """The scratch cached under ``key``, made on its first use. A helper's writable scratch
    is keyed by the output it serves (``out.ptr``, the ``owner``) as well as its sizes: two
    threads (or two recordings replayed at once) writing different outputs never share one;
    it leaves the cache when its owner is freed (a recording that launched it keeps it)."""
    with _cache_lock:
        got = _cache.get(key)
        if got is None:
            got = _cache[key] = make()
            if owner is not None:
                weakref.finalize(owner, _forget, key, got)
        return got


def _forget(key: tuple, value: Any) -> None:
    """Drops ``key`` from the cache if it still holds ``value`` (a later owner at the same
    address may have made its own)."""
    with _cache_lock:
        if _cache.get(key) is value:
            del _cache[key]


def _arc_resample_inplace(
    src_wp: wp.array,
    dst_wp: wp.array,
    cum_wp: wp.array,
    seg_wp: wp.array,
    t_wp: wp.array,
    counts_wp: wp.array,
    num_envs: int,
    src_points: int,
    dst_points: int,
    ctx: Any = None,
) -> None:
    """Resamples every env's loop by arc length (``ops.arc_resample`` on all envs).

    Args:
        src_wp: ``[E*src_points]`` vec2. dst_wp: ``[E*dst_points]`` vec2.
        cum_wp, seg_wp, t_wp, counts_wp: the four ``ArcScratch`` buffers (``counts_wp``
            holds the points per env and doubles as the all-active mask).
        ctx: the launch context (ambient when None).
    """
    ctx = ambient(ctx)
    scratch = ops.ArcScratch(cum=cum_wp, seg=seg_wp, t=t_wp, counts=counts_wp)
    ops.arc_resample(ctx, src_wp, dst_wp, scratch, num_envs, src_points, dst_points)
    debug_sync(ctx)


def _arc_resample_selected_inplace(
    src_wp: wp.array,
    dst_wp: wp.array,
    cum_wp: wp.array,
    seg_wp: wp.array,
    t_wp: wp.array,
    counts_wp: wp.array,
    active_wp: wp.array,
    num_envs: int,
    src_points: int,
    dst_points: int,
    ctx: Any = None,
) -> None:
    """Resamples the envs ``active_wp`` names (``ops.arc_resample(..., active=)``)."""
    ctx = ambient(ctx)
    scratch = ops.ArcScratch(cum=cum_wp, seg=seg_wp, t=t_wp, counts=counts_wp)
    ops.arc_resample(
        ctx, src_wp, dst_wp, scratch, num_envs, src_points, dst_points, counts_wp, active_wp
    )
    debug_sync(ctx)


arc_length_resample_inplace = _arc_resample_inplace
arc_length_resample_selected_inplace = _arc_resample_selected_inplace


def self_intersections_inplace(
    xy_wp: wp.array, num_envs: int, num_points: int, out_wp: wp.array, ctx: Any = None
) -> None:
    """Writes each loop's crossing segment pairs into ``out_wp`` (``ops.self_intersections``;
    its grid is allocated on the first call for a size and an ``out_wp`` and reused by the
    calls writing that output, so calls writing other outputs may run in other threads)."""
    ctx = ambient(ctx)
    key = ("grid", str(xy_wp.device), int(num_envs), int(num_points), out_wp.ptr)
    grid = _cached(
        key, lambda: ops.GridScratch.alloc(str(xy_wp.device), num_envs, num_points), out_wp
    )
    ops.self_intersections(ctx, xy_wp, num_envs, num_points, out_wp, grid)
    debug_sync(ctx)


def turning_number_inplace(
    xy_wp: wp.array, num_envs: int, num_points: int, out_wp: wp.array, ctx: Any = None
) -> None:
    """Writes each loop's turning number into ``out_wp`` (``ops.turning_number``)."""
    ctx = ambient(ctx)
    ops.turning_number(ctx, xy_wp, num_envs, num_points, out_wp)
    debug_sync(ctx)


def resample_uniform(
    src_wp: wp.array,
    num_envs: int,
    src_points: int,
    dst_wp: wp.array,
    dst_points: int,
    seg_wp: wp.array | None = None,
    s_wp: wp.array | None = None,
    ctx: Any = None,
) -> None:
    """Resamples fixed-size loops evenly by arc length (``ops.resample_uniform``).

    Args:
        seg_wp: ``[E*dst_points]`` int32 scratch; s_wp: ``[E*(src_points+1)]`` float32
            scratch; each allocated here when None (pass them to stay allocation-free).
    """
    ctx = ambient(ctx)
    dev = str(src_wp.device)
    E = int(num_envs)
    if seg_wp is None:
        seg_wp = wp.zeros(E * dst_points, dtype=wp.int32, device=dev)
    if s_wp is None:
        s_wp = wp.zeros(E * (src_points + 1), dtype=float, device=dev)
    counts = _cached(
        ("counts", dev, E, int(src_points)),
        lambda: wp.full(E, int(src_points), dtype=wp.int32, device=dev),
    )
    t = _cached(  # written by the op: one per output (see _cached)
        ("t", dev, E, int(dst_points), dst_wp.ptr),
        lambda: wp.zeros(E * dst_points, dtype=float, device=dev),
        dst_wp,
    )
    ops.resample_uniform(ctx, src_wp, E, src_points, dst_wp, dst_points, seg_wp, s_wp, counts, t)
    debug_sync(ctx)


def resample_constant_spacing(
    src_wp: wp.array,
    num_envs: int,
    src_points: int,
    spacing: float,
    dst_wp: wp.array | None = None,
    max_points: int | None = None,
    out_count_wp: wp.array | None = None,
    truncated_wp: wp.array | None = None,
    ctx: Any = None,
) -> tuple[wp.array, wp.array, wp.array]:
    """Resamples each loop to points ``spacing`` apart (``ops.resample_constant_spacing``).

    With ``dst_wp`` None (the allocating mode) it allocates the outputs for ``max_points``
    (``4 * src_points`` when None), reads the truncation flags back and warns
    ``RuntimeWarning`` naming the envs that needed more points.

    Returns:
        ``(dst_wp, out_count_wp, truncated_wp)``.

    Raises:
        ValueError: a spacing that is not a positive number.
    """
    ctx = ambient(ctx)
    dev = str(src_wp.device)
    E = int(num_envs)
    allocating = dst_wp is None
    mp = int(max_points) if max_points is not None else 4 * int(src_points)
    if allocating:
        dst_wp = wp.zeros(E * mp, dtype=wp.vec2, device=dev)
    elif max_points is None:
        mp = dst_wp.shape[0] // E
    if out_count_wp is None:
        out_count_wp = wp.zeros(E, dtype=wp.int32, device=dev)
    if truncated_wp is None:
        truncated_wp = wp.zeros(E, dtype=wp.int32, device=dev)
    ops.resample_constant_spacing(
        ctx, src_wp, E, src_points, spacing, dst_wp, mp, out_count_wp, truncated_wp
    )
    debug_sync(ctx)
    if allocating:
        flags = np.asarray(ctx.readback(truncated_wp))
        if flags.any():
            warnings.warn(
                f"resample_constant_spacing: envs {np.flatnonzero(flags)[:8].tolist()} needed "
                f"more than max_points={mp} points and were truncated",
                RuntimeWarning,
                stacklevel=2,
            )
    return dst_wp, out_count_wp, truncated_wp


def __getattr__(name: str) -> Any:
    if name == "GenScratch":
        warn_at_caller(
            "track_gen._src.warp_pipeline.GenScratch moved to "
            "track_gen._src.warp_generate.GenScratch (the old name is removed in 1.0)"
        )
        from .warp_generate import GenScratch

        return GenScratch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "arc_length_resample_inplace",
    "arc_length_resample_selected_inplace",
    "resample_constant_spacing",
    "resample_uniform",
    "self_intersections_inplace",
    "turning_number_inplace",
]
