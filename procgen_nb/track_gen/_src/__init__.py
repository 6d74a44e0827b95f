"""The 0.1 private modules plugins imported, kept importable until 1.0 (deprecated).

- ``generator_registry`` / ``gate_generator_registry``: ``register``, ``get``,
  ``available`` and the read-only ``GENERATORS`` / ``GATE_GENERATORS`` views, delegating
  to ``track_gen.plugin.registry`` (silent; ``register`` warns when it overwrites).
- ``warp_gate``: ``alloc_order_scratch``, ``order_points``, ``finish_ordered_gates`` and
  ``_GateStaging`` (a ``DeprecationWarning`` on each use).
- ``warp_pipeline``, ``warp_generate``, ``warp_generate_hull``: the helpers of 0.1 track
  plugins with their old names and parameter lists, delegating to ``track_gen.ops``
  (silent); ``warp_pipeline.GenScratch`` moved to ``warp_generate.GenScratch`` (warns).

Port a plugin with the table of "Legacy _src helpers" and drop these imports.
"""

from __future__ import annotations

__all__ = [
    "gate_generator_registry",
    "generator_registry",
    "warp_gate",
    "warp_generate",
    "warp_generate_hull",
    "warp_pipeline",
]
