"""Datasets: shards a pure function of (config, index), atomic, resumable, on any executor.

The reference for the rows is one ``TrackGenerator`` batch of all the tracks (env seeds
``seed + t``): a dataset must hold exactly those tracks whatever its sharding, and the
same bytes whoever writes it (this process, a process pool, a Dask cluster, a rerun).
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import _threads, dataset, presets

CONFIG = {"generator": "polar", "num_points": 48, "seed": 11, "epoch": 2}
COUNT, SHARD = 40, 12  # 4 shards, the last one short


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.suffix == ".parquet"}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("reference")
    dataset.write(CONFIG, COUNT, out, SHARD, progress=False)
    return _files(out)


def test_rows_are_the_tracks_of_one_batch_whatever_the_sharding(tmp_path, reference):
    out = tmp_path / "one"
    dataset.write(CONFIG, COUNT, out, shard_size=COUNT, progress=False)
    ref_dir = tmp_path / "ref"
    ref_dir.mkdir()
    for name, data in reference.items():
        (ref_dir / name).write_bytes(data)
    batch = presets.track(
        "polar", num_envs=COUNT, num_points=48, env_seeds=[11 + t for t in range(COUNT)], epoch=2
    ).generate()
    want = batch.numpy()
    for table in (dataset.read(out), pq.read_table(ref_dir)):
        assert table.num_rows == COUNT
        np.testing.assert_array_equal(table["track"].to_numpy(), np.arange(COUNT))
        np.testing.assert_array_equal(table["env_seed"].to_numpy(), 11 + np.arange(COUNT))
        assert set(table["epoch"].to_numpy()) == {2} and set(table["seed"].to_numpy()) == {11}
        np.testing.assert_array_equal(dataset.centerlines(table), want["xy"])
        np.testing.assert_array_equal(table["valid"].to_numpy(), want["valid"] != 0)
        np.testing.assert_array_equal(table["reason"].to_numpy(), want["reason"])
        m = batch.metrics()
        for name in m:
            np.testing.assert_array_equal(table[name].to_numpy(), m[name], err_msg=name)


def test_plain_pyarrow_reads_the_folder_and_the_centerline_type(tmp_path, reference):
    for name, data in reference.items():
        (tmp_path / name).write_bytes(data)
    t = pq.read_table(tmp_path)
    assert t.num_rows == COUNT
    typ = t.schema.field("centerline").type
    assert typ.list_size == 48 and typ.value_type.list_size == 2
    assert str(typ.value_type.value_type) == "float"


def test_a_second_run_makes_the_same_bytes_and_manifest_hashes(tmp_path, reference):
    m = dataset.write(CONFIG, COUNT, tmp_path, SHARD, progress=False)
    assert _files(tmp_path) == reference
    assert m["num_shards"] == 4 and m["written"] == 4 and m["skipped"] == 0
    import hashlib

    for entry in m["shards"].values():
        assert entry["sha256"] == hashlib.sha256(reference[entry["file"]]).hexdigest()
    again = dataset.write(CONFIG, COUNT, tmp_path, SHARD, progress=False)
    assert again["written"] == 0 and again["skipped"] == 4


def test_a_process_pool_writes_the_same_bytes(tmp_path, reference):
    with cf.ProcessPoolExecutor(2) as ex:
        dataset.write(CONFIG, COUNT, tmp_path, SHARD, executor=ex, progress=False)
    assert _files(tmp_path) == reference


def test_corrupt_partial_and_missing_shards_are_rewritten(tmp_path, reference):
    dataset.write(CONFIG, COUNT, tmp_path, SHARD, progress=False)
    names = sorted(reference)
    (tmp_path / names[0]).write_bytes(reference[names[0]][:100])  # partial
    corrupt = bytearray(reference[names[1]])
    corrupt[len(corrupt) // 2] ^= 0xFF
    (tmp_path / names[1]).write_bytes(bytes(corrupt))
    (tmp_path / names[3]).unlink()
    with pytest.raises(ParamsError, match="sha256"):
        dataset.read(tmp_path, verify=True)
    m = dataset.write(CONFIG, COUNT, tmp_path, SHARD, progress=False)
    assert m["written"] == 3 and m["skipped"] == 1
    assert _files(tmp_path) == reference
    assert dataset.read(tmp_path, verify=True).num_rows == COUNT


def test_a_run_killed_halfway_resumes_with_every_shard_once(tmp_path):
    count, shard = 8 * 24, 8
    code = (
        "from procgen_nb.track_gen import dataset\n"
        f"dataset.write({CONFIG!r}, {count}, {str(tmp_path)!r}, {shard}, progress=False)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    manifest = tmp_path / dataset.MANIFEST
    done = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            done = len(json.loads(manifest.read_text())["shards"])
        except (OSError, ValueError, KeyError):
            done = 0
        if done >= 2:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 2 <= done < 24, f"expected the run killed halfway, it had {done} of 24 shards"
    first = json.loads(manifest.read_text())["shards"]
    m = dataset.write(CONFIG, count, tmp_path, shard, progress=False)
    assert m["skipped"] == len(first) and m["written"] == 24 - len(first)
    assert sorted(_files(tmp_path)) == [f"shard-{i:06d}.parquet" for i in range(24)]
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]
    table = dataset.read(tmp_path, verify=True)
    np.testing.assert_array_equal(table["track"].to_numpy(), np.arange(count))
    fresh = tmp_path / "fresh"
    dataset.write(CONFIG, count, fresh, shard, progress=False)
    assert _files(fresh) == _files(tmp_path)


def test_a_write_removes_the_temporary_files_a_killed_run_left(tmp_path):
    # a kill can land while the manifest or a shard is being written (its hidden .tmp-)
    dataset.write(CONFIG, 16, tmp_path, 8, progress=False)
    for name in (f".{dataset.MANIFEST}.tmp-1-0badf00d", ".shard-000001.parquet.tmp-1-0badf00d"):
        (tmp_path / name).write_bytes(b"partial")
    m = dataset.write(CONFIG, 16, tmp_path, 8, progress=False)
    assert m["skipped"] == 2 and m["written"] == 0
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]


def test_another_config_in_the_same_folder_is_refused(tmp_path):
    dataset.write(CONFIG, 8, tmp_path, 8, progress=False)
    with pytest.raises(ParamsError, match="expected a directory for this config"):
        dataset.write({**CONFIG, "seed": 12}, 8, tmp_path, 8, progress=False)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"count": 0}, "count"),
        ({"shard_size": 1.5}, "shard_size"),
        ({"config": {"bogus": 1}}, "expected fields"),
        ({"config": {"env_seeds": [1]}}, "env_seeds"),
        ({"executor": "threads"}, "executor"),
        ({"threads": 0}, "threads"),
        ({"workers_write": "yes"}, "workers_write"),
        ({"shards_per_task": 0}, "shards_per_task"),
        ({"shards_per_task": 1.5}, r"shards_per_task: expected an integer >= 1, got 1\.5"),
        ({"workers_write": 1}, r"workers_write: expected None or a bool, got 1"),
        ({"count": 10**30}, r"count: expected at most 2147483648, got 10{30}"),
        ({"count": 1 << 20, "shard_size": 1}, r"shard_size: expected 16 to 16777216 for 1048576"),
        (
            {"shard_size": 1 << 30},
            r"shard_size: expected 1 to 16777216 for 4 tracks.*got 1073741824",
        ),
        ({"out": "/dev/null/x"}, r"out: expected a directory"),
    ],
)
def test_bad_arguments_are_refused(tmp_path, kwargs, match):
    args = {"config": CONFIG, "count": 4, "out": tmp_path, "shard_size": 4, "progress": False}
    with pytest.raises(ParamsError, match=match):
        dataset.write(**{**args, **kwargs})


@pytest.mark.parametrize("threads", [None, 1, 2])
def test_a_shard_runs_on_the_threads_asked_and_the_bytes_do_not_change(
    tmp_path, reference, monkeypatch, threads
):
    seen, env = [], []
    real = dataset.shard_bytes

    def spy(*args, **kwargs):
        seen.append(str(_threads.threads_wanted()))  # what the shard's calls split across
        env.append(os.environ.get("PROCGEN_NB_THREADS"))
        return real(*args, **kwargs)

    monkeypatch.setattr(dataset, "shard_bytes", spy)
    monkeypatch.setenv("PROCGEN_NB_THREADS", "3")
    want = {"3" if threads is None else str(threads)}  # None: the process's setting
    dataset.write(CONFIG, COUNT, tmp_path / "here", SHARD, progress=False, threads=threads)
    assert set(seen) == want
    assert _files(tmp_path / "here") == reference
    seen.clear()
    with cf.ThreadPoolExecutor(2) as ex:
        dataset.write(CONFIG, COUNT, tmp_path / "ex", SHARD, ex, progress=False, threads=threads)
    assert set(seen) == want
    assert _files(tmp_path / "ex") == reference
    assert os.environ["PROCGEN_NB_THREADS"] == "3"  # put back
    seen.clear()
    dataset.write(CONFIG, COUNT, tmp_path / "default", SHARD, progress=False)
    assert set(seen) == {"1"}  # by default a shard runs on one thread
    assert set(env) == {"3"}  # the process environment is never changed for a shard


def test_a_task_makes_several_shards_when_there_are_many():
    from procgen_nb.track_gen._dataset_run import TASK_TRACKS, shards_per_task

    assert TASK_TRACKS == 4096
    assert shards_per_task(None, 16, 1024) == 1  # slots unknown: one shard a task
    assert shards_per_task(2, 16, 1024) == 4  # 4 tasks: two per slot, 4096 tracks each
    assert shards_per_task(2, 977, 1024) == 4  # at most TASK_TRACKS tracks a task
    assert shards_per_task(2, 16, 4096) == 1 and shards_per_task(2, 7, 8) == 1
    assert shards_per_task(4, 200, 16) == 25  # at least two tasks a slot


def test_tasks_of_several_shards_write_each_shard_once_with_the_same_bytes(tmp_path, reference):
    submitted = []

    class Counting(cf.ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):
            submitted.append(args[1])  # the shard indices of the task
            return super().submit(fn, *args, **kwargs)

    with Counting(2) as ex:
        m = dataset.write(CONFIG, COUNT, tmp_path, SHARD, ex, progress=False, shards_per_task=3)
    assert submitted == [[0, 1, 2], [3]]
    assert _files(tmp_path) == reference
    assert sorted(m["shards"], key=int) == ["0", "1", "2", "3"] and m["written"] == 4
    assert dataset.read(tmp_path, verify=True).num_rows == COUNT
    submitted.clear()
    with Counting(2) as ex:  # 4 shards on 2 slots: one a task (two tasks a slot)
        dataset.write(CONFIG, COUNT, tmp_path / "auto", SHARD, ex, progress=False)
    assert sorted(submitted) == [[0], [1], [2], [3]]
    assert _files(tmp_path / "auto") == reference


@pytest.mark.parametrize("keeps", [False, True])
def test_a_shard_drops_its_generator_where_glibc_keeps_freed_memory(monkeypatch, reference, keeps):
    dropped = []
    real = dataset._release

    def spy(*objs):
        real(*objs)
        dropped.extend(vars(o) for o in objs)

    monkeypatch.setattr(dataset._dataset_run, "_glibc_keeps_memory", lambda: keeps)
    monkeypatch.setattr(dataset, "_release", spy)
    spec = dataset.resolve_config(CONFIG)
    data = dataset.shard_bytes(spec, 0, SHARD)
    assert data == reference["shard-000000.parquet"]  # the bytes do not change
    assert len(dropped) == 2 and all((d == {}) == keeps for d in dropped)
    course = {"gate_generator": "arc_length", "gate_params": {"spacing": 0.6}, "track_width": 0.2}
    spec = dataset.resolve_config({**CONFIG, "course": course})
    data = dataset.shard_bytes(spec, 0, SHARD)
    monkeypatch.setattr(dataset._dataset_run, "_glibc_keeps_memory", lambda: not keeps)
    assert dataset.shard_bytes(spec, 0, SHARD) == data  # a course shard: the same both ways


def test_a_result_kept_alone_reads_full_crossings_without_its_generator():
    # the result's crossing count refers to arrays, not to its generator: a result kept
    # alone leaves the generator to reference counting and garbage collection, and a shard's
    # result is freed once its generator is cleared
    import gc
    import weakref

    import track_reference as ref
    from test_validity_options import NO_DRIVE, pipeline

    xy = ref.random_loops(np.random.default_rng(9), 64, 48)
    want = np.array([ref.crossings(t) for t in xy])
    assert want.max() > 1
    gen = pipeline(xy, **NO_DRIVE)
    res = gen.generate()
    alive = weakref.ref(gen)
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        del gen
        gc.collect()
        assert alive() is None
        np.testing.assert_array_equal(res.numpy()["crossings"], want)
        gen = pipeline(xy, **NO_DRIVE)
        kept = weakref.ref(gen.result)
        vars(gen).clear()
        assert kept() is None  # no cycle through the result: freed without the collector
    finally:
        if was:
            gc.enable()


def test_dask_config_has_glibc_keep_the_memory_of_a_shard():
    env = "distributed.nanny.pre-spawn-environ."
    assert int(dataset.DASK_CONFIG[env + "MALLOC_MMAP_THRESHOLD_"]) <= 32 << 20  # glibc's cap
    assert int(dataset.DASK_CONFIG[env + "MALLOC_TRIM_THRESHOLD_"]) >= 64 << 20
    # a process started with both drops its shards' generators; one started without, not
    code = (
        "from procgen_nb.track_gen import _dataset_run; print(_dataset_run._glibc_keeps_memory())"
    )
    keep = {k.rsplit(".", 1)[1]: v for k, v in dataset.DASK_CONFIG.items() if "MALLOC" in k}
    plain = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    for env, want in ((plain, "False"), ({**plain, **keep}, str(sys.platform == "linux"))):
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == want


class _Elsewhere(cf.Executor):
    """Runs each task now, as a worker on another machine would: its ``out`` (the last
    argument) is a folder of its own."""

    def __init__(self, folder: Path):
        self.folder = folder

    def submit(self, fn, /, *args, **kwargs):
        fut = cf.Future()
        if args[-1] is not None:
            args = (*args[:-1], str(self.folder))
        fut.set_result(fn(*args, **kwargs))
        return fut


def test_workers_on_this_machine_write_their_shards_and_others_send_bytes(tmp_path, reference):
    from procgen_nb.track_gen import _dataset_run

    for ex in (None, cf.ThreadPoolExecutor(1), cf.ProcessPoolExecutor(1)):
        assert _dataset_run.executor_of(ex, None)[2] is True
        if ex is not None:
            ex.shutdown()
    elsewhere = _Elsewhere(tmp_path / "their-disk")
    (tmp_path / "their-disk").mkdir()
    assert _dataset_run.executor_of(elsewhere, None)[2] is False
    # an executor not known to be local: the bytes come back and this process writes them
    got = dataset.write(CONFIG, COUNT, tmp_path / "a", SHARD, elsewhere, progress=False)
    assert _files(tmp_path / "a") == reference and not any((tmp_path / "their-disk").iterdir())
    assert all(e["sha256"] for e in got["shards"].values())
    # told the workers write, but they see another disk: refused, naming the switch
    with pytest.raises(ParamsError, match="workers_write"):
        dataset.write(
            CONFIG, COUNT, tmp_path / "b", SHARD, elsewhere, progress=False, workers_write=True
        )
    # local workers told to send bytes back: the same files
    with cf.ThreadPoolExecutor(2) as ex:
        dataset.write(CONFIG, COUNT, tmp_path / "c", SHARD, ex, progress=False, workers_write=False)
    assert _files(tmp_path / "c") == reference


# -- Dask ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_a_dask_cluster_of_two_worker_processes_writes_the_same_bytes(
    tmp_path, reference, dask_client
):
    m = dataset.write(CONFIG, COUNT, tmp_path, SHARD, scheduler=dask_client, progress=False)
    assert _files(tmp_path) == reference
    assert m["written"] == 4
    pids = set(dask_client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids
    from procgen_nb.track_gen import _dataset_run

    assert _dataset_run.executor_of(None, dask_client)[2] is True  # its workers wrote the files
    assert _dataset_run.executor_of(None, dask_client)[3] == 2  # worker slots
    m = dataset.write(
        CONFIG, COUNT, tmp_path / "pairs", SHARD, dask_client, progress=False, shards_per_task=2
    )
    assert _files(tmp_path / "pairs") == reference and m["written"] == 4


def test_a_worker_killed_mid_run_still_gives_every_shard_once(tmp_path, dask_client):
    count, shard = 8 * 16, 8
    out = tmp_path / "killed"
    result: dict = {}

    def run() -> None:
        result["m"] = dataset.write(CONFIG, count, out, shard, executor=dask_client, progress=False)

    th = threading.Thread(target=run)
    th.start()
    manifest = out / dataset.MANIFEST
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if len(json.loads(manifest.read_text())["shards"]) >= 1:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.01)
    victim = next(iter(dask_client.run(os.getpid).values()))
    os.kill(victim, signal.SIGKILL)
    th.join(300)
    assert not th.is_alive()
    assert result["m"]["written"] == 16
    assert sorted(_files(out)) == [f"shard-{i:06d}.parquet" for i in range(16)]
    fresh = tmp_path / "fresh"
    dataset.write(CONFIG, count, fresh, shard, progress=False)
    assert _files(fresh) == _files(out)


def test_the_dataset_benchmark_runs_in_smoke_mode():
    # in its own process, as a user runs it (its Dask cluster's start-up and shutdown stay
    # out of this process's warnings)
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "dataset.py"
    out = subprocess.run(
        [sys.executable, str(path), "--smoke", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    assert "Dask LocalCluster, 2 processes" in out and "ProcessPoolExecutor" in out
    assert "every run wrote the same bytes: True" in out
    per_track = float(out.split("on disk: ")[1].split()[0])
    # a centerline is 32 float32 pairs (256 bytes); metrics and the rest add a few hundred
    assert 256 < per_track < 2048


def test_a_course_dataset_holds_the_gates_of_one_course_batch(tmp_path):
    from procgen_nb.track_gen.gates.course import COURSE_REASONS, build

    course = {"gate_generator": "arc_length", "gate_params": {"spacing": 0.6}, "track_width": 0.2}
    m = dataset.write({**CONFIG, "course": course}, 20, tmp_path, 8, progress=False)
    assert m["config"]["course"]["centerline"] == "generator"
    assert m["reasons"] == {str(k): v for k, v in COURSE_REASONS.items()}
    table = dataset.read(tmp_path, verify=True)
    ref = build(
        20,
        generator="polar",
        num_points=48,
        seed=11,
        epoch=2,
        z_profile=None,
        validity=m["config"]["validity"],
        **course,
    ).numpy()
    G = ref["gate_position"].shape[1]
    gates = table["gate_position"].combine_chunks().flatten().flatten().to_numpy()
    np.testing.assert_array_equal(gates.reshape(20, G, 3), ref["gate_position"])  # NaN: unused
    np.testing.assert_array_equal(table["gate_count"].to_numpy(), ref["gate_count"])
    np.testing.assert_array_equal(dataset.centerlines(table), ref["xy"])
    np.testing.assert_array_equal(table["valid"].to_numpy(), ref["valid"] != 0)
    np.testing.assert_array_equal(table["track_valid"].to_numpy(), ref["track_valid"] != 0)
    free = dataset.write(
        {**CONFIG, "course": {"gate_generator": "free"}}, 4, tmp_path / "free", 4, progress=False
    )
    assert free["config"]["course"]["centerline"] == "through_gates"
