"""Splitting a CPU call's envs across worker threads (``PROCGEN_NB_THREADS``).

Warp runs a CPU launch on one thread and releases the GIL while it runs, so a call whose
envs are split across T threads (each part a ``TrackGenerator`` over a contiguous share of
the envs, replaying its own recording) can use T cores; the bytes are those of one thread.
"""

from __future__ import annotations

import contextvars
import copy
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ..errors import ParamsError
from .exec import LaunchContext
from .ops import _kernels as _k

if TYPE_CHECKING:
    from ._result import TrackResult
    from .config import TrackGenConfig
    from .pipeline import TrackGenerator

#: the fewest envs per worker thread of a split call (below it a split does not pay)
MIN_ENVS_PER_THREAD = 256
_pool: ThreadPoolExecutor | None = None


def threads_wanted() -> int:
    """The worker threads of a CPU call: ``PROCGEN_NB_THREADS`` (1, no split, when unset).

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


def in_threads(parts: list[Any], fn: Callable[[Any, int], None], mode: str) -> None:
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


def build_parts(tg: TrackGenerator, cfg: TrackGenConfig) -> list[TrackGenerator]:
    """One TrackGenerator per worker thread over a contiguous share of the envs (with
    those envs' seeds), when ``threads_wanted()`` > 1 on the CPU; none otherwise."""
    E = cfg.num_envs
    T = min(tg._threads or threads_wanted(), E // MIN_ENVS_PER_THREAD)
    if T < 2 or tg.ctx.device != "cpu" or tg.host_driven or tg._override is not None:
        return []
    seeds = cfg.env_seed_values()
    cut = [E * i // T for i in range(T + 1)]
    parts = []
    for a, b in zip(cut, cut[1:], strict=False):
        c = copy.copy(cfg)
        c.num_envs, c.env_seeds = b - a, seeds[a:b]
        part = type(tg).__new__(type(tg))
        part.ctx, part._override, part._threads = LaunchContext("cpu"), None, 1
        part._setup(c)
        part._offset = a
        parts.append(part)
    return parts


def gather(tg: TrackGenerator) -> TrackResult:
    """Copies every part's result into ``tg``'s arrays and counts the valid."""
    res, N, ctx = tg.result, tg.config.num_points, tg.ctx
    for p in tg._parts:
        a, n, r = p._offset, p.config.num_envs, p.result
        for name in ("valid", "reason", "crossings", "turning"):
            ctx.copy(getattr(res, name), getattr(r, name), a, 0, n)
        ctx.copy(tg.seeds, p.seeds, a, 0, n)
        ctx.copy(res.xy, r.xy, a * N, 0, n * N)
        for name, arr in tg._attrs.items():
            ctx.copy(arr, p._attrs[name], a * N, 0, n * N)
    ctx.launch(_k._count_k, 1, [res.valid, tg.config.num_envs, res.valid_count])
    return res


__all__ = ["MIN_ENVS_PER_THREAD", "build_parts", "gather", "in_threads", "threads_wanted"]
