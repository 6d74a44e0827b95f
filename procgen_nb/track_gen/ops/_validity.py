"""The loop checks: crossings, turning numbers and the validity stage (``check_tracks``)."""

from __future__ import annotations

from typing import Any

import warp as wp

from . import _kernels as _k
from ._checks import BUILD, need_array, need_masks, need_size
from ._scratch import GridScratch, _check_grid
from ._validity_kernels import _count_flagged_k, _mark_k


def self_intersections(
    ctx: Any,
    xy: wp.array,
    num_envs: int,
    num_points: int,
    out: wp.array,
    scratch: GridScratch,
    first_only: bool = False,
) -> None:
    """Counts the crossing pairs of non-adjacent segments of each closed loop.

    Each loop is cut into quadrant-monotone chains (x and y both monotone: the box of any
    run is that of its end vertices); the chains are bucketed by x and swept, and each pair
    whose boxes meet is bisected down to single segments (about O(N) for a track, O(N^2) at
    worst). Orientation tests run in float64 from the float32 points, so their signs are
    exact.

    Args:
        xy: ``[E*num_points]`` vec2 closed loops.
        out: ``[E]`` int32 number of intersecting segment pairs (touching counts), or with
            ``first_only`` 1 when there is one (the search stops there) and 0 when none.
        scratch: a ``GridScratch`` for ``E`` and ``num_points``.
        first_only: stop at the first crossing ("is there any?").

    Raises:
        ParamsError: a scratch that is not a ``GridScratch`` for these sizes (None
            included), or an array of the wrong dtype or too short.

    Example:
        A square, and a bow tie whose first and third sides cross once:

        >>> import numpy as np, warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> sq = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
        >>> bow = np.array([[0, 0], [1, 1], [1, 0], [0, 1]], np.float32)
        >>> xy = wp.array(np.concatenate([sq, bow]), dtype=wp.vec2, device="cpu")
        >>> out = wp.zeros(2, dtype=wp.int32, device="cpu")
        >>> ops.self_intersections(LaunchContext("cpu"), xy, 2, 4, out, ops.GridScratch.alloc("cpu", 2, 4))
        >>> out.numpy().tolist()
        [0, 1]
    """
    op = "self_intersections"
    E = need_size(op, "num_envs", num_envs)
    N = need_size(op, "num_points", num_points)
    scratch = _check_grid(op, scratch, E, N, chains_only=True)
    need_array(op, "xy", xy, wp.vec2, E * N, f"[num_envs*num_points] vec2; {BUILD}")
    need_array(op, "out", out, wp.int32, E, f"[num_envs] int32; {BUILD}")
    ctx.launch(
        _k._self_intersections_k,
        E,
        [xy, N, *_chains(scratch), int(bool(first_only)), out],
    )


def is_simple(
    ctx: Any, xy: wp.array, num_envs: int, num_points: int, out: wp.array, scratch: GridScratch
) -> None:
    """Writes 1 for each closed loop that is simple as ``shapely.is_simple`` decides (GEOS),
    0 otherwise; the search stops at the first crossing.

    Repeated consecutive points (the closing one too) are dropped first; the loop is then
    simple when no two non-adjacent segments share a point (touching counts) and no two
    consecutive segments fold back onto each other. A loop of one distinct point is simple.
    The same chains as ``self_intersections``, with exact float64 orientations.

    Args:
        xy: ``[E*num_points]`` vec2 closed loops.
        out: ``[E]`` int32, 1 simple, 0 not.
        scratch: a ``GridScratch`` for ``E`` and ``num_points``.

    Raises:
        ParamsError: as ``self_intersections``.

    Example:
        >>> import numpy as np, warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> sq = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
        >>> bow = np.array([[0, 0], [1, 1], [1, 0], [0, 1]], np.float32)
        >>> xy = wp.array(np.concatenate([sq, bow]), dtype=wp.vec2, device="cpu")
        >>> out = wp.zeros(2, dtype=wp.int32, device="cpu")
        >>> ops.is_simple(LaunchContext("cpu"), xy, 2, 4, out, ops.GridScratch.alloc("cpu", 2, 4))
        >>> out.numpy().tolist()  # the square is simple, the bow tie is not
        [1, 0]
    """
    op = "is_simple"
    E = need_size(op, "num_envs", num_envs)
    N = need_size(op, "num_points", num_points)
    scratch = _check_grid(op, scratch, E, N, chains_only=True, ring=True)
    need_array(op, "xy", xy, wp.vec2, E * N, f"[num_envs*num_points] vec2; {BUILD}")
    need_array(op, "out", out, wp.int32, E, f"[num_envs] int32; {BUILD}")
    ctx.launch(_k._is_simple_k, E, [xy, N, scratch.ring, *_chains(scratch), out])


