"""Writes notebooks/05_lua_and_guards.ipynb (then executed and kept with its outputs)."""

import nbformat as nbf

cells = []
md = lambda s: cells.append(nbf.v4.new_markdown_cell(s))  # noqa: E731
code = lambda s: cells.append(nbf.v4.new_code_cell(s))  # noqa: E731

md("""# Lua calls, digests, guards and replays

`ops.cpu.call` calls a Lua function (through lupa, in a sandbox) with declared return
types and a CPU-time ceiling. `ops.cpu.read` is a call over state outside the graph, with
a *digest* that tells the graph when that state moved. `device.bound` turns a count on the
device into a live count with a room, and a cook whose plan is unchanged *replays* its
recording; a replay that outgrows a room is found by the next cook and recorded again.""")
code("""import procgen_nb as pg
from procgen_nb import ops, asset, cookrun
import numpy as np""")
md("""## A Lua function placing points
The function returns a List of `{x, y}` tables; `returns` says so, and a call that returns
anything else is refused naming the position and the types.""")
code('''PLACE = """
function(n, turns)
  local pts = {}
  for i = 0, n - 1 do
    local t = i / n
    local r = 0.2 + 0.8 * t
    pts[#pts + 1] = {x = r * math.cos(2 * math.pi * turns * t), y = r * math.sin(2 * math.pi * turns * t)}
  end
  return pts
end
"""

@pg.node(params={"n": pg.Field(200, bounds=(1, 5000), doc="points on the spiral"),
                  "turns": pg.Field(3.0, bounds=(0.5, 10.0), doc="turns of the spiral")})
def spiral(n, turns):
    pts = ops.cpu.call(fn=PLACE, args=[n, turns], returns=["List"])["values"][0]
    return ops.transfer.upload(values={"P": pts})["columns"]["P"]

g = pg.Graph("lua")
g.add("spiral", spiral)
r = g.cook()
print(r["spiral"], ops.transfer.readback(columns={"first": r["spiral"]})["values"]["first"][:2])''')
code("""try:
    ops.cpu.call(fn="function() return 1, 'two' end", args=[], returns=["Number", "Number"])
except pg.LuaReturnError as e:
    print(type(e).__name__, "-", e)
try:
    ops.cpu.call(fn="function() return os.time() end", args=[])
except pg.LuaSandboxError as e:
    print(type(e).__name__, "-", str(e).splitlines()[0])
try:
    ops.cpu.call(fn="function() while true do end end", args=[], ceiling_ms=100)
except pg.LuaCeilingError as e:
    print(type(e).__name__, "- stopped near its ceiling of 100 ms")""")
md("""## A pure call is folded at planning
A `pure=True` call whose arguments the plan knows is made once; its results are constants
of the plan, and later cooks reuse them (the report shows it folded).""")
code('''@pg.node(params={"scale": pg.Field(1.0, bounds=(0.0, 10.0))})
def table(scale):
    fib = ops.cpu.call(fn="""function(n) local a, b = 0, 1
                              for i = 1, n do a, b = b, a + b end
                              calls = (calls or 0) + 1
                              return a end""", args=[30], returns=["Number"], pure=True)
    return fib["values"][0] * scale

g2 = pg.Graph("pure")
g2.add("table", table)
for scale in (1.0, 2.0):
    r = g2.cook(params={"table.scale": scale})
    print(r["table"], [kind for kind, _ in r.report.node("table").events])
print("Lua ran", g2._lua_state().env.calls, "time")''')
md("""## A digest re-cooks only when the state it reads moves""")
code("""@pg.node
def enemies():
    got = ops.cpu.read(fn="function() return #world.enemies end", args=[],
                       digest="function() return world.version end", returns=["Number"])
    return got["values"][0]

g3 = pg.Graph("world")
g3.add("enemies", enemies)
g3._lua_state().execute("world = {version = 1, enemies = {1, 2, 3}}")
print(g3.cook()["enemies"], g3.cook().report.reused)
g3._lua_state().execute("world.enemies[4] = 4")          # moved, but the digest did not
print(g3.cook()["enemies"], g3.cook().report.reused)
g3._lua_state().execute("world.version = 2")              # the digest moved: cook again
r = g3.cook()
print(r["enemies"], r.report.cooked, r.report.node("enemies").events[0])""")
md("""## A count that outgrows its room
`device.bound` with no capacity measures the count once (a wait in the report) and allots
twice it in powers of two. Cooks that change only a dynamic value replay the recording with
no readback; a replay whose count outgrew the room is clamped, and the next cook finds its
guard word (read without waiting), lets the recording go and records again with four
times the room.""")
code("""INSIDE = asset.resolve("procgen/inside", "computeShader")
COMPACT = asset.resolve("procgen/compact", "computeShader")
SCAN = asset.resolve("procgen/scan", "computeShader")
pts = np.random.default_rng(5).uniform(-1, 1, size=(4000, 2)).astype(np.float32)

@pg.node
def cloud():
    return ops.transfer.upload(values={"P": pts})["columns"]["P"]

@pg.node(params={"radius": pg.Field(0.2, bounds=(0.0, 2.0), dynamic=True)})
def kept(cloud, radius):
    flags = ops.device.kernel(kernel=INSIDE, bind={"points": cloud}, domain=cloud,
                              uniforms={"center": (0.0, 0.0), "radius": radius})["columns"]["flags"]
    found = ops.device.kernel(kernel=COMPACT, bind={"flags": flags}, domain=cloud)["columns"]
    return ops.device.bound(value=found["indices_count"].words)   # no capacity: measured

@pg.node
def counted(cloud, kept):
    ones = ops.transfer.upload(values={"one": {"type": "Int", "values": [1] * 4000}})["columns"]["one"]
    return ops.device.kernel(kernel=SCAN, specialize={"TYPE": "i32"}, bind={"src": ones},
                             domain=kept)["columns"]["total"]

g4 = pg.Graph("rooms")
g4.add("cloud", cloud)
g4.add("kept", kept, cloud="cloud")
g4.add("counted", counted, cloud="cloud", kept="kept")

def show(r, label):
    total = int(r["counted"].numpy()[0])
    print(f"{label:28s} mode={r.report.nodes[1].mode:8s} room={r['kept'].capacity:5d} "
          f"count seen={total:5d} readbacks={r.report.totals.readbacks} guarded={cookrun.counts().guarded - g0}")

g0 = cookrun.counts().guarded
show(g4.cook(params={"kept.radius": 0.2}), "plan at r=0.2")
show(g4.cook(params={"kept.radius": 0.25}), "replay at r=0.25")
show(g4.cook(params={"kept.radius": 0.6}), "replay at r=0.6 (outgrows)")
show(g4.cook(params={"kept.radius": 0.6}), "next cook finds the guard")
print(g4.last.report.to_text(timing=False))""")
nb = nbf.v4.new_notebook(cells=cells)
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbf.write(nb, "notebooks/05_lua_and_guards.ipynb")
