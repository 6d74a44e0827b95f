"""The built-in gate generators (anchors Stages): ``arc_length``, ``curvature``, ``free``.

``register_builtins(registry)`` adds them to the registry's ``"gate_generator"`` kind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import GeneratorError
from ...params import Field, Params
from . import _kernels as _k
from .stage import GateLayout, GateStage


class ArcLengthParams(Params):
    """Parameters of ``arc_length``: gates evenly spread along the centerline's length."""

    owner = "arc_length"
    spacing: float = Field(
        0.5,
        bounds=(1e-3, None),
        soft=(0.05, 2.0),
        unit="world",
        doc="the smallest gap between gates along the track (the lap is split evenly)",
    )
    jitter: float = Field(
        0.2,
        bounds=(0.0, 0.95),
        dynamic=True,
        unit="x gap",
        doc="how far a gate strays along the track (fraction of the gap)",
    )
    min_count: int = Field(
        3, bounds=(1, 4096), soft=(1, 16), unit="gates", doc="fewest gates per env"
    )
    max_count: int = Field(
        24, bounds=(1, 4096), soft=(3, 64), unit="gates", doc="most gates per env"
    )


class ArcLength(GateStage):
    """``arc_length``: ``clamp(floor(L / spacing), min_count, max_count)`` gates at even arc
    intervals of the closed centerline (length ``L``), each shifted along the track by up to
    ``jitter / 2`` of the gap, in the direction of travel from point 0. ``jitter`` is
    dynamic (``GateGenerator.update`` changes it without a new recording). Stream:
    ``gates.arc_length``.
    """

    name = "arc_length"
    Params = ArcLengthParams
    reads = ("xy",)
    orderings = frozenset({"raw"})
    preferred = {"order": "raw", "normalize": None}

    def capacity(self, params: ArcLengthParams, layout: GateLayout) -> dict[str, int]:
        """Returns ``{"gates": max_count, "min_gates": min_count}``.

        Raises:
            GeneratorError: ``min_count > max_count``.
        """
        if params.min_count > params.max_count:
            raise GeneratorError(
                f"generator_params of 'arc_length' min_count: expected <= max_count="
                f"{params.max_count}, got {params.min_count}"
            )
        return {"gates": params.max_count, "min_gates": params.min_count}

    def build(self, b: Any, params: ArcLengthParams) -> Callable[[Any], None]:
        xy, count = b.write("anchors.xy"), b.write("anchors.count")
        center = b.read("xy")
        args = [center, b.num_points, b.seed, b.salt("gates.arc_length"), params.spacing]
        args += [b.param("jitter"), params.min_count, b.raw, xy, count]
        E = b.E

        def enqueue(ctx: Any) -> None:
            ctx.launch(_k._arc_gates_k, E, args)

        return enqueue


class CurvatureParams(Params):
    """Parameters of ``curvature``: gates at the apexes of the centerline's bends."""

    owner = "curvature"
    window: int = Field(
        4,
        bounds=(1, 64),
        soft=(1, 16),
        unit="points",
        doc="points each side over which the turn is summed",
    )
    threshold: float = Field(
        0.4,
        bounds=(0.0, None),
        soft=(0.0, 2.0),
        unit="rad",
        doc="the least turn over a window for a bend to get a gate",
    )
    max_count: int = Field(
        24, bounds=(1, 4096), soft=(3, 64), unit="gates", doc="most gates per env"
    )


class Curvature(GateStage):
    """``curvature``: a gate at each point whose turn, summed over ``window`` points each
    side, is a local extreme of its magnitude (strictly above the ``window`` points before
    it, at least the ``window`` after) and at least ``threshold``; in the direction of
    travel from point 0, the first ``max_count``.
    """

    name = "curvature"
    Params = CurvatureParams
    reads = ("xy",)
    orderings = frozenset({"raw"})
    preferred = {"order": "raw", "normalize": None}

    def capacity(self, params: CurvatureParams, layout: GateLayout) -> dict[str, int]:
        """Returns ``{"gates": max_count, "min_gates": 0}``."""
        return {"gates": params.max_count, "min_gates": 0}

    def build(self, b: Any, params: CurvatureParams) -> Callable[[Any], None]:
        xy, count = b.write("anchors.xy"), b.write("anchors.count")
        center = b.read("xy")
        n = b.num_points
        turn = b.scratch("turn", float, b.E * n)
        a1 = [center, n, params.window, turn]
        a2 = [center, turn, n, params.window, params.threshold, b.raw, xy, count]
        E = b.E

        def enqueue(ctx: Any) -> None:
            ctx.launch(_k._window_turn_k, E * n, a1)
            ctx.launch(_k._curvature_pick_k, E, a2)

        return enqueue


class FreeParams(Params):
    """Parameters of ``free``: random points of the unit square a minimum distance apart."""

    owner = "free"
    gates: int = Field(8, bounds=(1, 4096), soft=(3, 32), doc="gates wanted per env")
    min_distance: float = Field(
        0.4,
        bounds=(0.0, 2.0),
        soft=(0.0, 1.0),
        unit="x half-side",
        doc="least distance between two gates in the [-1, 1] square (x its half-side), "
        "before normalization",
    )
    tries: int = Field(
        16,
        bounds=(1, 1024),
        soft=(1, 64),
        unit="per gate",
        doc="candidate points drawn per wanted gate",
    )


class Free(GateStage):
    """``free``: dart throwing in ``[-1, 1]^2``: ``gates * tries`` candidates in turn, each
    kept when it is ``min_distance`` from every gate kept so far, until ``gates`` are kept
    (fewer when the candidates run out). Accepts every ordering (``ccw`` by default) and
    prefers ``normalize.extent``. Stream: ``gates.free``.
    """

    name = "free"
    Params = FreeParams
    preferred = {"order": "ccw", "normalize": "extent"}

    def capacity(self, params: FreeParams, layout: GateLayout) -> dict[str, int]:
        """Returns ``{"gates": gates, "min_gates": 1}`` (the first candidate is always kept)."""
        return {"gates": params.gates, "min_gates": 1}

    def build(self, b: Any, params: FreeParams) -> Callable[[Any], None]:
        xy, count = b.write("anchors.xy"), b.write("anchors.count")
        args = [b.seed, b.salt("gates.free"), params.gates, params.gates * params.tries]
        args += [params.min_distance, b.raw, xy, count]
        E = b.E

        def enqueue(ctx: Any) -> None:
            ctx.launch(_k._free_gates_k, E, args)

        return enqueue


BUILTINS = (ArcLength, Curvature, Free)


def register_builtins(registry: Any) -> None:
    """Adds the built-in gate generators to ``registry`` (replacing same names).

    They are anchors Stages, so ``registry.add`` files them under ``"gate_generator"``
    (``_registry.add_gate_stage`` checks a third party's spec; ``_registry`` imports this
    module, never the other way round)."""
    for cls in BUILTINS:
        registry.add(cls, replace=True, _builtin=True)


__all__ = [
    "BUILTINS",
    "ArcLength",
    "ArcLengthParams",
    "Curvature",
    "CurvatureParams",
    "Free",
    "FreeParams",
    "register_builtins",
]
