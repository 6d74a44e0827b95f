"""GeneratorSpecs written from the plugin ABI, for the conformance kit's tests.

``GOOD`` draws a wobbly circle per env from its own seed over ``E * N`` threads. The broken
ones differ from it in one place each, the two mistakes the kit must catch:

- ``N_THREADS`` launches ``N`` threads instead of ``E * N``: only env 0's points are
  written, every other env keeps what the buffer held;
- ``PREV_SEED`` reads env ``e - 1``'s seed (env 0 reads the last env's): each env's track
  then depends on its batch, not on its own seed alone.

``ALLOCATES`` allocates a buffer through ``ctx`` in every call while claiming to be
capturable (a recording refuses it: ``NotCapturableError``).
"""

from __future__ import annotations

import types

import warp as wp

from procgen_nb.track_gen.ops import funcs
from procgen_nb.track_gen.plugin import GeneratorSpec

_SALT = 0x6B17


@wp.kernel
def _wobbly_k(
    seeds: wp.array(dtype=wp.int32),
    shift: int,
    n: int,
    scale: float,
    xy: wp.array(dtype=wp.vec2),
    valid: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    e = tid // n
    i = tid - e * n
    E = seeds.shape[0]
    src = (e + E - shift) % E  # shift 0: the env's own seed
    phase = 6.283185307179586 * funcs.rand01(funcs.stream_key(seeds[src], _SALT), 0)
    amp = 0.1 + 0.1 * funcs.rand01(funcs.stream_key(seeds[src], _SALT), 1)
    th = 6.283185307179586 * float(i) / float(n)
    r = (1.0 + amp * wp.sin(3.0 * th + phase)) / (1.0 + amp)
    xy[tid] = wp.vec2(wp.cos(th), wp.sin(th)) * (r * scale)
    if i == 0:
        valid[e] = 1


def _alloc(config):
    return types.SimpleNamespace()


def _make(name: str, threads_per_env: bool = True, shift: int = 0) -> GeneratorSpec:
    def generate(seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx=None):
        n = config.num_points
        dim = config.num_envs * n if threads_per_env else n
        ctx.launch(
            _wobbly_k, dim, [seeds_wp, shift, n, float(config.scale), out_centerline, out_valid_wp]
        )

    return GeneratorSpec(name=name, alloc_scratch=_alloc, generate=generate, accepts_ctx=True)


def _generate_allocating(seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx=None):
    n = config.num_points
    tmp = ctx.zeros(config.num_envs * n, wp.vec2)
    ctx.launch(
        _wobbly_k, config.num_envs * n, [seeds_wp, 0, n, float(config.scale), tmp, out_valid_wp]
    )
    ctx.copy(out_centerline, tmp)


GOOD = _make("test.kit_good")
N_THREADS = _make("test.kit_n_threads", threads_per_env=False)
PREV_SEED = _make("test.kit_prev_seed", shift=1)
ALLOCATES = GeneratorSpec(
    name="test.kit_allocates",
    alloc_scratch=_alloc,
    generate=_generate_allocating,
    accepts_ctx=True,
)
