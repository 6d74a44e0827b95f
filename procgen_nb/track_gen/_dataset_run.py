"""How ``dataset.write`` runs its shards: in this process or on an executor.

A task is one or more consecutive shards by value (``tasks``: picklable, module-level),
each shard still its own file and manifest entry. Where its worker runs on this machine it
writes the shard files itself and returns their hashes (no bytes to send back, no writing
left to this process); elsewhere it returns the bytes and this process writes them.
With a thread count, its calls split across that many threads (``_threads.threads_override``:
this context only; the process environment is left alone).

On an executor a task makes several shards when there are many (``shards_per_task``: up to
``TASK_TRACKS`` tracks, at least two tasks per worker slot): measured on a 2-core machine
with 2 Dask workers and shards of 1024 tracks, a task costs Dask 3-4 ms beyond its shard
(the scheduler, the client and the worker's event loop share the cores with the shards), so
16 one-shard tasks took 0.50-0.53 s where 4 four-shard tasks took 0.44-0.46 s, as a process
pool does.

A task is handed the function that makes a shard's bytes (``make=dataset.shard_bytes``,
picklable by reference): this module is below ``dataset`` and never imports it.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import hashlib
import json
import os
import socket
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ParamsError
from ._threads import threads_override

#: tracks a task on an executor makes, at most (whole shards; at least one shard a task)
TASK_TRACKS = 4096
#: the most tracks a dataset holds (a track's env seed is ``seed + index`` in 32 bits)
MAX_TRACKS = 1 << 31
#: the most shards a dataset holds (the manifest lists every one, rewritten as each ends)
MAX_SHARDS = 1 << 16
#: the most tracks a shard holds (one generator call: ``TrackGenConfig.num_envs``' bound)
MAX_SHARD_SIZE = 1 << 24


def check_args(
    count: Any, shard_size: Any, threads: Any, shards_per_task: Any, workers_write: Any
) -> tuple[int, int, int | None, int | None]:
    """``dataset.write``'s counts as ints, each refused with ``ParamsError`` naming it, the
    value and what is accepted: returns ``(count, shard_size, threads, shards_per_task)``."""
    count, shard_size = _positive_int("count", count), _positive_int("shard_size", shard_size)
    if count > MAX_TRACKS:
        raise ParamsError(f"dataset.write count: expected at most {MAX_TRACKS}, got {count}")
    least = -(-count // MAX_SHARDS)
    if not least <= shard_size <= MAX_SHARD_SIZE:
        raise ParamsError(
            f"dataset.write shard_size: expected {least} to {MAX_SHARD_SIZE} for {count} "
            f"tracks (at most {MAX_SHARDS} shards), got {shard_size}"
        )
    threads = None if threads is None else _positive_int("threads", threads)
    if shards_per_task is not None:
        shards_per_task = _positive_int("shards_per_task", shards_per_task)
    if workers_write is not None and not isinstance(workers_write, bool):
        raise ParamsError(
            f"dataset.write workers_write: expected None or a bool, got {workers_write!r}"
        )
    return count, shard_size, threads, shards_per_task


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParamsError(f"dataset.write {name}: expected an integer >= 1, got {value!r}")
    return int(value)


def shards_per_task(slots: int | None, todo: int, shard_size: int) -> int:
    """Shards a task on an executor makes: enough for ``TASK_TRACKS`` tracks, but at least two
    tasks for each of the executor's ``slots`` (its worker threads or processes; None when
    unknown: one shard a task), so that a slow worker leaves work to the others."""
    if not slots:
        return 1
    return max(1, min(TASK_TRACKS // shard_size, todo // (2 * slots)))


def shard_range(count: int, shard_size: int, index: int) -> tuple[int, int]:
    start = index * shard_size
    return start, min(count, start + shard_size)


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")  # hidden
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _shard_name(index: int) -> str:
    return f"shard-{index:06d}.parquet"


#: what makes a shard's bytes: ``dataset.shard_bytes(spec, start, stop)``
Make = Callable[[dict[str, Any], int, int], bytes]


def task(
    spec_json: str,
    index: int,
    start: int,
    stop: int,
    threads: int | None = None,
    out: str | None = None,
    *,
    make: Make,
) -> tuple[int, bytes | None, str, str, int]:
    """What an executor runs: one shard, by value (picklable, module-level), its bytes made
    by ``make`` (``dataset.shard_bytes``). Returns
    ``(index, bytes, device, sha256, size)``; with ``out`` (a folder this process sees as
    the caller does) it writes the shard there itself, atomically, and returns no bytes.
    With ``threads``, its CPU calls split across that many threads (``threads_override``).
    """
    from ..device import get_device

    device = get_device()
    with threads_override(threads):
        data = make(json.loads(spec_json), start, stop)
    digest = hashlib.sha256(data).hexdigest()
    if out is None:
        return index, data, device, digest, len(data)
    _atomic_write(Path(out) / _shard_name(index), data)
    return index, None, device, digest, len(data)


def tasks(
    spec_json: str,
    indices: list[int],
    count: int,
    shard_size: int,
    threads: int | None = None,
    out: str | None = None,
    *,
    make: Make,
) -> list[tuple[int, bytes | None, str, str, int]]:
    """What an executor runs: ``task`` for each of the shards ``indices``, in order."""
    return [
        task(spec_json, i, *shard_range(count, shard_size, i), threads, out, make=make)
        for i in indices
    ]


def executor_of(executor: Any, scheduler: Any) -> tuple[Any, Any, bool, int | None]:
    """Returns (executor, client to close, whether its workers run on this machine, its
    worker slots or None when unknown) from the arguments of ``write``: a process or thread
    pool runs on this machine, a Dask cluster does when every worker's address is one of
    this machine's, any other executor is assumed not to.

    Raises:
        ParamsError: both given, an executor or scheduler of another type, or a scheduler
            address that is malformed or where no scheduler answers (``_connect``).
    """
    if scheduler is not None and executor is not None:
        raise ParamsError("dataset.write: expected executor= or scheduler=, got both")
    if scheduler is not None:
        from distributed import Client

        if isinstance(scheduler, Client):
            return scheduler, None, _local(scheduler), _slots(scheduler)
        if not isinstance(scheduler, str):
            raise ParamsError(
                f"dataset.write scheduler: expected 'tcp://host:port' or a distributed.Client, "
                f"got {scheduler!r}"
            )
        client = _connect(Client, scheduler)
        return client, client, _local(client), _slots(client)
    if executor is None:
        return None, None, True, None
    if isinstance(executor, cf.ProcessPoolExecutor | cf.ThreadPoolExecutor):
        return executor, None, True, getattr(executor, "_max_workers", None)
    if isinstance(executor, cf.Executor):
        return executor, None, False, None
    if hasattr(executor, "get_executor"):  # a distributed.Client
        return executor, None, _local(executor), _slots(executor)
    raise ParamsError(
        f"dataset.write executor: expected a concurrent.futures.Executor, a distributed.Client "
        f"or None, got {executor!r}"
    )


def _connect(client_type: Any, address: str) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``, within Dask's connect
    timeout (``distributed.comm.timeouts.connect``).

    Raises:
        ParamsError: naming ``scheduler`` and ``address``: not an address Dask reads (no
            port, an unknown protocol) or no scheduler answering there.
    """
    try:
        return client_type(address)
    except (ValueError, OSError) as exc:  # TimeoutError is an OSError
        raise ParamsError(
            f"dataset.write scheduler: expected the address of a running Dask scheduler "
            f"('tcp://host:port'), got {address!r} ({type(exc).__name__}: {exc})"
        ) from exc


