"""The conformance kit: every built-in passes; broken generators fail the right check."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import warp as wp

from procgen_nb.track_gen import testing
from procgen_nb.track_gen.plugin import Stage, registry

BUILTINS = ["bezier", "checkpoint", "hull", "polar", "repulsive", "voronoi"]


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_passes(name, device):
    report = testing.check_generator(registry.get("generator", name), device=device)
    report.raise_if_failed()
    names = [c.name for c in report.checks]
    for check in (
        "closed loop",
        "declared writes",
        "determinism",
        "stream discipline",
        "no allocation or readback",
    ):
        assert check in names


def test_plugin_spec_passes(acme_site):
    report = testing.check_generator(registry.get("generator", "acme.wobbly"))
    assert report.form == "GeneratorSpec"
    report.raise_if_failed()


@wp.kernel
def _circle_k(n: int, xy: wp.array(dtype=wp.vec2)):
    tid = wp.tid()
    th = 6.283185307179586 * float(tid % n) / float(n)
    xy[tid] = wp.vec2(wp.cos(th), wp.sin(th))


@wp.kernel
def _poke_k(seeds: wp.array(dtype=wp.int32)):
    seeds[wp.tid()] = 0


def _stage(name: str, body: Callable[[Any, Any], Callable[[Any], None]]) -> type[Stage]:
    return type("Broken", (Stage,), {"name": name, "writes": ("xy",), "build": body})


def _alloc(self, b, params):
    xy = b.write("xy")

    def enqueue(ctx):
        tmp = wp.zeros(b.E * b.raw, dtype=wp.vec2, device=ctx.device)
        ctx.launch(_circle_k, b.E * b.raw, [b.raw, tmp])
        ctx.copy(xy, tmp)

    return enqueue


def _direct(self, b, params):
    xy = b.write("xy")

    def enqueue(ctx):
        wp.launch(_circle_k, b.E * b.raw, [b.raw, xy], device=ctx.device)

    return enqueue


def _pokes_seeds(self, b, params):
    xy = b.write("xy")

    def enqueue(ctx):
        ctx.launch(_circle_k, b.E * b.raw, [b.raw, xy])
        ctx.launch(_poke_k, b.E, [b.seed])

    return enqueue


def _same_for_every_seed(self, b, params):
    xy = b.write("xy")

    def enqueue(ctx):
        ctx.launch(_circle_k, b.E * b.raw, [b.raw, xy])

    return enqueue


@pytest.mark.parametrize(
    ("body", "check", "detail"),
    [
        (_alloc, "no allocation or readback", "allocation"),
        (_direct, "stream discipline", "bypassed ctx: ['wp.launch']"),
        (_pokes_seeds, "declared writes", "seeds (read-only)"),
        (_same_for_every_seed, "determinism", "another seed gave the same bytes"),
    ],
)
def test_broken_stage_fails_the_right_check(body, check, detail):
    report = testing.check_generator(_stage("test.broken", body))
    failed = {c.name: c.detail for c in report.failures}
    assert check in failed, str(report)
    assert detail in failed[check]
    assert "FAIL" in str(report)
    with pytest.raises(testing.ConformanceError, match="conformance of 'test.broken'"):
        report.raise_if_failed()


def _legacy_generate(seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx=None):
    wp.launch(_circle_k, config.num_envs * config.num_points, [config.num_points, out_centerline])
    out_valid_wp.fill_(1)


def test_legacy_spec_is_reported_not_failed():
    from procgen_nb.track_gen.plugin import GeneratorSpec

    spec = GeneratorSpec(
        name="test.legacy_circle", alloc_scratch=lambda c: None, generate=_legacy_generate
    )
    report = testing.check_generator(spec)
    checks = {c.name: c for c in report.checks}
    assert checks["stream discipline"].passed
    assert (
        "legacy plugin (accepts_ctx=False): 2 direct call(s)" in checks["stream discipline"].detail
    )
    # the same circle for every seed: the kit says so
    assert not checks["determinism"].passed


# -- plugins written from the GeneratorSpec ABI (kit_plugins.py): poison and batch checks --
def test_a_good_spec_passes_every_check():
    from kit_plugins import GOOD

    report = testing.check_generator(GOOD)
    report.raise_if_failed()
    checks = {c.name: c.detail for c in report.checks}
    assert checks["closed loop"] == "8/8 envs accepted"
    assert checks["batch independence"] == "each of 8 envs equals its seed generated alone"


def test_a_kernel_over_n_threads_fails_with_a_report():
    """Only env 0's points are written. The buffer's zeros used to count as a closed loop
    ("PASS"); the kit's NaN poison stays in every other env."""
    from kit_plugins import N_THREADS

    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator

    # the independent reference: the pipeline accepts env 0 only
    tg = TrackGenerator(
        TrackGenConfig(num_envs=8, num_points=64, device="cpu"), generator=N_THREADS
    )
    assert tg.generate().num_valid() == 1
    report = testing.check_generator(N_THREADS)
    failed = {c.name: c.detail for c in report.failures}
    assert set(failed) == {"closed loop", "batch independence"}, str(report)
    assert "env 0" not in failed["closed loop"]
    assert "env 1: 64 of 64 raw points not written (NaN poison left)" in failed["closed loop"]
    assert "and 3 more" in failed["closed loop"]  # envs 1..7: 4 named, 3 more
    assert "env 1 (" in failed["batch independence"]
    assert "FAIL" in str(report)


