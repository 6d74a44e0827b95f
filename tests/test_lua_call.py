"""ops.cpu.call and ops.cpu.read over Lua: values crossing, return checks, folding, digests."""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest
import warp as wp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import procgen_nb as pg
from procgen_nb.columns import Domain, Geometry, LiveCount, Record
from procgen_nb.errors import (
    BindingError,
    LuaCeilingError,
    LuaError,
    LuaReturnError,
    LuaSandboxError,
    ParamsError,
)
from procgen_nb.lua import BufferRef, CallResult, Curve, Handle, LuaState
from procgen_nb.ops import cpu
from procgen_nb.ops._op import CookScope, cook_scope

ADD = "function(a, b) return a + b end"


@pytest.fixture
def lua():
    return LuaState()


def scope_for(lua, node="n1", memo=None, time=0.0):
    return CookScope(node, {} if memo is None else memo, lambda: lua, time=time)


# -- fn ------------------------------------------------------------------------------------
def test_call_answers_values_in_order():
    out = cpu.call(
        fn="function(a, b) return a + b, a * b, tostring(a) end",
        args=[3, 4],
        returns=["Number", "Number", "String"],
    )
    assert isinstance(out, CallResult)
    assert out["values"] == [7, 12, "3"]


def test_fn_as_a_chunk_a_global_or_a_lua_function(lua):
    chunk = "local function twice(x) return 2 * x end\nreturn twice"
    assert lua.call(chunk, [21]) == [42]
    lua.execute("function place(n) local t = {} for i = 1, n do t[i] = i * 0.5 end return t end")
    assert lua.call("place", [3], returns=["List"]) == [[0.5, 1.0, 1.5]]
    f = lua.call("function() return function(x) return x + 1 end end", returns=["Function"])[0]
    with cook_scope(scope_for(lua)):
        assert cpu.call(fn=f, args=[1], returns=["Number"])["values"] == [2]


def test_fn_refusals(lua):
    with pytest.raises(
        BindingError, match=r"cpu.call fn: expected Lua source or a Lua function, got int 3"
    ):
        cpu.call(fn=3)
    with pytest.raises(
        BindingError,
        match=r"fn: expected Lua source giving a function, got source giving Number: '1 \+ 1'",
    ):
        lua.call("1 + 1")
    with pytest.raises(LuaError, match=r"fn in node 'bad': Lua source does not compile: .*bad:1:"):
        lua.call("function(a) return a +", node="bad")


def test_lua_errors_name_the_node_and_carry_the_traceback(lua):
    src = "function(t)\n  local function inner() error('no points') end\n  inner()\nend"
    with cook_scope(scope_for(lua, node="placer")), pytest.raises(LuaError) as e:
        cpu.call(fn=src, args=[{}])
    msg = str(e.value)
    assert msg.startswith("cpu.call in node 'placer': Lua error: placer:2: no points")
    assert "stack traceback:" in msg and "in local 'inner'" in msg
    assert not isinstance(e.value, LuaSandboxError)


def test_op_refuses_unknown_keywords_and_bad_params():
    with pytest.raises(
        BindingError, match=r"cpu.call: expected keyword arguments among .*got \['ceiling'\]"
    ):
        cpu.call(fn=ADD, ceiling=3)
    with pytest.raises(BindingError, match=r"cpu.call args: expected a list of values, got 5"):
        cpu.call(fn=ADD, args=5)
    with pytest.raises(
        BindingError, match=r"cpu.call returns\[2\]: expected one of Bool, .*Vec4, got 'Float'"
    ):
        cpu.call(fn=ADD, args=[1, 2], returns=["Number", "Float"])
    with pytest.raises(
        BindingError, match=r"cpu.call returns: expected a list of type names, got 'Number'"
    ):
        cpu.call(fn=ADD, args=[1, 2], returns="Number")
    with pytest.raises(
        ParamsError, match=r"cpu.call ceiling_ms: expected a finite number .*got 'fast'"
    ):
        cpu.call(fn=ADD, args=[1, 2], ceiling_ms="fast")
    with pytest.raises(BindingError, match=r"cpu.call pure: expected True or False, got 1"):
        cpu.call(fn=ADD, args=[1, 2], pure=1)


