"""What the legacy ``_src`` helpers share: the ambient context and the debug sync."""

from __future__ import annotations

import os
from typing import Any

import warp as wp

from ..exec import LaunchContext


def ambient(ctx: Any = None) -> Any:
    """Returns ``ctx``, or a context on Warp's current device and stream when None (inside
    a legacy plugin's ``ctx.scope()`` that is the call's device and stream)."""
    if ctx is not None:
        return ctx
    dev = wp.get_device()
    return LaunchContext(str(dev), stream=wp.get_stream(dev) if dev.is_cuda else None)


def debug_sync(ctx: Any) -> None:
    """Waits for the device after a helper's launches when ``PROCGEN_NB_DEBUG_SYNC`` is set
    (outside a recording); a no-op otherwise."""
    if os.environ.get("PROCGEN_NB_DEBUG_SYNC") and not getattr(ctx, "recording", False):
        ctx.sync()
