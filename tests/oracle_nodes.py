"""The node kinds of the graph oracle (``tests/test_oracle.py``), one table to plug into.

A kind is a node every graph of the oracle may hold: ``make(world)`` returns its node
function (over the world of one graph: the generators it calls), ``outside(world, x)`` is
an optional call on the same objects that a cell outside the graph makes between cooks.
Every node takes ``up`` (the output of an upstream node, or None) and the dynamic Fields
``k`` and ``n``, and returns a dict with ``v`` (a number that travels downstream) and what
it made. A kind whose objects need a module that may be missing registers only when it
imports (``register``). ``readback`` and ``track_flip`` read device words back into
Python (``Column.numpy()``) and upload what they computed: a replay that reaches them
must run them again.

A live bound states its capacity here: a room a cook measures (a bound with no capacity)
is never less than an earlier recording of the same cook allotted, so its slots follow
the graph's history, not its values (``tests/test_measured_room.py`` checks those against
NumPy instead).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import procgen_nb as pg
from procgen_nb import asset, dynamic, ops
from procgen_nb.columns import Column
from procgen_nb.lua import Curve

FOLDER = Path(__file__).parent / "assets" / "kernels"
N_POINTS = 96
PTS = np.random.default_rng(23).uniform(-1, 1, size=(N_POINTS, 2)).astype(np.float32)
QCELL = np.random.default_rng(24).integers(-1, 9, size=N_POINTS).astype(np.int32)
PCELL = np.random.default_rng(25).integers(0, 8, size=40)
ORDER = np.argsort(PCELL, kind="stable").astype(np.int32)
START = np.searchsorted(PCELL[ORDER], np.arange(9)).astype(np.int32)
K = pg.Field(0.5, bounds=(-10.0, 10.0), dynamic=True)
N = pg.Field(5, bounds=(0, 1000), dynamic=True)


@dataclasses.dataclass(frozen=True)
class Kind:
    """A node kind of the oracle.

    Attributes:
        name: the kind's name.
        make: ``make(world)`` -> the node function (``fn(up, k, n) -> dict``).
        outside: ``outside(world, x)``: a call between cooks on the world's objects.
        world: ``world()`` -> a new world for one graph (its generators).
    """

    name: str
    make: Callable[[dict], Callable[..., dict]]
    outside: Callable[[dict, int], None] | None = None
    world: Callable[[], Any] | None = None


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Adds a kind to the table the oracle draws from."""
    KINDS[kind.name] = kind
    return kind


def _ref(name: str) -> Any:
    return asset.resolve(f"procgen/{name}", "computeShader")


def _write(a=0.0, off=(0.0, 0.0), flag=0):
    """tk_uniforms writes [a, off_x, off_y, time, frame, count, flag, dt] to dst."""
    return ops.device.kernel(
        kernel=asset.resolve("oracle/tk_uniforms", "computeShader"),
        domain=1,
        uniforms={"a": a, "off": off, "flag": flag, "dt": 0.0},
    )["columns"]["dst"]


def _prev(up: Any) -> Any:
    return up["v"] if up is not None else 0.0


def _points() -> Column:
    return ops.transfer.upload(values={"P": PTS})["columns"]["P"]


def _live_of(up: Any) -> Any:
    """An upstream live count (a compact's kept count), or None."""
    if up is not None and "count" in up:
        return up["count"]
    return None