def _chains(scratch: GridScratch) -> list:
    return [scratch.chain, scratch.chain_n, scratch.order, scratch.key, scratch.bucket]


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
    first_crossing: bool = False,
) -> None:
    """The validity stage: decides each closed loop's validity on the device.

    An env is valid when the generator accepted it (``gen_valid``), every point is finite
    and every segment (the closing one too) has a positive length, no two non-adjacent
    segments touch, its turning number is +1 or -1, every circumradius of three
    consecutive points is at least ``min_radius[0]`` and any two points more than
    ``pi * width[0] / 2`` apart along the loop (index distance times the mean spacing) are
    at least ``width[0]`` apart. Both thresholds live in one-element device buffers; 0
    disables a check.

    The clearance search cuts each loop into blocks of consecutive points (leaves of 4,
    groups of 16) and skips every pair of blocks whose boxes are ``width`` apart along x
    or y, or whose index ranges hold no far pair; it stops at the first close pair. Its
    verdict is that of testing every pair in float32 (``length_sq < width * width``).

    Args:
        xy: ``[E*N]`` vec2 loops. scratch: a ``GridScratch`` for E and N.
        min_radius, width: ``[1]`` float32 device buffers.
        valid: ``[E]`` int32 out (1 valid). reason: ``[E]`` int32 out, bits of
            ``pipeline.REASONS``. crossings: ``[E]`` int32 out, crossing pairs.
            turning: ``[E]`` int32 out, turning numbers.
        first_crossing: the crossing test stops at the first crossing; ``crossings`` then
            holds 0 or 1 (it counts them all by default).
        active: ``[E]`` int32 mask; inactive envs are left untouched (all when None).
        gen_valid: ``[E]`` int32 generator verdicts (all accepted when None).

    Raises:
        ParamsError: a scratch that is not a ``GridScratch`` for these sizes (None
            included), a loop of fewer than 3 points, or an array of the wrong dtype or
            too short.

    Example:
        A circle, and a figure eight (it crosses itself once and turns 0 times); both thresholds
        0, so only the closed, simple, turning-number checks decide:

        >>> import numpy as np, warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> t = (np.arange(64) + 0.5) * 2 * np.pi / 64
        >>> circle = np.stack([np.cos(t), np.sin(t)], 1)
        >>> eight = np.stack([np.sin(t), np.sin(t) * np.cos(t)], 1)
        >>> xy = wp.array(np.concatenate([circle, eight]).astype(np.float32), dtype=wp.vec2, device="cpu")
        >>> out = [wp.zeros(2, dtype=wp.int32, device="cpu") for _ in range(4)]
        >>> zero = wp.zeros(1, dtype=float, device="cpu")
        >>> grid = ops.GridScratch.alloc("cpu", 2, 64)
        >>> ops.check_tracks(LaunchContext("cpu"), xy, 2, 64, grid, zero, zero, *out)
        >>> [a.numpy().tolist() for a in out]  # valid, reason (4 crossing + 8 turning), crossings, turning
        [[1, 0], [0, 12], [0, 1], [1, 0]]
    """
    op = "check_tracks"
    E = need_size(op, "num_envs", num_envs)
    N = need_size(op, "num_points", num_points, 3)
    scratch = _check_grid(op, scratch, E, N, chains_only=False)
    need_array(op, "xy", xy, wp.vec2, E * N, f"[num_envs*num_points] vec2; {BUILD}")
    for name, arr in (("min_radius", min_radius), ("width", width)):
        need_array(op, name, arr, wp.float32, 1, f"a [1] float32 buffer; {BUILD}")
    outs = {"valid": valid, "reason": reason, "crossings": crossings, "turning": turning}
    for name, arr in outs.items():
        need_array(op, name, arr, wp.int32, E, f"[num_envs] int32; {BUILD}")
    need_masks(op, E, active=active, gen_valid=gen_valid)
    ctx.launch(
        _k._validity_k,
        E,
        [
            xy,
            N,
            scratch.ones if active is None else active,
            scratch.ones if gen_valid is None else gen_valid,
            min_radius,
            width,
            scratch.box,
            scratch.blocks,
            *_chains(scratch),
            int(bool(first_crossing)),
            valid,
            reason,
            crossings,
            turning,
        ],
    )


