"""The ``procgen-nb`` command: ``procgen-nb demo --out demo.png``, ``procgen-nb warmup``,
``procgen-nb dataset --generator polar --count 1000000 --out tracks/``,
``procgen-nb explore --out generators.html`` (every registered generator on one page),
``procgen-nb export --format tumftm --generator polar --count 8 --out tracks/``.

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

from . import _cli_warmup

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
never leave the device; builds a grid of race-track courses of one generator (--generator)
with arc-length gates; prints the cook report and writes a figure of both.
"""

WARMUP_DESCRIPTION = """\
Builds every variant of every built-in kernel asset and every Warp module of the
built-in track generators, gate generators and track ops, several at a time, and says
how long it took and where Warp keeps them. Later first runs find them cached.
With --cuda-arch (sm_80,sm_90), it compiles them and the notebooks' Field kernels to PTX
for each CUDA architecture instead, without a GPU, and ends with "N modules, M variants,
K failed".
"""

DATASET_DESCRIPTION = """\
Writes COUNT race-track centerlines as Parquet shards of SHARD_SIZE tracks, with their
env seeds, validity and metrics, and _manifest.json (the config and a sha256 per shard).
Each shard is a pure function of the config and its index, written under a temporary
name and moved into place: run the same command again to finish an interrupted run (the
shards already complete are skipped). Shards run in this process, in --workers local
processes, or on a Dask cluster (--scheduler tcp://host:port). Read them back with
procgen_nb.track_gen.dataset.read(OUT) or pyarrow.parquet.read_table(OUT).
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
#: dataset.write's own limit (track_gen._dataset_run.MAX_TRACKS: env seeds are 32-bit)
_total = _bounded(int, 1, 2**31, "an integer")
_shard = _bounded(int, 1, 1 << 24, "an integer")
_points = _bounded(int, 8, 1 << 16, "an integer")
_epoch = _bounded(int, 0, 2**31 - 1, "an integer")


def _field(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE read as JSON (``0.5``, ``true``) or else as a string."""
    import json

    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


_field.__name__ = "KEY=VALUE"


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
        dest="command",
        metavar="{demo,warmup,dataset,explore,export}",
        title="commands",
        parser_class=_Parser,
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
    demo.add_argument(
        "--generator",
        default="polar",
        metavar="NAME",
        help="the registered track generator of the courses (polar, bezier, checkpoint, "
        "hull, voronoi, repulsive, or a plugin's name)",
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
        help="skip the runtime's own kernels and the track generators, gate generators and "
        "track ops",
    )
    # --- h-cuda: ahead-of-time CUDA compile (issue 26)
    warm.add_argument(
        "--cuda-arch",
        type=_cli_warmup.cuda_archs,
        default=None,
        metavar="sm_NN[,sm_NN...]",
        help="compile to PTX for these CUDA architectures (no GPU needed) instead of "
        "building for --device",
    )
    # --- end h-cuda
    _dataset_parser(sub)
    _explore_parser(sub)
    _export_parser(sub)
    return parser


EXPLORE_DESCRIPTION = """\
Writes one static HTML page of every registered track generator (built-ins and installed
plugins): its default Params table and a PNG of a few of its tracks drawn by matplotlib.
In a notebook, procgen_nb.viz.param_explorer() is the live view of the same registry.
"""


def _explore_parser(sub) -> None:
    ex = sub.add_parser(
        "explore",
        help="write an HTML page of every registered generator (default Params, tracks)",
        description=EXPLORE_DESCRIPTION,
        formatter_class=_Formatter,
    )
    ex.add_argument("--out", default="generators.html", metavar="PATH", help="the page to write")
    ex.add_argument(
        "--generator",
        action="append",
        default=None,
        metavar="NAME",
        help="only this generator (repeatable); default: every registered one",
    )
    ex.add_argument("--num-envs", type=_tracks, default=6, help="tracks drawn per generator")
    ex.add_argument("--num-points", type=_points, default=128, help="points per centerline")
    ex.add_argument("--seed", type=_seed, default=0, help="env seed of the first track")


