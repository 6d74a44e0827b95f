"""Cook recordings: a cook's launches, copies and fills, replayed when nothing is new to plan.

A recording is made from the log of an eager cook. When none of its launches takes a
dynamic value as a uniform, it is captured with Warp's graph capture (CUDA graphs on a GPU,
Warp's CPU capture on the CPU) and replayed with one call; otherwise it replays as recorded
Warp launches (``wp.Launch``) whose dynamic params are set before each replay. Dynamic
values in device words (``device.bound(live=True)``) are filled before the replay.

After a replay the guard words the recording holds are read without waiting for a frame
(``traffic().deferred_reads``); the cook that follows checks them, and a replay that ran
past a guard lets the recording go (``counts().guarded``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import warp as wp

from ._traffic import _count
from .dynamic import key_of


@dataclasses.dataclass
class CookCounts:
    """Process-wide counts of cooks by kind."""

    plans: int = 0
    recordings: int = 0
    replays: int = 0
    guarded: int = 0


_counts = CookCounts()


def counts() -> CookCounts:
    """Returns a snapshot of the cook counts (``guarded`` counts replays run past a guard)."""
    return dataclasses.replace(_counts)


@dataclasses.dataclass
class Guard:
    """A guard word a recording holds: 1 when the replay ran past it.

    Attributes:
        word: the one-word int32/uint32 device array.
        node: the node that made it.
        why: the refusal to raise (``device.guard``) or None for a bound's room.
        room_key: for a bound's room, the memo key whose room grows on an overrun.
    """

    word: wp.array
    node: str
    why: str | None = None
    room_key: Any = None


@dataclasses.dataclass
class DynamicWord:
    """A device word a replay fills with a dynamic value (a live bound), and its room."""

    word: wp.array
    key: str
    room: int


class CookRecording:
    """A cook's log, replayable with new dynamic values.

    Args:
        log: the entries of ``procgen_nb.launch.logging()``.
        guards: the guard words the cook made.
        words: dynamic words to fill before each replay.
    """

    def __init__(self, log: list[tuple], guards: list[Guard], words: list[DynamicWord]):
        self.log = list(log)
        self.guards = list(guards)
        self.words = list(words)
        self.launch_count = sum(1 for e in self.log if e[0] == "launch")
        self.copy_count = sum(1 for e in self.log if e[0] == "copy")
        self.fill_count = sum(1 for e in self.log if e[0] == "fill")
        self._dynamic_args = [
            (i, j, key_of(a))
            for i, e in enumerate(self.log)
            if e[0] == "launch"
            for j, a in enumerate(e[3])
            if key_of(a) is not None
        ]
        self._dynamic_fills = [
            (i, key_of(e[2])) for i, e in enumerate(self.log) if e[0] == "fill" and key_of(e[2])
        ]
        # dynamic values in device words (fills) are written before a graph replay; dynamic
        # launch params need recorded launches, whose params are set before each replay
        self.mode = "launches" if self._dynamic_args else "graph"
        self._graph: Any = None
        self._launches: dict[int, Any] = {}
        self._host_guards: list[np.ndarray] = []
        self.replays = 0
        _counts.recordings += 1

    def fits(self, values: Mapping[str, Any]) -> bool:
        """True when every live-bound dynamic value still fits its room."""
        return all(0 <= int(values.get(w.key, 0)) <= w.room for w in self.words)

    def _build(self) -> None:
        if self.mode == "graph":
            ctx = self.log[0][-1] if self.log else None
            if ctx is None:
                self._graph = False
                return
            hoisted = {i for i, _ in self._dynamic_fills}
            with wp.ScopedCapture(device=ctx.device, stream=ctx.stream) as cap:
                for i, e in enumerate(self.log):
                    if i not in hoisted:
                        _issue(e)
            self._graph = cap.graph
        else:
            for i, e in enumerate(self.log):
                if e[0] == "launch":
                    kernel, dim, args, ctx = e[1], e[2], e[3], e[4]
                    self._launches[i] = wp.launch(
                        kernel,
                        dim=dim,
                        inputs=list(args),
                        device=ctx.device,
                        stream=ctx.stream,
                        record_cmd=True,
                    )

    def replay(self, values: Mapping[str, Any]) -> None:
        """Runs the recording with ``values`` (dynamic key -> value); reads guards deferred."""
        if self._graph is None and not self._launches:
            self._build()
        if self.mode == "graph":
            for i, key in self._dynamic_fills:
                _set_word(self.log[i][1], values[key])
            if self._graph:
                wp.capture_launch(self._graph)
        else:
            dyn = {}
            for i, j, key in self._dynamic_args:
                dyn.setdefault(i, []).append((j, key))
            fills = dict(self._dynamic_fills)
            for i, e in enumerate(self.log):
                if e[0] == "launch":
                    launch = self._launches[i]
                    for j, key in dyn.get(i, ()):
                        cast = float if isinstance(e[3][j], float) else int
                        launch.set_param_at_index(j, cast(values[key]))
                    launch.launch()
                elif e[0] == "fill" and i in fills:
                    e[1].fill_(values[fills[i]])
                else:
                    _issue(e)
        self.replays += 1
        _counts.replays += 1
        _count("replays")
        _count("launches", self.launch_count)
        _count("copies", self.copy_count)
        _count("fills", self.fill_count)
        self._host_guards = []
        for g in self.guards:
            # read without waiting for a frame: the CPU has finished the replay when it
            # returns; on CUDA the copy is queued behind it and checked by the next cook
            host = wp.empty(1, dtype=g.word.dtype, device="cpu", pinned=g.word.device.is_cuda)
            wp.copy(host, g.word)
            self._host_guards.append(host)
            _count("deferred_reads")

    def overrun(self) -> list[Guard]:
        """Returns the guards the last replay ran past (checked by the cook that follows)."""
        if not self._host_guards:
            return []
        if any(g.word.device.is_cuda for g in self.guards):
            wp.synchronize()
        return [g for g, h in zip(self.guards, self._host_guards) if int(h.numpy()[0]) != 0]


def _set_word(arr: wp.array, value: Any) -> None:
    """Writes a dynamic value into a device array before a replay (host memory on the CPU)."""
    if arr.device.is_cpu:
        arr.numpy()[...] = value  # the array's own memory: no launch, no copy
    else:
        arr.fill_(value)


def _issue(e: tuple) -> None:
    kind = e[0]
    if kind == "launch":
        _, kernel, dim, args, ctx = e
        wp.launch(kernel, dim=dim, inputs=list(args), device=ctx.device, stream=ctx.stream)
    elif kind == "copy":
        _, dst, src, dst_offset, src_offset, count, ctx = e
        wp.copy(dst, src, dst_offset, src_offset, count, stream=ctx.stream)
    else:
        _, arr, value, ctx = e
        arr.fill_(value)
