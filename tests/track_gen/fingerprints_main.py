"""Prints the fingerprints the determinism test pins (run as a script in a fresh process)."""

from __future__ import annotations

import json

CASES = {
    "bezier": {},
    "checkpoint": {},
    "hull": {},
    "polar": {"z_profile": True},
    "repulsive": {},
    "voronoi": {},
}


def fingerprints() -> dict[str, str]:
    """Returns the sha256 of each built-in's output for E=16, N=64, seed 7, epoch 3."""
    from procgen_nb.track_gen import presets

    out = {}
    for name, extra in CASES.items():
        tg = presets.track(
            generator=name, num_envs=16, num_points=64, seed=7, epoch=3, device="cpu", **extra
        )
        tg.generate()
        tg.regenerate()
        out[name] = tg.result.fingerprint()
    return out


if __name__ == "__main__":
    print(json.dumps(fingerprints(), sort_keys=True))
