"""The files of a dataset folder: its manifest, the shards' hashes and the writer's lock
(one writer per folder at a time), and the checks of a read (a shard's entry, the columns
asked for, a file pyarrow cannot read), for ``track_gen.dataset``."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import DatasetError, ParamsError
from ._dataset_run import _atomic_write

MANIFEST = "_manifest.json"  # "_": plain pyarrow.parquet reads of the folder skip it


def _sha256(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def _load_manifest(out: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((out / MANIFEST).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ParamsError(f"dataset manifest {out / MANIFEST}: expected JSON, got {exc}") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("shards", {}), dict):
        raise ParamsError(
            f"dataset manifest {out / MANIFEST}: expected a JSON object with a 'shards' "
            f"object, got {str(manifest)[:120]}"
        )
    return manifest


#: the lock file a writer holds (``flock``) while it writes a folder; it names its pid
LOCK = ".lock"


@contextlib.contextmanager
def _writer_lock(out: Path, wait: bool) -> Iterator[None]:
    """Holds ``out``'s writer lock: one writer per folder at a time.

    The lock is an ``flock`` on ``out/.lock``, which the system lets go when its process
    ends, so a dead writer's lock is taken over at once; the file names the holder's pid,
    and the writer removes it (still holding it) when done.

    Raises:
        DatasetError: another live writer holds the folder (``wait`` False).
    """
    try:
        import fcntl
    except ImportError:  # no flock (Windows): one writer is the caller's to ensure
        yield
        return
    path = out / LOCK
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise DatasetError(
                f"dataset.write out {str(out)!r}: expected a folder no other writer is writing, "
                f"got one that pid {holder} is writing (pass wait=True to wait for it)"
            ) from None
        try:  # the file may have been let go (unlinked) by the writer we waited for
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        path.unlink(missing_ok=True)  # while still held: a waiter then sees it gone
        os.close(fd)


def _save_manifest(out: Path, manifest: dict[str, Any]) -> None:
    _atomic_write(out / MANIFEST, (json.dumps(manifest, indent=1, sort_keys=False) + "\n").encode())


def _shard_file(path: Path, shards: dict[str, Any], i: int, num: int, verify: bool) -> Path:
    """The file of shard ``i`` (of ``num``) that the manifest's ``shards`` names in the
    dataset folder ``path``, its sha256 checked when ``verify``.

    Raises:
        ParamsError: no entry for it, an entry naming no file in the folder (or a link out
            of it) or no sha256, or (``verify``) a file whose hash does not match.
    """
    entry = shards.get(str(i))
    if entry is None:
        raise ParamsError(
            f"dataset.read {str(path)!r}: expected shard {i} of {num}, "
            "got none (run write again to finish it)"
        )
    name = entry.get("file") if isinstance(entry, dict) else None
    if (
        not isinstance(name, str)
        or name != Path(name).name
        or name in ("", ".", "..")
        or not isinstance(entry.get("sha256"), str)
    ):
        raise ParamsError(
            f"dataset.read {str(path)!r}: expected shard {i}'s entry to name a file in the "
            f"folder and its sha256, got {str(entry)[:160]}"
        )
    file = path / name
    if file.resolve().parent != path.resolve():  # a link out of the folder
        raise ParamsError(
            f"dataset.read {str(path)!r}: expected shard {i}'s file inside the folder, got "
            f"{name!r} leading to {str(file.resolve())!r}"
        )
    if verify and _sha256(file) != entry["sha256"]:
        raise ParamsError(f"dataset.read {file}: expected sha256 {entry['sha256']}, got another")
    return file


def _check_columns(columns: Any, known: Any, where: Path) -> list[str] | None:
    """``read``'s ``columns`` as a list (None: all), each one of ``known`` (the manifest's
    ``columns`` or a file's schema names).

    Raises:
        ParamsError: ``columns`` not None or a list of str, a name not in ``known``, or
            ``known`` (a manifest's) not a list of str.
    """
    if not isinstance(known, list) or not all(isinstance(c, str) for c in known):
        raise ParamsError(
            f"dataset.read {str(where)!r}: expected a manifest 'columns' list of names, "
            f"got {str(known)[:120]}"
        )
    if columns is None:
        return None
    if isinstance(columns, str | bytes) or not isinstance(columns, list | tuple):
        raise ParamsError(
            f"dataset.read columns: expected None or a list of column names, got {columns!r}"
        )
    bad = [c for c in columns if not isinstance(c, str) or c not in known]
    if bad:
        raise ParamsError(
            f"dataset.read columns: expected names among {known} ({str(where)!r}), got {bad}"
        )
    return list(columns)


def _read_parquet(file: Path, columns: list[str] | None, schema: bool = False) -> Any:
    """``pyarrow.parquet.read_table(file, columns=)`` (with ``schema``: the file's column
    names, ``read_schema``), a file pyarrow cannot read refused.

    Raises:
        ParamsError: naming ``file``: not Parquet, truncated, or unreadable.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if schema:
            return list(pq.read_schema(file).names)
        return pq.read_table(file, columns=columns)
    except (pa.ArrowException, OSError) as exc:
        raise ParamsError(
            f"dataset.read {str(file)!r}: expected a Parquet shard, got {type(exc).__name__}: "
            f"{str(exc)[:200]}"
        ) from exc


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    import pyarrow
    import warp

    return {
        "procgen_nb": version("procgen_nb"),
        "warp": warp.__version__,
        "pyarrow": pyarrow.__version__,
    }


__all__ = ["LOCK", "MANIFEST"]
