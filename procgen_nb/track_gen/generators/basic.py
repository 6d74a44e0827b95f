"""The ``polar`` and ``checkpoint`` generators and the ``z_profile`` stage."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import warp as wp

from ...params import Field, Params
from ..plugin import _BuiltinStage
from . import _kernels as _k


class PolarParams(Params):
    """Parameters of ``polar``: a radius per lobe, interpolated around the full turn."""

    owner = "polar"
    lobes: int = Field(8, bounds=(3, 64), soft=(3, 24), doc="control radii around the turn")
    radius_jitter: float = Field(
        0.35,
        bounds=(0.0, 1.0),
        dynamic=True,
        unit="x radius",
        doc="how far each control radius strays from 1 (fraction)",
    )
    min_radius: float = Field(
        0.2,
        bounds=(0.01, 1.0),
        dynamic=True,
        unit="x radius",
        doc="smallest radius of the loop before normalisation",
    )


class Polar(_BuiltinStage):
    """``polar``: r(theta) by a periodic Catmull-Rom spline through jittered radii.

    Star-shaped around the origin, so simple and counter-clockwise by construction; within
    ``1.125 * scale`` of the origin (the spline overshoots its control radii by at most 1/8
    of their spread). ``radius_jitter`` up to 1 keeps it so: control radii reach 0, but
    every radius is at least ``min_radius / (1 + radius_jitter)`` > 0.
    ``radius_jitter`` and ``min_radius`` are dynamic (``b.param``): a change replays.
    Streams: ``polar.radius``, ``polar.phase``.
    """

    name = "polar"
    Params = PolarParams
    writes = ("xy",)
    provides = frozenset({"ccw"})

    def build(self, b: Any, params: PolarParams) -> Callable[[Any], None]:
        xy = b.write("xy")
        lobes = params.lobes
        radii = b.scratch("radii", float, b.E * lobes)
        phase = b.scratch("phase", float, b.E)
        sr, sa = b.salt("polar.radius"), b.salt("polar.phase")
        jitter, floor_r = b.param("radius_jitter"), b.param("min_radius")
        a1 = [b.seed, b.active, sr, sa, lobes, jitter, radii, phase]
        a2 = [radii, phase, b.active, lobes, jitter, floor_r, b.raw, b.scale, xy]
        E, raw = b.E, b.raw

        def enqueue(ctx: Any) -> None:
            ctx.launch(_k._polar_ctrl_k, E * lobes, a1)
            ctx.launch(_k._polar_k, E * raw, a2)

        return enqueue


class CheckpointParams(Params):
    """Parameters of ``checkpoint``: checkpoints around a circle, joined by a spline."""

    owner = "checkpoint"
    checkpoints: int = Field(10, bounds=(4, 64), soft=(4, 24), doc="checkpoints around the circle")
    radius_jitter: float = Field(0.35, bounds=(0.0, 0.9), doc="radius jitter (fraction)")
    angle_jitter: float = Field(
        0.5,
        bounds=(0.0, 0.95),
        unit="x sector",
        doc="angle jitter (fraction of the sector between checkpoints)",
    )


class Checkpoint(_BuiltinStage):
    """``checkpoint``: checkpoints around a circle with jittered angle and radius, joined by
    a closed Catmull-Rom spline. Streams: ``checkpoint.radius``, ``checkpoint.angle``."""

    name = "checkpoint"
    Params = CheckpointParams
    writes = ("xy", "count")

    def raw_points(self, config: Any, params: CheckpointParams) -> int:
        k = params.checkpoints
        return k * max(2, math.ceil(config.num_points / k))

    def build(self, b: Any, params: CheckpointParams) -> Callable[[Any], None]:
        k = params.checkpoints
        samples = b.raw // k
        xy, count = b.write("xy"), b.write("count")
        ctrl = b.scratch("ctrl", wp.vec2, b.E * k)
        ctrl_count = b.scratch("ctrl_count", wp.int32, b.E)
        sr, sa = b.salt("checkpoint.radius"), b.salt("checkpoint.angle")
        a1 = [b.seed, b.active, sr, sa, k, params.radius_jitter, params.angle_jitter, b.scale]
        a1 += [ctrl, ctrl_count]
        a2 = [ctrl, ctrl_count, k, samples, b.active, b.raw, xy, count]
        E, raw = b.E, b.raw

        def enqueue(ctx: Any) -> None:
            ctx.launch(_k._checkpoint_ctrl_k, E * k, a1)
            ctx.launch(_k._closed_cr_k, E * raw, a2)

        return enqueue


class ZProfileParams(Params):
    """Parameters of the z profile: heights at knots evenly spaced along the track."""

    owner = "z_profile"
    knots: int = Field(6, bounds=(2, 64), soft=(2, 16), doc="height knots along the track")
    amplitude: float = Field(
        0.1,
        bounds=(0.0, None),
        soft=(0.0, 1.0),
        unit="world",
        dynamic=True,
        doc="largest height above or below 0",
    )


class ZProfile(_BuiltinStage):
    """``z_profile`` (a post stage): a smooth periodic height per point, attribute ``"z"``.

    ``amplitude`` is dynamic (``b.param``). Stream: ``z_profile``.
    """

    name = "z_profile"
    Params = ZProfileParams
    phase = "post"
    writes = ("z",)
    attributes = {"z": "height of the centerline point"}

    def build(self, b: Any, params: ZProfileParams) -> Callable[[Any], None]:
        z = b.write("z")
        amp = b.param("amplitude")
        args = [b.seed, b.active, b.salt("z_profile"), params.knots, amp, b.num_points, z]
        dim = b.E * b.num_points

        def enqueue(ctx: Any) -> None:
            ctx.launch(_k._z_profile_k, dim, args)

        return enqueue
