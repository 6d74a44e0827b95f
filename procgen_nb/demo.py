"""The sample graph the quickstart, the CLI demo and the wheel test cook.

``points`` uploads ``n`` seeded random points, ``keep`` flags those inside a shape on the
device and compacts them (the kept count stays on the device as a live count), ``kept``
gathers the kept points over that live count, and ``offsets`` scans the flags.
"""

from __future__ import annotations

import numpy as np

from . import ops
from .asset import resolve
from .graph import Graph, node
from .params import Field

INSIDE = resolve("procgen/inside", "computeShader")
COMPACT = resolve("procgen/compact", "computeShader")
GATHER = resolve("procgen/gather", "computeShader")
SCAN = resolve("procgen/scan", "computeShader")


@node(
    params={
        "n": Field(2000, bounds=(0, 1_000_000), soft=(0, 20_000), doc="number of points"),
        "seed": Field(7, bounds=(0, 2**31 - 1), doc="random seed"),
    }
)
def points(n, seed):
    """Uploads ``n`` points uniform in [-1, 1]^2 drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(-1.0, 1.0, size=(n, 2)).astype(np.float32)
    return ops.transfer.upload(values={"P": xy})["columns"]["P"]


@node(
    params={
        "shape": Field("disk", choices=["disk", "square", "ring"], doc="the shape kept"),
        "radius": Field(0.6, bounds=(0.0, 2.0), doc="radius (half-side for square)"),
        "inner": Field(0.3, bounds=(0.0, 2.0), doc="inner radius of the ring"),
    }
)
def keep(points, shape, radius, inner):
    """Flags the points inside the shape and compacts them on the device."""
    uniforms = {"center": (0.0, 0.0), "radius": radius}
    if shape == "ring":
        uniforms["inner"] = inner
    flags = ops.device.kernel(
        kernel=INSIDE,
        specialize={"SHAPE": shape},
        bind={"points": points},
        domain=points,
        uniforms=uniforms,
    )["columns"]["flags"]
    out = ops.device.kernel(kernel=COMPACT, bind={"flags": flags}, domain=points)["columns"]
    out["flags"] = flags
    return out


@node
def kept(points, keep):
    """Gathers the kept points over the kept count (a live count: nothing is read back)."""
    return ops.device.kernel(
        kernel=GATHER,
        specialize={"TYPE": "vec2"},
        bind={"src": points, "idx": keep["indices"]},
        domain=keep["indices"],
    )["columns"]["dst"]


@node
def offsets(keep):
    """Scans the flags: each kept point's output slot, and the total kept."""
    return ops.device.kernel(
        kernel=SCAN, specialize={"TYPE": "i32"}, bind={"src": keep["flags"]}, domain=keep["flags"]
    )["columns"]


def build_demo_graph() -> Graph:
    """Returns the sample graph: points -> keep -> kept, offsets."""
    g = Graph("quickstart")
    g.add("points", points)
    g.add("keep", keep, points="points")
    g.add("kept", kept, points="points", keep="keep")
    g.add("offsets", offsets, keep="keep")
    return g
