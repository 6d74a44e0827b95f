"""Seed 004 rules the conformance kit and the gate orderings must follow (issue 14).

Each test quotes its rule. References are hand-built plugins whose behaviour is known by
construction (one that allocates through ``ctx``, one that reads outside ``ctx.host()``)
and hand-computed gate positions, never the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from procgen_nb.track_gen import GateGenConfig, GateGenerator
from procgen_nb.track_gen.gates import GateStage
from procgen_nb.track_gen.gates.stage import GateLayout
from procgen_nb.track_gen.plugin import CaptureClass, GeneratorSpec, Stage
from procgen_nb.track_gen.testing import check_gate_generator, check_generator


@wp.kernel
def _ring_k(
    raw: int,
    r: wp.array(dtype=float),
    seeds: wp.array(dtype=wp.int32),
    xy: wp.array(dtype=wp.vec2),
):
    tid = wp.tid()
    i = tid % raw
    th = 6.283185307179586 * float(i) / float(raw)
    rad = r[0] * (1.0 + 0.1 * float(wp.abs(seeds[tid / raw]) % 5))
    xy[tid] = wp.vec2(rad * wp.cos(th), rad * wp.sin(th))


def _host_spec_allocating() -> GeneratorSpec:
    """A ``capturable=False`` spec that allocates per call through ctx and branches on a
    readback (what the seed allows it)."""

    def generate(seeds_wp, config, out, valid, scratch, ctx=None):
        r = ctx.zeros(1, float)  # per-call allocation, through ctx
        ctx.fill(r, 1.0)
        first = ctx.upload(np.array([0.5], dtype=np.float32), float)
        if ctx.readback(seeds_wp).size:  # host control flow on a readback
            ctx.copy(r, first)
        ctx.launch(
            _ring_k, config.num_envs * config.num_points, [config.num_points, r, seeds_wp, out]
        )
        ctx.fill(valid, 1)

    return GeneratorSpec(
        name="t.host_alloc",
        alloc_scratch=lambda c: None,
        generate=generate,
        capturable=False,
        accepts_ctx=True,
    )


def _check(report, name):
    return next(c for c in report.checks if c.name == name)


def test_host_spec_allocating_through_ctx_keeps_stream_discipline():
    """Seed: "A generator may set ``capturable=False`` to opt out of hard rules 2 and 3: it
    may allocate per call and use host-side control flow"; and "Set ``accepts_ctx=True``
    and emit all device work through ``ctx``". Allocating through ``ctx`` is through it."""
    report = check_generator(_host_spec_allocating(), num_envs=4, num_points=32, device="cpu")
    assert _check(report, "stream discipline").passed, str(report)
    assert _check(report, "no allocation or readback").passed, str(report)
    assert report.ok, str(report)


def test_direct_allocation_zeroing_outside_ctx_still_fails_stream_discipline():
    """Seed: "Never call ``arr.zero_()``, ``arr.fill_()``, or a ``wp.launch`` / ``wp.copy``
    without ``stream=``" (``wp.zeros`` zeroes through ``zero_`` on Warp's current stream)."""
    spec = _host_spec_allocating()
    inner = spec.generate

    def generate(seeds_wp, config, out, valid, scratch, ctx=None):
        wp.zeros(4, dtype=float, device=ctx.device)
        inner(seeds_wp, config, out, valid, scratch, ctx=ctx)

    spec.generate = generate
    report = check_generator(spec, num_envs=4, num_points=32, device="cpu")
    check = _check(report, "stream discipline")
    assert not check.passed and "array.zero_" in check.detail


class _HostRing(Stage):
    name = "t.host_ring"
    capture = CaptureClass.HOST
    inside_host = True

    def build(self, b, params):
        xy, r = b.write("xy"), b.scratch("r", float, 1)
        E, raw, inside = b.E, b.raw, self.inside_host

        def enqueue(ctx):
            ctx.fill(r, 1.0)
            if inside:
                with ctx.host():
                    n = int(ctx.readback(b.seed).size)
            else:
                n = int(ctx.readback(b.seed).size)  # outside ctx.host()
            if n:
                ctx.launch(_ring_k, E * raw, [raw, r, b.seed, xy])

        return enqueue


class _HostRingOutside(_HostRing):
    name = "t.host_ring_outside"
    inside_host = False


def test_host_stage_reading_outside_ctx_host_fails_naming_it():
    """Seed: "A ``Stage`` declares ``capture = CaptureClass.HOST`` instead and reaches the
    host through ``ctx.host()`` (:ref:`stage-host`), which the conformance kit can check"."""
    good = check_generator(_HostRing, num_envs=4, num_points=32, device="cpu")
    assert good.ok, str(good)
    bad = check_generator(_HostRingOutside, num_envs=4, num_points=32, device="cpu")
    check = _check(bad, "no allocation or readback")
    assert not check.passed
    assert "outside ctx.host()" in check.detail and "1 readback(s)" in check.detail
    assert not bad.ok and "ctx.host()" in str(bad)


