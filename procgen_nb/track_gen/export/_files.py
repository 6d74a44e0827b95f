"""Writing file sets: every file under a temporary name first, renamed into place once all
are written; nothing half-written is left after an error."""

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
    """Writes ``files`` (name -> bytes) into ``folder``: each under a hidden temporary name,
    then each renamed over its final name (``os.replace``). Returns the names written.

    Raises:
        ExportError: a file could not be written (every temporary file is removed).
    """
    tag = uuid.uuid4().hex[:12]
    temps: list[tuple[Path, Path]] = []
    try:
        for name, data in files.items():
            final = folder / name
            tmp = folder / f".{name}.{tag}.tmp"
            temps.append((tmp, final))
            with open(tmp, "wb") as fh:
                fh.write(data)
        for tmp, final in temps:
            os.replace(tmp, final)
    except OSError as exc:
        for tmp, _ in temps:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise ExportError(f"out: expected a writable folder, got {str(folder)!r} ({exc})") from exc
    return list(files)


__all__ = ["prepare_out", "write_set"]
