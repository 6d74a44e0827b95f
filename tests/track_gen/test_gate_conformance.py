"""The gate conformance kit: every built-in passes; broken gate generators fail the right
check, for anchors Stages and GateGeneratorSpecs alike."""

from __future__ import annotations

import types

import pytest
import warp as wp

from procgen_nb.track_gen.gates import BUILTINS, Free, _warn
from procgen_nb.track_gen.gates.testing import check_all_gates, check_gate_generator
from procgen_nb.track_gen.plugin import GateGeneratorSpec
from procgen_nb.track_gen.testing import ConformanceError

CHECKS = [
    "params",
    "declarations",
    "anchors",
    "declared writes",
    "no allocation or readback",
    "stream discipline",
    "determinism",
    "batch independence",
    "orderings",
]


@pytest.mark.parametrize("stage", BUILTINS, ids=lambda s: s.name)
def test_builtin_passes(stage, device):
    report = check_gate_generator(stage, device=device)
    report.raise_if_failed()
    assert [c.name for c in report.checks] == CHECKS
    assert report.form == "Stage"


def test_check_all_gates_covers_the_registry():
    reports = check_all_gates(num_envs=4)
    assert {"arc_length", "curvature", "free"} <= set(reports)
    assert all(r.ok for r in reports.values())


def _failed(report):
    return {c.name for c in report.failures}


@wp.kernel
def _fill_k(xy: wp.array(dtype=wp.vec2), count: wp.array(dtype=wp.int32), stride: int, pad: int):
    tid = wp.tid()
    e = tid // stride
    g = tid - e * stride
    count[e] = 4
    if g < 4:
        a = 1.5707963 * float(g)
        xy[tid] = wp.vec2(wp.cos(a), wp.sin(a))
    elif pad != 0:
        xy[tid] = wp.vec2(wp.nan, wp.nan)
    else:
        xy[tid] = wp.vec2(0.0, 0.0)


class _Square(Free):
    name = "test.square"
    pad = 1

    def capacity(self, params, layout):
        return {"gates": 6, "min_gates": 4}

    def build(self, b, params):
        xy, count = b.write("anchors.xy"), b.write("anchors.count")
        dim, stride, pad = b.E * b.raw, b.raw, self.pad

        def enqueue(ctx):
            ctx.launch(_fill_k, dim, [xy, count, stride, pad])

        return enqueue


def test_a_fixed_layout_fails_only_determinism():
    report = check_gate_generator(_Square)
    assert _failed(report) == {"determinism"}
    assert "another seed gave the same bytes" in str(report)
    with pytest.raises(ConformanceError, match=r"\[FAIL\] determinism"):
        report.raise_if_failed()


class _NoPad(_Square):
    name = "test.nopad"
    pad = 0


def test_missing_nan_padding_fails_anchors():
    report = check_gate_generator(_NoPad)
    assert "anchors" in _failed(report)
    assert "slots after the count are not NaN" in str(report)


class _Allocates(_Square):
    name = "test.allocates"

    def build(self, b, params):
        inner = super().build(b, params)

        def enqueue(ctx):
            wp.zeros(8, dtype=float, device=ctx.device)
            inner(ctx)

        return enqueue


def test_allocation_in_enqueue_fails():
    report = check_gate_generator(_Allocates)
    assert "no allocation or readback" in _failed(report)
    assert "allocation" in str(report)


class _Direct(_Square):
    name = "test.direct"

    def build(self, b, params):
        xy, count = b.write("anchors.xy"), b.write("anchors.count")
        dim, stride = b.E * b.raw, b.raw

        def enqueue(ctx):
            wp.launch(_fill_k, dim=dim, inputs=[xy, count, stride, 1], device=ctx.device)

        return enqueue


def test_direct_launch_fails_stream_discipline():
    report = check_gate_generator(_Direct)
    assert "stream discipline" in _failed(report)
    assert "bypassed ctx: ['wp.launch']" in str(report)


class _BadDecl(_Square):
    name = "test.baddecl"
    preferred = {"order": "zigzag", "normalize": "box"}


def test_bad_preferred_fails_declarations():
    report = check_gate_generator(_BadDecl)
    assert "declarations" in _failed(report)
    text = str(report)
    assert "preferred order 'zigzag' is not accepted" in text
    assert "preferred normalize 'box' not None or 'extent'" in text


class _TooBig(_Square):
    name = "test.toobig"

    def capacity(self, params, layout):
        return {"gates": 64, "min_gates": 4}


def test_capacity_outside_the_config_is_reported():
    report = check_gate_generator(_TooBig)
    assert _failed(report) == {"declarations"}
    assert "expected gates in [min_gates=3, max_gates=32], got 64" in str(report)


