"""The 0.1 private gate generator registry (deprecated; removed in 1.0).

``register``, ``get`` and ``available`` delegate to ``track_gen.plugin.registry`` (kind
``"gate_generator"``), and ``GATE_GENERATORS`` is a read-only view of it. ``register``
keeps its 0.1 rule: a name registered by a different module raises
``DuplicateSpecError`` (a ``ValueError``), one registered by the same module is
overwritten with a ``DeprecationWarning``. Registering a ``GateGeneratorSpec`` is silent;
binding one warns (``GateGenerator``, ``Course``, ``build``, the conformance kit).
"""

from __future__ import annotations

from typing import Any

from ...errors import DuplicateSpecError
from ..gates import _registry as _gates
from ..gates._warn import warn_at_caller
from ..plugin import GateGeneratorSpec, _describe, registry
from ._views import RegistryView


def _module(spec: Any) -> str | None:
    if isinstance(spec, GateGeneratorSpec):
        return getattr(spec.generate, "__module__", None)
    return getattr(spec, "__module__", None) or type(spec).__module__


def register(spec: Any) -> Any:
    """Registers ``spec`` (a ``GateGeneratorSpec`` or an anchors Stage). 0.1 names need not
    be dotted.

    Returns:
        ``spec``.

    Raises:
        DuplicateSpecError: a spec of that name from a different module is registered.
        GeneratorError: not a gate generator, or a malformed name.
    """
    name = getattr(spec, "name", None)
    _gates.ensure_builtins(registry)
    old = registry._specs[_gates.KIND].get(name) if isinstance(name, str) else None
    if old is not None and old is not spec and _module(old) != _module(spec):
        raise DuplicateSpecError(
            f"gate_generator_registry.register {name!r}: expected a new name (or a spec from "
            f"the module that registered it, {_module(old)}), got a duplicate from "
            f"{_module(spec)} ({_describe(old)} is registered)"
        )
    _gates.add_gate_stage(registry, spec, replace=True, builtin=True)
    if old is not None and old is not spec:
        warn_at_caller(
            f"gate_generator_registry.register: overwrote the gate generator {name!r}; the "
            "track_gen._src registries are deprecated (use track_gen.plugin.registry.add "
            "and an entry point)"
        )
    return spec


def get(name: str) -> Any:
    """Returns the gate generator named ``name``.

    Raises:
        GeneratorError: an unknown name (the message lists the available ones).
    """
    return _gates.lookup(registry, name)


def available() -> list[str]:
    """Returns the sorted names of the registered gate generators."""
    return _gates.available(registry)


#: a read-only view of the registered gate generators by name
GATE_GENERATORS = RegistryView(available, get, "GATE_GENERATORS")

__all__ = ["GATE_GENERATORS", "available", "get", "register"]