def test_an_env_reading_its_neighbours_seed_fails_batch_independence():
    from kit_plugins import PREV_SEED

    report = testing.check_generator(PREV_SEED)
    failed = {c.name: c.detail for c in report.failures}
    assert set(failed) == {"batch independence"}, str(report)
    assert failed["batch independence"].startswith(
        "differs from its seed generated alone: env 0 (xy); env 1 (xy)"
    )
    with pytest.raises(testing.ConformanceError, match=r"\[FAIL\] batch independence"):
        report.raise_if_failed()


def test_a_spec_allocating_per_call_is_reported_not_raised():
    """It claims to be capturable and allocates through ctx in every call: recording it
    raises NotCapturableError, which the kit reports in the checks that record."""
    from kit_plugins import ALLOCATES

    report = testing.check_generator(ALLOCATES)
    failed = {c.name: c.detail for c in report.failures}
    assert set(failed) == {"no allocation or readback", "determinism"}, str(report)
    assert "1 allocation(s)" in failed["no allocation or readback"]
    assert "first call raised NotCapturableError" in failed["determinism"]


def test_a_check_that_raises_is_a_failed_check():
    """A generator whose second and later builds raise: the kit reports the checks that
    build it again (determinism, batch independence), it does not raise."""
    from kit_plugins import GOOD

    from procgen_nb.track_gen.plugin import GeneratorSpec

    calls = []

    def alloc(config):
        calls.append(config.num_envs)
        if len(calls) > 1:
            raise RuntimeError("out of scratch")
        return None

    spec = GeneratorSpec(
        name="test.kit_once", alloc_scratch=alloc, generate=GOOD.generate, accepts_ctx=True
    )
    report = testing.check_generator(spec)
    failed = {c.name: c.detail for c in report.failures}
    assert set(failed) == {"determinism", "batch independence"}, str(report)
    assert failed["batch independence"] == "raised RuntimeError: out of scratch"


def test_a_large_batch_compares_a_spread_of_its_envs_alone():
    from kit_plugins import GOOD, PREV_SEED

    from procgen_nb.track_gen._kit import MAX_ALONE, alone_envs

    assert MAX_ALONE == 16
    assert alone_envs(3) == [0, 1, 2] and alone_envs(16) == list(range(16))
    big = alone_envs(1024)
    assert big[:2] == [0, 1] and big[-1] == 1023 and len(big) == 16
    assert big == sorted(set(big))
    ok = {c.name: c for c in testing.check_generator(GOOD, num_envs=40).checks}
    assert ok["batch independence"].passed
    assert ok["batch independence"].detail.endswith("(16 of 40 checked)")
    bad = {c.name: c for c in testing.check_generator(PREV_SEED, num_envs=40).failures}
    assert "env 1 (xy)" in bad["batch independence"].detail