# -- GateGeneratorSpec ----------------------------------------------------------------------
def _spec(name, clockwise):
    def generate(seeds_wp, config, out, scratch, ctx=None):
        ctx.launch(_fill_k, out.position.shape[0], [out.position, out.count, config.max_gates, 1])
        if clockwise:
            ctx.launch(_reverse_k, config.num_envs, [out.position, config.max_gates])

    return GateGeneratorSpec(
        name=name,
        alloc_scratch=lambda config: types.SimpleNamespace(),
        generate=generate,
        max_gates=lambda config: 4,
        supported_orderings=frozenset({"ccw"}),
        accepts_ctx=True,
    )


@wp.kernel
def _reverse_k(xy: wp.array(dtype=wp.vec2), stride: int):
    e = wp.tid()
    b = e * stride
    p = xy[b + 1]
    xy[b + 1] = xy[b + 3]
    xy[b + 3] = p


def test_legacy_spec_claiming_ccw_but_emitting_clockwise_fails_orderings():
    _warn._forget("gate:acme.clockwise")
    with pytest.warns(DeprecationWarning, match="'acme.clockwise' is deprecated"):
        report = check_gate_generator(_spec("acme.clockwise", True))
    assert report.form == "GateGeneratorSpec"
    assert "orderings" in _failed(report)
    assert "ccw: env 0 is not sorted counter-clockwise" in str(report)
    _warn._forget("gate:acme.counter")
    with pytest.warns(DeprecationWarning):
        ok = check_gate_generator(_spec("acme.counter", False))
    assert _failed(ok) == {"determinism"}  # the fixed layout ignores its seeds


@wp.kernel
def _seeded_k(
    seeds: wp.array(dtype=wp.int32),
    shift: int,
    xy: wp.array(dtype=wp.vec2),
    count: wp.array(dtype=wp.int32),
    stride: int,
):
    tid = wp.tid()
    e = tid // stride
    g = tid - e * stride
    E = seeds.shape[0]
    s = seeds[(e + E - shift) % E]  # shift 0: the env's own seed
    n = 4 + int(s & 1)
    if g == 0:
        count[e] = n
    if g < n:
        a = 6.283185307 * float(g) / float(n) + 0.001 * float(s & 255)
        xy[tid] = wp.vec2(wp.cos(a), wp.sin(a))
    else:
        xy[tid] = wp.vec2(wp.nan, wp.nan)


class _Seeded(_Square):
    """Four or five gates on a circle, turned by the env's seed: it passes the kit."""

    name = "test.seeded"
    shift = 0
    threads_per_env = True

    def build(self, b, params):
        xy, count = b.write("anchors.xy"), b.write("anchors.count")
        stride, seeds, shift = b.raw, b.seed, self.shift
        dim = b.E * b.raw if self.threads_per_env else b.raw

        def enqueue(ctx):
            ctx.launch(_seeded_k, dim, [seeds, shift, xy, count, stride])

        return enqueue


class _SeededOneEnv(_Seeded):
    """Launches ``stride`` threads instead of ``E * stride``: env 0 only."""

    name = "test.seeded_one_env"
    threads_per_env = False


class _SeededPrevSeed(_Seeded):
    """Env ``e`` reads env ``e - 1``'s seed."""

    name = "test.seeded_prev_seed"
    shift = 1


def test_a_seeded_gate_stage_passes():
    report = check_gate_generator(_Seeded)
    report.raise_if_failed()
    assert [c.name for c in report.checks] == CHECKS


def test_a_gate_kernel_over_one_envs_threads_fails_anchors():
    """Envs 1.. keep the poisoned count (-1) of the kit's call."""
    report = check_gate_generator(_SeededOneEnv)
    failed = {c.name: c.detail for c in report.failures}
    assert "anchors" in failed, str(report)
    assert "env 0" not in failed["anchors"]
    assert "env 1: count -1 not in [4, 6]" in failed["anchors"]


def test_a_gate_stage_reading_its_neighbours_seed_fails_batch_independence():
    report = check_gate_generator(_SeededPrevSeed)
    failed = {c.name: c.detail for c in report.failures}
    assert set(failed) == {"batch independence"}, str(report)
    assert "env 1 (" in failed["batch independence"]


class _SkipsLastGate(_Seeded):
    """Writes NaN over the last gate below each env's count, as an unwritten gate reads."""

    name = "test.skips_last_gate"

    def build(self, b, params):
        inner = super().build(b, params)
        xy, stride = b.write("anchors.xy"), b.raw

        def enqueue(ctx):
            inner(ctx)
            ctx.launch(_unwrite_last_k, b.E, [xy, b.write("anchors.count"), stride])

        return enqueue


@wp.kernel
def _unwrite_last_k(xy: wp.array(dtype=wp.vec2), count: wp.array(dtype=wp.int32), stride: int):
    e = wp.tid()
    xy[e * stride + count[e] - 1] = wp.vec2(wp.nan, wp.nan)


def test_an_unwritten_gate_below_the_count_fails_anchors():
    report = check_gate_generator(_SkipsLastGate)
    failed = {c.name: c.detail for c in report.failures}
    assert "anchors" in failed, str(report)
    assert "env 0: 1 of " in failed["anchors"] and "gates not written" in failed["anchors"]
