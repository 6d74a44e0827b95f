"""``GateGenConfig``: what a ``GateGenerator`` makes.

Seeds follow ``TrackGenConfig``: env ``e`` has the seed ``env_seeds[e]`` (``seed + e``
when ``env_seeds`` is None), mixed with the epoch on the device; a gate generator draws
its streams with ``b.salt("<stream>")``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import ParamsError
from ...params import Params
from .._checks import EPOCH_RANGE, SEED_RANGE, check_int, check_positive, seed_list
from ..config import check_seed_span

#: the orderings the pipeline's order stages implement (``order.<name>``)
ORDERINGS = ("ccw", "random_pairs", "raw")


def _int(name: str, value: Any, lo: int, hi: int) -> int:
    return check_int(f"GateGenConfig.{name}", value, lo, hi)


def _positive(name: str, value: Any, allow_zero: bool = False) -> float:
    return check_positive(f"GateGenConfig.{name}", value, allow_zero)


@dataclasses.dataclass
class GateGenConfig:
    """The configuration of a batch of gate layouts.

    Attributes:
        num_envs: E, layouts generated at once (>= 1).
        scale: half the extent the ``normalize.extent`` stage fits the gates into (> 0).
        device: a Warp device name; None takes ``procgen_nb.get_device()``.
        generator: the registered gate generator's name (``"free"``, ``"acme.slalom"``).
        generator_params: a dict of the generator's Params fields, an instance, or None.
        gate_ordering: ``"ccw"``, ``"random_pairs"``, ``"raw"`` or None (resolved by the
            generator: an anchors Stage's ``preferred["order"]`` when it accepts it, else
            ``"ccw"`` when it supports it, else the first of its orderings, sorted).
        min_gates: the fewest gates a valid layout has (>= 1).
        max_gates: G, the gate slots per env of the outputs (>= min_gates).
        min_spacing: the smallest distance between consecutive gates of a valid layout
            (world units, >= 0).
        gate_size: every gate's opening width (world units, > 0).
        seed: the seed of env 0. epoch: mixed into every env's base seed.
        env_seeds: optional explicit seed per env (length ``num_envs``).

    Raises:
        ParamsError: a field out of range (the message names the field and the value).
    """

    num_envs: int = 64
    scale: float = 1.0
    device: str | None = None
    generator: str = "free"
    generator_params: Params | Mapping[str, Any] | None = None
    gate_ordering: str | None = None
    min_gates: int = 3
    max_gates: int = 32
    min_spacing: float = 0.1
    gate_size: float = 0.1
    seed: int = 0
    epoch: int = 0
    env_seeds: Sequence[int] | None = None

    def __post_init__(self) -> None:
        self.num_envs = _int("num_envs", self.num_envs, 1, 1 << 24)
        self.min_gates = _int("min_gates", self.min_gates, 1, 4096)
        self.max_gates = _int("max_gates", self.max_gates, 1, 4096)
        if self.max_gates < self.min_gates:
            raise ParamsError(
                f"GateGenConfig.max_gates: expected an integer >= min_gates={self.min_gates}, "
                f"got {self.max_gates}"
            )
        self.seed = _int("seed", self.seed, *SEED_RANGE)
        self.epoch = _int("epoch", self.epoch, *EPOCH_RANGE)
        self.scale = _positive("scale", self.scale)
        self.min_spacing = _positive("min_spacing", self.min_spacing, allow_zero=True)
        self.gate_size = _positive("gate_size", self.gate_size)
        if not isinstance(self.generator, str) or not self.generator:
            raise ParamsError(
                f"GateGenConfig.generator: expected a gate generator name, got {self.generator!r}"
            )
        if self.gate_ordering is not None and self.gate_ordering not in ORDERINGS:
            raise ParamsError(
                f"GateGenConfig.gate_ordering: expected one of {list(ORDERINGS)} or None, "
                f"got {self.gate_ordering!r}"
            )
        if self.env_seeds is not None:
            self.env_seeds = seed_list("GateGenConfig.env_seeds", self.env_seeds, self.num_envs)
        else:
            check_seed_span("GateGenConfig", self.seed, self.num_envs)

    def env_seed_values(self) -> list[int]:
        """Returns each env's seed as a signed 32-bit integer."""
        raw = self.env_seeds
        if raw is None:
            raw = [self.seed + e for e in range(self.num_envs)]
        return [((int(v) + (1 << 31)) % (1 << 32)) - (1 << 31) for v in raw]


__all__ = ["ORDERINGS", "GateGenConfig"]
