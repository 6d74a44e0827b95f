"""Track datasets: Parquet shards, each a pure function of (config, shard index).

``dataset.write(config, count=, out=, shard_size=)`` splits ``count`` tracks into shards of
``shard_size``; shard ``i`` holds tracks ``i*shard_size ...``, track ``t`` generated with the
env seed ``config.seed + t`` at ``config.epoch``, so a shard's rows are the same whichever
process makes it and whatever the shard size. Each shard is written to a temporary name
and moved into place with ``os.replace``; ``_manifest.json`` (written the same way after each
shard) holds the resolved config and the sha256 of every finished shard. A rerun skips each
shard whose file matches its manifest hash and remakes every other one (missing, partial
or corrupt), so an interrupted run resumes with every shard exactly once.

Shards run on any ``concurrent.futures.Executor`` (in this process when None): a
``ProcessPoolExecutor``, or a Dask cluster through ``scheduler="tcp://host:port"`` or a
``distributed.Client`` (each worker generates on its own Warp device,
``procgen_nb.get_device()``: CUDA where it has one). A worker on this machine writes its
shard itself and returns the hash; a worker elsewhere returns the shard's bytes and this
process writes the file, so remote workers need no shared filesystem.

Parquet bytes are deterministic: fixed writer options (zstd level 3, no dictionary, one
row group, format 2.6, statistics on, the Arrow schema stored so fixed-size lists read
back as such), schema metadata from sorted JSON. Bytes agree
between processes with the same versions of procgen_nb, Warp and pyarrow on the same
kind of device (the manifest records them); a CUDA float may differ from a CPU one in the
last bit, so a hash is checked against the file, never recomputed on another device.

Columns: ``track`` (int64, the index in the dataset), ``seed`` (the config's), ``epoch``,
``env_seed`` (int32), ``centerline`` (``num_points`` pairs of float32: a fixed-size list of
fixed-size lists), ``z`` (when the config has a z profile), ``valid`` (bool), ``reason``
(int32 bits of ``REASONS``; the manifest maps them to words) and every metric of
``metrics.METRICS``; with ``config["racing"]`` the lap metrics too (``_dataset_racing``).

With ``config["course"]`` (a dict of ``gates.build`` fields: ``gate_generator``,
``gate_params``, ``track_width``, ``max_gates``...), each row is a course: the columns gain
``gate_position`` (``max_gates`` float32 triples; NaN past ``gate_count``), ``gate_heading``,
``gate_size``, ``gate_s``, ``gate_lateral``, ``gate_count``, ``track_valid`` and
``track_reason`` (the centerline's), and ``valid``/``reason`` are the course's
(``COURSE_REASONS``). A gate generator that makes its gates first runs the centerline
through them (the manifest's ``course.centerline`` says ``"through_gates"``).
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ParamsError
from . import _dataset_racing, _dataset_run
from ._dataset_files import (  # noqa: F401  (LOCK: the lock file's name, for the tests)
    LOCK,
    MANIFEST,
    _check_columns,
    _load_manifest,
    _read_parquet,
    _save_manifest,
    _sha256,
    _shard_file,
    _versions,
    _writer_lock,
)
from ._dataset_run import (  # noqa: F401  (write's limits)
    MAX_SHARD_SIZE,
    MAX_SHARDS,
    MAX_TRACKS,
    _atomic_write,
    _release,
    _shard_name,
)

#: Dask settings for a cluster of compute-bound shards (``dask.config.set(DASK_CONFIG)``
#: before the cluster starts): no statistical profiler, a 1 s event-loop tick and slower
#: monitors, and glibc told to keep the memory a shard frees (Dask's own
#: ``MALLOC_TRIM_THRESHOLD_=65536`` fixes the mmap threshold at 128 KiB, so every array of a
#: shard was mapped, faulted in and unmapped). Measured on one worker, 8 shards of 1024
#: tracks: 0.40 s of CPU and no page faults, against 0.50 s and 61k faults with Dask's
#: value and 0.42-0.50 s and 0-30k faults with glibc's defaults.
DASK_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "5s",
    "distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_": str(32 << 20),
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": str(256 << 20),
}

FORMAT = "procgen_nb.track_dataset/1"
_WRITER = dict(
    compression="zstd",
    compression_level=3,
    use_dictionary=False,
    version="2.6",
    data_page_version="1.0",
    write_statistics=True,
    store_schema=True,
)
#: TrackGenConfig fields a dataset config carries (num_envs, device, env_seeds are per shard)
_FIELDS = ("generator", "generator_params", "num_points", "scale", "seed", "epoch")


def _jsonable(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def resolve_config(config: Any, straight_ratio: float = 2.0) -> dict[str, Any]:
    """Returns the dataset config as plain JSON values, every default filled in.

    Args:
        config: a ``TrackGenConfig`` or a dict of its fields (``num_envs``, ``device`` and
            ``env_seeds`` are ignored: a shard sets them).
        straight_ratio: ``metrics``' straight threshold.

    Raises:
        ParamsError: a field ``TrackGenConfig`` refuses, an unknown field, or env_seeds.
        GeneratorError: an unknown generator or refused generator_params.
    """
    from .config import TrackGenConfig
    from .pipeline import as_stage, resolve_params
    from .plugin import registry

    if isinstance(config, TrackGenConfig):
        if config.env_seeds is not None:
            raise ParamsError(
                "dataset config env_seeds: expected None (track t has the seed seed + t), "
                f"got {list(config.env_seeds)[:4]}..."
            )
        fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    elif isinstance(config, Mapping):
        fields = dict(config)
    else:
        raise ParamsError(f"dataset config: expected a TrackGenConfig or a dict, got {config!r}")
    course, racing = fields.pop("course", None), fields.pop("racing", None)
    known = {f.name for f in dataclasses.fields(TrackGenConfig)}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise ParamsError(f"dataset config: expected fields among {sorted(known)}, got {unknown}")
    if fields.get("env_seeds") is not None:
        raise ParamsError("dataset config env_seeds: expected None (track t has seed + t)")
    fields = {k: v for k, v in fields.items() if k not in ("num_envs", "device", "env_seeds")}
    cfg = TrackGenConfig(num_envs=1, **fields)
    for name, default in (("width", None), ("direction", "ccw")):  # not in a shard's columns
        if getattr(cfg, name) != default:
            raise ParamsError(
                f"dataset config {name}: expected {default!r} (a dataset holds centerlines; "
                f"its shards do not carry widths or a direction), got {fields[name]!r}"
            )
    params = resolve_params(as_stage(registry.get("generator", cfg.generator)), cfg)
    zp = cfg.z_profile
    if zp is not None and zp is not False:
        stage = as_stage(registry.get("stage", "z_profile"))
        zp = stage.Params.resolve(None if zp is True else zp).to_dict()
    out = {k: getattr(cfg, k) for k in _FIELDS}
    out["generator_params"] = params.to_dict() if params is not None else None
    out["validity"] = cfg.validity.to_dict()
    out["z_profile"] = None if zp is False else zp
    from . import metrics

    out["straight_ratio"] = metrics._check_ratio(straight_ratio)
    out["course"] = _resolve_course(course, out)
    if racing is not None and racing is not False:  # absent: the bytes of a racing-less set
        out["racing"] = _dataset_racing.resolve(racing, out["validity"])
    return _jsonable(out)


def _course_kwargs(spec: dict[str, Any]) -> dict[str, Any]:
    course = dict(spec["course"])
    through = course.pop("centerline") == "through_gates"
    return {
        "generator": None if through else spec["generator"],
        "generator_params": None if through else spec["generator_params"],
        "num_points": int(spec["num_points"]),
        "z_profile": spec["z_profile"],
        "scale": spec["scale"],
        "epoch": spec["epoch"],
        "validity": spec["validity"],
        **course,
    }


def _resolve_course(course: Any, spec: dict[str, Any]) -> dict[str, Any] | None:
    """Checks a course config by building one env; notes whether the centerline runs through
    the gates (then the generator is not used)."""
    if course is None or course is False:
        return None
    if course is True:
        course = {}
    if not isinstance(course, Mapping):
        raise ParamsError(
            f"dataset config course: expected a dict of gates.build fields, got {course!r}"
        )
    from ..errors import GeneratorError
    from .gates.course import build

    course = _jsonable(dict(course))
    for centerline in ("generator", "through_gates"):
        trial = {**spec, "course": {**course, "centerline": centerline}}
        try:
            build(1, seed=int(spec["seed"]), **_course_kwargs(trial))
        except GeneratorError as exc:
            if centerline == "generator" and "runs through its gates" in str(exc):
                continue
            raise
        return {**course, "centerline": centerline}
    raise AssertionError("unreachable")  # pragma: no cover


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def shard_table(spec: dict[str, Any], start: int, stop: int, device: str | None = None) -> Any:
    """Generates tracks ``start..stop-1`` of the dataset ``spec`` (``resolve_config``'s
    output) and returns them as a ``pyarrow.Table``."""
    import pyarrow as pa

    from . import metrics
    from ._result import REASONS  # noqa: F401  (the bits the reason column holds)
    from .config import TrackGenConfig
    from .pipeline import TrackGenerator

    E, N = stop - start, int(spec["num_points"])
    cfg = TrackGenConfig(
        num_envs=E,
        num_points=N,
        scale=spec["scale"],
        device=device,
        generator=spec["generator"],
        generator_params=spec["generator_params"],
        seed=int(spec["seed"]) + start,
        epoch=spec["epoch"],
        validity=spec["validity"],
        z_profile=spec["z_profile"],
    )
    course = None
    if spec.get("course"):
        from .gates.course import build

        course = build(E, seed=int(spec["seed"]) + start, device=device, **_course_kwargs(spec))
        res = course.track.result  # the build's warm-up call made this config's courses
        got = course.numpy()
    else:
        gen = TrackGenerator(cfg)
        res = gen.result  # the build's warm-up call generated this config's tracks
        got = res.numpy()
    m = metrics.compute(res, spec["straight_ratio"], racing=_dataset_racing.kwargs(spec))
    pair = pa.list_(pa.float32(), 2)
    flat = pa.array(got["xy"].reshape(-1).astype(np.float32), pa.float32())
    cols: dict[str, Any] = {
        "track": pa.array(np.arange(start, stop, dtype=np.int64)),
        "seed": pa.array(np.full(E, int(spec["seed"]), dtype=np.int64)),
        "epoch": pa.array(np.full(E, int(spec["epoch"]), dtype=np.int32)),
        "env_seed": pa.array(np.asarray(cfg.env_seed_values(), dtype=np.int32)),
        "centerline": pa.FixedSizeListArray.from_arrays(
            pa.FixedSizeListArray.from_arrays(flat, type=pair), N
        ),
    }
    if "z" in got:
        z = pa.array(got["z"].reshape(-1).astype(np.float32), pa.float32())
        cols["z"] = pa.FixedSizeListArray.from_arrays(z, N)
    if course is not None:
        G = got["gate_position"].shape[1]
        f32 = lambda a: pa.array(np.ascontiguousarray(a, dtype=np.float32).reshape(-1))  # noqa: E731
        cols["gate_position"] = pa.FixedSizeListArray.from_arrays(
            pa.FixedSizeListArray.from_arrays(f32(got["gate_position"]), 3), G
        )
        for key in ("heading", "size"):
            cols[f"gate_{key}"] = pa.FixedSizeListArray.from_arrays(f32(got[f"gate_{key}"]), G)
        cols["gate_s"] = pa.FixedSizeListArray.from_arrays(f32(got["s"]), G)
        cols["gate_lateral"] = pa.FixedSizeListArray.from_arrays(f32(got["lateral"]), G)
        cols["gate_count"] = pa.array(got["gate_count"].astype(np.int32))
        cols["track_valid"] = pa.array(got["track_valid"] != 0)
        cols["track_reason"] = pa.array(res.ctx.readback(res.reason).astype(np.int32))
    cols["valid"] = pa.array(got["valid"] != 0)
    cols["reason"] = pa.array(got["reason"].astype(np.int32))
    for name in [*metrics.METRICS, *_dataset_racing.names(spec)]:
        cols[name] = pa.array(m[name])
    meta = {b"procgen_nb.dataset": _canonical(spec).encode()}
    table = pa.table(cols).replace_schema_metadata(meta)
    _release(course.track if course is not None else gen, res)
    return table


def shard_bytes(spec: dict[str, Any], start: int, stop: int, device: str | None = None) -> bytes:
    """Returns the Parquet bytes of tracks ``start..stop-1`` (deterministic writer options)."""
    import pyarrow.parquet as pq

    table = shard_table(spec, start, stop, device)
    buf = io.BytesIO()
    pq.write_table(table, buf, row_group_size=max(table.num_rows, 1), **_WRITER)
    return buf.getvalue()


def write(
    config: Any,
    count: int,
    out: str | os.PathLike,
    shard_size: int = 4096,
    executor: Any = None,
    *,
    scheduler: Any = None,
    straight_ratio: float = 2.0,
    progress: bool = True,
    threads: int | None = 1,
    workers_write: bool | None = None,
    shards_per_task: int | None = None,
    wait: bool = False,
) -> dict[str, Any]:
    """Writes ``count`` tracks of ``config`` as Parquet shards and a manifest under ``out``.

    Args:
        config: a ``TrackGenConfig`` or a dict of its fields (``generator``,
            ``generator_params``, ``num_points``, ``scale``, ``seed``, ``epoch``,
            ``validity``, ``z_profile``), and optionally ``course`` (see the module docstring).
        count: tracks in the dataset (1 to ``MAX_TRACKS``). shard_size: tracks per shard
            (1 to ``MAX_SHARD_SIZE``; at most ``MAX_SHARDS`` shards).
        out: the directory (made when missing).
        executor: None (this process), any ``concurrent.futures.Executor``, or a
            ``distributed.Client``.
        scheduler: a Dask scheduler address (``"tcp://host:port"``) or ``distributed.Client``
            (start its workers under ``dask.config.set(DASK_CONFIG)``: shards run faster).
        straight_ratio: ``metrics``' straight threshold.
        progress: show a progress bar (tracks, tracks/s, ETA).
        threads: the CPU threads a shard's calls split across (``_threads.threads_override``
            while it runs; None: as the process has it). 1 by default: a shard builds its
            generator and calls it once, and a first call's parts run one after the other
            (measured: a 2-thread shard costs 1.5x the CPU of a 1-thread one and takes
            longer), so shards gain from running side by side on an executor instead.
        workers_write: each task writes its shard file itself and sends back only its hash
            (None: when the executor runs on this machine: in this process, a process or
            thread pool, a Dask cluster whose workers all listen on this machine); False:
            the bytes come back and this process writes them (workers on other machines).
        shards_per_task: consecutive shards one executor task makes (each still its own
            file and manifest entry, recorded when its task ends). None: up to 4096 tracks a
            task, at least two tasks per worker slot (one shard a task where the executor's
            slots are unknown): a Dask task costs a few ms beyond its shard.
        wait: when another writer holds ``out`` (its ``.lock``), wait for it to finish
            instead of refusing (a dead writer's lock is taken over either way).

    Returns:
        The manifest (also in ``out/_manifest.json``), with ``"written"`` and ``"skipped"``
        shard counts of this run added.

    Raises:
        ParamsError: a refused argument (an empty ``out``, a scheduler that cannot be
            reached), or ``out`` holding a dataset of another config. Nothing is made or
            written then.
        DatasetError: another live writer is writing ``out`` (and ``wait`` is False).
    """
    count, shard_size, threads, shards_per_task = _dataset_run.check_args(
        count, shard_size, threads, shards_per_task, workers_write
    )
    spec = resolve_config(config, straight_ratio)
    if out is None or not isinstance(out, str | os.PathLike) or not os.fspath(out):
        raise ParamsError(f"dataset.write out: expected a directory path, got {out!r}")
    out = Path(out)
    # the executor (a scheduler connected) before anything is made: a refusal writes nothing
    ex, client, local, slots = _dataset_run.executor_of(executor, scheduler)
    try:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ParamsError(f"dataset.write out: expected a directory, got {exc}") from exc
        with _writer_lock(out, bool(wait)):
            return _write_locked(
                spec,
                count,
                out,
                shard_size,
                (ex, local, slots),
                progress,
                threads,
                workers_write,
                shards_per_task,
            )
    except OSError as exc:  # a read-only or full target
        raise ParamsError(
            f"dataset.write out {str(out)!r}: expected a writable directory with room, got {exc}"
        ) from exc
    finally:
        if client is not None:
            client.close()


def _write_locked(
    spec: dict[str, Any],
    count: int,
    out: Path,
    shard_size: int,
    executor: tuple[Any, bool, int | None],
    progress: bool,
    threads: int | None,
    workers_write: bool | None,
    shards_per_task: int | None,
) -> dict[str, Any]:
    """``write`` once it holds the folder's lock (see there); ``executor`` is
    ``(executor, whether it runs on this machine, its slots)`` (``executor_of``)."""
    num_shards = math.ceil(count / shard_size)
    manifest = _load_manifest(out)
    head = {"format": FORMAT, "config": spec, "count": count, "shard_size": shard_size}
    if manifest is not None:
        theirs = {k: manifest.get(k) for k in head}
        if _canonical(theirs) != _canonical(head):
            raise ParamsError(
                f"dataset out {str(out)!r}: expected a directory for this config, count and "
                f"shard_size (or a new one), got one holding {_canonical(theirs)[:200]}"
            )
        shards = dict(manifest.get("shards", {}))
    else:
        shards = {}
    for stale in out.glob(".*.tmp-*"):  # shards and manifests left by a killed run
        stale.unlink(missing_ok=True)
    from ._result import REASONS
    from .gates.course import COURSE_REASONS

    manifest = {
        **head,
        "num_shards": num_shards,
        "columns": _columns(spec),
        "reasons": {str(k): v for k, v in (COURSE_REASONS if spec["course"] else REASONS).items()},
        "track_reasons": {str(k): v for k, v in REASONS.items()},
        "versions": _versions(),
        "shards": {},
    }
    todo = []
    for i in range(num_shards):
        entry = shards.get(str(i))
        path = out / _shard_name(i)
        if entry is not None and entry.get("sha256") == _sha256(path):
            manifest["shards"][str(i)] = entry
        else:
            todo.append(i)
    skipped = num_shards - len(todo)
    _save_manifest(out, manifest)
    bar = _bar(progress, count, sum(_size(count, shard_size, i) for i in todo))
    spec_json = _canonical(spec)
    ex, local, slots = executor
    per_task = shards_per_task or _dataset_run.shards_per_task(slots, len(todo), shard_size)
    if workers_write is None:
        workers_write = local
    there = str(out.resolve()) if workers_write else None
    try:
        results = _dataset_run.run(
            ex, spec_json, todo, count, shard_size, threads, there, per_task, make=shard_bytes
        )
        for index, data, device, digest, size in results:
            path = out / _shard_name(index)
            if data is not None:
                _atomic_write(path, data)
            elif not path.is_file():
                raise ParamsError(
                    f"dataset.write workers_write: expected shard {index} at {str(path)!r} "
                    "(the workers see another filesystem: pass workers_write=False), got none"
                )
            start, stop = _dataset_run.shard_range(count, shard_size, index)
            manifest["shards"][str(index)] = {
                "file": path.name,
                "tracks": [start, stop],
                "bytes": size,
                "sha256": digest,
                "device": device.split(":")[0],
            }
            manifest["shards"] = dict(sorted(manifest["shards"].items(), key=lambda kv: int(kv[0])))
            _save_manifest(out, manifest)
            if bar is not None:
                bar.update(stop - start)
    finally:
        if bar is not None:
            bar.close()
    return {**manifest, "written": len(todo), "skipped": skipped}


def _size(count: int, shard_size: int, index: int) -> int:
    start, stop = _dataset_run.shard_range(count, shard_size, index)
    return stop - start


def _columns(spec: dict[str, Any]) -> list[str]:
    from . import metrics

    z = ["z"] if spec.get("z_profile") is not None else []
    gates = ["gate_position", "gate_heading", "gate_size", "gate_s", "gate_lateral"]
    gates += ["gate_count", "track_valid", "track_reason"]
    head = ["track", "seed", "epoch", "env_seed", "centerline", *z]
    head += [*(gates if spec.get("course") else []), "valid", "reason"]
    return head + list(metrics.METRICS) + _dataset_racing.names(spec)


def _bar(progress: bool, total: int, todo: int) -> Any:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        initial=total - todo,
        unit="tracks",
        unit_scale=True,
        desc="dataset",
        smoothing=0.1,
    )


def read(path: str | os.PathLike, columns: list[str] | None = None, verify: bool = True) -> Any:
    """Reads a dataset directory (its manifest's shards, in order) or one shard file.

    Args:
        path: a directory ``write`` made, or a ``.parquet`` file.
        columns: a list of the columns to read (all when None), each one of the
            manifest's ``columns`` (the file's, for a file).
        verify: check each shard's sha256 against the manifest first (a read of the file:
            about 1 GB/s; False skips it).

    Returns:
        A ``pyarrow.Table`` (``centerline`` as fixed-size lists: ``.to_numpy`` of its
        flattened values reshapes to ``[rows, num_points, 2]``).

    Raises:
        ParamsError: no manifest or shard there, a malformed manifest, a shard missing,
            named outside the folder or not Parquet, a column not in the dataset (or
            ``columns`` not a list), or (``verify``) a hash that does not match.
    """
    import pyarrow as pa

    if path is None or not isinstance(path, str | os.PathLike):
        raise ParamsError(f"dataset.read path: expected a dataset directory or file, got {path!r}")
    path = Path(path)
    if path.is_file():
        known = _read_parquet(path, None, schema=True)
        return _read_parquet(path, _check_columns(columns, known, path))
    manifest = _load_manifest(path)
    if manifest is None:
        raise ParamsError(f"dataset.read path: expected a dataset directory, got {str(path)!r}")
    columns = _check_columns(columns, manifest.get("columns"), path)
    tables = []
    num = manifest.get("num_shards")
    if isinstance(num, bool) or not isinstance(num, int) or not 0 <= num <= MAX_SHARDS:
        raise ParamsError(
            f"dataset.read {str(path)!r}: expected a manifest num_shards from 0 to {MAX_SHARDS}, "
            f"got {num!r}"
        )
    for i in range(num):
        file = _shard_file(path, manifest["shards"], i, num, verify)
        tables.append(_read_parquet(file, columns))
    return pa.concat_tables(tables)


def centerlines(table: Any) -> np.ndarray:
    """Returns a table's ``centerline`` column as a ``[rows, num_points, 2]`` float32 array."""
    col = table.column("centerline").combine_chunks()
    n = col.type.list_size
    return col.flatten().flatten().to_numpy().reshape(len(col), n, 2)


__all__ = [
    "DASK_CONFIG",
    "FORMAT",
    "MANIFEST",
    "centerlines",
    "read",
    "resolve_config",
    "shard_bytes",
    "write",
]
