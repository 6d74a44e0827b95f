"""The ops library: device work a generator is built from.

Every op takes the call's launch context ``ctx`` first, emits its work through it, and
never allocates or synchronizes: buffers come from the caller (``b.scratch`` in a Stage's
``build``, ``alloc_scratch`` in a ``GeneratorSpec``), and results stay on the device.
Layout: ``E`` envs, env ``e``'s points at ``e * stride + i``.

Random streams (:ref:`ops-rng-keying`): an op that samples takes the env seeds and a
``salt``; the stream of env ``e`` is ``funcs.stream_key(seeds[e], salt)``. Use
``b.salt("<stream>")`` for the salt so two streams of one generator never correlate.
"""

from __future__ import annotations

import math
from typing import Any

import warp as wp

from ...errors import ParamsError
from . import _kernels as _k
from . import funcs
from ._checks import BUILD, need_array, need_masks, need_size
from ._scratch import ArcScratch, GridScratch, _check_arc
from ._validity import check_tracks, is_simple, self_intersections, turning_number


def fill(ctx: Any, arr: wp.array, value: Any) -> None:
    """Fills ``arr`` with ``value`` through ``ctx`` (the replacement of ``_pipe._fill_i32_k``).

    Args:
        ctx: the call's launch context.
        arr: any device array.
        value: a scalar (or vector) of the array's dtype.

    Raises:
        ParamsError: ``arr`` is not a ``wp.array`` (None included).

    Example:
        >>> import warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> ctx = LaunchContext("cpu")
        >>> a = wp.zeros(4, dtype=wp.int32, device="cpu")
        >>> ops.fill(ctx, a, 7)
        >>> a.numpy().tolist()
        [7, 7, 7, 7]
    """
    if not isinstance(arr, wp.array):
        got = "None" if arr is None else type(arr).__name__
        raise ParamsError(f"ops.fill arr: expected a wp.array ({BUILD}), got {got}")
    ctx.fill(arr, value)


def _sizes(num_envs: Any, raw: Any, num_points: Any) -> tuple[tuple[str, Any], ...]:
    return (("num_envs", num_envs), ("raw", raw), ("num_points", num_points))


def arc_resample(
    ctx: Any,
    src: wp.array,
    dst: wp.array,
    scratch: ArcScratch,
    num_envs: int,
    raw: int,
    num_points: int,
    counts: wp.array | None = None,
    active: wp.array | None = None,
) -> None:
    """Resamples each closed loop to ``num_points`` points evenly spaced along its length.

    Args:
        ctx: the launch context.
        src: ``[E*raw]`` vec2 loops (env ``e``'s first ``counts[e]`` points are used).
        dst: ``[E*num_points]`` vec2 output; a loop with fewer than 3 points, a non-finite
            point or zero length gives NaN points.
        scratch: an ``ArcScratch`` sized for ``E``, ``raw`` and ``num_points``.
        num_envs, raw, num_points: the sizes.
        counts: ``[E]`` int32 points per env (``raw`` for every env when None).
        active: ``[E]`` int32 mask; envs with 0 are left untouched (all when None).

    Raises:
        ParamsError: a scratch that is not an ``ArcScratch`` for these sizes (None
            included), or an array of the wrong dtype or too short.

    Example:
        The unit square's four corners, resampled to eight points half a side apart:

        >>> import numpy as np, warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> sq = wp.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=wp.vec2, device="cpu")
        >>> dst = wp.zeros(8, dtype=wp.vec2, device="cpu")
        >>> arc = ops.ArcScratch.alloc("cpu", 1, 4, 8)
        >>> ops.arc_resample(LaunchContext("cpu"), sq, dst, arc, 1, 4, 8)
        >>> dst.numpy().tolist()
        [[0.0, 0.0], [0.5, 0.0], [1.0, 0.0], [1.0, 0.5], [1.0, 1.0], [0.5, 1.0], [0.0, 1.0], [0.0, 0.5]]
    """
    op = "arc_resample"
    E, raw, num_points = (need_size(op, n, v) for n, v in _sizes(num_envs, raw, num_points))
    scratch = _check_arc(op, scratch, E, raw, num_points, xy=True)
    need_array(op, "src", src, wp.vec2, E * raw, f"[num_envs*raw] vec2; {BUILD}")
    need_array(op, "dst", dst, wp.vec2, E * num_points, f"[num_envs*num_points] vec2; {BUILD}")
    need_masks(op, E, counts=counts, active=active)
    counts = scratch.counts if counts is None else counts
    ctx.launch(
        _k._arc_resample_k,
        E,
        [
            src,
            counts,
            raw,
            dst,
            num_points,
            scratch.counts if active is None else active,
            scratch.cum,
            scratch.seg,
            scratch.t,
        ],
    )


