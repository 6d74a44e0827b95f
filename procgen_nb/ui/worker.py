"""A background cook loop: the newest request wins, at most one cook per interval.

``CookLoop.request(item)`` never blocks. One daemon thread runs ``work(item)`` for the
newest item: a request that arrives while a cook runs replaces the one queued, and a
cook starts no sooner than ``min_interval`` seconds after the previous one started, so a
slider dragged continuously cooks a few times a second and its last value (the release)
always cooks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

_NOTHING = object()


class CookLoop:
    """Runs ``work`` on a background thread for the newest requested item.

    Args:
        work: called with each item on the loop's thread; what it raises is kept in
            ``last_error`` (the loop keeps running).
        min_interval: the least seconds between the starts of two cooks.

    Attributes:
        runs: how many times ``work`` has returned or raised.
        last_error: the exception the last run raised, or None.
    """

    def __init__(self, work: Callable[[Any], None], min_interval: float = 0.25):
        self._work = work
        self.min_interval = float(min_interval)
        self._cv = threading.Condition()
        self._pending: Any = _NOTHING
        self._busy = False
        self._closed = False
        self._last_start = float("-inf")
        self._thread: threading.Thread | None = None
        self.runs = 0
        self.last_error: BaseException | None = None

    def request(self, item: Any) -> None:
        """Queues ``item`` in place of any queued one; starts the thread on first use.

        Raises:
            RuntimeError: after ``close()``.
        """
        with self._cv:
            if self._closed:
                raise RuntimeError("CookLoop.request: expected an open loop, got a closed one")
            self._pending = item
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="procgen-nb-cook", daemon=True
                )
                self._thread.start()
            self._cv.notify_all()

    @property
    def idle(self) -> bool:
        """True when nothing is queued or running."""
        with self._cv:
            return self._pending is _NOTHING and not self._busy

    def wait(self, timeout: float | None = None) -> bool:
        """Blocks until nothing is queued or running; returns False on timeout."""
        with self._cv:
            return self._cv.wait_for(
                lambda: self._closed or (self._pending is _NOTHING and not self._busy), timeout
            )

    def close(self, timeout: float = 10.0) -> None:
        """Drops what is queued, lets a running cook finish and stops the thread."""
        with self._cv:
            self._closed = True
            self._pending = _NOTHING
            self._cv.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _next(self) -> Any:
        with self._cv:
            while True:
                if self._closed:
                    return _NOTHING
                if self._pending is _NOTHING:
                    self._cv.wait()
                    continue
                delay = self._last_start + self.min_interval - time.monotonic()
                if delay > 0:
                    self._cv.wait(delay)
                    continue
                item, self._pending = self._pending, _NOTHING
                self._busy = True
                self._last_start = time.monotonic()
                return item

    def _run(self) -> None:
        while True:
            item = self._next()
            if item is _NOTHING:
                return
            try:
                self._work(item)
                error = None
            except BaseException as exc:  # kept for the caller; the loop must keep running
                error = exc
            with self._cv:
                self.last_error = error
                self._busy = False
                self.runs += 1
                self._cv.notify_all()
