"""The hardened Lua call path: errors cross as strings, CPU (not wall) time is charged,
math.random is seeded per call, BufferRefs are per node, and the guarded standard
functions answer what the unguarded ones (or Python) answer."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time

import lupa.lua54 as lupa
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import procgen_nb as pg
from procgen_nb.errors import LuaCeilingError, LuaReturnError
from procgen_nb.lua import LuaState
from procgen_nb.lua import state as state_module
from procgen_nb.ops import cpu
from procgen_nb.ops._op import CookScope, cook_scope


@pytest.fixture(scope="module")
def lua():
    return LuaState()


def scope_for(lua, node):
    return CookScope(node, {}, lambda: lua)


class _Writer:
    """A stdout whose write sleeps (wall time, no CPU) or raises."""

    def __init__(self, sleep=0.0, fail=False):
        self.sleep, self.fail, self.text = sleep, fail, []

    def write(self, s):
        if self.fail:
            raise OSError("stdout is closed")
        time.sleep(self.sleep)
        self.text.append(s)
        return len(s)

    def flush(self):
        pass


# -- errors cross as strings -----------------------------------------------------------------
def test_a_python_error_reaches_lua_as_a_string(lua, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _Writer(fail=True))
    ok, kind, msg = lua.call("function() local ok, e = pcall(print, 'x') return ok, type(e), e end")
    assert (ok, kind) == (False, "string")
    assert msg.endswith("print: the text could not be written")


def test_print_of_bytes_that_are_not_utf8(lua, monkeypatch):
    out = _Writer()
    monkeypatch.setattr(sys, "stdout", out)
    assert lua.call("function() return pcall(print, 'a\\xff\\xc3b', 1) end") == [True]
    assert "".join(out.text) == "a\\xFF\\xC3b\t1\n"


# -- CPU time, not wall time -------------------------------------------------------------------
def test_time_a_call_waits_is_not_charged(lua, monkeypatch):
    # each print waits 0.2 s in Python (sleeping: no CPU); 3 of them pass a 100 ms ceiling
    monkeypatch.setattr(sys, "stdout", _Writer(sleep=0.2))
    wall = time.perf_counter()
    assert lua.call("function() for i = 1, 3 do print(i) end return 1 end", ceiling_ms=100) == [1]
    assert time.perf_counter() - wall >= 0.6


def test_a_long_hook_interval_still_stops_a_loop():
    big = LuaState(hook_interval=1_000_000)
    t0 = time.thread_time()
    with pytest.raises(LuaCeilingError):
        big.call("function() while true do end end", ceiling_ms=200)
    assert time.thread_time() - t0 <= 1.2


def test_cpu_read_charges_digest_and_fn_to_one_ceiling(monkeypatch):
    # print burns 300 ms of CPU in Python (on the calling thread: charged to the call)
    def burn(text):
        t0 = time.thread_time()
        while time.thread_time() - t0 < 0.3:
            pass

    monkeypatch.setattr(state_module, "_print", burn)
    lua = LuaState()
    slow = "function() print('x') return 1 end"
    with cook_scope(scope_for(lua, "reader")):
        assert cpu.call(fn=slow, ceiling_ms=450)["values"] == [1]  # one fits
        t0 = time.thread_time()
        with pytest.raises(
            LuaCeilingError, match=r"cpu.read in node 'reader': expected at most ceiling_ms=450 ms"
        ):
            cpu.read(fn=slow, digest=slow, ceiling_ms=450)  # two do not
        assert 0.6 <= time.thread_time() - t0 <= 0.9


# -- math.random ----------------------------------------------------------------------------------
def _xoshiro(n1, n2, count):
    """Lua 5.4's math.random() floats after math.randomseed(n1, n2): xoshiro256**, written
    from its published description (state n1, 0xff, n2, 0; 16 outputs discarded)."""
    mask = (1 << 64) - 1

    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & mask

    s = [n1 & mask, 0xFF, n2 & mask, 0]

    def nxt():
        result = (rotl((s[1] * 5) & mask, 7) * 9) & mask
        t = (s[1] << 17) & mask
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    for _ in range(16):
        nxt()
    return [(nxt() >> 11) * 2.0**-53 for _ in range(count)]


DRAW = "function() local t = {} for i = 1, 6 do t[i] = math.random() end return t end"


def test_math_random_follows_the_seed(lua):
    assert lua.call(DRAW, seed=12345, returns=["List"]) == [_xoshiro(12345, 0, 6)]
    assert lua.call(DRAW, seed=-7, returns=["List"]) == [_xoshiro(-7, 0, 6)]


def test_math_random_restarts_each_call_and_randomseed_restarts_it(lua):
    first = lua.call(DRAW, node="n", returns=["List"])[0]
    assert lua.call(DRAW, node="n", returns=["List"]) == [first]
    again = lua.call(
        "function() local a = math.random() math.random() math.randomseed() "
        "return a, math.random() end",
        node="n",
    )
    assert again == [first[0], first[0]]
    other = lua.call(DRAW, node="other", returns=["List"])[0]
    assert other != first and len(set(other)) == 6


def test_math_random_is_the_same_in_another_process(lua):
    script = (
        "from procgen_nb.ops import cpu\n"
        "from procgen_nb.ops._op import CookScope, cook_scope\n"
        "from procgen_nb.lua import LuaState\n"
        "lua = LuaState()\n"
        "with cook_scope(CookScope('scatter', {}, lambda: lua)):\n"
        f"    print(repr(cpu.call(fn={DRAW!r})['values'][0]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    with cook_scope(scope_for(LuaState(), "scatter")):
        here = cpu.call(fn=DRAW)["values"][0]
    assert eval(out) == here  # noqa: S307 (a list of floats printed by repr)
    digest = hashlib.sha256(b"procgen_nb.lua:scatter").digest()
    n1 = int.from_bytes(digest[:8], "little", signed=True)
    n2 = int.from_bytes(digest[8:16], "little", signed=True)
    assert here == _xoshiro(n1, n2, 6)


# -- BufferRefs -------------------------------------------------------------------------------------
def test_a_bufferref_names_its_column_for_one_node_only(lua):
    col = pg.columns.column_from_numpy(np.arange(4, dtype=np.float32), "Float", "cpu")
    other = pg.columns.column_from_numpy(np.arange(4, dtype=np.float32), "Float", "cpu")
    with cook_scope(scope_for(lua, "a")):
        tok = cpu.call(
            fn="function(b, c) kept = b return b.buffer, c.buffer end", args=[col, other]
        )["values"]
        assert cpu.call(fn="function() return kept end", returns=["Column"])["values"][0] is col
    with cook_scope(scope_for(lua, "b")):
        tok_b = cpu.call(fn="function(b) return b.buffer end", args=[col])["values"][0]
        with pytest.raises(
            LuaReturnError,
            match=r"in node 'b': result 1: expected Column, got BufferRef \(buffer 'buf-[0-9a-f]{32}' "
            r"is not a column this node was given",
        ):
            cpu.call(fn="function() return kept end", returns=["Column"])
    # tokens: 128 random bits each, per node and per column
    assert all(t.startswith("buf-") and len(t) == 36 for t in (*tok, tok_b))
    assert len({*tok, tok_b}) == 3
    with cook_scope(scope_for(lua, "a")), pytest.raises(LuaReturnError, match="is not a column"):
        cpu.call(
            fn="function() return {buffer = kept.buffer:sub(1, -2) .. 'x', type = 'Float'} end",
            returns=["Column"],
        )


# -- the guarded standard functions answer as the real ones ---------------------------------------------
_RAW = lupa.LuaRuntime()
SUBJECTS = st.text(alphabet="ab()c =%.\n", max_size=40)
PATTERNS = st.lists(
    st.sampled_from(
        [
            "a",
            "b",
            ".",
            "%a",
            "%s",
            "[ab]",
            "[^a]",
            "a*",
            "b+",
            ".-",
            "c?",
            "(",
            ")",
            "()",
            "%b()",
            "%f[%a]",
            "=",
            "%%",
            "%.",
            "^",
            "$",
        ]
    ),
    max_size=6,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(s=SUBJECTS, p=PATTERNS)
def test_guarded_patterns_answer_as_lua_does(lua, s, p):
    src = """function(s, p)
      local ok1, a, b, c = pcall(string.find, s, p)
      local ok2, m = pcall(string.match, s, p)
      local ok3, g, n = pcall(string.gsub, s, p, '<%0>')
      local ok4, list = pcall(function() local t = {} for x in s:gmatch(p) do t[#t + 1] = tostring(x) end return table.concat(t, '|') end)
      return tostring(ok1) .. tostring(a) .. tostring(b) .. tostring(c) .. '/' .. tostring(ok2) .. tostring(m)
        .. '/' .. tostring(ok3) .. tostring(g) .. tostring(n) .. '/' .. tostring(ok4) .. tostring(list)
    end"""
    want = _RAW.eval(src)(s, p)
    got = lua.call(src, [s, p])[0]
    # error messages name the function differently; the answers and the failures agree
    assert got.split("/")[0].startswith("true") == want.split("/")[0].startswith("true")
    if "false" not in want:
        assert got == want


@pytest.mark.parametrize(
    ("n", "m", "gap"),
    [(200_000, 300, 5), (20_000, 5000, 3), (50, 3, 0), (300_000, 50, 250_000)],
)
def test_long_plain_searches_answer_as_python(lua, n, m, gap):
    # windows (n * m past the budget, short needle) and KMP (long needle): str.find agrees
    subject = "a" * n + "b" + "a" * gap + "b"
    needle = "a" * m + "b"
    got = lua.call("function(s, p) return s:find(p, 1, true) end", [subject, needle])
    i = subject.find(needle)
    assert got == ([i + 1, i + len(needle)] if i >= 0 else [None])
    j = subject.find(needle, len(subject) - 5)  # init -5: the last five bytes
    got = lua.call("function(s, p) return s:find(p, -5, true) end", [subject, needle])
    assert got == ([j + 1, j + len(needle)] if j >= 0 else [None])


def test_guarded_rep_and_table_functions_answer_as_python(lua):
    assert lua.call("function() return string.rep('abc', 5000, '-') end") == [
        "-".join(["abc"] * 5000)
    ]
    assert lua.call("function() return #string.rep('ab', 1e6, ','), string.rep('x', 3) end") == [
        2_999_999,
        "xxx",
    ]
    n = 100_000
    ref = list(range(1, n + 1))
    moved = ref[:2] + ref[:n]  # table.move(t, 1, n, 3): overlapping, copied backwards
    assert lua.call(
        "function(n) local t = {} for i = 1, n do t[i] = i end table.move(t, 1, n, 3) return t end",
        [n],
        returns=["List"],
    ) == [moved]
    assert lua.call(
        "function(n) local t = {} for i = 1, n do t[i] = i end return table.concat(t, ',', 2, n - 1) end",
        [n],
    ) == [",".join(map(str, ref[1:-1]))]
    inserted = ref.copy()
    inserted.insert(9, 0)
    removed = ref.copy()
    removed.pop(4)
    assert lua.call(
        "function(n) local t, u = {}, {} for i = 1, n do t[i] = i u[i] = i end "
        "table.insert(t, 10, 0) local v = table.remove(u, 5) return t, u, v end",
        [n],
        returns=["List", "List", "Number"],
    ) == [inserted, removed, 5]
    vals = [(i * 7919) % 100_003 for i in range(1, n + 1)]
    assert lua.call(
        "function(t) table.sort(t) return t end", [vals], returns=["List"], ceiling_ms=20_000
    ) == [sorted(vals)]
    assert lua.call(
        "function(t) table.sort(t, function(a, b) return a > b end) return t end",
        [vals],
        returns=["List"],
        ceiling_ms=20_000,
    ) == [sorted(vals, reverse=True)]


def test_guarded_load_and_collectgarbage(lua):
    src = "function() return load(string.rep('x = x + 1 ', 20000) .. 'return x', 'big', 't', {x = 0})() end"
    assert lua.call(src) == [20000]
    assert lua.call(
        "function() local f = load(coroutine.wrap(function() coroutine.yield('return ') "
        "coroutine.yield('42') end)) return f() end"
    ) == [42]
    before, after, r = lua.call(
        "function() junk = {} for i = 1, 1e5 do junk[i] = {i} end local a = collectgarbage('count') "
        "junk = nil local r = collectgarbage() return a, collectgarbage('count'), r end"
    )
    assert after < before / 2 and r == 0


def test_ceiling_benchmark_smoke(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "lua_ceiling.py"
    spec = importlib.util.spec_from_file_location("bench_lua_ceiling", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke"])
    assert set(rows) == set(mod.CASES) and "ratio" in capsys.readouterr().out
    assert all(r > 0 for r in rows.values())


# -- the Lua matcher (the fallback for a match too long to run natively) -----------------------------
@pytest.fixture(scope="module")
def lua_matcher():
    """A state whose every pattern match runs in the Lua matcher (a budget of 0 steps)."""
    from procgen_nb.lua import _guards

    saved = dict(_guards.LIMITS)
    _guards.LIMITS["pattern_steps"] = 0
    try:
        return LuaState()
    finally:
        _guards.LIMITS.clear()
        _guards.LIMITS.update(saved)


ALL_FOUR = """function(s, p, init)
  local function show(ok, ...)
    local t = {tostring(ok)}
    for i = 1, select('#', ...) do t[#t + 1] = tostring((select(i, ...))) end
    return table.concat(t, ',')
  end
  local out = {
    show(pcall(string.find, s, p, init)),
    show(pcall(string.match, s, p, init)),
    show(pcall(string.gsub, s, p, '<%0>')),
    show(pcall(string.gsub, s, p, '[%1]', 2)),
    show(pcall(string.gsub, s, p, function(a, b) return b and (a .. '|' .. b) or nil end)),
    show(pcall(string.gsub, s, p, {a = 'A', [1] = 'one'})),
    show(pcall(function()
      local t = {}
      for a, b in s:gmatch(p, init) do t[#t + 1] = tostring(a) .. ':' .. tostring(b) end
      return table.concat(t, ' ')
    end)),
  }
  return out
end"""

MATCH_SUBJECTS = st.text(alphabet="ab(c) =%.\n1A_x[]-\x00$^", max_size=30)
MATCH_PATTERNS = st.lists(
    st.sampled_from(
        [
            "a",
            "b",
            ".",
            "%a",
            "%d",
            "%s",
            "%w",
            "%p",
            "%u",
            "%l",
            "%x",
            "%A",
            "%S",
            "%W",
            "[ab]",
            "[^a]",
            "[a-c]",
            "[%a_]",
            "[]]",
            "[^%s]",
            "a*",
            "b+",
            ".-",
            "c?",
            "%d+",
            "%s*",
            "(",
            ")",
            "()",
            "%b()",
            "%b[]",
            "%f[%a]",
            "%f[%A]",
            "=",
            "%%",
            "%.",
            "%-",
            "%1",
            "$a",
            ".*",
            "\n",
            "(.-)",
            "))",
            "((",
            "%z",
            "%Z*",
            "[^]a]",
            "%b",
            "%f",
            "[",
            "%",
            "^",
            "$",
            "%[",
            "x?",
        ]
    ),
    max_size=6,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(s=MATCH_SUBJECTS, p=MATCH_PATTERNS, init=st.sampled_from([None, 1, 2, -3, 0, 40]))
def test_the_lua_matcher_answers_as_the_native_one(lua_matcher, s, p, init):
    want = [x.split(",", 1)[0] == "true" and x for x in _RAW.eval(ALL_FOUR)(s, p, init).values()]
    got = [x.split(",", 1)[0] == "true" and x for x in lua_matcher.call(ALL_FOUR, [s, p, init])[0]]
    assert got == want, (s, p, init)


def test_a_match_too_long_for_native_runs_in_lua_and_answers(lua):
    # (.-)\n over 100 KB: its bound passes the native budget (a subject with no newline
    # would be quadratic), so it runs in the Lua matcher, and answers as Python splits
    text = "".join(f"line {i}\n" for i in range(12_000))
    src = """function(s)
      local n, last = 0, nil
      for l in s:gmatch('(.-)\\n') do n = n + 1 last = l end
      return n, last, s:find('(%d+)\\n$'), select(2, s:gsub('(%w+) (%d+)\\n', '%2'))
    end"""
    lines = text.split("\n")[:-1]
    # (find is not last in the list: one value, where "11999\n" starts)
    assert lua.call(src, [text], ceiling_ms=20_000) == [
        len(lines),
        lines[-1],
        len(text) - 5,
        12_000,
    ]


def test_two_states_on_two_threads_each_stop_at_their_ceiling():
    import threading

    results = {}

    def run(name, src):
        lua = LuaState()
        t0 = time.thread_time()
        try:
            lua.call(src, ceiling_ms=200, node=name)
            results[name] = ("ok", time.thread_time() - t0)
        except LuaCeilingError:
            results[name] = ("ceiling", time.thread_time() - t0)

    long_eq = (
        "function() local a, b = string.rep('x', 2^24), string.rep('x', 2^24) "
        "while true do local _ = (a == b) end end"
    )
    threads = [
        threading.Thread(target=run, args=("loop", "function() while true do end end")),
        threading.Thread(target=run, args=("long", long_eq)),
    ]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert set(results) == {"loop", "long"}
    for kind, cpu_s in results.values():
        assert kind == "ceiling" and 0.2 <= cpu_s <= 1.2


def test_max_memory_out_of_range_is_refused():
    from procgen_nb.errors import ParamsError

    for bad in (0, -1, 1.5, True, "1GB"):
        with pytest.raises(ParamsError, match=r"max_memory: expected a whole number of bytes"):
            LuaState(max_memory=bad)
