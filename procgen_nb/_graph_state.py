"""What a graph keeps of each node between cooks, and the rules that read it.

``_State`` is one node's last cook: its key, its output, its recording's log, the dynamic
values it depends on, the probes that say something else moved what it read or wrote,
and whether its body read device words back into Python (``reads``).

A replay runs the graph's recording again; what a node computed in Python from words it
read back is no part of it. ``reached`` answers the nodes whose output a replay may
change (a dynamic value they depend on moved, something else wrote their arrays, or a
node upstream of them is reached): a reached node that read back must run again, so the
cook plans instead of replaying (``Graph._try_replay``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any


@dataclasses.dataclass
class _State:
    key: tuple
    output: Any
    version: int
    probes: list[tuple[Any, Callable[[], Any]]]
    log: list[tuple] = dataclasses.field(default_factory=list)
    guards: list[Any] = dataclasses.field(default_factory=list)
    words: list[Any] = dataclasses.field(default_factory=list)
    recordable: bool = True
    #: dynamic keys read in Python (the node plans again when one moves)
    host: set[str] = dataclasses.field(default_factory=set)
    #: every dynamic key the output depends on, with the value it was made (or replayed) at
    deps: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: (value, probe) of the state the output's arrays hold (a track generator's calls):
    #: moved, something else wrote them, and the node's recording runs again
    stale: list[tuple[Any, Callable[[], Any]]] = dataclasses.field(default_factory=list)
    #: the body read device words back into Python (``Column.numpy()``, a context's
    #: ``readback``) beyond the words a recording guards: what it computed from them is
    #: no part of a recording, so it runs again when anything it read may have moved
    reads: bool = False


def host_reads(readbacks: int, guards: int) -> bool:
    """True when a node's body read back more than its guarded words.

    Takes the readbacks counted while the body ran and the guards it made: a measured
    ``device.bound`` and a ``device.guard`` over a column each read one word at planning
    that the recording guards (a replay past it plans again); any other readback fed
    Python.
    """
    return readbacks > guards


def upstream(wiring: Mapping[str, Any]) -> set[str]:
    """The names of the nodes a node's wiring reads (``"points"``, ``"points.xy"``)."""
    return {src.split(".")[0] for src in wiring.values() if isinstance(src, str)}


def reached(
    order: Iterable[str],
    wiring: Mapping[str, Mapping[str, Any]],
    states: Mapping[str, _State],
    moved: set[str],
) -> set[str]:
    """The nodes whose output a replay at the ``moved`` dynamic keys may change.

    Takes the node names in cook order, each node's wiring, their states and the dynamic
    keys that moved. A node is reached when a moved key is one it depends on, when
    something else wrote its arrays (``_stale``), or when a node it reads is reached.
    """
    out: set[str] = set()
    for name in order:
        st = states[name]
        if _stale(st) or moved & set(st.deps) or upstream(wiring[name]) & out:
            out.add(name)
    return out


def _release(output: Any) -> None:
    release = getattr(output, "release", None)
    if callable(release) and not isinstance(output, type):
        release()


_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    """True when two dynamic values are the same value (of the same type)."""
    return type(a) is type(b) and (a == b or (a != a and b != b))


def _last_of(entries: Any) -> list[tuple[Any, Callable[[], Any]]]:
    """(value, probe) of each probe's last entry (a node that calls a generator twice is
    stale only once another call follows its own second one)."""
    last = {e[2]: e[1] for e in entries}
    return [(v, probe) for probe, v in last.items()]


def _stale(state: _State) -> bool:
    """True when something else wrote the arrays a node's output holds since it made them."""
    return any(probe() != value for value, probe in state.stale)


def _digests_moved(state: _State) -> bool:
    """True when a digest answers another value, or fails (the node's cook then refuses)."""
    for value, probe in state.probes:
        try:
            if probe() != value:
                return True
        except Exception:  # noqa: BLE001 - re-raised by the node's cook as a CookError
            return True
    return False
