"""Writes notebooks/01_quickstart.ipynb (run once; the notebook is then executed and kept)."""

import nbformat as nbf

cells = []
md = lambda s: cells.append(nbf.v4.new_markdown_cell(s))  # noqa: E731
code = lambda s: cells.append(nbf.v4.new_code_cell(s))  # noqa: E731

md("""# Quickstart: points, a shape, and counts that stay on the device

procgen_nb cooks *graphs* of *nodes*; a node is a Python function that wires *ops*
(`ops.transfer.upload`, `ops.device.kernel`, `ops.transfer.readback`, ...). Kernels are
assets named by identity (`procgen/compact`), built once per variant and cached.

This notebook uploads random points, keeps those inside a shape with `compact` on the
device, scans the flags, shows the kept count without reading the whole column back, and
re-cooks from a slider. It runs on the CPU; a CUDA device is used when present.""")
code("""import numpy as np
import matplotlib
import matplotlib.pyplot as plt

import procgen_nb as pg
from procgen_nb import ops, asset

print(pg.get_device() in pg.available_devices())""")
md("""## Kernels are resolved by identity
A bare name is refused: kernels are named `<prefix>/<name>`.""")
code("""COMPACT = asset.resolve("procgen/compact", "computeShader")
INSIDE = asset.resolve("procgen/inside", "computeShader")
GATHER = asset.resolve("procgen/gather", "computeShader")
SCAN = asset.resolve("procgen/scan", "computeShader")
try:
    asset.resolve("compact", "computeShader")
except pg.AssetError as e:
    print(type(e).__name__, "-", e)""")
md("""## Nodes
Each node declares its parameters (type, default, bounds or choices, doc). The kept
count is an *appended counter* on the device: `gather` takes it as its domain (a live
count), so nothing crosses to the CPU between the kernels.""")
code("""@pg.node(params={"n": pg.Field(3000, bounds=(0, 100_000), doc="number of points"),
                  "seed": pg.Field(7, bounds=(0, 2**31 - 1), doc="random seed")})
def points(n, seed):
    xy = np.random.default_rng(seed).uniform(-1, 1, size=(n, 2)).astype(np.float32)
    return ops.transfer.upload(values={"P": xy})["columns"]["P"]


@pg.node(params={"shape": pg.Field("disk", choices=["disk", "square"], doc="shape kept"),
                  "radius": pg.Field(0.6, bounds=(0.0, 1.5), doc="radius or half-side")})
def keep(points, shape, radius):
    flags = ops.device.kernel(kernel=INSIDE, specialize={"SHAPE": shape}, bind={"points": points},
                              domain=points, uniforms={"center": (0.0, 0.0), "radius": radius})["columns"]["flags"]
    out = ops.device.kernel(kernel=COMPACT, bind={"flags": flags}, domain=points)["columns"]
    out["flags"] = flags
    return out


@pg.node
def kept(points, keep):
    return ops.device.kernel(kernel=GATHER, specialize={"TYPE": "vec2"},
                             bind={"src": points, "idx": keep["indices"]},
                             domain=keep["indices"])["columns"]["dst"]


@pg.node
def offsets(keep):
    return ops.device.kernel(kernel=SCAN, specialize={"TYPE": "i32"},
                             bind={"src": keep["flags"]}, domain=keep["flags"])["columns"]


graph = pg.Graph("quickstart")
graph.add("points", points)
graph.add("keep", keep, points="points")
graph.add("kept", kept, points="points", keep="keep")
graph.add("offsets", offsets, keep="keep")
sorted(graph.params())""")
md("""## Cook
The report lists, per node, launches, uploads, readbacks (wait points) and kernel builds.
A cook that only launches reads nothing back.""")
code("""result = graph.cook()
print(result.report.to_text(timing=False))""")
md("""## The live count, without reading the column back
`keep["indices_count"]` is a one-word device buffer with the capacity it is bounded by.
Reading it back reads one word; the scan's total agrees.""")
code("""kept_count = result["keep"]["indices_count"]
print(kept_count)
before = pg.traffic()
values = ops.transfer.readback(columns={"kept": kept_count, "total": result["offsets"]["total"]})["values"]
print("kept:", values["kept"], "scan total:", values["total"][0], "readbacks:", (pg.traffic() - before).readbacks)""")
md("""Check against NumPy: the same points, the same test.""")
code("""pts = np.random.default_rng(7).uniform(-1, 1, size=(3000, 2)).astype(np.float32)
print(int((np.linalg.norm(pts, axis=1) <= np.float32(0.6)).sum()) == values["kept"])""")
md("""## Plot""")
code("""def draw(result, ax):
    got = ops.transfer.readback(columns={"all": result["points"], "kept": result["kept"],
                                         "n": result["keep"]["indices_count"]})["values"]
    allp = np.array([[p["x"], p["y"]] for p in got["all"]]).reshape(-1, 2)
    keptp = np.array([[p["x"], p["y"]] for p in got["kept"]]).reshape(-1, 2)
    ax.clear()
    ax.scatter(allp[:, 0], allp[:, 1], s=2, c="0.8")
    ax.scatter(keptp[:, 0], keptp[:, 1], s=3, c="tab:blue")
    ax.set_aspect("equal")
    ax.set_title(f"kept {got['n']} of {len(allp)}")
    return got["n"]

fig, ax = plt.subplots(figsize=(4, 4))
draw(result, ax)
plt.show()""")
md("""## A slider that re-cooks
Moving the slider cooks again: only the nodes the radius reaches run (`points` is
reused). The next cell moves it from Python, as a person would with the mouse.""")
code("""import io
import ipywidgets as widgets

radius = widgets.FloatSlider(value=0.6, min=0.0, max=1.5, step=0.05, description="radius")
view = widgets.Image(format="png")
log = []

def render(r):
    fig, ax = plt.subplots(figsize=(4, 4))
    n = draw(r, ax)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=72)
    plt.close(fig)
    view.value = buf.getvalue()  # redrawn in place: no new figure, no pile-up
    return n

def on_change(change):
    r = graph.cook(params={"keep.radius": change["new"]})
    log.append((round(change["new"], 2), render(r), r.report.reused))

render(graph.cook())
radius.observe(on_change, names="value")
widgets.VBox([radius, view])""")
code("""radius.value = 0.3
radius.value = 0.9
for entry in log:
    print(entry)""")
nb = nbf.v4.new_notebook(cells=cells)
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbf.write(nb, "notebooks/01_quickstart.ipynb")
