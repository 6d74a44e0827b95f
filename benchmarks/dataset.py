"""Writing a track dataset: in this process against two local Dask worker processes.

``track_gen.dataset.write`` is timed writing the same dataset (``--count`` polar tracks of
``--num-points`` points, shards of ``--shard-size``) three ways, each into a fresh folder:

* in this process (the default executor),
* on a ``distributed.LocalCluster`` of ``--workers`` worker processes (one thread each,
  Dask's statistical profiler off),
* on a ``concurrent.futures.ProcessPoolExecutor`` of as many processes.

Workers are started and warmed up (Warp loaded, kernels found in the cache) before the
clock starts; their start-up is printed apart. It prints tracks/s, the speedup over the
single process (target: at least 1.7x with 2 workers on a 2-core machine), the bytes per
track on disk, and whether every run wrote the same bytes (it must). Nothing is asserted.
Run: ``python benchmarks/dataset.py`` (``--smoke`` for a quick run in the test suite).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import logging
import os
import tempfile
import time
from pathlib import Path

from procgen_nb.track_gen import dataset

TARGET = 1.7


def _warm(num_points: int) -> int:
    """Loads Warp and the kernels a shard needs in a worker (excluded from the timing)."""
    spec = dataset.resolve_config({"generator": "polar", "num_points": num_points})
    dataset.shard_bytes(spec, 0, 2)
    return os.getpid()


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.parquet"))}


def _timed(config: dict, count: int, out: Path, shard: int, **kwargs) -> float:
    t0 = time.perf_counter()
    dataset.write(config, count, out, shard, progress=False, **kwargs)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=16384)
    ap.add_argument("--shard-size", type=int, default=1024)
    ap.add_argument("--num-points", type=int, default=256)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (the test suite)")
    args = ap.parse_args(argv)
    if args.smoke:
        args.count, args.shard_size, args.num_points = 64, 16, 32
    config = {"generator": "polar", "num_points": args.num_points, "seed": 1}
    n, shard, w = args.count, args.shard_size, args.workers
    rows: dict[str, object] = {}
    print(
        f"track dataset: {n} polar tracks of {args.num_points} points, shards of {shard}, "
        f"{os.cpu_count()} CPU cores"
    )
    _warm(args.num_points)
    with tempfile.TemporaryDirectory(prefix="bench-dataset-") as tmp:
        tmp = Path(tmp)
        one = _timed(config, n, tmp / "inproc", shard)
        ref = _files(tmp / "inproc")
        size = sum(len(b) for b in ref.values())
        rows["in-process tracks/s"] = n / one

        import dask
        from distributed import Client, LocalCluster

        logging.getLogger("distributed").setLevel(logging.ERROR)
        # Dask's statistical profiler samples every worker thread each 10 ms; on a 2-core box
        # it measurably slows a compute-bound shard (about 1.5x here), so it is off
        dask.config.set({"distributed.worker.profile.enabled": False})
        t0 = time.perf_counter()
        with (
            LocalCluster(
                n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            client.run(_warm, args.num_points)
            start = time.perf_counter() - t0
            dask_s = _timed(config, n, tmp / "dask", shard, scheduler=client)
        rows["dask tracks/s"] = n / dask_s
        rows["dask start-up s"] = start

        t0 = time.perf_counter()
        with cf.ProcessPoolExecutor(w) as ex:
            list(ex.map(_warm, [args.num_points] * w))
            pool_start = time.perf_counter() - t0
            pool_s = _timed(config, n, tmp / "pool", shard, executor=ex)
        rows["pool tracks/s"] = n / pool_s
        same = _files(tmp / "dask") == ref and _files(tmp / "pool") == ref

    rows["dask speedup"] = one / dask_s
    rows["pool speedup"] = one / pool_s
    rows["bytes per track"] = size / n
    rows["identical bytes"] = same
    print(f"{'run':<34}{'seconds':>9}{'tracks/s':>11}{'speedup':>9}")
    print("-" * 63)
    print(f"{'in this process':<34}{one:>9.2f}{n / one:>11.0f}{1.0:>8.2f}x")
    print(
        f"{f'Dask LocalCluster, {w} processes':<34}{dask_s:>9.2f}{n / dask_s:>11.0f}{one / dask_s:>8.2f}x"
    )
    print(
        f"{f'ProcessPoolExecutor, {w} processes':<34}{pool_s:>9.2f}{n / pool_s:>11.0f}{one / pool_s:>8.2f}x"
    )
    print(f"worker start-up (not timed above): Dask {start:.1f} s, process pool {pool_start:.1f} s")
    verdict = "meets" if one / dask_s >= TARGET else "misses"
    print(f"Dask speedup {one / dask_s:.2f}x with {w} workers ({verdict} the {TARGET}x target)")
    print(f"on disk: {size / n:.0f} bytes per track ({args.num_points * 8} of them the centerline)")
    print(f"every run wrote the same bytes: {same}")
    return rows


if __name__ == "__main__":
    main()