def test_ceiling_through_the_op_names_the_node(lua):
    with cook_scope(scope_for(lua, node="spin")), pytest.raises(LuaCeilingError) as e:
        cpu.call(fn="function() while true do end end", ceiling_ms=50)
    assert "cpu.call in node 'spin': expected at most ceiling_ms=50 ms of CPU time" in str(e.value)


# -- returns ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("src", "returns", "message"),
    [
        ("function() return 'x' end", ["Number"], r"result 1: expected Number, got String \('x'\)"),
        (
            "function() return 1, 2 end",
            ["Number", "String"],
            r"result 2: expected String, got Number \(2\)",
        ),
        ("function() return true end", ["Number"], r"result 1: expected Number, got Bool \(True\)"),
        ("function() return 1 end", ["Bool"], r"result 1: expected Bool, got Number \(1\)"),
        (
            "function() return {1, 2} end",
            ["Record", "Function"],
            r"expected 2 result\(s\) \(Record, Function\), got 1 \(List\)",
        ),
        (
            "function() return 1, 2, 3 end",
            ["Number"],
            r"expected 1 result\(s\) \(Number\), got 3 \(Number, Number, Number\)",
        ),
        ("function() end", ["Number"], r"expected 1 result\(s\) \(Number\), got 0 \(nothing\)"),
        ("function() return nil end", ["Number"], r"result 1: expected Number, got Nil"),
        (
            "function() return {a = 1} end",
            ["List"],
            r"result 1: expected List, got Record \(a table with keys other than 1..n\)",
        ),
        ("function() return {1, 2} end", ["Function"], r"result 1: expected Function, got List"),
        ("function() return {1, 2} end", ["Column"], r"result 1: expected Column, got List"),
        (
            "function() return {buffer = 999, type = 'Float'} end",
            ["Column"],
            r"result 1: expected Column, got BufferRef \(buffer 999 is not a column this node was given",
        ),
        ("function() return {} end", ["Handle"], r"result 1: expected Handle, got List"),
        (
            "function() return {x = 1, y = 2} end",
            ["Vec3"],
            r"result 1: expected Vec3 \(a table \{x, y, z\} or 3 numbers\), got a table \(keys \['x', 'y'\]\)",
        ),
        ("function() return {1, 2, 'z'} end", ["Vec3"], r"result 1: expected Vec3 .*got a table"),
        (
            "function() return {point = 3} end",
            ["Geometry"],
            r"result 1: expected Geometry \(a table of classes of BufferRefs\), got a table \(class 'point' is a Number\)",
        ),
        (
            "function() return {point = {P = {1, 2}}} end",
            ["Geometry"],
            r"class 'point' entry 'P' is a List",
        ),
        (
            "function() return coroutine.create(function() end) end",
            ["Function"],
            r"result 1: expected Function, got Thread",
        ),
        (
            "function() return '\\255' end",
            ["String"],
            r"expected strings of UTF-8 text, got bytes that are not",
        ),
        ("function() return 1 end", [], r"expected 0 result\(s\) \(none\), got 1 \(Number\)"),
    ],
)
def test_return_refusals_name_position_expected_and_got(lua, src, returns, message):
    with cook_scope(scope_for(lua, node="ret")), pytest.raises(LuaReturnError, match=message) as e:
        cpu.call(fn=src, returns=returns)
    assert str(e.value).startswith("cpu.call in node 'ret': ")
    assert isinstance(e.value, TypeError)


