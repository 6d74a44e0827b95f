"""Issue 12: every public track_gen entry checks what the configs check.

- ``generate(epoch=)`` accepts exactly the epochs ``TrackGenConfig`` / ``GateGenConfig``
  accept (an epoch of 2**40 used to wrap to epoch 0 on the device);
- ``regenerate(mask=)`` refuses values that are not integers or bools (0.5 used to
  regenerate nothing), and a large non-zero integer regenerates its env (2**40 used to
  wrap to 0);
- the refusals are ``ParamsError``s that name the input, the value and what is accepted.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import (
    GateGenConfig,
    GateGenerator,
    TrackGenConfig,
    TrackGenerator,
    build,
    presets,
)
from procgen_nb.track_gen.exec import LaunchContext
from procgen_nb.track_gen.plugin import registry
from procgen_nb.track_gen.presets import gates
from procgen_nb.track_gen.testing import check_gate_generator, check_generator

EPOCH_MAX = 2**31 - 1  # the epoch word on the device is an int32

# values the configs refuse as an epoch, with the text of what was got
REFUSED_EPOCHS = [
    (-1, "-1"),
    (EPOCH_MAX + 1, str(EPOCH_MAX + 1)),
    (2**40, str(2**40)),
    (1.5, "1.5"),
    (math.nan, "nan"),
    (math.inf, "inf"),
    ("3", "'3'"),
    (True, "True"),
]


@pytest.fixture(scope="module")
def small_track():
    return presets.track(num_envs=4, num_points=32, device="cpu")


@pytest.mark.parametrize(("epoch", "shown"), REFUSED_EPOCHS)
def test_generate_refuses_every_epoch_the_config_refuses(small_track, epoch, shown):
    with pytest.raises(ParamsError, match=r"^TrackGenConfig\.epoch: expected an integer"):
        TrackGenConfig(num_envs=4, num_points=32, device="cpu", epoch=epoch)
    with pytest.raises(ParamsError, match=r"^GateGenConfig\.epoch: expected an integer"):
        GateGenConfig(num_envs=4, device="cpu", epoch=epoch)
    before = small_track.config.epoch
    with pytest.raises(ParamsError) as err:
        small_track.generate(epoch=epoch)
    msg = str(err.value)
    assert msg.startswith("generate epoch: expected an integer")
    assert msg.endswith(f"got {shown}")
    assert small_track.config.epoch == before  # nothing changed


def test_epoch_range_is_stated_and_its_ends_are_accepted(small_track):
    with pytest.raises(
        ParamsError,
        match=r"^generate epoch: expected an integer in \[0, 2147483647\], got 1099511627776$",
    ):
        small_track.generate(epoch=2**40)
    top = small_track.generate(epoch=EPOCH_MAX).fingerprint()
    fresh = presets.track(num_envs=4, num_points=32, device="cpu", epoch=EPOCH_MAX)
    assert fresh.generate().fingerprint() == top
    zero = small_track.generate(epoch=0).fingerprint()
    assert zero != top


def test_numpy_and_integral_epochs_are_the_same_epoch(small_track):
    want = small_track.generate(epoch=3).fingerprint()
    for epoch in (np.int64(3), np.int32(3), 3.0, np.float64(3.0)):
        assert TrackGenConfig(num_envs=4, num_points=32, device="cpu", epoch=epoch).epoch == 3
        assert small_track.generate(epoch=epoch).fingerprint() == want


@pytest.mark.parametrize(("epoch", "shown"), REFUSED_EPOCHS)
def test_gate_generate_refuses_the_same_epochs(epoch, shown):
    g = gates(num_envs=2, device="cpu")
    with pytest.raises(ParamsError) as err:
        g.generate(epoch=epoch)
    assert str(err.value).startswith("generate epoch: expected an integer")
    assert str(err.value).endswith(f"got {shown}")


def _moved(before: np.ndarray, after: np.ndarray) -> list[int]:
    return np.flatnonzero(np.any(before != after, axis=(1, 2))).tolist()


@pytest.mark.parametrize(
    ("mask", "shown", "index"),
    [
        ([0.5] * 4, "0.5", 0),
        ([1, 0, 0.25, 1], "0.25", 2),
        ([0, 0, 0, math.nan], "nan", 3),
        ([0, math.inf, 0, 0], "inf", 1),
        (["a", "b", "c", "d"], "'a'", 0),
        ([0, 1, None, 0], "None", 2),
    ],
)
def test_regenerate_refuses_a_mask_value_that_is_not_an_integer(small_track, mask, shown, index):
    before = small_track.generate().numpy()["xy"]
    with pytest.raises(ParamsError) as err:
        small_track.regenerate(mask)
    assert str(err.value) == (
        f"regenerate mask: expected 4 integers or bools (non-zero regenerates), got {shown} "
        f"at index {index}"
    )
    assert _moved(before, small_track.result.numpy()["xy"]) == []


@pytest.mark.parametrize(
    "mask",
    [
        [2**40, 0, 2**40, 0],
        [2**70, 0, -7, 0],
        np.array([2**40, 0, 2**33, 0], dtype=np.int64),
        [True, False, True, False],
        [1.0, 0.0, 5.0, -0.0],
        np.array([3, 0, 255, 0], dtype=np.uint8),
    ],
)
def test_regenerate_a_large_nonzero_mask_value_regenerates_its_env(mask):
    tg = presets.track(num_envs=4, num_points=32, device="cpu")
    before = tg.generate().numpy()["xy"]
    after = tg.regenerate(mask).numpy()["xy"]
    assert _moved(before, after) == [0, 2]
    # the same bytes as the mask written as 0/1 by hand, on a generator in the same state
    ref = presets.track(num_envs=4, num_points=32, device="cpu")
    ref.generate()
    assert (
        ref.regenerate(np.array([1, 0, 1, 0], dtype=np.int32)).fingerprint()
        == tg.result.fingerprint()
    )


def test_regenerate_mask_length_is_checked(small_track):
    with pytest.raises(ParamsError, match=r"^regenerate mask: expected 4 values, got \(5,\)$"):
        small_track.regenerate([1, 0, 0, 0, 1])


def test_enqueue_refuses_an_unknown_mode(small_track):
    with pytest.raises(
        ParamsError, match=r"^enqueue mode: expected 'generate' or 'regenerate', got 'regen'$"
    ):
        small_track.enqueue(LaunchContext("cpu"), mode="regen")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("epoch", math.nan, "TrackGenConfig.epoch: expected an integer, got nan"),
        ("seed", math.inf, "TrackGenConfig.seed: expected an integer, got inf"),
        ("num_envs", "4", "TrackGenConfig.num_envs: expected an integer, got '4'"),
        ("scale", math.nan, "TrackGenConfig.scale: expected a positive number, got nan"),
        ("scale", True, "TrackGenConfig.scale: expected a positive number, got True"),
    ],
)
def test_config_refusals_are_params_errors(field, value, message):
    # NaN and infinity used to escape as the built-in ValueError/OverflowError of int()
    with pytest.raises(ParamsError) as err:
        TrackGenConfig(**{"num_envs": 4, "num_points": 32, "device": "cpu", field: value})
    assert str(err.value) == message


def test_config_accepts_numpy_scalars():
    cfg = TrackGenConfig(
        num_envs=np.int64(4), num_points=np.int32(32), scale=np.float32(2.0), seed=np.uint32(7)
    )
    assert (cfg.num_envs, cfg.num_points, cfg.scale, cfg.seed) == (4, 32, 2.0, 7)
    assert type(cfg.num_envs) is int and type(cfg.scale) is float


def test_bounded_loop_refuses_a_non_integer_bound():
    ctx = LaunchContext("cpu")
    for bad, shown in (("3", "'3'"), (2.5, "2.5"), (math.nan, "nan"), (-1, "-1")):
        with pytest.raises(ParamsError) as err:
            ctx.bounded_loop(bad, lambda i: None)
        assert str(err.value).startswith("bounded_loop iterations: expected an integer")
        assert str(err.value).endswith(f"got {shown}")


def test_a_context_that_is_not_a_launch_context_is_refused(small_track):
    with pytest.raises(
        ParamsError,
        match=r"^TrackGenerator ctx: expected a track_gen.exec.LaunchContext or None, got 'cpu'$",
    ):
        TrackGenerator(TrackGenConfig(num_envs=2, num_points=16, device="cpu"), ctx="cpu")
    with pytest.raises(ParamsError, match=r"^GateGenerator ctx: expected a track_gen.exec"):
        GateGenerator(GateGenConfig(num_envs=2, device="cpu"), ctx=object())
    with pytest.raises(
        ParamsError, match=r"^enqueue ctx: expected a track_gen.exec.LaunchContext, got None$"
    ):
        small_track.enqueue(None)
    with pytest.raises(ParamsError, match=r"^enqueue ctx: expected a track_gen.exec.LaunchContext"):
        gates(num_envs=2, device="cpu").enqueue("cpu")


def test_update_refuses_values_that_are_not_mappings(small_track):
    with pytest.raises(
        ParamsError, match=r"^update validity: expected a dict of fields, got \[1\]$"
    ):
        small_track.update(validity=[1])
    with pytest.raises(
        ParamsError, match=r"^generator_params of 'polar': expected a dict of fields, got 3$"
    ):
        small_track.update(generator_params=3)
    g = gates(num_envs=2, device="cpu")
    with pytest.raises(
        ParamsError, match=r"^generator_params of 'free': expected a dict of fields, got 'x'$"
    ):
        g.update("x")


def test_course_sizes_take_numpy_scalars_and_refuse_the_rest():
    kw = dict(num_envs=2, device="cpu")
    course = build(samples=np.int64(4), track_width=np.float32(0.25), **kw)
    assert course.track_width == 0.25
    for bad, text in (
        ({"samples": 1}, r"^Course samples: expected an integer in \[2, 256\], got 1$"),
        ({"samples": 4.5}, r"^Course samples: expected an integer, got 4.5$"),
        ({"track_width": math.nan}, r"^Course track_width: expected a positive number, got nan$"),
    ):
        with pytest.raises(ParamsError, match=text):
            build(**kw, **bad)


@pytest.mark.parametrize("seed", [2**32 - 8, -(2**31)])  # the kits run 8 envs: seed + 7 fits
def test_the_kits_take_every_seed_the_configs_take(seed):
    # the kits' "another seed" used to be seed + 1000003, past the range at the top
    track = check_generator(registry.get("generator", "polar"), seed=seed, device="cpu")
    assert track.ok, str(track)
    gate = check_gate_generator(registry.get("gate_generator", "free"), seed=seed, device="cpu")
    assert gate.ok, str(gate)


@pytest.mark.parametrize("cls", [TrackGenConfig, GateGenConfig])
def test_env_seeds_must_be_a_sequence_of_seeds(cls):
    name = cls.__name__
    with pytest.raises(
        ParamsError, match=rf"^{name}.env_seeds: expected a sequence of 2 seeds, got 5$"
    ):
        cls(num_envs=2, env_seeds=5)
    with pytest.raises(ParamsError, match=rf"^{name}.env_seeds: expected a sequence of 2 seeds"):
        cls(num_envs=2, env_seeds="ab")
    with pytest.raises(ParamsError, match=rf"^{name}.env_seeds: expected 2 seeds, got 3$"):
        cls(num_envs=2, env_seeds=[1, 2, 3])
    with pytest.raises(
        ParamsError, match=rf"^{name}.env_seeds\[\]: expected an integer in \[-2147483648, "
    ):
        cls(num_envs=2, env_seeds=[1, 2**32])
    assert cls(num_envs=2, env_seeds=np.array([7, -7])).env_seeds == (7, -7)


def test_a_track_given_to_gates_is_checked_even_when_unread():
    from procgen_nb.errors import GeneratorError

    with pytest.raises(GeneratorError, match=r"^track: expected a TrackGenerator or TrackResult"):
        gates(num_envs=2, device="cpu", track=5)
    other = presets.track(num_envs=3, num_points=32, device="cpu")
    with pytest.raises(
        GeneratorError, match=r"^track: expected a TrackGenerator or TrackResult of 2"
    ):
        gates(num_envs=2, device="cpu", track=other)
