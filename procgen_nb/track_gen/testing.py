"""The conformance kit: ``check_generator(spec_or_stage)`` checks a generator's contract.

It runs the generator through a small ``TrackGenerator`` and checks, for a Stage or a
GeneratorSpec alike:

- ``params``: the Params class is a ``Params`` subclass whose schema is JSON-serializable;
  a GeneratorSpec's has static fields only;
- ``closed loop``: the generator's call, made alone over outputs poisoned with NaN, wrote
  every raw point of every env it accepts (a point it did not write stays NaN: a kernel
  over ``N`` threads instead of ``E * N`` fails here), its count is between 3 and the raw
  size, and the pipeline's output has ``num_envs * num_points`` points;
- ``declared writes``: the call leaves the seeds and every output it did not declare alone;
- ``no allocation or readback``: a capturable call allocates nothing and reads nothing back,
  and records; a HOST Stage reads the device back only inside ``ctx.host()`` (a
  ``capturable=False`` GeneratorSpec may read and allocate anywhere in its call);
- ``stream discipline``: all device work goes through ``ctx`` (allocating through
  ``ctx.zeros`` / ``ctx.empty`` / ``ctx.upload`` counts as going through it; a legacy
  plugin, ``accepts_ctx=False``, is reported, not failed: it runs inside ``ctx.scope()``);
- ``determinism``: two generators built from the same config give the same bytes, and
  another seed gives other bytes;
- ``batch independence``: each env of the batch gives the bytes of its seed generated
  alone (a generator reading another env's seed fails here);
- ``provides``: a generator that provides ``"ccw"`` turns counter-clockwise.

A check that raises is a failed check of the report, never an exception out of the kit.
``report = check_generator(MyStage)``; ``print(report)``; ``report.raise_if_failed()``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ._checks import other_seed
from ._kit import (
    Check,
    ConformanceError,
    ConformanceReport,
    Kit,
    batch_check,
    capture_check,
    determinism_check,
    params_check,
    poisoned_call,
    stream_check,
    unwritten,
)
from ._spec_stage import _SpecStage, as_stage
from .config import TrackGenConfig
from .gates.testing import check_all_gates, check_gate_generator
from .pipeline import TrackGenerator
from .plugin import CaptureClass, GeneratorSpec


def _form(spec: Any) -> str:
    return "GeneratorSpec" if isinstance(spec, GeneratorSpec) else "Stage"


def check_generator(
    spec_or_stage: Any,
    *,
    num_envs: int = 8,
    num_points: int = 64,
    generator_params: Any = None,
    device: str | None = None,
    seed: int = 0,
) -> ConformanceReport:
    """Checks a generator (a Stage class or instance, or a GeneratorSpec) against the contract.

    Args:
        spec_or_stage: the generator; it need not be registered.
        num_envs, num_points: the size of the test batch.
        generator_params: its Params values (defaults when None).
        device: the device to run on (``procgen_nb.get_device()`` when None).
        seed: the first env's seed.

    Returns:
        A ``ConformanceReport``; nothing raises for a failed check, nor for a generator that
        raises inside one (see ``raise_if_failed``).
    """
    stage = as_stage(spec_or_stage)
    name = stage.name or type(stage).__name__
    kit = Kit(name, _form(spec_or_stage))
    spec_form = isinstance(stage, _SpecStage)
    params = kit.checked(
        "params", lambda: params_check(stage.Params, "GeneratorSpec" if spec_form else None)
    )
    if not params.passed and "Params subclass" in params.detail:
        return kit.report

    cfg = TrackGenConfig(
        num_envs=num_envs,
        num_points=num_points,
        device=device,
        generator=name,
        generator_params=generator_params,
        seed=seed,
    )
    host = stage.capture is CaptureClass.HOST
    try:
        tg = TrackGenerator(cfg, generator=spec_or_stage)
    except Exception as exc:  # noqa: BLE001  (the report says why it does not build)
        kit.add(Check("builds", False, f"{type(exc).__name__}: {exc}"))
        return kit.report
    kit.add(Check("builds", True, f"raw size {tg.raw}, capture {stage.capture.name}"))
    ctx = tg.ctx
    raw = tg.raw

    # the generator's call alone: NaN in its outputs, sentinels in what it did not declare
    writes = set(stage.writes)
    counts_arr = tg._counts_written if tg._counts_written is not None else tg._arc.counts
    sentinels: dict[str, tuple[Any, Any]] = {}
    if "valid" not in writes:
        sentinels["valid"] = (tg._gen_valid, 7)
    if "count" not in writes:
        sentinels["count"] = (counts_arr, raw)
    for attr, arr in tg._raw_attrs.items():
        if attr not in writes:
            sentinels[attr] = (arr, 0.0)
    poison: list[tuple[Any, Any]] = [(tg._raw_xy, float("nan"))]
    poison += [(arr, float("nan")) for a, arr in tg._raw_attrs.items() if a in writes]
    if "count" in writes:
        poison.append((counts_arr, -1))
    if "valid" in writes:
        poison.append((tg._gen_valid, 1))  # what the pipeline fills before the call
    tg._run_step(tg._head("generate"), ctx)  # fresh seeds
    seeds_before = ctx.readback(tg.seeds)
    w, err = poisoned_call(ctx, tg._gen_enqueue, host, [*sentinels.values(), *poison])
    if err is not None:
        kit.add(Check("call", False, f"{type(err).__name__}: {err}"))
        return kit.report

    kit.guard("closed loop", lambda: _closed_loop(tg, counts_arr, writes))
    kit.guard("declared writes", lambda: _declared_writes(tg, sentinels, seeds_before, writes))
    kit.guard(
        "no allocation or readback",
        lambda: capture_check(host, w, ctx, lambda: tg._gen_enqueue(ctx), not spec_form),
    )
    legacy = spec_form and not stage.spec.accepts_ctx
    kit.add(stream_check(legacy, w))

    def fingerprint(c: TrackGenConfig) -> str:
        return TrackGenerator(c, generator=spec_or_stage).generate().fingerprint()

    other = dataclasses.replace(cfg, seed=other_seed(cfg.seed))
    kit.add(determinism_check(fingerprint, cfg, other))
    kit.guard("batch independence", lambda: _batch(spec_or_stage, cfg))

    if "ccw" in stage.provides:
        kit.guard("provides ccw", lambda: _provides_ccw(spec_or_stage, cfg))
    return kit.report


def _closed_loop(tg: TrackGenerator, counts_arr: Any, writes: set[str]) -> Check:
    """Every env the poisoned call accepted has a count in ``[3, raw]`` and all its raw
    points (and declared attributes) written and finite."""
    ctx, E, raw = tg.ctx, tg.config.num_envs, tg.raw
    gv = ctx.readback(tg._gen_valid)
    xy = ctx.readback(tg._raw_xy).reshape(E, raw, 2)
    attrs = {
        a: ctx.readback(arr).reshape(E, raw) for a, arr in tg._raw_attrs.items() if a in writes
    }
    counts = ctx.readback(counts_arr)
    bad = []
    for e in range(E):
        if gv[e] == 0:
            continue
        c = int(counts[e])
        if not 3 <= c <= raw:
            bad.append(f"env {e}: count {c} not in [3, {raw}]")
            continue
        found = unwritten(xy[e], "raw points", e, c)
        for a, rows in attrs.items():
            found = found or unwritten(rows[e], f"{a!r} values", e, c)
        if found:
            bad.append(found)
    n_out = tg.result.xy.shape[0]
    if n_out != E * tg.config.num_points:
        bad.append(f"xy has {n_out} points, expected {E * tg.config.num_points}")
    accepted = int((gv != 0).sum())
    detail = "; ".join(bad[:4]) + (f" and {len(bad) - 4} more" if len(bad) > 4 else "")
    return Check("closed loop", not bad, detail or f"{accepted}/{E} envs accepted")


def _declared_writes(
    tg: TrackGenerator, sentinels: dict[str, tuple[Any, Any]], seeds_before: Any, writes: set
) -> Check:
    ctx = tg.ctx
    touched = [n for n, (arr, v) in sentinels.items() if not np.all(ctx.readback(arr) == v)]
    if not np.array_equal(ctx.readback(tg.seeds), seeds_before):
        touched.append("seeds (read-only)")
    undeclared = [n for n in tg.builder.written if n not in writes]
    wrong = touched + undeclared
    return Check(
        "declared writes",
        not wrong,
        f"wrote undeclared {wrong}" if wrong else f"writes {sorted(writes)}",
    )


def _eager_outputs(spec_or_stage: Any, cfg: TrackGenConfig) -> dict[str, np.ndarray]:
    """The outputs of the construction's warm-up call (eager) of a new generator."""
    tg = TrackGenerator(cfg, generator=spec_or_stage)
    return tg.result.numpy()


