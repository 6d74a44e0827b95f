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
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import warp as wp

from ..errors import GeneratorError, NotCapturableError, ParamsError
from ..params import Params
from . import ops
from ._checks import check_epoch, mask_values
from ._param_buffers import param_dtype, param_value
from ._result import REASONS, TrackResult
from ._spec_stage import (  # noqa: F401  (the gates, the kit and the tests import these here)
    _check_legacy_stream,
    _legacy_lock,
    _SpecStage,
    as_stage,
    resolve_params,
)
from .config import TrackGenConfig, ValidityParams
from .exec import LaunchContext, StageBuilder, _context
from .ops import _kernels as _k
from .plugin import CaptureClass, Stage, registry

#: the fewest envs per worker thread of a split call (below it a split does not pay)
MIN_ENVS_PER_THREAD = 256
_pool: ThreadPoolExecutor | None = None


def threads_wanted() -> int:
    """The worker threads of a CPU call: ``PROCGEN_NB_THREADS`` (1, no split, when unset).

    Warp runs a CPU launch on one thread and releases the GIL while it runs, so a call
    whose envs are split across T threads (each replaying its own recording on its share)
    can use T cores; the bytes are those of one thread.

    Raises:
        ParamsError: a value that is not an integer >= 1.
    """
    raw = os.environ.get("PROCGEN_NB_THREADS", "").strip() or "1"
    try:
        t = int(raw)
    except ValueError:
        t = 0
    if t < 1:
        raise ParamsError(f"PROCGEN_NB_THREADS: expected an integer >= 1, got {raw!r}")
    return t


def _in_threads(parts: list[Any], fn: Callable[[Any, int], None], mode: str) -> None:
    """Runs ``fn(part, i)`` for every part, the first in this thread, the others in the
    shared pool (each in a copy of this thread's context, so traffic collectors count it).
    A part's first call of ``mode`` records, and a Warp capture is global to the device:
    until every part has recorded ``mode`` the parts run one after the other."""
    if not all(mode in p._plans for p in parts):
        for i, p in enumerate(parts):
            fn(p, i)
        return
    global _pool
    if _pool is None or _pool._max_workers < len(parts) - 1:  # noqa: SLF001
        _pool = ThreadPoolExecutor(max_workers=max(len(parts) - 1, os.cpu_count() or 1))
    futs = [
        _pool.submit(contextvars.copy_context().run, fn, p, i) for i, p in enumerate(parts) if i
    ]
    fn(parts[0], 0)
    for f in futs:
        f.result()


@dataclasses.dataclass
class _Step:
    name: str
    capture: CaptureClass
    run: Callable[[Any], None]


