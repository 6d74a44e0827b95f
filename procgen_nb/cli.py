"""The ``procgen-nb`` command: ``procgen-nb demo --out demo.png``, ``procgen-nb warmup``.

Every user mistake (a bad option value, an --out that cannot be written) is refused before
any work starts, in one line on stderr with exit status 2. Warp is imported only by the
commands that run kernels, so ``--help`` and ``--version`` answer at once.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

PROG = "procgen-nb"

DESCRIPTION = """\
A Jupyter toolkit for exploring procedural generation on NVIDIA Warp.
Run "procgen-nb COMMAND --help" for the options of a command.

Kernels compile on first use and are kept in Warp's kernel cache; a progress bar on
stderr shows each build. PROCGEN_DEVICE=cpu|cuda:0 picks the device (default: CUDA
when present, else the CPU); PROCGEN_NB_PROGRESS=0 hides the build progress.
"""

DEMO_DESCRIPTION = """\
Cooks the sample graph (points -> keep -> kept, offsets): uploads N seeded random points,
keeps those inside a shape on the device, gathers and scans them over live counts that
never leave the device; builds a grid of polar race-track courses with arc-length gates;
prints the cook report and writes a figure of both.
"""

WARMUP_DESCRIPTION = """\
Builds every variant of every built-in kernel asset and every Warp module of the
built-in track generators, gate generators and track ops, several at a time, and says
how long it took and where Warp keeps them. Later first runs find them cached.
"""


class _Parser(argparse.ArgumentParser):
    """argparse that reports a mistake in one line (no usage block) with exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Keeps the descriptions' line breaks and states every option's default.

    Options whose help already says what happens by default (a default of None, a flag)
    get no "(default: ...)" of their own.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or isinstance(action.default, bool):
            return action.help or ""
        return super()._get_help_string(action)


def _bounded(kind: type, lo: float, hi: float, what: str):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not (lo <= value <= hi) or value != value:
            raise argparse.ArgumentTypeError(f"expected {what} in [{lo}, {hi}], got {text!r}")
        return value

    parse.__name__ = what  # argparse names the type in its messages
    return parse


_count = _bounded(int, 0, 1_000_000, "an integer")
_seed = _bounded(int, 0, 2**31 - 1, "an integer")
_radius = _bounded(float, 0.0, 2.0, "a number")
_tracks = _bounded(int, 1, 64, "an integer")
_workers = _bounded(int, 1, 64, "an integer")


def _version() -> str:
    from importlib import metadata

    from . import __version__

    try:
        warp = metadata.version("warp-lang")
    except metadata.PackageNotFoundError:  # pragma: no cover (a dependency)
        warp = "not installed"
    py = ".".join(map(str, sys.version_info[:3]))
    return f"{PROG} {__version__} (warp-lang {warp}, Python {py})"


class _Version(argparse.Action):
    """``--version``: reads the installed versions only when asked (importlib.metadata is slow)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(_version())
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    """Returns the command line's parser (no heavy import)."""
    parser = _Parser(prog=PROG, description=DESCRIPTION, formatter_class=_Formatter)
    parser.add_argument("--version", action=_Version, help="show the versions and exit")
    sub = parser.add_subparsers(
        dest="command", metavar="{demo,warmup}", title="commands", parser_class=_Parser
    )
    sub.required = True
    demo = sub.add_parser(
        "demo",
        help="cook the sample graph and a grid of race tracks, write a PNG",
        description=DEMO_DESCRIPTION,
        formatter_class=_Formatter,
    )
    demo.add_argument(
        "--out",
        default="demo.png",
        metavar="PATH",
        help="the figure to write; its extension picks the format (.png, .pdf, .svg, ...) "
        "and its folder must exist",
    )
    demo.add_argument("--n", type=_count, default=4000, help="number of random points")
    demo.add_argument("--seed", type=_seed, default=7, help="random seed of points and tracks")
    demo.add_argument(
        "--radius",
        type=_radius,
        default=0.6,
        help="radius of the kept shape (half-side for square; outer radius for ring, "
        "whose inner radius is 0.3)",
    )
    demo.add_argument(
        "--shape", default="disk", choices=["disk", "square", "ring"], help="the shape kept"
    )
    demo.add_argument(
        "--tracks", type=_tracks, default=6, help="number of race-track courses drawn"
    )
    warm = sub.add_parser(
        "warmup",
        help="build every built-in kernel ahead of time",
        description=WARMUP_DESCRIPTION,
        formatter_class=_Formatter,
    )
    warm.add_argument(
        "--device",
        default=None,
        help="Warp device to build for (cpu, cuda:0); default: the one procgen_nb uses",
    )
    warm.add_argument(
        "--workers", type=_workers, default=2, help="how many modules compile at once"
    )
    warm.add_argument(
        "--kernels",
        nargs="+",
        metavar="ID",
        default=None,
        help="only the variants of these kernel identities (procgen/gather ...); "
        "default: every built-in",
    )
    warm.add_argument(
        "--no-generators",
        dest="generators",
        action="store_false",
        help="skip the track generators, gate generators and track ops",
    )
    return parser


def _fail(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def check_out(out: str) -> str | None:
    """Returns why ``out`` cannot be the demo's figure, or None when it can.

    It must not be a folder, its folder must exist and be writable, and its extension
    must be a format matplotlib writes.
    """
    if not out:
        return "--out: expected a file path, got ''"
    if os.path.isdir(out):
        return f"--out: expected a file path, got the folder {out!r}"
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        return f"--out: expected a path in an existing folder, got {out!r} (no folder {folder!r})"
    if not os.access(folder, os.W_OK):
        return f"--out: expected a path in a writable folder, got {out!r}"
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    formats = sorted(FigureCanvasAgg(Figure()).get_supported_filetypes())
    ext = os.path.splitext(out)[1].lower().lstrip(".")
    listed = ", ".join("." + f for f in formats)
    if not ext:
        return (
            f"--out: expected a file name ending in one of {listed}, got {out!r} "
            f"(did you mean {out + '.png'!r}?)"
        )
    if ext not in formats:
        return f"--out: expected a file name ending in one of {listed}, got {out!r}"
    return None


def _demo(args: argparse.Namespace) -> int:
    problem = check_out(args.out)
    if problem:
        return _fail(problem)
    from .demo import run_demo

    summary = run_demo(
        args.out, n=args.n, seed=args.seed, radius=args.radius, shape=args.shape, tracks=args.tracks
    )
    print(summary)
    return 0


def _warmup(args: argparse.Namespace) -> int:
    from . import _progress, _warmup

    got = _warmup.warmup(
        device=args.device, workers=args.workers, identities=args.kernels, track=args.generators
    )
    for line in got["refused"]:
        print(f"{PROG}: refused variant {line}", file=sys.stderr)
    for name, err in got["failed"]:
        print(f"{PROG}: failed to build {name}: {err}", file=sys.stderr)
    print(
        f"warmup: {got['modules']} kernel modules on {got['device']}: {got['compiled']} built, "
        f"{got['cached']} already cached, in {got['seconds']:.1f} s; "
        f"Warp's kernel cache: {_progress.human_path(got['cache'])}"
    )
    return 1 if got["failed"] else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    from .errors import ProcgenError

    try:
        return _demo(args) if args.command == "demo" else _warmup(args)
    except ProcgenError as e:
        return _fail(str(e))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
