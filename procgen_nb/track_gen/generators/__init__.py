"""The built-in generators (Stage classes) and the z profile stage.

``register_builtins(registry)`` adds them; ``track_gen._builtins`` has the registry call it
on first use.
"""

from __future__ import annotations

from typing import Any

from .basic import Checkpoint, CheckpointParams, Polar, PolarParams, ZProfile, ZProfileParams
from .repulsive import Repulsive, RepulsiveParams
from .sampled import Bezier, BezierParams, Hull, HullParams, Voronoi, VoronoiParams

#: the built-in generators (Stage classes)
BUILTINS = (Bezier, Checkpoint, Hull, Polar, Repulsive, Voronoi)


def register_builtins(registry: Any) -> None:
    """Adds the built-in generators and stages to ``registry`` (replacing same names)."""
    for cls in (*BUILTINS, ZProfile):
        registry.add(cls, replace=True, _builtin=True)


__all__ = [
    "BUILTINS",
    "Bezier",
    "BezierParams",
    "Checkpoint",
    "CheckpointParams",
    "Hull",
    "HullParams",
    "Polar",
    "PolarParams",
    "Repulsive",
    "RepulsiveParams",
    "Voronoi",
    "VoronoiParams",
    "ZProfile",
    "ZProfileParams",
    "register_builtins",
]
