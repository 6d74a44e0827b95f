"""How ``dataset.write`` runs its shards: in this process or on an executor.

A task is one shard by value (``task``: picklable, module-level), returning its Parquet
bytes; ``PROCGEN_NB_THREADS`` is set while it runs when a thread count is asked for.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import json
import os
import threading
from typing import Any

from ..errors import ParamsError


def shard_range(count: int, shard_size: int, index: int) -> tuple[int, int]:
    start = index * shard_size
    return start, min(count, start + shard_size)


def task(
    spec_json: str, index: int, start: int, stop: int, threads: int | None = None
) -> tuple[int, bytes, str]:
    """What an executor runs: one shard, by value (picklable, module-level); with
    ``threads``, its CPU calls split across that many threads (``PROCGEN_NB_THREADS``)."""
    from ..device import get_device
    from . import dataset

    device = get_device()
    with _threads_env(threads):
        return index, dataset.shard_bytes(json.loads(spec_json), start, stop), device


_env_lock = threading.Lock()
_env_users: list[Any] = [0, None]  # tasks inside _threads_env now, the value before them


@contextlib.contextmanager
def _threads_env(threads: int | None):
    """Sets ``PROCGEN_NB_THREADS`` while tasks of this process run (the first task's value;
    the former value back when the last one ends); None leaves it alone."""
    if threads is None:
        yield
        return
    with _env_lock:
        if _env_users[0] == 0:
            _env_users[1] = os.environ.get("PROCGEN_NB_THREADS")
            os.environ["PROCGEN_NB_THREADS"] = str(threads)
        _env_users[0] += 1
    try:
        yield
    finally:
        with _env_lock:
            _env_users[0] -= 1
            if _env_users[0] == 0:
                if _env_users[1] is None:
                    os.environ.pop("PROCGEN_NB_THREADS", None)
                else:
                    os.environ["PROCGEN_NB_THREADS"] = _env_users[1]


def executor_of(executor: Any, scheduler: Any) -> tuple[Any, Any]:
    """Returns (executor, client to close) from the arguments of ``write``."""
    if scheduler is not None and executor is not None:
        raise ParamsError("dataset.write: expected executor= or scheduler=, got both")
    if scheduler is not None:
        from distributed import Client

        if isinstance(scheduler, Client):
            return scheduler.get_executor(), None
        if not isinstance(scheduler, str):
            raise ParamsError(
                f"dataset.write scheduler: expected 'tcp://host:port' or a distributed.Client, "
                f"got {scheduler!r}"
            )
        client = Client(scheduler)
        return client.get_executor(), client
    if executor is None or isinstance(executor, cf.Executor):
        return executor, None
    if hasattr(executor, "get_executor"):  # a distributed.Client
        return executor.get_executor(), None
    raise ParamsError(
        f"dataset.write executor: expected a concurrent.futures.Executor, a distributed.Client "
        f"or None, got {executor!r}"
    )


def run(ex: Any, spec_json: str, todo: list[int], count: int, shard_size: int, threads: int | None):
    """Yields (index, bytes, device) as shards finish (in order when in-process)."""
    if ex is None:
        for i in todo:
            yield task(spec_json, i, *shard_range(count, shard_size, i), threads)
        return
    futures = [
        ex.submit(task, spec_json, i, *shard_range(count, shard_size, i), threads) for i in todo
    ]
    try:
        for fut in cf.as_completed(futures):
            yield fut.result()
    finally:
        for fut in futures:
            fut.cancel()


__all__ = ["executor_of", "run", "shard_range", "task"]
