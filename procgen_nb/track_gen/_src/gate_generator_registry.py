"""The 0.1 private gate generator registry (deprecated; removed in 1.0).

``register``, ``get`` and ``available`` delegate to ``track_gen.plugin.registry`` (kind
``"gate_generator"``), and ``GATE_GENERATORS`` is a read-only view of it. ``register``
keeps its 0.1 rule: a name registered by a different module raises
``DuplicateSpecError`` (a ``ValueError``), one registered by the same module is
overwritten with a ``DeprecationWarning``. "The module" is the one that called ``register``
(not the one that defines ``generate``); for a spec added another way (a built-in,
``registry.add``, an entry point) it is the module that defines it. Registering a ``GateGeneratorSpec`` is silent;
binding one warns (``GateGenerator``, ``Course``, ``build``, the conformance kit).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from ...errors import DuplicateSpecError
from ..gates import _registry as _gates
from ..gates._warn import warn_at_caller
from ..plugin import GateGeneratorSpec, _describe, registry
from ._views import RegistryView

#: name -> (the spec, the module that called register with it)
_registrants: dict[str, tuple[Any, str | None]] = {}
_lock = threading.Lock()


def _defining_module(spec: Any) -> str | None:
    if isinstance(spec, GateGeneratorSpec):
        return getattr(spec.generate, "__module__", None)
    return getattr(spec, "__module__", None) or type(spec).__module__


def _module(name: str, spec: Any) -> str | None:
    """The module that registered ``spec`` under ``name``: the caller of ``register``, or
    for a spec added another way, the module that defines it."""
    entry = _registrants.get(name)
    if entry is not None and entry[0] is spec:
        return entry[1]
    return _defining_module(spec)


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
    caller = sys._getframe(1).f_globals.get("__name__")
    _gates.ensure_builtins(registry)
    with _lock:
        old = registry._specs[_gates.KIND].get(name) if isinstance(name, str) else None
        owner = None if old is None else _module(name, old)
        if old is not None and old is not spec and owner != caller:
            raise DuplicateSpecError(
                f"gate_generator_registry.register {name!r}: expected a new name (or a call "
                f"from the module that registered it, {owner}), got a duplicate registered "
                f"from {caller} ({_describe(old)} is registered)"
            )
        _gates.add_gate_stage(registry, spec, replace=True, builtin=True)
        if isinstance(name, str):
            _registrants[name] = (spec, caller)
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