def arc_resample_attribute(
    ctx: Any,
    src: wp.array,
    dst: wp.array,
    scratch: ArcScratch,
    num_envs: int,
    raw: int,
    num_points: int,
    counts: wp.array | None = None,
    active: wp.array | None = None,
) -> None:
    """Resamples a float32 per-point attribute the way the last ``arc_resample`` moved xy.

    Args:
        src: ``[E*raw]`` float32 values; dst: ``[E*num_points]`` float32 output.
        counts, active: the arrays given to ``arc_resample``.

    Raises:
        ParamsError: as ``arc_resample``.

    Example:
        Each corner's index, carried along the resampling above (the closing side runs from 3
        back to 0):

        >>> import numpy as np, warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> ctx = LaunchContext("cpu")
        >>> sq = wp.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=wp.vec2, device="cpu")
        >>> arc = ops.ArcScratch.alloc("cpu", 1, 4, 8)
        >>> ops.arc_resample(ctx, sq, wp.zeros(8, dtype=wp.vec2, device="cpu"), arc, 1, 4, 8)
        >>> u = wp.array([0.0, 1.0, 2.0, 3.0], dtype=float, device="cpu")
        >>> u8 = wp.zeros(8, dtype=float, device="cpu")
        >>> ops.arc_resample_attribute(ctx, u, u8, arc, 1, 4, 8)
        >>> u8.numpy().tolist()
        [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 1.5]
    """
    op = "arc_resample_attribute"
    E, raw, num_points = (need_size(op, n, v) for n, v in _sizes(num_envs, raw, num_points))
    scratch = _check_arc(op, scratch, E, raw, num_points, xy=False)
    need_array(op, "src", src, wp.float32, E * raw, f"[num_envs*raw] float32; {BUILD}")
    need_array(op, "dst", dst, wp.float32, E * num_points, f"[num_envs*num_points]; {BUILD}")
    need_masks(op, E, counts=counts, active=active)
    ctx.launch(
        _k._attr_resample_k,
        E * num_points,
        [
            src,
            scratch.counts if counts is None else counts,
            raw,
            dst,
            num_points,
            scratch.counts if active is None else active,
            scratch.seg,
            scratch.t,
        ],
    )


