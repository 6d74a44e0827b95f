"""A refused ``dataset.write`` or ``dataset.read`` raises the package's error naming the
input, and a refused write makes and changes nothing: an empty ``out``, a bad executor or
scheduler (malformed, or nothing answering there), a read of a file that is not Parquet or
of columns the dataset does not hold."""

from __future__ import annotations

import os
import socket
import time

import pytest

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import dataset

CONFIG = {"generator": "polar", "num_points": 16, "seed": 3}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("small")
    dataset.write(CONFIG, 4, out, 2, progress=False)
    return out


def _snapshot(folder) -> dict[str, tuple[bytes, int, int]]:
    """Every file's bytes, inode and mtime: a rewrite with the same bytes still shows."""
    out = {}
    for name in sorted(os.listdir(folder)):
        st = os.stat(folder / name)
        out[name] = ((folder / name).read_bytes(), st.st_ino, st.st_mtime_ns)
    return out


def _refused_port() -> int:
    """A local TCP port nothing listens on (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_empty_out_is_refused_and_nothing_lands_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ParamsError, match=r"dataset.write out: expected a directory path, got ''"):
        dataset.write(CONFIG, 4, "", 2, progress=False)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"executor": "bogus"}, r"executor: expected a concurrent.futures.Executor.*'bogus'"),
        ({"scheduler": 3}, r"scheduler: expected 'tcp://host:port'.*got 3"),
        ({"scheduler": "notanaddress"}, r"scheduler: expected .*got 'notanaddress'"),
    ],
)
def test_a_refused_executor_makes_no_folder_and_leaves_a_dataset_as_it_was(
    tmp_path, small, kwargs, match
):
    new = tmp_path / "new"
    with pytest.raises(ParamsError, match=match):
        dataset.write(CONFIG, 4, new, 2, progress=False, **kwargs)
    assert not new.exists()
    before = _snapshot(small)
    with pytest.raises(ParamsError, match=match):
        dataset.write(CONFIG, 4, small, 2, progress=False, **kwargs)
    assert _snapshot(small) == before


def test_a_scheduler_nothing_answers_is_blamed_not_out(tmp_path):
    import dask
    import distributed  # noqa: F401  (its config defaults, before dask.config.set)

    address = f"tcp://127.0.0.1:{_refused_port()}"
    t0 = time.perf_counter()
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        with pytest.raises(ParamsError, match="scheduler") as info:
            dataset.write(CONFIG, 4, tmp_path / "d", 2, progress=False, scheduler=address)
    assert time.perf_counter() - t0 < 10
    msg = str(info.value)
    assert address in msg and "running Dask scheduler" in msg and "writable" not in msg
    assert not (tmp_path / "d").exists()


def test_read_of_a_file_that_is_not_parquet_names_it(tmp_path):
    bogus = tmp_path / "notes.parquet"
    bogus.write_text("not parquet")
    with pytest.raises(ParamsError, match=r"dataset.read '.*notes.parquet': expected a Parquet"):
        dataset.read(bogus)


def test_read_of_a_corrupt_shard_unverified_names_the_shard(tmp_path, small):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(small, copy)
    (copy / "shard-000001.parquet").write_bytes(b"PAR1 broken")
    with pytest.raises(ParamsError, match=r"shard-000001.parquet': expected a Parquet shard"):
        dataset.read(copy, verify=False)


@pytest.mark.parametrize(
    "columns, match",
    [
        (["bogus"], r"columns: expected names among \['track', 'seed'.*got \['bogus'\]"),
        (["seed", 3], r"columns: expected names among .*got \[3\]"),
        ("seed", r"columns: expected None or a list of column names, got 'seed'"),
        (5, r"columns: expected None or a list of column names, got 5"),
    ],
)
def test_read_refuses_columns_the_dataset_does_not_hold(small, columns, match):
    with pytest.raises(ParamsError, match=match):
        dataset.read(small, columns=columns)
    with pytest.raises(ParamsError, match=match.replace("'track', 'seed'", "'track'")):
        dataset.read(small / "shard-000000.parquet", columns=columns)


def test_read_of_named_columns_gives_those_columns(small):
    table = dataset.read(small, columns=["track", "seed"])
    assert table.column_names == ["track", "seed"]
    assert table["track"].to_pylist() == [0, 1, 2, 3]
    assert table["seed"].to_pylist() == [3] * 4
    one = dataset.read(small / "shard-000001.parquet", columns=("track",))
    assert one["track"].to_pylist() == [2, 3]


def test_a_manifest_whose_columns_are_not_names_is_refused(tmp_path, small):
    import json
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(small, copy)
    manifest = json.loads((copy / dataset.MANIFEST).read_text())
    manifest["columns"] = "track"
    (copy / dataset.MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ParamsError, match="expected a manifest 'columns' list of names"):
        dataset.read(copy)
