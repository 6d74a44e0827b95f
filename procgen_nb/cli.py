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
    from .plot import plot_gates, plot_tracks
    from .track_gen.gates import build

    course = build(16, generator="polar", gate_generator="arc_length", num_points=128, seed=seed)
    data = course.numpy()
    valid_courses = course.num_valid()  # the live count of valid courses (one word read)
    fig, axes = plt.subplots(1, 2, figsize=(12, 6), squeeze=False)
    ax = axes[0, 0]
    ax.scatter(pts[:, 0], pts[:, 1], s=2, c="0.8", label=f"points ({len(pts)})")
    ax.scatter(kept[:, 0], kept[:, 1], s=3, c="tab:blue", label=f"kept ({got['count']})")
    ax.set_aspect("equal")
    ax.set_title(f"{shape} r={radius}: live count {got['count']}, scan total {got['total'][0]}")
    ax.legend(loc="upper right")
    grid = plot_tracks(data["xy"], data["valid"], ax=axes[0, 1])
    plot_gates(
        data["gate_position"],
        data["gate_count"],
        ax=axes[0, 1],
        layout=grid,
        heading=data["gate_heading"],
    )
    gates = int(np.sum(data["gate_count"]))
    axes[0, 1].set_title(f"polar courses: {valid_courses}/16 valid, {gates} arc-length gates")
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
