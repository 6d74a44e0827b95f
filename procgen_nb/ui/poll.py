"""Polling live state: a view re-cooks a graph when a ``cpu.read`` digest moves.

The 0.1 interface: a ``cpu.read`` digest "folds it in, so a Generator cooks the graph again when
that state moves". A graph answers which of its digests moved without cooking
(``Graph.moved_digests()``); ``DigestPoller`` asks it every ``interval`` seconds (0.5 s in
``explore``) on a daemon thread while the view can be seen, and calls ``on_moved`` with the
nodes when any moved. While the view is hidden (scrolled away, another browser tab, its
output cleared: the canvas says so) the thread sleeps without asking; shown again, it asks
at once. ``stop()`` (the view's ``close()``) ends it.

Tests drive it without a thread or a browser: ``poll()`` is one tick, ``show(False)``
is what the canvas reports.
"""

from __future__ import annotations

import math
import numbers
import threading
from collections.abc import Callable
from typing import Any

from ..errors import ParamsError

#: seconds between two polls of a view's ``cpu.read`` digests (``explore(poll_interval=)``)
POLL_INTERVAL = 0.5


def check_interval(label: str, value: Any, off: bool = False) -> float:
    """``value`` as seconds between two polls: a finite number > 0; with ``off`` also 0 or
    None, returned as 0.0 (no polling).

    Raises:
        ParamsError: anything else (a bool, a string, NaN, infinity, a negative number),
            naming ``label`` and the value.
    """
    number = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if off and (value is None or (number and value == 0)):
        return 0.0
    if not (number and math.isfinite(float(value)) and float(value) > 0):
        accepted = "seconds > 0 (0 or None: no polling)" if off else "seconds > 0"
        raise ParamsError(f"{label}: expected {accepted}, got {value!r}")
    return float(value)


class DigestPoller:
    """Asks ``moved()`` every ``interval`` seconds while visible; ``on_moved(nodes)`` when
    it names any.

    Args:
        moved: returns the nodes whose digest moved (``Graph.moved_digests``); nothing cooks.
        on_moved: called on the poller's thread with those nodes (the view queues a cook).
        interval: seconds between polls (a finite number > 0).

    Attributes:
        polls: how many times ``moved()`` was asked.
        moves: how many polls found a digest moved.
        visible: whether the view can be seen (polls happen only then).
        last_error: what the last ``moved()`` or ``on_moved`` raised, or None.

    Raises:
        ParamsError: an ``interval`` that is not a finite number > 0.
    """

    def __init__(
        self,
        moved: Callable[[], list[str]],
        on_moved: Callable[[list[str]], None],
        interval: float = POLL_INTERVAL,
    ):
        self.interval = check_interval("DigestPoller interval", interval)
        self._moved = moved
        self._on_moved = on_moved
        self.visible = True
        self.polls = 0
        self.moves = 0
        self.last_error: BaseException | None = None
        self._wake = threading.Event()
        self._stopped = False
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        """True while the polling thread runs (started and not stopped)."""
        return self._thread is not None and self._thread.is_alive() and not self._stopped

    def poll(self) -> list[str]:
        """One tick: asks which digests moved (nothing while hidden or stopped) and calls
        ``on_moved`` with them; returns them."""
        if self._stopped or not self.visible:
            return []
        nodes = list(self._moved())
        self.polls += 1
        if nodes:
            self.moves += 1
            self._on_moved(nodes)
        return nodes

    def start(self) -> None:
        """Starts the polling thread (once; nothing after ``stop()``)."""
        if self._stopped or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="procgen-nb-poll", daemon=True)
        self._thread.start()

    def show(self, visible: bool) -> None:
        """The view was shown (polls again, the first at once) or hidden (no polls)."""
        self.visible = bool(visible)
        if self.visible:
            self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Stops polling for good and waits for the thread."""
        self._stopped = True
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        while not self._stopped:
            # hidden: sleep until shown (or stopped), asking nothing meanwhile
            self._wake.wait(self.interval if self.visible else None)
            self._wake.clear()
            if self._stopped:
                return
            try:
                self.poll()
            except Exception as exc:  # kept; a digest that fails is retried next tick
                self.last_error = exc
