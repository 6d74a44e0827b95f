"""acme_tracks: a third-party generator written as a ``GeneratorSpec`` (``acme.wobbly``).

A wobbly circle, r(theta) = 1 + amplitude * sin(lobes * theta + phase), registered through
the entry point ``acme.wobbly = acme_tracks:WOBBLY`` of the group ``procgen_nb.track_gen``.
"""

from __future__ import annotations

import types

import warp as wp

from procgen_nb.track_gen.ops import funcs
from procgen_nb.track_gen.plugin import Field, GeneratorSpec, Params

_SALT = 0x51AC3E  # the plugin's own constant salt


class AcmeParams(Params):
    """Knobs of acme.wobbly."""

    owner = "acme.wobbly"
    lobes: int = Field(5, bounds=(3, 12), doc="number of lobes")
    amplitude: float = Field(0.2, bounds=(0.0, 0.5), doc="lobe depth (fraction of the radius)")

    @classmethod
    def from_legacy(cls, config):
        """Reads the 0.1 knobs ``acme_lobes`` / ``acme_amplitude`` of a config subclass."""
        return cls(
            lobes=getattr(config, "acme_lobes", 5), amplitude=getattr(config, "acme_amplitude", 0.2)
        )


@wp.kernel
def _wobbly_k(
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    lobes: int,
    amplitude: float,
    n: int,
    scale: float,
    xy: wp.array(dtype=wp.vec2),
    valid: wp.array(dtype=wp.int32),
):
    tid = wp.tid()
    e = tid // n
    i = tid - e * n
    phase = 6.283185307179586 * funcs.rand01(funcs.stream_key(seeds[e], salt), 0)
    th = 6.283185307179586 * float(i) / float(n)
    r = (1.0 + amplitude * wp.sin(float(lobes) * th + phase)) / (1.0 + amplitude)
    xy[tid] = wp.vec2(wp.cos(th), wp.sin(th)) * (r * scale)
    if i == 0:
        valid[e] = 1


def _alloc_scratch(config):
    return types.SimpleNamespace()


def _generate(seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx=None):
    p = config.generator_params
    n = config.num_points
    ctx.launch(
        _wobbly_k,
        config.num_envs * n,
        [
            seeds_wp,
            _SALT,
            p.lobes,
            p.amplitude,
            n,
            float(config.scale),
            out_centerline,
            out_valid_wp,
        ],
    )


WOBBLY = GeneratorSpec(
    name="acme.wobbly",
    alloc_scratch=_alloc_scratch,
    generate=_generate,
    accepts_ctx=True,
    params=AcmeParams,
)