def _slots(client: Any) -> int | None:
    """The worker threads of a Dask ``client``'s cluster now (None when it cannot say)."""
    try:
        return sum(client.nthreads().values()) or None
    except Exception:  # noqa: BLE001  (unknown: one shard a task)
        return None


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
    per_task: int = 1,
    *,
    make: Make,
):
    """Yields ``task``'s tuples as shards finish (in order when in-process); on an executor,
    ``per_task`` consecutive shards of ``todo`` a task (``tasks``)."""
    if ex is None:
        for i in todo:
            yield task(spec_json, i, *shard_range(count, shard_size, i), threads, out, make=make)
        return
    groups = [todo[k : k + per_task] for k in range(0, len(todo), per_task)]
    if not isinstance(ex, cf.Executor):  # a distributed.Client: the tasks in one graph
        from distributed import as_completed

        n = len(groups)
        args = ([spec_json] * n, groups, [count] * n, [shard_size] * n, [threads] * n, [out] * n)
        futures = ex.map(tasks, *args, pure=False, make=make)
        try:
            for _, result in as_completed(futures, with_results=True):
                yield from result
        finally:
            ex.cancel(futures)
        return
    futures = [
        ex.submit(tasks, spec_json, group, count, shard_size, threads, out, make=make)
        for group in groups
    ]
    try:
        for fut in cf.as_completed(futures):
            yield from fut.result()
    finally:
        for fut in futures:
            fut.cancel()


def _release(*objs: Any) -> None:
    """Drops a finished shard's generator and result now, in a process whose glibc keeps
    freed memory (started with ``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_MMAP_THRESHOLD_``, as
    ``DASK_CONFIG`` starts Dask workers): the next shard reuses the same memory.
    The generator's step closures refer back to it, so left alone its arrays and its
    result's (~25 MB for 1024 tracks of 256 points) wait for Python's cyclic collector, and
    new shards take fresh pages meanwhile (the result refers to no generator). With glibc's
    defaults (the trim threshold moves) memory freed at once is handed back and faulted in
    again (measured: 4-6k faults a shard against ~1k): there the collector is left to it."""
    if _glibc_keeps_memory():
        for obj in objs:
            vars(obj).clear()


@functools.cache
def _glibc_keeps_memory() -> bool:
    """Whether this process started with both glibc thresholds fixed (its environment at
    start, ``/proc/self/environ``, which glibc read: a Dask nanny also writes its workers'
    variables into ``os.environ`` of the process that starts it; False off Linux)."""
    try:
        with open("/proc/self/environ", "rb") as f:
            names = {v.split(b"=", 1)[0] for v in f.read().split(b"\0")}
    except OSError:
        return False
    return {b"MALLOC_TRIM_THRESHOLD_", b"MALLOC_MMAP_THRESHOLD_"} <= names


__all__ = ["TASK_TRACKS", "executor_of", "run", "shard_range", "shards_per_task", "task", "tasks"]
