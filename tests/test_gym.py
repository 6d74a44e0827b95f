"""The Gymnasium CarRacing bridge: registration, check_env, tracks by seed, tiles on the
exported widths, the vector form's single generator call."""

from __future__ import annotations

import tomllib
import warnings
from pathlib import Path

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium", reason="the gym extra (gymnasium) is not installed")
pytest.importorskip("Box2D", reason="the gym extra (box2d) is not installed")

import procgen_nb.gym as pgym  # noqa: E402
from procgen_nb.errors import GeneratorError, ParamsError  # noqa: E402
from procgen_nb.track_gen import export, presets  # noqa: E402

KW = {"generator": "polar", "num_points": 160}


@pytest.fixture
def env():
    e = gym.make(pgym.ENV_ID, render_mode="rgb_array", **KW)
    yield e
    e.close()


def test_check_env(env):
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)


def test_reset_picks_the_track_by_seed(env):
    a, _ = env.reset(seed=5)
    ta = env.unwrapped.track_seed, [t[2:] for t in env.unwrapped.track]
    b, _ = env.reset(seed=6)
    tb = [t[2:] for t in env.unwrapped.track]
    c, _ = env.reset(seed=5)
    assert env.unwrapped.track_seed == 5 == ta[0]
    assert [t[2:] for t in env.unwrapped.track] == ta[1] and np.array_equal(a, c)
    assert ta[1] != tb
    # options={"track_seed": s} picks the track apart from the rng seed
    env.reset(seed=99, options={"track_seed": 5})
    assert [t[2:] for t in env.unwrapped.track] == ta[1]


def test_tiles_follow_the_exported_widths(env):
    env.reset(seed=7)
    u = env.unwrapped
    half = 40 / 6 / pgym.DEFAULT_SCALE
    g = presets.track(
        "polar", num_envs=1, num_points=160, env_seeds=[7], width={"left": half, "right": half}
    )
    (t,) = export.tracks(g, scale=pgym.DEFAULT_SCALE)
    lb, rb = t.boundaries()
    i0 = t.start_index()
    got = np.array([[f.shape.vertices for f in tile.fixtures][0] for tile in u.road])
    assert len(u.road) == 160
    # tile k: vertices left/right at point k and point k - 1 of the lap from the start line
    for k in (0, 1, 50, 159):
        i, j = (i0 + k) % 160, (i0 + k - 1) % 160
        want = np.array([lb[i], rb[i], rb[j], lb[j]])
        # Box2D keeps a polygon's corners in its own (counter-clockwise) order
        np.testing.assert_allclose(np.sort(got[k], axis=0), np.sort(want, axis=0), atol=1e-3)
    # the car starts on the start line, facing along the track
    x, y = u.car.hull.position
    np.testing.assert_allclose([x, y], t.xy[i0], atol=0.05)  # (reset steps the world once)


def test_custom_widths_and_steps():
    e = gym.make(pgym.ENV_ID, width={"left": 0.05, "right": 0.02, "variation": 0.3}, **KW)
    e.reset(seed=2)
    u = e.unwrapped
    tr = u.procgen_track
    lb, rb = tr.boundaries()
    i0 = tr.start_index()
    # each tile's left and right corners at its point are the track's boundaries there,
    # left + right apart
    np.testing.assert_allclose(np.linalg.norm(lb - rb, axis=1), tr.left + tr.right, rtol=1e-9)
    for k, tile in enumerate(u.road):
        i = (i0 + k) % len(lb)
        corners = np.array(tile.fixtures[0].shape.vertices)
        assert np.linalg.norm(corners - lb[i], axis=1).min() < 1e-3
        assert np.linalg.norm(corners - rb[i], axis=1).min() < 1e-3
    assert tr.left.std() > 0  # the widths vary along the lap
    total = 0.0
    for _ in range(30):
        obs, r, term, trunc, _ = e.step(np.array([0.0, 1.0, 0.0], np.float32))
        total += r
        assert obs.shape == (96, 96, 3) and np.isfinite(r)
    assert total > 0  # it drove over new tiles
    e.close()


