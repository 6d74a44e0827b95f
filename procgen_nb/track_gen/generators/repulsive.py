"""The ``repulsive`` generator: a loop grown under tangent-point repulsion.

A small random star polygon grows toward a target perimeter (edge springs whose rest
lengths are the initial edges' times ``growth``) while the discrete tangent-point energy
``sum_ij |T_i x (x_i - x_j)|^2 / |x_i - x_j|^4`` keeps distant parts apart, so it buckles
into a winding, non-self-intersecting track. It is relaxed coarse to fine (``levels``, the
points doubling by the 4-point interpolating scheme between levels), the relaxed loop is
refined ``refine`` times by the same scheme (smooth, through the relaxed points, O(n)),
and the result is fitted into ``[-scale, scale]``.

How the host-driven loop became recordable:

- the coarse-to-fine schedule (point counts, iterations per level, edge targets, step
  sizes) is computed on the host from the configuration alone, in ``build``;
- the readback-driven early exit became a per-env freeze on the device: ``_rep_step_k``
  freezes an env whose largest move fell below ``tolerance`` and skips a frozen env;
  subdividing to the next level unfreezes it;
- each level's growth loop is a ``ctx.bounded_loop`` over that freeze (a BOUNDED stage),
  one launch per step: one thread per env runs the whole step;
- the gradient is a hand-written adjoint summed per env over the pairs ``i < j`` in a
  fixed order (no ``atomic_add``), so the bytes are identical run to run.
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
    """Parameters of ``repulsive``.

    ``h``, the unit of several fields, is the level's edge scale: the target perimeter
    ``growth * 2 pi * 0.3 * scale`` over the level's point count.
    """

    owner = "repulsive"
    start_points: int = Field(
        16, bounds=(8, 64), unit="points", doc="points of the initial star polygon"
    )
    levels: int = Field(
        2, bounds=(1, 4), doc="relaxed levels, coarse to fine (points double each level)"
    )
    iterations: int = Field(
        16,
        bounds=(1, 200),
        soft=(4, 64),
        unit="steps",
        doc="descent steps of the first level (level L runs iterations >> L, at least 1)",
    )
    refine: int = Field(
        3, bounds=(0, 4), doc="4-point subdivisions of the relaxed loop (points double each)"
    )
    growth: float = Field(
        1.5, bounds=(1.0, 6.0), unit="x initial edge", doc="rest length of each edge"
    )
    repulsion: float = Field(1.0, bounds=(0.0, 10.0), doc="weight of the tangent-point energy")
    smoothing: float = Field(0.05, bounds=(0.0, 2.0), doc="weight of the Laplacian smoothing")
    step: float = Field(
        0.45, bounds=(0.01, 1.0), unit="h", doc="largest move per step (h: the edge scale)"
    )
    tolerance: float = Field(
        0.002, bounds=(0.0, 0.5), unit="h", doc="an env freezes when no point moved more"
    )
    jitter: float = Field(
        0.75, bounds=(0.0, 0.9), unit="x radius", doc="radius jitter of the initial polygon"
    )
    confine: float = Field(
        1.0, bounds=(0.1, 2.0), unit="x scale", doc="radius of the soft disc the loop grows in"
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
        return params.start_points << (params.levels - 1 + params.refine)

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
        bufs = {
            "xy": b.write("xy"),
            "grad": b.scratch("grad", wp.vec2, E * raw),
            "tangent": b.scratch("tangent", wp.vec2, E * raw),
            "dmin": b.scratch("dmin", float, E * raw),
            "rest": b.scratch("rest", float, E * raw),
            "frozen": b.scratch("frozen", wp.int32, E),
        }
        seeds, active, salt, scale = b.seed, b.active, b.salt("repulsive.init"), b.scale

        def enqueue(ctx: Any) -> None:
            _enqueue(ctx, p, scale, E, raw, seeds, active, salt, bufs)

        return enqueue


def _enqueue(
    ctx: Any,
    p: RepulsiveParams,
    scale: float,
    E: int,
    raw: int,
    seeds: wp.array,
    active: wp.array,
    salt: int,
    bufs: dict[str, wp.array],
) -> None:
    """Emits every launch of ``repulsive`` (the Stage and its 0.1-style pair share it):
    init, rest lengths, per level a subdivision (after the first) and a bounded loop of
    steps, the refinements, the fit. ``bufs``: ``xy`` (the raw loop), ``grad``,
    ``tangent``, ``dmin``, ``rest`` (``E * raw`` each) and ``frozen`` (``E``)."""
    pos, rest, frozen = bufs["xy"], bufs["rest"], bufs["frozen"]
    n0 = p.start_points
    init = [seeds, active, salt, n0, p.jitter, 0.3 * scale, raw, pos, frozen]
    ctx.launch(_k._rep_init_k, E * n0, init)
    ctx.launch(_k._rep_rest_k, E * n0, [pos, n0, raw, active, p.growth, rest])
    sched = Repulsive.schedule(p, scale)
    for li, lv in enumerate(sched):
        n, h = lv["n"], lv["h"]
        if li:
            sub = [pos, rest, n // 2, raw, active, frozen, _k.FOUR_POINT]
            ctx.launch(_k._rep_subdivide_k, E, sub)
        step = [pos, bufs["grad"], bufs["tangent"], bufs["dmin"], rest, n, raw, active]
        step += [frozen, h, p.step, p.repulsion, p.smoothing, p.confine * scale]
        step += [p.tolerance * h]

        def body(_i: int, step: list = step) -> None:
            ctx.launch(_k._rep_step_k, E, step)

        ctx.bounded_loop(lv["iterations"], body)
    n = sched[-1]["n"]
    for _ in range(p.refine):
        ctx.launch(_k._rep_subdivide_k, E, [pos, rest, n, raw, active, frozen, _k.FOUR_POINT])
        n *= 2
    ctx.launch(_k._rep_fit_k, E, [pos, raw, raw, active, scale])


_TWO_PI = 2.0 * math.pi
