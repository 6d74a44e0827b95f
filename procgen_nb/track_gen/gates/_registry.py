"""Gate generators in ``plugin.registry``: adding anchors Stages and looking one up.

The registry's ``"gate_generator"`` kind holds anchors Stages and ``GateGeneratorSpec``s.
``add_gate_stage`` adds one after checking that it is a gate generator.
"""

from __future__ import annotations

import threading
from typing import Any

from ...errors import GeneratorError
from ..plugin import GateGeneratorSpec, Registry, registry
from .stage import is_gate_stage

KIND = "gate_generator"
_loaded: set[int] = set()
_lock = threading.Lock()


def add_gate_stage(
    registry: Registry, spec: Any, replace: bool = False, builtin: bool = False
) -> Any:
    """Registers an anchors Stage (or a ``GateGeneratorSpec``) under ``"gate_generator"``.

    Raises:
        DuplicateSpecError: the name is taken and ``replace`` is False.
        GeneratorError: a spec that is neither, or a refused name.
    """
    if not (is_gate_stage(spec) or isinstance(spec, GateGeneratorSpec)):
        raise GeneratorError(
            f"gate generator: expected an anchors Stage (phase='anchors') or a "
            f"GateGeneratorSpec, got {spec!r}"
        )
    registry.add(spec, replace=replace, _builtin=builtin)
    return spec


def ensure_builtins(registry: Registry) -> None:
    """Adds the built-in gate generators to ``registry`` once."""
    with _lock:
        if id(registry) in _loaded:
            return
        _loaded.add(id(registry))
    from .builtins import register_builtins

    register_builtins(registry)


def lookup(registry: Registry, name: str) -> Any:
    """Returns the gate generator named ``name`` (an anchors Stage or a GateGeneratorSpec).

    Raises:
        GeneratorError: an unknown name (the message lists the available ones).
    """
    ensure_builtins(registry)
    try:
        return registry.get(KIND, name)
    except GeneratorError as exc:
        missing = exc
    # an anchors Stage is registered as a stage: the gate generators' error when it is not
    other = registry.get("stage", name) if name in registry.available("stage") else None
    if other is not None and is_gate_stage(other):
        return other
    raise missing


def available(registry: Registry) -> list[str]:
    """Returns the sorted names of the registered gate generators."""
    ensure_builtins(registry)
    extra = [n for n in registry.available("stage") if is_gate_stage(registry.get("stage", n))]
    return sorted(set(registry.available(KIND)) | set(extra))


def gate_generators() -> list[str]:
    """Returns the sorted names of the gate generators in ``plugin.registry`` (built-ins and
    installed plugins)."""
    return available(registry)


def get_gate_generator(name: str) -> Any:
    """Returns the gate generator named ``name`` from ``plugin.registry``.

    Raises:
        GeneratorError: an unknown name (the message lists the available ones).
    """
    return lookup(registry, name)


__all__ = [
    "KIND",
    "add_gate_stage",
    "available",
    "ensure_builtins",
    "gate_generators",
    "get_gate_generator",
    "lookup",
]
