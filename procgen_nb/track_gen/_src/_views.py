"""Read-only views of one kind of ``plugin.registry`` (the 0.1 ``GENERATORS`` dicts)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any


class RegistryView(Mapping):
    """A live, read-only mapping of name -> spec of one registry kind.

    Args:
        names: returns the sorted names (built-ins and plugins loaded first).
        get: returns the spec of a name (raises for an unknown one).
        label: the 0.1 name shown by ``repr`` (``"GENERATORS"``).
    """

    def __init__(self, names: Callable[[], list[str]], get: Callable[[str], Any], label: str):
        self._names, self._get, self._label = names, get, label

    def __getitem__(self, name: str) -> Any:
        if not isinstance(name, str) or name not in self._names():
            raise KeyError(name)
        return self._get(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __repr__(self) -> str:
        return f"<read-only {self._label}: {self._names()}>"