# -- kinds over dynamic numbers: uniforms, expressions, reads in Python ------------------
def _scalar(kind: str) -> Callable[[dict], Callable[..., dict]]:
    def make(world: dict) -> Callable[..., dict]:
        def fn(up, k, n):
            prev = _prev(up)
            out: dict = {}
            if kind == "direct":
                v = k
                out["dst"] = _write(a=k, flag=n)
            elif kind == "derived":
                v = k * 2 + prev - n / 4
                out["dst"] = _write(a=v, off=(k, prev))
            elif kind == "host":
                v = 3.0 if float(k) + prev > 0.5 else -1.0
                out["dst"] = _write(a=v)
            elif kind == "pure":
                v = ops.cpu.call(
                    fn="function(x, y) return x * 3 + y, x - y end", args=[k + prev, n], pure=True
                )["values"][0]
                out["dst"] = _write(a=v)
            elif kind == "impure":
                v = ops.cpu.call(fn="function(x) return x - 2 end", args=[k])["values"][0]
                out["dst"] = _write(a=v)
            elif kind == "curve":
                v = ops.cpu.call(
                    fn="function(c, x) return c + x end",
                    args=[Curve([(0, 0), (1, 4), (2, -4)]), k],
                    pure=bool(n % 2 == 0),  # read in Python: plans when n's parity moves
                )["values"][0]
                out["dst"] = _write(a=v)
            elif kind == "math":
                v = dynamic.sin(k) + abs(k - 0.5) + round(k, 1) + math.floor(k * 3)
                out["dst"] = _write(a=v, off=(dynamic.maximum(k, prev), dynamic.minimum(k, 0.25)))
            else:  # builtin min/max and math.cos read in Python
                v = max(k, 0.25) + math.cos(k)
                out["dst"] = _write(a=v)
            out["v"] = v
            return out

        return fn

    return make


for _name in ("direct", "derived", "host", "pure", "impure", "curve", "math", "builtin"):
    register(Kind(_name, _scalar(_name)))


# -- kernel kinds: live counts that move, outputs sized by dynamic numbers ----------------
def _inside(world):
    def fn(up, k, n):
        pts = _points()
        radius = abs(k) * 0.5 + abs(_prev(up)) * 0.05  # an expression: replayed
        flags = ops.device.kernel(
            kernel=_ref("inside"),
            bind={"points": pts},
            domain=pts,
            uniforms={"center": (0.0, 0.0), "radius": radius},
        )["columns"]["flags"]
        kept = ops.device.kernel(kernel=_ref("compact"), bind={"flags": flags}, domain=pts)[
            "columns"
        ]
        return {"v": radius, "flags": flags, "kept": kept, "count": kept["indices_count"]}

    return fn


def _over(up: Any) -> tuple[Any, Any]:
    """The domain a kernel kind runs over: an upstream live count, else a live bound of n."""
    live = _live_of(up)
    if live is not None:
        return live, up["kept"]["indices"]
    return None, None


def _gather(world):
    def fn(up, k, n):
        pts = _points()
        live, idx = _over(up)
        if live is None:
            lc = ops.device.bound(value=n % 9 + 1, live=True, capacity=16)  # a dynamic word
            idx = ops.transfer.upload(values={"i": np.arange(N_POINTS, dtype=np.int32)})["columns"][
                "i"
            ]
            live = ops.device.bound(value=lc, capacity=16)
        out = ops.device.kernel(
            kernel=_ref("gather"),
            specialize={"TYPE": "vec2"},
            bind={"src": pts, "idx": idx},
            domain=live,
        )["columns"]
        return {"v": k + 1, "dst": out["dst"]}

    return fn


def _expand(world):
    def fn(up, k, n):
        counts = ops.transfer.upload(values={"c": {"type": "Int", "values": [2, 1, 3, 0]}})
        offsets = ops.transfer.upload(values={"o": {"type": "Int", "values": [0, 2, 3, 6]}})
        out = ops.device.kernel(
            kernel=_ref("expand"),
            bind={
                "counts": counts["columns"]["c"],
                "offsets": offsets["columns"]["o"],
                "n": n % 8 + 1,  # a dynamic size: the node plans again when it moves
            },
            domain=4,
        )["columns"]
        return {"v": _prev(up) - k, **out}

    return fn


def _hash(world):
    def fn(up, k, n):
        live = _live_of(up)
        bind = {
            "qcell": ops.transfer.upload(values={"q": QCELL})["columns"]["q"],
            "start": ops.transfer.upload(values={"s": START})["columns"]["s"],
            "order": ops.transfer.upload(values={"o": ORDER})["columns"]["o"],
            "total": 512,
        }
        if live is not None:
            bind["point_count"] = ops.transfer.upload(
                values={"p": {"type": "UInt", "values": [40]}}
            )["columns"]["p"]
        out = ops.device.kernel(
            kernel=_ref("hash_gather"), bind=bind, domain=live if live is not None else N_POINTS
        )["columns"]
        return {"v": k * 0.5, **out}

    return fn


