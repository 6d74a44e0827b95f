"""``CarRacing``: Gymnasium's CarRacing whose track procgen_nb makes.

The track of an episode is the env seed ``reset(seed=s)`` gives (or ``options={"track_seed":
s}``; a seed drawn from the env's generator when neither is given): seeds split train and
test. Its tiles follow the track's widths as ``track_gen.export`` writes them (metres:
world units times ``scale``), and the lap starts on its start/finish line.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # pygame's banner on stdout

from gymnasium.envs.box2d import car_racing as _cr  # noqa: E402

from ..errors import ParamsError  # noqa: E402
from ..track_gen import export as _export  # noqa: E402
from ..track_gen.config import TrackGenConfig  # noqa: E402
from ..track_gen.pipeline import TrackGenerator  # noqa: E402

#: metres per world unit: a generator's unit square (about +-1.1) fills CarRacing's field
DEFAULT_SCALE = 200.0
#: attempts (``regenerate``) to find a valid track for a seed
MAX_ATTEMPTS = 32


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
        ParamsError: a seed whose track stays invalid after ``MAX_ATTEMPTS`` attempts, or a
            refused config field.
        GeneratorError: an unknown generator or refused generator_params.
    """
    half = _cr.TRACK_WIDTH / scale  # CarRacing's own half width, in world units
    width = {"left": half, "right": half, **dict(width or {})}
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
        width: ``WidthParams`` fields in world units (default: CarRacing's own half width
            of 40/6 on each side, constant).
        direction: ``"ccw"``, ``"cw"`` or ``"random"``.
        track_config: other ``TrackGenConfig`` fields (``validity``, ``z_profile``...).
        render_mode, verbose, lap_complete_percent, domain_randomize, continuous: as
            Gymnasium's CarRacing.

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
        if isinstance(scale, bool) or not isinstance(scale, int | float) or not scale > 0:
            raise ParamsError(f"CarRacing scale: expected metres per unit > 0, got {scale!r}")
        self._track_args = dict(
            generator=generator,
            generator_params=generator_params,
            num_points=num_points,
            scale=float(scale),
            width=width,
            direction=direction,
            config=dict(track_config or {}),
        )
        make_generator([0], **self._track_args)  # refuses bad arguments now, not at reset
        self.track_seed: int | None = None
        self.procgen_track: _export.Track | None = None
        self._next: tuple[int, _export.Track] | None = None  # handed over by the vector env

    def make_tracks(self, seeds: list[int]) -> list[_export.Track]:
        """The tracks of ``seeds`` (ints in [0, 2**31)), made in one generator call with
        this env's generator arguments (``CarRacingVector`` makes its envs' tracks so)."""
        return make_generator(seeds, **self._track_args)[1]

    def hand_track(self, seed: int, track: _export.Track) -> None:
        """Hands the env ``track``, the track of ``seed``: its next reset takes it when it
        asks for ``seed`` or for no seed of its own (once; a later reset makes its own)."""
        self._next = (seed, track)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Resets onto the track of ``options["track_seed"]``, else of ``seed``, else of a
        seed drawn from the env's generator."""
        opts = dict(options or {})
        track_seed = opts.pop("track_seed", None)
        if track_seed is None and seed is not None:
            track_seed = seed
        self._wanted_seed = None if track_seed is None else int(track_seed) % (1 << 31)
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


__all__ = ["DEFAULT_SCALE", "MAX_ATTEMPTS", "CarRacing", "make_generator"]
