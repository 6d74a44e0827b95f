"""How relaxed the ``repulsive`` loops are: the tangent-point energy before and after.

``compare_generators.py`` prints this section under its table when it runs ``repulsive``;
run alone it builds the generator itself::

    python benchmarks/repulsive_quality.py            # E=1024, N=256, default Params

The energy (``numpy_reference.tangent_point_energy``, NumPy, float64) is the quadrature of
the curve's tangent-point integral over the N-point output loops: it does not depend on a
loop's size, and it is lower for a loop with fewer near-contacts and no sharp corners.
"Initial" is the generator's star polygons (the ``repulsive.init`` stream, resampled to N
points the same way), "relaxed" the generator's output for the same seeds, and "former" the
figures of the implementation before issue 16 (three relaxed levels of 16, 32 and 64 points,
24, 12 and 6 steps of at most 0.3 h, midpoint subdivisions, three launches per step;
commit 01d5dd0), measured on the same seeds
at E=1024, N=256 with the default Params: printed only at that size.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from numpy_reference import (
    base_seeds,
    numpy_resample_loops,
    repulsive_initial,
    tangent_point_energy,
)

#: valid tracks/s asked of ``repulsive`` at E=1024, N=256 (issue 16)
TARGET_TRACKS = 10_000
#: the former implementation on base_seeds(0, 0, 1024), N=256, default Params: energy of the
#: output (mean, median, p90) and valid fractions (closed/simple/turning; drivable default)
FORMER = {"E": 1024, "N": 256, "energy": (29.08, 25.94, 44.61), "valid": (0.992, 0.217)}


def _stats(e: np.ndarray) -> tuple[float, float, float]:
    return float(e.mean()), float(np.median(e)), float(np.percentile(e, 90))


def relaxation_lines(xy: np.ndarray, params: object = None) -> list[str]:
    """The section's lines for ``repulsive`` output ``xy`` [E, N, 2] (seed 0, epoch 0).

    Args:
        xy: the generated loops of ``TrackGenerator`` (``result.numpy()["xy"]``).
        params: the ``RepulsiveParams`` used (the initial polygons depend on
            ``start_points`` and ``jitter``; the former figures are printed only for the
            defaults).
    """
    from procgen_nb.track_gen.exec import salt
    from procgen_nb.track_gen.generators.repulsive import RepulsiveParams

    p = params if params is not None else RepulsiveParams()
    E, N = xy.shape[:2]
    init = repulsive_initial(base_seeds(0, 0, E), salt, p.start_points, p.jitter)
    before = _stats(tangent_point_energy(numpy_resample_loops(init, N)))
    after = _stats(tangent_point_energy(xy))
    out = [
        f"Relaxation of repulsive: tangent-point energy of the {N}-point loops, {E} envs "
        "(lower: more relaxed)",
        f"{'loops':<34} {'mean':>8} {'median':>8} {'p90':>8}",
        f"{'initial star polygons':<34} {before[0]:>8.2f} {before[1]:>8.2f} {before[2]:>8.2f}",
        f"{'relaxed (this run)':<34} {after[0]:>8.2f} {after[1]:>8.2f} {after[2]:>8.2f}",
    ]
    if (E, N) == (FORMER["E"], FORMER["N"]) and p == RepulsiveParams():
        f = FORMER["energy"]
        out.append(
            f"{'relaxed (former, commit 01d5dd0)':<34} {f[0]:>8.2f} {f[1]:>8.2f} {f[2]:>8.2f}"
        )
        v = FORMER["valid"]
        out.append(
            f"former valid fraction: {v[0]:.3f} closed/simple/turning, {v[1]:.3f} drivable "
            "(the default checks)"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """Builds ``repulsive`` at the given size and prints the section."""
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--envs", type=int, default=1024)
    a.add_argument("--points", type=int, default=256)
    args = a.parse_args(argv)
    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator

    tg = TrackGenerator(
        TrackGenConfig(generator="repulsive", num_envs=args.envs, num_points=args.points)
    )
    xy = tg.generate().numpy()["xy"]
    print("\n".join(relaxation_lines(xy, tg.params)))
    print(f"valid fraction (default checks): {tg.result.num_valid() / args.envs:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
