"""``CarRacing``: Gymnasium's CarRacing whose track procgen_nb makes.

The track of an episode is the env seed ``reset(seed=s)`` gives (or ``options={"track_seed":
s}``; a seed drawn from the env's generator when neither is given): seeds split train and
test. Its tiles follow the track's widths as ``track_gen.export`` writes them (metres:
world units times ``scale``), and the lap starts on its start/finish line.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # pygame's banner on stdout

from gymnasium.envs.box2d import car_racing as _cr  # noqa: E402

from ..errors import ParamsError  # noqa: E402
from ..track_gen import export as _export  # noqa: E402
from ..track_gen._checks import check_positive  # noqa: E402
from ..track_gen.config import TrackGenConfig  # noqa: E402
from ..track_gen.pipeline import TrackGenerator  # noqa: E402
from ..track_gen.widths import WidthParams  # noqa: E402

#: metres per world unit: a generator's unit square (about +-1.1) fills CarRacing's field
DEFAULT_SCALE = 200.0
#: attempts (``regenerate``) to find a valid track for a seed
MAX_ATTEMPTS = 32
#: the track seeds an env takes (``reset(seed=)``, ``options["track_seed"]``): [0, 2**31)
SEED_MAX = (1 << 31) - 1
#: the ``TrackGenConfig`` fields the env sets itself (its own arguments, or the seeds)
OWN_FIELDS = frozenset(
    {"num_envs", "num_points", "generator", "generator_params", "seed", "env_seeds", "width"}
    | {"direction"}
)
#: the ``TrackGenConfig`` fields ``track_config`` may set
CONFIG_FIELDS = tuple(
    sorted(f.name for f in dataclasses.fields(TrackGenConfig) if f.name not in OWN_FIELDS)
)


def check_seed(label: str, value: Any, hi: int = SEED_MAX) -> int:
    """Returns ``value`` as a Python int when it is an integer (a Python or NumPy int, not a
    bool or a float) in ``[0, hi]``.

    Raises:
        ParamsError: anything else, named ``label`` with the range.
    """
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)
    if not ok or not 0 <= int(value) <= hi:
        raise ParamsError(f"{label}: expected an integer in [0, {hi}], got {value!r}")
    return int(value)


def _check_width(width: Any) -> dict[str, Any]:
    if width is None:
        return {}
    if isinstance(width, WidthParams):
        return width.to_dict()
    if not isinstance(width, Mapping) or not all(isinstance(k, str) for k in width):
        raise ParamsError(
            f"CarRacing width: expected None, a WidthParams or a dict of its fields "
            f"{sorted(WidthParams.fields())}, got {width!r}"
        )
    return dict(width)


def _check_track_config(config: Any) -> dict[str, Any]:
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise ParamsError(
            f"CarRacing track_config: expected None or a dict of TrackGenConfig fields "
            f"among {list(CONFIG_FIELDS)}, got {config!r}"
        )
    own = sorted(str(k) for k in config if k in OWN_FIELDS)
    if own:
        raise ParamsError(
            f"CarRacing track_config: expected TrackGenConfig fields among "
            f"{list(CONFIG_FIELDS)} (the env sets {sorted(OWN_FIELDS)} itself; pass "
            f"generator, generator_params, num_points, width, direction as its own "
            f"arguments), got {own}"
        )
    unknown = sorted(repr(k) for k in config if k not in CONFIG_FIELDS)
    if unknown:
        raise ParamsError(
            f"CarRacing track_config: expected TrackGenConfig fields among "
            f"{list(CONFIG_FIELDS)}, got unknown [{', '.join(unknown)}]"
        )
    return dict(config)


def make_generator(
    seeds: list[int],
    generator: str,
    generator_params: Mapping[str, Any] | None,
    num_points: int,
    scale: float,
    width: Mapping[str, Any] | None,
    direction: str,
    config: Mapping[str, Any],
) -> tuple[TrackGenerator, list[_export.Track]]:
    """One generator call for every seed (plus ``regenerate`` calls for the invalid ones):
    returns the generator and one ``export.Track`` per seed, in metres.

    Raises:
        ParamsError: a seed whose track stays invalid after ``MAX_ATTEMPTS`` attempts, a
            ``scale`` that is not a finite number > 0, a ``width`` that is not None, a
            WidthParams or a dict, a ``config`` with other keys than ``CONFIG_FIELDS``, or a
            refused config field.
        GeneratorError: an unknown generator or refused generator_params.
    """
    scale = check_positive("CarRacing scale", scale)
    config = _check_track_config(config)
    half = _cr.TRACK_WIDTH / scale  # CarRacing's own half width, in world units
    width = {"left": half, "right": half, **_check_width(width)}
    cfg = TrackGenConfig(
        num_envs=len(seeds),
        num_points=num_points,
        generator=generator,
        generator_params=generator_params,
        env_seeds=seeds,
        width=width,
        direction=direction,
        **dict(config),
    )
    gen = TrackGenerator(cfg)
    res = gen.result
    for _ in range(MAX_ATTEMPTS):
        if res.num_valid() == len(seeds):
            break
        res = gen.regenerate()
    else:
        bad = [seeds[e] for e in np.flatnonzero(res.numpy()["valid"] == 0)]
        raise ParamsError(
            f"CarRacing seeds: expected a valid {generator!r} track within {MAX_ATTEMPTS} "
            f"attempts, got none for seeds {bad[:8]}"
        )
    return gen, _export.tracks(gen, scale=scale)


class CarRacing(_cr.CarRacing):
    """CarRacing on procgen_nb tracks (``gymnasium.make("procgen_nb/CarRacing-v0", ...)``).

    Args:
        generator: a registered track generator.
        generator_params: its Params fields.
        num_points: points per track (one tile each).
        scale: metres (CarRacing units) per world unit.
        width: ``WidthParams`` fields in world units (a dict, or a WidthParams; default:
            CarRacing's own half width of 40/6 on each side, constant).
        direction: ``"ccw"``, ``"cw"`` or ``"random"``.
        track_config: a dict of other ``TrackGenConfig`` fields (``CONFIG_FIELDS``:
            ``device``, ``epoch``, ``scale``, ``validity``, ``z_profile``); the env sets the
            others itself.
        render_mode, verbose, lap_complete_percent, domain_randomize, continuous: as
            Gymnasium's CarRacing.

    Raises:
        ParamsError: ``scale`` not a finite number > 0; ``width`` or ``track_config`` not a
            dict (or None), or ``track_config`` naming a field the env sets or no field;
            any ``TrackGenConfig`` field refused (named).
        GeneratorError: an unknown generator or refused generator_params.

    Attributes:
        track_seed: the env seed of the current track. procgen_track: its ``export.Track``.
    """

    def __init__(
        self,
        generator: str = "polar",
        generator_params: Mapping[str, Any] | None = None,
        num_points: int = 320,
        scale: float = DEFAULT_SCALE,
        width: Mapping[str, Any] | None = None,
        direction: str = "ccw",
        track_config: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
        verbose: bool = False,
        lap_complete_percent: float = 0.95,
        domain_randomize: bool = False,
        continuous: bool = True,
    ):
        super().__init__(render_mode, verbose, lap_complete_percent, domain_randomize, continuous)
        self._track_args = dict(
            generator=generator,
            generator_params=generator_params,
            num_points=num_points,
            scale=check_positive("CarRacing scale", scale),
            width=_check_width(width),
            direction=direction,
            config=_check_track_config(track_config),
        )
        make_generator([0], **self._track_args)  # refuses bad arguments now, not at reset
        self.track_seed: int | None = None
        self.procgen_track: _export.Track | None = None
        self._next: tuple[int, _export.Track] | None = None  # handed over by the vector env

    def make_tracks(self, seeds: list[int]) -> list[_export.Track]:
        """The tracks of ``seeds`` (ints in [0, 2**31)), made in one generator call with
        this env's generator arguments (``CarRacingVector`` makes its envs' tracks so).

        Raises:
            ParamsError: a seed that is not an integer in [0, 2**31 - 1].
        """
        seeds = [check_seed(f"CarRacing.make_tracks seeds[{i}]", s) for i, s in enumerate(seeds)]
        return make_generator(seeds, **self._track_args)[1]

    def hand_track(self, seed: int, track: _export.Track) -> None:
        """Hands the env ``track``, the track of ``seed``: its next reset takes it when it
        asks for ``seed`` or for no seed of its own (once; a later reset makes its own)."""
        self._next = (seed, track)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Resets onto the track of ``options["track_seed"]``, else of ``seed``, else of a
        seed drawn from the env's generator.

        ``seed`` and ``track_seed``: None, or integers (Python or NumPy) in [0, 2**31 - 1],
        used as they are (the track of seed ``s`` is env seed ``s``).

        Raises:
            ParamsError: a ``seed`` or ``track_seed`` of another type or out of range, or
                ``options`` not a dict (or None).
        """
        if seed is not None:
            seed = check_seed("CarRacing.reset seed", seed)
        if options is not None and not isinstance(options, Mapping):
            raise ParamsError(f"CarRacing.reset options: expected None or a dict, got {options!r}")
        opts = dict(options or {})
        track_seed = opts.pop("track_seed", None)
        if track_seed is not None:
            track_seed = check_seed('CarRacing.reset options["track_seed"]', track_seed)
        elif seed is not None:
            track_seed = seed
        self._wanted_seed = track_seed
        return super().reset(seed=seed, options=opts or None)

    def _track_for(self, seed: int | None) -> tuple[int, _export.Track]:
        handed, self._next = self._next, None
        if handed is not None and seed in (None, handed[0]):
            return handed
        if seed is None:
            seed = int(self.np_random.integers(0, 1 << 31))
        return seed, make_generator([seed], **self._track_args)[1][0]

    def _create_track(self) -> bool:
        seed, track = self._track_for(self._wanted_seed)
        self.track_seed, self.procgen_track = seed, track
        i0 = track.start_index()
        order = np.roll(np.arange(len(track.xy)), -i0)  # the lap starts on the start line
        xy, n = track.xy[order], track.normals()[order]
        lb, rb = xy + n * track.left[order, None], xy - n * track.right[order, None]
        t = track.tangents()[order]
        beta = np.arctan2(t[:, 1], t[:, 0]) - math.pi / 2  # CarRacing's angle of travel
        N = len(xy)
        self.road = []
        # red-white kerbs on hard turns, as CarRacing marks them
        turn = np.angle(np.exp(1j * (beta - np.roll(beta, 1))))
        step = track.arc_length()[-1] / N
        hard = np.abs(turn) > _cr.TRACK_TURN_RATE * 0.2 * step / _cr.TRACK_DETAIL_STEP
        border = np.zeros(N, bool)
        for i in range(N):
            run = [(i - k) % N for k in range(_cr.BORDER_MIN_COUNT)]
            if hard[run].all() and abs(np.sign(turn[run]).sum()) == _cr.BORDER_MIN_COUNT:
                border[run] = True
        self.track = []
        for i in range(N):
            j = i - 1  # tile i runs from point i - 1 to point i, as CarRacing's
            road1_l, road1_r = tuple(lb[i]), tuple(rb[i])
            road2_l, road2_r = tuple(lb[j]), tuple(rb[j])
            vertices = [road1_l, road1_r, road2_r, road2_l]
            self.fd_tile.shape.vertices = vertices
            tile = self.world.CreateStaticBody(fixtures=self.fd_tile)
            tile.userData = tile
            c = 0.01 * (i % 3) * 255
            tile.color = self.road_color + c
            tile.road_visited = False
            tile.road_friction = 1.0
            tile.idx = i
            tile.fixtures[0].sensor = True
            self.road_poly.append((vertices, tile.color))
            self.road.append(tile)
            if border[i]:
                side = -1.0 if turn[i] > 0 else 1.0  # the outside of the turn
                out_i = lb[i] if side < 0 else rb[i]
                out_j = lb[j] if side < 0 else rb[j]
                k_i = (
                    out_i + (out_i - xy[i]) / max(np.linalg.norm(out_i - xy[i]), 1e-9) * _cr.BORDER
                )
                k_j = (
                    out_j + (out_j - xy[j]) / max(np.linalg.norm(out_j - xy[j]), 1e-9) * _cr.BORDER
                )
                color = (255, 255, 255) if i % 2 == 0 else (255, 0, 0)
                self.road_poly.append(([tuple(out_i), tuple(k_i), tuple(k_j), tuple(out_j)], color))
            self.track.append((0.0, float(beta[i]), float(xy[i, 0]), float(xy[i, 1])))
        return True


__all__ = [
    "CONFIG_FIELDS",
    "DEFAULT_SCALE",
    "MAX_ATTEMPTS",
    "OWN_FIELDS",
    "SEED_MAX",
    "CarRacing",
    "check_seed",
    "make_generator",
]
