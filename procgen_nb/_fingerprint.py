"""Fingerprints of host values that enter a graph (constants of ``Graph.add``, params).

The rule: a graph keys a host value by its content, not by its identity. A NumPy array or
a list given to ``Graph.add`` and then changed in place is seen as changed at the next
cook (the nodes it reaches cook again); a value of the same content is the same value.
Values the fingerprint cannot read (arbitrary objects) are keyed by identity: give such a
value as a node's output instead, or pass a new object when it changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np


def fingerprint(value: Any, depth: int = 0) -> Any:
    """Returns a hashable stand-in for ``value`` that changes when its content changes.

    Arrays are hashed by dtype, shape and bytes; lists, tuples, sets and dicts element by
    element; hashable scalars stand for themselves; anything else by its identity.
    """
    if depth > 64:
        return ("id", id(value))
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        if data.dtype.hasobject:
            return ("array", str(data.dtype), data.shape, fingerprint(data.tolist(), depth + 1))
        digest = hashlib.blake2b(data.view(np.uint8).reshape(-1), digest_size=16).hexdigest()
        return ("array", str(data.dtype), data.shape, digest)
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(fingerprint(v, depth + 1) for v in value))
    if isinstance(value, set | frozenset):
        return ("set", tuple(sorted((fingerprint(v, depth + 1) for v in value), key=repr)))
    if isinstance(value, Mapping):
        items = [(fingerprint(k, depth + 1), fingerprint(v, depth + 1)) for k, v in value.items()]
        return ("map", tuple(sorted(items, key=repr)))
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value
