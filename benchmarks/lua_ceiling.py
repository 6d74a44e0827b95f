"""What the hardened Lua call path costs against a plain lupa call of the same function.

``LuaState.call`` runs a function under a CPU-time ceiling that holds whatever the script
does: a count hook, ``pcall``/``xpcall``/coroutines that cannot catch the ceiling's error,
guarded standard functions (patterns, ``string.rep``, table functions, ``load``), a seeded
``math.random``, results measured before conversion, and one budget per call. Everything
stays in one process (a watchdog thread only acts on a call past its ceiling): the cost
is per call and per instruction. Each case times the same Lua function called through ``LuaState.call`` and
through a plain ``lupa.LuaRuntime`` (no sandbox, no hook), best of ``--repeats``, and
prints the ratio. The plain runtime's ``task.spawn`` is a bare coroutine create and
resume (no scheduler, hook or watchdog). Nothing is asserted.

Then it runs ``PATHOLOGICAL``, a corpus of calls built to run long inside single C
functions or instructions (large character sets in every pattern function, ``%f[]``,
``table.sort`` of long equal strings, ``string.format("%q")`` of 100 MB, ``string.rep``,
``table.concat``, long string comparisons and copies, and the issue-21 scripts), each under
``--ceiling`` ms (300 by default), and prints each call's CPU time and the worst overrun
against the goal: every call stops within 2 x ceiling + 100 ms of CPU time.

Run: ``python benchmarks/lua_ceiling.py`` (``--smoke`` for tiny sizes, as the tests do;
``--corpus-only`` for the corpus alone).
"""

from __future__ import annotations

import argparse
import time

import lupa.lua54 as lupa

from procgen_nb.lua import LuaState

CASES = {
    # name: (Lua source of a function of n, n, n for --smoke)
    "empty call": ("function(n) return n end", 1, 1),
    "add two numbers": ("function(n) return n + 1, n * 2 end", 1, 1),
    "arithmetic loop": (
        "function(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end",
        3_000_000,
        1000,
    ),
    "pcall in a loop": (
        "function(n) local s = 0 for i = 1, n do local ok, v = pcall(math.abs, -i) s = s + v end "
        "return s end",
        300_000,
        1000,
    ),
    "string.find on short text": (
        "function(n) local c = 0 for i = 1, n do if ('key=' .. i):find('^(%w+)=(%d+)$') then "
        "c = c + 1 end end return c end",
        100_000,
        100,
    ),
    "gsub over 1 MB of text": (
        "function(n) local s = string.rep('hello world ', n) return select(2, s:gsub('%a+', "
        "'%0')) end",
        100_000,
        100,
    ),
    "string.rep 64 MB": ("function(n) return #string.rep('ab', n) end", 32 << 20, 1000),
    "table.sort 200k": (
        "function(n) local t = {} for i = 1, n do t[i] = (i * 7919) % 1000003 end table.sort(t) "
        "return t[1] end",
        200_000,
        100,
    ),
    "coroutine ping-pong": (
        "function(n) local co = coroutine.wrap(function() while true do coroutine.yield(1) end "
        "end) local s = 0 for i = 1, n do s = s + co() end return s end",
        200_000,
        100,
    ),
    "task.spawn 100k functions": (
        "function(n) local s = 0 for i = 1, n do task.spawn(function(k) s = s + k end, i) end "
        "return s end",
        100_000,
        100,
    ),
    "return a 100k list": (
        "function(n) local t = {} for i = 1, n do t[i] = i end return t end",
        100_000,
        100,
    ),
}


#: name: Lua source of a function of no arguments that runs far past any short ceiling.
#: Each one spends its time inside single C functions or instructions (which a count hook
#: alone does not interrupt), or loops where the hook runs.
_BIG_SET = "'[' .. string.rep('a', 20000) .. ']'"
_SUBJECT = "string.rep('x', 1e6)"
PATHOLOGICAL = {
    "find, 20k-byte set": f"function() return string.find({_SUBJECT}, {_BIG_SET}) end",
    "match, 20k-byte set": f"function() return string.match({_SUBJECT}, {_BIG_SET}) end",
    "gmatch, 20k-byte set": (
        f"function() for m in string.gmatch({_SUBJECT}, {_BIG_SET}) do end end"
    ),
    "gsub, 20k-byte set": f"function() return string.gsub({_SUBJECT}, {_BIG_SET}, 'y') end",
    "find, %f[20k-byte set]": (
        f"function() return string.find({_SUBJECT}, '%f' .. {_BIG_SET}) end"
    ),
    "find, set with a quantifier": (
        f"function() return string.find({_SUBJECT}, {_BIG_SET} .. '*y') end"
    ),
    "table.sort, 2^18 x one 1 MB string": (
        "function() local b = string.rep('x', 1 << 20) local t = {} for i = 1, 1 << 18 do "
        "t[i] = b end table.sort(t) end"
    ),
    "table.sort, 4k x 16 MB strings": (
        "function() local b = string.rep('x', 1 << 24) local t = {} for i = 1, 4096 do "
        "t[i] = b end table.sort(t) end"
    ),
    "table.sort, comparator on 1 MB strings": (
        "function() local b = string.rep('x', 1 << 20) local t = {} for i = 1, 1 << 16 do "
        "t[i] = b end table.sort(t, function(x, y) return x < y end) end"
    ),
    'string.format("%q"), 100 MB': (
        "function() return #string.format('%q', string.rep('\\0', 100 << 20)) end"
    ),
    "string.rep, 200 MB": "function() return #string.rep('ab', 100 << 20) end",
    "string.rep, 200 MB, loop": (
        "function() while true do local s = string.rep('ab', 100 << 20) end end"
    ),
    "string.rep with a separator, loop": (
        "function() while true do local s = string.rep('a', 1 << 20, ',') end end"
    ),
    "table.concat, 1M x 300 B": (
        "function() local p = string.rep('y', 300) local t = {} for i = 1, 1 << 20 do "
        "t[i] = p end while true do local s = table.concat(t) end end"
    ),
    "equal 64 MB strings compared, loop": (
        "function() local a, b = string.rep('z', 1 << 26), string.rep('z', 1 << 26) "
        "local n = 0 while true do if a == b and a <= b then n = n + 1 end end end"
    ),
    "64 MB string copies, loop": (
        "function() local a = string.rep('z', 1 << 26) while true do local b = a:upper() "
        "local c = b:lower() local d = c:reverse() end end"
    ),
    "utf8.len of 128 MB, loop": (
        "function() local a = string.rep('z', 1 << 27) while true do local n = utf8.len(a) end end"
    ),
    "load of a 64 MB chunk": ("function() return load(string.rep('local x = 1 ', 1 << 22)) end"),
    "pcall around an endless loop": (
        "function() while true do pcall(function() while true do end end) end end"
    ),
    "coroutines, endless": (
        "function() while true do coroutine.wrap(function() while true do end end)() end end"
    ),
    "the issue's loop (a float64 argument)": (
        "function() local mt = getmetatable(1.0) while true do end end"
    ),
}
#: the corpus under --smoke: short rows at a short ceiling
SMOKE_PATHOLOGICAL = (
    "find, 20k-byte set",
    "table.sort, comparator on 1 MB strings",
    "pcall around an endless loop",
)


