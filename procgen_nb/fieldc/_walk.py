"""walk_spec and bind_spec: step Fields compiled to programs for the walk kernel.

``walk_spec(step, opts)`` compiles the step Field (a Vec2 over ``position()``, columns,
``index()``, the step number ``step_number()`` and numbers) and the optional done and
prelude Fields to one stack program, and states the walk kernel's specialize options
(``WALK_STEP``, ``WALK_STEP_HI``, ``WALK_DONE``, ``WALK_PRELUDE``) in ``spec.specialize``.
``bind_spec(spec)`` puts the program on the device (``u``) and names the columns the
Fields read (``cols``, packed by the kernel's columns binding); ``release()`` lets both
go once the kernel's outputs are no longer read. Every step Field runs in the same build
of ``procgen/walk``: only the numbers in ``u`` change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..columns import Column, Record, column_from_numpy
from ..errors import BindingError
from ._expr import VECS, Field, as_field, lanes_of

_STACK = 16
_OPS = {
    "const": 0,
    "position": 1,
    "col": 2,
    "index": 3,
    "step_number": 4,
    "add": 10,
    "sub": 11,
    "mul": 12,
    "div": 13,
    "min": 14,
    "max": 15,
    "lt": 16,
    "gt": 17,
    "dot": 18,
    "neg": 30,
    "abs": 31,
    "floor": 32,
    "sqrt": 33,
    "sin": 34,
    "cos": 35,
    "length": 36,
    "normalize": 37,
    "lane": 38,
    "vec": 50,
}
_PASS = ("to_float",)


def position() -> Field:
    """The walker's position (Vec2): a leaf of walk Fields only."""
    return Field("position", (), "vec2")


def step_number() -> Field:
    """The number of the step being taken (Float): a leaf of walk Fields only."""
    return Field("step_number", (), "f32")


@dataclasses.dataclass
class WalkSpec:
    """What ``walk_spec`` compiled.

    Attributes:
        specialize: the walk kernel's options as they stand (WALK_STEP, WALK_STEP_HI,
            WALK_DONE, WALK_PRELUDE).
        program: the program words (three lengths, then opcode and operand pairs).
        columns: the columns the Fields read, in the order of their rows in ``cols``.
        uniforms: ``dt`` and ``steps`` for the kernel.
    """

    specialize: dict[str, str]
    program: list[float]
    columns: list[Column]
    uniforms: dict[str, Any]


class BoundSpec:
    """The device resources of a WalkSpec: ``cols`` (a table of columns) and ``u`` (a Column).

    Call ``release()`` once the kernel's outputs are no longer read.
    """

    def __init__(self, cols: Record, u: Column):
        self.cols: Record | None = cols
        self.u: Column | None = u

    @property
    def released(self) -> bool:
        """True once ``release()`` ran."""
        return self.u is None

    def release(self) -> None:
        """Lets the program and the column table go."""
        self.cols = None
        self.u = None


class _Compiler:
    def __init__(self) -> None:
        self.words: list[float] = []
        self.columns: list[Column] = []
        self.rows: dict[int, int] = {}
        self.next_row = 0
        self.depth = 0
        self.max_depth = 0

    def push(self, op: str, arg: float = 0.0, pops: int = 0) -> None:
        self.words += [float(_OPS[op]), float(arg)]
        self.depth += 1 - pops
        self.max_depth = max(self.max_depth, self.depth)

    def emit(self, f: Field) -> int:
        """Emits ``f``; returns the instruction count."""
        start = len(self.words)
        op = f.op
        if op == "const":
            self.push("const", f.payload)
        elif op in ("position", "index", "step_number"):
            self.push(op)
        elif op == "count":
            raise BindingError(
                "fieldc.walk_spec: expected a step Field without count(), got one with it"
            )
        elif op == "col":
            key = id(f.payload)
            if key not in self.rows:
                self.rows[key] = self.next_row
                self.columns.append(f.payload)
                self.next_row += f.payload.lanes
            self.push("col", self.rows[key] * 8 + f.payload.lanes)
        elif op in _PASS:
            self.emit(f.args[0])
        elif op in ("vec2", "vec3", "vec4"):
            for a in f.args:
                self.emit(a)
            self.push("vec", len(f.args), pops=len(f.args))
        elif op in ("add", "sub", "mul", "div", "min", "max", "lt", "gt", "dot"):
            a, b = f.args
            self.emit(a)
            self.emit(b)
            self.push(op, lanes_of(a.element), pops=2)
        elif op in ("le", "ge"):
            # a <= b is 1 - (a > b)
            a, b = f.args
            self.push("const", 1.0)
            self.emit(a)
            self.emit(b)
            self.push("gt" if op == "le" else "lt", 0, pops=2)
            self.push("sub", 0, pops=2)
        elif op in ("neg", "abs", "floor", "sqrt", "sin", "cos", "length", "normalize"):
            self.emit(f.args[0])
            self.push(op, lanes_of(f.args[0].element), pops=1)
        elif op == "lane":
            self.emit(f.args[0])
            self.push("lane", f.payload, pops=1)
        else:
            raise BindingError(
                f"fieldc.walk_spec: expected a Field of arithmetic, min/max, comparisons < <= > "
                f">=, lanes, vectors and sqrt/sin/cos/length/normalize/dot, got {op!r}"
            )
        return (len(self.words) - start) // 2


