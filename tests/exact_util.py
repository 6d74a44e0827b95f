"""The oracle of exact cooks: a graph's outputs as bytes, compared with a fresh graph's.

A fresh graph (``record=False``, built anew) cooked once at a set of values is the
reference for any cook of a long-lived graph at those values: every Column's words (every
slot, live or not), every live count's word and every plain value must be equal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import warp as wp

import procgen_nb as pg
from procgen_nb.columns import Column, Domain, Geometry, LiveCount


def flatten(value: Any, path: str = "") -> dict[str, Any]:
    """Returns ``{path: bytes or value}`` for everything an output holds."""
    out: dict[str, Any] = {}
    if isinstance(value, Column):
        out[path] = (value.type, value.data.numpy().tobytes())
        if value.live is not None:
            out[path + "#live"] = (value.live.capacity, value.live.words.numpy().tobytes())
    elif isinstance(value, LiveCount):
        out[path] = (value.capacity, value.words.numpy().tobytes())
    elif isinstance(value, wp.array):
        out[path] = value.numpy().tobytes()
    elif isinstance(value, np.ndarray):
        out[path] = value.tobytes()
    elif isinstance(value, Geometry):
        for k, dom in value.classes.items():
            out.update(flatten(dom, f"{path}/{k}"))
    elif isinstance(value, Domain):
        for k, v in value.items():
            out.update(flatten(v, f"{path}/{k}"))
        out.update(flatten(value.count, f"{path}/#count"))
    elif isinstance(value, Mapping):
        for k, v in value.items():
            out.update(flatten(v, f"{path}/{k}"))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            out.update(flatten(v, f"{path}[{i}]"))
    elif hasattr(value, "_as_live_count"):
        out.update(flatten(value._as_live_count(None), path))
    elif isinstance(value, float):
        out[path] = ("float", np.float64(value).tobytes())
    else:
        out[path] = value
    return out


def snapshot(result: pg.CookResult) -> dict[str, Any]:
    """Every output of a cook, flattened (read now: a later cook may overwrite nothing kept)."""
    wp.synchronize()
    return {n: flatten(v) for n, v in result.outputs.items()}


def _show(v: Any) -> str:
    if isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], bytes):
        return f"{v[0]} {np.frombuffer(v[1], np.uint32).tolist()[:24]}"
    return repr(v)[:200]


def assert_same(got: dict[str, Any], want: dict[str, Any], where: str = "") -> None:
    """Asserts two snapshots are equal, naming the first output path that differs."""
    assert got.keys() == want.keys(), where
    for node in want:
        g, w = got[node], want[node]
        assert g.keys() == w.keys(), f"{where} node {node}: {sorted(g)} != {sorted(w)}"
        for p in w:
            assert g[p] == w[p], (
                f"{where} node {node} output {p or '<root>'} differs: {_show(g[p])} != {_show(w[p])}"
            )


def check_cooks(
    build: Callable[[bool], pg.Graph],
    cooks: list[Mapping[str, Any]],
    between: Callable[[int], None] | None = None,
) -> pg.Graph:
    """Cooks one long-lived graph at each of ``cooks`` and checks each against a fresh one.

    Args:
        build: ``build(record)`` returns a new graph.
        cooks: keyword arguments of each cook (``params``, ``time``, ``frame``).
        between: called with the cook's index before each cook (outside calls).

    Returns:
        The long-lived graph (its counts and reports can be checked further).
    """
    g = build(True)
    given: dict[str, Any] = {}
    for i, kw in enumerate(cooks):
        if between is not None:
            between(i)
        got = snapshot(g.cook(**kw))
        # the reference: every param given so far (the graph keeps them), cooked fresh once
        given.update(kw.get("params") or {})
        fresh_kw = dict(kw)
        fresh_kw["params"] = dict(given)
        want = snapshot(build(False).cook(**fresh_kw))
        assert_same(got, want, f"cook {i} {kw}")
    return g
