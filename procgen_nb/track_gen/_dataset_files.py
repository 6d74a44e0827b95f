"""The files of a dataset folder: its manifest, the shards' hashes and the writer's lock
(one writer per folder at a time), for ``track_gen.dataset``."""

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