class TrackGenerator:
    """Generates ``num_envs`` closed centerlines of ``num_points`` points per call.

    Args:
        config: a ``TrackGenConfig`` (or a subclass carrying a legacy plugin's knobs).
        ctx: the launch context to emit through (a new one on ``config.device`` when None).
        generator: a Stage or GeneratorSpec to run instead of looking ``config.generator``
            up in the registry (the conformance kit checks unregistered generators this way).

    Raises:
        GeneratorError: an unknown generator or refused ``generator_params``.
        ParamsError: a refused config field.
    """

    def __init__(
        self, config: TrackGenConfig, ctx: LaunchContext | None = None, generator: Any = None
    ):
        if not isinstance(config, TrackGenConfig):
            raise ParamsError(f"TrackGenerator config: expected a TrackGenConfig, got {config!r}")
        self.ctx = _context("TrackGenerator ctx", ctx, config.device)
        self._override = generator
        self._threads: int | None = None
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
        self.raw = raw
        dev = self.ctx.device
        z32 = lambda n, dt=wp.int32: wp.zeros(n, dtype=dt, device=dev)  # noqa: E731
        self._env_seed = wp.array(np.array(cfg.env_seed_values(), dtype=np.int32), device=dev)
        self._epoch = wp.full(1, cfg.epoch, dtype=wp.int32, device=dev)
        self._mode = z32(1)
        self._user_mask = z32(E)
        self._attempt = z32(E)
        self._active = wp.full(E, 1, dtype=wp.int32, device=dev)
        self.seeds = z32(E)
        self._raw_xy = wp.zeros(E * raw, dtype=wp.vec2, device=dev)
        self._gen_valid = wp.full(E, 1, dtype=wp.int32, device=dev)
        self._arc = ops.ArcScratch.alloc(dev, E, raw, N)
        self._grid = ops.GridScratch.alloc(dev, E, N)
        xy = wp.zeros(E * N, dtype=wp.vec2, device=dev)
        self._raw_attrs: dict[str, wp.array] = {}
        self._attrs: dict[str, wp.array] = {}
        self._dyn: dict[tuple[str, str], wp.array] = {}
        self.result = TrackResult(
            xy=xy,
            valid=z32(E),
            attributes=self._attrs,
            reason=z32(E),
            crossings=z32(E),
            turning=z32(E),
            valid_count=z32(1),
            num_envs=E,
            num_points=N,
            ctx=self.ctx,
        )
        self._steps: list[_Step] = []
        self._counts_written: wp.array | None = None
        self._build_generator(stage, params, cfg)
        self._build_resample(stage)
        self._post_stages = self._build_post(cfg)
        self._build_validity(cfg.validity)
        self._plans: dict[str, list[Any]] = {}
        self._run_eager("generate")
        self._parts = self._build_parts(cfg)

    def _build_parts(self, cfg: TrackGenConfig) -> list[TrackGenerator]:
        """One TrackGenerator per worker thread over a contiguous share of the envs (with
        those envs' seeds), when ``threads_wanted()`` > 1 on the CPU; none otherwise."""
        E = cfg.num_envs
        T = min(self._threads or threads_wanted(), E // MIN_ENVS_PER_THREAD)
        if T < 2 or self.ctx.device != "cpu" or self.host_driven or self._override is not None:
            return []
        seeds = cfg.env_seed_values()
        cut = [E * i // T for i in range(T + 1)]
        parts = []
        for a, b in zip(cut, cut[1:], strict=False):
            c = copy.copy(cfg)
            c.num_envs, c.env_seeds = b - a, seeds[a:b]
            part = TrackGenerator.__new__(TrackGenerator)
            part.ctx, part._override, part._threads = LaunchContext("cpu"), None, 1
            part._setup(c)
            part._offset = a
            parts.append(part)
        return parts

    def _gather(self) -> TrackResult:
        """Copies every part's result into this generator's arrays and counts the valid."""
        res, N, ctx = self.result, self.config.num_points, self.ctx
        for p in self._parts:
            a, n, r = p._offset, p.config.num_envs, p.result
            for name in ("valid", "reason", "crossings", "turning"):
                ctx.copy(getattr(res, name), getattr(r, name), a, 0, n)
            ctx.copy(self.seeds, p.seeds, a, 0, n)
            ctx.copy(res.xy, r.xy, a * N, 0, n * N)
            for name, arr in self._attrs.items():
                ctx.copy(arr, p._attrs[name], a * N, 0, n * N)
        ctx.launch(_k._count_k, 1, [res.valid, self.config.num_envs, res.valid_count])
        return res

    def _param_buffer(self, key: str, pcls: type[Params] | None, values: Params | None):
        def get(name: str) -> wp.array:
            if pcls is None or name not in pcls.dynamic_fields():
                dyn = [] if pcls is None else pcls.dynamic_fields()
                raise GeneratorError(f"{key} b.param: expected a dynamic field {dyn}, got {name!r}")
            buf = self._dyn.get((key, name))
            if buf is None:
                buf = self._dyn[(key, name)] = wp.array(
                    [param_value(pcls, name, getattr(values, name))],
                    dtype=param_dtype(pcls, name),
                    device=self.ctx.device,
                )
            return buf

        return get

    def _build_generator(self, stage: Stage, params: Params | None, cfg: TrackGenConfig) -> None:
        E, raw = cfg.num_envs, self.raw
        attrs = dict(getattr(stage, "attributes", {}) or {})

        def attr_out(name: str) -> Callable[[], wp.array]:
            def make() -> wp.array:
                if name not in self._raw_attrs:
                    self._raw_attrs[name] = wp.zeros(E * raw, dtype=float, device=self.ctx.device)
                    self._attrs[name] = wp.zeros(
                        E * cfg.num_points, dtype=float, device=self.ctx.device
                    )
                return self._raw_attrs[name]

            return make

        outputs: dict[str, Callable[[], wp.array]] = {
            "xy": lambda: self._raw_xy,
            "valid": lambda: self._gen_valid,
            "count": lambda: self._raw_count(),
        }
        for name in attrs:
            outputs[name] = attr_out(name)
        b = StageBuilder(
            stage=stage,
            config=cfg,
            raw=raw,
            seed=self.seeds,
            active=self._active,
            outputs=outputs,
            inputs={},
            param_buffer=self._param_buffer("generator", stage.Params, params),
        )
        enqueue = stage.build(b, params)
        if not callable(enqueue):
            raise GeneratorError(
                f"{stage.name}.build: expected it to return enqueue(ctx), got {enqueue!r}"
            )
        self.builder = b
        self._gen_enqueue = enqueue
        gen_valid = self._gen_valid

        def run(ctx: Any) -> None:
            ctx.fill(gen_valid, 1)
            enqueue(ctx)

        self._steps.append(_Step(f"generator:{stage.name}", stage.capture, run))

    def _raw_count(self) -> wp.array:
        if self._counts_written is None:
            self._counts_written = wp.full(
                self.config.num_envs, self.raw, dtype=wp.int32, device=self.ctx.device
            )
        return self._counts_written

    def _build_resample(self, stage: Stage) -> None:
        E, N, raw = self.config.num_envs, self.config.num_points, self.raw
        res, arc, active = self.result, self._arc, self._active
        counts = self._counts_written if self._counts_written is not None else arc.counts
        direct = "uniform" in stage.provides and raw == N and counts is arc.counts
        raw_attrs = dict(self._raw_attrs)

        def run(ctx: Any) -> None:
            if direct:
                ctx.launch(_k._masked_copy_k, E * N, [self._raw_xy, res.xy, N, active])
                for name, src in raw_attrs.items():
                    ctx.launch(_k._masked_copy_f_k, E * N, [src, self._attrs[name], N, active])
                return
            ops.arc_resample(ctx, self._raw_xy, res.xy, arc, E, raw, N, counts, active)
            for name, src in raw_attrs.items():
                ops.arc_resample_attribute(
                    ctx, src, self._attrs[name], arc, E, raw, N, counts, active
                )

        self._steps.append(_Step("resample", CaptureClass.GRAPH, run))

    def _build_post(self, cfg: TrackGenConfig) -> list[Any]:
        zp = cfg.z_profile
        if zp is None or zp is False:
            return []
        stage = as_stage(registry.get("stage", "z_profile"))
        pcls = stage.Params
        try:
            params = pcls.resolve(None if zp is True else zp) if pcls is not None else None
        except ParamsError as exc:
            raise GeneratorError(f"z_profile: {exc}") from exc
        E, N = cfg.num_envs, cfg.num_points

        def attr_out(name: str) -> Callable[[], wp.array]:
            def make() -> wp.array:
                if name not in self._attrs:
                    self._attrs[name] = wp.zeros(E * N, dtype=float, device=self.ctx.device)
                return self._attrs[name]

            return make

        b = StageBuilder(
            stage=stage,
            config=cfg,
            raw=N,
            seed=self.seeds,
            active=self._active,
            outputs={n: attr_out(n) for n in stage.attributes},
            inputs={"xy": self.result.xy, "valid": self.result.valid, **self._attrs},
            param_buffer=self._param_buffer("z_profile", pcls, params),
        )
        enqueue = stage.build(b, params)
        self._steps.append(_Step(f"stage:{stage.name}", stage.capture, enqueue))
        return [(stage, params)]

    def _build_validity(self, vp: ValidityParams) -> None:
        E, N = self.config.num_envs, self.config.num_points
        get = self._param_buffer("validity", ValidityParams, vp)
        min_r, width = get("min_turn_radius"), get("track_width")
        res, grid = self.result, self._grid

        def run(ctx: Any) -> None:
            ops.check_tracks(
                ctx,
                res.xy,
                E,
                N,
                grid,
                min_r,
                width,
                res.valid,
                res.reason,
                res.crossings,
                res.turning,
                self._active,
                self._gen_valid,
            )
            ctx.launch(_k._count_k, 1, [res.valid, E, res.valid_count])

        self._steps.append(_Step("validity", CaptureClass.GRAPH, run))

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

    def _run(self, mode: str) -> TrackResult:
        for item in self._plan(mode):
            if isinstance(item, _Step):
                self._run_step(item, self.ctx)
            else:
                item.replay()
        return self.result

    @property
    def recordings(self) -> dict[str, tuple[Any, ...]]:
        """The recorded plan of each call kind made so far (``"generate"``, ``"regenerate"``):
        its ``Recording`` objects, and the HOST steps that run eagerly between them. The same
        objects call after call, until a static change rebuilds the pipeline."""
        return {mode: tuple(plan) for mode, plan in self._plans.items()}

    @property
    def host_driven(self) -> bool:
        """True when a stage is HOST (it runs eagerly each call)."""
        return any(s.capture is CaptureClass.HOST for s in self._steps)

    def generate(self, epoch: int | None = None) -> TrackResult:
        """Generates every env (for ``epoch`` when given) and returns the device arrays.

        Raises:
            ParamsError: an epoch that ``TrackGenConfig`` refuses (not an integer in
                [0, 2**31 - 1]).
        """
        if epoch is not None:
            epoch = check_epoch("generate epoch", epoch)
            if epoch != self.config.epoch:
                self.config.epoch = epoch
                self.ctx.fill(self._epoch, epoch)
        if self._parts:
            _in_threads(self._parts, lambda p, i: p.generate(epoch), "generate")
            return self._gather()
        return self._run("generate")

    def regenerate(self, mask: Any = None) -> TrackResult:
        """Regenerates the envs ``mask`` names (the invalid ones when None) with new seeds.

        Args:
            mask: None, or ``[E]`` ints/bools (a NumPy array, a list or an int32 device array):
                non-zero envs are regenerated. Every other env keeps its bytes.

        Raises:
            ParamsError: a mask of the wrong length, or with a value that is not an integer
                or a bool (0.5, NaN).
        """
        E = self.config.num_envs
        if isinstance(mask, wp.array) and (mask.shape != (E,) or mask.dtype != wp.int32):
            raise ParamsError(
                f"regenerate mask: expected an [{E}] int32 array, got {mask.shape} {mask.dtype}"
            )
        if mask is not None and not isinstance(mask, wp.array):
            mask = mask_values("regenerate mask", mask, E)
        if self._parts:

            def part(p: TrackGenerator, i: int) -> None:
                a, n = p._offset, p.config.num_envs
                p.regenerate(None if mask is None else mask[a : a + n])

            _in_threads(self._parts, part, "regenerate")
            return self._gather()
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

    def update(
        self,
        generator_params: Mapping[str, Any] | None = None,
        validity: Mapping[str, Any] | None = None,
        z_profile: Mapping[str, Any] | None = None,
    ) -> bool:
        """Changes parameters; dynamic fields are written to their device buffers (no new
        recording), a static change rebuilds the pipeline.

        Returns:
            True when the pipeline was rebuilt.

        Raises:
            GeneratorError: values the Params classes refuse.
            ParamsError: an argument that is not a mapping of fields.
        """
        for label, values in (
            (f"generator_params of {self.stage.name!r}", generator_params),
            ("update validity", validity),
            ("update z_profile", z_profile),
        ):
            if values is not None and not isinstance(values, Mapping):
                raise ParamsError(f"{label}: expected a dict of fields, got {values!r}")
        cfg = copy.copy(self.config)
        rebuild = False
        writes: list[tuple[str, str, Any, type[Params]]] = []
        if generator_params:
            if self.params is None:
                raise GeneratorError(
                    f"generator_params of {self.stage.name!r}: expected none, got "
                    f"{dict(generator_params)!r}"
                )
            try:
                new = self.params.replace(**generator_params)
            except ParamsError as exc:
                raise GeneratorError(f"generator_params of {self.stage.name!r}: {exc}") from exc
            dyn = set(type(new).dynamic_fields())
            for k in generator_params:
                if k not in dyn:
                    rebuild = True
                writes.append(("generator", k, getattr(new, k), type(new)))
            cfg.generator_params = new
        if validity:
            new_v = cfg.validity.replace(**validity)
            for k in validity:
                writes.append(("validity", k, getattr(new_v, k), ValidityParams))
            cfg.validity = new_v
        if z_profile:
            if not self._post_stages:
                raise GeneratorError(
                    "z_profile: expected a generator built with z_profile, got none"
                )
            stage, zparams = self._post_stages[0]
            try:
                new_z = zparams.replace(**z_profile)
            except ParamsError as exc:
                raise GeneratorError(f"z_profile: {exc}") from exc
            for k in z_profile:
                if k not in type(new_z).dynamic_fields():
                    rebuild = True
                writes.append(("z_profile", k, getattr(new_z, k), type(new_z)))
            cfg.z_profile = new_z.to_dict()
        if rebuild:
            self._setup(cfg)
            return True
        for p in self._parts:
            p.update(generator_params, validity, z_profile)
        for key, name, value, pcls in writes:
            buf = self._dyn.get((key, name))
            if buf is not None:
                self.ctx.fill(buf, param_value(pcls, name, value))
        self.config = cfg
        self.params = cfg.generator_params
        if self._post_stages and z_profile:
            self._post_stages = [(self._post_stages[0][0], new_z)]
        return False


__all__ = [
    "MIN_ENVS_PER_THREAD",
    "REASONS",
    "TrackGenerator",
    "TrackResult",
    "as_stage",
    "resolve_params",
    "threads_wanted",
]
