"""Warp's precompiled header, built once per machine instead of once per process.

Warp 1.19 compiles CPU kernels with Clang and a precompiled header (PCH) of its runtime
headers, kept in a temporary folder per thread that no later process reuses. Building it
is most of the cost of a process's first compile (about 2 s on an idle 2-core box; a
one-kernel module then takes a fraction of a second). ``install()`` (called by
``_progress.install``) shares it: each thread's PCH folder starts with the ``.pch`` files
already in ``<kernel cache>/procgen_nb_pch/<key>``, and after a compile any new ``.pch``
is copied there (atomically). ``<key>`` hashes Warp's version, where it is installed and
its headers' sizes and times, so a reinstalled Warp starts a new folder; only files that
begin with Clang's PCH signature are shared (should Clang still refuse one, Warp itself
compiles again without it).

``PROCGEN_NB_SHARE_PCH=0`` leaves Warp's own behaviour.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import shutil
import threading
from typing import Any

from . import _warp_compat

_lock = threading.Lock()
_seeded: dict[str, int] = {}  # per-thread folder -> how many shared files it started with
_MAGIC = b"CPCH"
_shared: str | None = None


def enabled() -> bool:
    """Returns whether the PCH is shared between processes (``PROCGEN_NB_SHARE_PCH``)."""
    return os.environ.get("PROCGEN_NB_SHARE_PCH", "1").strip().lower() not in (
        "0",
        "off",
        "false",
        "no",
    )


def _key() -> str:
    import warp as wp

    native = os.path.join(os.path.dirname(wp.__file__), "native")
    parts = [wp.config.version, os.path.realpath(native)]
    for path in sorted(glob.glob(os.path.join(native, "*.h"))):
        st = os.stat(path)
        parts.append(f"{os.path.basename(path)}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def shared_dir() -> str:
    """Returns the folder that keeps the shared ``.pch`` files (created on first use)."""
    global _shared
    if _shared is None:
        import warp as wp

        _shared = os.path.join(str(wp.config.kernel_cache_dir), "procgen_nb_pch", _key())
        os.makedirs(_shared, exist_ok=True)
    return _shared


def shared_files() -> list[str]:
    """The shared ``.pch`` files (those with Clang's signature)."""
    return [p for p in glob.glob(os.path.join(shared_dir(), "*.pch")) if _is_pch(p)]


def _is_pch(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == _MAGIC
    except OSError:
        return False


def seeded_files() -> int:
    """How many shared ``.pch`` files this thread's PCH folder started with."""
    return _seeded.get(_thread_dir() or "", 0)


def _thread_dir() -> str | None:
    return _warp_compat.pch_thread_dir()


def install() -> None:
    """Wraps Warp's per-thread PCH folder so that it starts from the shared files.

    On a Warp without that folder's names (``_warp_compat``), each process builds its own.
    """
    if not enabled():
        return

    def make(original: Any) -> Any:
        def get_or_create() -> str:
            folder = original()
            with _lock:
                if folder not in _seeded:
                    _seeded[folder] = 0
                    with contextlib.suppress(OSError):
                        for src in glob.glob(os.path.join(shared_dir(), "*.pch")):
                            dst = os.path.join(folder, os.path.basename(src))
                            if _is_pch(src) and not os.path.exists(dst):
                                shutil.copy2(src, dst)
                                _seeded[folder] += 1
            return folder

        return get_or_create

    _warp_compat.wrap_pch_dir(make)


def publish() -> None:
    """Copies this thread's new ``.pch`` files to the shared folder (after a compile)."""
    if not enabled():
        return
    folder = _thread_dir()
    if not folder:
        return
    with contextlib.suppress(OSError):
        shared = shared_dir()
        for src in glob.glob(os.path.join(folder, "*.pch")):
            dst = os.path.join(shared, os.path.basename(src))
            if (os.path.exists(dst) and _is_pch(dst)) or not _is_pch(src):
                continue
            tmp = f"{dst}.{os.getpid()}.{threading.get_ident()}.tmp"
            shutil.copy2(src, tmp)
            os.replace(tmp, dst)


def compile_and_publish(compile_: Any, module: Any, device: Any, *args: Any, **kwargs: Any) -> Any:
    """Runs Warp's ``Module._compile``; after a real compile, shares a new PCH."""
    result = compile_(module, device, *args, **kwargs)
    if result and enabled():
        publish()
    return result