class _Square(GateStage):
    """Four gates per env, written clockwise from (1, 1): (1, 1), (1, -1), (-1, -1), (-1, 1)."""

    name = "t.square"
    preferred = {"order": "raw", "normalize": None}
    capture = CaptureClass.GRAPH
    read_outside = False

    def capacity(self, params, layout: GateLayout):
        return {"gates": 4, "min_gates": 4}

    def build(self, b, params):
        xy, count = b.write("anchors.xy"), b.write("anchors.count")
        pts = np.tile(np.array([[1, 1], [1, -1], [-1, -1], [-1, 1]], np.float32), (b.E, 1))
        src = wp.array(pts, dtype=wp.vec2, device=b.device)
        outside = self.read_outside

        def enqueue(ctx):
            ctx.copy(xy, src)
            ctx.fill(count, 4)
            if outside:
                ctx.readback(count)

        return enqueue


SQUARE_CW = np.array([[1, 1], [1, -1], [-1, -1], [-1, 1]], np.float32)


def _angles(pts):
    return np.arctan2(pts[:, 1], pts[:, 0])


def test_preferred_order_takes_effect_when_gate_ordering_is_unset():
    """Seed: "declare the orders it accepts with ``excluded_orderings`` (or ``orderings``)
    and ``preferred={"order": ...}``": the preferred order is the one run when
    ``GateGenConfig.gate_ordering`` is unset (None); an explicit ordering still wins."""
    g = GateGenerator(GateGenConfig(num_envs=3, max_gates=8, device="cpu"), generator=_Square)
    assert g.ordering == "raw"
    assert "order.raw" in g.step_names
    out = g.result.numpy()
    for e in range(3):
        np.testing.assert_array_equal(out["xy"][e, :4], SQUARE_CW)  # as written: clockwise
    ccw = GateGenerator(
        GateGenConfig(num_envs=3, max_gates=8, device="cpu", gate_ordering="ccw"),
        generator=_Square,
    )
    assert ccw.ordering == "ccw"
    got = ccw.result.numpy()["xy"][0, :4]
    assert sorted(map(tuple, got.tolist())) == sorted(map(tuple, SQUARE_CW.tolist()))
    # counter-clockwise from its first gate: the angle rises, wrapping once at most
    a = np.unwrap(_angles(got))
    assert (np.diff(a) > 0).all()

    class _Pairs(_Square):
        name = "t.square_pairs"
        preferred = {"order": "random_pairs", "normalize": None}

    assert (
        GateGenerator(GateGenConfig(num_envs=2, max_gates=8, device="cpu"), generator=_Pairs)
    ).ordering == "random_pairs"

    class _NotAccepted(_Square):
        name = "t.square_unaccepted"
        orderings = frozenset({"ccw", "random_pairs"})
        preferred = {"order": "raw", "normalize": None}

    # a preferred order it does not accept is not run (the kit reports the declaration)
    g = GateGenerator(GateGenConfig(num_envs=2, max_gates=8, device="cpu"), generator=_NotAccepted)
    assert g.ordering == "ccw"
    report = check_gate_generator(_NotAccepted, num_envs=2, max_gates=8, device="cpu")
    assert "preferred order 'raw' is not accepted" in _check(report, "declarations").detail


def test_gate_kit_host_stage_reading_outside_ctx_host_fails():
    """Seed: a HOST Stage "reaches the host through ``ctx.host()``, which the conformance
    kit can check" (gate generators are Stages too)."""

    class _HostSquare(_Square):
        name = "t.host_square"
        capture = CaptureClass.HOST
        read_outside = True

    report = check_gate_generator(_HostSquare, num_envs=2, max_gates=8, device="cpu")
    check = _check(report, "no allocation or readback")
    assert not check.passed and "outside ctx.host()" in check.detail
    assert _check(
        check_gate_generator(_Square, num_envs=2, max_gates=8, device="cpu"),
        "no allocation or readback",
    ).passed


@pytest.mark.parametrize("ordering", ["raw", "ccw", "random_pairs"])
def test_explicit_ordering_overrides_the_preferred_one(ordering):
    """Seed: ``GateGenConfig.gate_ordering`` chooses the ordering; the preferred one is for
    None only."""
    g = GateGenerator(
        GateGenConfig(num_envs=2, max_gates=8, device="cpu", gate_ordering=ordering),
        generator=_Square,
    )
    assert g.ordering == ordering and f"order.{ordering}" in g.step_names
