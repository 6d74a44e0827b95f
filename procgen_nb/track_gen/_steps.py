"""The steps of a ``TrackGenerator``'s pipeline, built from its config.

``_StepBuilder`` holds the methods ``TrackGenerator`` builds its steps with (``_Step``, from
``_pipeline_base``): the generator, the resample to ``num_points``, the post stages (the z
profile) and the validity stage. Every array a step needs comes from the generator's
``_arrays`` under a key, so a worker thread's part of a split call runs over views of its
parent's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import warp as wp

from ..errors import GeneratorError, ParamsError
from ..params import Params
from . import ops
from ._pipeline_base import _Step
from ._road import road_check
from ._spec_stage import as_stage
from .config import TrackGenConfig, ValidityParams
from .exec import StageBuilder
from .ops import _kernels as _k
from .ops._scratch import clearance_blocks
from .ops._validity import count_crossing_envs
from .plugin import CaptureClass, Stage, registry


class _StepBuilder:
    """The build methods of ``TrackGenerator`` (a mixin: they read and set its arrays)."""

    def _attr_array(self, name: str) -> wp.array:
        """The ``[E*N]`` float32 attribute array ``name``."""
        E, N = self.config.num_envs, self.config.num_points
        return self._arrays.zeros(("attr", name), E * N, wp.float32)

    def _arc_scratch(self, E: int, raw: int, N: int) -> ops.ArcScratch:
        """The buffers of the resample (``ops.ArcScratch``), from the generator's arrays."""
        a = self._arrays
        return ops.ArcScratch(
            cum=a.zeros("arc.cum", E * (raw + 1), wp.float32),
            seg=a.zeros("arc.seg", E * N, wp.int32),
            t=a.zeros("arc.t", E * N, wp.float32),
            counts=a.full("arc.counts", E, raw, wp.int32),
        )

    def _grid_scratch(self, E: int, N: int) -> ops.GridScratch:
        """The scratch of the validity stage (``ops.GridScratch``), from the generator's
        arrays."""
        a, nb = self._arrays, clearance_blocks(N)
        return ops.GridScratch(
            blocks=nb,
            box=a.zeros("grid.box", E * nb, wp.vec4),
            ones=a.full("grid.ones", E, 1, wp.int32),
            chain=a.zeros("grid.chain", E * N, wp.int32),
            chain_n=a.zeros("grid.chain_n", E * N, wp.int32),
            order=a.zeros("grid.order", E * N, wp.int32),
            key=a.zeros("grid.key", E * N, wp.float32),
            bucket=a.zeros("grid.bucket", E * (N + 1), wp.int32),
            ring=a.zeros("grid.ring", E * N, wp.vec2),
        )

    def _build_generator(self, stage: Stage, params: Params | None, cfg: TrackGenConfig) -> None:
        E, raw = cfg.num_envs, self.raw
        attrs = dict(getattr(stage, "attributes", {}) or {})

        def attr_out(name: str) -> Callable[[], wp.array]:
            def make() -> wp.array:
                if name not in self._raw_attrs:
                    self._raw_attrs[name] = self._arrays.zeros(
                        ("raw_attr", name), E * raw, wp.float32
                    )
                    self._attrs[name] = self._attr_array(name)
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
            scratch_alloc=self._arrays.scratch("generator"),
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
            self._counts_written = self._arrays.full(
                "count", self.config.num_envs, self.raw, wp.int32
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

        def attr_out(name: str) -> Callable[[], wp.array]:
            def make() -> wp.array:
                if name not in self._attrs:
                    self._attrs[name] = self._attr_array(name)
                return self._attrs[name]

            return make

        b = StageBuilder(
            stage=stage,
            config=cfg,
            raw=cfg.num_points,
            seed=self.seeds,
            active=self._active,
            outputs={n: attr_out(n) for n in stage.attributes},
            inputs={"xy": self.result.xy, "valid": self.result.valid, **self._attrs},
            param_buffer=self._param_buffer("z_profile", pcls, params),
            scratch_alloc=self._arrays.scratch("z_profile"),
        )
        enqueue = stage.build(b, params)
        self._steps.append(_Step(f"stage:{stage.name}", stage.capture, enqueue))
        return [(stage, params)]

    def _build_validity(self, vp: ValidityParams) -> None:
        E, N = self.config.num_envs, self.config.num_points
        get = self._param_buffer("validity", ValidityParams, vp)
        min_r, width = get("min_turn_radius"), get("track_width")
        res, grid = self.result, self._grid
        # the arrays, not the generator or the result: a result kept alone does not keep
        # its generator alive, and neither is left in a reference cycle by this closure
        ctx, xy, reason = self.ctx, res.xy, res.reason

        def count_crossings() -> None:
            count_crossing_envs(ctx, xy, E, N, reason, crossings, grid)

        # reading res.crossings counts the crossing envs in full (count_crossings)
        crossings = res.count_crossings_with(count_crossings)

        def run(ctx: Any) -> None:
            # validity only asks "is there a crossing?": the search stops at the first one
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
                crossings,
                res.turning,
                self._active,
                self._gen_valid,
                first_crossing=True,
            )
            ctx.launch(_k._count_k, 1, [res.valid, E, res.valid_count])

        self._steps.append(_Step("validity", CaptureClass.GRAPH, run))
        if vp.road_overlap:
            width_now = lambda: self.config.validity.track_width  # noqa: E731 (update() moves it)
            self._steps.append(
                _Step(
                    "validity:road_overlap",
                    CaptureClass.HOST,
                    road_check(res, self._active, width_now),
                )
            )


__all__ = ["_StepBuilder"]
