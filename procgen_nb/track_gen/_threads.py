"""Splitting a CPU call's envs across worker threads (``PROCGEN_NB_THREADS``).

Warp runs a CPU launch, and a CPU replay, on the calling thread and releases the GIL while
it runs (its ``ctypes.CDLL`` calls), and each replay packs its kernel arguments on its own
stack (``apic_cpu_replay_stream``). So a call whose envs are split across T threads can use
T cores: each part is a ``TrackGenerator`` over a contiguous share of the envs that replays
its own recording (``_ThreadSplit`` holds them and runs a call). Every per-env array of a
part is a view of its parent's (``_arrays._Arrays.share_of``: the seeds, the active mask,
the attempts, the user mask, the tracks and their attributes, valid, reason, and the
scratch of every step, a Stage's ``b.scratch`` buffers included), and it shares its
parent's one-element buffers (the epoch, the mode, the dynamic Params fields); so a split
generator allocates what a one-thread one does, the parent writes the call's inputs as in
a one-thread call, the parts write their shares of the outputs in place, the parent counts
the valid envs, and nothing is gathered. The bytes are those of one thread: every kernel works per env (or per point of
an env), and a part runs the same kernels over its envs.

The traffic counters count a split call as the call it splits: the parts' contexts are
quiet, and the caller counts part 0's recordings once (``exec.count_replay``).

Only replays run concurrently: a part's first call of a mode records, and Warp's CPU
capture is global to the device in Python (``Device.is_capturing``), so until every part
has recorded the mode the parts run one after the other. Modules are loaded by the
parent's warm-up (the first call, eager) before any part exists, and that warm-up is the
only one: a part makes none. A ``GeneratorSpec`` is one generator and never splits (one
``alloc_scratch`` and one ``generate`` over every env, as its contract says).
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ..errors import GeneratorError, ParamsError, ProcgenError
from .exec import count_replay
from .ops import _kernels as _k

if TYPE_CHECKING:
    from .config import TrackGenConfig

#: the fewest points (envs x ``num_points``) per worker thread of a split call. Below it a
#: split does not pay: each split call costs 25-40 us of the caller's CPU (the pool's
#: hand-off, the wait, the valid count) and, with the other cores busy, a worker waits for
#: one; measured (docs/track_gen.md, "Worker threads"), 16,384 points a thread gives
#: 1.82-1.88x on idle cores (thread CPU times) and loses 2-5% on busy ones
MIN_POINTS_PER_THREAD = 16384
#: the fewest envs per worker thread of a split call
MIN_ENVS_PER_THREAD = 8
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked child (a ``ProcessPoolExecutor`` worker of ``dataset``) has none of the
    parent's pool threads: it starts a pool of its own at its first split call."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def cores() -> int:
    """The cores this process may run on (``os.sched_getaffinity``, else ``os.cpu_count``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


#: the thread count ``threads_override`` sets for the calls of one context (None: unset)
_override: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "procgen_nb_threads", default=None
)


@contextlib.contextmanager
def threads_override(threads: int | None) -> Iterator[None]:
    """Inside the block, calls made in this context (this thread, or a copy of its
    context) split across ``threads`` threads whatever ``PROCGEN_NB_THREADS`` says; None
    changes nothing. Other threads and the process environment are not touched."""
    if threads is None:
        yield
        return
    token = _override.set(int(threads))
    try:
        yield
    finally:
        _override.reset(token)


def threads_wanted() -> int:
    """The worker threads of a CPU call: the context's ``threads_override``, else
    ``PROCGEN_NB_THREADS``, or the cores available (``cores()``) when it is unset or empty.
    1 never splits.

    Raises:
        ParamsError: a value that is not an integer >= 1.
    """
    forced = _override.get()
    if forced is not None:
        return forced
    raw = os.environ.get("PROCGEN_NB_THREADS", "").strip()
    if not raw:
        return cores()
    try:
        t = int(raw)
    except ValueError:
        t = 0
    if t < 1:
        raise ParamsError(f"PROCGEN_NB_THREADS: expected an integer >= 1, got {raw!r}")
    return t


