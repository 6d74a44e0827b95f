"""Helpers of the kernel-library tests: uploads, live-count domains and a device list."""

from __future__ import annotations

import numpy as np
import warp as wp

from procgen_nb import asset, ops
from procgen_nb.columns import column_from_numpy
from procgen_nb.device import available_devices

DEVICES = ["cpu"] + (["cuda:0"] if "cuda:0" in available_devices() else [])


def ref(name: str):
    """Returns the KernelRef of ``procgen/<name>``."""
    return asset.resolve(f"procgen/{name}", "computeShader")


def up(values, type: str, device: str = "cpu"):
    """Uploads ``values`` as a Column of ``type``."""
    return column_from_numpy(np.asarray(values), type, device)


def domain(n: int, live: int | None, device: str = "cpu"):
    """Returns ``n`` (plain) or ``{count=<word holding live>, capacity=n}`` (a live count)."""
    if live is None:
        return n
    return {"count": up(np.asarray([live], np.uint32), "UInt", device), "capacity": n}


def run(name: str, specialize=None, bind=None, domain=None, uniforms=None):
    """Runs ``procgen/<name>`` with ``ops.device.kernel``; returns its columns Record."""
    return ops.device.kernel(
        kernel=ref(name), specialize=specialize, bind=bind, domain=domain, uniforms=uniforms
    )["columns"]


def host(col) -> np.ndarray:
    """Copies a Column's words (all slots, live or not) to the host."""
    wp.synchronize()
    return col.data.numpy().copy()


def word(count) -> int:
    """Reads a LiveCount's word."""
    return int(count.words.numpy()[0])
