"""Results that keep their values: the Column and live-count objects a cook hands out.

A graph's nodes hold their outputs in the arrays its recording replays in place. What a
cook hands out is a copy of the output structure whose Columns and LiveCounts are new
Python objects over the same arrays (nothing moves on the device). They are watched
weakly: before a replay writes its arrays, every handed-out object still held (a result
kept, or a Column taken out of one) whose words the replay writes is moved to a device
copy of them, so it keeps its values. An object nobody holds is gone and costs nothing.

A graph's replay is not the only writer of those arrays: a node may hand out a
generator's own arrays (``pg.Column(tg.generate().xy)``), which the next call of that
generator writes, whoever makes it (the node planned again, another graph, a cell).
``keep_held`` runs before such a call, over the arrays it writes, for every graph's
handouts.
"""

from __future__ import annotations

import weakref
from typing import Any

import warp as wp

from ._traffic import _count
from .columns import Column, Domain, Geometry, LiveCount, Record


def _extent(a: wp.array) -> tuple[str, int, int] | None:
    """The device and the byte range ``[lo, hi)`` an array's words lie in (None if empty)."""
    if a.ptr is None or a.size == 0:
        return None
    item = wp.types.type_size_in_bytes(a.dtype)
    span = sum((n - 1) * abs(s) for n, s in zip(a.shape, a.strides)) + item
    return str(a.device), int(a.ptr), int(a.ptr) + span


def _same_words(out: Any, value: Any) -> bool:
    """True when a handed-out object still stands over the words of the graph's own."""
    if isinstance(value, LiveCount):
        return out.words is value.words
    if out.data is not value.data:
        return False
    return value.live is None or (out.live is not None and out.live.words is value.live.words)


class Handouts:
    """The objects handed out by the cooks of one graph, watched weakly."""

    def __init__(self) -> None:
        self._held: weakref.WeakSet[Any] = weakref.WeakSet()
        _ALL.add(self)
        #: the graph's own object -> the object handed out for it (while that one is held
        #: and still over the same words, a later cook hands out the same object again)
        self._given: weakref.WeakKeyDictionary[Any, weakref.ref] = weakref.WeakKeyDictionary()

    def hand_out(self, value: Any, memo: dict[int, Any] | None = None) -> Any:
        """Returns ``value`` with new Column and LiveCount objects over the same arrays.

        Containers (dicts, Records, Domains, Geometries, lists, tuples) are copied; an
        object reached twice is handed out once; anything else is handed out as it is.
        """
        memo = {} if memo is None else memo
        key = id(value)
        if key in memo:
            return memo[key]
        if isinstance(value, LiveCount | Column):
            ref = self._given.get(value)
            out: Any = ref() if ref is not None else None
            if out is None or not _same_words(out, value):
                if isinstance(value, LiveCount):
                    out = LiveCount(value.words, value.capacity, value.guard)
                else:
                    live = self.hand_out(value.live, memo) if value.live is not None else None
                    out = Column(value.data, value.type, live, value.table)
                self._held.add(out)
                self._given[value] = weakref.ref(out)
        elif isinstance(value, Domain):
            cols = {k: self.hand_out(v, memo) for k, v in value.items()}
            out = Domain(cols, self.hand_out(value.count, memo))
        elif isinstance(value, Geometry):
            out = Geometry(**{k: self.hand_out(d, memo) for k, d in value.classes.items()})
        elif isinstance(value, Record):
            out = Record({k: self.hand_out(v, memo) for k, v in value.items()})
        elif type(value) is dict:
            out = {k: self.hand_out(v, memo) for k, v in value.items()}
        elif type(value) in (list, tuple):
            out = type(value)(self.hand_out(v, memo) for v in value)
        else:
            return value
        memo[key] = out
        return out

    def keep_values(self, written: list[wp.array] | None) -> int:
        """Moves every held object whose words overlap ``written`` (None: any) to a copy.

        Returns:
            How many arrays were copied (each counted as a copy; nothing is read back).
        """
        ranges = None if written is None else [r for r in map(_extent, written) if r]
        if ranges == []:
            return 0
        copies: dict[int, wp.array] = {}

        def moved(a: wp.array) -> wp.array:
            if id(a) in copies:
                return copies[id(a)]
            ext = _extent(a)
            if ext is None or (
                ranges is not None
                and not any(d == ext[0] and lo < ext[2] and ext[1] < hi for d, lo, hi in ranges)
            ):
                return a
            copies[id(a)] = wp.clone(a)
            _count("copies")
            return copies[id(a)]

        for obj in list(self._held):
            if isinstance(obj, Column):
                new = moved(obj.data)
                if new is not obj.data:
                    obj.data = new
            elif isinstance(obj, LiveCount):
                new = moved(obj.words)
                if new is not obj.words:
                    obj.words = new
        # an object moved to its copy aliases nothing the graph writes any more
        for obj in list(self._held):
            arr = obj.data if isinstance(obj, Column) else obj.words
            if any(arr is c for c in copies.values()):
                self._held.discard(obj)
        return len(copies)


#: the Handouts of every graph (weakly): ``keep_held`` asks them all
_ALL: weakref.WeakSet[Handouts] = weakref.WeakSet()


def keep_held(written: list[wp.array]) -> int:
    """Moves every object any graph handed out and is still held whose words overlap
    ``written`` to a copy, before a call outside that graph's replay writes them.

    Returns:
        How many arrays were copied (nothing is read back).
    """
    n = 0
    for h in list(_ALL):
        if len(h._held):
            n += h.keep_values(written)
    return n
