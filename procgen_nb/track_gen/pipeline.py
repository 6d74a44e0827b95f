"""``TrackGenerator``: generator -> resample -> post stages -> validity, recorded once.

The pipeline, per call:

1. head: which envs are active (all for ``generate``, the invalid ones or a given mask for
   ``regenerate``) and their base seeds, on the device;
2. the generator (a Stage, or a GeneratorSpec through its adapter) writes a raw loop;
3. resample to ``num_points`` by arc length (active envs only), attributes with it;
4. post stages (the z profile) write per-point attributes;
5. the validity stage decides ``valid`` on the device (closed, simple, turning number
   +-1, minimum turn radius, track-width clearance) and counts the valid envs.

The first call runs eagerly (the warm-up that loads every kernel); later calls replay a
recording (Warp graph capture, on the CPU too), except a HOST generator, which runs
eagerly each call between two replayed segments. A steady call reads nothing back.

On the CPU a large call is split across ``PROCGEN_NB_THREADS`` worker threads (default:
the cores available), each replaying its own recording over a share of the envs in place
(``_threads``); the bytes are those of one thread. The step builders are in ``_steps``,
``update()`` in ``_update``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np
import warp as wp

from ..errors import GeneratorError, NotCapturableError, ParamsError
from ..launch import logging_open, unlogged
from . import _threads, _update, _widths_steps, ops
from ._checks import mask_values
from ._node import track_node
from ._result import REASONS, TrackResult
from ._spec_stage import (  # noqa: F401  (the gates, the kit and the tests import these here)
    _check_legacy_stream,
    _legacy_lock,
    _SpecStage,
    as_stage,
    resolve_params,
)
from ._steps import _Step, _StepBuilder
from ._threads import MIN_ENVS_PER_THREAD, MIN_POINTS_PER_THREAD, threads_wanted
from .config import TrackGenConfig
from .exec import LaunchContext, _context, _GraphCalls, capturing, check_eager_cpu
from .ops import _kernels as _k
from .plugin import CaptureClass, registry


class TrackGenerator(_GraphCalls, _StepBuilder):
    """Generates ``num_envs`` closed centerlines of ``num_points`` points per call.

    Args:
        config: a ``TrackGenConfig`` (or a subclass carrying a legacy plugin's knobs).
        ctx: the launch context to emit through: any ``procgen_nb.LaunchContext`` (the one
            class of both doors, ``pg.default_context()`` included); a new one on
            ``config.device`` when None.
        generator: a Stage or GeneratorSpec to run instead of looking ``config.generator``
            up in the registry (the conformance kit checks unregistered generators this way).
        eager_cpu: True runs every CPU call eagerly, as the 0.1 interface does (each call launches
            every kernel again); False records on the CPU and replays (measured faster, see
            docs/track_gen.md); None keeps ``ctx``'s flag (False for a new context). It is
            the launch context's flag (``self.eager_cpu`` forwards to ``ctx.eager_cpu``), so
            every generator sharing the context follows it.

    Raises:
        GeneratorError: an unknown generator or refused ``generator_params``.
        ParamsError: a refused config field.
    """

    def __init__(
        self,
        config: TrackGenConfig,
        ctx: LaunchContext | None = None,
        generator: Any = None,
        eager_cpu: bool | None = None,
    ):
        if not isinstance(config, TrackGenConfig):
            raise ParamsError(f"TrackGenerator config: expected a TrackGenConfig, got {config!r}")
        self.ctx = _context("TrackGenerator ctx", ctx, config.device)
        if eager_cpu is not None:
            self.eager_cpu = eager_cpu
        self._override = generator
        self._thread_cap: int | None = None  # parts: 1 (a part never splits)
        self._parent: TrackGenerator | None = None
        self._setup(config)

    # -- construction --------------------------------------------------------------------
    def _setup(self, config: TrackGenConfig) -> None:
        spec = self._override
        if spec is None:
            spec = registry.get("generator", config.generator)
        stage = as_stage(spec)
        params = resolve_params(stage, config)
        cfg = copy.copy(config)
        cfg.generator_params = params
        cfg.device = self.ctx.device
        self.config, self.spec, self.stage, self.params = cfg, spec, stage, params
        E, N = cfg.num_envs, cfg.num_points
        raw = int(stage.raw_points(cfg, params))
        if raw < 3:
            raise GeneratorError(f"{stage.name} raw_points: expected an integer >= 3, got {raw}")
        if E * (max(raw, N) + 1) > (1 << 31) - 1:  # a kernel's index e * (n + 1) is an int32
            raise ParamsError(
                f"TrackGenerator num_envs * (points + 1): expected at most 2**31 - 1 (int32 "
                f"indices), got {E} envs of {max(raw, N)} points ({stage.name}: raw {raw}, "
                f"num_points {N})"
            )
        self.raw = raw
        dev = self.ctx.device
        self._raw_xy = wp.zeros(E * raw, dtype=wp.vec2, device=dev)
        self._gen_valid = wp.full(E, 1, dtype=wp.int32, device=dev)
        self._arc = ops.ArcScratch.alloc(dev, E, raw, N)
        self._grid = ops.GridScratch.alloc(dev, E, N)
        self._raw_attrs: dict[str, wp.array] = {}
        self._attrs: dict[str, wp.array] = {}
        share = _threads.shared_state(self) if self._parent is not None else None
        if share is None:
            z32 = lambda n: wp.zeros(n, dtype=wp.int32, device=dev)  # noqa: E731
            seeds = np.array(cfg.env_seed_values(), dtype=np.int32)
            share = {
                "_env_seed": wp.array(seeds, device=dev),
                "_epoch": wp.full(1, cfg.epoch, dtype=wp.int32, device=dev),
                "_mode": z32(1),
                "_user_mask": z32(E),
                "_attempt": z32(E),
                "_active": wp.full(E, 1, dtype=wp.int32, device=dev),
                "seeds": z32(E),
                "_dyn": {},
                "xy": wp.zeros(E * N, dtype=wp.vec2, device=dev),
                **{k: z32(E) for k in ("valid", "reason", "crossings", "turning")},
            }
        for name in ("_env_seed", "_epoch", "_mode", "_user_mask", "_attempt", "_active"):
            setattr(self, name, share[name])
        self.seeds = share["seeds"]
        self._dyn: dict[tuple[str, str], wp.array] = share["_dyn"]
        self.result = TrackResult(
            xy=share["xy"],
            valid=share["valid"],
            attributes=self._attrs,
            reason=share["reason"],
            crossings=share["crossings"],
            turning=share["turning"],
            valid_count=wp.zeros(1, dtype=wp.int32, device=dev),
            num_envs=E,
            num_points=N,
            ctx=self.ctx,
        )
        self._steps: list[_Step] = []
        self._counts_written: wp.array | None = None
        self._build_generator(stage, params, cfg)
        self._build_resample(stage)
        self._post_stages = self._build_post(cfg)
        _widths_steps.build_steps(self, cfg)  # direction, widths (nothing by default)
        self._build_validity(cfg.validity)
        _widths_steps.build_checks(self, cfg)  # boundary crossings (only with widths)
        self._plans: dict[str, list[Any]] = {}
        self._built()
        if self._parent is None:  # the warm-up, once: a part's share is already written
            with unlogged():  # the warm-up is no part of a graph node's recording
                self._run_eager("generate")
        self._parts = _threads.build_parts(self, cfg)

    # -- running ------------------------------------------------------------------------------
    def _head(self, mode: str) -> _Step:
        E = self.config.num_envs

        def run(ctx: Any) -> None:
            if mode == "generate":
                ctx.launch(_k._all_active_k, E, [self._active, self._attempt])
            else:
                ctx.launch(
                    _k._select_k,
                    E,
                    [self.result.valid, self._user_mask, self._mode, self._active, self._attempt],
                )
            ctx.launch(
                _k._seeds_k,
                E,
                [self._env_seed, self._epoch, self._attempt, self._active, self.seeds],
            )

        return _Step(f"head:{mode}", CaptureClass.GRAPH, run)

    def _run_step(self, step: _Step, ctx: Any) -> None:
        if step.capture is CaptureClass.HOST:
            step.run(ctx)
        else:
            with ctx.strict():
                step.run(ctx)

    def _run_eager(self, mode: str) -> None:
        for step in [self._head(mode), *self._steps]:
            self._run_step(step, self.ctx)

    def _plan(self, mode: str) -> list[Any]:
        plan = self._plans.get(mode)
        if plan is not None:
            return plan
        plan = []
        group: list[_Step] = []

        def close() -> None:
            if group:
                steps = list(group)
                plan.append(self.ctx.record(lambda: [self._run_step(s, self.ctx) for s in steps]))
                group.clear()

        for step in [self._head(mode), *self._steps]:
            if step.capture is CaptureClass.HOST:
                close()
                plan.append(step)
            else:
                group.append(step)
        close()
        self._plans[mode] = plan
        return plan

    def _run(self, mode: str, epoch: int | None = None) -> TrackResult:
        logged = logging_open()  # a graph node is cooking: the call joins its recording
        if self._parts and not (self.ctx._eager() or capturing(self.ctx) or logged):
            self._called(epoch)
            return _threads.run_parts(self, mode)  # the parts replay their shares
        for item in self._plan(mode):
            if isinstance(item, _Step):
                self._host_step(item.name)
                self._run_step(item, self.ctx)
            else:
                item.replay()
        self._called(epoch)
        return self.result

    @property
    def recordings(self) -> dict[str, tuple[Any, ...]]:
        """The recorded plan of each call kind made so far (``"generate"``, ``"regenerate"``):
        its ``Recording`` objects, and the HOST steps that run eagerly between them. The same
        objects call after call, until a static change rebuilds the pipeline. A call split
        across worker threads lists its parts' recordings (after this generator's own, made
        when it runs unsplit: ``eager_cpu``, a caller's capture)."""
        gens = [self, *self._parts]
        modes = dict.fromkeys(m for g in gens for m in g._plans)
        return {m: tuple(item for g in gens for item in g._plans.get(m, ())) for m in modes}

    @property
    def eager_cpu(self) -> bool:
        """True when CPU calls run eagerly (the 0.1 interface's behaviour) instead of replaying their
        recordings; settable, and applied to recordings already made. It is ``ctx.eager_cpu``:
        every generator sharing the launch context follows it. A split call (worker threads)
        does not split while it is True."""
        return self.ctx.eager_cpu

    @eager_cpu.setter
    def eager_cpu(self, value: bool) -> None:
        self.ctx.eager_cpu = check_eager_cpu("TrackGenerator eager_cpu", value)

    @property
    def z_profile_params(self) -> Any:
        """The z profile stage's resolved Params instance (None without a z profile)."""
        return self._post_stages[0][1] if self._post_stages else None

    @property
    def host_driven(self) -> bool:
        """True when a stage is HOST (it runs eagerly each call)."""
        return any(s.capture is CaptureClass.HOST for s in self._steps)

    # -- display (a one-line repr; a table and a picture of the last call in a notebook) -
    def __repr__(self) -> str:
        from .._display import line

        cfg = self.config
        shape = f"{cfg.num_envs} envs x {cfg.num_points} points"
        return line(
            "TrackGenerator",
            repr(self.stage.name),
            shape,
            seed=cfg.seed,
            device=str(self.ctx.device),
        )

    def _repr_html_(self) -> str:
        from .._display import table, tracks_png

        cfg, res = self.config, self.result
        rows = [("generator", self.stage.name), ("envs", cfg.num_envs), ("points", cfg.num_points)]
        rows += [("seed", cfg.seed), ("epoch", cfg.epoch), ("capture", self.stage.capture.name)]
        if self.params is not None:
            rows += [(f"params.{k}", v) for k, v in self.params.to_dict().items()]
        rows += [
            ("last call", f"{res.num_valid()} of {cfg.num_envs} valid"),
            ("device", self.ctx.device),
        ]
        return table(
            f"TrackGenerator {self.stage.name!r}", rows, tracks_png(res.xy, res.valid, cfg.num_envs)
        )

    def generate(self, epoch: int | None = None) -> TrackResult:
        """Generates every env (for ``epoch`` when given) and returns the device arrays.

        Raises:
            ParamsError: an epoch that ``TrackGenConfig`` refuses (not an integer in
                [0, 2**31 - 1]).
        """
        if epoch is not None:
            self._set_epoch(epoch)
        return self._run("generate", epoch)

    def regenerate(self, mask: Any = None) -> TrackResult:
        """Regenerates the envs ``mask`` names (the invalid ones when None) with new seeds.

        Args:
            mask: None, or ``[E]`` ints/bools (a NumPy array, a list or an int32 device array):
                non-zero envs are regenerated. Every other env keeps its bytes. Or a band
                over metrics (``curriculum.MetricBand``): its rounds of mask and regenerate.

        Raises:
            ParamsError: a mask of the wrong length, or with a value that is not an integer
                or a bool (0.5, NaN).
        """
        if hasattr(mask, "regenerate_with"):  # a curriculum.MetricBand: it masks, we regenerate
            return mask.regenerate_with(self)
        E = self.config.num_envs
        if isinstance(mask, wp.array) and (mask.shape != (E,) or mask.dtype != wp.int32):
            raise ParamsError(
                f"regenerate mask: expected an [{E}] int32 array, got {mask.shape} {mask.dtype}"
            )
        if mask is not None and not isinstance(mask, wp.array):
            mask = mask_values("regenerate mask", mask, E)
        if mask is None:
            self.ctx.fill(self._mode, 0)
        else:
            m = mask if isinstance(mask, wp.array) else self.ctx.upload(mask, wp.int32)
            self.ctx.copy(self._user_mask, m)
            self.ctx.fill(self._mode, 1)
        return self._run("regenerate")

    def enqueue(self, ctx: LaunchContext, mode: str = "generate") -> None:
        """Emits one whole call through ``ctx`` (for recording into a caller's graph).

        Raises:
            ParamsError: a mode other than ``"generate"`` and ``"regenerate"``.
            NotCapturableError: the pipeline has a HOST stage and ``ctx`` is recording.
            LegacyPluginStreamError: a legacy plugin recorded on another stream.
        """
        _context("enqueue ctx", ctx, None, required=True)
        if mode not in ("generate", "regenerate"):
            raise ParamsError(f"enqueue mode: expected 'generate' or 'regenerate', got {mode!r}")
        if ctx.recording and self.host_driven:
            raise NotCapturableError(
                f"generator {self.stage.name!r}: expected a capturable generator inside a "
                "caller's recording, got a HOST one (capturable=False); call generate() instead"
            )
        for step in [self._head(mode), *self._steps]:
            self._run_step(step, ctx)

    def node(self, name: str | None = None) -> Any:
        """Returns this generator as a graph node: its Params fields and ``epoch`` are the
        node's parameters (dynamic ones replay), and it answers ``result.columns()``.

        Args:
            name: the node's type name (``track_<generator>`` when None).

        Raises:
            GeneratorError: a Params class with a field named ``epoch``.
        """
        return track_node(self, name)

    def update(
        self,
        generator_params: Mapping[str, Any] | None = None,
        validity: Mapping[str, Any] | None = None,
        z_profile: Mapping[str, Any] | None = None,
        **other: Any,
    ) -> bool:
        """Changes parameters; dynamic fields are written to their device buffers (no new
        recording), a static change rebuilds the pipeline.

        Returns:
            True when the pipeline was rebuilt.

        Raises:
            GeneratorError: values the Params classes refuse.
            ParamsError: an argument that is not a mapping of fields; any other keyword
                (``num_envs`` and the other config fields need a new ``TrackGenerator``).
        """
        if other:
            raise ParamsError(
                "TrackGenerator.update: expected generator_params, validity or z_profile "
                f"(other config fields need a new TrackGenerator), got {sorted(other)}"
            )
        return _update.update(self, generator_params, validity, z_profile)


__all__ = [
    "MIN_ENVS_PER_THREAD",
    "MIN_POINTS_PER_THREAD",
    "REASONS",
    "TrackGenerator",
    "TrackResult",
    "as_stage",
    "resolve_params",
    "threads_wanted",
]
