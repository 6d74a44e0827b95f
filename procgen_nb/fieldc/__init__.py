"""The field compiler: Fields (lazy expressions over columns) fused into one kernel each.

A Field is built from columns (``col``), the slot number (``index``), the domain's live
count (``count``) and numbers, with operators and the functions below. ``evaluate``
generates one Warp kernel per expression shape (constants are uniforms, so a new value
reuses the build), runs it in one dispatch over the domain and returns the Column it
lands in. ``device.kernel`` evaluates a Field bound to a binding the same way, and
``transfer.readback`` evaluates one over the column it reads.

``walk_spec(step, opts)`` and ``bind_spec(spec)`` drive the walk kernel
(``procgen/walk``): the step Field becomes a program the kernel runs, so every step
Field shares one build.
"""

from __future__ import annotations

from ._codegen import shapes_built
from ._evaluate import evaluate, evaluate_for_readback
from ._expr import Field, as_field, col, const, count, index
from ._funcs import (
    abs_,
    clamp,
    cos,
    dot,
    floor,
    fmax,
    fmin,
    hash01,
    length,
    mix,
    noise,
    normalize,
    sin,
    sqrt,
    to_float,
    to_int,
    vec2,
    vec3,
    vec4,
    where,
)
from ._walk import BoundSpec, WalkSpec, bind_spec, position, step_number, walk_spec

__all__ = [
    "BoundSpec",
    "Field",
    "WalkSpec",
    "abs_",
    "as_field",
    "bind_spec",
    "clamp",
    "col",
    "const",
    "cos",
    "count",
    "dot",
    "evaluate",
    "evaluate_for_readback",
    "floor",
    "fmax",
    "fmin",
    "hash01",
    "index",
    "length",
    "mix",
    "noise",
    "normalize",
    "position",
    "shapes_built",
    "sin",
    "sqrt",
    "step_number",
    "to_float",
    "to_int",
    "vec2",
    "vec3",
    "vec4",
    "walk_spec",
    "where",
]
