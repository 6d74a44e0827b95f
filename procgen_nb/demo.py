"""The sample graph the quickstart, the CLI demo and the wheel test cook, and the demo figure.

``points`` uploads ``n`` seeded random points, ``keep`` flags those inside a shape on the
device and compacts them (the kept count stays on the device as a live count), ``kept``
gathers the kept points over that live count, and ``offsets`` scans the flags.
``run_demo`` cooks it, builds a few race-track courses of one generator and writes the
figure of ``procgen-nb demo``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ops
from .asset import resolve
from .graph import Graph, node
from .params import Field

INSIDE = resolve("procgen/inside", "computeShader")
COMPACT = resolve("procgen/compact", "computeShader")
GATHER = resolve("procgen/gather", "computeShader")
SCAN = resolve("procgen/scan", "computeShader")


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
    from ._warmup import _warp_module, track_modules

    variants = [
        INSIDE.variant({"SHAPE": shape, "COUNT": "plain"}),
        COMPACT.variant({"COUNT": "plain"}),
        GATHER.variant({"TYPE": "vec2", "COUNT": "device"}),
        SCAN.variant({"TYPE": "i32", "COUNT": "plain"}),
    ]
    track = [m for m in track_modules() if m.name in DEMO_TRACK_MODULES]
    return [_warp_module(v.module) for v in variants] + track


@node(
    params={
        "n": Field(2000, bounds=(0, 1_000_000), soft=(0, 20_000), doc="number of points"),
        "seed": Field(7, bounds=(0, 2**31 - 1), doc="random seed"),
    }
)
def points(n, seed):
    """Uploads ``n`` points uniform in [-1, 1]^2 drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(-1.0, 1.0, size=(n, 2)).astype(np.float32)
    return ops.transfer.upload(values={"P": xy})["columns"]["P"]


@node(
    params={
        "shape": Field("disk", choices=["disk", "square", "ring"], doc="the shape kept"),
        "radius": Field(0.6, bounds=(0.0, 2.0), doc="radius (half-side for square)"),
        "inner": Field(0.3, bounds=(0.0, 2.0), doc="inner radius of the ring"),
    }
)
def keep(points, shape, radius, inner):
    """Flags the points inside the shape and compacts them on the device."""
    uniforms = {"center": (0.0, 0.0), "radius": radius}
    if shape == "ring":
        uniforms["inner"] = inner
    flags = ops.device.kernel(
        kernel=INSIDE,
        specialize={"SHAPE": shape},
        bind={"points": points},
        domain=points,
        uniforms=uniforms,
    )["columns"]["flags"]
    out = ops.device.kernel(kernel=COMPACT, bind={"flags": flags}, domain=points)["columns"]
    out["flags"] = flags
    return out


@node
def kept(points, keep):
    """Gathers the kept points over the kept count (a live count: nothing is read back)."""
    return ops.device.kernel(
        kernel=GATHER,
        specialize={"TYPE": "vec2"},
        bind={"src": points, "idx": keep["indices"]},
        domain=keep["indices"],
    )["columns"]["dst"]


@node
def offsets(keep):
    """Scans the flags: each kept point's output slot, and the total kept."""
    return ops.device.kernel(
        kernel=SCAN, specialize={"TYPE": "i32"}, bind={"src": keep["flags"]}, domain=keep["flags"]
    )["columns"]


def build_demo_graph() -> Graph:
    """Returns the sample graph: points -> keep -> kept, offsets."""
    g = Graph("quickstart")
    g.add("points", points)
    g.add("keep", keep, points="points")
    g.add("kept", kept, points="points", keep="keep")
    g.add("offsets", offsets, keep="keep")
    return g


