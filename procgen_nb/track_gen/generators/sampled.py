"""The ``bezier``, ``hull`` and ``voronoi`` generators, built from the ops library."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import warp as wp

from ...errors import GeneratorError
from ...params import Field, Params
from .. import ops
from ..plugin import _BuiltinStage
from . import _kernels as _k
from . import _repair_kernels as _rk

#: the help of the ``repair`` switch, the same for the three generators that have it
_REPAIR_DOC = (
    "make the control polygon drivable before the spline: merge points closer than "
    "spacing, pull in corners tighter than corner_radius, clamp the spline's handles "
    "(False: the 0.1 tracks, which the default validity rejects far more often)"
)


def _switch() -> Field:
    return Field(True, doc=_REPAIR_DOC)


def _spacing() -> Field:
    return Field(
        0.1,
        bounds=(0.0, 2.0),
        unit="x scale",
        doc="with repair: control points closer than this are merged (2 x the default track width)",
    )


def _corner_radius() -> Field:
    return Field(
        0.12,
        bounds=(0.0, 2.0),
        unit="x scale",
        doc="with repair: corners whose fillet within half their shorter edge has a smaller "
        "radius are pulled in (the spline turns tighter than that fillet)",
    )


def _repair(ctx: Any, b: Any, p: Any, ctrl: Any, ctrl_count: Any, kmax: int, tmp: Any) -> None:
    """Launches the corner repair on ``ctrl`` (``kmax`` per env) in place."""
    args = [b.active, ctrl, ctrl_count, kmax, p.spacing * b.scale, p.corner_radius * b.scale, tmp]
    ctx.launch(_rk._round_corners_k, b.E, args)


def _need(cond: bool, name: str, expected: str, got: Any) -> None:
    if not cond:
        raise GeneratorError(f"generator_params of {name!r}: expected {expected}, got {got}")


class BezierParams(Params):
    """Parameters of ``bezier``: corners in distinct grid cells, sorted by angle."""

    owner = "bezier"
    min_corners: int = Field(5, bounds=(3, 32), doc="fewest corners")
    max_corners: int = Field(10, bounds=(3, 32), doc="most corners")
    grid: int = Field(4, bounds=(2, 12), unit="cells", doc="cells per side of the corner grid")
    jitter: float = Field(
        0.8, bounds=(0.0, 1.0), unit="x cell", doc="corner jitter inside its cell (x cell side)"
    )
    tension: float = Field(1.0, bounds=(0.0, 2.0), doc="tangent handle length (1: Catmull-Rom)")
    repair: bool = _switch()
    spacing: float = _spacing()
    corner_radius: float = _corner_radius()


class Bezier(_BuiltinStage):
    """``bezier``: a chain of cubic Beziers through corners sampled in distinct grid cells
    (``ops.sample_counts``, ``grid_cells``, ``sample_grid_points``, ``angle_sort``).
    Streams: ``bezier.count``, ``bezier.cells``, ``bezier.points``.

    With ``repair`` (the default) the control polygon is repaired before the spline (close
    points merged, tight corners pulled in, handles clamped: ``_repair_kernels``), so that
    nearly every track passes the default validity; ``repair=False`` gives the 0.1 tracks.
    """

    name = "bezier"
    Params = BezierParams
    writes = ("xy", "count", "valid")

    def raw_points(self, config: Any, params: BezierParams) -> int:
        return params.max_corners * max(4, math.ceil(config.num_points / params.min_corners))

    def build(self, b: Any, p: BezierParams) -> Callable[[Any], None]:
        _need(
            p.min_corners <= p.max_corners,
            "bezier",
            "min_corners <= max_corners",
            (p.min_corners, p.max_corners),
        )
        _need(
            p.grid * p.grid >= p.max_corners,
            "bezier",
            "grid*grid >= max_corners",
            (p.grid, p.max_corners),
        )
        E, mx, g = b.E, p.max_corners, p.grid
        samples = b.raw // mx
        xy, count, valid = b.write("xy"), b.write("count"), b.write("valid")
        counts = b.scratch("counts", wp.int32, E)
        perm = b.scratch("perm", wp.int32, E * g * g)
        cells = b.scratch("cells", wp.int32, E * mx)
        corners = b.scratch("corners", wp.vec2, E * mx)
        s_count, s_cells, s_pts = (
            b.salt("bezier.count"),
            b.salt("bezier.cells"),
            b.salt("bezier.points"),
        )
        seed, scale, raw, active = b.seed, b.scale, b.raw, b.active
        tmp = b.scratch("repair", wp.vec2, E * mx) if p.repair else None
        chain = _rk._smooth_chain_k if p.repair else _k._bezier_chain_k

        def enqueue(ctx: Any) -> None:
            ops.sample_counts(ctx, seed, s_count, p.min_corners, p.max_corners, counts)
            ops.grid_cells(ctx, seed, s_cells, counts, g, perm, cells, mx)
            ops.sample_grid_points(ctx, seed, s_pts, cells, counts, g, p.jitter, scale, corners, mx)
            ops.angle_sort(ctx, corners, counts, mx)
            if tmp is not None:
                _repair(ctx, b, p, corners, counts, mx, tmp)
            ctx.launch(
                chain,
                E * raw,
                [corners, counts, mx, samples, p.tension, active, raw, xy, count, valid],
            )

        return enqueue


class HullParams(Params):
    """Parameters of ``hull``: random points, their convex hull, displaced midpoints."""

    owner = "hull"
    min_points: int = Field(8, bounds=(4, 64), doc="fewest random points")
    max_points: int = Field(16, bounds=(4, 64), doc="most random points")
    grid: int = Field(6, bounds=(2, 16), unit="cells", doc="cells per side of the point grid")
    displacement: float = Field(
        0.35,
        bounds=(0.0, 1.0),
        unit="x edge",
        doc="midpoint displacement along the edge normal (x edge length)",
    )
    repair: bool = _switch()
    spacing: float = _spacing()
    corner_radius: float = _corner_radius()


class Hull(_BuiltinStage):
    """``hull``: the convex hull of random points, a displaced midpoint on every edge, joined
    by a closed Catmull-Rom spline. Streams: ``hull.count``, ``hull.cells``, ``hull.points``,
    ``hull.displace``.

    With ``repair`` (the default) the control polygon is repaired before the spline (close
    points merged, tight corners pulled in, handles clamped: ``_repair_kernels``), so that
    nearly every track passes the default validity; ``repair=False`` gives the 0.1 tracks.
    """

    name = "hull"
    Params = HullParams
    writes = ("xy", "count", "valid")

    def raw_points(self, config: Any, params: HullParams) -> int:
        kmax = 2 * params.max_points
        return kmax * max(2, math.ceil(config.num_points / 6))

    def build(self, b: Any, p: HullParams) -> Callable[[Any], None]:
        _need(
            p.min_points <= p.max_points,
            "hull",
            "min_points <= max_points",
            (p.min_points, p.max_points),
        )
        _need(
            p.grid * p.grid >= p.max_points,
            "hull",
            "grid*grid >= max_points",
            (p.grid, p.max_points),
        )
        E, mx, g = b.E, p.max_points, p.grid
        kmax = 2 * mx
        samples = b.raw // kmax
        xy, count, valid = b.write("xy"), b.write("count"), b.write("valid")
        counts = b.scratch("counts", wp.int32, E)
        perm = b.scratch("perm", wp.int32, E * g * g)
        cells = b.scratch("cells", wp.int32, E * mx)
        pts = b.scratch("points", wp.vec2, E * mx)
        used = b.scratch("hull", wp.int32, E * mx)
        ctrl = b.scratch("ctrl", wp.vec2, E * kmax)
        ctrl_count = b.scratch("ctrl_count", wp.int32, E)
        salts = [b.salt(s) for s in ("hull.count", "hull.cells", "hull.points", "hull.displace")]
        tmp = b.scratch("repair", wp.vec2, E * kmax) if p.repair else None
        seed, scale, raw, active = b.seed, b.scale, b.raw, b.active

        def enqueue(ctx: Any) -> None:
            ops.sample_counts(ctx, seed, salts[0], p.min_points, p.max_points, counts)
            ops.grid_cells(ctx, seed, salts[1], counts, g, perm, cells, mx)
            ops.sample_grid_points(ctx, seed, salts[2], cells, counts, g, 1.0, scale, pts, mx)
            ctx.launch(
                _k._hull_k,
                E,
                [
                    seed,
                    active,
                    salts[3],
                    pts,
                    counts,
                    mx,
                    p.displacement,
                    ctrl,
                    ctrl_count,
                    used,
                    valid,
                ],
            )
            if tmp is None:
                a2 = [ctrl, ctrl_count, kmax, samples, active, raw, xy, count]
                ctx.launch(_k._closed_cr_k, E * raw, a2)
                return
            _repair(ctx, b, p, ctrl, ctrl_count, kmax, tmp)
            a2 = [ctrl, ctrl_count, kmax, samples, 1.0, active, raw, xy, count, valid]
            ctx.launch(_rk._smooth_chain_k, E * raw, a2)

        return enqueue


class VoronoiParams(Params):
    """Parameters of ``voronoi``: the Voronoi cells a wobbly ring passes through."""

    owner = "voronoi"
    grid: int = Field(
        6, bounds=(3, 12), unit="cells", doc="Voronoi sites per side (one per jittered cell)"
    )
    jitter: float = Field(
        0.9, bounds=(0.0, 1.0), unit="x cell", doc="site jitter inside its cell (x cell side)"
    )
    ring: float = Field(
        0.6, bounds=(0.2, 0.9), unit="x scale", doc="radius of the ring walked (x scale)"
    )
    wobble: float = Field(
        0.25,
        bounds=(0.0, 0.6),
        unit="x ring",
        doc="how far the ring strays from a circle (x its radius)",
    )
    ring_samples: int = Field(
        64, bounds=(12, 256), unit="points", doc="points of the ring tested for their cell"
    )
    repair: bool = _switch()
    spacing: float = _spacing()
    corner_radius: float = _corner_radius()


class Voronoi(_BuiltinStage):
    """``voronoi``: walks a wobbly ring through a jittered-grid Voronoi diagram and joins the
    sites of the cells it crosses, in order, by a closed Catmull-Rom spline.
    Streams: ``voronoi.sites``, ``voronoi.ring``.

    With ``repair`` (the default) the control polygon is repaired before the spline (close
    points merged, tight corners pulled in, handles clamped: ``_repair_kernels``), so that
    nearly every track passes the default validity; ``repair=False`` gives the 0.1 tracks.
    """

    name = "voronoi"
    Params = VoronoiParams
    writes = ("xy", "count", "valid")

    def raw_points(self, config: Any, params: VoronoiParams) -> int:
        return params.ring_samples * max(4, math.ceil(2 * config.num_points / params.ring_samples))

    def build(self, b: Any, p: VoronoiParams) -> Callable[[Any], None]:
        E, m = b.E, p.ring_samples
        samples = b.raw // m
        xy, count, valid = b.write("xy"), b.write("count"), b.write("valid")
        ctrl = b.scratch("anchors", wp.vec2, E * m)
        ctrl_count = b.scratch("anchor_count", wp.int32, E)
        a1 = [
            b.seed,
            b.active,
            b.salt("voronoi.sites"),
            b.salt("voronoi.ring"),
            p.grid,
            p.jitter,
            p.ring,
            p.wobble,
            m,
            b.scale,
            ctrl,
            ctrl_count,
            valid,
        ]
        raw = b.raw
        tmp = b.scratch("repair", wp.vec2, E * m) if p.repair else None
        if tmp is None:
            a2 = [ctrl, ctrl_count, m, samples, b.active, raw, xy, count]
        else:
            a2 = [ctrl, ctrl_count, m, samples, 1.0, b.active, raw, xy, count, valid]
        chain = _k._closed_cr_k if tmp is None else _rk._smooth_chain_k

        def enqueue(ctx: Any) -> None:
            ctx.launch(_k._voronoi_sites_k, E, a1)
            if tmp is not None:
                _repair(ctx, b, p, ctrl, ctrl_count, m, tmp)
            ctx.launch(chain, E * raw, a2)

        return enqueue
