"""The notebook layer: forms made from declared parameters and the live ``explore`` view.

- ``params_form(P)``: controls for a Params class or instance (``form.value`` is a
  validated instance; ``form.observe(handler, names="value")``).
- ``graph_form(graph)``: the same for a graph's ``"node.param"`` parameters.
- ``kernel_form(kernel)``: the same for a kernel's specialize options and uniforms.
- ``explore(target)``: those controls beside a view that cooks on change in the
  background and draws envs, gates, live counts and the cook report in the browser
  (``TrackCanvas``; a PNG for saved notebooks); a graph whose cook reads ``cpu.read``
  digests is polled (``DigestPoller``, every 0.5 s while shown) and cooks when one moves;
  a track generator's view has a sweep mode (``SweepPanel``: ``track_gen.sweep`` of one
  field over its range, drawn as curves).
"""

from __future__ import annotations

from ._controls import FieldControl, control_class
from .canvas import TrackCanvas, env_metrics, show
from .clipboard import CopyButton
from .course_target import CourseTarget, course_target
from .form import ParamsForm, graph_form, params_form
from .frame import Frame, Gates, ReportRow, frame_from, read_outputs, report_rows
from .graph_target import GraphTarget
from .kernel_form import KernelForm, kernel_form
from .poll import DigestPoller
from .sweep_panel import SweepPanel
from .target import FunctionTarget, Target
from .targets import as_target
from .track_target import TrackTarget
from .view import ExploreView, explore
from .worker import CookLoop

__all__ = [
    "CookLoop",
    "CopyButton",
    "CourseTarget",
    "DigestPoller",
    "ExploreView",
    "FieldControl",
    "Frame",
    "FunctionTarget",
    "Gates",
    "GraphTarget",
    "KernelForm",
    "ParamsForm",
    "ReportRow",
    "SweepPanel",
    "Target",
    "TrackCanvas",
    "TrackTarget",
    "as_target",
    "control_class",
    "course_target",
    "env_metrics",
    "explore",
    "frame_from",
    "graph_form",
    "kernel_form",
    "params_form",
    "read_outputs",
    "report_rows",
    "show",
]
