"""The one door to Warp's private modules: version check, build hooks, module internals.

procgen_nb uses Warp's public API (``warp``, ``warp.types``, ``warp.config``) everywhere
else. What it needs beyond that is reached here only, so that a Warp release that moves a
private name costs a feature, not the import:

- the build hook (``Module._compile``, ``Module._run_codegen``): the progress bar and the
  build log (``_progress``);
- the precompiled-header folder (``runtime._get_or_create_pch_dir``, ``runtime._pch_dirs``):
  the header shared between processes (``_pch``);
- the registry of Warp modules (``user_modules``), the launch block size
  (``_resolve_launch_block_dim``) and a module's cache names, loaded state and kernels
  (``warmup``, ``_progress.build``).

Each feature checks its names on first use. When one is missing (or the Warp version is
outside ``TESTED``), the feature falls back (no progress bar, no shared header, a public
but slower path for the rest) and one ``WarpCompatWarning`` per process names what is
missing and the Warp version. ``TESTED`` is the range ``pyproject.toml`` pins and the
test command runs (its oldest release in a second virtual environment).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

#: The Warp releases procgen_nb is tested with: ``(oldest, first untested)``, as in
#: pyproject.toml's ``warp-lang>=1.18,<1.20``.
TESTED = ((1, 18), (1, 20))

#: The private names each feature needs (``context.<name>``, ``runtime.<name>``).
FEATURES: dict[str, tuple[str, ...]] = {
    "build_hook": ("Module._compile", "Module._run_codegen"),
    "shared_pch": ("runtime._get_or_create_pch_dir", "runtime._pch_dirs"),
    "user_modules": ("user_modules",),
    "block_dim": ("_resolve_launch_block_dim",),
    "module_cache": (
        "Module.get_module_identifier",
        "Module._get_compile_output_name",
        "Module._get_meta_name",
    ),
}


class WarpCompatWarning(RuntimeWarning):
    """A private Warp name procgen_nb uses is missing: a feature runs without it."""


_lock = threading.RLock()
_warned = False
_missing: dict[str, list[str]] = {}


def version() -> tuple[int, ...]:
    """Returns the installed Warp's version as numbers (``(1, 19, 0)``)."""
    import warp as wp

    parts = []
    for p in str(wp.config.version).split("."):
        digits = "".join(c for c in p if c.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def tested() -> bool:
    """Returns whether the installed Warp is inside ``TESTED``."""
    return TESTED[0] <= version()[:2] < TESTED[1]


def context() -> Any:
    """Returns Warp's private ``context`` module (``warp._src.context``; older: ``warp.context``).

    Returns:
        The module, or ``None`` when neither name imports.
    """
    for name in ("warp._src.context", "warp.context"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(mod, "Module"):
            return mod
    return None


def _lookup(path: str) -> Any:
    """Returns ``context.<path>`` (``runtime.x``: on Warp's runtime object), or raises."""
    ctx = context()
    if ctx is None:
        raise AttributeError("warp._src.context")
    obj: Any = ctx
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def missing(feature: str) -> list[str]:
    """Returns the private names ``feature`` needs that this Warp lacks (checked once).

    Raises:
        KeyError: a feature not in ``FEATURES``.
    """
    with _lock:
        if feature not in _missing:
            gone = []
            for name in FEATURES[feature]:
                try:
                    _lookup(name)
                except AttributeError:
                    gone.append(name)
            _missing[feature] = gone
        return _missing[feature]


def available(feature: str) -> bool:
    """Returns whether ``feature`` can use Warp's private names; warns once when it cannot."""
    gone = missing(feature)
    if gone or not tested():
        _warn_once(feature, gone)
    return not gone


def _warn_once(feature: str, gone: list[str]) -> None:
    global _warned
    with _lock:
        if _warned:
            return
        _warned = True
    lo, hi = (".".join(map(str, v)) for v in TESTED)
    what = f"missing {', '.join(gone)} ({feature} falls back)" if gone else "untested"
    warnings.warn(
        f"procgen_nb: Warp {'.'.join(map(str, version()))}: {what}; "
        f"procgen_nb is tested with warp-lang>={lo},<{hi}",
        WarpCompatWarning,
        stacklevel=3,
    )


def _reset() -> None:
    """Forgets what was checked and warned (for tests)."""
    global _warned
    with _lock:
        _missing.clear()
        _warned = False


# ------------------------------------------------------------------------------ build hook


def wrap_module_method(name: str, make: Any) -> bool:
    """Replaces Warp's ``Module.<name>`` by ``make(original)`` (with ``__wrapped__`` set).

    Args:
        name: ``"_compile"`` or ``"_run_codegen"``.
        make: called with the original method; returns the replacement.

    Returns:
        Whether the hook is in place (False: the build hook is unavailable).
    """
    if not available("build_hook"):
        return False
    module_cls = _lookup("Module")
    original = getattr(module_cls, name)
    wrapped = make(original)
    wrapped.__wrapped__ = original
    setattr(module_cls, name, wrapped)
    return True


# ----------------------------------------------------------------- precompiled-header folder


def wrap_pch_dir(make: Any) -> bool:
    """Replaces the runtime's ``_get_or_create_pch_dir`` by ``make(original)`` (once).

    Returns:
        Whether the hook is in place (False: no shared header on this Warp).
    """
    if not available("shared_pch"):
        return False
    runtime = _lookup("runtime")
    if runtime is None:
        return False
    if getattr(runtime, "_procgen_pch", False):
        return True
    runtime._get_or_create_pch_dir = make(runtime._get_or_create_pch_dir)
    runtime._procgen_pch = True
    return True


def pch_thread_dir() -> str | None:
    """Returns this thread's precompiled-header folder, if Warp made one."""
    if missing("shared_pch"):
        return None
    runtime = _lookup("runtime")
    entry = getattr(runtime, "_pch_dirs", {}).get(threading.get_ident())
    return getattr(entry, "name", None)


# ---------------------------------------------------------------------------- Warp modules


def user_modules() -> dict[str, Any]:
    """Returns Warp's modules by Python name (``user_modules``).

    Without ``user_modules``, the modules that define kernels, found via ``sys.modules``.
    """
    import warp as wp

    if available("user_modules"):
        return dict(_lookup("user_modules"))
    out = {}
    for name, mod in list(sys.modules.items()):
        if mod is not None and any(
            isinstance(v, wp.Kernel) and v.module.name == name for v in vars(mod).values()
        ):
            out[name] = wp.get_module(name)
    return out


def module_of(pymod: Any) -> Any:
    """Returns the Warp module of an imported Python module (``wp.get_module``)."""
    import warp as wp

    return wp.get_module(pymod.__name__)


def kernels(module: Any) -> dict[str, Any]:
    """Returns a Warp module's kernels by key."""
    return dict(getattr(module, "kernels", {}) or {})


def kernel_args(kernel: Any) -> list[Any]:
    """Returns a kernel's arguments (each with ``label`` and ``type``)."""
    return list(kernel.adj.args)


def source_size(module: Any) -> int:
    """Returns the length of a module's kernels' Python source (a build cost estimate)."""
    return sum(len(getattr(k.adj, "source", "")) for k in kernels(module).values())


def launch_block_dim(module: Any, device: Any) -> int:
    """Returns the block size a launch of ``module`` on ``device`` builds with."""
    import warp as wp

    dev = wp.get_device(device)
    want = None if dev.is_cpu else module.options["block_dim"]
    if available("block_dim"):
        return int(_lookup("_resolve_launch_block_dim")(dev, want))
    return 1 if dev.is_cpu else int(want or 256)


def load(module: Any, device: Any) -> None:
    """Builds (if needed) and loads ``module`` on ``device`` at its launch block size."""
    import warp as wp

    dev = wp.get_device(device)
    if hasattr(module, "load"):
        module.load(dev, block_dim=launch_block_dim(module, dev))
    else:
        wp.load_module(module, device=dev)


def is_loaded(module: Any, device: Any) -> bool:
    """Returns whether ``module`` is loaded on ``device`` in this process."""
    import warp as wp

    ctx = wp.get_device(device).context
    return any(key[0] == ctx for key in getattr(module, "execs", {}))


def is_cached(module: Any, device: Any) -> bool:
    """Returns whether Warp's kernel cache holds ``module``'s binary for ``device``.

    Returns False when this Warp's cache layout is unknown (the module is then built).
    """
    import warp as wp

    if missing("module_cache"):
        return False
    dev = wp.get_device(device)
    try:
        dim = launch_block_dim(module, dev)
        folder = os.path.join(wp.config.kernel_cache_dir, module.get_module_identifier(dim))
        names = (module._get_compile_output_name(dev, block_dim=dim), module._get_meta_name(dim))
    except Exception:  # noqa: BLE001  (Warp internals moved: say "not cached", build it)
        return False
    return all(os.path.exists(os.path.join(folder, n)) for n in names)


def compile_ptx(module: Any, arch: int, module_dir: str | os.PathLike | None = None) -> list[Path]:
    """Compiles ``module`` to PTX for ``sm_<arch>`` without a GPU (``wp.compile_aot_module``).

    Args:
        module: a Warp module.
        arch: the compute capability as a number (80 for sm_80).
        module_dir: where the PTX goes (``None``: Warp's kernel cache, one folder per
            module, reused by later runs).

    Returns:
        The paths of the PTX files.
    """
    import warp as wp

    return [
        Path(p)
        for p in wp.compile_aot_module(module, arch=arch, module_dir=module_dir, use_ptx=True) or []
    ]
