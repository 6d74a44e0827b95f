"""Exporting tracks: tracks written per second in each format, against generating them.

One ``TrackGenerator`` (``--generator``, ``--count`` envs of ``--num-points`` points, widths
varying along the lap) is warmed up; then, in this process, the clock measures

* the generator's call (``generate()``: the device pipeline, nothing read back) and the
  read-back as ``export.tracks`` (arrays to ``Track``s in metres, the boundary check), and
* ``export.export`` of every track in each format into a fresh folder (the read-back
  included: what a user waits for), the best of ``--repeats``.

It prints tracks/s per format and the ratio of the format's time to the generator's call
(how many generator calls one export costs). Nothing is asserted.
Run: ``python benchmarks/export.py`` (``--smoke`` for a quick run in the test suite).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

from procgen_nb.track_gen import export, gates, presets


def _best(fn, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generator", default="polar")
    ap.add_argument("--count", type=int, default=64)
    ap.add_argument("--num-points", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="4 tracks of 64 points, one repeat")
    args = ap.parse_args(argv)
    if args.smoke:
        args.count, args.num_points, args.repeats = 4, 64, 1
    gen = presets.track(
        args.generator,
        num_envs=args.count,
        num_points=args.num_points,
        width={"variation": 0.3},
        z_profile=True,
    )
    course = gates.build(args.count, num_points=args.num_points)
    gen.generate()
    t_gen = _best(gen.generate, max(args.repeats, 5))
    t_read = _best(lambda: export.tracks(gen, scale=100.0), args.repeats)
    rows: dict[str, float] = {"generate s": t_gen, "read back s": t_read}
    print(
        f"{args.generator}: {args.count} tracks of {args.num_points} points; "
        f"generate {args.count / t_gen:,.0f} tracks/s, read back as Tracks "
        f"{args.count / t_read:,.0f} tracks/s"
    )
    print(f"{'format':10s} {'tracks/s':>10s} {'x generate':>11s} {'KiB/track':>10s}")
    with tempfile.TemporaryDirectory() as tmp:
        for k, fmt in enumerate(sorted(export.FORMATS)):
            source = course if fmt == "gates" else gen
            folders = iter(Path(tmp) / f"{fmt}-{k}-{r}" for r in range(args.repeats))
            t = _best(
                lambda s=source, f=fmt, it=folders: export.export(s, f, next(it), scale=100.0),
                args.repeats,
            )
            last = Path(tmp) / f"{fmt}-{k}-0"
            size = sum(p.stat().st_size for p in last.iterdir()) / 1024 / args.count
            rows[f"{fmt} tracks/s"] = args.count / t
            rows[f"{fmt} x generate"] = t / t_gen
            print(f"{fmt:10s} {args.count / t:10,.0f} {t / t_gen:11,.0f} {size:10.1f}")
    return rows


if __name__ == "__main__":
    main()
