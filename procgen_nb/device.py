"""Device choice: the CPU by default, CUDA when present, ``PROCGEN_DEVICE`` to override."""

from __future__ import annotations

import os

import warp as wp

from ._progress import init_warp as _init_warp  # noqa: F401  (its home before)
from .errors import DeviceError

_override: str | None = None
#: The host side of a copy (a pinned staging buffer a device word is read into); library
#: code names it, never a literal device.
HOST = "cpu"


def available_devices() -> list[str]:
    """Returns the names of the Warp devices of this machine ("cpu", "cuda:0", ...)."""
    _init_warp()
    return [str(d) for d in wp.get_devices()]


def _check(name: str, source: str) -> str:
    avail = available_devices()
    if name == "cuda" and any(d.startswith("cuda") for d in avail):
        return "cuda:0"
    if name not in avail:
        raise DeviceError(f"{source}: expected one of {avail}, got {name!r}")
    return name


def set_device(name: str | None) -> None:
    """Sets the device procgen_nb uses (``None`` returns to the default); refuses unknown names."""
    global _override
    _override = None if name is None else _check(str(name), "set_device(name)")


def get_device() -> str:
    """Returns the device name in use: set_device(), else ``PROCGEN_DEVICE``, else CUDA or the CPU."""
    if _override is not None:
        return _override
    env = os.environ.get("PROCGEN_DEVICE")
    if env:
        return _check(env, "PROCGEN_DEVICE")
    avail = available_devices()
    cuda = [d for d in avail if d.startswith("cuda")]
    return cuda[0] if cuda else "cpu"


def resolve_device(device: str | None) -> str:
    """Returns ``device`` checked against the machine's devices, or ``get_device()`` for None."""
    return get_device() if device is None else _check(str(device), "device")
