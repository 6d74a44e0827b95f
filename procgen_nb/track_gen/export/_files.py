"""Writing file sets: every file under a temporary name first, renamed into place once all
are written, the files they replace kept aside until every rename has succeeded; after an
error every file holds its old bytes and nothing half-written is left."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import ExportError


def prepare_out(out: Any) -> Path:
    """Returns ``out`` as a folder, made when missing.

    Raises:
        ExportError: ``out`` is not a path, is a file, or cannot be made.
    """
    if not isinstance(out, str | os.PathLike) or not str(out):
        raise ExportError(f"out: expected a folder path, got {out!r}")
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise ExportError(f"out: expected a folder, got the file {str(path)!r}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(
            f"out: expected a folder that can be made, got {str(path)!r} ({exc})"
        ) from exc
    return path


def write_set(folder: Path, files: Mapping[str, bytes]) -> list[str]:
    """Writes ``files`` (name -> bytes) into ``folder``, all or nothing. Returns the names.

    Every file is first written under a hidden temporary name; only then is each renamed
    over its final name (``os.replace``), a file already there moved aside to a hidden
    backup first. When a write or a rename fails, every final name is given back what it
    held before (its backup, or nothing) and the temporary files are removed; the backups
    are removed once every rename has succeeded.

    Raises:
        ExportError: a file could not be written or renamed (the folder is left as it was).
    """
    tag = uuid.uuid4().hex[:12]
    temps: list[tuple[Path, Path, Path]] = []  # (temporary, final, backup)
    done: list[tuple[Path, Path | None]] = []  # (final, its backup or None), renamed so far
    try:
        for name, data in files.items():
            final = folder / name
            temps.append((folder / f".{name}.{tag}.tmp", final, folder / f".{name}.{tag}.old"))
            with open(temps[-1][0], "wb") as fh:
                fh.write(data)
        for tmp, final, backup in temps:
            if os.path.lexists(final):
                os.replace(final, backup)
                done.append((final, backup))
            else:
                done.append((final, None))
            os.replace(tmp, final)
    except OSError as exc:
        for final, kept in reversed(done):  # give each final name back what it held
            with contextlib.suppress(OSError):
                if kept is None:
                    final.unlink()  # nothing there when its own rename failed
                else:
                    os.replace(kept, final)
        for tmp, _, _ in temps:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise ExportError(f"out: expected a writable folder, got {str(folder)!r} ({exc})") from exc
    for _, kept in done:
        if kept is not None:
            with contextlib.suppress(OSError):
                kept.unlink()
    return list(files)


__all__ = ["prepare_out", "write_set"]
