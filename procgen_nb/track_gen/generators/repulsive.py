"""The ``repulsive`` generator: a loop grown under tangent-point repulsion.

A small random star polygon grows toward a target perimeter (edge springs whose rest
lengths are the initial edges' times ``growth``) while the discrete tangent-point energy
``sum_ij |T_i x (x_i - x_j)|^2 / |x_i - x_j|^4`` keeps distant parts apart, so it buckles
into a winding, non-self-intersecting track, finally fitted into ``[-scale, scale]``.

How the host-driven loop became recordable:

- the coarse-to-fine schedule (point counts, iterations per level, edge targets, step
  sizes) is computed on the host from the configuration alone, in ``build``;
- the readback-driven early exit became a per-env freeze on the device: ``_rep_commit_k``
  freezes an env whose largest move fell below ``tolerance`` and every kernel skips a
  frozen env; subdividing to the next level unfreezes it;
- each level's growth loop is a ``ctx.bounded_loop`` over that freeze (a BOUNDED stage);
- the gradient is a hand-written adjoint gathered per vertex (no ``atomic_add``), so the
  float summation order is fixed and the bytes are identical run to run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import warp as wp

from ...params import Field, Params
from ..plugin import CaptureClass, _BuiltinStage
from . import _repulsive_kernels as _k


class RepulsiveParams(Params):
    """Parameters of ``repulsive``."""

    owner = "repulsive"
    start_points: int = Field(16, bounds=(8, 64), doc="points of the initial star polygon")
    levels: int = Field(3, bounds=(1, 4), doc="coarse-to-fine levels (points double each level)")
    iterations: int = Field(24, bounds=(1, 200), soft=(4, 64), doc="descent steps per level")
    growth: float = Field(
        1.5, bounds=(1.0, 6.0), doc="rest length of each edge / its initial length"
    )
    repulsion: float = Field(1.0, bounds=(0.0, 10.0), doc="weight of the tangent-point energy")
    smoothing: float = Field(0.05, bounds=(0.0, 2.0), doc="weight of the Laplacian smoothing")
    step: float = Field(0.3, bounds=(0.01, 1.0), doc="largest move per step (x edge length)")
    tolerance: float = Field(
        0.002, bounds=(0.0, 0.5), doc="an env freezes when no point moved more (x edge length)"
    )
    jitter: float = Field(0.75, bounds=(0.0, 0.9), doc="radius jitter of the initial polygon")
    confine: float = Field(
        1.0, bounds=(0.1, 2.0), doc="radius of the soft disc the loop grows in (x scale)"
    )


class Repulsive(_BuiltinStage):
    """``repulsive``: tangent-point energy descent, coarse to fine (a BOUNDED stage).

    Stream: ``repulsive.init``.
    """

    name = "repulsive"
    Params = RepulsiveParams
    writes = ("xy",)
    capture = CaptureClass.BOUNDED

    def raw_points(self, config: Any, params: RepulsiveParams) -> int:
        return params.start_points << (params.levels - 1)

    @staticmethod
    def schedule(params: RepulsiveParams, scale: float) -> list[dict[str, float]]:
        """Returns the per-level schedule (n, iterations, h, target) computed on the host."""
        radius = 0.3 * scale
        perimeter = params.growth * _TWO_PI * radius
        out = []
        for level in range(params.levels):
            n = params.start_points << level
            out.append(
                {
                    "n": n,
                    "iterations": max(1, params.iterations >> level)
                    if level
                    else params.iterations,
                    "h": perimeter / n,
                    "target": perimeter / n,
                }
            )
        return out

    def build(self, b: Any, p: RepulsiveParams) -> Callable[[Any], None]:
        E, raw = b.E, b.raw
        pos = b.write("xy")
        nxt = b.scratch("next", wp.vec2, E * raw)
        tan = b.scratch("tangent", wp.vec2, E * raw)
        frozen = b.scratch("frozen", wp.int32, E)
        active, seeds, scale = b.active, b.seed, b.scale
        salt = b.salt("repulsive.init")
        rest = b.scratch("rest", float, E * raw)
        sched = self.schedule(p, scale)

        def enqueue(ctx: Any) -> None:
            ctx.launch(
                _k._rep_init_k,
                E * p.start_points,
                [seeds, active, salt, p.start_points, p.jitter, 0.3 * scale, raw, pos, frozen],
            )
            n0 = p.start_points
            ctx.launch(_k._rep_rest_k, E * n0, [pos, n0, raw, active, p.growth, rest])
            for li, lv in enumerate(sched):
                n = lv["n"]
                if li:
                    ctx.launch(_k._rep_subdivide_k, E, [pos, rest, n // 2, raw, active, frozen])
                step_args = [
                    pos,
                    tan,
                    n,
                    raw,
                    active,
                    frozen,
                    lv["h"],
                    rest,
                    p.step,
                    p.repulsion,
                    p.smoothing,
                    p.confine * scale,
                    nxt,
                ]

                def body(_i: int, n: int = n, step_args: list = step_args, h: float = lv["h"]):
                    ctx.launch(_k._rep_tangent_k, E * n, [pos, n, raw, active, frozen, tan])
                    ctx.launch(_k._rep_step_k, E * n, step_args)
                    ctx.launch(
                        _k._rep_commit_k, E, [pos, nxt, n, raw, active, frozen, p.tolerance * h]
                    )

                ctx.bounded_loop(lv["iterations"], body)
            ctx.launch(_k._rep_fit_k, E, [pos, raw, raw, active, scale])

        return enqueue


_TWO_PI = 2.0 * math.pi
