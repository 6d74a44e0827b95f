"""The ops every procgen node is built from, by where they run.

``ops.device.kernel``, ``ops.transfer.upload``, ``ops.transfer.readback``, ``ops.cpu.call``
and ``ops.cpu.read``. Each is an ``Op`` that states its ``runs`` and takes the procgen ABI's
input and param names as keyword arguments; no op calls another.
"""

from __future__ import annotations

import importlib
from typing import Any

from . import device, transfer
from ._op import Op, current_cook

__all__ = ["Op", "cpu", "current_cook", "device", "transfer"]


def __getattr__(name: str) -> Any:
    if name == "cpu":
        return importlib.import_module(".cpu", __name__)
    raise AttributeError(name)