def _dataset_parser(sub) -> None:
    ds = sub.add_parser(
        "dataset",
        help="write many race tracks as Parquet shards with a manifest",
        description=DATASET_DESCRIPTION,
        formatter_class=_Formatter,
    )
    ds.add_argument("--out", required=True, metavar="DIR", help="the dataset folder (made)")
    ds.add_argument(
        "--count",
        type=_total,
        default=10_000,
        help="tracks in the dataset, at most 2**31 and at most 65536 shards (65536 * SHARD_SIZE)",
    )
    ds.add_argument("--generator", default="polar", help="the registered track generator")
    ds.add_argument("--shard-size", type=_shard, default=4096, help="tracks per shard")
    ds.add_argument("--num-points", type=_points, default=256, help="points per centerline")
    ds.add_argument("--seed", type=_seed, default=0, help="env seed of track 0 (track t: seed+t)")
    ds.add_argument("--epoch", type=_epoch, default=0, help="the epoch of every track")
    ds.add_argument(
        "--param",
        type=_field,
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a generator Params field (repeatable), e.g. --param radius_jitter=0.5",
    )
    ds.add_argument(
        "--validity",
        type=_field,
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a validity field (repeatable), e.g. --validity track_width=0.05",
    )
    ds.add_argument(  # drivable validity is the default: kept so old scripts run, hidden
        "--drivable", action="store_true", help=argparse.SUPPRESS
    )
    ds.add_argument(
        "--gates",
        default=None,
        metavar="NAME",
        help="also place gates with this gate generator (arc_length, free, ...): a course per row",
    )
    ds.add_argument(
        "--gate-param",
        type=_field,
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="a gates.build field (repeatable), e.g. --gate-param track_width=0.2",
    )
    ds.add_argument(
        "--workers",
        type=_workers,
        default=None,
        help="run shards in this many local processes; default: in this process",
    )
    ds.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run shards on the Dask cluster at ADDRESS (tcp://host:port)",
    )
    ds.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")


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


def _warmup(args: argparse.Namespace) -> int:
    return _cli_warmup.run(args, PROG)


def _demo(args: argparse.Namespace) -> int:
    problem = check_out(args.out)
    if problem:
        return _fail(problem)
    from .track_gen.plugin import registry

    names = registry.available("generator")
    if args.generator not in names:
        return _fail(f"--generator: expected one of {names}, got {args.generator!r}")
    from .demo import run_demo

    summary = run_demo(
        args.out,
        n=args.n,
        seed=args.seed,
        radius=args.radius,
        shape=args.shape,
        tracks=args.tracks,
        generator=args.generator,
    )
    print(summary)
    return 0


def _dataset(args: argparse.Namespace) -> int:
    if args.workers is not None and args.scheduler is not None:
        return _fail("--workers: expected --workers or --scheduler, got both")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        return _fail(f"--out: expected a folder, got the file {args.out!r}")
    import time

    from .track_gen import dataset

    validity = dict(args.validity or []) or None
    if args.drivable:
        print(
            f"{PROG}: note: --drivable does nothing (drivable validity is the default) and "
            "will be removed; --validity KEY=VALUE changes the checks",
            file=sys.stderr,
        )
    config = {
        "generator": args.generator,
        "generator_params": dict(args.param or []) or None,
        "num_points": args.num_points,
        "seed": args.seed,
        "epoch": args.epoch,
        "validity": validity,
    }
    if args.gate_param and not args.gates:
        return _fail("--gate-param: expected --gates NAME with it, got none")
    if args.gates:
        config["course"] = {"gate_generator": args.gates, **dict(args.gate_param or [])}
    t0 = time.perf_counter()
    kwargs = {"scheduler": args.scheduler, "progress": args.progress}
    if args.workers is not None:
        import concurrent.futures as cf

        with cf.ProcessPoolExecutor(args.workers) as ex:
            got = dataset.write(config, args.count, args.out, args.shard_size, ex, **kwargs)
    else:
        got = dataset.write(config, args.count, args.out, args.shard_size, **kwargs)
    dt = time.perf_counter() - t0
    made = sum(
        b - a for a, b in (got["shards"][str(i)]["tracks"] for i in range(got["num_shards"]))
    )
    print(
        f"dataset: {made} tracks in {got['num_shards']} shards under {args.out} "
        f"({got['written']} written, {got['skipped']} already complete) in {dt:.1f} s"
    )
    return 0


def _explore(args: argparse.Namespace) -> int:
    folder = os.path.dirname(os.path.abspath(args.out))
    if os.path.isdir(args.out) or not os.path.isdir(folder):
        return _fail(f"--out: expected a file path in an existing folder, got {args.out!r}")
    from .viz import write_html

    got = write_html(
        args.out,
        generators=args.generator,
        num_envs=args.num_envs,
        num_points=args.num_points,
        seed=args.seed,
    )
    for name, status in got.items():
        if status != "ok":
            print(f"{PROG}: {name}: {status}", file=sys.stderr)
    ok = sum(s == "ok" for s in got.values())
    print(f"explore: {ok}/{len(got)} generators drawn in {args.out}")
    return 0 if ok == len(got) else 1


