"""Gymnasium environments on procgen_nb tracks (needs the ``gym`` extra:
``pip install 'procgen_nb[gym]'``).

``import procgen_nb.gym`` registers ``procgen_nb/CarRacing-v0``::

    import gymnasium, procgen_nb.gym
    env = gymnasium.make("procgen_nb/CarRacing-v0", generator="polar", generator_params={"lobes": 5})
    obs, info = env.reset(seed=3)  # the track of env seed 3
    envs = gymnasium.make_vec("procgen_nb/CarRacing-v0", num_envs=8)  # one generator call

``gymnasium.make("procgen_nb.gym:procgen_nb/CarRacing-v0")`` imports it on the way. The
``gymnasium.envs`` entry point of the distribution names ``register_envs`` for Gymnasium
releases that load that group.
"""

from __future__ import annotations

import gymnasium

from ._car_racing import DEFAULT_SCALE, CarRacing, make_generator
from ._vector import CarRacingVector

ENV_ID = "procgen_nb/CarRacing-v0"


def register_envs() -> None:
    """Registers ``procgen_nb/CarRacing-v0`` (its vector entry point one generator call for
    every env's track); registering again is a no-op."""
    if ENV_ID in gymnasium.registry:
        return
    gymnasium.register(
        id=ENV_ID,
        entry_point="procgen_nb.gym._car_racing:CarRacing",
        vector_entry_point="procgen_nb.gym._vector:CarRacingVector",
        max_episode_steps=1000,
        reward_threshold=900,
    )


register_envs()

__all__ = [
    "DEFAULT_SCALE",
    "ENV_ID",
    "CarRacing",
    "CarRacingVector",
    "make_generator",
    "register_envs",
]
