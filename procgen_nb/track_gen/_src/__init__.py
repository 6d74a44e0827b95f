"""The 0.1 private modules plugins imported, kept importable until 1.0 (deprecated).

- ``generator_registry`` / ``gate_generator_registry``: ``register``, ``get``,
  ``available`` and the read-only ``GENERATORS`` / ``GATE_GENERATORS`` views, delegating
  to ``track_gen.plugin.registry`` (silent; ``register`` warns when it overwrites).
- ``warp_gate``: ``alloc_order_scratch``, ``order_points``, ``finish_ordered_gates`` and
  ``_GateStaging`` (a ``DeprecationWarning`` on each use).
- ``warp_pipeline``, ``warp_generate``, ``warp_generate_hull``: the helpers of 0.1 track
  plugins with their old names and parameter lists, delegating to ``track_gen.ops``
  (silent); ``warp_pipeline.GenScratch`` moved to ``warp_generate.GenScratch`` (warns).
- The built-in generators' 0.1 module functions, with their former signatures (silent;
  the registered generators are Stages that no longer call them):
  ``warp_generate.generate_centerline_warp`` / ``bezier_alloc_scratch``,
  ``warp_generate_hull.generate_hull_warp`` / ``hull_alloc_scratch``,
  ``warp_generate_polar``, ``warp_generate_voronoi``, ``warp_generate_checkpoint``,
  ``warp_generate_repulsive`` (its docstring is the repulsive generator's design),
  ``warp_zprofile.apply_z_profile`` / ``apply_z_profile_knots``, and the sampling helpers
  ``sample_polar_controls``, ``sample_checkpoint_rings``, ``select_voronoi_anchors`` with
  their ``*_per_env`` forms.

Port a plugin with the table of "Legacy _src helpers" and drop these imports.
"""

from __future__ import annotations

__all__ = [
    "gate_generator_registry",
    "generator_registry",
    "warp_gate",
    "warp_generate",
    "warp_generate_checkpoint",
    "warp_generate_hull",
    "warp_generate_polar",
    "warp_generate_repulsive",
    "warp_generate_voronoi",
    "warp_pipeline",
    "warp_zprofile",
]
