"""The 0.1 private track generator registry (deprecated; removed in 1.0).

``register``, ``get`` and ``available`` delegate to ``track_gen.plugin.registry``, and
``GENERATORS`` is a read-only view of it. They are silent, except that ``register``, which
keeps its 0.1 rule of overwriting an existing name (``registry.add(spec, replace=True)``),
warns ``DeprecationWarning`` when it overwrites. Such a plugin must be imported before
use; an entry point and ``registry.add`` drop that requirement.
"""

from __future__ import annotations

from typing import Any

from ..gates._warn import warn_at_caller
from ..plugin import registry
from ._views import RegistryView

_KIND = "generator"


def register(spec: Any) -> Any:
    """Registers ``spec`` (a ``GeneratorSpec`` or a generator Stage), overwriting a spec of
    the same name with a ``DeprecationWarning``. 0.1 names need not be dotted.

    Returns:
        ``spec``.

    Raises:
        GeneratorError: not a generator, a malformed name, or a dynamic field in a
            GeneratorSpec's Params.
    """
    registry._ensure_loaded()
    old = registry._specs[_KIND].get(getattr(spec, "name", None))
    registry.add(spec, replace=True, _builtin=True)
    if old is not None and old is not spec:
        warn_at_caller(
            f"generator_registry.register: overwrote the generator {spec.name!r}; the "
            "track_gen._src registries are deprecated (use track_gen.plugin.registry.add "
            "and an entry point)"
        )
    return spec


def get(name: str) -> Any:
    """Returns the generator named ``name``.

    Raises:
        GeneratorError: an unknown name (the message lists the available ones).
    """
    return registry.get(_KIND, name)


def available() -> list[str]:
    """Returns the sorted names of the registered generators."""
    return registry.available(_KIND)


#: a read-only view of the registered generators by name
GENERATORS = RegistryView(available, get, "GENERATORS")

__all__ = ["GENERATORS", "available", "get", "register"]
