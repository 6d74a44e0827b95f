"""Code generation: one Warp kernel per expression shape, written to a module and cached.

The shape of a Field is its tree with the columns numbered by first appearance and the
constants replaced by typed slots, so two Fields that differ only in their constants or
in which columns (of the same elements) they read share one kernel. Each shape's module
is written once to the variant cache folder and loaded once per process and device
(counted in ``procgen_nb.traffic().loads``; ``builds`` when Warp compiled it); Warp's own
cache keeps the build across processes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import threading
from typing import Any

import warp as wp

from ..asset._variants import cache_dir
from ..device import _init_warp
from ..elements import ELEMENTS
from ._expr import VECS, Field, lanes_of

WP_DTYPES = {n: e.dtype for n, e in ELEMENTS.items()}
WP_TYPES = {n: e.wp_name for n, e in ELEMENTS.items()}
_lock = threading.RLock()
_modules: dict[str, Any] = {}
_built: set[tuple[str, str]] = set()

PRELUDE = """
@wp.func
def _mix32(k: wp.uint32) -> wp.uint32:
    h = k ^ (k >> wp.uint32(16))
    h = h * wp.uint32(0x7FEB352D)
    h = h ^ (h >> wp.uint32(15))
    h = h * wp.uint32(0x2C1B3C6D)
    h = h ^ (h >> wp.uint32(16))
    return h


@wp.func
def _h01(k: wp.uint32, seed: wp.uint32) -> wp.float32:
    h = _mix32(k ^ _mix32(seed + wp.uint32(0x3C6EF372)))
    return wp.float32(h >> wp.uint32(8)) * wp.float32(1.0 / 16777216.0)


@wp.func
def _lat(x: wp.int32, y: wp.int32, z: wp.int32, seed: wp.uint32) -> wp.float32:
    k = wp.uint32(x) * wp.uint32(73856093)
    k = k ^ (wp.uint32(y) * wp.uint32(19349663))
    k = k ^ (wp.uint32(z) * wp.uint32(83492791))
    return _h01(k, seed)


@wp.func
def _smooth(t: wp.float32) -> wp.float32:
    return t * t * (3.0 - 2.0 * t)


@wp.func
def _noise3(p: wp.vec3f, seed: wp.uint32) -> wp.float32:
    fx = wp.floor(p[0])
    fy = wp.floor(p[1])
    fz = wp.floor(p[2])
    x = wp.int32(fx)
    y = wp.int32(fy)
    z = wp.int32(fz)
    tx = _smooth(p[0] - fx)
    ty = _smooth(p[1] - fy)
    tz = _smooth(p[2] - fz)
    a = wp.lerp(_lat(x, y, z, seed), _lat(x + 1, y, z, seed), tx)
    b = wp.lerp(_lat(x, y + 1, z, seed), _lat(x + 1, y + 1, z, seed), tx)
    c = wp.lerp(_lat(x, y, z + 1, seed), _lat(x + 1, y, z + 1, seed), tx)
    d = wp.lerp(_lat(x, y + 1, z + 1, seed), _lat(x + 1, y + 1, z + 1, seed), tx)
    return wp.lerp(wp.lerp(a, b, ty), wp.lerp(c, d, ty), tz)