def overruns(ceiling_ms: float = 300.0, names: tuple[str, ...] | None = None) -> dict[str, float]:
    """Runs each pathological call under ``ceiling_ms``; prints and answers its CPU ms."""
    from procgen_nb.errors import LuaCeilingError, LuaMemoryError

    state = LuaState()
    out: dict[str, float] = {}
    goal = 2 * ceiling_ms + 100
    print(
        f"\n{'pathological call':40} {'CPU (ms)':>9}  (ceiling {ceiling_ms:g} ms, goal <= "
        f"{goal:g} ms)"
    )
    print("-" * 63)
    for name in names or tuple(PATHOLOGICAL):
        f = state.compile(PATHOLOGICAL[name])
        t0 = time.thread_time()
        try:
            state.call(f, ceiling_ms=ceiling_ms)
            note = "finished"
        except LuaCeilingError:
            note = "stopped"
        except LuaMemoryError:
            note = "past max_memory"
        out[name] = (time.thread_time() - t0) * 1e3
        state.execute("collectgarbage()")
        print(f"{name:40} {out[name]:9.1f}  {note}")
    worst = max(out, key=out.get)
    verdict = "meets" if out[worst] <= goal else "MISSES"
    print(
        f"worst: {worst}: {out[worst]:.1f} ms, overrun {out[worst] - ceiling_ms:.1f} ms "
        f"past the ceiling ({verdict} the goal of {goal:g} ms)"
    )
    return out


#: The plain reference of ``task.spawn``: a coroutine created and resumed at once.
PLAIN_TASK = (
    "task = {spawn = function(f, ...) local co = coroutine.create(f) "
    "coroutine.resume(co, ...) return co end}"
)


def _best(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _plain_value(v):
    """A plain lupa result as Python values (a table as a list), as LuaState converts it."""
    if lupa.lua_type(v) == "table":
        return [v[i] for i in range(1, len(v) + 1)]
    return v


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Times each case both ways and prints the table; answers {case: ratio}."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (the test suite)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ceiling", type=float, default=300.0, help="the corpus's ceiling_ms")
    ap.add_argument("--corpus-only", action="store_true", help="the pathological corpus only")
    args = ap.parse_args(argv)
    if args.corpus_only:
        overruns(args.ceiling)
        return {}
    repeats = 1 if args.smoke else args.repeats
    hardened = LuaState()
    plain = lupa.LuaRuntime(unpack_returned_tuples=True)
    plain.execute(PLAIN_TASK)
    rows: dict[str, float] = {}
    print(f"{'case':28} {'plain (ms)':>11} {'hardened (ms)':>14} {'ratio':>7}")
    print("-" * 63)
    for name, (src, n, smoke_n) in CASES.items():
        n = smoke_n if args.smoke else n
        f_plain = plain.eval(src)
        f_hard = hardened.compile(src)

        def run_plain(f=f_plain, n=n):
            res = f(n)
            return [_plain_value(v) for v in (res if isinstance(res, tuple) else (res,))]

        def run_hard(f=f_hard, n=n):
            return hardened.call(f, [n], ceiling_ms=60_000)

        run_plain(), run_hard()  # warm
        a, b = _best(run_plain, repeats), _best(run_hard, repeats)
        rows[name] = b / a if a > 0 else float("inf")
        print(f"{name:28} {a * 1e3:11.3f} {b * 1e3:14.3f} {rows[name]:6.2f}x")
    if args.smoke:
        overruns(50.0, SMOKE_PATHOLOGICAL)
    else:
        overruns(args.ceiling)
    return rows


if __name__ == "__main__":
    main()
