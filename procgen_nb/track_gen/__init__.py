"""track_gen: closed track centerlines for thousands of environments at once.

``presets.track(generator="polar", num_envs=1024)`` builds a ``TrackGenerator``;
``generate()`` returns the device arrays (``xy [E*N]`` vec2, ``valid [E]`` int32, per-point
attributes). Generators are ``Stage`` classes or ``GeneratorSpec``s registered in
``plugin.registry`` (entry-point group ``procgen_nb.track_gen``); ``testing.check_generator``
checks one against the contract. ``track_gen.export`` (imported on its own: it loads the
mesh library and Pillow) writes tracks in simulators' and planners' formats.
"""

from __future__ import annotations

from . import (
    _builtins,  # noqa: F401  (first: gives the registry its built-ins' loader)
    curriculum,
    dataset,
    exec,
    gates,
    metrics,
    ops,
    plugin,
    presets,
    racing,
    testing,
    widths,
)
from .config import TrackGenConfig, ValidityParams
from .curriculum import MetricBand, difficulty_band
from .gates import Course, GateGenConfig, GateGenerator, build
from .pipeline import REASONS, TrackGenerator, TrackResult
from .racing import RacingLine, VehicleParams, racing_line
from .sweep import SweepResult, sweep
from .widths import WidthParams

__all__ = [
    "Course",
    "GateGenConfig",
    "GateGenerator",
    "MetricBand",
    "REASONS",
    "RacingLine",
    "SweepResult",
    "TrackGenConfig",
    "TrackGenerator",
    "TrackResult",
    "ValidityParams",
    "VehicleParams",
    "WidthParams",
    "build",
    "curriculum",
    "dataset",
    "difficulty_band",
    "exec",
    "gates",
    "metrics",
    "ops",
    "plugin",
    "presets",
    "racing",
    "racing_line",
    "sweep",
    "testing",
    "widths",
]
