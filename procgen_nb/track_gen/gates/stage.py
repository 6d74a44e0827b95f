"""``GateStage``: the base of a gate generator written as an anchors ``Stage``.

A gate generator writes ``anchors.xy`` (``[E*A]`` vec2 at its own stride ``A``,
``per="anchors"``) and ``anchors.count`` (``[E]`` int32); the gate pipeline's stages follow
it: ``order.raw``, ``order.ccw`` (``ops.angle_sort``) or ``order.random_pairs``, then
``normalize.extent`` when the generator prefers it, then the finishing stage (position,
heading, size, count and validity at the outputs' stride ``max_gates``).

It declares:

- ``capacity(params, layout) -> {"gates": A, "min_gates": k}``: its stride ``A`` (the most
  gates it writes per env) and the fewest it writes (``k <= A``);
- the orderings it accepts: ``orderings`` (a set of ``ORDERINGS``), or all of them but
  ``excluded_orderings``;
- ``preferred = {"order": ..., "normalize": "extent" | None}``: the ordering it is made for
  (one it accepts) and whether ``normalize.extent`` fits its layout into ``[-scale, scale]``;
- ``reads = ("xy",)`` when it places gates on a centerline (``b.read("xy")``,
  ``[E*layout.num_points]`` vec2); a ``Course`` then makes the centerline first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from ...errors import GeneratorError
from ...params import Params
from ..plugin import Stage
from .config import ORDERINGS


@dataclasses.dataclass(frozen=True)
class GateLayout:
    """What a gate generator's ``capacity`` may size itself from.

    Attributes:
        num_envs: E. scale: ``GateGenConfig.scale``. max_gates: the outputs' stride G.
        num_points: points per env of the centerline the generator reads (0 without one).
    """

    num_envs: int
    scale: float
    max_gates: int
    num_points: int = 0


class GateStage(Stage):
    """Base of an anchors Stage (a gate generator); see the module docstring."""

    phase: ClassVar[str] = "anchors"
    per: ClassVar[str] = "anchors"
    writes: ClassVar[tuple[str, ...]] = ("anchors.xy", "anchors.count")
    reads: ClassVar[tuple[str, ...]] = ()
    orderings: ClassVar[frozenset[str] | None] = None
    excluded_orderings: ClassVar[frozenset[str]] = frozenset()
    preferred: ClassVar[Mapping[str, Any]] = {"order": "ccw", "normalize": "extent"}

    def capacity(self, params: Params | None, layout: GateLayout) -> dict[str, int]:
        """Returns ``{"gates": A, "min_gates": k}`` for ``params`` and ``layout``."""
        raise GeneratorError(
            f"{type(self).__name__}.capacity: expected an override in the gate Stage, got none"
        )


def supported_orderings(stage: Any) -> frozenset[str]:
    """Returns the orderings an anchors Stage accepts (``orderings`` or all but the excluded).

    Raises:
        GeneratorError: a declared ordering the pipeline does not know.
    """
    name = getattr(stage, "name", "") or type(stage).__name__
    declared = getattr(stage, "orderings", None)
    excluded = frozenset(getattr(stage, "excluded_orderings", frozenset()) or ())
    if declared is not None:
        got = frozenset(declared)
        bad = sorted(got - set(ORDERINGS))
        field = "orderings"
    else:
        got = frozenset(ORDERINGS) - excluded
        bad = sorted(excluded - set(ORDERINGS))
        field = "excluded_orderings"
    if bad:
        raise GeneratorError(
            f"gate generator {name!r} {field}: expected names among {list(ORDERINGS)}, got {bad}"
        )
    if not got:
        raise GeneratorError(
            f"gate generator {name!r} orderings: expected at least one of {list(ORDERINGS)}, "
            "got none"
        )
    return got


def resolve_ordering(
    name: str, supported: frozenset[str], wanted: str | None, preferred: str | None = None
) -> str:
    """Returns the ordering to run: ``wanted``; for None the stage's ``preferred["order"]``
    when it accepts it, else ``"ccw"`` when supported, else the first of ``supported`` sorted.

    Raises:
        GeneratorError: ``wanted`` is not in ``supported`` (a ``ValueError``).
    """
    if wanted is None:
        if preferred in supported:
            return str(preferred)
        return "ccw" if "ccw" in supported else sorted(supported)[0]
    if wanted not in supported:
        raise GeneratorError(
            f"gate_ordering of {name!r}: expected one of {sorted(supported)}, got {wanted!r}"
        )
    return wanted


def check_capacity(name: str, cap: Any, min_gates: int, max_gates: int) -> tuple[int, int]:
    """Returns ``(A, k)`` from a ``capacity`` answer, refusing one outside the config's range.

    Raises:
        GeneratorError: not a ``{"gates": int, "min_gates": int}`` with ``0 <= k <= A``, or
            ``A`` outside ``min_gates..max_gates`` (a ``ValueError``).
    """
    if not isinstance(cap, Mapping) or set(cap) != {"gates", "min_gates"}:
        raise GeneratorError(
            f"gate generator {name!r} capacity: expected {{'gates': A, 'min_gates': k}}, "
            f"got {cap!r}"
        )
    a, k = cap["gates"], cap["min_gates"]
    if any(isinstance(v, bool) or not isinstance(v, int) for v in (a, k)) or not 0 <= k <= a:
        raise GeneratorError(
            f"gate generator {name!r} capacity: expected integers 0 <= min_gates <= gates, "
            f"got {dict(cap)!r}"
        )
    if not min_gates <= a <= max_gates:
        raise GeneratorError(
            f"gate generator {name!r} capacity: expected gates in [min_gates={min_gates}, "
            f"max_gates={max_gates}], got {a}"
        )
    return int(a), int(k)


def is_gate_stage(obj: Any) -> bool:
    """True for an anchors Stage class or instance."""
    if isinstance(obj, type):
        return issubclass(obj, Stage) and getattr(obj, "phase", "") == "anchors"
    return isinstance(obj, Stage) and getattr(obj, "phase", "") == "anchors"


__all__ = [
    "GateLayout",
    "GateStage",
    "check_capacity",
    "is_gate_stage",
    "resolve_ordering",
    "supported_orderings",
]
