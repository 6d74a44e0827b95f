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

import dataclasses
import math
from typing import Any

import warp as wp

from . import _kernels as _k
from . import funcs


def fill(ctx: Any, arr: wp.array, value: Any) -> None:
    """Fills ``arr`` with ``value`` through ``ctx`` (the replacement of ``_pipe._fill_i32_k``).

    Args:
        ctx: the call's launch context.
        arr: any device array.
        value: a scalar (or vector) of the array's dtype.
    """
    ctx.fill(arr, value)


@dataclasses.dataclass
class ArcScratch:
    """The four buffers of ``arc_resample``.

    Attributes:
        cum: ``[E*(raw+1)]`` float32 cumulative lengths.
        seg: ``[E*N]`` int32, the source segment of each output point (for attributes).
        t: ``[E*N]`` float32, the position along that segment.
        counts: ``[E]`` int32 holding ``raw`` for every env: the default point count, and
            the default all-active mask.

    Build one with ``ArcScratch.alloc`` (outside any recording) or from ``b.scratch`` buffers.
    """

    cum: wp.array
    seg: wp.array
    t: wp.array
    counts: wp.array

    @classmethod
    def alloc(cls, device: str, num_envs: int, raw: int, num_points: int) -> ArcScratch:
        """Allocates the buffers for ``num_envs`` loops of up to ``raw`` points.

        Raises:
            ValueError: a size below 1.
        """
        for name, v in (("num_envs", num_envs), ("raw", raw), ("num_points", num_points)):
            if int(v) < 1:
                raise ValueError(f"ArcScratch.{name}: expected an integer >= 1, got {v!r}")
        return cls(
            cum=wp.zeros(num_envs * (raw + 1), dtype=float, device=device),
            seg=wp.zeros(num_envs * num_points, dtype=wp.int32, device=device),
            t=wp.zeros(num_envs * num_points, dtype=float, device=device),
            counts=wp.full(num_envs, int(raw), dtype=wp.int32, device=device),
        )


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
    """
    counts = scratch.counts if counts is None else counts
    ctx.launch(
        _k._arc_resample_k,
        num_envs,
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
    """
    ctx.launch(
        _k._attr_resample_k,
        num_envs * num_points,
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
    """
    ctx.launch(
        _k._arc_resample_k,
        num_envs,
        [src, counts, src_points, dst, dst_points, counts, s_wp, seg_wp, t_wp],
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
        ValueError: a spacing that is not a positive finite number.
    """
    if not (isinstance(spacing, int | float) and math.isfinite(spacing) and spacing > 0):
        raise ValueError(
            f"resample_constant_spacing spacing: expected a positive number, got {spacing!r}"
        )
    ctx.launch(
        _k._constant_spacing_k,
        num_envs,
        [src, src_points, float(spacing), dst, max_points, out_count, truncated],
    )


def sample_counts(ctx: Any, seeds: wp.array, salt: int, lo: int, hi: int, out: wp.array) -> None:
    """Writes one integer per env, uniform in ``[lo, hi]``, from the stream ``salt``.

    Raises:
        ValueError: ``lo > hi``.
    """
    if int(lo) > int(hi):
        raise ValueError(f"sample_counts lo, hi: expected lo <= hi, got ({lo}, {hi})")
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
    """
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
    """
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
    in place. A count <= 0 is an empty env (nothing moves)."""
    ctx.launch(_k._angle_sort_k, counts.shape[0], [xy, counts, int(max_count)])


@dataclasses.dataclass
class GridScratch:
    """Per-env scratch of ``self_intersections`` and ``check_tracks``: the x-monotone chains
    of the crossing test and the uniform grid of the clearance test.

    Attributes:
        grid: cells per side (G) of the clearance grid. cap: grid entries per env.
        start: ``[E*(G*G+2)]`` int32 cell starts. items: ``[E*cap]`` int32 segment ids.
        vcell: ``[E*N]`` int32, each point's cell.
        ones: ``[E]`` int32 of ones (the default active mask and generator verdict).
        chain, chain_n: ``[E*N]`` int32, the x-monotone chains (start, signed length).
    """

    grid: int
    cap: int
    start: wp.array
    items: wp.array
    vcell: wp.array
    ones: wp.array
    chain: wp.array
    chain_n: wp.array

    @classmethod
    def alloc(cls, device: str, num_envs: int, num_points: int) -> GridScratch:
        """Allocates the scratch for ``num_envs`` loops of ``num_points`` points."""
        g = grid_size(num_points)
        cap = 4 * num_points + 16
        return cls(
            grid=g,
            cap=cap,
            start=wp.zeros(num_envs * (g * g + 2), dtype=wp.int32, device=device),
            items=wp.zeros(num_envs * cap, dtype=wp.int32, device=device),
            vcell=wp.zeros(num_envs * num_points, dtype=wp.int32, device=device),
            ones=wp.full(num_envs, 1, dtype=wp.int32, device=device),
            chain=wp.zeros(num_envs * num_points, dtype=wp.int32, device=device),
            chain_n=wp.zeros(num_envs * num_points, dtype=wp.int32, device=device),
        )


def grid_size(num_points: int) -> int:
    """Returns the cells per side used for loops of ``num_points`` points (about sqrt(N))."""
    return max(2, min(64, int(round(math.sqrt(num_points)))))


def self_intersections(
    ctx: Any, xy: wp.array, num_envs: int, num_points: int, out: wp.array, scratch: GridScratch
) -> None:
    """Counts the crossing pairs of non-adjacent segments of each closed loop.

    Each loop is cut into x-monotone chains; only chains whose x-ranges overlap are
    compared, by a merge along x (about O(N) for a track, O(N^2) at worst). Orientation
    tests run in float64 from the float32 points, so their signs are exact.

    Args:
        xy: ``[E*num_points]`` vec2 closed loops.
        out: ``[E]`` int32 number of intersecting segment pairs (touching counts).
        scratch: a ``GridScratch`` for ``E`` and ``num_points``.
    """
    ctx.launch(
        _k._self_intersections_k,
        num_envs,
        [xy, num_points, scratch.chain, scratch.chain_n, out],
    )


def check_tracks(
    ctx: Any,
    xy: wp.array,
    num_envs: int,
    num_points: int,
    scratch: GridScratch,
    min_radius: wp.array,
    width: wp.array,
    valid: wp.array,
    reason: wp.array,
    crossings: wp.array,
    turning: wp.array,
    active: wp.array | None = None,
    gen_valid: wp.array | None = None,
) -> None:
    """The validity stage: decides each closed loop's validity on the device.

    An env is valid when the generator accepted it (``gen_valid``), every point is finite
    and every segment (the closing one too) has a positive length, no two non-adjacent
    segments touch, its turning number is +1 or -1, every circumradius of three
    consecutive points is at least ``min_radius[0]`` and any two points more than
    ``pi * width[0] / 2`` apart along the loop (index distance times the mean spacing) are
    at least ``width[0]`` apart. Both thresholds live in one-element device buffers; 0
    disables a check.

    Args:
        xy: ``[E*N]`` vec2 loops. scratch: a ``GridScratch`` for E and N.
        min_radius, width: ``[1]`` float32 device buffers.
        valid: ``[E]`` int32 out (1 valid). reason: ``[E]`` int32 out, bits of
            ``pipeline.REASONS``. crossings: ``[E]`` int32 out, crossing pairs.
            turning: ``[E]`` int32 out, turning numbers.
        active: ``[E]`` int32 mask; inactive envs are left untouched (all when None).
        gen_valid: ``[E]`` int32 generator verdicts (all accepted when None).
    """
    ctx.launch(
        _k._validity_k,
        num_envs,
        [
            xy,
            num_points,
            scratch.ones if active is None else active,
            scratch.ones if gen_valid is None else gen_valid,
            min_radius,
            width,
            scratch.grid,
            scratch.start,
            scratch.items,
            scratch.cap,
            scratch.vcell,
            scratch.chain,
            scratch.chain_n,
            valid,
            reason,
            crossings,
            turning,
        ],
    )


def turning_number(ctx: Any, xy: wp.array, num_envs: int, num_points: int, out: wp.array) -> None:
    """Writes each loop's turning number: the signed count of times its tangent passes the
    +x direction (equal to the summed exterior angles / 2 pi, without trigonometry)."""
    ctx.launch(_k._turning_number_k, num_envs, [xy, num_points, out])


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
    "grid_size",
    "resample_constant_spacing",
    "resample_uniform",
    "sample_counts",
    "sample_grid_points",
    "self_intersections",
    "turning_number",
]
