"""``procgen-nb warmup``: builds every built-in kernel ahead of time for a device, or
compiles it to PTX for CUDA architectures without a GPU (``--cuda-arch``)."""

from __future__ import annotations

import argparse
import sys


def cuda_archs(text: str) -> list[int]:
    from . import _warmup
    from .errors import ParamsError

    try:
        return _warmup.parse_archs(text)
    except ParamsError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--cuda-arch: ")) from None


cuda_archs.__name__ = "sm_NN list"


def _cuda_warmup(args: argparse.Namespace, prog: str) -> int:
    from . import _progress, _warmup

    got = _warmup.cuda_warmup(
        args.cuda_arch, workers=args.workers, identities=args.kernels, track=args.generators
    )
    for line in got["refused"]:
        print(f"{prog}: refused variant {line}", file=sys.stderr)
    for arch, name, kernels, err in got["failed"]:
        print(f"{prog}: {arch}: failed to compile {name} (kernel {', '.join(kernels)}): {err}")
    archs = ",".join(f"sm_{a}" for a in got["archs"])
    print(
        f"warmup: PTX for {archs}: {got['compiled']} compiled, {got['cached']} already cached, "
        f"in {got['seconds']:.1f} s; Warp's kernel cache: {_progress.human_path(got['cache'])}"
    )
    print(f"{got['modules']} modules, {got['variants']} variants, {len(got['failed'])} failed")
    return 1 if got["failed"] else 0


def run(args: argparse.Namespace, prog: str) -> int:
    """Runs ``procgen-nb warmup`` (``prog`` names the program in messages); returns the
    exit status (1 when a module failed to build)."""
    from . import _progress, _warmup

    if args.cuda_arch is not None:
        return _cuda_warmup(args, prog)
    got = _warmup.warmup(
        device=args.device, workers=args.workers, identities=args.kernels, track=args.generators
    )
    for line in got["refused"]:
        print(f"{prog}: refused variant {line}", file=sys.stderr)
    for name, err in got["failed"]:
        print(f"{prog}: failed to build {name}: {err}", file=sys.stderr)
    print(
        f"warmup: {got['modules']} kernel modules on {got['device']}: {got['compiled']} built, "
        f"{got['cached']} already cached, in {got['seconds']:.1f} s; "
        f"Warp's kernel cache: {_progress.human_path(got['cache'])}"
    )
    return 1 if got["failed"] else 0
