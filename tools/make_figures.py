"""Draws the README's pictures: ``docs/images/tracks.png`` and one thumbnail per generator.

``python tools/make_figures.py`` (or ``--out DIR``) cooks a few tracks of every built-in
generator on the CPU and writes, under ``docs/images/``:

- ``tracks.png``: four tracks of each built-in generator, one panel per generator;
- ``gen_<name>.png``: a thumbnail of one track of ``<name>``, for the README's table.

Everything is seeded and drawn by matplotlib's Agg canvas with no date or version in the
file, so the same versions give the same bytes; ``tests/test_docs_figures.py`` runs this
script into a temporary folder and compares it with the committed pictures.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("PROCGEN_DEVICE", "cpu")
os.environ.setdefault("PROCGEN_NB_PROGRESS", "0")

ROOT = Path(__file__).resolve().parents[1]
GENERATORS = ("polar", "bezier", "checkpoint", "hull", "voronoi", "repulsive")
SEED = 3
ENVS = 4
POINTS = 96
#: no Software/date entry: the bytes depend on the drawing alone
METADATA = {"Software": None}


def tracks_of(name: str) -> dict:
    """Returns ``{"xy": [E, N, 2], "valid": [E]}`` of ``ENVS`` tracks of ``name``."""
    import numpy as np

    import procgen_nb as pg

    tg = pg.track_gen.presets.track(name, num_envs=ENVS, num_points=POINTS, seed=SEED)
    res = tg.generate()
    xy = res.xy.numpy().reshape(ENVS, POINTS, 2).astype(np.float64)
    return {"xy": xy, "valid": res.valid.numpy().astype(int)}


def draw(out: Path) -> list[Path]:
    """Writes ``tracks.png`` and the thumbnails into ``out``; returns the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from procgen_nb.plot import plot_tracks

    matplotlib.rcParams["svg.hashsalt"] = "procgen_nb"
    out.mkdir(parents=True, exist_ok=True)
    data = {name: tracks_of(name) for name in GENERATORS}
    written = []
    fig, axes = plt.subplots(1, len(GENERATORS), figsize=(12, 2.5))
    for ax, name in zip(axes, GENERATORS):
        plot_tracks(data[name]["xy"], data[name]["valid"], ax=ax, columns=2, labels=False)
        ax.set_title(name, fontsize=11)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.86, bottom=0.02, wspace=0.06)
    path = out / "tracks.png"
    fig.savefig(path, dpi=80, metadata=METADATA)
    plt.close(fig)
    written.append(path)
    for name in GENERATORS:
        fig, ax = plt.subplots(figsize=(1.2, 1.2))
        plot_tracks(data[name]["xy"][:1], data[name]["valid"][:1], ax=ax, labels=False)
        ax.axis("off")
        fig.subplots_adjust(left=0, right=1, top=1, bottom=0)
        path = out / f"gen_{name}.png"
        fig.savefig(path, dpi=80, metadata=METADATA)
        plt.close(fig)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """Runs the script; ``--out DIR`` writes somewhere other than ``docs/images``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args(argv)
    for path in draw(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
