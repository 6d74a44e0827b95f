"""Gates and courses: gate generators as anchors Stages, ``GateGenerator``, ``Course``.

``GateGenerator(GateGenConfig(generator="free"))`` makes gate layouts; ``build(...)``
makes a ``Course``: a centerline, its gates and its z profile per env, with the validity
of both. Gate generators are anchors Stages (``GateStage``) or deprecated 0.1
``GateGeneratorSpec``s, registered under the registry's ``"gate_generator"`` kind;
``check_gate_generator`` checks one against the contract.
"""

from __future__ import annotations

from ._registry import gate_generators, get_gate_generator
from .builtins import (
    BUILTINS,
    ArcLength,
    ArcLengthParams,
    Curvature,
    CurvatureParams,
    Free,
    FreeParams,
    register_builtins,
)
from .config import ORDERINGS, GateGenConfig
from .course import COURSE_REASONS, Course, build
from .generator import GateGenerator, GateResult, as_gate_stage
from .legacy import LegacyGateOut
from .stage import GateLayout, GateStage
from .testing import check_all_gates, check_gate_generator

__all__ = [
    "ArcLength",
    "ArcLengthParams",
    "BUILTINS",
    "COURSE_REASONS",
    "Course",
    "Curvature",
    "CurvatureParams",
    "Free",
    "FreeParams",
    "GateGenConfig",
    "GateGenerator",
    "GateLayout",
    "GateResult",
    "GateStage",
    "LegacyGateOut",
    "ORDERINGS",
    "as_gate_stage",
    "build",
    "check_all_gates",
    "check_gate_generator",
    "gate_generators",
    "get_gate_generator",
    "register_builtins",
]
