"""The ``procgen-nb`` command: ``procgen-nb demo --out demo.png``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _demo(out: str, n: int, seed: int, radius: float, shape: str) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from . import ops
    from .demo import build_demo_graph

    graph = build_demo_graph()
    result = graph.cook(
        params={"points.n": n, "points.seed": seed, "keep.radius": radius, "keep.shape": shape}
    )
    got = ops.transfer.readback(
        columns={
            "all": result["points"],
            "kept": result["kept"],
            "count": result["keep"]["indices_count"],
            "total": result["offsets"]["total"],
        }
    )["values"]
    pts = np.array([[p["x"], p["y"]] for p in got["all"]]).reshape(-1, 2)
    kept = np.array([[p["x"], p["y"]] for p in got["kept"]]).reshape(-1, 2)
    panels = 1
    tracks = None
    try:
        from .track_gen import presets

        gen = presets.track(generator="polar", num_envs=16, num_points=128, seed=seed)
        res = gen.generate()
        tracks = (res.xy.numpy().reshape(16, 128, 2), res.valid.numpy())
        panels = 2
    except ImportError:
        pass
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 6), squeeze=False)
    ax = axes[0, 0]
    ax.scatter(pts[:, 0], pts[:, 1], s=2, c="0.8", label=f"points ({len(pts)})")
    ax.scatter(kept[:, 0], kept[:, 1], s=3, c="tab:blue", label=f"kept ({got['count']})")
    ax.set_aspect("equal")
    ax.set_title(f"{shape} r={radius}: live count {got['count']}, scan total {got['total'][0]}")
    ax.legend(loc="upper right")
    if tracks is not None:
        from .plot import draw_tracks

        draw_tracks(axes[0, 1], tracks[0], tracks[1])
        axes[0, 1].set_title(f"polar tracks: {int(tracks[1].sum())}/16 valid")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    print(result.report.to_text())
    print(f"kept {got['count']} of {len(pts)} points; wrote {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="procgen-nb", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="cook the sample graph on the CPU and write a PNG")
    demo.add_argument("--out", default="demo.png", help="the PNG to write (default demo.png)")
    demo.add_argument("--n", type=int, default=4000, help="number of points")
    demo.add_argument("--seed", type=int, default=7)
    demo.add_argument("--radius", type=float, default=0.6)
    demo.add_argument("--shape", default="disk", choices=["disk", "square", "ring"])
    args = parser.parse_args(argv)
    from .errors import ProcgenError

    try:
        return _demo(args.out, args.n, args.seed, args.radius, args.shape)
    except ProcgenError as e:
        print(f"procgen-nb: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
