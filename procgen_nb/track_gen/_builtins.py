"""The built-ins of ``plugin.registry``: TrackGen's generators, stages and gate generators.

``plugin`` imports neither ``generators`` nor ``gates`` (both import ``plugin``): this
module, imported by the ``track_gen`` package, hands the registry a loader that adds them,
and the registry runs it on its first lookup.
"""

from __future__ import annotations

from typing import Any

from .plugin import _add_builtin_loader


def register_builtins(registry: Any) -> None:
    """Adds the built-in generators, the z profile stage and the gate generators."""
    from .gates.builtins import register_builtins as register_gate_builtins
    from .generators import register_builtins as register_generator_builtins

    register_generator_builtins(registry)
    register_gate_builtins(registry)


_add_builtin_loader(register_builtins)

__all__ = ["register_builtins"]