def test_a_handed_track_is_taken_once_by_a_reset_that_asks_for_its_seed_or_none(env):
    e = env.unwrapped
    [t7, t8] = e.make_tracks([7, 8])
    single = gym.make(pgym.ENV_ID, **KW)
    single.reset(seed=7)
    assert np.array_equal(t7.xy, single.unwrapped.procgen_track.xy)  # one call's = alone
    single.close()
    e.hand_track(8, t8)
    env.reset(seed=8)
    assert e.track_seed == 8 and e.procgen_track is t8
    e.hand_track(8, t8)
    env.reset()  # no seed of its own: the handed track
    assert e.procgen_track is t8
    env.reset(seed=8)  # taken once: made again
    assert e.procgen_track is not t8 and np.array_equal(e.procgen_track.xy, t8.xy)
    e.hand_track(8, t8)
    env.reset(seed=7)  # another seed: its own track
    assert e.track_seed == 7 and e.procgen_track is not t8


def test_module_prefixed_id():
    e = gym.make("procgen_nb.gym:procgen_nb/CarRacing-v0", **KW)
    assert isinstance(e.unwrapped, pgym.CarRacing)
    e.close()


def test_make_vec_one_generator_call():
    v = gym.make_vec(pgym.ENV_ID, num_envs=3, **KW)
    assert isinstance(v, pgym.CarRacingVector)
    assert v.envs[0]._max_episode_steps == 1000
    obs, _ = v.reset(seed=20)
    assert obs.shape == (3, 96, 96, 3) and v.generator_calls == 1
    assert [e.unwrapped.track_seed for e in v.envs] == [20, 21, 22]
    single = gym.make(pgym.ENV_ID, **KW)
    single.reset(seed=21)
    assert [t[2:] for t in v.envs[1].unwrapped.track] == [t[2:] for t in single.unwrapped.track]
    v.reset()
    assert v.generator_calls == 2 and len({e.unwrapped.track_seed for e in v.envs}) == 3
    obs, r, *_ = v.step(np.zeros((3, 3), np.float32))
    assert r.shape == (3,)
    v.close()
    single.close()


def test_bad_arguments():
    with pytest.raises(ParamsError, match="scale"):
        pgym.CarRacing(scale=0)
    with pytest.raises(GeneratorError):
        pgym.CarRacing(generator="no.such")
    with pytest.raises(ParamsError, match="num_envs"):
        pgym.CarRacingVector(num_envs=0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"scale": float("inf")}, r"CarRacing scale: .* got inf"),
        ({"scale": float("nan")}, r"CarRacing scale: .* got nan"),
        ({"scale": "a"}, r"CarRacing scale: .* got 'a'"),
        ({"width": 3}, r"CarRacing width: expected None, a WidthParams or a dict.* got 3"),
        ({"track_config": 3}, r"CarRacing track_config: expected None or a dict.* got 3"),
        ({"track_config": {"bogus": 1}}, r"track_config: .*'validity'.* unknown \['bogus'\]"),
        ({"track_config": {"num_envs": 4}}, r"track_config: .*env sets .* got \['num_envs'\]"),
        ({"track_config": {"generator": "x"}}, r"track_config: .* got \['generator'\]"),
        ({"track_config": {"seed": 3}}, r"track_config: .* got \['seed'\]"),
    ],
)
def test_bad_constructor_arguments_name_themselves(kwargs, match):
    with pytest.raises(ParamsError, match=match):
        pgym.CarRacing(**KW, **kwargs)


def test_track_config_takes_the_fields_the_env_does_not_set():
    assert set(pgym._car_racing.CONFIG_FIELDS) == {
        "device",
        "epoch",
        "scale",
        "validity",
        "z_profile",
    }
    e = pgym.CarRacing(**KW, track_config={"epoch": 1})
    e.reset(seed=3)
    f = pgym.CarRacing(**KW)
    f.reset(seed=3)
    assert not np.array_equal(e.procgen_track.xy, f.procgen_track.xy)  # another epoch