def threads_for(E: int, N: int, wanted: int | None = None) -> int:
    """The threads a CPU call of ``E`` envs of ``N`` points splits across (1: no split):
    ``wanted`` (``threads_wanted()`` when None), fewer when a thread would get under
    ``MIN_ENVS_PER_THREAD`` envs or ``MIN_POINTS_PER_THREAD`` points.

    Raises:
        ParamsError: a ``PROCGEN_NB_THREADS`` that is not an integer >= 1.
    """
    T = wanted or threads_wanted()
    return max(1, min(T, E // MIN_ENVS_PER_THREAD, E * N // MIN_POINTS_PER_THREAD))


def _get_pool(workers: int) -> ThreadPoolExecutor:
    """The process's persistent pool, grown (replaced) when it has fewer than ``workers``."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers < workers:  # noqa: SLF001
            old, _pool = (
                _pool,
                ThreadPoolExecutor(
                    max_workers=max(workers, cores() - 1), thread_name_prefix="procgen_nb"
                ),
            )
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def _part_error(i: int, exc: BaseException) -> BaseException:
    """The error a failed part raises in the caller: the package's own errors as they are,
    anything else as a ``GeneratorError`` naming the worker (the original as its cause)."""
    if isinstance(exc, ProcgenError) or not isinstance(exc, Exception):
        return exc
    err = GeneratorError(f"worker thread {i} of a split call: {type(exc).__name__}: {exc}")
    err.__cause__ = exc
    return err


def run_side_by_side(calls: list[Callable[[], Any]]) -> list[tuple[int, BaseException]]:
    """Runs ``calls[0]`` in this thread and the others in the shared pool, each in a copy of
    this thread's context (so traffic collectors count them); a call the pool refuses (shut
    down: interpreter exit, or replaced by a larger one) runs here. Waits for every call and
    returns the ``(index, error)`` of those that failed, in call order."""
    pool = _get_pool(len(calls) - 1)
    futs: list[Future[Any]] = []
    for call in calls[1:]:
        try:
            futs.append(pool.submit(contextvars.copy_context().run, call))
        except RuntimeError:  # the pool is shut down: run it here
            f: Future[Any] = Future()
            try:
                f.set_result(call())
            except BaseException as exc:  # noqa: BLE001  (returned below)
                f.set_exception(exc)
            futs.append(f)
    errors: list[tuple[int, BaseException]] = []
    try:
        calls[0]()
    except BaseException as exc:  # noqa: BLE001  (returned, after the others)
        errors.append((0, exc))
    for i, f in enumerate(futs, 1):
        exc = f.exception()  # waits for the call
        if exc is not None:
            errors.append((i, exc))
    return errors


class _ThreadSplit:
    """The worker-thread parts of a split CPU call, and how a call runs them.

    Args:
        parts: the parts, in env order: generators over contiguous shares of the envs whose
            arrays are views of the caller's (``TrackGenerator._part_of``).
        run_part: ``(part, mode) -> None``: runs the call ``mode`` as one part (the
            generator's own one-thread call).
    """

    def __init__(self, parts: list[Any], run_part: Callable[[Any, str], Any]):
        self.parts = parts
        self._run_part = run_part

    @classmethod
    def build(
        cls,
        cfg: TrackGenConfig,
        make_part: Callable[[int, TrackGenConfig], Any],
        run_part: Callable[[Any, str], Any],
    ) -> _ThreadSplit | None:
        """One part per worker thread over a contiguous share of the envs, when each of
        ``threads_wanted()`` threads gets at least ``MIN_ENVS_PER_THREAD`` envs and
        ``MIN_POINTS_PER_THREAD`` points (fewer threads otherwise); None when fewer than
        two threads remain.

        Args:
            cfg: the caller's resolved config.
            make_part: ``(offset, config) -> part``, ``config`` the share's (its envs and
                their seeds).
            run_part: ``(part, mode) -> None``, a part's one-thread call (``run`` calls it).
        """
        E = cfg.num_envs
        T = threads_for(E, cfg.num_points)
        if T < 2:
            return None
        cut = [E * i // T for i in range(T + 1)]
        seeds = cfg.env_seed_values()
        parts = []
        for a, b in zip(cut, cut[1:], strict=False):
            c = copy.copy(cfg)
            c.num_envs, c.env_seeds = b - a, seeds[a:b]
            parts.append(make_part(a, c))
        return cls(parts, run_part)

    def run(self, mode: str, result: Any) -> None:
        """Runs the call ``mode`` as the parts (``run_part`` each), then counts the valid
        envs of ``result`` into its ``valid_count``.

        The first part runs in this thread, the others in the shared pool, each in a copy of
        this thread's context (so traffic collectors count them). Every part is waited for
        before an error is raised: the first failed part's (see ``_part_error``).
        """
        parts, run_part = self.parts, self._run_part
        errors: list[tuple[int, BaseException]] = []
        recorded = mode not in parts[0].recordings
        if not all(mode in p.recordings for p in parts):
            for i, p in enumerate(parts):  # a first call records: one part after the other
                try:
                    run_part(p, mode)
                except BaseException as exc:  # noqa: BLE001  (raised below, after the others)
                    errors.append((i, exc))
                    break
        else:
            errors = run_side_by_side([lambda p=p: run_part(p, mode) for p in parts])
        if errors:
            i, exc = errors[0]
            raise _part_error(i, exc)
        quiet = parts[0].ctx  # the count is part of the call's traffic, counted below
        quiet.launch(_k._count_k, 1, [result.valid, result.num_envs, result.valid_count])
        for rec in parts[0].recordings[mode]:  # the traffic of the call it splits, once
            count_replay(rec, recorded)


__all__ = [
    "MIN_ENVS_PER_THREAD",
    "MIN_POINTS_PER_THREAD",
    "_ThreadSplit",
    "cores",
    "run_side_by_side",
    "threads_for",
    "threads_wanted",
]