def run_demo(
    out: str,
    *,
    n: int = 4000,
    seed: int = 7,
    radius: float = 0.6,
    shape: str = "disk",
    tracks: int = 6,
    dpi: int = 150,
    generator: str = "polar",
) -> str:
    """Cooks the sample graph and ``tracks`` courses of ``generator``, writes the figure to ``out``.

    The kernels the demo needs are built first, two at a time in two processes (a
    progress bar shows them on a cold cache).

    Returns:
        The cook report (its ``loads`` and ``builds`` are 0: the modules are loaded before
        the cook), a line saying how many kernel modules this run loaded, how many of them
        Warp compiled and how many it found in its kernel cache, and a line with the kept
        count and the path written.

    Raises:
        GeneratorError: an unknown ``generator``.
    """
    from . import _progress
    from .device import get_device
    from .track_gen.gates import build

    with _progress.session() as stats:
        _progress.build(demo_modules(shape), get_device(), workers=2)
        result = build_demo_graph().cook(
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
        course = build(
            tracks, generator=generator, gate_generator="arc_length", num_points=128, seed=seed
        )
        data = course.numpy()
        valid = course.num_valid()  # the live count of valid courses (one word read)
    pts = np.array([[p["x"], p["y"]] for p in got["all"]], dtype=np.float64).reshape(-1, 2)
    kept = np.array([[p["x"], p["y"]] for p in got["kept"]], dtype=np.float64).reshape(-1, 2)
    fig = demo_figure(
        pts,
        kept,
        count=int(got["count"]),
        total=int(got["total"][0]),
        shape=shape,
        radius=radius,
        seed=seed,
        course=data,
        valid=int(valid),
        generator=generator,
    )
    try:
        fig.savefig(out, dpi=dpi)
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    loaded = stats.compiled + stats.cached
    return (
        f"{result.report.to_text()}\n"
        f"kernel modules: {loaded} loaded, {stats.compiled} compiled and {stats.cached} found "
        f"in Warp's kernel cache\n"
        f"kept {got['count']} of {len(pts)} points; "
        f"{int(valid)} of {_plural(tracks, generator + ' course')} valid; wrote {out}"
    )


def _plural(n: int, what: str) -> str:
    """``1 polar course``, ``2 polar courses``."""
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def _shape_outline(ax, shape: str, radius: float, inner: float) -> None:
    from matplotlib.patches import Circle, Rectangle

    style = {"fill": False, "ls": "--", "lw": 1.0, "ec": "0.25"}
    if shape == "square":
        ax.add_patch(Rectangle((-radius, -radius), 2 * radius, 2 * radius, **style))
    else:
        ax.add_patch(Circle((0.0, 0.0), radius, **style))
        if shape == "ring":
            ax.add_patch(Circle((0.0, 0.0), inner, **style))


def demo_figure(pts, kept, *, count, total, shape, radius, seed, course, valid, generator="polar"):
    """Draws the demo's two panels: the kept points and the courses with a legend.

    Args:
        pts, kept: ``[n, 2]`` all points and the kept ones.
        count, total: the kept live count and the scan's total.
        shape, radius, seed: the options the points panel used.
        course: ``Course.numpy()`` of the courses drawn.
        valid: how many courses are valid.
        generator: the name of the generator that made the courses.

    With more than 12 courses the cells are too small for numbers: the gate numbers and
    env labels are left out (the legend says so).

    Returns:
        The matplotlib Figure (pyplot-managed; close it after saving).
    """
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from .plot import GATE_COLOR, INVALID_COLOR, VALID_COLOR, plot_gates, plot_tracks

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 6.8), gridspec_kw={"wspace": 0.08})
    left.scatter(pts[:, 0], pts[:, 1], s=3, c="0.78", lw=0, label=f"all points ({len(pts)})")
    left.scatter(kept[:, 0], kept[:, 1], s=4, c="tab:blue", lw=0, label=f"kept ({count})")
    _shape_outline(left, shape, radius, 0.3)
    left.plot([], [], ls="--", c="0.25", lw=1.0, label=f"{shape} boundary")
    left.set_xlim(-1.05, 1.05)
    left.set_ylim(-1.05, 1.05)
    left.set_aspect("equal")
    left.set_title(
        f"keep {shape}, radius {radius:g}: {count} of {len(pts)} points kept\n"
        f"(live count on the device; scan total {total})",
        fontsize=11,
    )
    left.legend(loc="upper right", fontsize=9, framealpha=0.9, markerscale=3)

    xy, ok = course["xy"], course["valid"]
    envs = len(ok)
    grid = plot_tracks(xy, ok, ax=right, labels=False, linewidth=1.4)
    plot_gates(
        course["gate_position"],
        course["gate_count"],
        ax=right,
        layout=grid,
        heading=course["gate_heading"],
        numbers=False,
    )
    gpos = np.asarray(course["gate_position"], dtype=np.float64)
    gcount = np.asarray(course["gate_count"]).astype(int).reshape(-1)
    gpos = gpos.reshape(envs, -1, gpos.shape[-1])
    numbered = envs <= 12
    for e in grid.envs if numbered else ():
        placed = grid.place(e, gpos[e, : gcount[e], :2])
        centre = np.array([grid.columns, -grid.rows]) * 0 + grid.place(e, grid.centers[e][None])[0]
        for k, p in enumerate(placed):
            away = p - centre
            away = away / (np.linalg.norm(away) or 1.0)
            q = p + 0.05 * away
            right.text(q[0], q[1], str(k), fontsize=7.5, color=GATE_COLOR, ha="center", va="center")
        col, row = grid.cell_of(e)
        right.text(col + 0.03, -row - 0.04, f"env {e}", fontsize=8, color="0.35", va="top")
    gates = int(gcount.sum())
    right.set_title(
        f"{_plural(envs, generator + ' race-track course')}, seed {seed}: "
        f"{valid}/{envs} valid\n{gates} gates placed by arc length",
        fontsize=11,
    )
    handles = [
        Line2D([], [], color=VALID_COLOR, lw=1.6, label="valid centerline"),
        Line2D([], [], color=INVALID_COLOR, lw=1.6, label="invalid centerline"),
        Line2D(
            [], [], color=GATE_COLOR, marker="o", ms=4, lw=2, label="gate (bar across the track)"
        ),
        Line2D(
            [],
            [],
            ls="none",
            marker="$7$",
            ms=7,
            color=GATE_COLOR,
            label="gate number",
        ),
        Line2D([], [], ls="none", marker="s", ms=7, mfc="none", mec="k", label="start gate"),
        Line2D(
            [],
            [],
            ls="none",
            marker=r"$\rightarrow$",
            ms=14,
            color="k",
            label="direction of travel",
        ),
    ]
    if not numbered:
        handles = [h for h in handles if h.get_label() != "gate number"]
    right.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.01),
        ncol=3,
        fontsize=9,
        frameon=False,
    )
    fig.subplots_adjust(left=0.02, right=0.98, top=0.9, bottom=0.1)
    return fig
