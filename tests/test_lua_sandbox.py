"""The Lua sandbox: what a script cannot reach, and the CPU-time ceiling that stops it."""

from __future__ import annotations

import re
import time

import pytest

from procgen_nb.errors import (
    BindingError,
    LuaCeilingError,
    LuaError,
    LuaSandboxError,
    ParamsError,
)
from procgen_nb.lua import Handle, LuaState


@pytest.fixture(scope="module")
def lua():
    return LuaState()


@pytest.mark.parametrize(
    "name",
    ["os", "io", "require", "dofile", "loadfile", "loadstring", "debug", "package", "python"],
)
def test_forbidden_globals_are_refused_by_name(lua, name):
    with pytest.raises(
        LuaSandboxError, match=rf"'{name}' is not available in the procgen_nb Lua sandbox"
    ):
        lua.call(f"function() return {name} end", node="probe")


def test_refusal_names_the_node_and_keeps_a_traceback(lua):
    with pytest.raises(LuaSandboxError) as e:
        lua.call("function() return os.getenv('HOME') end", node="probe")
    msg = str(e.value)
    assert msg.startswith("cpu.call in node 'probe': Lua error:")
    assert "stack traceback" in msg
    assert isinstance(e.value, LuaError)


def test_os_and_io_calls_do_not_run(lua):
    with pytest.raises(LuaSandboxError):
        lua.call("function() return os.execute('echo pwned') end")
    with pytest.raises(LuaSandboxError):
        lua.call("function() return io.open('/etc/passwd'):read('a') end")
    with pytest.raises(LuaSandboxError):
        lua.call("function() return require('os') end")


def test_bytecode_is_refused(lua):
    with pytest.raises(LuaSandboxError, match="string.dump: bytecode is not available"):
        lua.call("function() return string.dump(function() return 1 end) end")
    with pytest.raises(LuaSandboxError, match="string.dump: bytecode is not available"):
        lua.call("function() return ('x').dump(print) end")
    with pytest.raises(LuaSandboxError, match="load: expected Lua source text, got a precompiled"):
        lua.call("function() return load('\\27Lua\\84\\0') end")
    with pytest.raises(LuaSandboxError, match='load: expected mode "t" .*got b'):
        lua.call("function() return load('return 1', 'x', 'b') end")


def test_text_load_runs_inside_the_sandbox(lua):
    assert lua.call("function() return load('return 1 + 1')() end") == [2]
    with pytest.raises(LuaSandboxError, match="'os' is not available"):
        lua.call("function() return load('return os')() end")


def test_collectgarbage_is_limited(lua):
    assert lua.call("function() return collectgarbage('count') > 0 end") == [True]
    with pytest.raises(
        LuaSandboxError,
        match="collectgarbage: expected one of collect, count, isrunning, step, got stop",
    ):
        lua.call("function() collectgarbage('stop') end")


def test_gc_finalizers_are_refused(lua):
    with pytest.raises(LuaSandboxError, match="setmetatable: __gc finalizers are not available"):
        lua.call("function() return setmetatable({}, {__gc = function() end}) end")
    assert lua.call(
        "function() return getmetatable(setmetatable({}, {__index = {a = 1}})).__index.a end"
    ) == [1]


def test_metatables_of_the_sandbox_are_hidden(lua):
    assert lua.call("function() return getmetatable(''), getmetatable(_G) end") == [False, False]
    with pytest.raises(LuaError, match="cannot change a protected metatable"):
        lua.call("function() setmetatable(_G, nil) end")


def test_python_objects_cannot_be_passed_or_reached(lua):
    with pytest.raises(
        BindingError,
        match=r"args\[0\]: expected a Number, String, Bool, List, Record, Column, "
        r"Geometry, Curve, Handle or Lua value, got object",
    ):
        lua.call("function(x) return x end", [object()])
    with pytest.raises(
        BindingError, match=r"args\[0\]\['f'\]: expected .* got builtin_function_or_method"
    ):
        lua.call("function(x) return x end", [{"f": print}])
    # print is a Lua function here, not a Python object with attributes
    assert lua.call("function() return type(print) end") == ["function"]
    with pytest.raises(LuaError):
        lua.call("function() return print.__globals__ end")


def test_a_python_handle_is_opaque_in_lua(lua):
    secret = {"token": "s3cret"}
    h = Handle(secret)
    assert lua.call("function(h) return h.token, h.value, getmetatable(h) end", [h]) == [
        None,
        None,
        "Handle",
    ]
    with pytest.raises(LuaSandboxError, match="a Handle is opaque and cannot be written"):
        lua.call("function(h) h.x = 1 end", [h])


def test_memory_is_bounded():
    small = LuaState(max_memory=16 << 20)
    with pytest.raises(LuaError, match="not enough memory"):
        small.call("function() return string.rep('x', 64 * 1024 * 1024) end")
    assert small.call("function() return 1 end") == [1]