def test_returns_of_each_type(lua):
    src = """function()
      return 1.5, 'a', false, function() end, {1, {2}}, {a = 1, b = {c = 'd'}},
             {x = 1, y = 2}, {1, 2, 3}, {r = 1, g = 0, b = 0.5, a = 1}, {1, 2, 3, 4}
    end"""
    vals = lua.call(
        src,
        returns=[
            "Number",
            "String",
            "Bool",
            "Function",
            "List",
            "Record",
            "Vec2",
            "Vec3",
            "Color",
            "Vec4",
        ],
    )
    assert vals[:3] == [1.5, "a", False]
    assert lua.call(vals[3]) == []
    assert vals[4] == [1, [2]]
    assert vals[5] == Record(a=1, b=Record(c="d")) and vals[5].b.c == "d"
    assert vals[6:] == [(1.0, 2.0), (1.0, 2.0, 3.0), (1.0, 0.0, 0.5, 1.0), (1.0, 2.0, 3.0, 4.0)]


def test_returns_none_takes_any_results(lua):
    assert lua.call("function() return 1, nil, 'x', {} end") == [1, None, "x", []]


# -- value conversion (property tests) -------------------------------------------------------
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=True)
    | st.text(max_size=20)
)
keys = st.text(min_size=1, max_size=8)
values = st.recursive(
    scalars.filter(lambda v: v is not None),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(keys, inner, min_size=1, max_size=5)
    ),
    max_leaves=20,
)

_STATE = LuaState()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_values_round_trip_through_lua(v):
    [out] = _STATE.call("function(x) return x end", [v])
    assert out == v


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), max_size=30))
def test_lua_sees_a_list_as_a_sequence_with_its_length_and_sum(xs):
    n, s = _STATE.call(
        "function(t) local s = 0 for i = 1, #t do s = s + t[i] end return #t, s end",
        [xs],
        returns=["Number", "Number"],
    )
    assert n == len(xs)
    assert math.isclose(
        s, math.fsum(xs), rel_tol=1e-9, abs_tol=1e-9 * max(1.0, *map(abs, xs or [0]))
    )


TYPE_OF = {
    "Number": st.integers(-100, 100) | st.floats(-1e6, 1e6),
    "String": st.text(max_size=5),
    "Bool": st.booleans(),
    "List": st.lists(st.integers(0, 9), max_size=4),
}


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(sorted(TYPE_OF)), min_size=1, max_size=4).flatmap(
        lambda names: st.tuples(
            st.just(names),
            st.tuples(*(TYPE_OF[n] for n in names)),
            st.lists(st.sampled_from(sorted(TYPE_OF)), min_size=len(names), max_size=len(names)),
        )
    )
)
def test_return_checker_accepts_exactly_matching_types(case):
    names, vals, declared = case
    src = "function(...) return ... end"
    # an empty list is a table Lua cannot tell from a Record, and is a List either way
    mismatch = [i for i, (a, b) in enumerate(zip(names, declared)) if a != b]
    if not mismatch:
        assert _STATE.call(src, list(vals), returns=declared) == list(vals)
        return
    first = mismatch[0]
    with pytest.raises(
        LuaReturnError, match=rf"result {first + 1}: expected {declared[first]}, got {names[first]}"
    ):
        _STATE.call(src, list(vals), returns=declared)


# -- columns and geometry -------------------------------------------------------------------
def _col(device, values, typ="Float"):
    return pg.columns.column_from_numpy(values, typ, device)


def test_a_column_reaches_lua_as_a_bufferref_without_moving(device, lua):
    col = _col(device, np.arange(12, dtype=np.float32), "Vec3")
    with pg.collect() as c:
        ref = lua.call(
            "function(b) return b.buffer, b.type, b.count, b.lanes, b.element end", [col]
        )
        back = lua.call("function(b) return b, b end", [col], returns=["Column", "BufferRef"])
    assert (c.readbacks, c.uploads, c.copies) == (0, 0, 0)
    assert ref[1:] == ["Vec3", 4, 3, "f32"] and isinstance(ref[0], str)
    assert back[0] is col
    assert back[1] == BufferRef(ref[0], "Vec3", 4, 3, "f32", col) and back[1].column is col


