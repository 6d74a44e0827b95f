"""Widths and direction of travel of a track, and the boundary-crossing test.

``TrackGenConfig(width={...})`` gives every track a left and a right width per point (the
``"width_left"`` and ``"width_right"`` attributes, in world units, measured along the left
normal of travel and its opposite): constant, or varying along the lap with the env's own
``"width"`` random stream. ``TrackGenConfig(direction="cw" | "random")`` reverses loops so
that they run clockwise (or either way, drawn per env from its ``"direction"`` stream); a
reversed loop keeps its point 0 (point i becomes point N - i) and its attributes follow it.

With ``WidthParams(check=True)`` (the default) the validity stage also rejects a track
whose boundaries cross themselves or each other (reason bit ``BOUNDARY_CROSSING``): a
width wider than the track's curvature or its clearance allows.
``boundary_crossings`` is that test as an op: one launch over the envs, each a sweep over
the monotone chains of its band (``ops.self_intersections``' search), nothing read back.

>>> from procgen_nb.track_gen import presets
>>> gen = presets.track("polar", num_envs=4, num_points=64, width={"left": 0.03})
>>> sorted(gen.result.attributes)
['width_left', 'width_right']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import warp as wp

from ..errors import ParamsError
from ..params import Field, Params
from . import _widths_kernels as _wk
from .ops._checks import need_array, need_size

#: the accepted ``TrackGenConfig.direction`` values
DIRECTIONS = ("ccw", "cw", "random")

#: the reason bit of a track whose boundaries cross (``TrackResult.reason``)
BOUNDARY_CROSSING = 128


class WidthParams(Params):
    """The widths of a track, each side measured from the centerline (world units).

    ``variation`` 0 keeps them constant; above 0 each side is ``left * (1 + variation *
    w(s))`` with ``w`` a smooth periodic wave of the lap position in [-1, 1] (``harmonics``
    sines of random amplitude and phase, from the env's ``"width"`` stream).
    """

    owner = "width"
    left: float = Field(
        0.025,
        bounds=(0.0, None),
        soft=(0.0, 0.2),
        unit="world",
        doc="width left of the centerline (left of travel)",
    )
    right: float = Field(
        0.025,
        bounds=(0.0, None),
        soft=(0.0, 0.2),
        unit="world",
        doc="width right of the centerline",
    )
    variation: float = Field(0.0, bounds=(0.0, 0.95), doc="relative change along the lap")
    harmonics: int = Field(3, bounds=(1, 16), doc="sines of the width wave (1 = one swell)")
    same: bool = Field(False, doc="both sides follow one wave (else each its own)")
    check: bool = Field(True, doc="reject a track whose boundaries cross (validity)")


def resolve_width(value: Any) -> WidthParams | None:
    """Returns ``TrackGenConfig.width`` resolved: None stays None (no width attributes).

    Raises:
        ParamsError: not None, a WidthParams or a dict of its fields; a refused field; a side
            of width 0 (the band would have no area).
    """
    if value is None:
        return None
    if not isinstance(value, WidthParams | Mapping):
        raise ParamsError(
            f"TrackGenConfig.width: expected None, a WidthParams or a dict of its fields "
            f"{sorted(WidthParams.fields())}, got {value!r}"
        )
    wp_ = WidthParams.resolve(value)
    for side in ("left", "right"):
        if not getattr(wp_, side) > 0.0:
            raise ParamsError(
                f"TrackGenConfig.width.{side}: expected a width > 0, got {getattr(wp_, side)!r}"
            )
    return wp_


def resolve_direction(value: Any) -> str:
    """Returns ``TrackGenConfig.direction`` checked.

    Raises:
        ParamsError: not one of ``DIRECTIONS``.
    """
    if not isinstance(value, str) or value not in DIRECTIONS:
        raise ParamsError(
            f"TrackGenConfig.direction: expected one of {list(DIRECTIONS)}, got {value!r}"
        )
    return value


class BoundaryScratch:
    """The buffers of ``boundary_crossings`` for ``E`` envs of ``N`` points: the cut-open
    band (``[E*(2N+2)]`` vec2) and the chains of its crossing search.

    ``zeros(name, size, dtype)``, when given, allocates each buffer (a pipeline's named
    arrays); ``wp.zeros`` on ``device`` otherwise."""

    def __init__(
        self,
        device: Any,
        num_envs: int,
        num_points: int,
        zeros: Callable[[str, int, Any], wp.array] | None = None,
    ):
        E = need_size("BoundaryScratch", "num_envs", num_envs)
        N = need_size("BoundaryScratch", "num_points", num_points)
        m = 2 * N + 2
        self.num_envs, self.num_points = E, N
        if zeros is None:
            zeros = lambda name, n, dt: wp.zeros(n, dtype=dt, device=device)  # noqa: E731
        self.ring = zeros("ring", E * m, wp.vec2)
        self.chain = zeros("chain", E * m, wp.int32)
        self.chain_n = zeros("chain_n", E * m, wp.int32)
        self.order = zeros("order", E * m, wp.int32)
        self.key = zeros("key", E * m, wp.float32)
        self.bucket = zeros("bucket", E * (m + 1), wp.int32)


def boundary_crossings(
    ctx: Any,
    xy: wp.array,
    left: wp.array,
    right: wp.array,
    num_envs: int,
    num_points: int,
    out: wp.array,
    scratch: BoundaryScratch,
    active: wp.array,
    reason: wp.array,
) -> None:
    """Counts, per env, the pairs of boundary segments that meet.

    The boundaries are ``p + n * left`` and ``p - n * right`` with ``n`` the unit left
    normal of the central tangent (``p[i+1] - p[i-1]``, as ``mesh.road_mesh``); a
    boundary's own adjacent segments do not count. A boundary segment that runs against
    its centerline segment (a fold: the normals crossed within the width) counts one
    more. ``out[e]`` is 0 when neither boundary crosses itself or folds and they do not
    meet (a band that is a ring), more otherwise.

    Args:
        ctx: the launch context.
        xy: ``[E*N]`` vec2 closed centerlines.
        left, right: ``[E*N]`` float32 widths (> 0).
        num_envs, num_points: E and N (N >= 3).
        out: ``[E]`` int32 counts.
        scratch: a ``BoundaryScratch`` of these sizes.
        active: ``[E]`` int32 mask (envs with 0 are left untouched).
        reason: ``[E]`` int32 validity reasons: an env with ``NOT_CLOSED`` (bit 2) gets 0.

    Raises:
        ParamsError: arrays of the wrong dtype or too short, or a scratch of other sizes.
    """
    op = "boundary_crossings"
    E = need_size(op, "num_envs", num_envs)
    N = need_size(op, "num_points", num_points)
    if N < 3:
        raise ParamsError(f"ops.{op} num_points: expected at least 3, got {N}")
    need_array(op, "xy", xy, wp.vec2, E * N, "[num_envs*num_points] vec2")
    need_array(op, "left", left, wp.float32, E * N, "[num_envs*num_points] float32")
    need_array(op, "right", right, wp.float32, E * N, "[num_envs*num_points] float32")
    need_array(op, "out", out, wp.int32, E, "[num_envs] int32")
    if not isinstance(scratch, BoundaryScratch) or (scratch.num_envs, scratch.num_points) != (E, N):
        raise ParamsError(
            f"ops.{op} scratch: expected BoundaryScratch(device, {E}, {N}), got {scratch!r}"
        )
    need_array(op, "active", active, wp.int32, E, "[num_envs] int32")
    need_array(op, "reason", reason, wp.int32, E, "[num_envs] int32")
    s = scratch
    ctx.launch(
        _wk._boundary_k,
        E,
        [
            xy,
            left,
            right,
            N,
            active,
            reason,
            s.ring,
            s.chain,
            s.chain_n,
            s.order,
            s.key,
            s.bucket,
            out,
        ],
    )


__all__ = [
    "BOUNDARY_CROSSING",
    "DIRECTIONS",
    "BoundaryScratch",
    "WidthParams",
    "boundary_crossings",
    "resolve_direction",
    "resolve_width",
]
