"""Exact dynamic values: a cook never hands out a value computed from a dynamic input at its
old value.

The oracle for every test here is the same graph cooked fresh (``record=False``, a new
graph) once at each value: every output must be equal to the bit.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import procgen_nb as pg
from procgen_nb import asset, dynamic, ops
from procgen_nb.lua import Curve

FOLDER = Path(__file__).parent / "assets" / "kernels"


@pytest.fixture(scope="module", autouse=True)
def _kernels():
    asset.add_path("tdx", FOLDER)
    yield
    asset.remove_path("tdx")


def _uniforms_kernel():
    return asset.resolve("tdx/tk_uniforms", "computeShader")


def _write(a=0.0, off=(0.0, 0.0), flag=0, **extra):
    """tk_uniforms writes [a, off_x, off_y, time, frame, count, flag, dt] to dst."""
    return ops.device.kernel(
        kernel=_uniforms_kernel(),
        domain=1,
        uniforms={"a": a, "off": off, "flag": flag, "dt": 0.0, **extra},
    )["columns"]["dst"]


def _dst(col) -> list[float]:
    return col.data.numpy().tolist()


K = pg.Field(1.0, bounds=(-100.0, 100.0), dynamic=True)
N = pg.Field(5, bounds=(0, 1000), dynamic=True)


# -- the four cases of the issue, each as a user wrote it ---------------------------------


def test_pure_call_of_a_dynamic_field_used_as_a_uniform():
    @pg.node(params={"k": K})
    def doubled(k):
        two_k = ops.cpu.call(fn="function(k) return k * 2 end", args=[k], pure=True)["values"][0]
        return _write(a=two_k)

    g = pg.Graph("case1")
    g.add("doubled", doubled)
    got = [_dst(g.cook(params={"doubled.k": k})["doubled"])[0] for k in (1.0, 3.0, 5.0)]
    assert got == [2.0, 6.0, 10.0]
    assert g.last.report.replayed  # the call is made again at replay, not a new plan


def test_live_bound_of_an_expression_beside_a_direct_uniform():
    @pg.node(params={"n": N})
    def counted(n):
        lc = ops.device.bound(value=n + 1, live=True)
        return {"dst": _write(a=n), "live": lc}

    g = pg.Graph("case2")
    g.add("counted", counted)
    live = []
    for n in (5, 6, 2):
        r = g.cook(params={"counted.n": n})
        live.append(int(r["counted"]["live"].words.numpy()[0]))
        assert _dst(r["counted"]["dst"])[0] == float(n)
    assert live == [6, 7, 3]
    assert g.last.report.replayed


def test_uniform_expression_of_time_beside_a_launch_that_takes_time():
    @pg.node
    def clocked(time):
        return {"direct": _write(a=time), "derived": _write(a=time * 2 + 1)}

    g = pg.Graph("case3")
    g.add("clocked", clocked)
    got = []
    for t in (0.0, 1.0, 2.0):
        r = g.cook(time=t)
        got.append(_dst(r["clocked"]["derived"])[0])
        assert _dst(r["clocked"]["direct"])[0] == t
    assert got == [1.0, 3.0, 5.0]
    assert g.last.report.replayed


def test_curve_argument_in_a_node_that_does_not_declare_time():
    @pg.node
    def curved():
        got = ops.cpu.call(fn="function(v) return v end", args=[Curve([(0, 0), (1, 10)])])
        return got["values"][0]

    g = pg.Graph("case4")
    g.add("curved", curved)
    assert [float(g.cook(time=t)["curved"]) for t in (0.0, 0.5, 1.0)] == [0.0, 5.0, 10.0]


def test_curve_argument_of_a_pure_call_replays_with_the_new_time():
    @pg.node
    def curved():
        v = ops.cpu.call(
            fn="function(v) return v * 3 end", args=[Curve([(0, 0), (1, 10)])], pure=True
        )["values"][0]
        return _write(a=v)

    g = pg.Graph("case4p")
    g.add("curved", curved)
    got = [_dst(g.cook(time=t)["curved"])[0] for t in (0.0, 0.5, 1.0, 0.5)]
    assert got == [0.0, 15.0, 30.0, 15.0]
    assert g.last.report.replayed


# -- the rule for uses a recording cannot replay ------------------------------------------


def test_python_conversion_marks_the_node_and_it_plans_again():
    calls = []

    @pg.node(params={"k": K})
    def branchy(k):
        calls.append(1)
        return _write(a=1.0 if k > 2 else -1.0)  # bool() of a comparison: read in Python

    g = pg.Graph("branchy")
    g.add("branchy", branchy)
    got = [_dst(g.cook(params={"branchy.k": k})["branchy"])[0] for k in (1.0, 3.0, 2.5, 0.0)]
    assert got == [-1.0, 1.0, 1.0, -1.0] and len(calls) == 4


def test_unused_dynamic_value_does_not_replan_or_launch():
    calls = []

    @pg.node(params={"k": K, "n": N})
    def partial(k, n):
        calls.append(1)
        return _write(a=k)

    g = pg.Graph("partial")
    g.add("partial", partial)
    g.cook(params={"partial.k": 1.0, "partial.n": 1})
    r = g.cook(params={"partial.n": 9})  # n reaches nothing the node made
    assert r.report.reused == ["partial"] and r.report.totals.launches == 0
    r = g.cook(params={"partial.k": 4.0})
    assert r.report.replayed and _dst(r["partial"])[0] == 4.0 and len(calls) == 1


def test_constant_array_changed_in_place_is_seen_by_the_next_cook():
    @pg.node
    def summed(values):
        return ops.transfer.upload(values={"v": values})["columns"]["v"]

    arr = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    listed = [1.0, 2.0]
    g = pg.Graph("inplace")
    g.add("a", summed, values=arr)
    g.add("b", summed, values=listed)
    g.cook()
    arr[1] = 20.0
    listed.append(5.0)
    r = g.cook()
    assert r["a"].data.numpy().tolist() == [1.0, 20.0, 3.0]
    assert r["b"].data.numpy().tolist() == [1.0, 2.0, 5.0]
    assert r.report.cooked == ["a", "b"]
    assert g.cook().report.reused == ["a", "b"]  # the same content is the same value


def test_digest_that_starts_returning_a_function_is_a_cook_error_keeping_the_last_result():
    lua = {"mode": "number"}

    @pg.node
    def reading():
        return ops.cpu.read(
            fn="function() return 1 end",
            digest="function() if state_mode == 'number' then return 1 end "
            "return function() end end",
        )["values"][0]

    g = pg.Graph("digest")
    g.add("reading", reading)
    state = g._lua_state()
    state.env["state_mode"] = lua["mode"]
    good = g.cook()
    state.env["state_mode"] = "function"
    for _ in range(2):
        with pytest.raises(pg.CookError) as info:
            g.cook()
        msg = str(info.value)
        assert "'reading'" in msg and "cpu.read" in msg and "function" in msg
        assert info.value.node == "reading" and info.value.op == "cpu.read"
        assert g.last is good
    state.env["state_mode"] = "number"
    assert g.cook()["reading"] == 1


# -- the dynamic number itself, against Python's arithmetic --------------------------------

_OPS = [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("truediv", lambda a, b: a / b),
    ("floordiv", lambda a, b: a // b),
    ("mod", lambda a, b: a % b),
    ("lt", lambda a, b: (a < b) * 1),
    ("ge", lambda a, b: (a >= b) * 1),
    ("min", dynamic.minimum),
    ("max", dynamic.maximum),
]


@st.composite
def _exprs(draw, depth=0):
    """(builder over leaves, same builder over plain numbers)."""
    if depth >= 3 or draw(st.booleans()):
        leaf = draw(st.sampled_from(["x", "y", "c"]))
        if leaf == "c":
            c = draw(st.sampled_from([0.5, 2, 3.0, -1]))
            return lambda env: c
        return lambda env: env[leaf]
    name, fn = draw(st.sampled_from(_OPS))
    left, right = draw(_exprs(depth + 1)), draw(_exprs(depth + 1))
    unary = draw(st.sampled_from([None, abs, math.floor, round, dynamic.sqrt]))

    def build(env):
        out = fn(left(env), right(env))
        if unary is dynamic.sqrt:
            out = unary(abs(out))
        elif unary is not None:
            out = unary(out)
        return out

    return build


@settings(max_examples=200, deadline=None)
@given(
    _exprs(),
    st.lists(st.tuples(st.integers(-5, 5), st.sampled_from([0.25, 1.5, -2.0, 3.0])), min_size=1),
)
def test_expressions_evaluate_like_python_at_every_value(build, values):
    env = dynamic.Env({"x": values[0][0], "y": values[0][1]})
    dx, dy = dynamic.dynamic(values[0][0], "x", env), dynamic.dynamic(values[0][1], "y", env)
    try:
        expr = build({"x": dx, "y": dy})
    except (ZeroDivisionError, ValueError, OverflowError):
        return
    for x, y in values:
        env.values.update(x=x, y=y)
        try:
            want = build({"x": x, "y": y})
        except (ZeroDivisionError, ValueError, OverflowError):
            continue
        got = dynamic.peek(expr)
        assert type(got) is type(want) and (got == want or (got != got and want != want))


def test_conversions_mark_host_and_arithmetic_does_not():
    env = dynamic.Env()
    k = dynamic.dynamic(2.0, "k", env)
    with dynamic.tracking() as tr:
        e = math.floor(abs(k * 3 - 10) // 2) + round(k, 1)
        assert tr.host == set()
        float(e)
        assert tr.host == {"k"}
    with dynamic.tracking() as tr:
        _ = [1, 2, 3, 4][dynamic.dynamic(1, "i", env)]
        assert tr.host == {"i"}
    with dynamic.tracking() as tr:
        f"{k:.1f}"  # noqa: B018 - formatting reads the value
        assert tr.host == {"k"}


# -- the oracle of random graphs lives in tests/test_oracle.py (its kinds: oracle_nodes.py) --


def test_a_replayed_int_uniform_out_of_its_word_plans_again_and_is_refused():
    """A dynamic int a replay would write into an i32 param past its range is never wrapped:
    the cook plans again, and the kernel's own check refuses it naming the uniform."""

    @pg.node(params={"n": pg.Field(1, bounds=(0, 2**40), dynamic=True)})
    def flagged(n):
        return _write(flag=n * 2)

    g = pg.Graph("wide")
    g.add("flagged", flagged)
    assert _dst(g.cook(params={"flagged.n": 3})["flagged"])[6] == 6.0
    assert g.cook(params={"flagged.n": 4}).report.replayed
    good = g.last
    with pytest.raises(pg.CookError, match=r"uniform 'flag': expected a whole Number in"):
        g.cook(params={"flagged.n": 2**31})
    assert g.last is good and _dst(g.last["flagged"])[6] == 8.0


def test_env_is_the_env_an_expression_reads():
    env = dynamic.Env({"k": 2.0})
    k = dynamic.dynamic(0.0, "k", env)
    expr = k * 3 + 1
    assert k.env is env and expr.env is env and (-expr).env is env
    assert float(expr) == 7.0
    env.values["k"] = 5.0  # the shared env moves: the expression reads the new value
    assert float(expr) == 16.0
    other = dynamic.dynamic(4, "n", dynamic.Env({"n": 4}))
    both = expr + other
    assert both.env is not env and both.env.values == {"k": 5.0, "n": 4}
    assert float(both) == 20.0
