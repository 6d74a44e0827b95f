"""The registry: built-ins, refusals with their messages, entry-point plugins, Params."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json

import pytest

from procgen_nb.errors import DuplicateSpecError, GeneratorError
from procgen_nb.track_gen import TrackGenConfig, TrackGenerator, presets
from procgen_nb.track_gen.plugin import Field, GeneratorSpec, Params, Stage, registry

BUILTINS = ["bezier", "checkpoint", "hull", "polar", "repulsive", "voronoi"]


def _noop_spec(name: str, params: type[Params] | None = None) -> GeneratorSpec:
    return GeneratorSpec(
        name=name, alloc_scratch=lambda c: None, generate=lambda *a, **k: None, params=params
    )


def test_builtins_are_available():
    assert set(BUILTINS) <= set(registry.available("generator"))
    assert registry.available("stage") == sorted(registry.available("stage"))
    assert "z_profile" in registry.available("stage")
    for name in BUILTINS:
        cls = registry.get("generator", name)
        assert issubclass(cls, Stage) and cls.name == name


def test_unknown_generator_message():
    with pytest.raises(GeneratorError) as err:
        presets.track(generator="polr", num_envs=2)
    msg = str(err.value)
    assert msg.startswith("generator: expected one of [")
    assert "'polar'" in msg and msg.endswith("got 'polr'")
    with pytest.raises(GeneratorError, match=r"registry kind: expected one of \['generator', "):
        registry.get("gadget", "polar")


def test_bad_generator_params_messages():
    with pytest.raises(
        GeneratorError,
        match=r"^generator_params of 'polar': polar.lobes: expected a value in \[3, 64\], got 99$",
    ):
        presets.track(generator="polar", generator_params={"lobes": 99}, num_envs=2)
    with pytest.raises(
        GeneratorError,
        match=r"generator_params of 'polar': polar: expected fields among \['lobes', "
        r"'min_radius', 'radius_jitter'\], got unknown \['lobs'\]",
    ):
        presets.track(generator="polar", generator_params={"lobs": 5}, num_envs=2)
    with pytest.raises(
        GeneratorError,
        match=r"generator_params of 'bezier': expected min_corners <= max_corners, got \(9, 4\)",
    ):
        presets.track(
            generator="bezier", generator_params={"min_corners": 9, "max_corners": 4}, num_envs=2
        )


def test_duplicate_name_message():
    spec = _noop_spec("test.dup")
    registry.add(spec)
    try:
        with pytest.raises(
            DuplicateSpecError,
            match=r"registry.add generator 'test.dup': expected a new name or replace=True, "
            r"got a duplicate of GeneratorSpec from ",
        ):
            registry.add(_noop_spec("test.dup"))
        assert isinstance(DuplicateSpecError("x"), ValueError)
        other = _noop_spec("test.dup")
        registry.add(other, replace=True)
        assert registry.get("generator", "test.dup") is other
    finally:
        registry.remove("generator", "test.dup")


def test_third_party_names_must_be_dotted():
    with pytest.raises(
        GeneratorError,
        match=r"registry.add name: expected a dotted third-party name like "
        r"'<vendor>.wobbly', got 'wobbly'",
    ):
        registry.add(_noop_spec("wobbly"))


def test_dynamic_field_in_a_generator_spec_is_refused():
    class Dyn(Params):
        amp: float = Field(0.1, bounds=(0.0, 1.0), dynamic=True)

    with pytest.raises(
        GeneratorError,
        match=r"test.dyn params: expected static fields only in a GeneratorSpec's Params \(a "
        r"dynamic field needs a Stage and b.param\), got dynamic \['amp'\]",
    ):
        registry.add(_noop_spec("test.dyn", Dyn))


def test_builtin_params_alias_is_deprecated():
    cls = registry.get("generator", "polar")
    with pytest.warns(DeprecationWarning, match=r"Polar.params is deprecated.*read .Params"):
        assert cls.params is cls.Params


def test_params_describe_is_json():
    for name in BUILTINS:
        schema = registry.get("generator", name).Params.describe()
        json.dumps(schema)
        assert schema["owner"] == name
        assert all(f["doc"] for f in schema["fields"])


def test_plugin_found_through_its_entry_point(acme_site):
    dist = importlib.metadata.distribution("acme-tracks")
    eps = [ep.name for ep in dist.entry_points if ep.group == "procgen_nb.track_gen"]
    assert eps == ["acme.wobbly"]
    assert "acme.wobbly" in registry.available("generator")
    tg = presets.track(
        generator="acme.wobbly", generator_params={"lobes": 7}, num_envs=4, num_points=64
    )
    assert tg.params.lobes == 7
    assert tg.generate().num_valid() == 4
    with pytest.raises(
        GeneratorError,
        match=r"generator_params of 'acme.wobbly': acme.wobbly.lobes: expected a value in "
        r"\[3, 12\], got 40",
    ):
        presets.track(generator="acme.wobbly", generator_params={"lobes": 40}, num_envs=2)


def test_plugin_reads_a_legacy_config_subclass(acme_site):
    @dataclasses.dataclass
    class AcmeConfig(TrackGenConfig):
        acme_lobes: int = 9

    tg = TrackGenerator(AcmeConfig(generator="acme.wobbly", num_envs=2, num_points=32))
    assert tg.params.lobes == 9
    assert tg.config.generator_params.lobes == 9
