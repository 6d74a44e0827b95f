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
- the view's tools: ``view.update(**fields)``, ``undo``/``redo``/``history``,
  ``save(path)`` and ``explore(target, params=path or dict)``, named presets
  (``Presets``: a folder of such files; ``PresetPicker``: the view's dropdown that
  restores one and its box that saves one), ``pin``/``unpin``/``pinned`` (compare),
  ``select(i)``/``selected`` (the env clicked: its seed, epoch and ``code()``, which
  rebuilds it alone for a track generator, a course, or a graph drawing a generator or
  course node's output: ``selected.alone``), ``result`` (the TrackResult or Course drawn),
  the "racing line" toggle (``track_gen.racing_line`` drawn coloured by speed, the lap
  time on hover), ``play``/``record`` (a field's values in order; a GIF or MP4), and a
  graph's node diagram (its wires, ``graph.edges()``, and each node's state and time in
  the last cook).
"""

from __future__ import annotations

from ._controls import FieldControl, IntBox, control_class
from .canvas import TrackCanvas, env_metrics, show
from .clipboard import CopyButton
from .course_target import CourseTarget, course_target
from .form import ParamsForm, graph_form, params_form
from .frame import Frame, Gates, ReportRow, frame_from, read_outputs, report_rows
from .graph_target import GraphTarget
from .history import History, Presets, load_values, save_values
from .kernel_form import KernelForm, kernel_form
from .poll import DigestPoller
from .preset_picker import PresetPicker
from .sweep_panel import SweepPanel
from .target import FunctionTarget, Target
from .targets import as_target
from .timeline import PlayControl, Selection
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
    "History",
    "IntBox",
    "KernelForm",
    "ParamsForm",
    "PlayControl",
    "PresetPicker",
    "Presets",
    "ReportRow",
    "Selection",
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
    "load_values",
    "params_form",
    "read_outputs",
    "report_rows",
    "save_values",
    "show",
]
