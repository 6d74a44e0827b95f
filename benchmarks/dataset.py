"""Writing a track dataset: in this process against two local Dask worker processes.

``track_gen.dataset.write`` is timed writing the same dataset (``--count`` polar tracks of
``--num-points`` points, shards of ``--shard-size``) four ways, each into a fresh folder:

* in this process (the default executor; a shard on one thread, ``write``'s default),
* in this process with each shard's calls split across the cores (``threads=None``, the
  pipeline's default: ``PROCGEN_NB_THREADS`` unset, every core), for comparison,
* on a ``distributed.LocalCluster`` of ``--workers`` worker processes (one thread each,
  Dask's statistical profiler off),
* on a ``concurrent.futures.ProcessPoolExecutor`` of as many processes.

Workers are started and warmed up (Warp loaded, kernels found in the cache, one full shard
made) before the clock starts; their start-up is printed apart. Each run is timed
``--repeats`` times (the best is kept). It prints tracks/s, the speedups over the single
process (target: at least 1.7x with 2 workers on a 2-core machine), the bytes per track on
disk, whether every run wrote the same bytes (it must), the load average and the CPU time
other processes took during the in-process and the Dask runs (the box is shared: a run is
clean when that is near 0). On both executors ``write`` makes several consecutive shards a
task by default (up to 4096 tracks, two tasks per worker at least: 4 tasks of 4 shards
here). Nothing is asserted.
Run: ``python benchmarks/dataset.py`` (``--smoke`` for a quick run in the test suite).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import logging
import math
import os
import tempfile
import time
from pathlib import Path

from procgen_nb.track_gen import _dataset_run, dataset

TARGET = 1.7


def _warm(num_points: int, shard: int) -> int:
    """Makes one full shard on one thread, as a task does: Warp and the kernels loaded, the
    allocator warm (excluded from the timing)."""
    spec = dataset.resolve_config({"generator": "polar", "num_points": num_points})
    _dataset_run.task(dataset._canonical(spec), 0, 0, shard, 1, make=dataset.shard_bytes)
    return os.getpid()


def _load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.parquet"))}


def _timed(config: dict, count: int, out: Path, shard: int, repeats: int, **kwargs) -> float:
    best = math.inf
    for r in range(repeats):
        folder = out if r == 0 else out.with_name(f"{out.name}-{r}")
        t0 = time.perf_counter()
        dataset.write(config, count, folder, shard, progress=False, **kwargs)
        best = min(best, time.perf_counter() - t0)
    return best


def _cpu(client: object = None) -> float:
    """CPU seconds used so far by this process (its Dask scheduler and client threads too)
    and by each worker process of ``client``."""
    used = time.process_time()
    if client is not None:
        used += sum(client.run(time.process_time).values())
    return used


def _busy() -> float:
    """CPU seconds every process of the machine has used (Linux; 0 elsewhere): what others
    took during a run is this less what ``_cpu`` counts."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return 0.0
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle, iowait


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=16384)
    ap.add_argument("--shard-size", type=int, default=1024)
    ap.add_argument("--num-points", type=int, default=256)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (the test suite)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.count, args.shard_size, args.num_points, args.repeats = 64, 16, 32, 1
    config = {"generator": "polar", "num_points": args.num_points, "seed": 1}
    n, shard, w, reps = args.count, args.shard_size, args.workers, args.repeats
    rows: dict[str, object] = {}
    print(
        f"track dataset: {n} polar tracks of {args.num_points} points, shards of {shard}, "
        f"{os.cpu_count()} CPU cores; {_load()}"
    )
    _warm(args.num_points, shard)
    with tempfile.TemporaryDirectory(prefix="bench-dataset-") as tmp:
        tmp = Path(tmp)
        c0, b0 = _cpu(), _busy()
        one = _timed(config, n, tmp / "inproc", shard, reps)
        cpu_one = (_cpu() - c0) / reps
        others_one = max(0.0, _busy() - b0 - cpu_one * reps)
        ref = _files(tmp / "inproc")
        size = sum(len(b) for b in ref.values())
        split = _timed(config, n, tmp / "split", shard, reps, threads=None)
        rows["in-process tracks/s"] = n / one
        rows["in-process split tracks/s"] = n / split

        # the pool before Dask: a Dask nanny leaves its workers' variables (the MALLOC_*
        # of DASK_CONFIG) in this process's environment, and a pool started after would
        # inherit them
        t0 = time.perf_counter()
        with cf.ProcessPoolExecutor(w) as ex:
            list(ex.map(_warm, [args.num_points] * w, [shard] * w))
            pool_start = time.perf_counter() - t0
            pool_s = _timed(config, n, tmp / "pool", shard, reps, executor=ex)
        rows["pool tracks/s"] = n / pool_s

        import dask
        from distributed import Client, LocalCluster

        logging.getLogger("distributed").setLevel(logging.ERROR)
        # Dask's statistical profiler samples every worker thread each 10 ms; on a 2-core box
        # it measurably slows a compute-bound shard (about 1.5x here), so it is off. Its
        # 20 ms event-loop tick and its system and memory monitors are relaxed, and glibc
        # in the workers keeps the memory a shard frees (the MALLOC_TRIM_THRESHOLD_ its
        # nannies set by default had glibc map and unmap every large array), as
        # dataset.DASK_CONFIG advises for a cluster of compute-bound shards
        dask.config.set(dataset.DASK_CONFIG)
        t0 = time.perf_counter()
        with (
            LocalCluster(
                n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            # warm each worker's task thread (where shards run; client.run would warm its
            # event-loop thread instead, and the first shards of each thread run slower)
            for addr in client.scheduler_info()["workers"]:
                client.submit(_warm, args.num_points, shard, workers=[addr], pure=False).result()
            start = time.perf_counter() - t0
            c0, b0 = _cpu(client), _busy()
            dask_s = _timed(config, n, tmp / "dask", shard, reps, scheduler=client)
            cpu_dask = (_cpu(client) - c0) / reps
            others_dask = max(0.0, _busy() - b0 - cpu_dask * reps)
        rows["dask tracks/s"] = n / dask_s
        rows["dask start-up s"] = start

        same = all(_files(tmp / k) == ref for k in ("split", "dask", "pool"))

    rows["dask speedup"] = one / dask_s
    # on idle cores the workers share the work and this process's part of it: what the
    # CPU time says the speedup would be, when other processes leave the cores no time
    idle = min(w, os.cpu_count() or w) * cpu_one / cpu_dask
    rows["dask speedup from CPU time"] = idle
    rows["cpu per track in-process us"] = cpu_one / n * 1e6
    rows["cpu per track dask us"] = cpu_dask / n * 1e6
    rows["pool speedup"] = one / pool_s
    rows["others cpu s in-process"] = others_one
    rows["others cpu s dask"] = others_dask
    rows["bytes per track"] = size / n
    rows["identical bytes"] = same
    print(f"{'run (best of ' + str(reps) + ')':<34}{'seconds':>9}{'tracks/s':>11}{'speedup':>9}")
    print("-" * 63)
    table = [
        ("in this process", one),
        ("in this process, calls split", split),
        (f"Dask LocalCluster, {w} processes", dask_s),
        (f"ProcessPoolExecutor, {w} processes", pool_s),
    ]
    for name, sec in table:
        print(f"{name:<34}{sec:>9.2f}{n / sec:>11.0f}{one / sec:>8.2f}x")
    print(f"worker start-up (not timed above): Dask {start:.1f} s, process pool {pool_start:.1f} s")
    verdict = "meets" if one / dask_s >= TARGET else "misses"
    print(f"Dask speedup {one / dask_s:.2f}x with {w} workers ({verdict} the {TARGET}x target)")
    print(
        f"CPU per track: {cpu_one / n * 1e6:.0f} us in this process, {cpu_dask / n * 1e6:.0f} us "
        f"on Dask (its workers and this process): {idle:.2f}x on {w} idle cores"
    )
    print(
        f"other processes' CPU during the runs: {others_one:.2f} s in-process, "
        f"{others_dask:.2f} s Dask (near 0: the cores were ours)"
    )
    print(f"on disk: {size / n:.0f} bytes per track ({args.num_points * 8} of them the centerline)")
    print(f"every run wrote the same bytes: {same}")
    print(_load())
    return rows


if __name__ == "__main__":
    main()
