"""The adapter stage that runs a 0.1 ``GateGeneratorSpec`` (deprecated until 1.0).

Binding a spec (a ``GateGenerator``, a ``Course``, ``build`` or the conformance kit)
emits one ``DeprecationWarning`` per spec name, attributed to the caller's code;
registering one is silent. The spec's ``generate(seeds_wp, config, out, scratch, ctx=None)``
writes ``out.position`` (``[E * config.max_gates]`` vec2, NaN past each env's count) and
``out.count`` (``[E]`` int32) in the configured order: no order or normalize stage
follows it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import warp as wp

from ...errors import GeneratorError
from ...params import Params
from .._spec_stage import _check_legacy_stream, _legacy_lock
from ..plugin import CaptureClass, GateGeneratorSpec
from ._warn import warn_once
from .config import ORDERINGS
from .stage import GateLayout, GateStage


@dataclasses.dataclass
class LegacyGateOut:
    """The ``out`` a legacy ``generate`` writes.

    Attributes:
        position: ``[E * max_gates]`` vec2 plan-view gates, NaN past each env's count.
        count: ``[E]`` int32 real gate count per env.
    """

    position: wp.array
    count: wp.array


def warn_bound(spec: GateGeneratorSpec) -> None:
    """Emits the ``DeprecationWarning`` of binding ``spec`` (once per name)."""
    warn_once(
        f"gate:{spec.name}",
        f"GateGeneratorSpec {spec.name!r} is deprecated (the 0.1 gate ABI, removed in 1.0): "
        "write an anchors Stage (see 'Porting a GateGeneratorSpec')",
    )


def legacy_orderings(spec: GateGeneratorSpec) -> frozenset[str]:
    """Returns ``spec.supported_orderings`` checked against the known orderings.

    Raises:
        GeneratorError: not a non-empty set of ``ORDERINGS`` names.
    """
    got = spec.supported_orderings
    if isinstance(got, str) or not got or not set(got) <= set(ORDERINGS):
        raise GeneratorError(
            f"gate generator {spec.name!r} supported_orderings: expected a non-empty frozenset "
            f"of {list(ORDERINGS)}, got {got!r}"
        )
    return frozenset(got)


class LegacyGateStage(GateStage):
    """Runs a ``GateGeneratorSpec`` as an anchors stage at the stride ``config.max_gates``.

    Args:
        spec: the spec; ``bind(config)`` gives it the resolved config before ``capacity``.

    Raises:
        GeneratorError: a Params class with a dynamic field, or unknown orderings.
    """

    preferred = {"order": None, "normalize": None}

    def __init__(self, spec: GateGeneratorSpec):
        pcls = spec.params
        if pcls is not None and isinstance(pcls, type) and issubclass(pcls, Params):
            dyn = pcls.dynamic_fields()
            if dyn:
                raise GeneratorError(
                    f"{spec.name} params: expected static fields only in a GateGeneratorSpec's "
                    f"Params (a dynamic field needs an anchors Stage and b.param), got dynamic {dyn}"
                )
        self.spec = spec
        self.name = spec.name  # type: ignore[misc]
        self.Params = spec.params  # type: ignore[misc]
        self.capture = CaptureClass.GRAPH if spec.capturable else CaptureClass.HOST  # type: ignore[misc]
        self.orderings = legacy_orderings(spec)  # type: ignore[misc]
        self.config: Any = None

    def bind(self, config: Any) -> None:
        """Keeps the resolved config (gate_ordering and generator_params resolved)."""
        self.config = config

    def capacity(self, params: Params | None, layout: GateLayout) -> dict[str, int]:
        """Returns ``{"gates": spec.max_gates(config), "min_gates": 0}``.

        Raises:
            GeneratorError: ``max_gates`` does not return an integer.
        """
        got = self.spec.max_gates(self.config)
        if isinstance(got, bool) or not isinstance(got, int):
            raise GeneratorError(
                f"gate generator {self.name!r} max_gates: expected an int, got {got!r}"
            )
        return {"gates": int(got), "min_gates": 0}

    def build(self, b: Any, params: Params | None) -> Callable[[Any], None]:
        spec, cfg = self.spec, b.config
        scratch = spec.alloc_scratch(cfg)
        out = LegacyGateOut(position=b.write("anchors.xy"), count=b.write("anchors.count"))
        seeds = b.seed

        def enqueue(ctx: Any) -> None:
            if spec.accepts_ctx:
                spec.generate(seeds, cfg, out, scratch, ctx=ctx)
                return
            _check_legacy_stream(ctx, spec.name)
            with _legacy_lock, ctx.scope():
                spec.generate(seeds, cfg, out, scratch)

        return enqueue


__all__ = ["LegacyGateOut", "LegacyGateStage", "legacy_orderings", "warn_bound"]