def test_states_do_not_share_globals():
    a, b = LuaState(), LuaState()
    a.execute("shared = 42")
    assert a.call("function() return shared end") == [42]
    assert b.call("function() return shared end") == [None]


RUNAWAYS = {
    "loop": "function() while true do end end",
    "coroutine.create": (
        "function() local co = coroutine.create(function() while true do end end) "
        "return coroutine.resume(co) end"
    ),
    "coroutine.wrap": "function() return coroutine.wrap(function() while true do end end)() end",
    "pcall swallowing": "function() while true do pcall(function() while true do end end) end end",
    "xpcall handler": (
        "function() while true do xpcall(function() while true do end end, "
        "function() while true do end end) end end"
    ),
    "new coroutines": (
        "function() while true do coroutine.resume(coroutine.create(function() "
        "while true do end end)) end end"
    ),
    "__close in a coroutine": (
        "function() local co = coroutine.create(function() "
        "local x <close> = setmetatable({}, {__close = function() while true do end end}) "
        "while true do end end) "
        "return coroutine.resume(co), coroutine.close(co) end"
    ),
    "__close in coroutine.wrap": (
        "function() return coroutine.wrap(function() "
        "local x <close> = setmetatable({}, {__close = function() while true do end end}) "
        "while true do end end)() end"
    ),
    "__close": (
        "function() "
        "local x <close> = setmetatable({}, {__close = function() while true do end end}) "
        "while true do end end"
    ),
    "nested coroutine": (
        "function() return coroutine.wrap(function() return coroutine.wrap(function() "
        "while true do end end)() end)() end"
    ),
}


@pytest.mark.parametrize("kind", sorted(RUNAWAYS))
def test_runaway_is_stopped_near_its_ceiling(lua, kind):
    start_cpu, start_wall = time.thread_time(), time.perf_counter()
    with pytest.raises(LuaCeilingError) as e:
        lua.call(RUNAWAYS[kind], ceiling_ms=200, node="runaway")
    cpu = time.thread_time() - start_cpu
    wall = time.perf_counter() - start_wall
    assert 0.2 <= cpu < 0.4, cpu
    assert wall < 2.0, wall
    msg = str(e.value)
    assert msg.startswith("cpu.call in node 'runaway': expected at most ceiling_ms=200 ms")
    assert "the call was stopped" in msg
    assert isinstance(e.value, TimeoutError)
    # the state stays usable and at full speed afterwards
    assert lua.call("function() local s = 0 for i = 1, 1000 do s = s + i end return s end") == [
        500500
    ]


def test_a_coroutine_made_before_the_call_is_still_charged(lua):
    lua.execute("parked = coroutine.create(function() while true do end end)")
    with pytest.raises(LuaCeilingError):
        lua.call("function() return coroutine.resume(parked) end", ceiling_ms=100)


def test_ceiling_zero_or_none_is_5000_ms(lua):
    assert lua.call("function() return 1 end", ceiling_ms=0) == [1]
    assert lua.call("function() return 1 end", ceiling_ms=None) == [1]


def test_a_call_under_its_ceiling_runs_to_the_end(lua):
    src = "function(n) local s = 0 for i = 1, n do s = s + i end return s end"
    assert lua.call(src, [200000], ceiling_ms=2000) == [200000 * 200001 // 2]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (-1, "-1"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
        (1e12, "1000000000000.0"),
        (True, "True"),
        ("fast", "'fast'"),
    ],
)
def test_ceiling_refuses_a_bad_value(lua, value, shown):
    # NaN and infinities would disable the ceiling; the refusal names the value
    with pytest.raises(
        ParamsError,
        match=rf"ceiling_ms: expected a finite number of milliseconds from 0 to 86400000 "
        rf"\(0 or None for 5000\), got {re.escape(shown)}$",
    ):
        lua.call("function() while true do end end", ceiling_ms=value)


@pytest.mark.parametrize("value", [0, -5, 2**31, 2**40, 1.5, True, None])
def test_hook_interval_out_of_range_is_refused(value):
    with pytest.raises(
        ParamsError,
        match=rf"hook_interval: expected a whole number from 1 to 1000000, got {value!r}$",
    ):
        LuaState(hook_interval=value)


def test_time_spent_waiting_is_not_charged():
    # the clock is the calling thread's CPU time: a thread that sleeps uses none of it
    import threading

    lua = LuaState()
    results = []

    def worker():
        results.append(
            lua.call(
                "function(n) local s = 0 for i = 1, n do s = s + i end return s end",
                [1000],
                ceiling_ms=50,
            )
        )

    t0 = time.thread_time()
    time.sleep(0.1)
    assert time.thread_time() - t0 < 0.05
    th = threading.Thread(target=worker)
    th.start()
    th.join()
    assert results == [[500500]]
