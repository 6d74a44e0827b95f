"""A small track generator in NumPy, the explore target of the UI tests.

Polar tracks: each env's radius is ``1 + jitter * noise`` around ``lobes`` control
points, interpolated over ``num_points``; an env is invalid when its smallest radius is
under ``min_radius``. Independent of Warp so the view is tested without track_gen.
"""

from __future__ import annotations

import numpy as np

from procgen_nb.params import Field, Params


class FakeParams(Params):
    """The knobs of ``fake_tracks``."""

    lobes: int = Field(5, bounds=(3, 12), doc="control points around the circle")
    jitter: float = Field(0.3, bounds=(0.0, 1.0), soft=(0.0, 0.8), doc="radius noise")
    min_radius: float = Field(0.5, bounds=(0.0, 2.0), unit="m", doc="smallest valid radius")
    num_envs: int = Field(9, bounds=(1, 256), soft=(1, 36), doc="environments")
    num_points: int = Field(64, bounds=(8, 1024), soft=(8, 256), doc="points per env")
    gates: int = Field(0, bounds=(0, 16), doc="gates per env (0: none)")
    seed: int = Field(0, bounds=(0, 2**31 - 1), doc="base seed")


def fake_tracks(params: FakeParams) -> dict:
    """Returns ``xy`` [E, N, 2], ``valid`` [E], ``counts`` and optional ``gates``."""
    rng = np.random.default_rng(params.seed)
    e, n, k = params.num_envs, params.num_points, params.lobes
    radii = 1.0 + params.jitter * rng.uniform(-1.0, 1.0, size=(e, k))
    t = np.linspace(0.0, k, n, endpoint=False)
    lo = np.floor(t).astype(int)
    w = t - lo
    r = radii[:, lo % k] * (1 - w) + radii[:, (lo + 1) % k] * w
    ang = 2 * np.pi * np.arange(n) / n
    xy = np.stack([r * np.cos(ang), r * np.sin(ang)], axis=-1)
    valid = (r.min(axis=1) >= params.min_radius).astype(np.int32)
    out = {"xy": xy, "valid": valid, "counts": {"controls kept": int(e * k)}}
    if params.gates:
        idx = (np.arange(params.gates) * n) // params.gates
        out["gates"] = {"positions": xy[:, idx], "count": np.full(e, params.gates)}
    return out
