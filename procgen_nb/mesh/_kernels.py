"""The intersection kernels and how a call runs them: the crossing pairs of two meshes
(count, scan, write) and the cut segment of each pair."""

from __future__ import annotations

import numpy as np

from .. import asset, ops
from ..columns import column_from_numpy
from ._cells import _grid

PAIRS = asset.resolve("procgen/intersect_pairs", "computeShader")
CUTS = asset.resolve("procgen/intersect_cuts", "computeShader")
UNIFY = asset.resolve("procgen/intersect_unify", "computeShader")
RETRI = asset.resolve("procgen/intersect_retri", "computeShader")
SCAN = asset.resolve("procgen/scan", "computeShader")


def _run(kernel, spec, bind, domain, uniforms=None):
    return ops.device.kernel(
        kernel=kernel, specialize=spec, bind=bind, domain=domain, uniforms=uniforms
    )["columns"]


def _pairs(a, na: int, b_soup: np.ndarray, device: str, test="tri3", cell=None, skip=None):
    """Runs intersect_pairs (count, scan, write); returns (hits, start, pairs record, total,
    (grid over b, its uniforms))."""
    words, uni = _grid(b_soup, cell)
    b = column_from_numpy(b_soup, "Vec3", device)
    grid = column_from_numpy(words, "Int", device)
    kuni = {**uni, **(skip or dict(self_pairs=0, group=1, period=0, near=0))}
    bind = {"a": a, "b": b, "grid": grid}
    hits = _run(PAIRS, {"STAGE": "count", "TEST": test}, bind, na, kuni)["hits"]
    scanned = _run(SCAN, {"TYPE": "i32"}, {"src": hits}, na)
    total = int(scanned["total"].numpy()[0])  # one read: the pair list has no smaller bound
    out = _run(
        PAIRS,
        {"STAGE": "write", "TEST": test},
        {**bind, "start": scanned["dst"], "n": total},
        na,
        kuni,
    )
    return hits, scanned["dst"], out, total, (grid, uni)


def _cuts(pairs, a, b):
    dom = pairs["pair_a_count"]  # the live count: the pairs written
    return _run(
        CUTS, None, {"pair_a": pairs["pair_a"], "pair_b": pairs["pair_b"], "a": a, "b": b}, dom
    )
