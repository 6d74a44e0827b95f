"""Same seed, epoch and params give the same bytes, in this process and in another one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import fingerprints_main

# sha256 of xy, valid (and z) after generate() + regenerate(), E=16, N=64, seed 7, epoch 3, CPU
PINNED = {
    "bezier": "1c67e776d94979ae3d715506481904e22dbd993245184e1722547bf6eb37d3db",
    "checkpoint": "d4fad5b643c9274d2467bcbd01a3be5a608d87bcfaf5cab8e7c2bfa5f91066d2",
    "hull": "b35f6863ff50b2764865549a22a66a9a5e6ce12a16c56df9655dd78ea6834796",
    "polar": "856500026f403bbb2072aa432e17c1ea4758c24fc14ebae9ec0ea77c2130d84f",
    "repulsive": "f6ecc2412261b79ba5389a0c5b539e8353a0ab97431612ecb67a9c692d6f0915",
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
