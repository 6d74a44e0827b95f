"""The conformance kit's core, shared by ``check_generator`` and ``check_gate_generator``.

Both kits build the generator under test, make one call of it alone with its outputs
poisoned (what it did not write stays poison), watch that call (allocations, readbacks,
device work that bypassed ``ctx``), and compare runs: the same config twice, another seed,
and each env of the batch against the same seed generated alone. This module holds the
pieces they share: the report types, the watch, the poisoned call, the capture, stream,
determinism and batch-independence checks, and ``Kit.guard``, which turns an exception
raised inside a check into a failed check of the report: a kit reports, it never raises.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import warp as wp

from ..errors import ProcgenError
from ..params import Params
from . import exec as _exec


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
        name: the generator's name.
        form: ``"Stage"``, ``"GeneratorSpec"`` or ``"GateGeneratorSpec"``.
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


def _raised(exc: BaseException) -> str:
    return f"raised {type(exc).__name__}: {exc}"


class Kit:
    """One conformance run: its report, and the guard every check runs under.

    Args:
        name: the generator's name. form: its form, as ``ConformanceReport.form``.
    """

    def __init__(self, name: str, form: str):
        self.report = ConformanceReport(name=name, form=form)

    def add(self, check: Check) -> bool:
        """Appends ``check`` to the report; returns whether it passed."""
        self.report.checks.append(check)
        return check.passed

    def guard(self, name: str, check: Callable[[], Check]) -> bool:
        """Runs ``check()`` and adds its result; an exception it raises (any ``Exception``)
        becomes the failed check ``name`` saying what was raised. Returns whether it passed."""
        return self.checked(name, check).passed

    def checked(self, name: str, check: Callable[[], Check]) -> Check:
        """``guard`` that returns the ``Check`` it added."""
        try:
            found = check()
        except Exception as exc:  # noqa: BLE001  (a kit reports, it never raises)
            found = Check(name, False, _raised(exc))
        self.add(found)
        return found


class Watch:
    """What a watched call did: allocations, readbacks (and those outside ``ctx.host()``),
    and device work that did not go through a ctx (with the names of the calls)."""

    def __init__(self) -> None:
        self.allocs = 0
        self.readbacks = 0
        self.unhosted = 0
        self.direct = 0
        self.direct_names: list[str] = []


@contextlib.contextmanager
def watching(device: str, ctx: Any = None) -> Iterator[Watch]:
    """Counts, inside the block, allocations on ``device``, host reads (and those outside
    ``ctx.host()``), and ``wp.launch`` / ``wp.copy`` / ``fill_`` / ``zero_`` calls not
    emitted through a ctx. Everything patched is restored on exit."""
    w = Watch()
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
        if ctx is not None and not ctx.in_host:
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


def poisoned_call(
    ctx: Any,
    enqueue: Callable[[Any], None],
    host: bool,
    poison: Sequence[tuple[wp.array, Any]] = (),
) -> tuple[Watch, Exception | None]:
    """Fills each ``(array, value)`` of ``poison``, then makes the generator's call
    ``enqueue(ctx)`` alone, watched (under ``ctx.strict()`` unless ``host``).

    Returns:
        The call's ``Watch``, and the exception it raised (None when it returned).
    """
    for arr, value in poison:
        ctx.fill(arr, value)
    err: Exception | None = None
    with watching(ctx.device, ctx) as w:
        try:
            if host:
                enqueue(ctx)
            else:
                with ctx.strict():
                    enqueue(ctx)
        except Exception as exc:  # noqa: BLE001  (reported by the caller)
            err = exc
    return w, err


def params_check(pcls: Any, spec_form: str | None) -> Check:
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


def capture_check(
    host: bool, w: Watch, ctx: Any, enqueue: Callable[[], None], stage_form: bool = True
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
    except Exception as exc:  # noqa: BLE001  (reported)
        problems.append(f"recording failed: {type(exc).__name__}: {exc}")
    return Check("no allocation or readback", not problems, "; ".join(problems) or "records")


def stream_check(legacy: bool, w: Watch) -> Check:
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


def determinism_check(fingerprint: Callable[[Any], str], cfg: Any, other: Any) -> Check:
    """Same config, same bytes; another seed, other bytes.

    Args:
        fingerprint: ``(config) -> str``, the fingerprint of a steady call (a recorded one
            where the generator records) of a new generator built from ``config``.
        cfg: the kit's config. other: the same config with another seed.
    """
    problems = []
    fps = []
    for label, c in (("first", cfg), ("second", cfg), ("other seed", other)):
        try:
            fps.append(fingerprint(c))
        except Exception as exc:  # noqa: BLE001  (reported)
            problems.append(f"{label} call {_raised(exc)}")
            fps.append(None)
    fp1, fp2, fp3 = fps
    if fp1 is not None and fp2 is not None and fp1 != fp2:
        problems.append("same config gave different bytes")
    if fp1 is not None and fp1 == fp3:
        problems.append("another seed gave the same bytes")
    return Check("determinism", not problems, "; ".join(problems) or f"sha256 {fp1[:16]}")


#: the most envs of a batch the batch-independence check generates alone (a larger batch
#: is sampled: env 0, env 1, the last env and others spread between them)
MAX_ALONE = 16


def alone_envs(num_envs: int) -> list[int]:
    """The envs of a batch of ``num_envs`` that ``batch_check`` compares: every env up to
    ``MAX_ALONE``, else ``MAX_ALONE`` of them spread over the batch (0, 1 and the last
    included)."""
    if num_envs <= MAX_ALONE:
        return list(range(num_envs))
    spread = np.linspace(0, num_envs - 1, MAX_ALONE - 1).round().astype(int)
    return sorted({0, 1, *spread.tolist()})


def batch_check(
    batch: Mapping[str, np.ndarray],
    alone: Callable[[int], Mapping[str, np.ndarray]],
    num_envs: int,
) -> Check:
    """The "batch independence" check: each env of a batch (``alone_envs``) equals, byte for
    byte, the same seed generated alone (a batch of one).

    Args:
        batch: the batch's outputs by name, each with the env as its first axis.
        alone: ``(e) -> outputs`` of a batch of one env with env ``e``'s seed.
        num_envs: the batch's size.
    """
    envs = alone_envs(num_envs)
    differ: list[str] = []
    for e in envs:
        one = alone(e)
        names = [k for k in batch if not np.array_equal(batch[k][e], one[k][0], equal_nan=True)]
        if names:
            differ.append(f"env {e} ({', '.join(names)})")
    return Check(
        "batch independence",
        not differ,
        f"differs from its seed generated alone: {'; '.join(differ[:4])}"
        + (f" and {len(differ) - 4} more" if len(differ) > 4 else "")
        if differ
        else f"each of {len(envs)} envs equals its seed generated alone"
        + ("" if len(envs) == num_envs else f" ({len(envs)} of {num_envs} checked)"),
    )


def unwritten(rows: np.ndarray, what: str, e: int, count: int) -> str | None:
    """The finding for env ``e`` whose first ``count`` rows (of ``rows``, ``[n, ...]``) must
    have been written over a NaN poison and be finite; None when they are."""
    head = rows[:count].reshape(count, -1)
    nan = int(np.isnan(head).any(axis=1).sum())
    if nan:
        return f"env {e}: {nan} of {count} {what} not written (NaN poison left)"
    if not np.isfinite(head).all():
        return f"env {e}: non-finite {what}"
    return None


__all__ = [
    "Check",
    "ConformanceError",
    "ConformanceReport",
    "Kit",
    "MAX_ALONE",
    "Watch",
    "alone_envs",
    "batch_check",
    "capture_check",
    "determinism_check",
    "params_check",
    "poisoned_call",
    "stream_check",
    "unwritten",
    "watching",
]
