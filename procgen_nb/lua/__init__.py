"""Lua for procgen_nb: a sandboxed Lua 5.4 state (lupa) and the values crossing into it.

``LuaState`` runs ``cpu.call`` / ``cpu.read`` functions under a CPU-time ceiling in a
sandbox, with Luau's ``task`` library on a virtual clock; ``Curve``, ``Handle`` and
``BufferRef`` are the values that cross; a call's output is a ``CallResult``.
"""

from __future__ import annotations

from ._convert import RETURN_TYPES
from .result import CallResult
from .state import DEFAULT_CEILING_MS, LuaState
from .values import BufferRef, Curve, Handle

__all__ = [
    "BufferRef",
    "CallResult",
    "Curve",
    "DEFAULT_CEILING_MS",
    "Handle",
    "LuaState",
    "RETURN_TYPES",
]
