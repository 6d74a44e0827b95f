"""The conformance kit: ``check_generator(spec_or_stage)`` checks a generator's contract.

It runs the generator through a small ``TrackGenerator`` and checks, for a Stage or a
GeneratorSpec alike:

- ``params``: the Params class is a ``Params`` subclass whose schema is JSON-serializable;
  a GeneratorSpec's has static fields only;
- ``closed loop``: every env the generator accepts has finite raw points, its count is
  between 3 and the raw size, and the pipeline's output has ``num_envs * num_points`` points;
- ``declared writes``: the call leaves the seeds and every output it did not declare alone;
- ``determinism``: two generators built from the same config give the same bytes, and
  another seed gives other bytes;
- ``no allocation or readback``: a capturable call allocates nothing and reads nothing back,
  and records; a HOST Stage reads the device back only inside ``ctx.host()`` (a
  ``capturable=False`` GeneratorSpec may read and allocate anywhere in its call);
- ``stream discipline``: all device work goes through ``ctx`` (allocating through
  ``ctx.zeros`` / ``ctx.empty`` / ``ctx.upload`` counts as going through it; a legacy
  plugin, ``accepts_ctx=False``, is reported, not failed: it runs inside ``ctx.scope()``);
- ``provides``: a generator that provides ``"ccw"`` turns counter-clockwise.

``report = check_generator(MyStage)``; ``print(report)``; ``report.raise_if_failed()``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import warp as wp

from ..errors import ProcgenError
from ..params import Params
from . import exec as _exec
from ._checks import other_seed
from ._spec_stage import _SpecStage, as_stage
from .config import TrackGenConfig
from .pipeline import TrackGenerator
from .plugin import CaptureClass, GeneratorSpec


class ConformanceError(ProcgenError, AssertionError):
    """A generator failed the conformance kit (the message is the report)."""


@dataclasses.dataclass
class Check:
    """One check of the kit: its name, whether it passed, and what it found."""

    name: str
    passed: bool
    detail: str = ""


@dataclasses.dataclass
class ConformanceReport:
    """The kit's findings for one generator.

    Attributes:
        name: the generator's name. form: ``"Stage"`` or ``"GeneratorSpec"``.
        checks: every check, in order.
    """

    name: str
    form: str
    checks: list[Check] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        """The checks that failed."""
        return [c for c in self.checks if not c.passed]

    def __str__(self) -> str:
        head = f"conformance of {self.name!r} ({self.form}): {'PASS' if self.ok else 'FAIL'}"
        lines = [head]
        for c in self.checks:
            lines.append(f"  [{'ok' if c.passed else 'FAIL'}] {c.name}: {c.detail}")
        return "\n".join(lines)

    def raise_if_failed(self) -> None:
        """Raises ``ConformanceError`` (the report as its message) when a check failed."""
        if not self.ok:
            raise ConformanceError(str(self))


class _Watch:
    def __init__(self) -> None:
        self.allocs = 0
        self.readbacks = 0
        self.unhosted = 0  # readbacks outside ctx.host()
        self.direct = 0
        self.direct_names: list[str] = []


@contextlib.contextmanager
def _watching(device: str, ctx: Any = None) -> Iterator[_Watch]:
    """Counts allocations on ``device``, host reads (and those outside ``ctx.host()``), and
    device work not emitted via a ctx."""
    w = _Watch()
    dev = wp.get_device(device)
    allocators = {id(a): a for a in (dev.default_allocator, dev.get_allocator()) if a is not None}
    saved_alloc = {}
    for key, a in allocators.items():
        orig = a.allocate
        saved_alloc[key] = (a, "allocate" in a.__dict__, orig)

        def allocate(*args: Any, _orig: Any = orig, **kw: Any) -> Any:
            w.allocs += 1
            return _orig(*args, **kw)

        a.allocate = allocate
    orig_numpy = wp.array.numpy
    orig_launch, orig_copy = wp.launch, wp.copy
    orig_fill, orig_zero = wp.array.fill_, wp.array.zero_

    def numpy(self: Any, *a: Any, **k: Any) -> Any:
        w.readbacks += 1
        if ctx is not None and not ctx._host_ok:
            w.unhosted += 1
        return orig_numpy(self, *a, **k)

    def direct(name: str, fn: Any) -> Any:
        def wrapper(*a: Any, **k: Any) -> Any:
            if not _exec._via_ctx():
                w.direct += 1
                w.direct_names.append(name)
            return fn(*a, **k)

        return wrapper

    wp.array.numpy = numpy
    wp.launch = direct("wp.launch", orig_launch)
    wp.copy = direct("wp.copy", orig_copy)
    wp.array.fill_ = direct("array.fill_", orig_fill)
    wp.array.zero_ = direct("array.zero_", orig_zero)
    try:
        yield w
    finally:
        wp.array.numpy = orig_numpy
        wp.launch, wp.copy = orig_launch, orig_copy
        wp.array.fill_, wp.array.zero_ = orig_fill, orig_zero
        for a, had, orig in saved_alloc.values():
            if had:
                a.allocate = orig
            else:
                del a.allocate


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
        A ``ConformanceReport``; nothing raises for a failed check (see ``raise_if_failed``).
    """
    stage = as_stage(spec_or_stage)
    name = stage.name or type(stage).__name__
    report = ConformanceReport(name=name, form=_form(spec_or_stage))
    add = report.checks.append

    params = _params_check(stage.Params, "GeneratorSpec" if isinstance(stage, _SpecStage) else None)
    add(params)
    if not params.passed and "Params subclass" in params.detail:
        return report

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
    except Exception as exc:  # the report says why it does not build
        add(Check("builds", False, f"{type(exc).__name__}: {exc}"))
        return report
    add(Check("builds", True, f"raw size {tg.raw}, capture {stage.capture.name}"))
    ctx = tg.ctx
    E, raw = cfg.num_envs, tg.raw

    # closed loop of the right size
    gv = ctx.readback(tg._gen_valid)
    xy = ctx.readback(tg._raw_xy).reshape(E, raw, 2)
    counts_arr = tg._counts_written if tg._counts_written is not None else tg._arc.counts
    counts = ctx.readback(counts_arr)
    bad = []
    for e in range(E):
        if gv[e] == 0:
            continue
        c = int(counts[e])
        if not 3 <= c <= raw:
            bad.append(f"env {e}: count {c} not in [3, {raw}]")
        elif not np.isfinite(xy[e, :c]).all():
            bad.append(f"env {e}: non-finite raw points")
    out = tg.result.xy
    if out.shape[0] != E * cfg.num_points:
        bad.append(f"xy has {out.shape[0]} points, expected {E * cfg.num_points}")
    accepted = int((gv != 0).sum())
    add(Check("closed loop", not bad, "; ".join(bad[:4]) or f"{accepted}/{E} envs accepted"))

    # declared writes: run the generator alone with sentinels in what it did not declare
    writes = set(stage.writes)
    sentinels: dict[str, tuple[wp.array, Any]] = {}
    if "valid" not in writes:
        sentinels["valid"] = (tg._gen_valid, 7)
    if "count" not in writes:
        sentinels["count"] = (counts_arr, raw)
    for attr, arr in tg._raw_attrs.items():
        if attr not in writes:
            sentinels[attr] = (arr, 0.0)
    tg._run_step(tg._head("generate"), ctx)  # fresh seeds, then sentinels
    for arr, value in sentinels.values():
        ctx.fill(arr, value)
    seeds_before = ctx.readback(tg.seeds)
    with _watching(ctx.device, ctx) as w:
        try:
            if host:
                tg._gen_enqueue(ctx)
            else:
                with ctx.strict():
                    tg._gen_enqueue(ctx)
            err = None
        except Exception as exc:  # reported below
            err = exc
    if err is not None:
        add(Check("call", False, f"{type(err).__name__}: {err}"))
        return report
    touched = [n for n, (arr, v) in sentinels.items() if not np.all(ctx.readback(arr) == v)]
    if not np.array_equal(ctx.readback(tg.seeds), seeds_before):
        touched.append("seeds (read-only)")
    undeclared = [n for n in tg.builder.written if n not in writes]
    add(
        Check(
            "declared writes",
            not touched and not undeclared,
            f"wrote undeclared {touched + undeclared}"
            if touched or undeclared
            else f"writes {sorted(writes)}",
        )
    )

    # no allocation or readback inside a capturable call; it records
    spec_form = isinstance(stage, _SpecStage)
    add(_capture_check(host, w, ctx, lambda: tg._gen_enqueue(ctx), stage_form=not spec_form))
    # stream discipline
    legacy = isinstance(stage, _SpecStage) and not stage.spec.accepts_ctx
    add(_stream_check(legacy, w))
    # determinism per seed
    fp1 = tg.generate().fingerprint()
    fp2 = TrackGenerator(cfg, generator=spec_or_stage).generate().fingerprint()
    other = dataclasses.replace(cfg, seed=other_seed(cfg.seed))
    fp3 = TrackGenerator(other, generator=spec_or_stage).generate().fingerprint()
    add(_determinism_check(fp1, fp2, fp3))

    # provides
    if "ccw" in stage.provides:
        res = tg.result.numpy()
        wrong = [e for e in range(E) if res["valid"][e] and res["turning"][e] != 1]
        add(
            Check(
                "provides ccw",
                not wrong,
                f"envs {wrong[:8]} turn clockwise" if wrong else "every valid env turns +1",
            )
        )
    return report


