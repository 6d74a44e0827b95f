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
(``_threads._ThreadSplit``): each part is a ``TrackGenerator`` made by ``_part_of``, whose
arrays (``_arrays._Arrays``) are views of its parent's, so the split allocates once; the
bytes are those of one thread. The record/replay machinery is the base both generators
share (``_pipeline_base._Pipeline``); the step builders are in ``_steps``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np
import warp as wp

from ..errors import GeneratorError, ParamsError
from ..launch import log_entry, logging_open
from ..params import Params
from . import _widths_steps
from ._arrays import _Arrays
from ._checks import mask_values
from ._node import track_node
from ._param_buffers import checked_now
from ._pipeline_base import _Pipeline, _Step
from ._result import REASONS, TrackResult
from ._spec_stage import (  # noqa: F401  (the gates, the kit and the tests import these here)
    _check_legacy_stream,
    _legacy_lock,
    _SpecStage,
    as_stage,
    resolve_params,
)
from ._steps import _StepBuilder
from ._threads import MIN_ENVS_PER_THREAD, MIN_POINTS_PER_THREAD, _ThreadSplit, threads_wanted
from .config import TrackGenConfig, ValidityParams
from .exec import LaunchContext, _context, capturing, check_eager_cpu
from .ops import _kernels as _k
from .plugin import CaptureClass, registry


