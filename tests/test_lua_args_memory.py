"""Issue 21, item 1: no Python object reaches Lua (NumPy scalars included), the sandbox's
own clock check is out of a script's reach, and a memory cap however small, or a state that
hit it, is an error of the package, never an abort of the process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from procgen_nb.errors import LuaArgError, LuaError, LuaMemoryError, ParamsError
from procgen_nb.lua import LuaState
from procgen_nb.lua import state as state_module
from procgen_nb.ops import cpu


def _child(script: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs ``script`` in a fresh interpreter (a crash or hang there is not this process's)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def lua():
    return LuaState()


# -- NumPy scalars and other Python values -------------------------------------------------
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.bool_(True), True),
        (np.int8(-5), -5),
        (np.uint32(4_000_000_000), 4_000_000_000),
        (np.int64(-(2**63)), -(2**63)),
        (np.float16(0.5), 0.5),
        (np.float32(1.5), 1.5),
        (np.longdouble(2.25), 2.25),
        (np.str_("tag"), "tag"),
        (np.bytes_(b"raw"), "raw"),
    ],
)
def test_a_numpy_scalar_with_a_lua_value_crosses_as_it(lua, value, expected):
    # math.type tells an integer from a float: the Lua value is the number itself
    typ, got = lua.call("function(x) return math.type(x) or type(x), x end", [value])
    assert got == expected
    want = "integer" if isinstance(expected, int) and not isinstance(expected, bool) else None
    if want:
        assert typ == "integer"


@pytest.mark.parametrize(
    "value",
    [
        np.datetime64("2024-01-01"),
        np.timedelta64(3, "s"),
        np.complex64(1 + 2j),
        np.complex128(1 + 2j),
        np.clongdouble(1 + 2j),
        np.void(b"ab"),
        np.array([(1, 2.0)], dtype="i4,f8")[0],
    ],
    ids=lambda v: type(v).__name__,
)
def test_a_numpy_scalar_without_one_is_refused_naming_the_argument(lua, value):
    with pytest.raises(
        LuaArgError, match=rf"args\[1\]: expected a Number.*got numpy\.{type(value).__name__}"
    ):
        lua.call("function(a, x) return x end", [1, value])
    assert isinstance(LuaArgError("x"), ValueError)


@pytest.mark.parametrize(
    ("value", "where"),
    [
        (2**63, r"args\[0\]"),
        (-(2**63) - 1, r"args\[0\]"),
        (np.uint64(2**64 - 1), r"args\[0\]"),
        ([1, 2**70], r"args\[0\]\[1\]"),
        ({"k": 10**30}, r"args\[0\]\['k'\]"),
        ({2**64: 1}, r"args\[0\] key"),
        (np.array([2**64 - 1], dtype=np.uint64), r"args\[0\]\[0\]"),
    ],
)
def test_an_integer_past_int64_is_refused(lua, value, where):
    with pytest.raises(LuaArgError, match=where + r": expected an integer from -2\^63"):
        lua.call("function(x) return 1 end", [value])


def test_a_longdouble_past_float64_is_refused(lua):
    with pytest.raises(LuaArgError, match="float64's range.*longdouble"):
        lua.call("function(x) return x end", [np.longdouble("1e4000")])
    # an infinite longdouble has a Lua value: inf
    assert lua.call("function(x) return x end", [np.longdouble("inf")]) == [float("inf")]


def test_arrays_of_objects_and_dates_are_refused(lua):
    with pytest.raises(LuaArgError, match=r"args\[0\]\[0\].*got date"):
        lua.call("function(x) return x end", [np.array(["2024-01-01"], dtype="datetime64[D]")])
    with pytest.raises(LuaArgError, match=r"args\[0\]\[0\].*got complex"):
        lua.call("function(x) return x end", [np.array([1 + 1j])])
    with pytest.raises(LuaArgError, match=r"args\[0\]\[0\].*got object"):
        lua.call("function(x) return x end", [np.array([object()], dtype=object)])


def test_no_userdata_metatable_is_reachable(lua):
    # the sandbox's own getmetatable answers nil for userdata, and tables as Lua does
    assert lua.call("function() return getmetatable(setmetatable({}, {__metatable = 7})) end") == [
        7
    ]
    assert lua.call("function() return getmetatable('') end") == [False]


def test_the_issue_script_stops_at_its_ceiling_in_a_child():
    # the issue's script: a datetime64 reached Lua as a Python object, whose metatable the
    # clock check shares; setting __call on it made the ceiling ignore the call for ever
    out = _child(
        """
        import numpy as np
        from procgen_nb import ops
        from procgen_nb.errors import LuaArgError, LuaCeilingError
        fn = ("function(x) local mt = getmetatable(x) if mt then mt.__call = function() "
              "return false end end while true do end end")
        for arg in (np.datetime64("2024-01-01"), np.complex128(1j), np.void(b"a")):
            try:
                ops.cpu.call(fn=fn, args=[arg], ceiling_ms=200)
            except LuaArgError as e:
                print("refused", type(arg).__name__)
        try:
            ops.cpu.call(fn=fn, args=[np.float64(1.0)], ceiling_ms=200)
        except LuaCeilingError:
            print("stopped")
        try:  # and a loop afterwards still stops
            ops.cpu.call(fn="function() while true do end end", ceiling_ms=200)
        except LuaCeilingError:
            print("stopped")
        """,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:5] == [
        "refused datetime64",
        "refused complex128",
        "refused void",
        "stopped",
        "stopped",
    ]


def test_pcall_never_hands_a_python_exception(lua):
    # a Python function raising under pcall (the sandbox's print to a broken stdout is
    # tested elsewhere); here the answer of pcall for a non-callable value is a string
    ok, kind = lua.call("function() local ok, e = pcall(nil) return ok, type(e) end")
    assert (ok, kind) == (False, "string")


# -- memory --------------------------------------------------------------------------------
@pytest.mark.parametrize("cap", [1, 500, 1000, 5000, (1 << 20) - 1, 2**48 + 1, 2**70, 1.5, True])
def test_a_cap_out_of_range_is_refused(cap):
    with pytest.raises(
        ParamsError, match=r"max_memory: expected a whole number of bytes from 1048576"
    ):
        LuaState(max_memory=cap)


def test_tiny_caps_never_abort_the_process_in_a_child():
    out = _child(
        """
        from procgen_nb.errors import ParamsError
        from procgen_nb.lua import LuaState
        for cap in (500, 1000, 5000, 100000):
            try:
                LuaState(max_memory=cap)
            except ParamsError:
                print("refused", cap)
        s = LuaState(max_memory=1 << 20)  # the floor itself works
        print(s.call("function(a, b) return a + b end", [1, 2])[0])
        """,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == "refused 500 refused 1000 refused 5000 refused 100000 3".split()


def test_a_state_at_its_cap_fails_clearly_and_works_once_freed():
    s = LuaState(max_memory=8 << 20)
    with pytest.raises(LuaMemoryError, match=r"max_memory=8388608 bytes.*holds \d+ bytes"):
        s.execute("big = {} for i = 1, 1e9 do big[i] = string.rep('x', 1000) .. i end")
    assert s.exhausted
    assert isinstance(LuaMemoryError("x"), MemoryError | LuaError)
    f = s.compile("function(x) local t = {} for i = 1, 1000 do t[i] = {i} end return #t + #x end")
    with pytest.raises(LuaMemoryError):  # a call that allocates fails, the process lives
        s.call(f, ["y" * 100_000])
    # a call that does not allocate still works at the cap (its argument crossed uncapped)
    assert s.call("function(x) return #x end", ["y" * 100_000]) == [100_000]
    s.execute("big = nil collectgarbage()")
    assert not s.exhausted
    assert s.call(f, ["y" * 100_000]) == [101_000]
    assert s.memory_used < 2 << 20


def test_a_script_catches_its_own_memory_error_and_goes_on():
    s = LuaState(max_memory=4 << 20)
    ok, msg, n = s.call(
        "function() local ok, e = pcall(function() local t = {} for i = 1, 1e9 do "
        "t[i] = {} end end) return ok, e, #string.rep('z', 10) end"
    )
    assert (ok, msg, n) == (False, "not enough memory", 10)


def test_filling_the_cap_then_calling_never_aborts_in_a_child():
    out = _child(
        """
        from procgen_nb.errors import LuaMemoryError
        from procgen_nb.lua import LuaState
        s = LuaState(max_memory=32 << 20)
        f = s.compile("function(x) return #x end")
        try:
            s.execute("big = {} for i = 1, 1e9 do big[i] = string.rep('x', 4000) .. i end")
        except LuaMemoryError:
            print("full")
        for n in (100_000, 10_000_000):
            print(s.call(f, ["y" * n])[0])
        try:
            s.call("function(x) return #x:rep(1000) end", ["y" * 100_000])
        except LuaMemoryError:
            print("refused")
        print(len(s.call("function() return {1, 2, 3} end")[0]))
        """,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["full", "100000", "10000000", "refused", "3"]


def test_the_process_state_is_replaced_when_still_full_and_the_caller_told(monkeypatch):
    small = LuaState(max_memory=4 << 20)
    monkeypatch.setattr(cpu, "_default_state", small)
    with pytest.raises(LuaMemoryError, match="was replaced by a fresh one"):
        cpu.call(fn="function() hog = {} for i = 1, 1e9 do hog[i] = {i} end end")
    assert cpu._default_state is None
    # the next call gets a fresh state
    assert cpu.call(fn="function() return hog == nil end")["values"] == [True]
    # a call that ran out of memory but left nothing held keeps its state
    small2 = LuaState(max_memory=4 << 20)
    monkeypatch.setattr(cpu, "_default_state", small2)
    with pytest.raises(LuaMemoryError) as err:
        cpu.call(fn="function() local t = {} for i = 1, 1e9 do t[i] = {i} end end")
    assert "replaced" not in str(err.value)
    assert cpu._default_state is small2


def test_memory_floor_is_above_what_the_sandbox_takes():
    s = LuaState()
    assert s.memory_used < state_module.MIN_MAX_MEMORY // 2


# -- errors a script raises ----------------------------------------------------------------
def test_a_scripts_own_stack_overflow_words_are_catchable(lua):
    assert lua.call('function() return pcall(error, "... stack overflow ...") end') == [
        False,
        "... stack overflow ...",
    ]
    ok, msg = lua.call('function() return pcall(function() error("a stack overflow here") end) end')
    assert (ok, msg) == (False, "lua:1: a stack overflow here")


def test_a_real_stack_overflow_is_still_not_catchable(lua):
    with pytest.raises(LuaError, match="stack overflow"):
        lua.call("function() local function f() return 1 + f() end return pcall(f) end")


def test_a_non_utf8_error_message_is_a_lua_error_and_drops_the_tasks():
    s = LuaState()
    with pytest.raises(LuaError, match=r"bad \\xFF\\xFE byte") as err:
        s.call('function() task.defer(function() end) error("bad \\255\\254 byte") end')
    assert type(err.value) is LuaError
    assert s.pending_tasks == 0
    with pytest.raises(Exception, match="UTF-8"):
        s.call('function() task.defer(function() end) return "bad \\255 byte" end')
    assert s.pending_tasks == 0


@pytest.mark.parametrize("ceiling", [10**400, -(10**400), float("nan"), float("inf"), 1e300])
def test_a_ceiling_past_float64_is_refused(lua, ceiling):
    with pytest.raises(ParamsError, match="ceiling_ms: expected a finite number"):
        lua.call("function() return 1 end", ceiling_ms=ceiling)


def test_a_deeply_nested_upload_is_an_upload_error():
    from procgen_nb import ops
    from procgen_nb.errors import UploadError

    nested: object = 1
    for _ in range(5000):
        nested = {"a": nested}
    with pytest.raises(UploadError, match="nested a few hundred deep at most"):
        ops.transfer.upload(values=nested)
    cyc: dict = {}
    cyc["a"] = cyc
    with pytest.raises(UploadError):
        ops.transfer.upload(values=cyc)


def test_a_deeply_nested_lua_argument_is_refused(lua):
    nested: object = 1
    for _ in range(200):
        nested = [nested]
    with pytest.raises(Exception, match="nested at most 64 deep") as err:
        lua.call("function(x) return 1 end", [nested])
    assert isinstance(err.value, ValueError)
