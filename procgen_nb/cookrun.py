"""Cook recordings: a cook's launches, copies and fills, replayed when nothing is new to plan.

A recording is made from the log of an eager cook. When none of its launches takes a
dynamic value as a uniform, it is captured with Warp's graph capture (CUDA graphs on a GPU,
Warp's CPU capture on the CPU) and replayed with one call; otherwise it replays as recorded
Warp launches (``wp.Launch``) whose dynamic params are set before each replay. Dynamic
values in device words (``device.bound(live=True)``) are filled before the replay. A
dynamic value is an expression (``procgen_nb.dynamic``): the replay evaluates each one for
the new values (a pure call in it is called again, cached by its arguments) before
anything launches.

After a replay the guard words the recording holds are read without waiting for a frame
(``traffic().deferred_reads``); the cook that follows checks them, and a replay that ran
past a guard lets the recording go (``counts().guarded``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
import warp as wp

from . import _warp_compat
from ._traffic import _count
from .device import HOST
from .dynamic import evaluate, key_of, peek
from .elements import WORD_RANGES


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
    """A device word a replay fills with a dynamic value (a live bound), and its room.

    Attributes:
        word: the one-word device array.
        key: the expression (``procgen_nb.dynamic``) whose value the word holds.
        room: the most the value may reach before the cook plans again.
    """

    word: wp.array
    key: Any
    room: int


class CookRecording:
    """A cook's log, replayable with new dynamic values.

    Args:
        log: the entries of ``procgen_nb.launch.logging()``.
        guards: the guard words the cook made.
        words: dynamic words to fill before each replay.
    """

    def __init__(self, log: list[tuple], guards: list[Guard], words: list[DynamicWord]):
        # a probe or an unrecordable mark is the graph's to read; a replay entry is a
        # launch context's recording (a track call made inside the node), run again here
        self.log = [e for e in log if e[0] in _REPLAYED]
        self.guards = list(guards)
        self.words = list(words)
        held = [e[1] for e in self.log if e[0] == "replay"]
        self.launch_count = sum(1 for e in self.log if e[0] == "launch")
        self.launch_count += sum(r.launches for r in held)
        self.copy_count = sum(1 for e in self.log if e[0] == "copy") + sum(r.copies for r in held)
        self.fill_count = sum(1 for e in self.log if e[0] == "fill") + sum(r.fills for r in held)
        self._syncs = [e for e in self.log if e[0] == "sync"]
        self._dynamic_args = [
            (i, j, key_of(a), _param_cast(e[1], j))
            for i, e in enumerate(self.log)
            if e[0] == "launch"
            for j, a in enumerate(e[3])
            if key_of(a) is not None
        ]
        self._dynamic_fills = [
            (i, key_of(e[2]), _dtype_cast(e[1]))
            for i, e in enumerate(self.log)
            if e[0] == "fill" and key_of(e[2]) is not None
        ]
        # dynamic values in device words (fills) are written before a graph replay; dynamic
        # launch params need recorded launches, whose params are set before each replay
        self.mode = "launches" if self._dynamic_args else "graph"
        # a word that takes two dynamic fills or more (two nodes of one generator each fill
        # its Params buffer) holds each value only between its fill and the next: each of
        # those fills sets a staging word of its own before a graph replay, copied into
        # the word at the fill's place inside it
        self._staged = self._staging() if self.mode == "graph" else {}
        self.copy_count += len(self._staged)
        # a word a dynamic fill sets before a graph replay takes no other fill inside it
        # (the zeros its allocation logged would clear the value set beforehand)
        hoisted = {i for i, _, _ in self._dynamic_fills} - set(self._staged)
        words = {id(self.log[i][1]) for i in hoisted}
        self._skipped = (
            {i for i, e in enumerate(self.log) if e[0] == "fill" and id(e[1]) in words} | hoisted
            if self.mode == "graph"
            else set()
        )
        self.fill_count -= len(self._skipped - hoisted)
        #: the dynamic values the recording last ran with (set by the graph)
        self.values: dict[str, Any] = {}
        self._graph: Any = None
        self._launches: dict[int, Any] = {}
        self._host_guards: list[np.ndarray] = []
        self._written: list[wp.array] | None = None
        self._host_views: dict[int, np.ndarray] = {}
        self.replays = 0
        _counts.recordings += 1

    def _staging(self) -> dict[int, wp.array]:
        """{log index: staging word} for each dynamic fill of a word filled dynamically
        more than once (see ``__init__``)."""
        per_word = Counter(id(self.log[i][1]) for i, _, _ in self._dynamic_fills)
        out = {}
        for i, _, _ in self._dynamic_fills:
            word = self.log[i][1]
            if per_word[id(word)] > 1:
                out[i] = wp.empty(word.shape, dtype=word.dtype, device=word.device)
        return out

    def written(self) -> list[wp.array] | None:
        """The arrays a replay may write: every array a launch, copy or fill of it takes;
        None when it holds work whose arrays it cannot name (a replayed recording): any."""
        if self._written is None:
            out: dict[int, wp.array] = {}
            for e in self.log:
                if e[0] == "launch":
                    arrays = [peek(a) for a in e[3]]
                elif e[0] in ("copy", "fill"):
                    arrays = [e[1]]
                else:
                    return None
                for a in arrays:
                    if isinstance(a, wp.array):
                        out[id(a)] = a
            self._written = list(out.values())
        return self._written

    def fits(self, values: Mapping[str, Any]) -> bool:
        """True when every live-bound dynamic value is still a count that fits its room."""
        for w in self.words:
            try:
                v = evaluate(w.key, dict(values))
            except Exception:  # noqa: BLE001 - a value the plan must refuse: plan again
                return False
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= w.room:
                return False
            if not float(v).is_integer():
                return False
        return True

    def _build(self) -> None:
        if self.mode == "graph":
            ctx = next((e[-1] for e in self.log if e[0] != "sync"), None)
            if ctx is None:
                self._graph = False
                return
            with wp.ScopedCapture(device=ctx.device, stream=ctx.stream) as cap:
                for i, e in enumerate(self.log):
                    if i in self._staged:  # the value set before the replay, in its place
                        wp.copy(e[1], self._staged[i], stream=e[-1].stream)
                    elif i not in self._skipped:
                        _issue(e)
            self._graph = cap.graph
        else:
            for i, e in enumerate(self.log):
                if e[0] == "launch":
                    kernel, dim, args, ctx = e[1], e[2], e[3], e[4]
                    self._launches[i] = wp.launch(
                        kernel,
                        dim=dim,
                        inputs=[peek(a) for a in args],
                        device=ctx.device,
                        stream=ctx.stream,
                        record_cmd=True,
                    )

    def evaluate(self, values: Mapping[str, Any]) -> tuple[dict, dict]:
        """Evaluates every dynamic launch param and fill for ``values`` (nothing launches).

        Returns ``({log index: [(param index, value)]}, {log index: fill value})``.

        Raises:
            Whatever evaluating an expression raises (a pure call's Lua error, a value out
            of a word's range): the caller plans again and refuses there.
        """
        vals = dict(values)
        params: dict[int, list] = {}
        for i, j, expr, cast in self._dynamic_args:
            params.setdefault(i, []).append((j, cast(evaluate(expr, vals))))
        fills = {i: cast(evaluate(expr, vals)) for i, expr, cast in self._dynamic_fills}
        return params, fills

    def replay(self, values: Mapping[str, Any], evaluated: tuple[dict, dict] | None = None) -> None:
        """Runs the recording with ``values`` (dynamic key -> value); reads guards deferred."""
        params, fills = evaluated if evaluated is not None else self.evaluate(values)
        vals = dict(values)
        for _, fn, args in self._syncs:  # host bookkeeping of the work replayed below
            fn(*[evaluate(key_of(a) if key_of(a) is not None else a, vals) for a in args])
        if self._graph is None and not self._launches:
            self._build()
        if self.mode == "graph":
            for i, value in fills.items():
                _set_word(self._staged.get(i, self.log[i][1]), value)
            if self._graph:
                wp.capture_launch(self._graph)
        else:
            for i, e in enumerate(self.log):
                if e[0] == "launch":
                    launch = self._launches[i]
                    for j, value in params.get(i, ()):
                        launch.set_param_at_index(j, value)
                    launch.launch()
                elif e[0] == "fill" and i in fills:
                    _set_word(e[1], fills[i])
                elif e[0] == "fill" and e[1].device.is_cpu and e[1].is_contiguous:
                    # a constant fill of host memory: the array's own words, set from NumPy
                    # (a CPU launch has finished when it returns, so the order holds)
                    self._host_views.setdefault(i, e[1].numpy())[...] = peek(e[2])
                else:
                    _issue(e)
        self.values = dict(values)
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
            host = wp.empty(1, dtype=g.word.dtype, device=HOST, pinned=g.word.device.is_cuda)
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


_INT_RANGES = {t: WORD_RANGES[t] for t in (wp.int32, wp.uint32)}


def _param_cast(kernel: Any, j: int) -> Any:
    """How a replay casts the value of a kernel's j-th param (float, or a checked int)."""
    try:
        t = _warp_compat.kernel_args(kernel)[j].type
    except (AttributeError, IndexError):
        return _as_number
    return _cast_for(t)


def _dtype_cast(arr: wp.array) -> Any:
    return _cast_for(arr.dtype)


def _cast_for(t: Any) -> Any:
    if t in (wp.float16, wp.float32, wp.float64, float):
        return float
    lo, hi = _INT_RANGES.get(t, (-(2**63), 2**64 - 1))

    def checked(v: Any) -> int:
        """The int a word holds; a value it cannot hold raises (the cook plans again)."""
        if isinstance(v, bool) or not float(v).is_integer() or not lo <= v <= hi:
            raise ValueError(f"expected a whole number in [{lo}, {hi}], got {v!r}")
        return int(v)

    return checked


def _as_number(v: Any) -> Any:
    return v


def _set_word(arr: wp.array, value: Any) -> None:
    """Writes a dynamic value into a device array before a replay (host memory on the CPU)."""
    if arr.device.is_cpu:
        arr.numpy()[...] = value  # the array's own memory: no launch, no copy
    else:
        arr.fill_(value)


#: the log entries a recording holds (``procgen_nb.launch.log_entry``)
_REPLAYED = ("launch", "copy", "fill", "replay", "sync")


def _issue(e: tuple) -> None:
    kind = e[0]
    if kind == "sync":
        return  # host bookkeeping: run before the replay, never captured
    if kind == "replay":
        e[1].emit()  # inside the capture: its body joins it
        return
    if kind == "launch":
        _, kernel, dim, args, ctx = e
        plain = [peek(a) for a in args]
        wp.launch(kernel, dim=dim, inputs=plain, device=ctx.device, stream=ctx.stream)
    elif kind == "copy":
        _, dst, src, dst_offset, src_offset, count, ctx = e
        wp.copy(dst, src, dst_offset, src_offset, count, stream=ctx.stream)
    else:
        _, arr, value, ctx = e
        arr.fill_(peek(value))
