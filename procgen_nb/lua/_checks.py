"""Checks and texts of ``LuaState`` calls: the ceiling and seed a call is given, how errors
name a node, and the sandbox's own frames dropped from a Lua traceback."""

from __future__ import annotations

import functools
import hashlib
import math
import re
from typing import Any

from ..errors import ParamsError

#: The ceiling a call gets when ``ceiling_ms`` is 0 or None.
DEFAULT_CEILING_MS = 5000.0
#: The largest ``ceiling_ms`` a call accepts (a day).
MAX_CEILING_MS = 86_400_000.0


def _pair(res: Any) -> tuple[Any, Any]:
    if isinstance(res, tuple):
        return res[0], (res[1] if len(res) > 1 else None)
    return res, None


def _ceiling(ceiling_ms: Any, what: str = "cpu.call") -> float:
    if ceiling_ms is None or (
        isinstance(ceiling_ms, int | float) and not isinstance(ceiling_ms, bool) and ceiling_ms == 0
    ):
        return DEFAULT_CEILING_MS
    if (
        isinstance(ceiling_ms, bool)
        or not isinstance(ceiling_ms, int | float)
        or not 0 < ceiling_ms <= MAX_CEILING_MS  # first: an int past float64 (10**400)
        or not math.isfinite(ceiling_ms)
    ):
        raise ParamsError(
            f"{what} ceiling_ms: expected a finite number of milliseconds from 0 to "
            f"{MAX_CEILING_MS:.0f} (0 or None for 5000), got {_short(ceiling_ms)}"
        )
    return float(ceiling_ms)


@functools.lru_cache(maxsize=1024)
def _node_seed(node: str | None) -> tuple[int, int]:
    digest = hashlib.sha256(f"procgen_nb.lua:{node or ''}".encode()).digest()
    return (
        int.from_bytes(digest[:8], "little", signed=True),
        int.from_bytes(digest[8:16], "little", signed=True),
    )


def _seed_pair(node: str | None, seed: Any) -> tuple[int, int]:
    """The two integers ``math.randomseed`` gets before a call: (seed, 0), or by default
    two words of the SHA-256 of the node's name (the same in every process)."""
    if seed is None:
        return _node_seed(node)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ParamsError(f"seed: expected a whole number or None, got {seed!r}")
    return (seed + (1 << 63)) % (1 << 64) - (1 << 63), 0


def _node(node: str | None) -> str:
    return repr(node) if node is not None else "<outside a cook>"


def _print(text: str) -> None:
    print(text)


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


#: the sandbox's own chunks (named ``=procgen_nb.<name>`` where state.py loads them)
_OWN_CHUNK = re.compile(r"procgen_nb\.(sandbox|guards|match|task):")
_OWN = re.compile(_OWN_CHUNK.pattern + r"\d+: ")


def _trim_traceback(msg: str) -> str:
    """Drops the sandbox's own frames (the xpcall that runs every call, its wrappers of
    standard functions) from a traceback, and their positions from the message."""
    lines = msg.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == "[C]: in function 'xpcall'":
            lines = lines[:i]
            break
    kept = [ln for ln in lines[1:] if not _OWN_CHUNK.search(ln)]
    return "\n".join([_OWN.sub("", lines[0]), *kept])
