"""How ``dataset.write`` runs its shards: in this process or on an executor.

A task is one shard by value (``task``: picklable, module-level). Where its worker runs on
this machine it writes the shard file itself and returns the hash (no bytes to send back,
no writing left to this process); elsewhere it returns the bytes and this process writes
them. ``PROCGEN_NB_THREADS`` is set while it runs when a thread count is asked for.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import hashlib
import json
import os
import socket
import threading
from typing import Any

from ..errors import ParamsError


def shard_range(count: int, shard_size: int, index: int) -> tuple[int, int]:
    start = index * shard_size
    return start, min(count, start + shard_size)


def task(
    spec_json: str,
    index: int,
    start: int,
    stop: int,
    threads: int | None = None,
    out: str | None = None,
) -> tuple[int, bytes | None, str, str, int]:
    """What an executor runs: one shard, by value (picklable, module-level). Returns
    ``(index, bytes, device, sha256, size)``; with ``out`` (a folder this process sees as
    the caller does) it writes the shard there itself, atomically, and returns no bytes.
    With ``threads``, its CPU calls split across that many threads (``PROCGEN_NB_THREADS``).
    """
    from pathlib import Path

    from ..device import get_device
    from . import dataset

    device = get_device()
    with _threads_env(threads):
        data = dataset.shard_bytes(json.loads(spec_json), start, stop)
    digest = hashlib.sha256(data).hexdigest()
    if out is None:
        return index, data, device, digest, len(data)
    dataset._atomic_write(Path(out) / dataset._shard_name(index), data)
    return index, None, device, digest, len(data)


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


def executor_of(executor: Any, scheduler: Any) -> tuple[Any, Any, bool]:
    """Returns (executor, client to close, whether its workers run on this machine) from the
    arguments of ``write``: a process or thread pool does, a Dask cluster does when every
    worker's address is one of this machine's, any other executor is assumed not to."""
    if scheduler is not None and executor is not None:
        raise ParamsError("dataset.write: expected executor= or scheduler=, got both")
    if scheduler is not None:
        from distributed import Client

        if isinstance(scheduler, Client):
            return scheduler.get_executor(), None, _local(scheduler)
        if not isinstance(scheduler, str):
            raise ParamsError(
                f"dataset.write scheduler: expected 'tcp://host:port' or a distributed.Client, "
                f"got {scheduler!r}"
            )
        client = Client(scheduler)
        return client.get_executor(), client, _local(client)
    if executor is None:
        return None, None, True
    if isinstance(executor, cf.ProcessPoolExecutor | cf.ThreadPoolExecutor):
        return executor, None, True
    if isinstance(executor, cf.Executor):
        return executor, None, False
    if hasattr(executor, "get_executor"):  # a distributed.Client
        return executor.get_executor(), None, _local(executor)
    raise ParamsError(
        f"dataset.write executor: expected a concurrent.futures.Executor, a distributed.Client "
        f"or None, got {executor!r}"
    )


def _local(client: Any) -> bool:
    """Whether every worker of a Dask ``client`` listens on an address of this machine
    (loopback, or this host's name or addresses: looked up only when needed)."""
    from urllib.parse import urlsplit

    try:
        hosts = {urlsplit(a).hostname for a in client.scheduler_info()["workers"]}
        mine = {"127.0.0.1", "::1", "localhost"}
        if hosts - mine:
            name = socket.gethostname()
            mine |= {name, *socket.gethostbyname_ex(name)[2]}
    except Exception:  # noqa: BLE001  (unknown: send the bytes back)
        return False
    return bool(hosts) and hosts <= mine


def run(
    ex: Any,
    spec_json: str,
    todo: list[int],
    count: int,
    shard_size: int,
    threads: int | None,
    out: str | None,
):
    """Yields ``task``'s tuples as shards finish (in order when in-process)."""
    if ex is None:
        for i in todo:
            yield task(spec_json, i, *shard_range(count, shard_size, i), threads, out)
        return
    futures = [
        ex.submit(task, spec_json, i, *shard_range(count, shard_size, i), threads, out)
        for i in todo
    ]
    try:
        for fut in cf.as_completed(futures):
            yield fut.result()
    finally:
        for fut in futures:
            fut.cancel()


__all__ = ["executor_of", "run", "shard_range", "task"]