class TrackGenerator(_Pipeline, _StepBuilder):
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
        self._share: tuple[TrackGenerator, int] | None = None  # a part: (parent, offset)
        self._setup(config)

    @classmethod
    def _part_of(cls, parent: TrackGenerator, offset: int, config: TrackGenConfig) -> Any:
        """A worker thread's part of ``parent``'s split call: a generator over the envs
        ``[offset, offset + config.num_envs)`` whose arrays are views of ``parent``'s
        (``_Arrays.share_of``) and whose one-word buffers are ``parent``'s. Its context is
        quiet (the caller counts a split call as the call it splits); it makes no warm-up
        (the parent's wrote every share) and never splits."""
        part = cls.__new__(cls)
        part.ctx = LaunchContext(parent.ctx.device, quiet=True)
        part._override = None
        part._share = (parent, int(offset))
        part._setup(config)
        return part

    def with_config(self, config: TrackGenConfig) -> TrackGenerator:
        """A new generator over ``config``, on a new context on ``config.device``, that runs
        what this one runs: the Stage or GeneratorSpec given as its ``generator`` (else
        ``config.generator`` from the registry, as any generator).

        Raises:
            GeneratorError, ParamsError: as the constructor.
        """
        return TrackGenerator(config, generator=self._override)

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
        if self._share is None:
            arrays = _Arrays(dev, E)
        else:
            parent, offset = self._share
            arrays = _Arrays.share_of(parent._arrays, offset, E)
        self._arrays = arrays
        i32 = wp.int32
        self._raw_xy = arrays.zeros("raw_xy", E * raw, wp.vec2)
        self._gen_valid = arrays.full("gen_valid", E, 1, i32)
        self._arc = self._arc_scratch(E, raw, N)
        self._grid = self._grid_scratch(E, N)
        self._raw_attrs: dict[str, wp.array] = {}
        self._attrs: dict[str, wp.array] = {}
        seeds = np.array(cfg.env_seed_values(), dtype=np.int32)
        self._env_seed = arrays.values("env_seed", seeds, i32)
        self._epoch = arrays.shared("epoch", lambda: wp.full(1, cfg.epoch, dtype=i32, device=dev))
        self._mode = arrays.shared("mode", lambda: wp.zeros(1, dtype=i32, device=dev))
        self._user_mask = arrays.zeros("user_mask", E, i32)
        self._attempt = arrays.zeros("attempt", E, i32)
        self._active = arrays.full("active", E, 1, i32)
        self.seeds = arrays.zeros("seeds", E, i32)
        self._dyn: dict[tuple[str, str], wp.array] = arrays.shared("dyn", dict)
        self.result = TrackResult(
            xy=arrays.zeros("xy", E * N, wp.vec2),
            valid=arrays.zeros("valid", E, i32),
            attributes=self._attrs,
            reason=arrays.zeros("reason", E, i32),
            crossings=arrays.zeros("crossings", E, i32),
            turning=arrays.zeros("turning", E, i32),
            valid_count=arrays.zeros("valid_count", 1, i32),
            num_envs=E,
            num_points=N,
            ctx=self.ctx,
            seeds=self.seeds,
        )
        self._steps: list[_Step] = []
        self._counts_written: wp.array | None = None
        self._build_generator(stage, params, cfg)
        self._build_resample(stage)
        self._post_stages = self._build_post(cfg)
        # direction, widths (nothing by default)
        self._steps += _widths_steps.build_steps(
            cfg, stage.provides, self.result, self._active, self.seeds, self._attrs, arrays
        )
        self._build_validity(cfg.validity)
        # boundary crossings (only with widths)
        self._steps += _widths_steps.build_checks(cfg, self.result, self._active, arrays)
        self._plans: dict[str, list[Any]] = {}
        self._built()
        if self._share is None:  # the warm-up, once: a part's share is already written
            self._warm_up()
        self._split = self._thread_split(cfg)

    def _thread_split(self, cfg: TrackGenConfig) -> _ThreadSplit | None:
        """The worker threads a CPU call splits across (``_ThreadSplit.build``), for a
        pipeline on the CPU, registered (not an override), with no HOST step, whose stage
        is not a ``GeneratorSpec``; None otherwise, and for a part (it never splits).

        A ``GeneratorSpec`` is one generator: its contract is one ``alloc_scratch(config)``
        and one ``generate`` over every env of ``config`` per call, and a part would call
        both again over a share."""
        if self._share is not None or self.ctx.device != "cpu" or self.host_driven:
            return None
        if self._override is not None or isinstance(self.stage, _SpecStage):
            return None
        return _ThreadSplit.build(
            cfg,
            lambda offset, c: self._part_of(self, offset, c),
            lambda part, mode: part._run(mode),  # a part never splits: the one-thread call
        )

    # -- running ------------------------------------------------------------------------------
    def _steps_of(self, mode: str) -> list[_Step]:
        return [self._head(mode), *self._steps]

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

    def _run(self, mode: str, epoch: int | None = None) -> TrackResult:
        logged = logging_open()  # a graph node is cooking: the call joins its recording
        if self._split is not None and not (self.ctx.runs_eagerly or capturing(self.ctx) or logged):
            self._called(epoch)
            self._split.run(mode, self.result)  # the parts replay their shares
            return self.result
        return super()._run(mode, epoch)

    @property
    def _parts(self) -> list[TrackGenerator]:
        """The parts of a split call, in env order (empty when calls do not split)."""
        return [] if self._split is None else self._split.parts

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
        return self._generate(epoch)

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
        self._emit(ctx, mode)

    def node(self, name: str | None = None) -> Any:
        """Returns this generator as a graph node: its Params fields and ``epoch`` are the
        node's parameters (dynamic ones replay), and it answers its own device copy of
        ``result.columns()`` (copied on the device with each call, so another node of this
        generator, or a call outside the graph, never writes over the node's output).

        Args:
            name: the node's type name (``track_<generator>`` when None).

        Raises:
            GeneratorError: a Params class with a field named ``epoch``.
        """
        return track_node(self, name)

    # -- update: new Params values -------------------------------------------------------
    def update(
        self,
        generator_params: Mapping[str, Any] | None = None,
        validity: Mapping[str, Any] | None = None,
        z_profile: Mapping[str, Any] | None = None,
        **other: Any,
    ) -> bool:
        """Changes parameters; dynamic fields are written to their device buffers (no new
        recording), a static change rebuilds the pipeline.

        Every value is checked before anything changes, and a rebuild that fails part way
        (a stage refusing its Params while it allocates) puts the generator back as it was:
        a refused update leaves params, buffers and bytes as they were. A graph node's
        dynamic number given for a dynamic field is written as its expression, so the
        graph's replay writes the value it moves to.

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
        for label, values in (
            (f"generator_params of {self.stage.name!r}", generator_params),
            ("update validity", validity),
            ("update z_profile", z_profile),
        ):
            if values is not None and (
                not isinstance(values, Mapping) or not all(isinstance(k, str) for k in values)
            ):
                raise ParamsError(f"{label}: expected a dict of fields, got {values!r}")
        return self._update(generator_params, validity, z_profile)

    def _update(self, gp: Any, validity: Any, zp: Any) -> bool:
        """``update`` of checked mappings (a part takes its parent's); True on a rebuild."""
        # a graph node's dynamic numbers: checked at their current value, filled as expressions
        given = {"generator": gp, "validity": validity, "z_profile": zp}
        gp, validity, zp = self._now(gp, validity, zp)
        cfg = copy.copy(self.config)
        needs_rebuild = False
        writes: list[tuple[str, str, Any, type[Params]]] = []
        if gp:
            if self.params is None:
                raise GeneratorError(
                    f"generator_params of {self.stage.name!r}: expected none, got {dict(gp)!r}"
                )
            try:
                new = self.params.replace(**gp)
            except ParamsError as exc:
                raise GeneratorError(f"generator_params of {self.stage.name!r}: {exc}") from exc
            dyn = set(type(new).dynamic_fields())
            needs_rebuild = any(k not in dyn for k in gp)
            writes += [("generator", k, getattr(new, k), type(new)) for k in gp]
            cfg.generator_params = new
        if validity:
            new_v = cfg.validity.replace(**validity)
            for k in validity:
                static = k not in ValidityParams.dynamic_fields()
                if static and getattr(new_v, k) != getattr(cfg.validity, k):
                    needs_rebuild = True  # road_overlap: a step more or less
                writes.append(("validity", k, getattr(new_v, k), ValidityParams))
            cfg.validity = new_v
        if zp:
            if not self._post_stages:
                raise GeneratorError(
                    "z_profile: expected a generator built with z_profile, got none"
                )
            stage, zparams = self._post_stages[0]
            try:
                new_z = zparams.replace(**zp)
            except ParamsError as exc:
                raise GeneratorError(f"z_profile: {exc}") from exc
            if any(k not in type(new_z).dynamic_fields() for k in zp):
                needs_rebuild = True
            writes += [("z_profile", k, getattr(new_z, k), type(new_z)) for k in zp]
            cfg.z_profile = new_z.to_dict()
        if needs_rebuild:
            self._rebuild(cfg)
            return True
        for p in self._parts:
            p._update(given["generator"], given["validity"], given["z_profile"])
        moved = []
        for key, name, value, pcls in writes:
            value = (given[key] or {}).get(name, value)  # a dynamic number: its expression
            moved.append((key, name, value))
            self._fill_dynamic(key, pcls, name, value)
        self.config = cfg
        self.params = cfg.generator_params
        if self._post_stages and zp:
            self._post_stages = [(self._post_stages[0][0], new_z)]
        if moved and logging_open():
            # a graph replay writes the fields again (an expression's new value, or the
            # constant the node gave, after another call wrote others): Python's copies
            # follow the buffers
            names = [(k, n) for k, n, _ in moved]
            log_entry(("sync", lambda *vals: self._follow(names, vals), [v for *_, v in moved]))
        return False

    def _now(self, gp: Any, validity: Any, zp: Any) -> tuple[Any, Any, Any]:
        """The mappings with each dynamic number at its current value (``checked_now``)."""
        if gp and self.params is not None:
            gp = checked_now(type(self.params), gp)
        if validity:
            validity = checked_now(ValidityParams, validity)
        if zp and self._post_stages:
            zp = checked_now(type(self._post_stages[0][1]), zp)
        return gp, validity, zp

    def _follow(self, names: list[tuple[str, str]], values: tuple) -> None:
        """Sets the Params copies to the values a graph replay wrote to their buffers
        (host bookkeeping; no device work)."""
        cfg = self.config
        for (key, name), value in zip(names, values, strict=True):
            if key == "generator":
                self.params = cfg.generator_params = self.params.replace(**{name: value})
            elif key == "validity":
                cfg.validity = cfg.validity.replace(**{name: value})
            else:
                stage, zp = self._post_stages[0]
                self._post_stages = [(stage, zp.replace(**{name: value}))]
                cfg.z_profile = self._post_stages[0][1].to_dict()


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
