"""The scratch buffers of the ops: ``ArcScratch`` (resampling) and ``GridScratch``
(crossings and the validity stage), with the checks an op runs on one it is given.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import warp as wp

from ._checks import need_array, need_scratch, need_size
from ._validity_funcs import _GROUP, _LEAF

_ARC = "ops.ArcScratch.alloc(device, num_envs, raw, num_points) allocates one"
_GRID = "ops.GridScratch.alloc(device, num_envs, num_points) allocates one"


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
            ParamsError: a size that is not an integer >= 1.
        """
        num_envs = need_size("ArcScratch.alloc", "num_envs", num_envs)
        raw = need_size("ArcScratch.alloc", "raw", raw)
        num_points = need_size("ArcScratch.alloc", "num_points", num_points)
        return cls(
            cum=wp.zeros(num_envs * (raw + 1), dtype=float, device=device),
            seg=wp.zeros(num_envs * num_points, dtype=wp.int32, device=device),
            t=wp.zeros(num_envs * num_points, dtype=float, device=device),
            counts=wp.full(num_envs, int(raw), dtype=wp.int32, device=device),
        )


@dataclasses.dataclass
class GridScratch:
    """Per-env scratch of ``self_intersections``, ``is_simple`` and ``check_tracks``: the
    monotone chains of the crossing test and the block boxes of the clearance test.

    Attributes:
        blocks: blocks of consecutive points per loop in the clearance test (B).
        box: ``[E*B]`` vec4, each block's box (min x, min y, max x, max y).
        ones: ``[E]`` int32 of ones (the default active mask and generator verdict).
        chain, chain_n: ``[E*N]`` int32, the monotone chains (start vertex, segments).
        order: ``[E*N]`` int32, the chains sorted by lowest x. key: ``[E*N]`` float32,
            each chain's lowest x. bucket: ``[E*(N+1)]`` int32, the x buckets of the sort.
        ring: ``[E*N]`` vec2, a loop without its repeated points (``is_simple``).
    """

    blocks: int
    box: wp.array
    ones: wp.array
    chain: wp.array
    chain_n: wp.array
    order: wp.array
    key: wp.array
    bucket: wp.array
    ring: wp.array

    @classmethod
    def alloc(cls, device: str, num_envs: int, num_points: int) -> GridScratch:
        """Allocates the scratch for ``num_envs`` loops of ``num_points`` points.

        Raises:
            ParamsError: a size that is not an integer >= 1.
        """
        num_envs = need_size("GridScratch.alloc", "num_envs", num_envs)
        num_points = need_size("GridScratch.alloc", "num_points", num_points)
        nb = clearance_blocks(num_points)
        return cls(
            blocks=nb,
            box=wp.zeros(num_envs * nb, dtype=wp.vec4, device=device),
            ones=wp.full(num_envs, 1, dtype=wp.int32, device=device),
            chain=wp.zeros(num_envs * num_points, dtype=wp.int32, device=device),
            chain_n=wp.zeros(num_envs * num_points, dtype=wp.int32, device=device),
            order=wp.zeros(num_envs * num_points, dtype=wp.int32, device=device),
            key=wp.zeros(num_envs * num_points, dtype=float, device=device),
            bucket=wp.zeros(num_envs * (num_points + 1), dtype=wp.int32, device=device),
            ring=wp.zeros(num_envs * num_points, dtype=wp.vec2, device=device),
        )


def clearance_blocks(num_points: int) -> int:
    """Returns the blocks of consecutive points the clearance test cuts a loop of
    ``num_points`` points into."""
    return -(-num_points // _LEAF) + -(-num_points // _GROUP)


def _check_arc(op: str, scratch: Any, E: int, raw: int, N: int, xy: bool) -> ArcScratch:
    scratch = need_scratch(op, "scratch", scratch, ArcScratch, _ARC)
    if xy:
        need_array(op, "scratch.cum", scratch.cum, wp.float32, E * (raw + 1), _ARC)
    need_array(op, "scratch.seg", scratch.seg, wp.int32, E * N, _ARC)
    need_array(op, "scratch.t", scratch.t, wp.float32, E * N, _ARC)
    need_array(op, "scratch.counts", scratch.counts, wp.int32, E, _ARC)
    return scratch


def _check_grid(
    op: str, scratch: Any, E: int, N: int, chains_only: bool, ring: bool = False
) -> GridScratch:
    scratch = need_scratch(op, "scratch", scratch, GridScratch, _GRID)
    need_array(op, "scratch.chain", scratch.chain, wp.int32, E * N, _GRID)
    need_array(op, "scratch.chain_n", scratch.chain_n, wp.int32, E * N, _GRID)
    need_array(op, "scratch.order", scratch.order, wp.int32, E * N, _GRID)
    need_array(op, "scratch.key", scratch.key, wp.float32, E * N, _GRID)
    need_array(op, "scratch.bucket", scratch.bucket, wp.int32, E * (N + 1), _GRID)
    if ring:
        need_array(op, "scratch.ring", scratch.ring, wp.vec2, E * N, _GRID)
    if not chains_only:
        nb = need_size(op, "scratch.blocks", scratch.blocks, clearance_blocks(N))
        need_array(op, "scratch.box", scratch.box, wp.vec4, E * nb, _GRID)
        need_array(op, "scratch.ones", scratch.ones, wp.int32, E, _GRID)
    return scratch


__all__ = ["ArcScratch", "GridScratch", "clearance_blocks"]
