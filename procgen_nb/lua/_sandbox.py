"""The Lua side of the sandbox: the chunk that builds it, and the runtime it runs in.

``SETUP`` runs once in a fresh lupa runtime, with the real standard library still in
reach. It installs the CPU-time hook (a count hook on every thread the sandbox runs,
checking the Python-side clock every ``interval`` instructions), builds the sandbox's
globals table (the safe parts of the standard library, ``load`` of text only, a limited
``collectgarbage``, coroutines that carry the hook, ``pcall``/``xpcall``/``coroutine``
functions that cannot catch the ceiling's error or a stack overflow, ``print`` and
``handle``), and returns the internal helpers Python needs. Nothing it returns is
reachable from the sandbox: sandboxed chunks see only the table ``env``. The Python
functions it is given (the clock check, print, the error note) are only ever called
under ``pcall`` from its own code, so no Python object (an exception) reaches a script.
"""

from __future__ import annotations

from typing import Any

import lupa.lua54 as _lupa

#: Prefix of every error the sandbox raises when a script reaches outside it.
SANDBOX_MARK = "procgen_nb sandbox:"
#: The error value the hook raises when a call ran past its ceiling.
CEILING_MARK = "procgen_nb ceiling: the call ran past its ceiling_ms"
#: Globals a script is refused, with a clear error, when it reads them.
FORBIDDEN = (
    "debug",
    "dofile",
    "io",
    "loadfile",
    "loadstring",
    "os",
    "package",
    "python",
    "require",
)
#: collectgarbage options the sandbox allows.
GC_OPTIONS = ("collect", "count", "isrunning", "step")

