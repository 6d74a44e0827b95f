"""Building kernels ahead of time: every built-in variant and generator, or what a call needs.

``warmup()`` (``procgen-nb warmup``) builds every variant of every built-in kernel asset
(each combination of its specialize options) and every Warp module of the built-in track
generators, gate generators and track ops, in parallel threads, so that no later first
call waits for a compile. ``demo_modules()`` lists what ``procgen-nb demo`` needs, so the
demo builds those in parallel before it cooks.
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


#: The track modules the demo's polar courses with arc-length gates launch kernels from
#: (a module the track code adds later is still built, on its first launch, one at a time).
DEMO_TRACK_MODULES = frozenset(
    f"procgen_nb.track_gen.{name}"
    for name in (
        "generators._kernels",
        "gates._kernels",
        "gates._course_kernels",
        "ops._seed_kernels",
        "ops._resample_kernels",
        "ops._validity_kernels",
    )
)


def demo_modules(shape: str = "disk") -> list[Any]:
    """Returns the Warp modules ``procgen-nb demo --shape shape`` launches kernels from.

    A module missing here is still built when the demo first launches from it (in this
    process); one listed but not used would cost a build on a cold cache.
    """
    from .demo import COMPACT, GATHER, INSIDE, SCAN

    variants = [
        INSIDE.variant({"SHAPE": shape, "COUNT": "plain"}),
        COMPACT.variant({"COUNT": "plain"}),
        GATHER.variant({"TYPE": "vec2", "COUNT": "device"}),
        SCAN.variant({"TYPE": "i32", "COUNT": "plain"}),
    ]
    track = [m for m in track_modules() if m.name in DEMO_TRACK_MODULES]
    return [_warp_module(v.module) for v in variants] + track


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