def _batch(spec_or_stage: Any, cfg: TrackGenConfig) -> Check:
    seeds = cfg.env_seed_values()
    batch = _eager_outputs(spec_or_stage, cfg)

    def alone(e: int) -> dict[str, np.ndarray]:
        one = dataclasses.replace(cfg, num_envs=1, env_seeds=[seeds[e]])
        return _eager_outputs(spec_or_stage, one)

    return batch_check(batch, alone, cfg.num_envs)


def _provides_ccw(spec_or_stage: Any, cfg: TrackGenConfig) -> Check:
    res = _eager_outputs(spec_or_stage, cfg)
    wrong = [e for e in range(cfg.num_envs) if res["valid"][e] and res["turning"][e] != 1]
    return Check(
        "provides ccw",
        not wrong,
        f"envs {wrong[:8]} turn clockwise" if wrong else "every valid env turns +1",
    )


def check_all(**kwargs: Any) -> dict[str, ConformanceReport]:
    """Runs ``check_generator`` on every registered generator; returns reports by name."""
    from .plugin import registry

    return {
        n: check_generator(registry.get("generator", n), **kwargs)
        for n in registry.available("generator")
    }


__all__ = [
    "Check",
    "ConformanceError",
    "ConformanceReport",
    "check_all",
    "check_all_gates",
    "check_gate_generator",
    "check_generator",
]
