"""The gate conformance kit: ``check_gate_generator(spec_or_stage)``.

It runs the gate generator through small ``GateGenerator``s (on ``polar`` centerlines when
it reads them) and checks, for an anchors Stage or a ``GateGeneratorSpec`` alike:

- ``params``: a ``Params`` subclass with a JSON-serializable schema (static fields only
  for a spec);
- ``declarations``: the orderings are known, ``preferred`` names an accepted order and
  ``normalize`` None or ``"extent"``, a Stage writes ``anchors.xy`` and ``anchors.count``
  and reads at most ``"xy"``; ``capacity`` fits ``min_gates..max_gates``;
- ``anchors``: each env's count is within the generator's ``min_gates..gates``, its gates
  are finite, and every slot after them holds NaN;
- ``declared writes``: the call leaves the seeds and the centerline it reads alone and
  asks for no undeclared output;
- ``no allocation or readback``: a capturable call allocates nothing, reads nothing back
  and records;
- ``stream discipline``: all device work goes through ``ctx`` (a legacy plugin is
  reported, not failed);
- ``determinism``: the same config gives the same bytes, another seed other bytes;
- ``orderings``: every accepted ordering builds and ``ccw`` sorts the gates
  counter-clockwise; an ordering it does not accept is refused.

Binding a ``GateGeneratorSpec`` here emits its ``DeprecationWarning`` (once per name).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import warp as wp

from .._checks import other_seed
from .._kit import (
    Check,
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
from ..config import TrackGenConfig
from ..pipeline import TrackGenerator
from .config import ORDERINGS, GateGenConfig
from .generator import GateGenerator, as_gate_stage
from .legacy import LegacyGateStage
from .stage import supported_orderings


def _track_for(stage: Any, cfg: GateGenConfig) -> Any:
    """The ``polar`` centerlines (one per env, the gate config's env seeds) of a gate
    generator that reads them; None for one that does not."""
    if "xy" not in tuple(getattr(stage, "reads", ())):
        return None
    track = TrackGenConfig(
        num_envs=cfg.num_envs,
        num_points=64,
        generator="polar",
        device=cfg.device,
        env_seeds=cfg.env_seed_values(),
    )
    return TrackGenerator(track)


def _check_declarations(stage: Any, legacy: bool) -> tuple[list[str], frozenset[str]]:
    problems: list[str] = []
    try:
        supported = stage.orderings if legacy else supported_orderings(stage)
    except Exception as exc:  # reported
        return [f"{type(exc).__name__}: {exc}"], frozenset()
    if not legacy:
        pref = dict(getattr(stage, "preferred", None) or {})
        extra = sorted(set(pref) - {"order", "normalize"})
        if extra:
            problems.append(f"preferred has unknown keys {extra}")
        if pref.get("order") not in supported:
            problems.append(
                f"preferred order {pref.get('order')!r} is not accepted {sorted(supported)}"
            )
        if pref.get("normalize") not in (None, "extent"):
            problems.append(f"preferred normalize {pref.get('normalize')!r} not None or 'extent'")
        if set(stage.writes) != {"anchors.xy", "anchors.count"}:
            problems.append(f"writes {list(stage.writes)}, expected anchors.xy and anchors.count")
        bad_reads = sorted(set(getattr(stage, "reads", ())) - {"xy"})
        if bad_reads:
            problems.append(f"reads {bad_reads}: only 'xy' is available")
        if getattr(stage, "per", "anchors") != "anchors":
            problems.append(f"per={stage.per!r}, expected 'anchors'")
    return problems, supported


def check_gate_generator(
    spec_or_stage: Any,
    *,
    num_envs: int = 8,
    generator_params: Any = None,
    device: str | None = None,
    seed: int = 0,
    **config: Any,
) -> ConformanceReport:
    """Checks a gate generator (an anchors Stage class or instance, or a
    ``GateGeneratorSpec``) against the contract.

    Args:
        spec_or_stage: the gate generator; it need not be registered.
        num_envs: the size of the test batch.
        generator_params: its Params values (defaults when None).
        device: the device to run on (``procgen_nb.get_device()`` when None).
        seed: the first env's seed.
        **config: other ``GateGenConfig`` fields (``max_gates``, ``min_gates``, ...).

    Returns:
        A ``ConformanceReport``; nothing raises for a failed check, nor for a generator that
        raises inside one (see ``raise_if_failed``).
    """
    stage = as_gate_stage(spec_or_stage)
    legacy = isinstance(stage, LegacyGateStage)
    name = stage.name or type(stage).__name__
    kit = Kit(name, "GateGeneratorSpec" if legacy else "Stage")

    params = kit.checked(
        "params", lambda: params_check(stage.Params, "GateGeneratorSpec" if legacy else None)
    )
    if not params.passed and "Params subclass" in params.detail:
        return kit.report

    problems, supported = _check_declarations(stage, legacy)
    cfg = GateGenConfig(
        num_envs=num_envs,
        device=device,
        generator=name,
        generator_params=generator_params,
        seed=seed,
        **config,
    )
    try:
        track = _track_for(stage, cfg)
        gg = GateGenerator(cfg, generator=stage, track=track)
    except Exception as exc:  # noqa: BLE001  (the report says why it does not build)
        problems.append(f"{type(exc).__name__}: {exc}")
        kit.add(Check("declarations", False, "; ".join(problems)))
        return kit.report
    kit.add(
        Check(
            "declarations",
            not problems,
            "; ".join(problems)
            or f"orderings {sorted(supported)}, stride {gg.stride}, min {gg.min_count}",
        )
    )
    ctx = gg.ctx

    # the generator's call alone, twice: over NaN (every gate below the count must be
    # written), then over a finite poison (every slot after the count must be NaN)
    host = stage.capture.name == "HOST"
    seeds_before = ctx.readback(gg.seeds)
    center = gg.builder._inputs.get("xy")
    center_before = None if center is None else ctx.readback(center)
    nan, finite = wp.vec2(float("nan"), float("nan")), wp.vec2(_POISON, _POISON)
    runs = []
    for value in (nan, finite):
        w, err = poisoned_call(
            ctx, gg._gen_enqueue, host, [(gg.anchors, value), (gg.anchor_count, -1)]
        )
        if err is not None:
            kit.add(Check("call", False, f"{type(err).__name__}: {err}"))
            return kit.report
        runs.append((ctx.readback(gg.anchor_count), ctx.readback(gg.anchors)))
    kit.guard("anchors", lambda: _anchors(gg, runs))
    touched = []
    if not np.array_equal(ctx.readback(gg.seeds), seeds_before):
        touched.append("seeds (read-only)")
    if center is not None and not np.array_equal(
        ctx.readback(center), center_before, equal_nan=True
    ):
        touched.append("xy (the centerline, read-only)")
    touched += [n for n in gg.builder.written if n not in tuple(stage.writes)]
    kit.add(
        Check(
            "declared writes",
            not touched,
            f"wrote {touched}" if touched else f"writes {sorted(stage.writes)}",
        )
    )
    kit.guard(
        "no allocation or readback",
        lambda: capture_check(host, w, ctx, lambda: gg._gen_enqueue(ctx), not legacy),
    )
    kit.add(stream_check(bool(legacy and not stage.spec.accepts_ctx), w))

    def fingerprint(c: GateGenConfig) -> str:
        return (
            GateGenerator(c, generator=stage, track=_track_for(stage, c)).generate().fingerprint()
        )

    other = dataclasses.replace(cfg, seed=other_seed(cfg.seed))
    kit.add(determinism_check(fingerprint, cfg, other))
    kit.guard("batch independence", lambda: _batch(stage, cfg))
    kit.guard("orderings", lambda: _orderings(stage, cfg, supported, track))
    return kit.report


#: the finite value the second poisoned call fills the anchors with
_POISON = 1.0e30


def _anchors(gg: GateGenerator, runs: list[tuple[np.ndarray, np.ndarray]]) -> Check:
    """Each env's count is in ``[min_count, stride]`` and the same in both poisoned calls,
    its gates are written and finite, and every slot after them holds NaN."""
    E, A = gg.config.num_envs, gg.stride
    (counts, xy_nan), (counts2, xy_fin) = runs
    xy_nan, xy_fin = xy_nan.reshape(E, A, 2), xy_fin.reshape(E, A, 2)
    bad = []
    for e in range(E):
        c = int(counts[e])
        if not gg.min_count <= c <= A:
            bad.append(f"env {e}: count {c} not in [{gg.min_count}, {A}]")
        elif int(counts2[e]) != c:
            bad.append(f"env {e}: count {c}, then {int(counts2[e])} in the same call")
        elif found := unwritten(xy_nan[e], "gates", e, c):
            bad.append(found)
        elif not np.isnan(xy_fin[e, c:]).all():
            bad.append(f"env {e}: slots after the count are not NaN")
    detail = "; ".join(bad[:4]) + (f" and {len(bad) - 4} more" if len(bad) > 4 else "")
    return Check("anchors", not bad, detail or f"counts {counts.min()}..{counts.max()}")


def _batch(stage: Any, cfg: GateGenConfig) -> Check:
    """Each env of the batch (its warm-up call) against its seed alone, the track alone too."""

    def outputs(c: GateGenConfig) -> dict[str, np.ndarray]:
        return GateGenerator(c, generator=stage, track=_track_for(stage, c)).result.numpy()

    seeds = cfg.env_seed_values()
    batch = outputs(cfg)

    def alone(e: int) -> dict[str, np.ndarray]:
        return outputs(dataclasses.replace(cfg, num_envs=1, env_seeds=[seeds[e]]))

    return batch_check(batch, alone, cfg.num_envs)


def _orderings(stage: Any, cfg: GateGenConfig, supported: frozenset[str], track: Any) -> Check:
    """Every accepted ordering builds and ``ccw`` sorts counter-clockwise; every other
    ordering is refused."""
    E = cfg.num_envs
    found = []
    for ordering in sorted(supported):
        try:
            g = GateGenerator(
                dataclasses.replace(cfg, gate_ordering=ordering), generator=stage, track=track
            )
        except Exception as exc:  # noqa: BLE001  (reported)
            found.append(f"{ordering}: {type(exc).__name__}: {exc}")
            continue
        if ordering == "ccw":
            d = g.result.numpy()
            for e in range(E):
                pts = d["xy"][e, : d["count"][e]].astype(np.float64)
                if len(pts) > 2:
                    c = pts.mean(axis=0)
                    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])
                    # counter-clockwise from any first gate: the angle drops once at most
                    if (np.diff(np.append(ang, ang[0])) < -1e-6).sum() > 1:
                        found.append(f"ccw: env {e} is not sorted counter-clockwise")
                        break
    for ordering in sorted(set(ORDERINGS) - set(supported)):
        try:
            GateGenerator(
                dataclasses.replace(cfg, gate_ordering=ordering), generator=stage, track=track
            )
            found.append(f"{ordering}: accepted though not declared")
        except ValueError:
            pass
    return Check("orderings", not found, "; ".join(found[:4]) or f"{sorted(supported)} build")


def check_all_gates(**kwargs: Any) -> dict[str, ConformanceReport]:
    """Runs ``check_gate_generator`` on every registered gate generator; reports by name."""
    from ..plugin import registry
    from ._registry import available, lookup

    return {n: check_gate_generator(lookup(registry, n), **kwargs) for n in available(registry)}


__all__ = ["check_all_gates", "check_gate_generator"]