def check_all(**kwargs: Any) -> dict[str, ConformanceReport]:
    """Runs ``check_generator`` on every registered generator; returns reports by name."""
    from .plugin import registry

    return {
        n: check_generator(registry.get("generator", n), **kwargs)
        for n in registry.available("generator")
    }


def _params_check(pcls: Any, spec_form: str | None) -> Check:
    """The "params" check: a Params class (or none) whose schema is JSON; no dynamic field in
    a ``spec_form`` ("GeneratorSpec" or "GateGeneratorSpec"), which has no ``b.param``."""
    if pcls is None:
        return Check("params", True, "no Params class")
    if not (isinstance(pcls, type) and issubclass(pcls, Params)):
        return Check("params", False, f"expected a Params subclass, got {pcls!r}")
    problems = []
    try:
        json.dumps(pcls.describe())
    except (TypeError, ValueError) as exc:
        problems.append(f"describe() is not JSON-serializable: {exc}")
    if spec_form and pcls.dynamic_fields():
        problems.append(f"dynamic fields {pcls.dynamic_fields()} in a {spec_form} (use a Stage)")
    return Check("params", not problems, "; ".join(problems) or f"{len(pcls.fields())} fields")


def _capture_check(
    host: bool, w: Any, ctx: Any, enqueue: Callable[[], None], stage_form: bool = True
) -> Check:
    """The "no allocation or readback" check: none seen by ``w``, and ``enqueue`` records; a
    HOST Stage (``stage_form``) reads back only inside ``ctx.host()``."""
    if host:
        if stage_form and w.unhosted:
            return Check(
                "no allocation or readback",
                False,
                f"{w.unhosted} readback(s) outside ctx.host(): a HOST Stage reads the device "
                "only inside `with ctx.host():`",
            )
        return Check("no allocation or readback", True, "HOST generator: runs eagerly each call")
    problems = []
    if w.allocs:
        problems.append(f"{w.allocs} allocation(s)")
    if w.readbacks:
        problems.append(f"{w.readbacks} readback(s)")
    try:
        ctx.record(enqueue)
    except Exception as exc:  # reported
        problems.append(f"recording failed: {type(exc).__name__}: {exc}")
    return Check("no allocation or readback", not problems, "; ".join(problems) or "records")