def test_a_live_column_states_its_capacity(device, lua):
    words = wp.array([2], dtype=wp.uint32, device=device)
    col = _col(device, [1, 2, 3, 4], "Int").with_live(LiveCount(words, 4))
    assert lua.call("function(b) return b.count, b.live, b.capacity, b.element end", [col]) == [
        4,
        True,
        4,
        "i32",
    ]


def test_a_geometry_is_read_to_the_cpu(device, lua):
    pts = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.float32)
    geo = Geometry(point={"P": _col(device, pts, "Vec3"), "w": _col(device, [0.5, 0.25])})
    src = "function(g) return g.point.count, g.point.P[2].y, g.point.w[1], #g.point.P end"
    with pg.collect() as c:
        vals = lua.call(src, [geo])
    assert vals == [2, 4.0, 0.5, 2]
    assert c.readbacks == 2


def test_a_geometry_with_a_live_count_reads_its_live_elements(device, lua):
    words = wp.array([2], dtype=wp.uint32, device=device)
    live = LiveCount(words, 4)
    geo = Geometry(point=Domain({"w": _col(device, [1, 2, 3, 4]).with_live(live)}, count=live))
    with pg.collect() as c:
        assert lua.call("function(g) return g.point.count, #g.point.w end", [geo]) == [2, 2]
    assert c.readbacks == 2


def test_a_geometry_on_the_device_stands_as_it_is(device, lua):
    pts = _col(device, np.zeros((3, 2), np.float32), "Vec2")
    geo = Geometry(point={"P": pts})
    with pg.collect() as c:
        vals = lua.call(
            "function(g) return g.point.count, g.point.P.type, g end",
            [geo],
            returns=["Number", "String", "Geometry"],
            device=True,
        )
        with cook_scope(scope_for(lua)):
            op_vals = cpu.call(
                fn="function(g) return g.point.P end", args=[geo], device=True, returns=["Column"]
            )["values"]
    assert c.readbacks == 0
    assert vals[:2] == [3, "Vec2"]
    assert isinstance(vals[2], Geometry) and vals[2].point["P"] is pts
    assert op_vals == [pts]


# -- curves ------------------------------------------------------------------------------------
def test_curve_at_interpolates_linearly_and_clamps():
    c = Curve([(1.0, 10.0), (0.0, 0.0), (3.0, 30.0)])
    assert [c.at(t) for t in (-1, 0, 0.5, 1, 2, 3, 9)] == [0, 0, 5, 10, 20, 30, 30]
    v = Curve([(0, (0, 0)), (2, (2, 4))])
    assert v.at(1) == (1.0, 2.0)


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ([], r"curve keys: expected at least one \(t, v\) pair, got none"),
        ([(0, 1), (0, 2)], r"curve keys: expected distinct times, got two at t=0.0"),
        ([("a", 1)], r"curve keys\[0\] time: expected a number, got 'a'"),
        ([(0, "x")], r"curve keys\[0\] value: expected a number or a sequence of numbers, got 'x'"),
        ([(0, 1), (1, (1, 2))], r"curve keys\[1\] value: expected a number, got \(1.0, 2.0\)"),
        ([3], r"curve keys\[0\]: expected a \(t, v\) pair, got 3"),
    ],
)
def test_curve_refusals(keys, message):
    with pytest.raises(BindingError, match=message):
        Curve(keys)


def test_curves_off_gives_the_value_at_the_cooks_time(lua):
    c = Curve([(0, 0), (2, 20)])
    with cook_scope(scope_for(lua, time=0.5)):
        assert cpu.call(fn="function(v) return v end", args=[c], returns=["Number"])["values"] == [
            5.0
        ]
    assert cpu.call(fn="function(v) return v end", args=[c], returns=["Number"])["values"] == [0.0]