def resample_uniform(
    ctx: Any,
    src: wp.array,
    num_envs: int,
    src_points: int,
    dst: wp.array,
    dst_points: int,
    seg_wp: wp.array,
    s_wp: wp.array,
    counts: wp.array,
    t_wp: wp.array,
) -> None:
    """Resamples fixed-size loops evenly by arc length (``_pipe.resample_uniform`` without
    its allocating mode).

    Args:
        src: ``[E*src_points]`` vec2; dst: ``[E*dst_points]`` vec2.
        seg_wp: ``[E*dst_points]`` int32 scratch; s_wp: ``[E*(src_points+1)]`` float32 scratch;
        t_wp: ``[E*dst_points]`` float32 scratch.
        counts: ``[E]`` int32 holding ``src_points`` for every env (it doubles as the
            all-active mask when every value is non-zero).

    ``ops.ArcScratch.alloc(device, num_envs, src_points, dst_points)`` allocates the four
    scratch buffers: ``seg_wp=.seg``, ``s_wp=.cum``, ``counts=.counts``, ``t_wp=.t``.

    Raises:
        ParamsError: a scratch buffer that is None (the op never allocates), of the wrong
            dtype or too short; the message names the helper that allocates it.

    Example:
        >>> import numpy as np, warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> sq = wp.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=wp.vec2, device="cpu")
        >>> dst = wp.zeros(8, dtype=wp.vec2, device="cpu")
        >>> arc = ops.ArcScratch.alloc("cpu", 1, 4, 8)
        >>> ops.fill(LaunchContext("cpu"), arc.counts, 4)
        >>> ops.resample_uniform(LaunchContext("cpu"), sq, 1, 4, dst, 8, arc.seg, arc.cum, arc.counts, arc.t)
        >>> dst.numpy()[:3].tolist()
        [[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]]
    """
    op = "resample_uniform"
    E, sp, dp = (
        need_size(op, n, v)
        for n, v in (("num_envs", num_envs), ("src_points", src_points), ("dst_points", dst_points))
    )
    arc = "ops.ArcScratch.alloc(device, num_envs, src_points, dst_points).{} allocates it"
    need_array(op, "src", src, wp.vec2, E * sp, f"[num_envs*src_points] vec2; {BUILD}")
    need_array(op, "dst", dst, wp.vec2, E * dp, f"[num_envs*dst_points] vec2; {BUILD}")
    need_array(op, "seg_wp", seg_wp, wp.int32, E * dp, arc.format("seg"))
    need_array(op, "s_wp", s_wp, wp.float32, E * (sp + 1), arc.format("cum"))
    need_array(op, "counts", counts, wp.int32, E, arc.format("counts"))
    need_array(op, "t_wp", t_wp, wp.float32, E * dp, arc.format("t"))
    ctx.launch(
        _k._arc_resample_k,
        E,
        [src, counts, sp, dst, dp, counts, s_wp, seg_wp, t_wp],
    )


def resample_constant_spacing(
    ctx: Any,
    src: wp.array,
    num_envs: int,
    src_points: int,
    spacing: float,
    dst: wp.array,
    max_points: int,
    out_count: wp.array,
    truncated: wp.array,
) -> None:
    """Resamples each loop to points ``spacing`` apart (rounded so the loop closes evenly).

    Args:
        src: ``[E*src_points]`` vec2 loops.
        spacing: the wanted distance between points (> 0).
        dst: ``[E*max_points]`` vec2; slots past an env's count hold NaN.
        out_count: ``[E]`` int32 points written per env.
        truncated: ``[E]`` int32 set to 1 where the loop needed more than ``max_points``
            points (left on the device: read it when you need it).
    Raises:
        ParamsError: a spacing that is not a positive finite number, or an array that is
            None, of the wrong dtype or too short.

    Example:
        The unit square (perimeter 4) at a spacing of 0.5 closes evenly with 8 points:

        >>> import numpy as np, warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> sq = wp.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=wp.vec2, device="cpu")
        >>> dst = wp.zeros(16, dtype=wp.vec2, device="cpu")
        >>> count = wp.zeros(1, dtype=wp.int32, device="cpu")
        >>> truncated = wp.zeros(1, dtype=wp.int32, device="cpu")
        >>> ops.resample_constant_spacing(LaunchContext("cpu"), sq, 1, 4, 0.5, dst, 16, count, truncated)
        >>> count.numpy().tolist(), truncated.numpy().tolist()
        ([8], [0])
        >>> dst.numpy()[:3].tolist(), bool(np.isnan(dst.numpy()[8:]).all())
        ([[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]], True)
    """
    op = "resample_constant_spacing"
    if not (
        isinstance(spacing, int | float)
        and not isinstance(spacing, bool)
        and math.isfinite(spacing)
        and spacing > 0
    ):
        raise ParamsError(
            f"resample_constant_spacing spacing: expected a positive number, got {spacing!r}"
        )
    E = need_size(op, "num_envs", num_envs)
    sp = need_size(op, "src_points", src_points)
    mp = need_size(op, "max_points", max_points)
    need_array(op, "src", src, wp.vec2, E * sp, f"[num_envs*src_points] vec2; {BUILD}")
    need_array(op, "dst", dst, wp.vec2, E * mp, f"[num_envs*max_points] vec2; {BUILD}")
    need_array(op, "out_count", out_count, wp.int32, E, f"[num_envs] int32; {BUILD}")
    need_array(op, "truncated", truncated, wp.int32, E, f"[num_envs] int32; {BUILD}")
    ctx.launch(
        _k._constant_spacing_k,
        E,
        [src, sp, float(spacing), dst, mp, out_count, truncated],
    )