"""


def shape_key(field: Field) -> tuple[tuple, list[Any], list[Field]]:
    """Returns (shape, columns in slot order, constant leaves in slot order)."""
    cols: list[Any] = []
    col_slot: dict[int, int] = {}
    consts: list[Field] = []

    def walk(f: Field) -> tuple:
        if f.op == "col":
            k = col_slot.get(id(f.payload))
            if k is None:
                k = col_slot[id(f.payload)] = len(cols)
                cols.append(f.payload)
            return ("col", k, f.element)
        if f.op == "const":
            consts.append(f)
            return ("const", len(consts) - 1, f.element)
        extra = f.payload if f.op == "lane" else None
        return (f.op, f.element, extra, tuple(walk(a) for a in f.args))

    return walk(field), cols, consts


def _zero(el: str) -> str:
    if el in VECS:
        return f"{WP_TYPES[el]}()"
    e = ELEMENTS[el]
    return f"{e.wp_name}({'0.0' if e.word == 'f32' else '0'})"


def _conv(var: str, have: str, want: str) -> str:
    if have == want:
        return var
    if want in VECS:
        s = var if have == "f32" else f"wp.float32({var})"
        return f"{WP_TYPES[want]}({', '.join([s] * lanes_of(want))})"
    return f"{WP_TYPES[want]}({var})"


class _Gen:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0

    def tmp(self, expr: str) -> str:
        name = f"t{self.n}"
        self.n += 1
        self.lines.append(f"    {name} = {expr}")
        return name

    def emit(self, s: tuple) -> tuple[str, str]:
        """Returns (variable, element) for a shape node."""
        kind = s[0]
        if kind == "col":
            k, el = s[1], s[2]
            v = self.tmp(_zero(el))
            self.lines.append(f"    if i < c{k}.shape[0]:")
            self.lines.append(f"        {v} = c{k}[i]")
            return v, el
        if kind == "const":
            return f"u{s[1]}", s[2]
        op, el, extra, args = s
        if op == "index":
            return "i", "i32"
        if op == "count":
            return "live", "i32"
        vals = [self.emit(a) for a in args]
        return self.tmp(self._expr(op, el, extra, vals)), el

    def _expr(self, op: str, el: str, extra: Any, vals: list[tuple[str, str]]) -> str:
        if op in ("add", "sub", "min", "max", "mod", "where") or (
            op in ("mul", "div") and el not in VECS
        ):
            if op == "where":
                (c, cel), (a, _), (b, _) = vals
                zero = _zero(cel)
                return f"wp.where({c} != {zero}, {_conv(vals[1][0], vals[1][1], el)}, {_conv(vals[2][0], vals[2][1], el)})"
            a, b = (_conv(v, e, el) for v, e in vals)
            sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}.get(op)
            if sym:
                return f"{a} {sym} {b}"
            return f"wp.{op}({a}, {b})"
        if op in ("mul", "div"):
            (a, ea), (b, eb) = vals
            fn = "wp.cw_mul" if op == "mul" else "wp.cw_div"
            if ea in VECS and eb in VECS:
                return f"{fn}({a}, {b})"
            if ea in VECS:
                return f"{a} {'*' if op == 'mul' else '/'} {_conv(b, eb, 'f32')}"
            if op == "mul":
                return f"{_conv(a, ea, 'f32')} * {b}"
            return f"{fn}({_conv(a, ea, el)}, {b})"
        if op in ("lt", "le", "gt", "ge", "eq", "ne"):
            (a, ea), (b, eb) = vals
            common = ea if ea == eb else "f32"
            sym = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[op]
            return (
                f"wp.where({_conv(a, ea, common)} {sym} {_conv(b, eb, common)}, "
                "wp.int32(1), wp.int32(0))"
            )
        (a, ea) = vals[0]
        if op == "neg":
            return f"-{a}"
        if op == "lane":
            return f"{a}[{extra}]"
        if op in ("length", "normalize", "abs", "floor", "sqrt", "sin", "cos"):
            return f"wp.{op}({a})"
        if op == "dot":
            return f"wp.dot({a}, {vals[1][0]})"
        if op == "to_float":
            return f"wp.float32({a})"
        if op == "to_int":
            return f"wp.int32({a})"
        if op in ("vec2", "vec3", "vec4"):
            return f"{WP_TYPES[op]}({', '.join(v for v, _ in vals)})"
        seed = f"wp.uint32(wp.int32({vals[1][0]}))"
        if op == "hash01":
            key = (
                f"wp.uint32(wp.int32(wp.floor(wp.float32({a}))))"
                if ea == "f32"
                else f"wp.uint32({a})"
            )
            return f"_h01({key}, {seed})"
        if op == "noise":
            p = {
                "f32": f"wp.vec3f({a}, 0.0, 0.0)",
                "vec2": f"wp.vec3f({a}[0], {a}[1], 0.0)",
                "vec3": a,
            }[ea]
            return f"_noise3({p}, {seed})"
        raise AssertionError(f"unknown field op {op!r}")


def source(shape: tuple, col_elements: list[str], const_elements: list[str]) -> str:
    """Returns the Warp module source of the kernel ``field_kernel`` for a shape."""
    g = _Gen()
    var, el = g.emit(shape)
    params = [f"    c{k}: wp.array(dtype={WP_TYPES[e]})," for k, e in enumerate(col_elements)]
    params += [
        "    live_count: wp.array(dtype=wp.uint32),",
        f"    out: wp.array(dtype={WP_TYPES[el]}),",
    ]
    params += [f"    u{k}: {WP_TYPES[e]}," for k, e in enumerate(const_elements)]
    body = [
        "    i = wp.tid()",
        "    live = wp.min(wp.int32(live_count[0]), out.shape[0])",
        "    if i >= live:",
        f"        out[i] = {_zero(el)}",
        "        return",
        *g.lines,
        f"    out[i] = {var}",
    ]
    return (
        '"""A fused field kernel generated by procgen_nb.fieldc."""\n\nimport warp as wp\n'
        + PRELUDE
        + "\n\n@wp.kernel\ndef field_kernel(\n"
        + "\n".join(params)
        + "\n):\n"
        + "\n".join(body)
        + "\n"
    )


def module_for(shape: tuple, col_elements: list[str], const_elements: list[str]) -> Any:
    """Returns the imported module of a shape (written and imported once per process)."""
    text = source(shape, col_elements, const_elements)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    with _lock:
        mod = _modules.get(digest)
        if mod is not None:
            return mod
        _init_warp()
        folder = cache_dir().parent / "fields"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"procgen_field_{digest}"
        path = folder / f"{name}.py"
        if not path.exists() or path.read_text() != text:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        wp.set_module_options({"enable_backward": False}, module=mod)  # no adjoints
        _modules[digest] = mod
        return mod


def ensure_built(mod: Any, device: str) -> None:
    """Loads (building if need be) a shape's module on ``device`` once per process."""
    key = (mod.__name__, device)
    if key in _built:
        return
    with _lock:
        if key not in _built:
            wp.load_module(mod, device=device)
            _built.add(key)  # (the load, and a compile, counted by the hook)


def shapes_built() -> int:
    """How many (shape, device) builds this process made."""
    return len(_built)