def _stream_check(legacy: bool, w: Any) -> Check:
    """The stream discipline check: every launch, copy and fill went through ``ctx``."""
    if legacy:
        return Check(
            "stream discipline",
            True,
            f"legacy plugin (accepts_ctx=False): {w.direct} direct call(s) run inside "
            "ctx.scope(); set accepts_ctx=True",
        )
    names = sorted(set(w.direct_names))
    return Check(
        "stream discipline",
        w.direct == 0,
        f"{w.direct} call(s) bypassed ctx: {names}" if w.direct else "all work via ctx",
    )


def _determinism_check(fp1: str, fp2: str, fp3: str) -> Check:
    """Same config, same bytes (``fp1 == fp2``); another seed, other bytes (``fp1 != fp3``)."""
    det = []
    if fp1 != fp2:
        det.append("same config gave different bytes")
    if fp1 == fp3:
        det.append("another seed gave the same bytes")
    return Check("determinism", not det, "; ".join(det) or f"sha256 {fp1[:16]}")


from .gates.testing import check_all_gates, check_gate_generator  # noqa: E402  (uses this module)

__all__ = [
    "Check",
    "ConformanceError",
    "ConformanceReport",
    "check_all",
    "check_all_gates",
    "check_gate_generator",
    "check_generator",
]