SEED_RANGE = r"expected an integer in \[0, 2147483647\]"


@pytest.mark.parametrize(
    "kwargs, label",
    [
        ({"seed": -1}, "reset seed"),
        ({"seed": 1.5}, "reset seed"),
        ({"seed": 1.0}, "reset seed"),  # Gymnasium's seeds are integers
        ({"seed": "a"}, "reset seed"),
        ({"seed": True}, "reset seed"),
        ({"seed": [1]}, "reset seed"),
        ({"seed": 2**31}, "reset seed"),  # was wrapped to the track of seed 0
        ({"seed": 2**40}, "reset seed"),
        ({"options": {"track_seed": "a"}}, 'reset options\\["track_seed"\\]'),
        ({"options": {"track_seed": -5}}, 'reset options\\["track_seed"\\]'),  # was 2147483643
        ({"options": {"track_seed": 1.7}}, 'reset options\\["track_seed"\\]'),  # was 1
    ],
)
def test_bad_reset_seeds_are_refused(env, kwargs, label):
    with pytest.raises(ParamsError, match=f"CarRacing.{label}: {SEED_RANGE}, got"):
        env.reset(**kwargs)


def test_reset_refuses_options_that_are_not_a_dict(env):
    with pytest.raises(
        ParamsError, match="CarRacing.reset options: expected None or a dict, got 3"
    ):
        env.reset(options=3)


def test_reset_takes_numpy_seeds_and_the_largest_seed(env):
    env.reset(seed=np.int64(3))
    a = env.unwrapped.procgen_track.xy
    assert env.unwrapped.track_seed == 3 and type(env.unwrapped.track_seed) is int
    env.reset(seed=3)
    assert np.array_equal(a, env.unwrapped.procgen_track.xy)
    env.reset(options={"track_seed": np.uint32(2**31 - 1)})
    assert env.unwrapped.track_seed == 2**31 - 1


@pytest.mark.parametrize(
    "seed, match",
    [
        (1.5, r"reset seed: expected None, an integer in \[0, 2147483646\] or a list"),
        ("x", r"reset seed: expected None, .* got 'x'"),
        (-3, r"reset seed \(num_envs=2\): expected an integer in \[0, 2147483646\], got -3"),
        (2**31 - 1, r"reset seed \(num_envs=2\): .*2147483646\], got 2147483647"),  # env 1 wraps
        ([1], r"reset seed: expected 2 seeds \(one per env\), got 1"),
        ([1, "a"], rf"reset seed\[1\]: {SEED_RANGE}, got 'a'"),
        ([-1, 2], rf"reset seed\[0\]: {SEED_RANGE}, got -1"),
        ([1, 2.5], rf"reset seed\[1\]: {SEED_RANGE}, got 2.5"),
    ],
)
def test_vector_reset_refuses_bad_seeds(seed, match):
    v = pgym.CarRacingVector(num_envs=2, **KW)
    with pytest.raises(ParamsError, match="CarRacingVector." + match):
        v.reset(seed=seed)
    assert v.generator_calls == 0
    v.close()


def test_vector_reset_takes_numpy_seeds():
    v = pgym.CarRacingVector(num_envs=2, **KW)
    v.reset(seed=np.int64(2**31 - 2))
    assert [e.unwrapped.track_seed for e in v.envs] == [2**31 - 2, 2**31 - 1]
    v.reset(seed=np.array([5, 9]))
    assert [e.unwrapped.track_seed for e in v.envs] == [5, 9]
    v.close()


def test_extras_and_entry_point_declared():
    meta = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    gym_extra = meta["optional-dependencies"]["gym"]
    assert {d.split("==")[0] for d in gym_extra} == {"gymnasium", "box2d", "pygame"}
    assert all("==" in d for d in gym_extra)
    assert set(gym_extra) <= set(meta["optional-dependencies"]["test"])
    assert meta["entry-points"]["gymnasium.envs"]["procgen_nb"] == "procgen_nb.gym:register_envs"
