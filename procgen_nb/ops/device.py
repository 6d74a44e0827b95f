"""The ops that run on the device: ``device.kernel`` (and, with live counts, bound/live/guard)."""

from ._kernel import kernel

__all__ = ["kernel"]
