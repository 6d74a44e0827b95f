"""How the legacy samplers read their knobs from a config object."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...params import Params


def knob(config: Any, name: str, pcls: type[Params]) -> Any:
    """Returns ``name`` from ``config.generator_params`` (a Params instance or a dict), else
    from a legacy ``config`` attribute, else the default of ``pcls``."""
    gp = getattr(config, "generator_params", None)
    if isinstance(gp, Params) and name in type(gp).fields():
        return getattr(gp, name)
    if isinstance(gp, Mapping) and name in gp:
        return gp[name]
    if hasattr(config, name):
        return getattr(config, name)
    return pcls.fields()[name].default
