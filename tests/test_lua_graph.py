"""cpu.call and cpu.read inside graphs: pure calls folded once, digests re-cooking only when they move."""

from __future__ import annotations

import pytest

import procgen_nb as pg
from procgen_nb import ops


def test_digest_recooks_only_when_it_moves():
    calls = []

    @pg.node
    def reader():
        calls.append(1)
        out = ops.cpu.read(
            fn="function(k) return world.n * k end",
            args=[2],
            digest="function(k) return world.n end",
            returns=["Number"],
        )
        return out["values"][0]

    @pg.node
    def after(x):
        return x + 1

    g = pg.Graph("digest")
    g.add("reader", reader)
    g.add("after", after, x="reader")
    g._lua_state().execute("world = {n = 3}")
    assert g.cook()["after"] == 7
    r = g.cook()
    assert r.report.reused == ["reader", "after"] and len(calls) == 1
    g._lua_state().execute("world.n = 5")
    r = g.cook()
    assert r["after"] == 11 and r.report.cooked == ["reader", "after"] and len(calls) == 2
    assert ("digest", "a cpu.read digest moved") in r.report.node("reader").events
    assert g.cook().report.reused == ["reader", "after"]


def test_pure_call_made_once_for_two_cooks():
    @pg.node(params={"k": pg.Field(1, bounds=(0, 10))})
    def scaled(k):
        folded = ops.cpu.call(
            fn="function(a, b) counter = (counter or 0) + 1; return a * b end",
            args=[6, 7],
            returns=["Number"],
            pure=True,
        )
        return folded["values"][0] * k

    g = pg.Graph("pure")
    g.add("scaled", scaled)
    assert g.cook()["scaled"] == 42
    r = g.cook(params={"scaled.k": 2})
    assert r["scaled"] == 84
    assert any(kind == "folded" for kind, _ in r.report.node("scaled").events)
    assert g._lua_state().env.counter == 1  # Lua ran once for two cooks


def test_lua_error_names_node_and_op():
    @pg.node
    def bad():
        return ops.cpu.call(fn="function() error('boom') end", args=[])

    g = pg.Graph("err")
    g.add("bad", bad)
    with pytest.raises(
        pg.CookError, match=r"node 'bad' \(bad\) failed in op cpu.call: LuaError: .*boom"
    ):
        g.cook()
