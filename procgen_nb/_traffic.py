"""Traffic counters: launches, copies, fills, uploads, readbacks, waits, loads, builds ...

``traffic()`` returns the counters since the process started; ``collect()`` opens a
collector that counts what happens inside it (a cook uses one per node).

``loads`` counts the Warp kernel modules loaded into this process (a module's first launch
on a device, or ``procgen-nb demo``'s up-front build), ``builds`` those of the loads that
Warp compiled because its kernel cache did not hold the binary: a warm cache loads and
builds nothing (``builds <= loads``). Both are counted by the build hook
(``_progress.install``) from what Warp's ``Module._compile`` returns; on a Warp without
that hook both stay 0.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import threading

_FIELDS = (
    "launches",
    "copies",
    "fills",
    "uploads",
    "readbacks",
    "waits",
    "deferred_reads",
    "loads",
    "builds",
    "replays",
)


@dataclasses.dataclass
class Traffic:
    """Counts of device traffic. Subtract two snapshots for what happened between them."""

    launches: int = 0
    copies: int = 0
    fills: int = 0
    uploads: int = 0
    readbacks: int = 0
    waits: int = 0
    deferred_reads: int = 0
    loads: int = 0
    builds: int = 0
    replays: int = 0

    def __sub__(self, other: Traffic) -> Traffic:
        return Traffic(**{f: getattr(self, f) - getattr(other, f) for f in _FIELDS})

    def __add__(self, other: Traffic) -> Traffic:
        return Traffic(**{f: getattr(self, f) + getattr(other, f) for f in _FIELDS})

    def as_dict(self) -> dict[str, int]:
        """Returns the counters as a plain dict."""
        return dataclasses.asdict(self)


_lock = threading.Lock()
_total = Traffic()
_active: contextvars.ContextVar[tuple[Traffic, ...]] = contextvars.ContextVar(
    "procgen_nb_traffic_collectors", default=()
)


def _count(kind: str, n: int = 1) -> None:
    """Adds ``n`` to counter ``kind`` globally and in every open collector."""
    with _lock:
        setattr(_total, kind, getattr(_total, kind) + n)
        for c in _active.get():
            setattr(c, kind, getattr(c, kind) + n)


def _count_load(compiled: bool) -> None:
    """Counts one kernel module loaded into this process, and a build when Warp
    ``compiled`` it (its kernel cache did not hold the binary)."""
    _count("loads")
    if compiled:
        _count("builds")


def traffic() -> Traffic:
    """Returns a snapshot of the process-wide counters since the process started."""
    with _lock:
        return dataclasses.replace(_total)


class _Collector:
    """The context manager ``collect()`` returns (a class: cheaper to enter than a
    generator-based one, which a cook of a few microseconds notices)."""

    __slots__ = ("_token",)

    def __enter__(self) -> Traffic:
        c = Traffic()
        self._token = _active.set(_active.get() + (c,))
        return c

    def __exit__(self, *exc: object) -> None:
        _active.reset(self._token)


def collect() -> contextlib.AbstractContextManager[Traffic]:
    """Counts the traffic of the ``with`` body (nested collectors all count it)."""
    return _Collector()
