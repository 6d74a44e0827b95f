"""The Record a Lua call answers, and what releasing it means."""

from __future__ import annotations

from ..columns import Record
from .values import iter_handles


class CallResult(Record):
    """The output of ``cpu.call`` / ``cpu.read``: ``values``, the results in order.

    A Handle that the Lua call made (with ``handle(value, release)``) belongs to the
    result: ``release()`` releases every such Handle among the values. A Handle the
    caller passed in args and the call handed back stays its owner's and is not released.
    The graph calls ``release()`` when it lets a node's output go (a later cook replaced
    it, or the graph was dropped).
    """

    def release(self) -> None:
        """Releases every Handle the call made among ``values`` (each at most once)."""
        for h in iter_handles(self.get("values", [])):
            if h.origin == "lua":
                h.release()

    @property
    def handles(self) -> list:
        """The Handles among ``values``, in order."""
        return list(iter_handles(self.get("values", [])))