def sample_counts(ctx: Any, seeds: wp.array, salt: int, lo: int, hi: int, out: wp.array) -> None:
    """Writes one integer per env, uniform in ``[lo, hi]``, from the stream ``salt``.

    Raises:
        ParamsError: ``lo > hi``, or ``seeds`` / ``out`` None, not int32 or shorter than E.

    Example:
        >>> import warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> seeds = wp.array([1, 2, 3], dtype=wp.int32, device="cpu")
        >>> out = wp.zeros(3, dtype=wp.int32, device="cpu")
        >>> ops.sample_counts(LaunchContext("cpu"), seeds, 17, 3, 6, out)
        >>> counts = out.numpy().tolist()
        >>> counts  # the same seeds and salt give the same counts, run after run
        [3, 3, 6]
        >>> all(3 <= c <= 6 for c in counts)
        True
    """
    op = "sample_counts"
    salt = need_size(op, "salt", salt, -(1 << 31))
    lo = need_size(op, "lo", lo, -(1 << 31))
    hi = need_size(op, "hi", hi, -(1 << 31))
    if lo > hi:
        raise ParamsError(f"sample_counts lo, hi: expected lo <= hi, got ({lo}, {hi})")
    need_array(op, "out", out, wp.int32, 1, f"[num_envs] int32; {BUILD}")
    need_array(op, "seeds", seeds, wp.int32, out.shape[0], "[num_envs] int32: b.seed")
    ctx.launch(_k._sample_counts_k, out.shape[0], [seeds, int(salt), int(lo), int(hi), out])


def grid_cells(
    ctx: Any,
    seeds: wp.array,
    salt: int,
    counts: wp.array,
    grid: int,
    perm: wp.array,
    out_cells: wp.array,
    max_count: int,
) -> None:
    """Picks ``counts[e]`` distinct cells of a ``grid`` x ``grid`` lattice per env.

    Args:
        perm: ``[E*grid*grid]`` int32 scratch.
        out_cells: ``[E*max_count]`` int32 cell indices (``cy*grid + cx``), -1 past the count.

    Raises:
        ParamsError: an array that is None, of the wrong dtype or too short (E is
            ``counts.shape[0]``), or a grid or max_count that is not an integer >= 1.

    Example:
        Three envs pick 3, 3 and 6 distinct cells of a 4 x 4 lattice:

        >>> import warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> seeds = wp.array([1, 2, 3], dtype=wp.int32, device="cpu")
        >>> counts = wp.array([3, 3, 6], dtype=wp.int32, device="cpu")
        >>> perm = wp.zeros(3 * 16, dtype=wp.int32, device="cpu")
        >>> cells = wp.zeros(3 * 6, dtype=wp.int32, device="cpu")
        >>> ops.grid_cells(LaunchContext("cpu"), seeds, 18, counts, 4, perm, cells, 6)
        >>> rows = cells.numpy().reshape(3, 6).tolist()
        >>> rows[0]  # -1 past the env's count
        [1, 4, 8, -1, -1, -1]
        >>> [len(set(r) - {-1}) for r in rows]  # distinct cells
        [3, 3, 6]
    """
    op = "grid_cells"
    salt = need_size(op, "salt", salt, -(1 << 31))
    grid = need_size(op, "grid", grid)
    max_count = need_size(op, "max_count", max_count)
    need_array(op, "counts", counts, wp.int32, 1, f"[num_envs] int32; {BUILD}")
    E = counts.shape[0]
    need_array(op, "seeds", seeds, wp.int32, E, "[num_envs] int32: b.seed")
    need_array(op, "perm", perm, wp.int32, E * grid * grid, f"[num_envs*grid*grid]; {BUILD}")
    need_array(op, "out_cells", out_cells, wp.int32, E * max_count, f"[E*max_count]; {BUILD}")
    ctx.launch(
        _k._grid_cells_k,
        counts.shape[0],
        [seeds, int(salt), counts, int(grid), perm, out_cells, int(max_count)],
    )


