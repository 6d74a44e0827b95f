"""The browser's side of an ipywidgets model, as ``@jupyter-widgets/base`` 6 keeps it.

``Link(widget)`` stands between a kernel-side widget and a ``BrowserModel``: what the
browser sends waits in one queue and what the kernel sends in another, so a test decides
when each message arrives (a kernel that answers late, presses faster than its echoes).
The rules are the front end's (``WidgetModel._handle_comm_msg``): a kernel ``update`` is
applied; an ``echo_update`` of a value is dropped while the browser has sent a newer one
of that value (only the echo of its last message is taken, and then it stops waiting).
The kernel side is ipywidgets' own ``Widget.set_state`` (it sends the echo first, then
sets the trait with the property lock held), so its handlers run as in a live kernel.
"""

from __future__ import annotations

import collections
import itertools
from typing import Any

_ids = itertools.count(1)


class _Comm:
    """Takes what the kernel sends; tags it with the message being handled (its parent)."""

    kernel = True  # ipywidgets sends only through a comm with a kernel

    def __init__(self, link: Link):
        self.link = link
        self.comm_id = f"fake-comm-{next(_ids)}"

    def send(self, data: Any = None, buffers: Any = None, **_: Any) -> None:
        self.link.to_browser.append((data["method"], dict(data["state"]), self.link.parent))

    def close(self, *a: Any, **k: Any) -> None:
        pass

    def on_msg(self, *a: Any) -> None:
        pass


class Link:
    """One widget and its browser copy, with a queue each way."""

    def __init__(self, widget: Any):
        self.widget = widget
        self.value = widget.value  # what the browser shows
        self.expected: str | None = None  # the id of the browser's last message of value
        self.to_kernel: collections.deque = collections.deque()
        self.to_browser: collections.deque = collections.deque()
        self.parent: str | None = None
        self.sent: list[Any] = []
        widget.comm = _Comm(self)

    # -- the browser --------------------------------------------------------------------
    def edit(self, value: Any) -> None:
        """A person's edit: the browser shows it at once and sends it."""
        self.value = value
        msg_id = f"m{next(_ids)}"
        self.expected = msg_id
        self.sent.append(value)
        self.to_kernel.append((msg_id, {"value": value}))

    def browser_receives(self) -> None:
        """The next message from the kernel reaches the browser."""
        method, state, parent = self.to_browser.popleft()
        if "value" in state and method == "echo_update" and self.expected is not None:
            if parent != self.expected:
                del state["value"]  # an echo of an older edit: dropped
            else:
                self.expected = None  # its last edit confirmed: takes values again
        if "value" in state:
            self.value = state["value"]

    # -- the kernel ---------------------------------------------------------------------
    def kernel_receives(self) -> None:
        """The next message from the browser reaches the kernel (ipywidgets handles it)."""
        msg_id, state = self.to_kernel.popleft()
        self.parent = msg_id
        try:
            self.widget.set_state(state)
        finally:
            self.parent = None

    def settle(self) -> None:
        """Delivers everything still on its way, kernel first."""
        while self.to_kernel or self.to_browser:
            while self.to_kernel:
                self.kernel_receives()
            while self.to_browser:
                self.browser_receives()
