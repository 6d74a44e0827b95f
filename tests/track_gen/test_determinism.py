"""Same seed, epoch and params give the same bytes, in this process and in another one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import fingerprints_main

# sha256 of xy, valid (and z) after generate() + regenerate(), E=16, N=64, seed 7, epoch 3, CPU,
# default (drivable) validity
PINNED = {
    "bezier": "84ab0bf23692a9c32c7d66f904b09a20a50bd7fd7e934d7dad9b80c26b539691",
    "checkpoint": "d4fad5b643c9274d2467bcbd01a3be5a608d87bcfaf5cab8e7c2bfa5f91066d2",
    "hull": "11524238bf81128e2562e37fc22c2a2c34cebb641c38f472966a52341ba7ec50",
    "polar": "856500026f403bbb2072aa432e17c1ea4758c24fc14ebae9ec0ea77c2130d84f",
    "repulsive": "8da61cb64b0a1f32c6996ca6451eabe12feaf4e1b3fe6ab40c19bf84d82570eb",
    "voronoi": "d171fec510cc76f0e45c2667caf09182facff6f42af23f11027d81600f856b67",
}


def test_fingerprints_in_this_process():
    assert fingerprints_main.fingerprints() == PINNED


def test_fingerprints_in_another_process():
    script = Path(fingerprints_main.__file__)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=True, timeout=300
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == PINNED