SETUP = r"""
local check, py_print, note_error, watch_thread, unwatch_thread, SANDBOX, CEILING, interval,
      forbidden_list, gc_list, limits, cap_on, cap_off = ...
local sethook, gethook, traceback = debug.sethook, debug.gethook, debug.traceback
local real_load, real_setmetatable, real_collectgarbage = load, setmetatable, collectgarbage
local real_pcall, real_xpcall, real_error = pcall, xpcall, error
local real_getmetatable = getmetatable
local MEMORY = "not enough memory"  -- Lua's message for an allocation the cap refused
local co_create, co_resume, co_close, co_running =
      coroutine.create, coroutine.resume, coroutine.close, coroutine.running
local type, tostring, select, pairs, next, rawget, ipairs =
      type, tostring, select, pairs, next, rawget, ipairs
local concat, pack, unpack = table.concat, table.pack, table.unpack
local s_find, s_gsub, s_byte, s_format, s_sub = string.find, string.gsub, string.byte, string.format, string.sub
local u_len, min = utf8.len, math.min
local randomseed = math.randomseed

-- The CPU-time hook runs every `interval` instructions. It asks Python for the thread's
-- CPU time only once the process's CPU clock (os.clock, never slower than the thread's)
-- moved by `gate` seconds since it last asked, so a check costs a C call, not a Python
-- call. Once a call ran past its ceiling (`tripped`) the hook asks Python and raises on
-- every instruction until the call is over, and every function that catches errors
-- (pcall, xpcall, coroutine.resume/wrap/close) raises the ceiling's error again, so
-- nothing can keep a stopped call alive. An error Python raises (an interrupt) counts as
-- past the ceiling, and its object never reaches the sandbox. Lua runs a message handler,
-- and the __close handlers of a coroutine an error killed, with hooks off when the error
-- came from a hook: `killed` remembers such coroutines (closing one does nothing) and
-- xpcall skips its handler for the ceiling's error. A stack overflow (C or Lua) cannot be
-- caught either: near the C-stack limit the hook itself cannot run.
local clock, gate = os.clock, 0.001
local last, tripped, running = -1, false, false
local failed = nil  -- the error of a task that failed (see _task): raised again like CEILING
local killed = real_setmetatable({}, {__mode = "k"})
local hook

local function over()
  if not running then return false end  -- a helper Python calls between two calls
  local ok, r = real_pcall(check)
  if not ok then
    if r == MEMORY then return false end  -- the call is at its memory cap: not the clock
    real_pcall(note_error, r)
    return true
  end
  return r == true
end

local function trip()
  tripped = true
  local co, main = co_running()
  if not main then killed[co] = true end
  sethook(hook, "", 1)
  real_error(CEILING, 0)
end

hook = function()
  if not tripped then
    local now = clock()
    if now - last < gate then return end
    last = now
  end
  if over() then trip() end
  tripped = false
  local _, _, count = gethook()
  if count ~= interval then sethook(hook, "", interval) end
end
sethook(hook, "", interval)

-- checks the ceiling from Lua code that runs long C work in pieces (guards)
local function poll()
  if tripped then trip() end
  local now = clock()
  if now - last < gate then return end
  last = now
  if over() then trip() end
end

-- when, on os.clock (which moves at least as fast as the thread's clock), a single long C
-- call of the running call must be over: past its ceiling by at most 0.8 x the ceiling +
-- 50 ms (set by helpers.run)
local until_clock = math.huge
-- stops the call at its ceiling now when a C call of `seconds` that no hook can interrupt
-- would run past until_clock
local function afford(seconds)
  poll()
  if running and until_clock - clock() < seconds then trip() end
end

local function refuse(what, level)
  real_error(SANDBOX .. " " .. what, (level or 1) + 1)
end

local function copy(t, except)
  local out = {}
  for k, v in pairs(t) do
    if k ~= except then out[k] = v end
  end
  return out
end

-- Lua's own overflow errors end with "stack overflow" ("<where>: C stack overflow",
-- "<where>: stack overflow") or are "error in error handling"; a script's own message with
-- those words elsewhere (error("... stack overflow ...")) is caught as any other
local OVERFLOW = "stack overflow"
local function overflow(e)
  return type(e) == "string"
         and (s_sub(e, -#OVERFLOW) == OVERFLOW or e == "error in error handling")
end

-- raises the ceiling's error, or a failed task's, again once the call was stopped
local function stopped()
  if tripped then real_error(CEILING, 0) end
  if failed then real_error(failed, 0) end
end

-- what pcall, xpcall and coroutine.resume answer: the ceiling's error, a failed task's
-- and a stack overflow are raised again instead of answered
local function settle(ok, ...)
  stopped()
  if not ok then
    local e = (...)
    if type(e) == "userdata" then  -- a Python object (an exception): never handed over
      return false, SANDBOX .. " a Python function raised"
    end
    if overflow(e) then real_error(e, 0) end
  end
  return ok, ...
end

local env = {}
local safe = {
  "assert", "error", "getmetatable", "ipairs", "next", "pairs", "rawequal",
  "rawget", "rawlen", "rawset", "select", "tonumber", "tostring", "type", "_VERSION",
}
for _, name in ipairs(safe) do env[name] = _G[name] end
-- no userdata reaches a script; should one, its metatable (shared by every Python object
-- lupa wraps, the sandbox's clock check among them) stays out of reach
env.getmetatable = function(v)
  if type(v) == "userdata" then return nil end
  return real_getmetatable(v)
end
env.math = copy(math)
env.table = copy(table)
env.utf8 = copy(utf8)
env.string = copy(string, "dump")
env.string.dump = function()
  refuse("string.dump: bytecode is not available (load takes Lua source text only)", 2)
end

-- strings index the sandbox's string table, and their metatable stays hidden
local string_mt = getmetatable("")
string_mt.__index = env.string
string_mt.__metatable = false

env.pcall = function(f, ...)
  return settle(real_pcall(f, ...))
end

env.xpcall = function(f, handler, ...)
  if type(handler) ~= "function" then return settle(real_xpcall(f, handler, ...)) end
  return settle(real_xpcall(f, function(e)
    if tripped or failed or e == CEILING or overflow(e) then return e end
    return handler(e)
  end, ...))
end

-- coroutines carry the hook (Lua does not run a thread's hook in the threads it makes);
-- each one a call makes or resumes is kept alive until the call is over and named to the
-- watchdog, which may set its hook's count (see _watchdog)
local live = {}
local function watch(co)
  if not live[co] then
    live[co] = true
    real_pcall(watch_thread, tostring(co))
  end
end
-- a coroutine that is over is no longer named to the watchdog (first), nor kept alive
local function unwatch(co)
  if live[co] then
    local ok, e = real_pcall(unwatch_thread, tostring(co))
    if ok then live[co] = nil else real_pcall(note_error, e) end
  end
end
local function cocreate(f)
  local co = co_create(f)
  local _, _, count = gethook()
  sethook(co, hook, "", count or interval)
  watch(co)
  return co
end
local function coclose(co)
  if killed[co] then return false, CEILING end
  if type(co) == "thread" then watch(co) end
  return settle(co_close(co))
end
local function wrapped(co, ok, ...)
  stopped()
  if ok then return ... end
  coclose(co)
  real_error((...), 0)
end
local function cowrap(f)
  local co = cocreate(f)
  return function(...)
    watch(co)
    return wrapped(co, co_resume(co, ...))
  end
end
env.coroutine = copy(coroutine)
env.coroutine.create = cocreate
env.coroutine.wrap = cowrap
env.coroutine.close = coclose
env.coroutine.resume = function(co, ...)
  if type(co) == "thread" then watch(co) end
  return settle(co_resume(co, ...))
end

env.setmetatable = function(t, mt)
  if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
    refuse("setmetatable: __gc finalizers are not available (they would run outside any call)", 2)
  end
  return real_setmetatable(t, mt)
end

-- text chunks only; a long chunk (or a reader function) is parsed a piece at a time,
-- with the ceiling checked between pieces
local PIECE = 1 << 16
env.load = function(chunk, name, mode, chunk_env)
  if mode ~= nil and mode ~= "t" then
    refuse("load: expected mode \"t\" (text chunks only), got " .. tostring(mode), 2)
  end
  if type(chunk) == "string" and s_byte(chunk, 1) == 27 then
    refuse("load: expected Lua source text, got a precompiled (bytecode) chunk", 2)
  end
  local source = chunk
  if type(chunk) == "string" and #chunk > PIECE then
    local at = 1
    source = function()
      poll()
      local piece = s_sub(chunk, at, at + PIECE - 1)
      at = at + PIECE
      return piece
    end
  elseif type(chunk) == "function" then
    source = function()
      poll()
      return chunk()
    end
  end
  local f, err = real_load(source, name or (type(chunk) == "string" and chunk or "=(load)"),
                           "t", chunk_env or env)
  if tripped then trip() end
  if f == nil and type(err) == "string" and s_find(err, "attempt to load a binary chunk", 1, true) then
    refuse("load: expected Lua source text, got a precompiled (bytecode) chunk", 2)
  end
  return f, err
end

-- a collection runs a step at a time (each step is short) so the ceiling can stop it
local gc_ok = {}
for _, o in ipairs(gc_list) do gc_ok[o] = true end
env.collectgarbage = function(opt, arg)
  opt = opt or "collect"
  if not gc_ok[opt] then
    refuse("collectgarbage: expected one of " .. concat(gc_list, ", ") .. ", got "
           .. tostring(opt), 2)
  end
  if opt == "collect" then
    for _ = 1, 2 do
      repeat until real_collectgarbage("step", 0)
    end
    return 0
  elseif opt == "step" then
    if type(arg) == "number" and arg > 64 then arg = 64 end
    return real_collectgarbage("step", arg)
  end
  return real_collectgarbage(opt)
end

-- math.random: seeded before each call from the call's seed; randomseed() with no
-- argument seeds it again from that seed
local seed1, seed2 = 0, 0
env.math.randomseed = function(...)
  if select("#", ...) == 0 then return randomseed(seed1, seed2) end
  return randomseed(...)
end

-- print never hands a Python error to the sandbox; bytes that are not UTF-8 print as \xNN
env.print = function(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = tostring((select(i, ...))) end
  local text = concat(parts, "\t")
  if u_len(text) == nil then
    text = s_gsub(text, "[\128-\255]", function(c) return s_format("\\x%02X", s_byte(c)) end)
  end
  local ok, e = real_pcall(py_print, text)
  if not ok then
    real_pcall(note_error, e)
    poll()
    real_error("print: the text could not be written", 2)
  end
end

-- handles: opaque tables standing for a resource; `info` knows what each one holds
local handle_info = real_setmetatable({}, {__mode = "k"})
local handle_mt = {
  __metatable = "Handle",
  __newindex = function() refuse("a Handle is opaque and cannot be written", 2) end,
  __tostring = function(h) return "Handle(" .. tostring(handle_info[h].id) .. ")" end,
}
local next_handle = 0
local function new_handle(value, release, py_id)
  local h = real_setmetatable({}, handle_mt)
  if py_id == nil then
    next_handle = next_handle + 1
  end
  handle_info[h] = {id = py_id or next_handle, py = py_id ~= nil, value = value,
                    release = release, released = false}
  return h
end
env.handle = function(value, release)
  if release ~= nil and type(release) ~= "function" then
    real_error("handle: expected a release function or nil, got " .. type(release), 2)
  end
  return new_handle(value, release, nil)
end

local forbidden = {}
for _, name in ipairs(forbidden_list) do forbidden[name] = true end
real_setmetatable(env, {
  __metatable = false,
  __index = function(_, k)
    if forbidden[k] then
      refuse("'" .. tostring(k) .. "' is not available in the procgen_nb Lua sandbox "
             .. "(no os, io, require, dofile, loadfile, load of bytecode, debug, package "
             .. "or python)", 2)
    end
    return nil
  end,
})
env._G = env

-- a message of bytes that are not UTF-8 crosses with those bytes as \xNN
local function on_error(e)
  if type(e) ~= "string" then e = tostring(e) end
  if u_len(e) == nil then
    e = s_gsub(e, "[\128-\255]", function(c) return s_format("\\x%02X", s_byte(c)) end)
  end
  return traceback(e, 2)
end

local helpers = {env = env, poll = poll, afford = afford, refuse = refuse, limits = limits,
                 main_thread = tostring(co_running())}

-- lets the coroutines of the call that is over be collected
function helpers.forget()
  running = false
  live = {}
end

-- runs f(...) with math.random seeded: answers true, results... or false, message
-- The state's max_memory holds only while Lua code of a call runs (cap_on to cap_off):
-- Python hands the arguments over packed in a table made before, and converts the results
-- after, so no allocation lupa makes outside a protected call can fail (that would abort
-- the process); an allocation the cap refuses raises "not enough memory" in the call.
local function finish(...)
  running = false
  cap_off()
  return ...
end
local function pass(...) return ... end
local function capped(f, ...)
  cap_on()
  return pass(f(...))
end
function helpers.run(s1, s2, budget, f, n, args)
  tripped, running, failed = false, true, nil
  until_clock = clock() + budget
  seed1, seed2 = s1, s2
  randomseed(s1, s2)
  return finish(xpcall(capped, on_error, f, unpack(args, 1, n)))
end

-- counts the values a result expands to (a table each time it is reached, so shared
-- subtables count once per path); answers the count, or nil and why past `limit`
local MAX_DEPTH = limits.max_depth
function helpers.measure(limit, ...)
  local count = 0
  local function walk(v, depth)
    count = count + 1
    if count > limit then return "size" end
    if type(v) == "table" and handle_info[v] == nil then
      if depth >= MAX_DEPTH then return "depth" end
      for k, x in next, v do
        count = count + 1
        local why = walk(x, depth + 1)
        if why then return why end
      end
    end
  end
  local r = pack(...)
  for i = 1, r.n do
    local why = walk(r[i], 0)
    if why then return nil, i, why end
  end
  return count
end

-- compiles source in the sandbox: an expression first, then a chunk
function helpers.compile(src, name)
  local f = real_load("return " .. src, name, "t", env)
  if f == nil then
    local err
    f, err = real_load(src, name, "t", env)
    if f == nil then return nil, err end
  end
  return f
end

function helpers.make_curve(keys)
  local n = #keys
  local function at(a, b)
    local t = b
    if type(a) == "number" and b == nil then t = a end
    if type(t) ~= "number" then
      real_error("curve:at: expected a time (number), got " .. type(t), 2)
    end
    local first, last = keys[1], keys[n]
    if t <= first[1] then return first[2] end
    if t >= last[1] then return last[2] end
    for i = 2, n do
      local k1 = keys[i]
      if t <= k1[1] then
        local k0 = keys[i - 1]
        local u = (t - k0[1]) / (k1[1] - k0[1])
        if type(k0[2]) == "number" then return k0[2] + (k1[2] - k0[2]) * u end
        local out = {}
        for j = 1, #k0[2] do out[j] = k0[2][j] + (k1[2][j] - k0[2][j]) * u end
        return out
      end
    end
    return last[2]
  end
  return {keys = keys, at = at}
end

helpers.new_handle = new_handle

-- what the task library (_task) builds on; the sandbox never sees this table
helpers.support = {
  cocreate = cocreate, coclose = coclose, watch = watch, unwatch = unwatch,
  stopped = stopped, fail = function(e) failed = e end,
}

-- answers kind ("py" or "lua"), id, value, release of a handle table, or nil
function helpers.handle_info(h)
  local rec = handle_info[h]
  if rec == nil then return nil end
  return rec.py and "py" or "lua", rec.id, rec.value
end

-- calls a Lua-side handle's release function once; answers whether it called one
function helpers.release_handle(h)
  local rec = handle_info[h]
  if rec == nil or rec.released then return false end
  rec.released = true
  local release, value = rec.release, rec.value
  rec.value = nil
  if release == nil then return false end
  release(value)
  return true
end

helpers.rawget = rawget
helpers.lua_type = type
return helpers
"""


def _deny_attributes(obj: Any, name: Any, is_setting: bool) -> Any:
    """Refuses every attribute of a Python object reached from Lua."""
    raise AttributeError(f"{SANDBOX_MARK} Python attribute {name!r} is not available from Lua")


def new_runtime() -> Any:
    """Returns a lupa Lua 5.4 runtime with Python access turned off.

    Its memory is counted without a limit (``max_memory=0``): ``LuaState`` sets the limit
    only while a call's Lua code runs (``set_max_memory``). A limit from the start would
    abort the process when the standard library or the sandbox does not fit in it.

    Returns:
        A ``lupa.lua54.LuaRuntime`` without ``python.eval`` or ``python.builtins``, that
        refuses every Python attribute access.
    """
    return _lupa.LuaRuntime(
        register_eval=False,
        register_builtins=False,
        unpack_returned_tuples=True,
        attribute_filter=_deny_attributes,
        max_memory=0,
    )


LuaRuntimeError = _lupa.LuaError
LuaRuntimeMemoryError = _lupa.LuaMemoryError
#: The message of a Lua memory error.
MEMORY_MESSAGE = "not enough memory"
lua_type = _lupa.lua_type
