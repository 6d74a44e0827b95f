"""A corpus of Lua escape attempts: each ends, within its CPU bound, with a result or a
``ProcgenError`` naming what was refused -- never a hang, a signal or a silent escape.

The risky cases run in a worker process (this file, run as a script), one after another;
the test process reads one line per case and kills the worker when a case runs past its
wall-clock limit, so a hang fails that case instead of hanging CI. The bound on each case
is the one ``cpu.call`` promises: at most max(2 x ceiling, ceiling + 1 s) of CPU time,
measured by the worker around the call (``time.thread_time``, its own thread). A case
whose single instructions build strings of hundreds of MB (``MEMORY_BOUND``) may run one
such instruction past its ceiling, and its length depends on how fast this machine maps
fresh memory: its bound adds twice the CPU time of one ``max_memory``-sized copy in
Python, measured in the worker just before the case.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

C = 200  # the ceiling (ms) of most cases

CEIL = (
    r"expected at most ceiling_ms=(?P<c>[\d.]+) ms of CPU time, got [\d.]+ ms; the call was stopped"
)
OVERFLOW = r"Lua error: (\w+:\d+: )?(C )?stack overflow"
TASK_OVERFLOW = (
    r"Lua error: task failed: task.spawn of the function defined at escape:1: .*stack overflow"
)

#: name -> (Lua source of fn, ceiling_ms, returns, {outcome class: message regex} accepted)
CASES: dict[str, tuple[str, float | None, list | None, dict[str, str]]] = {
    # -- Python objects: none reaches a script ----------------------------------------------
    "python error object: metatable changed, then a loop": (
        """function()
          local ok, e = pcall(print, '\\xff')
          assert(type(e) ~= 'userdata', 'a Python object reached Lua')
          local mt = getmetatable(e)
          if type(mt) == 'table' then mt.__call = function() return false end end
          while true do end
        end""",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "python error object: __gc set on its metatable": (
        """function()
          local ok, e = pcall(print, '\\xff')
          local mt = getmetatable(e)
          if type(mt) == 'table' then mt.__gc = function() while true do end end end
          e = nil
          collectgarbage()
          while true do end
        end""",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "__gc finalizer": (
        "function() setmetatable({}, {__gc = function() while true do end end}) end",
        C,
        None,
        {"LuaSandboxError": r"setmetatable: __gc finalizers are not available"},
    ),
    # -- the hook cannot be caught, starved or removed ------------------------------------
    "pcall recursion at the C-stack limit": (
        "function() local f; f = function() while true do pcall(f) end end f() end",
        C,
        None,
        {"LuaError": OVERFLOW, "LuaCeilingError": CEIL},
    ),
    "pcall recursion at the C-stack limit, default ceiling": (
        "function() local f; f = function() while true do pcall(f) end end f() end",
        None,
        None,
        {"LuaError": OVERFLOW, "LuaCeilingError": CEIL},
    ),
    "xpcall handler looping at nesting depth 195": (
        """function()
          local function nest(d, f)
            if d == 0 then return f() end
            return select(2, pcall(nest, d - 1, f))
          end
          return nest(195, function()
            while true do
              xpcall(function() error('x') end, function() while true do end end)
            end
          end)
        end""",
        C,
        None,
        {"LuaError": OVERFLOW, "LuaCeilingError": CEIL},
    ),
    "xpcall handler looping on a stack overflow": (
        """function()
          local function g() return g() + 1 end
          while true do xpcall(g, function() while true do end end) end
        end""",
        C,
        None,
        {"LuaError": OVERFLOW, "LuaCeilingError": CEIL},
    ),
    "metamethod recursion catching its own overflow": (
        """function()
          local mt = {}
          mt.__index = function(t, k)
            while true do pcall(function() return setmetatable({}, mt)[k] end) end
          end
          return setmetatable({}, mt).x
        end""",
        C,
        None,
        {"LuaError": OVERFLOW, "LuaCeilingError": CEIL},
    ),
    "coroutine.resume recursion": (
        """function()
          local f; f = function() while true do coroutine.resume(coroutine.create(f)) end end
          f()
        end""",
        C,
        None,
        {"LuaError": OVERFLOW, "LuaCeilingError": CEIL},
    ),
    "coroutine.wrap swallowing errors in a yield loop": (
        """function()
          local co = coroutine.wrap(function() while true do pcall(coroutine.yield) end end)
          while true do pcall(co) end
        end""",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "coroutine.close of a coroutine the ceiling stopped": (
        """function()
          local co = coroutine.create(function()
            local x <close> = setmetatable({}, {__close = function() while true do end end})
            while true do end
          end)
          while true do pcall(coroutine.resume, co) pcall(coroutine.close, co) end
        end""",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "error object whose __tostring loops": (
        "function() error(setmetatable({}, {__tostring = function() while true do end end})) end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "deep Lua recursion": (
        "function() local function f(n) return 1 + f(n + 1) end return f(1) end",
        C,
        None,
        {"LuaError": OVERFLOW, "LuaCeilingError": CEIL},
    ),
    "deep recursion under pcall in a loop": (
        "function() local function f() return f() + 1 end while true do pcall(f) end end",
        C,
        None,
        {"LuaError": OVERFLOW, "LuaCeilingError": CEIL},
    ),
    # -- long single instructions: the watchdog makes the hook run at the next one ----------
    "equal 32 MB strings compared in a loop": (
        """function()
          local a, b = string.rep('x', 2^25), string.rep('x', 2^25)
          while true do local _ = (a == b) end
        end""",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "32 MB strings ordered in a loop, in a coroutine": (
        """function()
          local a, b = string.rep('x', 2^25), string.rep('x', 2^25)
          return coroutine.wrap(function() while true do local _ = (a < b) end end)()
        end""",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "16 MB strings concatenated in a loop": (
        "function() local a = string.rep('x', 2^24) while true do local _ = a .. 'x' end end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "C calls on a 16 MB string in a loop": (
        "function() local a = string.rep('x', 2^24) while true do a:upper() end end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    # -- the standard library's C loops -----------------------------------------------------
    "string.rep of an empty string, 2^62 times": (
        "function() return #string.rep('', 2^62), #string.rep('', 2^62, '') end",
        C,
        None,
        {"ok": r"\[0, 0\]"},
    ),
    "string.rep bomb": (
        "function() return #string.rep('ab', 2^40, ',') end",
        C,
        None,
        {"LuaError": r"string.rep: resulting string too large"},
    ),
    "string.rep of a short piece, 300 MB": (
        "function() return #string.rep('ab', 1.5e8) end",
        C,
        None,
        # 300 MB and its concatenated copy pass max_memory (512 MB) when the ceiling is not first
        {"ok": r"\[300000000\]", "LuaCeilingError": CEIL, "LuaError": r"not enough memory"},
    ),
    "string doubling until memory runs out": (
        "function() local s = 'x' while true do s = s .. s end end",
        C,
        None,
        {"LuaError": r"not enough memory", "LuaCeilingError": CEIL},
    ),
    "slow pattern: string.find": (
        "function() return string.find(string.rep('a', 100000), '.-.-.-.-b') end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "slow pattern: string.match": (
        "function() return string.rep('a', 20000):match('(a*)*b') end",
        C,
        None,
        {"LuaCeilingError": CEIL, "ok": r"\[None\]"},
    ),
    "slow pattern: gmatch": (
        "function() for x in string.rep('a', 100000):gmatch('a-b') do end end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "slow pattern: gsub with %b": (
        "function() return string.rep('(', 100000):gsub('%b()', '') end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "slow plain find": (
        "function() return string.rep('a', 4e6):find(string.rep('a', 3000) .. 'b', 1, true) end",
        C,
        None,
        {"ok": r"\[None\]", "LuaCeilingError": CEIL},
    ),
    "slow pattern that is malformed past its slow part": (
        "function() return string.rep('a', 100000):find('.-.-.-.-b[') end",
        C,
        None,
        {"LuaCeilingError": CEIL, "LuaError": r"malformed pattern \(missing '\]'\)"},
    ),
    "string.packsize with a huge format": (
        "function() return string.packsize(string.rep('x', 1e6)) end",
        C,
        None,
        {"LuaError": r"string.packsize: expected a format of at most 4096 bytes"},
    ),
    "table.move over 2^62 elements": (
        "function() return table.move({}, 1, math.maxinteger - 10, 2, {}) end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "table.insert with a huge __len": (
        """function()
          local t = setmetatable({}, {__len = function() return math.maxinteger - 1 end})
          table.insert(t, 1, 0)
        end""",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "table.remove with a huge __len": (
        """function()
          local t = setmetatable({}, {__len = function() return math.maxinteger - 1 end})
          table.remove(t, 1)
        end""",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "table.concat through a C __index": (
        "function() return #table.concat(setmetatable({}, {__index = tostring}), '', 1, 1e12) end",
        C,
        None,
        {"LuaCeilingError": CEIL, "LuaError": r"not enough memory"},
    ),
    "table.sort with a C comparator": (
        """function()
          local t = {} for i = 1, 3e6 do t[i] = (i * 7919) % 1000003 end
          table.sort(t, rawequal)
        end""",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "load with an endless reader": (
        "function() return load(function() return 'x = 1 ' end) end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "load with an endless coroutine reader": (
        """function()
          return load(coroutine.wrap(function() while true do coroutine.yield('x=1 ') end end))
        end""",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "load of a huge chunk": (
        "function() return load(string.rep('x = 1 ', 4e7)) end",
        C,
        None,
        {"LuaCeilingError": CEIL, "LuaError": r"not enough memory"},
    ),
    "collectgarbage step with a huge size": (
        "function() return type(collectgarbage('step', 1e9)) end",
        C,
        None,
        {"ok": r"\['boolean'\]"},
    ),
    # -- reaching outside ---------------------------------------------------------------------
    "load of bytecode": (
        "function() return load('\\27Lua\\84\\0\\25\\147\\13\\10\\26\\10') end",
        C,
        None,
        {"LuaSandboxError": r"load: expected Lua source text, got a precompiled"},
    ),
    "string.dump": (
        "function() return string.dump(print) end",
        C,
        None,
        {"LuaSandboxError": r"string.dump: bytecode is not available"},
    ),
    "debug": (
        "function() return debug.sethook() end",
        C,
        None,
        {"LuaSandboxError": r"'debug' is not available in the procgen_nb Lua sandbox"},
    ),
    "debug through _ENV": (
        "function() return _ENV.debug end",
        C,
        None,
        {"LuaSandboxError": r"'debug' is not available"},
    ),
    "the string metatable": (
        "function() return getmetatable(''), getmetatable('x') == getmetatable('y') end",
        C,
        None,
        {"ok": r"\[False, True\]"},
    ),
    "the string metatable's __index": (
        "function() return getmetatable('').__index end",
        C,
        None,
        {"LuaError": r"attempt to index a boolean value"},
    ),
    "collectgarbage stop": (
        "function() collectgarbage('stop') end",
        C,
        None,
        {"LuaSandboxError": r"collectgarbage: expected one of collect, count, isrunning, step"},
    ),
    # -- results ------------------------------------------------------------------------------
    "a result of shared subtables": (
        "function() local t = {1} for i = 1, 60 do t = {t, t} end return t end",
        3000,
        None,
        {"LuaReturnError": r"result 1: expected at most 2097152 values .*got more"},
    ),
    "a cyclic result": (
        "function() local t = {} t[1] = t return t end",
        C,
        ["List"],
        {"LuaReturnError": r"result 1: expected values nested at most 64 deep"},
    ),
    "converting a large result counts against the ceiling": (
        "function() local t = {} for i = 1, 5e5 do t[i] = {i} end return t end",
        300,
        None,
        {"LuaCeilingError": CEIL},
    ),
    # -- the task library: tasks run under the call's ceiling and memory cap ------------------
    "task: an endless task.spawn loop": (
        "function() while true do task.spawn(function() end) end end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "task: an endless loop spawning endless tasks, under pcall": (
        "function() while true do pcall(task.spawn, function() while true do end end) end end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "task: spawning waiting tasks without end": (
        "function() while true do task.spawn(function() task.wait(1) end) end end",
        C,
        None,
        {"LuaError": r"task.wait: expected at most 10000 scheduled tasks", "LuaCeilingError": CEIL},
    ),
    "task: task.wait in a tight loop": (
        "function() while true do task.wait() end end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "task: task.wait in a tight loop in a task, the call waiting 1e9 s": (
        "function() task.spawn(function() while true do task.wait() end end) task.wait(1e9) end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "task: a deferred task deferring itself without end": (
        "function() local function f() task.defer(f) end f() task.wait() end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "task: deep recursion through task.spawn": (
        "function() local function f(n) task.spawn(f, n + 1) end f(0) end",
        C,
        None,
        {"LuaError": TASK_OVERFLOW, "LuaCeilingError": CEIL},
    ),
    "task: deep recursion through task.spawn under pcall, in a loop": (
        "function() local function f() pcall(task.spawn, f) end while true do f() end end",
        C,
        None,
        {"LuaError": TASK_OVERFLOW, "LuaCeilingError": CEIL},
    ),
    "task: a delayed task looping while the call waits on it": (
        "function() task.delay(0, function() while true do end end) task.wait(1) end",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "task: equal 32 MB strings compared in a loop, in a deferred task": (
        """function()
          local a, b = string.rep('x', 2^25), string.rep('x', 2^25)
          task.defer(function() while true do local _ = (a == b) end end)
          task.wait()
        end""",
        C,
        None,
        {"LuaCeilingError": CEIL},
    ),
    "task: memory grown in tasks": (
        """function()
          local keep = {}
          local function grow() keep[#keep + 1] = string.rep('x', 2^20) .. #keep task.defer(grow) end
          task.spawn(grow)
          task.wait(1e9)
        end""",
        3000,
        None,
        {"LuaError": r"not enough memory", "LuaCeilingError": CEIL},
    ),
    # -- the default ceiling: 5000 ms of CPU time ---------------------------------------------
    "a busy loop under the default ceiling": (
        "function() while true do end end",
        None,
        None,
        {"LuaCeilingError": CEIL},
    ),
}


#: Cases one of whose instructions can build a string of hundreds of MB.
MEMORY_BOUND = {
    "string doubling until memory runs out",
    "string.rep of a short piece, 300 MB",
    "load of a huge chunk",
    "task: memory grown in tasks",
}


def bound_s(ceiling_ms: float | None, copy_s: float = 0.0) -> float:
    """The CPU bound of a case; ``copy_s`` is one max_memory copy (memory-bound cases)."""
    c = (ceiling_ms or 5000.0) / 1000.0
    return max(2 * c, c + 1.0 + 2 * copy_s)


def _copy_s() -> float:
    """CPU seconds this process takes to build a fresh bytes of the state's default
    max_memory (the most one instruction can build) by copy."""
    import inspect

    from procgen_nb.lua import LuaState

    size = inspect.signature(LuaState).parameters["max_memory"].default
    piece = b"x" * (size // 4)
    t0 = time.thread_time()
    whole = piece * 4
    took = time.thread_time() - t0
    del whole, piece
    return took


# -- the worker -------------------------------------------------------------------------------
def _worker() -> None:
    """Runs the named cases in turn; prints one JSON line per case (prefixed)."""
    from procgen_nb.errors import ProcgenError
    from procgen_nb.lua import LuaState

    for name in sys.stdin.read().splitlines():
        src, ceiling, returns, _ = CASES[name]
        lua = LuaState()
        lua.call("function() return 1 end")  # warm
        out = {"name": name, "copy_s": _copy_s() if name in MEMORY_BOUND else 0.0}
        t0 = time.thread_time()
        try:
            value = lua.call(src, ceiling_ms=ceiling, returns=returns, node="escape")
            out.update(outcome="ok", message=repr(value)[:300])
        except ProcgenError as e:
            out.update(outcome=type(e).__name__, message=str(e)[:2000])
        out["cpu"] = time.thread_time() - t0
        # the state stays usable after whatever the case did
        try:
            out["after"] = lua.call("function(a) return a + 1 end", [41])
        except ProcgenError as e:
            out["after"] = f"{type(e).__name__}: {e}"[:300]
        print("@@" + json.dumps(out), flush=True)


def _run_cases(names: list[str]) -> dict[str, dict]:
    """Runs names in worker processes; a case past its wall limit is reported as hung."""
    results: dict[str, dict] = {}
    todo = list(names)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    while todo:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        proc.stdin.write("\n".join(todo) + "\n")
        proc.stdin.close()
        fd = proc.stdout.fileno()
        os.set_blocking(fd, False)
        buf = ""
        while todo:
            name = todo[0]
            # CPU bound + generous slack for a shared 2-core machine (and the start-up)
            limit = time.monotonic() + 4 * bound_s(CASES[name][1], 1.0) + 20
            line = None
            while line is None and time.monotonic() < limit:
                if "\n" in buf:
                    line, buf = buf.split("\n", 1)
                    if not line.startswith("@@"):
                        line = None  # print output of a case
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    time.sleep(0.02)
                    continue
                if not chunk:
                    break  # the worker died
                buf += chunk.decode(errors="replace")
            if line is None:
                results[name] = {"outcome": "hung or crashed", "cpu": None}
                todo.pop(0)
                proc.kill()
                proc.wait()
                break
            got = json.loads(line[2:])
            results[got["name"]] = got
            todo.remove(got["name"])
        else:
            proc.wait(timeout=30)
        proc.stdout.close()
    return results


@pytest.fixture(scope="module")
def corpus():
    return _run_cases(sorted(CASES))


@pytest.mark.parametrize("name", sorted(CASES))
def test_escape_attempt_is_stopped_within_its_bound(corpus, name):
    _, ceiling, _, accepted = CASES[name]
    got = corpus[name]
    assert got["outcome"] in accepted, got
    assert re.search(accepted[got["outcome"]], got["message"]), got
    if got["outcome"] != "ok":
        # the refusal names the call's op and node
        assert got["message"].startswith("cpu.call in node 'escape': "), got
    if got["outcome"] == "LuaCeilingError":
        m = re.search(CEIL, got["message"])
        assert float(m["c"]) == (ceiling or 5000)
    assert got["cpu"] <= bound_s(ceiling, got["copy_s"]), got
    assert got["after"] == [42], got


def test_default_ceiling_is_5000_ms_of_cpu_time(corpus):
    # pins the default: a busy loop with no ceiling given stops at 5000 ms, not before
    got = corpus["a busy loop under the default ceiling"]
    assert "ceiling_ms=5000 ms" in got["message"]
    assert 5.0 <= got["cpu"] <= 5.6, got


def test_sigint_stops_a_runaway_call():
    # a call with a long ceiling is stopped by Ctrl-C, raised in Python as KeyboardInterrupt
    script = (
        "import sys\n"
        "from procgen_nb.lua import LuaState\n"
        "lua = LuaState()\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    lua.call(sys.argv[1], ceiling_ms=600000)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', lua.call('function() return 7 end'), flush=True)\n"
    )
    src = "function() local f; f = function() while true do pcall(f) pcall(error) end end f() end"
    for fn in ("function() while true do pcall(function() while true do end end) end end", src):
        proc = subprocess.Popen(
            [sys.executable, "-c", script, fn],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(0.5)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
        # the second loop overflows the C stack before the signal: a LuaError, no hang
        assert "interrupted [7]" in out or "C stack overflow" in err, (out, err)


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    _worker()
