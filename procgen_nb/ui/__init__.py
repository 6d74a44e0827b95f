"""The notebook layer: forms made from declared parameters and the live ``explore`` view.

- ``params_form(P)``: controls for a Params class or instance (``form.value`` is a
  validated instance; ``form.observe(handler, names="value")``).
- ``graph_form(graph)``: the same for a graph's ``"node.param"`` parameters.
- ``explore(target)``: those controls beside a view that cooks on change in the
  background and draws envs, gates, live counts and the cook report.
"""

from __future__ import annotations

from ._controls import FieldControl, control_class
from .form import ParamsForm, graph_form, params_form
from .frame import Frame, Gates, ReportRow, frame_from, report_rows
from .targets import FunctionTarget, GraphTarget, Target, TrackTarget, as_target
from .view import ExploreView, explore
from .worker import CookLoop

__all__ = [
    "CookLoop",
    "ExploreView",
    "FieldControl",
    "Frame",
    "FunctionTarget",
    "Gates",
    "GraphTarget",
    "ParamsForm",
    "ReportRow",
    "Target",
    "TrackTarget",
    "as_target",
    "control_class",
    "explore",
    "frame_from",
    "graph_form",
    "params_form",
    "report_rows",
]
