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
