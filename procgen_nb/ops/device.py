"""The ops that run on the device: ``device.kernel``, ``device.bound``, ``device.live``,
``device.guard``."""

from ._kernel import kernel
from ._live import bound, guard, live

__all__ = ["bound", "guard", "kernel", "live"]