def _scan(world):
    def fn(up, k, n):
        live = _live_of(up)
        src = (
            up["flags"]
            if live is not None
            else ops.transfer.upload(values={"s": {"type": "Int", "values": list(range(16))}})[
                "columns"
            ]["s"]
        )
        dom = live if live is not None else ops.device.bound(value=n % 12, live=True, capacity=16)
        out = ops.device.kernel(
            kernel=_ref("scan"), specialize={"TYPE": "i32"}, bind={"src": src}, domain=dom
        )["columns"]
        return {"v": _prev(up) + n, **out}

    return fn


def _segments(world):
    def fn(up, k, n):
        live = _live_of(up)
        dom = live if live is not None else ops.device.bound(value=n % 40, live=True, capacity=64)
        src = ops.transfer.upload(values={"s": {"type": "Int", "values": list(range(N_POINTS))}})
        starts = ops.transfer.upload(
            values={"t": {"type": "Int", "values": [i // 3 * 3 for i in range(N_POINTS)]}}
        )
        bind = {"src": src["columns"]["s"], "starts": starts["columns"]["t"]}
        red = ops.device.kernel(
            kernel=_ref("reduce"),
            specialize={"FOLD": "add", "TYPE": "i32", "COUNT": "device"},
            bind={**bind, "src_count": _count_word()},
            domain=dom,
        )["columns"]
        seg = ops.device.kernel(
            kernel=_ref("scan"),
            specialize={"TYPE": "i32", "SEGMENTS": "device"},
            bind={**bind, "n": N_POINTS},
            domain=dom,
        )["columns"]
        return {"v": k, "out": red["out"], "total": seg["total"], "dst": seg["dst"]}

    return fn


def _count_word() -> Column:
    """A one-word UInt column: the live elements of src (all of them)."""
    return ops.transfer.upload(values={"c": {"type": "UInt", "values": [N_POINTS]}})["columns"]["c"]


def _bounded(world):
    def fn(up, k, n):
        live = _live_of(up)
        if live is None:
            return {"v": k}
        # a count with its capacity stated: no measuring, no guard
        room = ops.device.bound(value=live.words, capacity=N_POINTS)
        keys = ops.transfer.upload(
            values={"k": {"type": "UInt", "values": [i % 7 for i in range(N_POINTS)]}}
        )
        out = ops.device.kernel(
            kernel=_ref("hash_hook"),
            specialize={"STAGE": "hook", "MATCH": "key"},
            bind={"keys": keys["columns"]["k"], "table": 256},
            domain=room,
        )["columns"]
        return {"v": k - 1, **out}

    return fn


for _name, _make in (
    ("inside", _inside),
    ("gather", _gather),
    ("expand", _expand),
    ("hash", _hash),
    ("scan", _scan),
    ("segments", _segments),
    ("bounded", _bounded),
):
    register(Kind(_name, _make))


# -- a kind that reads device words back into Python (its recording cannot redo that) -----
def _readback(world):
    def fn(up, k, n):
        cols = sorted((key, v) for key, v in (up or {}).items() if isinstance(v, Column))
        src = cols[0][1] if cols else _write(a=k, flag=n)  # upstream's words, or its own
        data = src.numpy().astype(np.float64)  # a readback: Python computes from the words
        v = float(np.round(data.sum(), 3)) if data.size else 0.0
        out = {"v": v, "dst": _write(a=v)}
        if data.size:
            back = np.ascontiguousarray(src.numpy()[::-1])
            out["back"] = ops.transfer.upload(values={"b": back})["columns"]["b"]
        return out

    return fn


register(Kind("readback", _readback))


# -- generator kinds: a track generator and a course called inside a node -----------------
# Each graph has its own generator (its world); another cell calls the same generator
# between cooks (``outside``). The node moves the generator's dynamic Params field and its
# epoch by the node's dynamic Fields, then copies what it reads into arrays of its own (a
# gather over the live envs). ``track_bare`` hands out the generator's own arrays instead:
# a later call writes them, and a result kept from an earlier cook must keep its values.
def _owned(pts: Column, flags: Column, radius: Any) -> dict:
    """The generator's points and valid flags, copied, compacted and flagged on the device."""
    every = ops.transfer.upload(values={"i": np.arange(len(pts), dtype=np.int32)})["columns"]
    xy = ops.device.kernel(
        kernel=_ref("gather"),
        specialize={"TYPE": "vec2"},
        bind={"src": pts, "idx": every["i"]},
        domain=len(pts),
    )["columns"]["dst"]
    valid = ops.device.kernel(
        kernel=_ref("gather"),
        specialize={"TYPE": "i32"},
        bind={"src": flags, "idx": every["i"]},
        domain=len(flags),
    )["columns"]["dst"]
    kept = ops.device.kernel(kernel=_ref("compact"), bind={"flags": valid}, domain=valid)["columns"]
    near = ops.device.kernel(
        kernel=_ref("inside"),
        bind={"points": xy},
        domain=xy,
        uniforms={"center": (0.0, 0.0), "radius": radius},
    )["columns"]["flags"]
    return {"xy": xy, "flags": valid, "kept": kept, "count": kept["indices_count"], "near": near}


def _register_generators() -> None:
    try:
        from procgen_nb.track_gen import TrackGenConfig, TrackGenerator
        from procgen_nb.track_gen.gates import Course, GateGenConfig
    except ImportError:  # pragma: no cover - the track library ships with the package
        return
    if not hasattr(TrackGenerator, "node"):
        return  # generators called inside a node replay only where the runtime records them

    def track_world():
        return TrackGenerator(
            TrackGenConfig(generator="polar", num_envs=4, num_points=32, seed=3, device="cpu")
        )

    def track(world):
        def fn(up, k, n):
            jitter = dynamic.minimum(abs(k) * 0.3, 1.0)  # a dynamic Params field, moved
            world.update(generator_params={"radius_jitter": jitter})
            res = world.generate(epoch=n % 5)
            return {"v": jitter, **_owned(res.points, res.flags, abs(k) * 0.5)}

        return fn

    def course_world():
        return Course(
            TrackGenConfig(num_envs=4, num_points=32, seed=5, device="cpu"),
            GateGenConfig(num_envs=4, seed=5, device="cpu"),
        )

    def course(world):
        def fn(up, k, n):
            world.generate(epoch=n % 4)
            cols = world.columns()
            return {"v": k * 2, **_owned(cols["xy"], cols["valid"], abs(k) * 0.4)}

        return fn

    def track_node(world):
        node = world.node()  # the generator's own node: its Params fields and epoch
        fields = node.Params.fields()

        def fn(up, k, n):
            values = {p: f.default for p, f in fields.items()}
            values["radius_jitter"] = dynamic.minimum(abs(k) * 0.2 + 0.1, 1.0)
            values["epoch"] = n % 3
            cols = node.fn(**values)
            return {"v": k - 0.5, **_owned(cols["xy"], cols["valid"], abs(k) * 0.3)}

        return fn

    def track_flip(world):
        node = world.node()

        def fn(up, k, n):  # the generator's node, its points read back and uploaded flipped
            values = {p: f.default for p, f in node.Params.fields().items()}
            values["radius_jitter"] = dynamic.minimum(abs(k) * 0.2 + 0.1, 1.0)
            values["epoch"] = n % 3
            xy = node.fn(**values)["xy"].numpy().reshape(4, 32, 2)
            flipped = np.ascontiguousarray(xy[::-1]).reshape(-1, 2)
            return {"v": k, "xy": ops.transfer.upload(values={"xy": flipped})["columns"]["xy"]}

        return fn

    def track_bare(world):
        def fn(up, k, n):  # the generator's own arrays handed out (no copy), a constant field
            world.update(generator_params={"radius_jitter": 0.2})
            res = world.generate(epoch=n % 5)
            return {"v": k, "xy": res.points, "flags": res.flags}

        return fn

    def bare_outside(world, x):  # another cell moves the field the node sets, then calls
        world.update(generator_params={"radius_jitter": 0.7})
        world.generate(epoch=x)

    register(Kind("track", track, lambda w, x: w.generate(epoch=x), track_world))
    register(Kind("track_bare", track_bare, bare_outside, track_world))
    register(Kind("track_flip", track_flip, lambda w, x: w.generate(epoch=x + 2), track_world))
    register(Kind("track_node", track_node, lambda w, x: w.generate(epoch=x + 1), track_world))
    register(Kind("course", course, lambda w, x: w.generate(epoch=x), course_world))


_register_generators()