def test_curves_on_hands_the_curve(lua):
    c = Curve([(0, 0), (2, 20)])
    src = "function(c) return c:at(1.5), c.at(0.5), #c.keys, c.keys[2][2] end"
    with cook_scope(scope_for(lua, time=0.5)):
        vals = cpu.call(fn=src, args=[c], curves=True)["values"]
    assert vals == [15.0, 5.0, 2, 20.0]
    v = Curve([(0, (0, 0)), (1, (2, 4))])
    assert lua.call("function(c) local p = c:at(0.5) return p[1], p[2] end", [v], curves=True) == [
        1.0,
        2.0,
    ]


# -- pure ---------------------------------------------------------------------------------------
COUNTED = "function(x) calls = (calls or 0) + 1 return x * 2, {x} end"


def test_pure_call_is_made_once_for_two_cooks(lua):
    memo = {}
    outs = []
    events = []
    for _ in range(2):
        scope = scope_for(lua, memo=memo)
        with cook_scope(scope):
            outs.append(cpu.call(fn=COUNTED, args=[21], returns=["Number", "List"], pure=True))
        events.append(scope.events)
    assert lua.env.calls == 1
    assert outs[0]["values"] == outs[1]["values"] == [42, [21]]
    assert events[0][0][0] == "folded" and "made at planning" in events[0][0][1]
    assert events[1][0][0] == "folded" and "reused" in events[1][0][1]


def test_pure_call_with_other_args_or_no_scope_calls_again(lua):
    memo = {}
    with cook_scope(scope_for(lua, memo=memo)):
        cpu.call(fn=COUNTED, args=[1], pure=True)
        cpu.call(fn=COUNTED, args=[2], pure=True)
        cpu.call(fn=COUNTED, args=[2], pure=True)
    assert lua.env.calls == 2


def test_pure_call_over_a_column_is_not_folded(device, lua):
    col = _col(device, [1, 2])
    memo = {}
    for _ in range(2):
        scope = scope_for(lua, memo=memo)
        with cook_scope(scope):
            cpu.call(
                fn="function(b) calls = (calls or 0) + 1 return b.count end", args=[col], pure=True
            )
        assert scope.events[0][0] == "lua"
    assert lua.env.calls == 2


def test_impure_call_reports_lua(lua):
    scope = scope_for(lua)
    with cook_scope(scope):
        cpu.call(fn=ADD, args=[1, 2])
    assert [k for k, _ in scope.events] == ["lua"]


# -- handles ------------------------------------------------------------------------------------
MAKE = (
    "function(tag) return handle({tag = tag}, function(v) released[#released + 1] = v.tag end) end"
)


def test_a_lua_handle_is_released_with_the_result(lua):
    lua.execute("released = {}")
    with cook_scope(scope_for(lua)):
        out = cpu.call(fn=MAKE, args=["a"], returns=["Handle"])
    h = out["values"][0]
    assert isinstance(h, Handle) and not h.released and h.origin == "lua"
    assert h.lua_table is not None
    # handed back, Lua sees its own table (its own id), not a Python handle's wrapper
    assert lua.call("function(h) return tostring(h) end", [h]) == [f"Handle({h.name[3:]})"]
    assert out.handles == [h]
    out.release()
    assert h.released and h.value is None
    out.release()
    h.release()
    assert lua.call("function() return released end") == [["a"]]


def test_a_lua_handle_is_released_when_dropped(lua):
    lua.execute("released = {}")
    lua.call(MAKE, ["b"], returns=["Handle"])
    gc.collect()
    assert lua.call("function() return released end") == [["b"]]


def test_a_handle_passed_back_to_lua_is_the_same_handle(lua):
    lua.execute("released = {}")
    [h] = lua.call(MAKE, ["c"], returns=["Handle"])
    [same] = lua.call("function(h) return h end", [h], returns=["Handle"])
    assert same is h
    h.release()
    with pytest.raises(BindingError, match=r"args\[0\]: expected a Handle not yet released"):
        lua.call("function(h) return h end", [h])


