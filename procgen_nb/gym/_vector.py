"""``CarRacingVector``: many ``CarRacing`` envs whose tracks come from one generator call."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from gymnasium.vector import SyncVectorEnv
from gymnasium.wrappers import TimeLimit

from ..errors import ParamsError
from ._car_racing import SEED_MAX, CarRacing, check_seed


class CarRacingVector(SyncVectorEnv):
    """``gymnasium.make_vec("procgen_nb/CarRacing-v0", num_envs=K, ...)``: K CarRacing envs
    run one after another (Gymnasium's ``SyncVectorEnv``); ``reset`` makes all K tracks in
    one ``TrackGenerator`` call (env seeds ``seed .. seed + K - 1``, or one drawn per env),
    and hands each env its own. An env that finishes mid-run (autoreset) makes its next
    track alone.

    Args:
        num_envs: K (>= 1).
        max_episode_steps: each env's ``TimeLimit`` (``make_vec`` passes the registered
            1000); None for none.
        **kwargs: ``CarRacing`` arguments, shared by every env.

    Attributes:
        generator_calls: how many generator batches ``reset`` has made.
    """

    def __init__(self, num_envs: int = 1, max_episode_steps: int | None = None, **kwargs: Any):
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ParamsError(
                f"CarRacingVector num_envs: expected an integer >= 1, got {num_envs!r}"
            )
        self._kwargs = kwargs

        def make() -> Any:
            env = CarRacing(**kwargs)
            return TimeLimit(env, max_episode_steps) if max_episode_steps else env

        super().__init__([make for _ in range(num_envs)])
        self.generator_calls = 0

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        """Resets every env, its track made in one batch with the others'.

        ``seed``: None (a seed drawn per env), an integer ``s`` in [0, 2**31 - K] (env ``i``
        gets ``s + i``, as Gymnasium's vector envs), or a list of K seeds, each None or an
        integer in [0, 2**31 - 1] (a list, tuple or 1-D array); Python or NumPy integers.

        Raises:
            ParamsError: another ``seed`` (a float, a string, a seed out of range, a list of
                another length), naming it and the range.
        """
        K = self.num_envs
        if seed is None:
            seeds = [int(s) for s in np.random.default_rng().integers(0, 1 << 31, K)]
            gym_seeds: Any = None
        elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool | np.bool_):
            first = check_seed(f"CarRacingVector.reset seed (num_envs={K})", seed, SEED_MAX - K + 1)
            seeds, gym_seeds = [first + i for i in range(K)], first
        elif isinstance(seed, list | tuple) or (isinstance(seed, np.ndarray) and seed.ndim == 1):
            seed = list(seed)
            if len(seed) != K:
                raise ParamsError(
                    f"CarRacingVector.reset seed: expected {K} seeds (one per env), got "
                    f"{len(seed)}: {seed!r}"
                )
            gym_seeds = [
                None if s is None else check_seed(f"CarRacingVector.reset seed[{i}]", s)
                for i, s in enumerate(seed)
            ]
            rng = np.random.default_rng()
            seeds = [int(rng.integers(0, 1 << 31)) if s is None else s for s in gym_seeds]
        else:
            raise ParamsError(
                f"CarRacingVector.reset seed: expected None, an integer in [0, "
                f"{SEED_MAX - K + 1}] or a list of {K} seeds (None or integers in [0, "
                f"{SEED_MAX}]), got {seed!r}"
            )
        tracks = self.envs[0].unwrapped.make_tracks(seeds)
        self.generator_calls += 1
        for env, s, t in zip(self.envs, seeds, tracks, strict=True):
            env.unwrapped.hand_track(s, t)
        # an env reset without a seed of its own takes the track handed to it
        return super().reset(seed=gym_seeds, options=options)


__all__ = ["CarRacingVector"]
