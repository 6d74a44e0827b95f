"""``GateGenerator``: a gate generator's anchors -> order -> normalize -> finished gates.

Per call, on the device:

1. head: each env's base seed from its seed and the epoch;
2. the gate generator (an anchors Stage, or a ``GateGeneratorSpec`` through its adapter)
   writes ``anchors.xy`` at its stride and ``anchors.count``;
3. ``order.raw`` (nothing moves), ``order.ccw`` (``ops.angle_sort``) or
   ``order.random_pairs`` (a Fisher-Yates shuffle: each step swaps a random pair, stream
   ``order.random_pairs``); none after a legacy spec, which orders its own gates;
4. ``normalize.extent`` when the generator prefers it: each env's gates centred and scaled
   so the larger side of their bounding box spans ``[-scale, scale]``;
5. finish: the gates at the outputs' stride ``max_gates`` (NaN past the count) with
   position (z = 0 here; a ``Course`` sets it from the z profile), heading (from the
   previous gate to the next), size, count, and validity (count in ``min_gates..max_gates``,
   finite, consecutive gates, the last to the first included, ``min_spacing`` apart).

The first call runs eagerly (the warm-up that loads every kernel); later calls replay a
recording, except a HOST generator, which runs eagerly between replayed segments. A
steady call reads nothing back.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import types
from collections.abc import Mapping
from typing import Any

import numpy as np
import warp as wp

from ...dynamic import is_dynamic
from ...errors import GeneratorError, NotCapturableError, ParamsError
from ...launch import log_entry
from ...params import Params
from .. import ops
from .._param_buffers import checked_now
from .._pipeline_base import _Pipeline, _Step
from .._spec_stage import resolve_params
from ..exec import LaunchContext, StageBuilder, _context, capturing
from ..ops import _kernels as _ok
from ..plugin import CaptureClass, GateGeneratorSpec, Stage, registry
from . import _kernels as _k
from ._registry import lookup
from .config import GateGenConfig
from .legacy import LegacyGateStage, warn_bound
from .stage import GateLayout, check_capacity, is_gate_stage, resolve_ordering
from .stage import supported_orderings as _supported


def as_gate_stage(spec: Any) -> Stage:
    """Returns an anchors Stage instance for an anchors Stage class or instance, or the
    adapter of a ``GateGeneratorSpec`` (binding it: its ``DeprecationWarning``, once per name).

    Raises:
        GeneratorError: anything else.
    """
    if isinstance(spec, GateGeneratorSpec):
        warn_bound(spec)
        return LegacyGateStage(spec)
    if is_gate_stage(spec):
        return spec() if isinstance(spec, type) else spec
    raise GeneratorError(
        f"gate generator: expected an anchors Stage (phase='anchors') or a GateGeneratorSpec, "
        f"got {spec!r}"
    )


def _track_input(track: Any, num_envs: int) -> tuple[wp.array, int]:
    res = getattr(track, "result", track)
    xy, n = getattr(res, "xy", None), getattr(res, "num_points", None)
    if not isinstance(xy, wp.array) or not isinstance(n, int) or xy.shape != (num_envs * n,):
        raise GeneratorError(
            f"track: expected a TrackGenerator or TrackResult of {num_envs} envs, got {track!r}"
        )
    return xy, n


class _AnchorsBuilder(StageBuilder):
    """The ``StageBuilder`` of an anchors stage.

    ``b.raw`` is the stage's stride A, ``b.num_points`` the points per env of the centerline
    it reads (0 without one), ``b.config`` the resolved ``GateGenConfig`` and ``b.layout``
    the ``GateLayout`` its capacity was sized from.
    """

    def __init__(self, *, layout: GateLayout, **kw: Any):
        cfg = kw["config"]
        super().__init__(
            **{
                **kw,
                "config": types.SimpleNamespace(
                    num_envs=cfg.num_envs,
                    num_points=layout.num_points,
                    scale=cfg.scale,
                    device=cfg.device,
                ),
            }
        )
        self.config = cfg
        self.layout = layout


@dataclasses.dataclass
class GateResult:
    """The device arrays of the last call (the same arrays every call).

    Attributes:
        xy: ``[E*G]`` vec2 plan-view gates (G = ``max_gates``), NaN past each env's count.
        position: ``[E*G]`` vec3 (z from the course's z profile, 0 outside a course).
        heading: ``[E*G]`` float32 radians, the direction of travel through each gate.
        size: ``[E*G]`` float32 opening widths. count: ``[E]`` int32 gates per env.
        valid: ``[E]`` int32 (1 valid). valid_count: ``[1]`` valid envs (a live count).
        total: ``[1]`` int32 gates over all envs (a live count).
    """

    xy: wp.array
    position: wp.array
    heading: wp.array
    size: wp.array
    count: wp.array
    valid: wp.array
    valid_count: wp.array
    total: wp.array
    num_envs: int
    max_gates: int
    ctx: Any = dataclasses.field(repr=False, default=None)

    def numpy(self) -> dict[str, np.ndarray]:
        """Reads every array back: xy ``[E, G, 2]``, position ``[E, G, 3]``, heading and
        size ``[E, G]``, count and valid ``[E]``."""
        E, G = self.num_envs, self.max_gates
        rb = self.ctx.readback
        return {
            "xy": rb(self.xy).reshape(E, G, 2),
            "position": rb(self.position).reshape(E, G, 3),
            "heading": rb(self.heading).reshape(E, G),
            "size": rb(self.size).reshape(E, G),
            "count": rb(self.count),
            "valid": rb(self.valid),
        }

    def num_valid(self) -> int:
        """Reads the live count of valid envs back (one readback)."""
        return int(self.ctx.readback(self.valid_count)[0])

    def fingerprint(self) -> str:
        """Returns the sha256 of position, heading, size, count and valid, as hex."""
        h = hashlib.sha256()
        data = self.numpy()
        for key in ("position", "heading", "size", "count", "valid"):
            h.update(key.encode())
            h.update(np.ascontiguousarray(data[key]).tobytes())
        return h.hexdigest()


def resolve_gate_params(stage: Stage, config: GateGenConfig) -> Params | None:
    """Returns the stage's validated Params from ``config.generator_params`` (a
    ``GateGenConfig`` subclass without them is read with ``from_legacy``).

    Raises:
        GeneratorError: values the Params class refuses, or params for a generator without one.
    """
    return resolve_params(stage, config, base=GateGenConfig)


class GateGenerator(_Pipeline):
    """Generates ``num_envs`` gate layouts of at most ``max_gates`` gates per call.

    Args:
        config: a ``GateGenConfig`` (or a subclass carrying a legacy plugin's knobs).
        ctx: the launch context to emit through (a new one on ``config.device`` when None).
        generator: an anchors Stage or a ``GateGeneratorSpec`` to run instead of looking
            ``config.generator`` up in the registry.
        track: the ``TrackGenerator`` or ``TrackResult`` whose centerlines a generator that
            reads ``"xy"`` places its gates on (the same ``num_envs``).

    Attributes:
        ordering: the resolved ``gate_ordering``. stride: the anchors' stride A.
        min_count: the fewest gates the generator declares it writes.

    Raises:
        GeneratorError: an unknown generator, an unsupported ordering, a capacity outside
            ``min_gates..max_gates``, refused ``generator_params``, or a missing track
            (each a ``ValueError``).
    """

    _what = "gate generator"

    def __init__(
        self,
        config: GateGenConfig,
        ctx: LaunchContext | None = None,
        generator: Any = None,
        track: Any = None,
    ):
        if not isinstance(config, GateGenConfig):
            raise ParamsError(f"GateGenerator config: expected a GateGenConfig, got {config!r}")
        self.ctx = _context("GateGenerator ctx", ctx, config.device)
        spec = generator if generator is not None else lookup(registry, config.generator)
        self.spec = spec
        self.stage = as_gate_stage(spec)
        if track is not None:  # checked even when the generator does not read it
            _track_input(track, config.num_envs)
        self._track = track
        self._setup(config)

    # -- construction --------------------------------------------------------------------
    def _setup(self, config: GateGenConfig) -> None:
        stage = self.stage
        legacy = isinstance(stage, LegacyGateStage)
        supported = stage.orderings if legacy else _supported(stage)
        pref = None if legacy else (getattr(stage, "preferred", None) or {}).get("order")
        ordering = resolve_ordering(stage.name, supported, config.gate_ordering, pref)
        cfg = copy.copy(config)
        cfg.gate_ordering = ordering
        cfg.device = self.ctx.device
        params = resolve_gate_params(stage, cfg)
        cfg.generator_params = params
        self.config, self.params, self.ordering, self.supported = cfg, params, ordering, supported
        E, G = cfg.num_envs, cfg.max_gates
        center, n = None, 0
        if "xy" in tuple(getattr(stage, "reads", ())):
            if self._track is None:
                raise GeneratorError(
                    f"gate generator {stage.name!r} track: expected the TrackGenerator whose "
                    "centerlines it places gates on (it reads 'xy'), got None"
                )
            center, n = _track_input(self._track, E)
        layout = GateLayout(num_envs=E, scale=cfg.scale, max_gates=G, num_points=n)
        if legacy:
            stage.bind(cfg)
        a, k = check_capacity(stage.name, stage.capacity(params, layout), cfg.min_gates, G)
        stride = G if legacy else a
        self.layout, self.stride, self.min_count = layout, stride, k
        dev = self.ctx.device
        z32 = lambda n_, dt=wp.int32: wp.zeros(n_, dtype=dt, device=dev)  # noqa: E731
        nan = float("nan")
        self._env_seed = wp.array(np.array(cfg.env_seed_values(), dtype=np.int32), device=dev)
        self._epoch = wp.full(1, cfg.epoch, dtype=wp.int32, device=dev)
        self._attempt = z32(E)
        self._active = wp.full(E, 1, dtype=wp.int32, device=dev)
        self.seeds = z32(E)
        self.anchors = wp.full(E * stride, wp.vec2(nan, nan), dtype=wp.vec2, device=dev)
        self.anchor_count = z32(E)
        self.result = GateResult(
            xy=wp.full(E * G, wp.vec2(nan, nan), dtype=wp.vec2, device=dev),
            position=wp.full(E * G, wp.vec3(nan, nan, nan), dtype=wp.vec3, device=dev),
            heading=wp.full(E * G, nan, dtype=float, device=dev),
            size=wp.full(E * G, nan, dtype=float, device=dev),
            count=z32(E),
            valid=z32(E),
            valid_count=z32(1),
            total=z32(1),
            num_envs=E,
            max_gates=G,
            ctx=self.ctx,
        )
        self._dyn: dict[tuple[str, str], wp.array] = {}
        outputs = {"anchors.xy": lambda: self.anchors, "anchors.count": lambda: self.anchor_count}
        b = _AnchorsBuilder(
            layout=layout,
            stage=stage,
            config=cfg,
            raw=stride,
            seed=self.seeds,
            active=self._active,
            outputs=outputs,
            inputs={} if center is None else {"xy": center},
            param_buffer=self._param_buffer("generator", stage.Params, params, stage.name),
        )
        enqueue = stage.build(b, params)
        if not callable(enqueue):
            raise GeneratorError(
                f"{stage.name}.build: expected it to return enqueue(ctx), got {enqueue!r}"
            )
        self.builder, self._gen_enqueue = b, enqueue
        self._steps = [
            self._head(),
            _Step(f"generator:{stage.name}", stage.capture, enqueue),
        ]
        if not legacy:
            self._steps.append(self._order_step(ordering))
            if (getattr(stage, "preferred", None) or {}).get("normalize") == "extent":
                self._steps.append(self._normalize_step())
        self._steps.append(self._finish_step())
        self._plans: dict[str, list[Any]] = {}
        self._built()
        self._warm_up()

    def _head(self) -> _Step:
        E = self.config.num_envs
        args = [self._env_seed, self._epoch, self._attempt, self._active, self.seeds]

        def run(ctx: Any) -> None:
            ctx.launch(_ok._seeds_k, E, args)

        return _Step("head", CaptureClass.GRAPH, run)

    def _order_step(self, ordering: str) -> _Step:
        E, A = self.config.num_envs, self.stride
        xy, counts = self.anchors, self.anchor_count
        salt = self.builder.salt("order.random_pairs")

        def run(ctx: Any) -> None:
            if ordering == "ccw":
                ops.angle_sort(ctx, xy, counts, A)
            elif ordering == "random_pairs":
                ctx.launch(_k._random_pairs_k, E, [self.seeds, salt, xy, counts, A])

        return _Step(f"order.{ordering}", CaptureClass.GRAPH, run)

    def _normalize_step(self) -> _Step:
        E, A, scale = self.config.num_envs, self.stride, self.config.scale
        args = [self.anchors, self.anchor_count, A, scale]

        def run(ctx: Any) -> None:
            ctx.launch(_k._normalize_extent_k, E, args)

        return _Step("normalize.extent", CaptureClass.GRAPH, run)

    def _finish_step(self) -> _Step:
        cfg, res = self.config, self.result
        E = cfg.num_envs
        args = [self.anchors, self.anchor_count, self.stride, cfg.max_gates, cfg.min_gates]
        args += [cfg.min_spacing, cfg.gate_size, res.xy, res.position, res.heading, res.size]
        args += [res.count, res.valid]

        def run(ctx: Any) -> None:
            ctx.launch(_k._finish_k, E, args)
            ctx.launch(_ok._count_k, 1, [res.valid, E, res.valid_count])
            ctx.launch(_k._sum_k, 1, [res.count, E, res.total])

        return _Step("finish", CaptureClass.GRAPH, run)

    # -- running ------------------------------------------------------------------------------
    @property
    def step_names(self) -> list[str]:
        """The pipeline's stages in order (``head``, ``generator:<name>``, ``order.<o>``...)."""
        return [s.name for s in self._steps]

    def _run(self, mode: str, epoch: int | None = None) -> GateResult:
        if self.host_driven and capturing(self.ctx):
            raise NotCapturableError(
                f"gate generator {self.stage.name!r}: expected a capturable gate generator inside "
                "a caller's capture, got a HOST one (capturable=False); call generate() outside it"
            )
        return super()._run(mode, epoch)

    def generate(self, epoch: int | None = None) -> GateResult:
        """Generates every env's gates (for ``epoch`` when given); returns the device arrays.

        Raises:
            ParamsError: an epoch that ``GateGenConfig`` refuses (not an integer in
                [0, 2**31 - 1]).
        """
        return self._generate(epoch)

    def update(self, generator_params: Mapping[str, Any]) -> bool:
        """Changes the generator's Params fields: a dynamic field is written to its device
        buffer (the next call replays the same recording), a static one rebuilds.

        Returns:
            True when the pipeline was rebuilt.

        Raises:
            GeneratorError: values the Params class refuses, or a generator without Params.
            ParamsError: ``generator_params`` that is not a mapping of fields.
        """
        name = self.stage.name
        if not isinstance(generator_params, Mapping):
            raise ParamsError(
                f"generator_params of {name!r}: expected a dict of fields, got {generator_params!r}"
            )
        if self.params is None:
            raise GeneratorError(
                f"generator_params of {name!r}: expected none, got {dict(generator_params)!r}"
            )
        given = dict(generator_params)  # a node's dynamic numbers: filled as expressions
        try:
            new = self.params.replace(**checked_now(type(self.params), given))
        except ParamsError as exc:
            raise GeneratorError(f"generator_params of {name!r}: {exc}") from exc
        dynamic = set(type(new).dynamic_fields())
        if not set(generator_params) <= dynamic:
            cfg = copy.copy(self.config)
            cfg.generator_params = new
            self._rebuild(cfg)  # a refused rebuild leaves the generator as it was
            return True
        for key, value in given.items():
            self._fill_dynamic("generator", type(new), key, value)
        self.params = new
        self.config.generator_params = new
        moved = {k: v for k, v in given.items() if is_dynamic(v)}
        if moved:  # a graph replay moves the fields again: Python's copy follows
            log_entry(("sync", lambda *vals: self._follow(list(moved), vals), list(moved.values())))
        return False

    def _follow(self, names: list[str], values: tuple) -> None:
        """Sets the Params copy to the values a graph replay wrote to their buffers."""
        self.params = self.params.replace(**dict(zip(names, values, strict=True)))
        self.config.generator_params = self.params

    def enqueue(self, ctx: LaunchContext) -> None:
        """Emits one whole call through ``ctx`` (for recording into a caller's graph).

        Raises:
            NotCapturableError: a HOST generator and ``ctx`` is recording.
        """
        self._emit(ctx)


__all__ = ["GateGenerator", "GateResult", "as_gate_stage", "resolve_gate_params"]