def sample_grid_points(
    ctx: Any,
    seeds: wp.array,
    salt: int,
    cells: wp.array,
    counts: wp.array,
    grid: int,
    jitter: float,
    scale: float,
    out_xy: wp.array,
    max_count: int,
) -> None:
    """Writes a jittered point inside each chosen cell, mapped to ``[-scale, scale]^2``.

    Args:
        cells: ``[E*max_count]`` from ``grid_cells``.
        jitter: 0 puts points at cell centres, 1 anywhere in the cell.
        out_xy: ``[E*max_count]`` vec2; NaN past each env's count.

    Raises:
        ParamsError: as ``grid_cells``.

    Example:
        With jitter 0 each point is its cell's centre: cell 1 (column 1, row 0) of a 4 x 4
        lattice over [-1, 1]^2 is centred at (-0.25, -0.75):

        >>> import warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> seeds = wp.array([1], dtype=wp.int32, device="cpu")
        >>> cells = wp.array([1, 4, -1], dtype=wp.int32, device="cpu")
        >>> counts = wp.array([2], dtype=wp.int32, device="cpu")
        >>> out = wp.zeros(3, dtype=wp.vec2, device="cpu")
        >>> ops.sample_grid_points(LaunchContext("cpu"), seeds, 19, cells, counts, 4, 0.0, 1.0, out, 3)
        >>> out.numpy().tolist()
        [[-0.25, -0.75], [-0.75, -0.25], [nan, nan]]
    """
    op = "sample_grid_points"
    salt = need_size(op, "salt", salt, -(1 << 31))
    grid = need_size(op, "grid", grid)
    max_count = need_size(op, "max_count", max_count)
    need_array(op, "counts", counts, wp.int32, 1, f"[num_envs] int32; {BUILD}")
    E = counts.shape[0]
    need_array(op, "seeds", seeds, wp.int32, E, "[num_envs] int32: b.seed")
    need_array(op, "cells", cells, wp.int32, E * max_count, "ops.grid_cells' out_cells")
    need_array(op, "out_xy", out_xy, wp.vec2, E * max_count, f"[E*max_count] vec2; {BUILD}")
    ctx.launch(
        _k._sample_grid_points_k,
        counts.shape[0] * int(max_count),
        [
            seeds,
            int(salt),
            cells,
            counts,
            int(grid),
            float(jitter),
            float(scale),
            out_xy,
            int(max_count),
        ],
    )


def angle_sort(ctx: Any, xy: wp.array, counts: wp.array, max_count: int) -> None:
    """Sorts each env's first ``counts[e]`` points counter-clockwise around their centroid,
    in place. A count <= 0 is an empty env (nothing moves).

    Raises:
        ParamsError: ``xy`` or ``counts`` None, of the wrong dtype or too short.

    Example:
        >>> import warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> xy = wp.array([[1, 1], [0, 0], [0, 1], [1, 0]], dtype=wp.vec2, device="cpu")
        >>> ops.angle_sort(LaunchContext("cpu"), xy, wp.array([4], dtype=wp.int32, device="cpu"), 4)
        >>> xy.numpy().tolist()  # counter-clockwise around the centroid (0.5, 0.5)
        [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
    """
    op = "angle_sort"
    max_count = need_size(op, "max_count", max_count)
    need_array(op, "counts", counts, wp.int32, 1, f"[num_envs] int32; {BUILD}")
    need_array(op, "xy", xy, wp.vec2, counts.shape[0] * max_count, f"[E*max_count]; {BUILD}")
    ctx.launch(_k._angle_sort_k, counts.shape[0], [xy, counts, int(max_count)])


__all__ = [
    "ArcScratch",
    "GridScratch",
    "angle_sort",
    "arc_resample",
    "arc_resample_attribute",
    "check_tracks",
    "fill",
    "funcs",
    "grid_cells",
    "is_simple",
    "resample_constant_spacing",
    "resample_uniform",
    "sample_counts",
    "sample_grid_points",
    "self_intersections",
    "turning_number",
]
