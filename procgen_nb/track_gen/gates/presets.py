"""``gates(generator=..., order=..., **config)``: a ready ``GateGenerator`` (``presets.gates``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ...errors import GeneratorError, ParamsError
from ..plugin import GateGeneratorSpec, registry
from ._registry import lookup
from .config import GateGenConfig
from .generator import GateGenerator


def gates(
    generator: Any = "free",
    generator_params: Mapping[str, Any] | Any = None,
    order: str | None = None,
    *,
    track: Any = None,
    **config: Any,
) -> GateGenerator:
    """Builds a ``GateGenerator`` (warmed up: kernels loaded, first batch made).

    Args:
        generator: a registered gate generator's name (``"free"``, ``"arc_length"``), an
            anchors Stage or a ``GateGeneratorSpec``.
        generator_params: its Params fields (a dict or an instance).
        order: the gate ordering (``"ccw"``, ``"random_pairs"``, ``"raw"``); None lets the
            generator choose. Refused for a legacy ``GateGeneratorSpec``: set
            ``gate_ordering=`` instead.
        track: the ``TrackGenerator`` a generator that reads centerlines places gates on.
        **config: any other ``GateGenConfig`` field (``num_envs``, ``max_gates``, ...).

    Raises:
        ParamsError: an unknown config field or a refused value.
        GeneratorError: an unknown generator, refused generator_params, an unsupported
            ordering, or ``order=`` for a legacy generator.
    """
    names = {f.name for f in dataclasses.fields(GateGenConfig)} - {"generator"}
    unknown = sorted(set(config) - names)
    if unknown:
        raise ParamsError(
            f"presets.gates: expected GateGenConfig fields among {sorted(names)}, got {unknown}"
        )
    spec = lookup(registry, generator) if isinstance(generator, str) else generator
    name = generator if isinstance(generator, str) else getattr(spec, "name", "")
    if order is not None:
        if isinstance(spec, GateGeneratorSpec):
            raise GeneratorError(
                f"presets.gates order: expected None for the legacy GateGeneratorSpec {name!r} "
                f"(choose its ordering with GateGenConfig(gate_ordering=...)), got {order!r}"
            )
        if config.get("gate_ordering") is not None and config["gate_ordering"] != order:
            raise ParamsError(
                f"presets.gates order: expected the same value as gate_ordering="
                f"{config['gate_ordering']!r}, got {order!r}"
            )
        config["gate_ordering"] = order
    cfg = GateGenConfig(generator=name or "gates", generator_params=generator_params, **config)
    return GateGenerator(cfg, generator=spec, track=track)


__all__ = ["gates"]
