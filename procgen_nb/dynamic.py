"""Dynamic values: numbers that change between replays of a recording without a new one.

A dynamic Field of a node, and the cook's ``time`` and ``frame``, reach a node as a
``DynamicFloat`` / ``DynamicInt``: a number that remembers which dynamic value it is. Passed
as a kernel uniform (or to ``device.bound(live=True)``), it is marked in the recording, and
a replay takes the value of the new cook. Arithmetic on it gives a plain number, which a
replay keeps as recorded: pass the dynamic value itself.
"""

from __future__ import annotations

from typing import Any


class DynamicFloat(float):
    """A float that names the dynamic value it came from (``key``)."""

    key: str

    def __new__(cls, value: float, key: str) -> DynamicFloat:
        obj = super().__new__(cls, value)
        obj.key = key
        return obj

    def __repr__(self) -> str:
        return f"DynamicFloat({float(self)!r}, key={self.key!r})"


class DynamicInt(int):
    """An int that names the dynamic value it came from (``key``)."""

    key: str

    def __new__(cls, value: int, key: str) -> DynamicInt:
        obj = super().__new__(cls, value)
        obj.key = key
        return obj

    def __repr__(self) -> str:
        return f"DynamicInt({int(self)!r}, key={self.key!r})"


def dynamic(value: Any, key: str) -> Any:
    """Returns ``value`` as a dynamic number named ``key`` (bools and ints as DynamicInt)."""
    if isinstance(value, bool):
        return DynamicInt(int(value), key)
    if isinstance(value, int):
        return DynamicInt(value, key)
    return DynamicFloat(float(value), key)


def key_of(value: Any) -> str | None:
    """Returns the key of a dynamic number, or None for any other value."""
    return value.key if isinstance(value, DynamicFloat | DynamicInt) else None