def _opt(opts: Mapping[str, Any], key: str, default: Any) -> Any:
    return opts.get(key, default)


def walk_spec(step: Any, opts: Mapping[str, Any] | None = None) -> WalkSpec:
    """Compiles a step Field (and optional done and prelude Fields) for the walk kernel.

    Args:
        step: a Vec2 Field over ``position()``, columns, ``index()``, ``step_number()``.
        opts: ``mode`` ("add": p += dt * step, or "set": p = step), ``hi`` (a midpoint,
            second-order step), ``done`` (a Float Field: stop before a step where it is
            above 0), ``prelude`` (a Vec2 Field: where each walker starts), ``dt``
            (default 0.1) and ``steps`` (default 16).

    Raises:
        BindingError: a step that is not a Vec2, an unknown option, an op the walk kernel
            does not run, or a program deeper than its stack.
    """
    opts = dict(opts or {})
    unknown = sorted(set(opts) - {"mode", "hi", "done", "prelude", "dt", "steps"})
    if unknown:
        raise BindingError(
            f"fieldc.walk_spec opts: expected keys among mode, hi, done, prelude, dt, steps, got {unknown}"
        )
    step_f = as_field(step)
    if step_f.element != "vec2":
        raise BindingError(f"fieldc.walk_spec step: expected a Vec2 Field, got {step_f.element}")
    mode = _opt(opts, "mode", "add")
    if mode not in ("add", "set"):
        raise BindingError(f"fieldc.walk_spec opts.mode: expected 'add' or 'set', got {mode!r}")
    done = opts.get("done")
    prelude = opts.get("prelude")
    c = _Compiler()
    lengths = [c.emit(step_f)]
    if done is not None:
        d = as_field(done)
        if d.element in VECS:
            raise BindingError(
                f"fieldc.walk_spec opts.done: expected a Float Field, got {d.element}"
            )
        c.depth = 0
        lengths.append(c.emit(d))
    else:
        lengths.append(0)
    if prelude is not None:
        pf = as_field(prelude)
        if pf.element != "vec2":
            raise BindingError(
                f"fieldc.walk_spec opts.prelude: expected a Vec2 Field, got {pf.element}"
            )
        c.depth = 0
        lengths.append(c.emit(pf))
    else:
        lengths.append(0)
    if c.max_depth > _STACK:
        raise BindingError(
            f"fieldc.walk_spec: expected a program at most {_STACK} deep, got {c.max_depth}"
        )
    return WalkSpec(
        specialize={
            "WALK_STEP": mode,
            "WALK_STEP_HI": "on" if opts.get("hi") else "off",
            "WALK_DONE": "field" if done is not None else "steps",
            "WALK_PRELUDE": "field" if prelude is not None else "none",
        },
        program=[float(n) for n in lengths] + c.words,
        columns=c.columns,
        uniforms={"dt": float(_opt(opts, "dt", 0.1)), "steps": int(_opt(opts, "steps", 16))},
    )


def bind_spec(spec: WalkSpec, device: str | None = None) -> BoundSpec:
    """Puts a WalkSpec's program on the device and names its columns.

    Returns:
        BoundSpec: ``cols`` binds the walk kernel's columns binding, ``u`` its ``u``.
    """
    if not isinstance(spec, WalkSpec):
        raise BindingError(
            f"fieldc.bind_spec: expected a spec from fieldc.walk_spec, got {type(spec).__name__}"
        )
    dev = device or (spec.columns[0].device if spec.columns else None)
    from ..device import get_device

    u = column_from_numpy(np.asarray(spec.program, np.float32), "Float", dev or get_device())
    cols = Record({f"c{k:03d}": col for k, col in enumerate(spec.columns)})
    return BoundSpec(cols, u)