def count_crossing_envs(
    ctx: Any,
    xy: wp.array,
    num_envs: int,
    num_points: int,
    reason: wp.array,
    crossings: wp.array,
    scratch: GridScratch,
) -> None:
    """Completes an early-exit ``check_tracks`` (``first_crossing=True``): counts every
    crossing pair of the envs whose ``reason`` has the self-intersecting bit (and not the
    not-closed one) into ``crossings``; the other envs keep their value (0 there). The
    counts equal those of ``check_tracks`` in its counting mode, and recounting is harmless.

    Raises:
        ParamsError: a scratch that is not a ``GridScratch`` for these sizes, or an array
            of the wrong dtype or too short.
    """
    op = "count_crossing_envs"
    E = need_size(op, "num_envs", num_envs)
    N = need_size(op, "num_points", num_points, 3)
    scratch = _check_grid(op, scratch, E, N, chains_only=True)
    need_array(op, "xy", xy, wp.vec2, E * N, f"[num_envs*num_points] vec2; {BUILD}")
    for name, arr in (("reason", reason), ("crossings", crossings)):
        need_array(op, name, arr, wp.int32, E, f"[num_envs] int32; {BUILD}")
    ctx.launch(_count_flagged_k, E, [xy, N, reason, *_chains(scratch), crossings])


def mark_rejected(
    ctx: Any,
    hit: wp.array,
    num_envs: int,
    bit: int,
    valid: wp.array,
    reason: wp.array,
    active: wp.array,
) -> None:
    """Adds a host-decided check to the validity stage's verdicts: each active env with
    ``hit[e] != 0`` gets ``bit`` in its ``reason`` and ``valid[e] = 0``.

    Raises:
        ParamsError: an array of the wrong dtype or too short.
    """
    op = "mark_rejected"
    E = need_size(op, "num_envs", num_envs)
    for name, arr in (("hit", hit), ("valid", valid), ("reason", reason), ("active", active)):
        need_array(op, name, arr, wp.int32, E, f"[num_envs] int32; {BUILD}")
    ctx.launch(_mark_k, E, [hit, active, int(bit), valid, reason])


def turning_number(ctx: Any, xy: wp.array, num_envs: int, num_points: int, out: wp.array) -> None:
    """Writes each loop's turning number: the signed count of times its tangent passes the
    +x direction (equal to the summed exterior angles / 2 pi, without trigonometry).

    Raises:
        ParamsError: ``xy`` or ``out`` None, of the wrong dtype or too short.

    Example:
        A unit square counter-clockwise, then the same square clockwise:

        >>> import numpy as np, warp as wp
        >>> from procgen_nb.track_gen import ops
        >>> from procgen_nb.track_gen.exec import LaunchContext
        >>> sq = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
        >>> xy = wp.array(np.concatenate([sq, sq[::-1]]), dtype=wp.vec2, device="cpu")
        >>> out = wp.zeros(2, dtype=wp.int32, device="cpu")
        >>> ops.turning_number(LaunchContext("cpu"), xy, 2, 4, out)
        >>> out.numpy().tolist()
        [1, -1]
    """
    op = "turning_number"
    E = need_size(op, "num_envs", num_envs)
    N = need_size(op, "num_points", num_points)
    need_array(op, "xy", xy, wp.vec2, E * N, f"[num_envs*num_points] vec2; {BUILD}")
    need_array(op, "out", out, wp.int32, E, f"[num_envs] int32; {BUILD}")
    ctx.launch(_k._turning_number_k, E, [xy, N, out])


__all__ = [
    "check_tracks",
    "count_crossing_envs",
    "is_simple",
    "mark_rejected",
    "self_intersections",
    "turning_number",
]
