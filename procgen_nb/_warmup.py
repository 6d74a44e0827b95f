"""Building kernels ahead of time: every built-in variant and generator, or what a call needs.

``warmup()`` (``procgen-nb warmup``) builds every variant of every built-in kernel asset
(each combination of its specialize options) and every Warp module of the built-in track
generators, gate generators and track ops, in parallel threads, so that no later first
call waits for a compile. ``demo.demo_modules()`` lists what ``procgen-nb demo`` needs
from these (the demo knows its kernels; this module never imports it).

``cuda_warmup(archs)`` (``procgen-nb warmup --cuda-arch sm_80,sm_90``) compiles the same
modules, the deprecated 0.1 helpers' kernels and fieldc's kernels for the notebooks' Fields
to PTX for each CUDA architecture, on a machine without a GPU (Warp's ahead-of-time
compile, into its kernel cache: a second run finds everything there).
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

from . import _progress, _warp_compat

#: The Python packages whose Warp modules hold the built-in generators and track ops.
TRACK_PACKAGES = (
    "procgen_nb.track_gen.generators",
    "procgen_nb.track_gen.gates",
    "procgen_nb.track_gen.ops",
)


def variant_options(identity: str) -> list[dict[str, str]]:
    """Returns every combination of a kernel's specialize options (one dict per variant)."""
    from . import asset

    names = asset.resolve(identity).spec.option_names()
    keys = sorted(names)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(names[k] for k in keys))]


def _warp_module(pymod: Any) -> Any:
    return _warp_compat.module_of(pymod)


def variant_modules(identities: list[str] | None = None) -> tuple[list[Any], list[str]]:
    """Prepares every variant of the given kernels (preprocessed and imported).

    Args:
        identities: kernel identities (``None``: every built-in, ``procgen/...``).

    Returns:
        The Warp modules to build, and one line for each variant the loader refused.

    Raises:
        AssetError: an identity that does not resolve.
    """
    from . import asset
    from .errors import ProcgenError

    if identities is None:
        identities = [i for i in asset.identities() if i.startswith("procgen/")]
    modules, refused = [], []
    for identity in identities:
        ref = asset.resolve(identity)
        for opts in variant_options(identity):
            try:
                modules.append(_warp_module(ref.variant(opts).module))
            except ProcgenError as e:
                refused.append(f"{identity} {opts}: {e}")
    return modules, refused


def track_modules() -> list[Any]:
    """Imports the built-in generators, gate generators and ops; returns their Warp modules."""
    import importlib

    for name in TRACK_PACKAGES:
        importlib.import_module(name)
    return _progress.warp_modules("procgen_nb.track_gen")


#: Runtime modules with kernels of their own (live counts, casts, the ops' helpers).
RUNTIME_PACKAGES = ("procgen_nb.counts", "procgen_nb.ops", "procgen_nb._cast")


def builtin_modules() -> list[Any]:
    """Every imported Warp module of procgen_nb itself: runtime, ops, generators, gates."""
    import importlib

    track_modules()
    for name in RUNTIME_PACKAGES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    return _progress.warp_modules("procgen_nb")


#: The deprecated 0.1 helpers with kernels of their own (``track_gen._src``).
LEGACY_PACKAGES = tuple(
    f"procgen_nb.track_gen._src.{name}"
    for name in (
        "warp_generate_checkpoint",
        "warp_generate_polar",
        "warp_generate_voronoi",
        "warp_pipeline",
        "warp_zprofile",
    )
)


def legacy_modules() -> list[Any]:
    """Imports the deprecated 0.1 helpers that hold kernels; returns their Warp modules."""
    import importlib
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in LEGACY_PACKAGES:
            importlib.import_module(name)
    return _progress.warp_modules("procgen_nb.track_gen._src")


def notebook_fields() -> list[Any]:
    """Returns the Fields the tutorial notebooks evaluate (fieldc builds one kernel each).

    Columns are one-slot stand-ins on the package's device: a Field's kernel depends on
    its shape and its columns' elements, not on their values.
    """
    import numpy as np

    from . import fieldc as F
    from .columns import column_from_numpy
    from .device import resolve_device

    dev = resolve_device(None)
    points = F.col(column_from_numpy(np.zeros((1, 2), np.float32), "Vec2", dev))
    ints = F.col(column_from_numpy(np.zeros(1, np.int32), "Int", dev))
    return [
        F.length(points) < 0.7,  # 04: delete's flags
        F.to_int(F.hash01(F.index(), 5) * 3) + 1,  # 04: expand's copies
        ints < 2,  # 04: the first two copies (expand's local_index)
        F.clamp(1.0 - F.abs_(F.length(points) - 0.5) * 4.0, 0.0, 1.0),  # 04: the ring
        ints < 0,  # 04: points not kept (compact's inverse)
    ]


def field_modules() -> list[Any]:
    """Returns the Warp modules of ``notebook_fields()`` (written and imported once)."""
    from .fieldc._codegen import module_for, shape_key
    from .fieldc._evaluate import _element

    out = []
    for field in notebook_fields():
        shape, cols, consts = shape_key(field)
        mod = module_for(shape, [_element(c) for c in cols], [f.element for f in consts])
        out.append(_warp_module(mod))
    return list({id(m): m for m in out}.values())


