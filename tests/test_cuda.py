"""What only a GPU runs: CUDA graph recordings of cooks, deferred guard reads through pinned
memory, and the same counts as the CPU. Skipped, with the reason, where there is no CUDA device."""

from __future__ import annotations

import numpy as np
import pytest

import procgen_nb as pg
from procgen_nb import asset, cookrun, ops
from procgen_nb.device import available_devices

CUDA = [d for d in available_devices() if d.startswith("cuda")]
pytestmark = pytest.mark.skipif(not CUDA, reason="needs a CUDA device; this machine has none")

INSIDE = asset.resolve("procgen/inside")
COMPACT = asset.resolve("procgen/compact")
PTS = np.random.default_rng(3).uniform(-1, 1, size=(4096, 2)).astype(np.float32)


def graph(device):
    @pg.node
    def points():
        return ops.transfer.upload(values={"P": PTS}, device=device)["columns"]["P"]

    @pg.node(params={"radius": pg.Field(0.3, dynamic=True)})
    def keep(points, radius):
        flags = ops.device.kernel(
            kernel=INSIDE,
            bind={"points": points},
            domain=points,
            uniforms={"center": (0.0, 0.0), "radius": radius},
        )["columns"]["flags"]
        found = ops.device.kernel(kernel=COMPACT, bind={"flags": flags}, domain=points)["columns"]
        return ops.device.bound(value=found["indices_count"].words)

    g = pg.Graph(f"cuda-{device}")
    g.add("points", points)
    g.add("keep", keep, points="points")
    return g


def count(r):
    return int(r["keep"].words.numpy()[0])


def test_cuda_replay_gives_the_cpu_counts_and_reads_nothing():
    cpu, gpu = graph("cpu"), graph(CUDA[0])
    for g in (cpu, gpu):
        g.cook()
    for radius in (0.2, 0.35):
        a, b = cpu.cook(params={"keep.radius": radius}), gpu.cook(params={"keep.radius": radius})
        assert b.report.replayed and b.report.totals.readbacks == 0
        assert (
            count(a) == count(b) == int((np.linalg.norm(PTS, axis=1) <= np.float32(radius)).sum())
        )


def test_cuda_guard_is_read_deferred_and_found_by_the_next_cook():
    g = graph(CUDA[0])
    g.cook(params={"keep.radius": 0.1})
    room = g.last["keep"].capacity
    before = pg.traffic().deferred_reads
    g.cook(params={"keep.radius": 0.9})  # outgrows the room: clamped, guard set on the GPU
    assert pg.traffic().deferred_reads > before
    guarded = cookrun.counts().guarded
    r = g.cook(params={"keep.radius": 0.9})
    assert cookrun.counts().guarded == guarded + 1 and r["keep"].capacity >= 4 * room
