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

Run: ``python benchmarks/lua_ceiling.py`` (``--smoke`` for tiny sizes, as the tests do).
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
    args = ap.parse_args(argv)
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
    return rows


if __name__ == "__main__":
    main()