def parse_archs(text: str) -> list[int]:
    """Parses ``"sm_80,sm_90"`` into ``[80, 90]`` (sorted, without repeats).

    Raises:
        ParamsError: an entry that is not ``sm_<major><minor>`` with a compute capability
            between 5.0 and 12.x, or an empty list.
    """
    import re

    from .errors import ParamsError

    archs = []
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*sm_(\d{2,3})\s*", part)
        if not m or not 50 <= int(m.group(1)) <= 129:
            raise ParamsError(
                f"--cuda-arch: expected a comma list of sm_<NN> (sm_50 ... sm_129, "
                f"e.g. sm_80,sm_90), got {part.strip()!r} in {text!r}"
            )
        archs.append(int(m.group(1)))
    return sorted(set(archs))


def _kernels_named(module: Any, error: Exception) -> list[str]:
    """The kernels of ``module`` a compile error names (all of them when it names none)."""
    keys = sorted(_warp_compat.kernels(module))
    text = str(error)
    named = [k for k in keys if k in text]
    return named or keys


def compile_ptx(
    modules: list[Any], archs: list[int], workers: int = 2
) -> tuple[dict[tuple[str, int], list[str]], list[tuple[str, str, list[str], str]], Any]:
    """Compiles Warp modules to PTX for each architecture, ``workers`` modules at once.

    Returns:
        ``(ptx, failed, stats)``: the PTX paths by ``(module name, arch)``; one sorted
        ``("sm_<arch>", module, kernels, error)`` per failed compile, naming the module and
        the kernels the error names (all of them when it names none); the ``_progress``
        session's ``Stats`` (compiled / cached counts, seconds).
    """
    from concurrent.futures import ThreadPoolExecutor

    ptx: dict[tuple[str, int], list[str]] = {}
    failed: list[tuple[str, str, list[str], str]] = []

    def one(m: Any) -> None:  # one module's architectures in turn (one thread per module)
        for arch in archs:
            try:
                ptx[(m.name, arch)] = [str(p) for p in _warp_compat.compile_ptx(m, arch)]
            except Exception as e:  # noqa: BLE001  (reported per module and kernel)
                name = _progress.display_name(m)
                failed.append((f"sm_{arch}", name, _kernels_named(m, e), str(e)))

    with _progress.session(total=len(modules) * len(archs)) as st:
        with ThreadPoolExecutor(max(1, workers)) as pool:
            list(pool.map(one, sorted(modules, key=_warp_compat.source_size, reverse=True)))
    return ptx, sorted(failed), st


def cuda_warmup(
    archs: list[int], workers: int = 2, identities: list[str] | None = None, track: bool = True
) -> dict[str, Any]:
    """Compiles every built-in module and kernel variant to PTX for each CUDA architecture.

    Needs no GPU: Warp's ahead-of-time compile (``wp.compile_aot_module``) writes each
    module's PTX into its kernel cache, where a later run finds it.

    Args:
        archs: compute capabilities as numbers (``[80, 90]`` for sm_80 and sm_90).
        workers: how many modules compile at once (threads: the CUDA compiler runs
            outside Python's lock).
        identities: only the variants of these kernels (``None``: every built-in).
        track: also the package's own modules (runtime, ops, track generators, gates,
            the 0.1 helpers) and fieldc's kernels for the notebooks' Fields.

    Returns:
        ``{"archs", "modules", "variants", "compiled", "cached", "seconds", "failed",
        "refused", "ptx", "cache"}``: ``modules`` the package's own Warp modules,
        ``variants`` the kernel-asset variants and field kernels, ``failed`` one
        ``(arch, module, kernels, error)`` per failed compile, ``ptx`` the PTX paths by
        ``(module name, arch)``.

    Raises:
        ParamsError: an empty ``archs``.
        AssetError: an identity that does not resolve.
    """
    from .errors import ParamsError

    if not archs:
        raise ParamsError("archs: expected at least one compute capability, got []")
    variants, refused = variant_modules(identities)
    own: list[Any] = []
    if track:
        own = builtin_modules() + legacy_modules()
        variants += field_modules()
    own = list({m.name: m for m in own}.values())
    modules = own + variants
    ptx, failed, st = compile_ptx(modules, archs, workers)
    return {
        "archs": archs,
        "modules": len(own),
        "variants": len(variants),
        "compiled": st.compiled,
        "cached": st.cached,
        "seconds": st.seconds,
        "failed": failed,
        "refused": refused,
        "ptx": ptx,
        "cache": _progress.cache_dir(),
    }


def warmup(
    device: str | None = None,
    workers: int = 2,
    identities: list[str] | None = None,
    track: bool = True,
) -> dict[str, Any]:
    """Builds every built-in kernel variant and generator module on ``device``.

    Args:
        device: a Warp device name (``None``: the package's device).
        workers: how many modules compile at once (processes on the CPU).
        identities: only the variants of these kernels (``None``: every built-in).
        track: also the runtime's own kernels and the track generators, gate generators
            and track ops.

    Returns:
        ``{"device", "modules", "compiled", "cached", "seconds", "failed", "refused",
        "cache"}``: what was built, how long it took and where Warp keeps it.
    """
    from .device import resolve_device

    dev = resolve_device(device)
    variants, refused = variant_modules(identities)
    modules = variants + (builtin_modules() if track else [])
    with _progress.session(total=len(modules)) as st:
        failed = _progress.build(modules, dev, workers)
    return {
        "device": dev,
        "modules": len(modules),
        "compiled": st.compiled,
        "cached": st.cached,
        "seconds": st.seconds,
        "failed": failed,
        "refused": refused,
        "cache": _progress.cache_dir(),
    }