# -- export (track_gen.export) ---------------------------------------------------------------
EXPORT_DESCRIPTION = """\
Generates COUNT tracks (env seeds SEED .. SEED+COUNT-1) and writes one file set per valid
track in FORMAT under OUT, named <generator>_s<seed>_e<epoch>, plus OUT/index.json (the
files, start line and start grid of each track; the invalid ones listed as skipped).
Formats: tumftm (CSV), tumftm-traj (racing line and speeds, CSV), ros-map (PNG +
map_server YAML + centerline CSV), opendrive (.xodr), fs-cones (cone CSV + FSSIM YAML),
gates (YAML + lsy_drone_racing TOML; a course with --gates), obj, gltf. Units are metres: --scale metres per world unit. Every file is
written under a temporary name and renamed; nothing is written after a refused option.
"""


def _export_parser(sub) -> None:
    ex = sub.add_parser(
        "export",
        help="write tracks in a simulator's or planner's format (tumftm, ros-map, opendrive, ...)",
        description=EXPORT_DESCRIPTION,
        formatter_class=_Formatter,
    )
    ex.add_argument("--format", required=True, metavar="FORMAT", help="the format to write")
    ex.add_argument("--out", required=True, metavar="DIR", help="the folder (made)")
    ex.add_argument("--generator", default="polar", help="the registered track generator")
    ex.add_argument("--count", type=_shard, default=8, help="tracks generated")
    ex.add_argument("--seed", type=_seed, default=0, help="env seed of track 0 (track t: seed+t)")
    ex.add_argument("--epoch", type=_epoch, default=0, help="the epoch of every track")
    ex.add_argument("--num-points", type=_points, default=256, help="points per centerline")
    ex.add_argument("--scale", type=float, default=1.0, help="metres per world unit")
    ex.add_argument(
        "--direction", default="ccw", help="direction of travel: ccw, cw or random (per track)"
    )
    for flag, what in (
        ("--param", "a generator Params field (repeatable), e.g. --param radius_jitter=0.5"),
        ("--width", "a width field (repeatable), e.g. --width left=0.03 --width variation=0.4"),
        ("--validity", "a validity field (repeatable), e.g. --validity track_width=0.05"),
        ("--option", "a format option (repeatable), e.g. --option tolerance=0.01"),
    ):
        ex.add_argument(
            flag, type=_field, action="append", default=None, metavar="KEY=VALUE", help=what
        )
    ex.add_argument("--z-profile", action="store_true", help="give the tracks heights (z)")
    ex.add_argument(
        "--gates",
        default=None,
        metavar="NAME",
        help="place gates with this gate generator (arc_length, ...): a course; needed by "
        "--format gates",
    )


def _export(args: argparse.Namespace) -> int:
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        return _fail(f"--out: expected a folder, got the file {args.out!r}")
    import time

    from .track_gen import export, gates, presets

    if args.format not in export.FORMATS:
        return _fail(f"--format: expected one of {sorted(export.FORMATS)}, got {args.format!r}")
    config = {
        "num_envs": args.count,
        "num_points": args.num_points,
        "seed": args.seed,
        "epoch": args.epoch,
        "direction": args.direction,
        "width": dict(args.width) if args.width else None,
        "validity": dict(args.validity) if args.validity else None,
        "z_profile": True if args.z_profile else None,
    }
    params = dict(args.param or []) or None
    t0 = time.perf_counter()
    if args.gates:
        source = gates.build(
            args.count,
            generator=args.generator,
            generator_params=params,
            gate_generator=args.gates,
            num_points=args.num_points,
            seed=args.seed,
            epoch=args.epoch,
        )
    else:
        source = presets.track(args.generator, params, **config)
    made = time.perf_counter() - t0
    t1 = time.perf_counter()
    got = export.export(source, args.format, args.out, scale=args.scale, **dict(args.option or []))
    print(
        f"export: {len(got['tracks'])} {args.format} tracks under {args.out} "
        f"({len(got['skipped'])} invalid skipped); generated in {made:.2f} s, "
        f"written in {time.perf_counter() - t1:.2f} s"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    from .errors import ProcgenError

    try:
        run = {
            "demo": _demo,
            "warmup": _warmup,
            "dataset": _dataset,
            "explore": _explore,
            "export": _export,
        }[args.command]
        return run(args)
    except ProcgenError as e:
        return _fail(str(e))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
