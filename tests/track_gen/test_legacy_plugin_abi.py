"""The 0.1 plugin interfaces: every legacy name and parameter list is pinned, and every row
of the seed's Status table is a test (the warning it states, or none, and the behaviour).

The legacy gate generator below is written from the seed's text of the 0.1 gate ABI alone:
``generate(seeds_wp, config, out, scratch, ctx=None)`` fills ``out.position``
(``[E * config.max_gates]`` vec2, NaN after each env's gates) and ``out.count``.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import warnings

import numpy as np
import pytest
import warp as wp

from procgen_nb.errors import DuplicateSpecError, GeneratorError, NotCapturableError
from procgen_nb.params import Field, Params
from procgen_nb.track_gen import ops
from procgen_nb.track_gen._src import (
    gate_generator_registry,
    generator_registry,
    warp_gate,
    warp_generate,
    warp_generate_hull,
    warp_pipeline,
)
from procgen_nb.track_gen.config import TrackGenConfig
from procgen_nb.track_gen.exec import LaunchContext, salt
from procgen_nb.track_gen.gates import GateGenConfig, GateGenerator, _warn
from procgen_nb.track_gen.gates.course import Course, build
from procgen_nb.track_gen.gates.presets import gates
from procgen_nb.track_gen.gates.testing import check_gate_generator
from procgen_nb.track_gen.ops.funcs import rand01, stream_key
from procgen_nb.track_gen.pipeline import TrackGenerator
from procgen_nb.track_gen.plugin import GateGeneratorSpec, GeneratorSpec, registry

HERE = __file__


@pytest.fixture(autouse=True)
def _fresh_warnings():
    _warn._forget()
    yield
    _warn._forget()


# -- a 0.1 gate plugin, from the seed's text ---------------------------------------------------
class RingParams(Params):
    owner = "acme.ring"
    gates: int = Field(6, bounds=(3, 64), doc="gates around the ring")
    radius: float = Field(0.8, bounds=(0.1, 1.0), doc="ring radius")


@wp.kernel
def _ring_k(
    seeds: wp.array(dtype=wp.int32),
    n: int,
    max_gates: int,
    radius: float,
    clockwise: int,
    position: wp.array(dtype=wp.vec2),
    count: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    phase = 6.2831853 * rand01(stream_key(seeds[e], 77), 0)
    for g in range(max_gates):
        if g < n:
            k = float(g)
            if clockwise != 0:
                k = -k
            a = phase + 6.2831853 * k / float(n)
            position[e * max_gates + g] = wp.vec2(radius * wp.cos(a), radius * wp.sin(a))
        else:
            position[e * max_gates + g] = wp.vec2(wp.nan, wp.nan)
    count[e] = n


def _ring_alloc(config):
    return types.SimpleNamespace(
        unused=wp.zeros(config.num_envs, dtype=float, device=str(config.device))
    )


def _ring_generate(seeds_wp, config, out, scratch, ctx=None):
    p = config.generator_params
    cw = int(config.gate_ordering == "raw")
    ctx.launch(
        _ring_k,
        config.num_envs,
        [seeds_wp, p.gates, config.max_gates, p.radius, cw, out.position, out.count],
    )


def ring_spec(name="acme.ring"):
    return GateGeneratorSpec(
        name=name,
        alloc_scratch=_ring_alloc,
        generate=_ring_generate,
        max_gates=lambda config: config.generator_params.gates,
        supported_orderings=frozenset({"ccw", "raw"}),
        accepts_ctx=True,
        params=RingParams,
    )


@wp.kernel
def _scatter_points_k(
    seeds: wp.array(dtype=wp.int32),
    max_gates: int,
    n: int,
    position: wp.array(dtype=wp.vec2),
    count: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    key = stream_key(seeds[e], 5)
    for g in range(n):
        position[e * max_gates + g] = wp.vec2(rand01(key, 2 * g), rand01(key, 2 * g + 1))
    count[e] = n


def _helper_alloc(config):
    return types.SimpleNamespace(order=warp_gate.alloc_order_scratch(config))


def _helper_generate(seeds_wp, config, out, scratch, ctx=None):
    # a 0.1 legacy plugin: its own launch on Warp's current device, then the helpers
    wp.launch(
        _scatter_points_k,
        dim=config.num_envs,
        inputs=[seeds_wp, config.max_gates, 7, out.position, out.count],
    )
    warp_gate.order_points(out.position, out.count, config, scratch.order, seeds_wp)
    warp_gate.finish_ordered_gates(out, config, normalize_extent=True)


def helper_spec(name="acme.helpers"):
    return GateGeneratorSpec(
        name=name,
        alloc_scratch=_helper_alloc,
        generate=_helper_generate,
        max_gates=lambda config: 7,
        supported_orderings=frozenset({"ccw", "random_pairs", "raw"}),
    )


# -- pinned names and parameter lists ------------------------------------------------------
SIGNATURES = {
    warp_gate.alloc_order_scratch: "(config: 'Any') -> '_OrderScratch'",
    warp_gate.order_points: "(position: 'wp.array', count: 'wp.array', config: 'Any', "
    "scratch: '_OrderScratch', seeds_wp: 'wp.array | None' = None, ctx: 'Any' = None) -> 'None'",
    warp_gate.finish_ordered_gates: "(out: 'Any', config: 'Any', normalize_extent: 'bool' = "
    "True, ctx: 'Any' = None) -> 'None'",
    warp_pipeline._init: "() -> 'None'",
    warp_pipeline._sync: "(device: 'Any') -> 'None'",
    warp_pipeline._arc_resample_inplace: "(src_wp: 'wp.array', dst_wp: 'wp.array', cum_wp: "
    "'wp.array', seg_wp: 'wp.array', t_wp: 'wp.array', counts_wp: 'wp.array', num_envs: 'int', "
    "src_points: 'int', dst_points: 'int', ctx: 'Any' = None) -> 'None'",
    warp_pipeline._arc_resample_selected_inplace: "(src_wp: 'wp.array', dst_wp: 'wp.array', "
    "cum_wp: 'wp.array', seg_wp: 'wp.array', t_wp: 'wp.array', counts_wp: 'wp.array', "
    "active_wp: 'wp.array', num_envs: 'int', src_points: 'int', dst_points: 'int', "
    "ctx: 'Any' = None) -> 'None'",
    warp_pipeline.self_intersections_inplace: "(xy_wp: 'wp.array', num_envs: 'int', "
    "num_points: 'int', out_wp: 'wp.array', ctx: 'Any' = None) -> 'None'",
    warp_pipeline.turning_number_inplace: "(xy_wp: 'wp.array', num_envs: 'int', num_points: "
    "'int', out_wp: 'wp.array', ctx: 'Any' = None) -> 'None'",
    warp_pipeline.resample_uniform: "(src_wp: 'wp.array', num_envs: 'int', src_points: 'int', "
    "dst_wp: 'wp.array', dst_points: 'int', seg_wp: 'wp.array | None' = None, s_wp: "
    "'wp.array | None' = None, ctx: 'Any' = None) -> 'None'",
    warp_pipeline.resample_constant_spacing: "(src_wp: 'wp.array', num_envs: 'int', "
    "src_points: 'int', spacing: 'float', dst_wp: 'wp.array | None' = None, max_points: "
    "'int | None' = None, out_count_wp: 'wp.array | None' = None, truncated_wp: "
    "'wp.array | None' = None, ctx: 'Any' = None) -> 'tuple[wp.array, wp.array, wp.array]'",
    warp_generate.corner_count_sample_inplace: "(seeds_wp: 'wp.array', config: 'Any', "
    "out_counts_wp: 'wp.array', ctx: 'Any' = None) -> 'None'",
    warp_generate.corner_sample_inplace: "(seeds_wp: 'wp.array', config: 'Any', counts_wp: "
    "'wp.array', scratch: 'GenScratch', out_xy_wp: 'wp.array', ctx: 'Any' = None) -> 'None'",
    warp_generate.ccw_sort_inplace: "(xy_wp: 'wp.array', counts_wp: 'wp.array', max_count: "
    "'int', ctx: 'Any' = None) -> 'None'",
    warp_generate_hull.point_count_sample_inplace: "(seeds_wp: 'wp.array', config: 'Any', "
    "out_counts_wp: 'wp.array', ctx: 'Any' = None) -> 'None'",
    warp_generate_hull.point_sample_inplace: "(seeds_wp: 'wp.array', config: 'Any', counts_wp: "
    "'wp.array', scratch: 'GenScratch', out_xy_wp: 'wp.array', ctx: 'Any' = None) -> 'None'",
    generator_registry.register: "(spec: 'Any') -> 'Any'",
    generator_registry.get: "(name: 'str') -> 'Any'",
    generator_registry.available: "() -> 'list[str]'",
    gate_generator_registry.register: "(spec: 'Any') -> 'Any'",
    gate_generator_registry.get: "(name: 'str') -> 'Any'",
    gate_generator_registry.available: "() -> 'list[str]'",
}


@pytest.mark.parametrize("fn", list(SIGNATURES), ids=lambda f: f.__qualname__)
def test_legacy_signature_is_pinned(fn):
    assert str(inspect.signature(fn)) == SIGNATURES[fn]


def test_legacy_names_are_importable():
    assert warp_pipeline.arc_length_resample_inplace is warp_pipeline._arc_resample_inplace
    assert (
        warp_pipeline.arc_length_resample_selected_inplace
        is warp_pipeline._arc_resample_selected_inplace
    )
    assert warp_pipeline._ccw is ops.funcs.ccw
    assert isinstance(warp_pipeline._fill_i32_k, wp.Kernel)
    assert [a.label for a in warp_pipeline._fill_i32_k.adj.args] == ["arr", "value"]
    assert isinstance(warp_gate._GateStaging, type)
    assert [f.name for f in dataclasses.fields(warp_generate.GenScratch)] == [
        "counts",
        "perm",
        "cells",
        "points",
    ]


def test_spec_fields_are_pinned():
    assert [f.name for f in dataclasses.fields(GeneratorSpec)] == [
        "name",
        "alloc_scratch",
        "generate",
        "capturable",
        "accepts_ctx",
        "params",
    ]
    assert [f.name for f in dataclasses.fields(GateGeneratorSpec)] == [
        "name",
        "alloc_scratch",
        "generate",
        "max_gates",
        "supported_orderings",
        "capturable",
        "accepts_ctx",
        "params",
    ]


# -- Status row: GeneratorSpec (accepts_ctx=True): supported, no warning ----------------------
@wp.kernel
def _circle_k(n: int, xy: wp.array(dtype=wp.vec2)):
    tid = wp.tid()
    i = tid % n
    a = 6.2831853 * float(i) / float(n)
    xy[tid] = wp.vec2(wp.cos(a), wp.sin(a))


def _circle_gen(seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx=None):
    if ctx is None:  # a legacy plugin: Warp's current device is the call's (ctx.scope())
        scratch.device_seen = str(wp.get_device())
        wp.launch(
            _circle_k, dim=out_centerline.shape[0], inputs=[config.num_points, out_centerline]
        )
        return
    ctx.launch(_circle_k, out_centerline.shape[0], [config.num_points, out_centerline])


def test_status_generator_spec_with_ctx_runs_silently():
    spec = GeneratorSpec(
        "acme.circle", lambda c: types.SimpleNamespace(), _circle_gen, accepts_ctx=True
    )
    res = TrackGenerator(TrackGenConfig(num_envs=4, num_points=32), generator=spec).generate()
    assert res.numpy()["valid"].tolist() == [1, 1, 1, 1]


def test_status_legacy_generator_spec_runs_in_scope_silently():
    scratch = types.SimpleNamespace()
    spec = GeneratorSpec("acme.circle_legacy", lambda c: scratch, _circle_gen)
    tg = TrackGenerator(TrackGenConfig(num_envs=4, num_points=32, device="cpu"), generator=spec)
    assert tg.generate().numpy()["valid"].tolist() == [1, 1, 1, 1]
    assert scratch.device_seen == "cpu"


@pytest.mark.skipif(
    not any(d.is_cuda for d in wp.get_devices()),
    reason="LegacyPluginStreamError needs a CUDA stream other than Warp's current one",
)
def test_status_legacy_generator_spec_on_another_stream_raises():
    from procgen_nb.errors import LegacyPluginStreamError

    spec = GeneratorSpec("acme.circle_stream", lambda c: types.SimpleNamespace(), _circle_gen)
    tg = TrackGenerator(TrackGenConfig(num_envs=4, num_points=32, device="cuda:0"), generator=spec)
    side = wp.Stream("cuda:0")
    ctx = LaunchContext("cuda:0", stream=side)
    with pytest.raises(LegacyPluginStreamError, match="set accepts_ctx=True"):
        ctx.record(lambda: tg.enqueue(ctx))


# -- Status row: GateGeneratorSpec: warns when bound, once per name; registering is silent -----
def test_status_gate_spec_registers_silently_and_warns_once_when_bound():
    spec = ring_spec("acme.ring_once")
    try:
        registry.add(spec)  # silent (filterwarnings = error would raise)
        assert registry.get("gate_generator", "acme.ring_once") is spec
        cfg = GateGenConfig(num_envs=4, generator="acme.ring_once", max_gates=8)
        with pytest.warns(
            DeprecationWarning, match="GateGeneratorSpec 'acme.ring_once' is deprecated"
        ) as rec:
            g = GateGenerator(cfg)
        assert len(rec) == 1
        assert rec[0].filename == HERE  # points at the code that constructed the generator
        GateGenerator(cfg)  # once per name: silent now
    finally:
        registry.remove("gate_generator", "acme.ring_once")
    d = g.generate().numpy()
    assert d["count"].tolist() == [6] * 4 and d["valid"].tolist() == [1] * 4
    assert g.ordering == "ccw" and g.step_names == ["head", "generator:acme.ring_once", "finish"]


def test_legacy_spec_runs_through_gate_generator_and_course_with_one_warning():
    spec = ring_spec("acme.ring_course")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        g = GateGenerator(GateGenConfig(num_envs=8, max_gates=8), generator=spec)
        tcfg = TrackGenConfig(
            num_envs=8, num_points=128, z_profile=True, validity={"track_width": 0.2}
        )
        course = Course(tcfg, GateGenConfig(num_envs=8, max_gates=8), gate_generator=spec)
        again = build(8, gate_generator=spec, max_gates=8, num_points=128)
    assert [(w.category, w.filename) for w in rec] == [(DeprecationWarning, HERE)]
    assert rec[0].lineno == line  # the GateGenerator line, the code that bound the spec
    d = g.generate().numpy()
    pts = d["xy"][0, :6].astype(np.float64)
    assert np.allclose(np.linalg.norm(pts, axis=1), 0.8, atol=1e-5)
    ang = np.unwrap(np.arctan2(pts[:, 1], pts[:, 0]))
    assert np.all(np.diff(ang) > 0)  # ccw, as generate emitted it: no order stage followed
    assert course.gates_first and course.numpy()["valid"].all()
    assert again.fingerprint() == course.fingerprint()


def test_legacy_gate_ordering_is_resolved_before_the_spec_sees_it():
    seen = []

    class LegacyKnobs(Params):
        owner = "acme.seen"
        gates: int = Field(5, bounds=(3, 64))
        radius: float = Field(0.5, bounds=(0.1, 1.0))

        @classmethod
        def from_legacy(cls, config):
            seen.append(("from_legacy", config.gate_ordering))
            return cls(gates=getattr(config, "acme_gates", 5))

    def alloc(config):
        seen.append(("alloc_scratch", config.gate_ordering))
        return None

    def max_gates(config):
        seen.append(("max_gates", config.gate_ordering))
        return config.generator_params.gates

    def generate(seeds_wp, config, out, scratch, ctx=None):
        seen.append(("generate", config.gate_ordering))
        _ring_generate(seeds_wp, config, out, scratch, ctx)

    @dataclasses.dataclass
    class AcmeConfig(GateGenConfig):
        acme_gates: int = 4

    spec = GateGeneratorSpec(
        "acme.seen",
        alloc,
        generate,
        max_gates,
        frozenset({"raw", "random_pairs"}),
        accepts_ctx=True,
        params=LegacyKnobs,
    )
    with pytest.warns(DeprecationWarning):
        g = GateGenerator(AcmeConfig(num_envs=2, max_gates=8), generator=spec)
    # None resolves to the first of the sorted set: "random_pairs"
    assert {o for _, o in seen} == {"random_pairs"}
    assert [s for s, _ in seen][:3] == ["from_legacy", "max_gates", "alloc_scratch"]
    assert g.params.gates == 4 and g.result.numpy()["count"].tolist() == [4, 4]


def test_legacy_unsupported_ordering_and_capacity_are_value_errors():
    spec = ring_spec("acme.ring_refuse")
    with pytest.warns(DeprecationWarning):
        with pytest.raises(
            ValueError,
            match=r"gate_ordering of 'acme.ring_refuse': expected one of \['ccw', 'raw'\], got 'random_pairs'",
        ):
            GateGenerator(GateGenConfig(num_envs=2, gate_ordering="random_pairs"), generator=spec)
    with pytest.raises(
        ValueError, match=r"capacity: expected gates in \[min_gates=3, max_gates=4\], got 6"
    ):
        GateGenerator(GateGenConfig(num_envs=2, max_gates=4), generator=spec)
    with pytest.raises(ValueError, match=r"expected gates in \[min_gates=7, max_gates=32\], got 6"):
        GateGenerator(GateGenConfig(num_envs=2, min_gates=7), generator=spec)


def test_legacy_host_spec_runs_eagerly_and_refuses_a_caller_recording():
    reads = []

    def generate(seeds_wp, config, out, scratch, ctx=None):
        _ring_generate(seeds_wp, config, out, scratch, ctx)
        reads.append(int(ctx.readback(out.count)[0]))  # host control flow: capturable=False

    spec = dataclasses.replace(ring_spec("acme.ring_host"), generate=generate, capturable=False)
    with pytest.warns(DeprecationWarning):
        g = GateGenerator(GateGenConfig(num_envs=2, max_gates=8), generator=spec)
    assert g.host_driven
    g.generate()
    g.generate()
    assert reads == [6, 6, 6]
    ctx = LaunchContext("cpu")
    with pytest.raises(NotCapturableError, match="expected a capturable generator inside"):
        ctx.record(lambda: g.enqueue(ctx))


def test_legacy_spec_with_a_dynamic_field_is_refused():
    class Dyn(Params):
        owner = "acme.dyn"
        radius: float = Field(0.5, bounds=(0.1, 1.0), dynamic=True)

    spec = dataclasses.replace(ring_spec("acme.dyn"), params=Dyn)
    with pytest.warns(DeprecationWarning):
        with pytest.raises(
            GeneratorError,
            match=r"acme.dyn params: expected static fields only .*got dynamic \['radius'\]",
        ):
            GateGenerator(GateGenConfig(num_envs=2), generator=spec)
    with pytest.raises(GeneratorError, match="expected static fields only"):
        registry.add(spec)


def test_presets_gates_refuses_order_for_a_legacy_generator():
    spec = ring_spec("acme.ring_preset")
    with pytest.raises(
        GeneratorError,
        match=r"presets.gates order: expected None for the legacy GateGeneratorSpec 'acme.ring_preset' \(choose its ordering with GateGenConfig\(gate_ordering=...\)\), got 'ccw'",
    ):
        gates(spec, order="ccw", num_envs=2)
    with pytest.warns(DeprecationWarning):
        g = gates(spec, gate_ordering="raw", num_envs=2, max_gates=8)
    assert g.ordering == "raw"
    assert gates("free", order="raw", num_envs=2).ordering == "raw"


def test_legacy_gate_spec_passes_the_conformance_kit():
    with pytest.warns(DeprecationWarning) as rec:
        report = check_gate_generator(ring_spec("acme.ring_kit"), max_gates=8)
    assert len(rec) == 1 and rec[0].filename == HERE
    assert report.form == "GateGeneratorSpec"
    report.raise_if_failed()


# -- Status row: the warp_gate helpers warn on each use ----------------------------------------
def test_status_warp_gate_helpers_warn_on_each_use_and_keep_the_bytes():
    spec = helper_spec("acme.helpers_bytes")
    with pytest.warns(DeprecationWarning) as rec:
        g = GateGenerator(
            GateGenConfig(num_envs=16, max_gates=8, gate_ordering="ccw"), generator=spec
        )
    msgs = [str(w.message) for w in rec]
    assert sum("GateGeneratorSpec 'acme.helpers_bytes'" in m for m in msgs) == 1
    for name in ("alloc_order_scratch", "order_points", "finish_ordered_gates"):
        assert sum(f"warp_gate.{name} is deprecated" in m for m in msgs) == 1, name
    with pytest.warns(DeprecationWarning) as rec:  # the first generate() records: Python runs
        g.generate()
    assert len(rec) == 2
    g.generate()  # replays run no Python: silent
    d = g.result.numpy()
    # the recording holds the plugin's own launches and the helpers': a replay for another
    # epoch gives the bytes of an eager run for it
    replayed = g.generate(epoch=3).fingerprint()
    cfg3 = GateGenConfig(num_envs=16, max_gates=8, gate_ordering="ccw", epoch=3)
    with pytest.warns(DeprecationWarning, match="warp_gate"):  # the helpers warn each use
        eager = GateGenerator(cfg3, generator=spec).result.fingerprint()
    assert replayed == eager != g.generate(epoch=0).fingerprint()
    assert d["valid"].all() and d["count"].tolist() == [7] * 16
    for e in range(16):
        pts = d["xy"][e, :7].astype(np.float64)
        c = pts.mean(axis=0)
        assert np.all(np.diff(np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])) >= -1e-6)
        half = max(np.ptp(pts[:, 0]), np.ptp(pts[:, 1])) / 2
        assert half == pytest.approx(1.0, rel=1e-5)


def test_warp_gate_helpers_match_the_pipeline_stages():
    """order_points + finish_ordered_gates give the bytes of order.<o> + normalize.extent."""
    ctx = LaunchContext("cpu")
    cfg = GateGenConfig(num_envs=32, max_gates=8, gate_ordering="random_pairs", scale=2.0)
    g = gates("free", order="raw", num_envs=32, max_gates=8, scale=2.0)
    ref = gates("free", order="random_pairs", num_envs=32, max_gates=8, scale=2.0).result.numpy()
    # the raw anchors before normalization: rerun the generator alone into a staging buffer
    g._steps[0].run(ctx)
    g._gen_enqueue(ctx)
    with pytest.warns(DeprecationWarning, match="_GateStaging is deprecated"):
        out = warp_gate._GateStaging(cfg)
    ctx.copy(out.position, g.anchors)
    ctx.copy(out.count, g.anchor_count)
    with pytest.warns(DeprecationWarning):
        scratch = warp_gate.alloc_order_scratch(cfg)
    with pytest.warns(DeprecationWarning, match="order_points"):
        warp_gate.order_points(out.position, out.count, cfg, scratch, g.seeds, ctx=ctx)
    with pytest.warns(DeprecationWarning, match="finish_ordered_gates"):
        warp_gate.finish_ordered_gates(out, cfg, normalize_extent=True, ctx=ctx)
    got = ctx.readback(out.position).reshape(32, 8, 2)
    assert np.array_equal(got, ref["xy"], equal_nan=True)


# -- Status row: the _src registry shims: silent; register warns when it overwrites ------------
def test_status_track_registry_shim_overwrites_with_a_warning():
    spec = GeneratorSpec("acme.shim_track", lambda c: None, _circle_gen, accepts_ctx=True)
    other = GeneratorSpec("acme.shim_track", lambda c: None, _circle_gen, accepts_ctx=True)
    try:
        assert generator_registry.register(spec) is spec  # new name: silent
        assert generator_registry.get("acme.shim_track") is spec
        assert "acme.shim_track" in generator_registry.available()
        assert generator_registry.GENERATORS["acme.shim_track"] is spec
        assert "polar" in generator_registry.GENERATORS
        with pytest.warns(
            DeprecationWarning, match="overwrote the generator 'acme.shim_track'"
        ) as rec:
            generator_registry.register(other)
        assert rec[0].filename == HERE
        assert registry.get("generator", "acme.shim_track") is other
        with pytest.raises(TypeError):
            generator_registry.GENERATORS["acme.shim_track"] = spec
        with pytest.raises(KeyError):
            generator_registry.GENERATORS["acme.none"]
        # 0.1 names need not be dotted
        plain = GeneratorSpec("shimplain", lambda c: None, _circle_gen, accepts_ctx=True)
        generator_registry.register(plain)
        assert generator_registry.get("shimplain") is plain
    finally:
        registry.remove("generator", "acme.shim_track")
        registry.remove("generator", "shimplain")


def _register_from(module_name: str, spec):
    """Calls ``gate_generator_registry.register(spec)`` from a module named ``module_name``."""
    mod = types.ModuleType(module_name)
    mod.spec = spec
    exec(
        "from procgen_nb.track_gen._src import gate_generator_registry\n"
        "out = gate_generator_registry.register(spec)\n",
        mod.__dict__,
    )
    return mod.out


def test_status_gate_registry_shim_duplicate_rules():
    """Seed: "The gate registry's still raises when a different module registered the name
    (now ``DuplicateSpecError``, still a ``ValueError``) and overwrites a spec from the same
    module. Either emits a ``DeprecationWarning`` when it overwrites." The module is the one
    that called ``register``, not the one that defines ``generate``."""
    spec = ring_spec("acme.shim_gate")
    same_module = ring_spec("acme.shim_gate")
    # generate defined in another module (warp_gate), registered from this one: same module
    elsewhere = GateGeneratorSpec(
        "acme.shim_gate", _ring_alloc, warp_gate.order_points, lambda c: 6
    )
    foreign = ring_spec("acme.shim_gate")  # generate defined here, registered from acme_other
    try:
        assert gate_generator_registry.register(spec) is spec  # silent
        assert gate_generator_registry.get("acme.shim_gate") is spec
        assert "acme.shim_gate" in gate_generator_registry.available()
        assert {"free", "arc_length", "curvature"} <= set(gate_generator_registry.GATE_GENERATORS)
        with pytest.warns(
            DeprecationWarning, match="overwrote the gate generator 'acme.shim_gate'"
        ):
            gate_generator_registry.register(same_module)
        assert gate_generator_registry.GATE_GENERATORS["acme.shim_gate"] is same_module
        with pytest.warns(DeprecationWarning, match="overwrote the gate generator"):
            gate_generator_registry.register(elsewhere)
        assert gate_generator_registry.GATE_GENERATORS["acme.shim_gate"] is elsewhere
        with pytest.raises(
            DuplicateSpecError,
            match=rf"expected a new name \(or a call from the module that registered it, "
            rf"{__name__}\), got a duplicate registered from acme_other",
        ) as exc:
            _register_from("acme_other", foreign)
        assert isinstance(exc.value, ValueError)
        assert gate_generator_registry.GATE_GENERATORS["acme.shim_gate"] is elsewhere
        # a name first registered from acme_other is acme_other's: this module may not take it
        registry.remove("gate_generator", "acme.shim_gate")
        assert _register_from("acme_other", foreign) is foreign
        with pytest.raises(DuplicateSpecError, match="registered it, acme_other"):
            gate_generator_registry.register(spec)
        with pytest.warns(DeprecationWarning, match="overwrote the gate generator"):
            _register_from("acme_other", spec)
        # a built-in was added by the module that defines it: a plugin may not replace it
        with pytest.raises(DuplicateSpecError, match="registered it, procgen_nb.track_gen.gates"):
            gate_generator_registry.register(ring_spec("free"))
        with pytest.raises(TypeError):
            del gate_generator_registry.GATE_GENERATORS["acme.shim_gate"]
    finally:
        registry.remove("gate_generator", "acme.shim_gate")


# -- Status row: the _src helpers of track plugins: silent, same results as ops ----------------
def _loops(E=6, N=40, seed=0):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 2 * np.pi, N, endpoint=False)
    r = 1 + 0.3 * rng.standard_normal((E, 1)) * np.sin(3 * t)[None]
    xy = np.stack([r * np.cos(t), r * np.sin(t)], -1).astype(np.float32)
    return wp.array(xy.reshape(-1, 2), dtype=wp.vec2, device="cpu")


def test_status_pipeline_helpers_match_ops_silently():
    ctx = LaunchContext("cpu")
    E, N, M = 6, 40, 24
    src = _loops(E, N)
    a = ops.ArcScratch.alloc("cpu", E, N, M)
    want = wp.zeros(E * M, dtype=wp.vec2, device="cpu")
    ops.arc_resample(ctx, src, want, a, E, N, M)
    b = ops.ArcScratch.alloc("cpu", E, N, M)
    got = wp.zeros(E * M, dtype=wp.vec2, device="cpu")
    warp_pipeline._arc_resample_inplace(src, got, b.cum, b.seg, b.t, b.counts, E, N, M, ctx=ctx)
    assert np.array_equal(got.numpy(), want.numpy())
    active = wp.array(np.array([1, 0, 1, 0, 1, 0], dtype=np.int32), device="cpu")
    sel = wp.zeros(E * M, dtype=wp.vec2, device="cpu")
    warp_pipeline.arc_length_resample_selected_inplace(
        src, sel, b.cum, b.seg, b.t, b.counts, active, E, N, M
    )
    s = sel.numpy().reshape(E, M, 2)
    assert np.array_equal(s[::2], want.numpy().reshape(E, M, 2)[::2]) and not s[1::2].any()
    out1, out2 = (wp.zeros(E, dtype=wp.int32, device="cpu") for _ in range(2))
    ops.self_intersections(ctx, src, E, N, out1, ops.GridScratch.alloc("cpu", E, N))
    warp_pipeline.self_intersections_inplace(src, E, N, out2)
    assert np.array_equal(out1.numpy(), out2.numpy())
    ops.turning_number(ctx, src, E, N, out1)
    warp_pipeline.turning_number_inplace(src, E, N, out2)
    assert np.array_equal(out1.numpy(), out2.numpy()) and (out2.numpy() == 1).all()
    uni = wp.zeros(E * M, dtype=wp.vec2, device="cpu")
    warp_pipeline.resample_uniform(src, E, N, uni, M)
    assert np.array_equal(uni.numpy(), want.numpy())
    dst, cnt, trunc = warp_pipeline.resample_constant_spacing(src, E, N, 0.2)
    d2 = wp.zeros(dst.shape[0], dtype=wp.vec2, device="cpu")
    c2, t2 = (wp.zeros(E, dtype=wp.int32, device="cpu") for _ in range(2))
    ops.resample_constant_spacing(ctx, src, E, N, 0.2, d2, 4 * N, c2, t2)
    assert np.array_equal(dst.numpy(), d2.numpy(), equal_nan=True)
    assert np.array_equal(cnt.numpy(), c2.numpy()) and not trunc.numpy().any()
    with pytest.warns(RuntimeWarning, match="needed more than max_points=8 points"):
        warp_pipeline.resample_constant_spacing(src, E, N, 0.2, max_points=8)
    arr = wp.zeros(5, dtype=wp.int32, device="cpu")
    wp.launch(warp_pipeline._fill_i32_k, dim=5, inputs=[arr, 3], device="cpu")
    assert arr.numpy().tolist() == [3] * 5
    warp_pipeline._init()
    warp_pipeline._sync("cpu")


def test_status_sampling_helpers_match_ops_silently():
    ctx = LaunchContext("cpu")
    E = 8
    cfg = TrackGenConfig(num_envs=E, generator="bezier", device="cpu")
    seeds = wp.array(np.arange(E, dtype=np.int32) * 7919, dtype=wp.int32, device="cpu")
    g, mx = 4, 10  # BezierParams defaults
    counts = wp.zeros(E, dtype=wp.int32, device="cpu")
    warp_generate.corner_count_sample_inplace(seeds, cfg, counts)
    ref_counts = wp.zeros(E, dtype=wp.int32, device="cpu")
    ops.sample_counts(ctx, seeds, salt("bezier.count"), 5, 10, ref_counts)
    assert np.array_equal(counts.numpy(), ref_counts.numpy())
    scratch = warp_generate.GenScratch.alloc(cfg, mx, g)
    xy = wp.zeros(E * mx, dtype=wp.vec2, device="cpu")
    warp_generate.corner_sample_inplace(seeds, cfg, counts, scratch, xy)
    perm = wp.zeros(E * g * g, dtype=wp.int32, device="cpu")
    cells = wp.zeros(E * mx, dtype=wp.int32, device="cpu")
    ref = wp.zeros(E * mx, dtype=wp.vec2, device="cpu")
    ops.grid_cells(ctx, seeds, salt("bezier.cells"), counts, g, perm, cells, mx)
    ops.sample_grid_points(ctx, seeds, salt("bezier.points"), cells, counts, g, 0.8, 1.0, ref, mx)
    assert np.array_equal(xy.numpy(), ref.numpy(), equal_nan=True)
    warp_generate.ccw_sort_inplace(xy, counts, mx)
    ops.angle_sort(ctx, ref, counts, mx)
    assert np.array_equal(xy.numpy(), ref.numpy(), equal_nan=True)
    # hull: knobs from a legacy config attribute
    hcfg = types.SimpleNamespace(num_envs=E, device="cpu", scale=1.0, min_points=6, max_points=9)
    warp_generate_hull.point_count_sample_inplace(seeds, hcfg, counts)
    ops.sample_counts(ctx, seeds, salt("hull.count"), 6, 9, ref_counts)
    assert np.array_equal(counts.numpy(), ref_counts.numpy())
    hs = warp_generate.GenScratch.alloc(hcfg, 9, 6)
    hxy = wp.zeros(E * 9, dtype=wp.vec2, device="cpu")
    warp_generate_hull.point_sample_inplace(seeds, hcfg, counts, hs, hxy)
    ref = wp.zeros(E * 9, dtype=wp.vec2, device="cpu")
    ops.grid_cells(ctx, seeds, salt("hull.cells"), counts, 6, hs.perm, hs.cells, 9)
    ops.sample_grid_points(ctx, seeds, salt("hull.points"), hs.cells, counts, 6, 1.0, 1.0, ref, 9)
    assert np.array_equal(hxy.numpy(), ref.numpy(), equal_nan=True)


# -- Status row: warp_pipeline.GenScratch moved, with a warning --------------------------------
def test_status_genscratch_moved_with_a_warning():
    with pytest.warns(
        DeprecationWarning, match="moved to track_gen._src.warp_generate.GenScratch"
    ) as rec:
        old = warp_pipeline.GenScratch
    assert old is warp_generate.GenScratch
    assert rec[0].filename == HERE
    with pytest.raises(AttributeError):
        warp_pipeline.NoSuchName  # noqa: B018


# -- Status row: registry.get("generator", <built-in>).params warns --------------------------
def test_status_builtin_params_alias_warns():
    polar = registry.get("generator", "polar")
    with pytest.warns(DeprecationWarning, match="read .Params"):
        assert polar.params is polar.Params


# -- Status row: a TrackGenConfig subclass carrying knobs: no warning -------------------------
def test_status_config_subclass_knobs_are_read_silently():
    @dataclasses.dataclass
    class OldConfig(TrackGenConfig):
        lobes: int = 5

    tg = TrackGenerator(OldConfig(num_envs=2, num_points=32, generator="polar"))
    assert tg.params.lobes == 5
