"""Generators as Stages: the adapter of a ``GeneratorSpec``, and Params resolution.

``as_stage`` turns a Stage class, a Stage instance or a ``GeneratorSpec`` into the Stage
the pipeline builds; ``resolve_params`` validates a config's ``generator_params`` against
the stage's Params class. A legacy plugin (``accepts_ctx=False``) runs behind one lock,
inside ``ctx.scope()``, and refuses being recorded on a stream other than Warp's current one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import warp as wp

from ..errors import GeneratorError, LegacyPluginStreamError, ParamsError
from ..params import Params
from .config import TrackGenConfig
from .exec import StageBuilder
from .plugin import CaptureClass, GeneratorSpec, Stage

_legacy_lock = threading.RLock()


class _SpecStage(Stage):
    """The adapter stage that runs a ``GeneratorSpec``."""

    writes = ("xy", "valid")

    def __init__(self, spec: GeneratorSpec):
        self.spec = spec
        self.name = spec.name  # type: ignore[misc]
        self.Params = spec.params  # type: ignore[misc]
        self.capture = CaptureClass.GRAPH if spec.capturable else CaptureClass.HOST  # type: ignore[misc]

    def build(self, b: StageBuilder, params: Params | None) -> Callable[[Any], None]:
        spec = self.spec
        cfg = b.config
        scratch = spec.alloc_scratch(cfg)
        xy = b.write("xy")
        valid = b.write("valid")
        seeds = b.seed

        def enqueue(ctx: Any) -> None:
            if spec.accepts_ctx:
                spec.generate(seeds, cfg, xy, valid, scratch, ctx=ctx)
                return
            _check_legacy_stream(ctx, spec.name)
            with _legacy_lock, ctx.scope():
                spec.generate(seeds, cfg, xy, valid, scratch)

        return enqueue


def _check_legacy_stream(ctx: Any, name: str) -> None:
    """Refuses recording a legacy plugin on a stream other than Warp's current one."""
    if not ctx.recording or ctx.stream is None:
        return
    dev = wp.get_device(ctx.device)
    current = dev.stream if dev.is_cuda else None
    if ctx.stream is not current:
        raise LegacyPluginStreamError(
            f"generator {name!r} (accepts_ctx=False): expected the capture stream to be Warp's "
            f"current stream, got {ctx.stream!r}; set accepts_ctx=True in the spec"
        )


def as_stage(spec: Any) -> Stage:
    """Returns a Stage instance for a Stage class, a Stage instance or a GeneratorSpec.

    Raises:
        GeneratorError: anything else.
    """
    if isinstance(spec, GeneratorSpec):
        return _SpecStage(spec)
    if isinstance(spec, type) and issubclass(spec, Stage):
        return spec()
    if isinstance(spec, Stage):
        return spec
    raise GeneratorError(f"generator: expected a Stage or a GeneratorSpec, got {spec!r}")


def resolve_params(stage: Stage, config: Any, base: type = TrackGenConfig) -> Params | None:
    """Returns the stage's validated Params instance from ``config.generator_params``.

    A subclass of ``base`` (``TrackGenConfig``, or ``GateGenConfig`` for a gate generator)
    without ``generator_params`` is read with ``from_legacy``.

    Raises:
        GeneratorError: values the Params class refuses, or params for a generator without
            a Params class (the message names the generator, the field and the value).
    """
    pcls = stage.Params
    gp = config.generator_params
    name = stage.name
    if pcls is None:
        if gp is None or (isinstance(gp, Mapping) and not gp):
            return None
        raise GeneratorError(
            f"generator_params of {name!r}: expected none (it has no Params class), got {gp!r}"
        )
    try:
        if gp is None and type(config) is not base:
            return pcls.from_legacy(config)
        return pcls.resolve(gp)
    except ParamsError as exc:
        raise GeneratorError(f"generator_params of {name!r}: {exc}") from exc


__all__ = ["as_stage", "resolve_params"]
