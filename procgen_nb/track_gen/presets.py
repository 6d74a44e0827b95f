"""Ready-made entry points: ``presets.track(generator=..., generator_params={...}, **config)``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..errors import ParamsError
from .config import TrackGenConfig
from .pipeline import TrackGenerator


def track(
    generator: str = "polar",
    generator_params: Mapping[str, Any] | Any = None,
    **config: Any,
) -> TrackGenerator:
    """Builds a ``TrackGenerator`` for ``generator`` (warmed up: kernels loaded, first batch made).

    Args:
        generator: a registered generator name (``"polar"``, ``"acme.wobbly"``).
        generator_params: the generator's Params fields (a dict or an instance).
        **config: any other ``TrackGenConfig`` field (``num_envs``, ``num_points``, ...).

    Raises:
        ParamsError: an unknown config field or a refused value.
        GeneratorError: an unknown generator or refused generator_params.
    """
    names = {f.name for f in dataclasses.fields(TrackGenConfig)}
    unknown = sorted(set(config) - names)
    if unknown:
        raise ParamsError(
            f"presets.track: expected TrackGenConfig fields among {sorted(names)}, got {unknown}"
        )
    cfg = TrackGenConfig(generator=generator, generator_params=generator_params, **config)
    return TrackGenerator(cfg)


from .gates.presets import gates  # noqa: E402  (gates builds on this module's track)

__all__ = ["gates", "track"]