def test_a_python_handle_comes_back_and_stays_its_owners(lua):
    freed = []
    h = Handle("gpu-resource", lambda: freed.append(1), name="res")
    assert h.origin == "py" and repr(h) == "Handle(res, py)" and h.lua_table is None
    with cook_scope(scope_for(lua)):
        out = cpu.call(fn="function(h) return h end", args=[h], returns=["Handle"])
    assert out["values"] == [h] and out["values"][0].value == "gpu-resource"
    out.release()
    assert freed == [] and not h.released
    with h:
        pass
    assert freed == [1] and h.released
    assert repr(h) == "Handle(res, released)"


def test_handle_refusals(lua):
    with pytest.raises(LuaError, match="handle: expected a release function or nil, got number"):
        lua.call("function() return handle(1, 2) end")
    with pytest.raises(BindingError, match="handle release: expected a callable or None, got 3"):
        Handle(1, 3)


# -- cpu.read -----------------------------------------------------------------------------------
def test_read_records_its_digest(lua):
    lua.execute("world = {n = 3}")
    scope = scope_for(lua, node="reader")
    with cook_scope(scope):
        out = cpu.read(
            fn="function(k) return world.n * k end",
            args=[2],
            digest="function(k) return {world.n, k, name = 'w'} end",
            returns=["Number"],
        )
    assert out["values"] == [6]
    assert len(scope.digests) == 1
    first, probe = scope.digests[0]
    hash(first)
    assert probe() == first  # the probe asks the digest again with the same values
    lua.execute("world.n = 4")
    assert probe() != first
    scope2 = scope_for(lua, node="reader")
    with cook_scope(scope2):
        cpu.read(
            fn="function(k) return world.n * k end",
            args=[2],
            digest="function(k) return {world.n, k, name = 'w'} end",
        )
    assert scope2.digests[0][0] != first and scope2.digests[0][0] == probe()
    scope3 = scope_for(lua, node="reader")
    with cook_scope(scope3):
        cpu.read(
            fn="function(k) return world.n * k end",
            args=[2],
            digest="function(k) return {world.n, k, name = 'w'} end",
        )
    assert [d[0] for d in scope3.digests] == [d[0] for d in scope2.digests]


def test_read_refusals(lua):
    for flag in ("curves", "pure"):
        with pytest.raises(
            BindingError,
            match=rf"cpu.read {flag}: expected no {flag} \(cpu.read takes no curves or pure",
        ):
            cpu.read(fn=ADD, args=[1, 2], digest="function() return 1 end", **{flag: True})
    with pytest.raises(
        BindingError,
        match=r"cpu.read digest: expected Lua source or a Lua function, got NoneType None",
    ):
        cpu.read(fn=ADD, args=[1, 2])
    with cook_scope(scope_for(lua, node="r")):
        with pytest.raises(
            LuaReturnError,
            match=r"cpu.read digest in node 'r': expected one Number, String, Bool or table, got int, int",
        ):
            cpu.read(fn=ADD, args=[1, 2], digest="function() return 1, 2 end")
        with pytest.raises(
            LuaReturnError, match=r"cpu.read digest in node 'r': expected one .*got NoneType"
        ):
            cpu.read(fn=ADD, args=[1, 2], digest="function() return nil end")
        with pytest.raises(
            LuaReturnError,
            match=r"cpu.read digest in node 'r': expected one .*got .*LuaFunction|got .*function",
        ):
            cpu.read(fn=ADD, args=[1, 2], digest="function() return print end")
        with pytest.raises(
            LuaReturnError, match=r"cpu.read in node 'r': result 1: expected String, got Number"
        ):
            cpu.read(fn=ADD, args=[1, 2], digest="function() return 0 end", returns=["String"])


def test_read_outside_a_cook_uses_the_module_state():
    assert cpu.read(fn=ADD, args=[1, 2], digest="function(a, b) return a end")["values"] == [3]
