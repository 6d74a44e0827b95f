"""The Lua side of the sandbox: the chunk that builds it, and the runtime it runs in.

``SETUP`` runs once in a fresh lupa runtime, with the real standard library still in
reach. It installs the CPU-time hook (a count hook on every thread the sandbox runs,
checking the Python-side clock every ``interval`` instructions), builds the sandbox's
globals table (the safe parts of the standard library, ``load`` of text only, a limited
``collectgarbage``, coroutines that carry the hook, ``print`` and ``handle``), and
returns the internal helpers Python needs. Nothing it returns is reachable from the
sandbox: sandboxed chunks see only the table ``env``.
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
local check, py_print, SANDBOX, CEILING, interval, forbidden_list, gc_list = ...
local sethook, gethook, traceback = debug.sethook, debug.gethook, debug.traceback
local real_load, real_setmetatable, real_collectgarbage = load, setmetatable, collectgarbage
local real_xpcall = xpcall
local co_create, co_resume, co_close, co_running =
      coroutine.create, coroutine.resume, coroutine.close, coroutine.running
local type, tostring, error, select, pairs, rawget, xpcall =
      type, tostring, error, select, pairs, rawget, xpcall
local concat, pack, unpack = table.concat, table.pack, table.unpack

-- the CPU-time hook runs every `interval` instructions. It asks Python for the thread's
-- CPU time only once the process's CPU clock (os.clock, never slower than the thread's)
-- moved by `gate` seconds since it last asked, so a check costs a C call, not a Python
-- call. Once a call ran past its ceiling the hook asks Python and raises on every
-- instruction until the call is over, so a pcall cannot keep a loop alive. Lua runs a message handler, and the __close handlers
-- of a coroutine an error killed, with hooks off when the error came from a hook:
-- `killed` remembers such coroutines (closing one does nothing) and xpcall skips its
-- handler for the ceiling's error.
local clock, gate = os.clock, 0.001
local last, tripped = -1, false
local killed = real_setmetatable({}, {__mode = "k"})
local function hook()
  if not tripped then
    local now = clock()
    if now - last < gate then return end
    last = now
  end
  if check() then
    tripped = true
    local co, main = co_running()
    if not main then killed[co] = true end
    sethook(hook, "", 1)
    error(CEILING, 0)
  end
  tripped = false
  local _, _, count = gethook()
  if count ~= interval then sethook(hook, "", interval) end
end
sethook(hook, "", interval)

local function refuse(what, level)
  error(SANDBOX .. " " .. what, (level or 1) + 1)
end

local function copy(t, except)
  local out = {}
  for k, v in pairs(t) do
    if k ~= except then out[k] = v end
  end
  return out
end

local env = {}
local safe = {
  "assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall", "rawequal",
  "rawget", "rawlen", "rawset", "select", "tonumber", "tostring", "type", "xpcall",
  "_VERSION",
}
for _, name in ipairs(safe) do env[name] = _G[name] end
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

-- coroutines carry the hook (Lua does not run a thread's hook in the threads it makes)
local function cocreate(f)
  local co = co_create(f)
  local _, _, count = gethook()
  sethook(co, hook, "", count or interval)
  return co
end
local function coclose(co)
  if killed[co] then return false, CEILING end
  return co_close(co)
end
local function cowrap(f)
  local co = cocreate(f)
  return function(...)
    local r = pack(co_resume(co, ...))
    if r[1] then return unpack(r, 2, r.n) end
    coclose(co)
    error(r[2], 0)
  end
end
env.coroutine = copy(coroutine)
env.coroutine.create = cocreate
env.coroutine.wrap = cowrap
env.coroutine.close = coclose

env.xpcall = function(f, handler, ...)
  if type(handler) ~= "function" then return real_xpcall(f, handler, ...) end
  return real_xpcall(f, function(e)
    if e == CEILING then return e end
    return handler(e)
  end, ...)
end

env.setmetatable = function(t, mt)
  if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
    refuse("setmetatable: __gc finalizers are not available (they would run outside any call)", 2)
  end
  return real_setmetatable(t, mt)
end

env.load = function(chunk, name, mode, chunk_env)
  if mode ~= nil and mode ~= "t" then
    refuse("load: expected mode \"t\" (text chunks only), got " .. tostring(mode), 2)
  end
  if type(chunk) == "string" and chunk:byte(1) == 27 then
    refuse("load: expected Lua source text, got a precompiled (bytecode) chunk", 2)
  end
  local f, err = real_load(chunk, name, "t", chunk_env or env)
  if f == nil and type(err) == "string" and err:find("attempt to load a binary chunk", 1, true) then
    refuse("load: expected Lua source text, got a precompiled (bytecode) chunk", 2)
  end
  return f, err
end

local gc_ok = {}
for _, o in ipairs(gc_list) do gc_ok[o] = true end
env.collectgarbage = function(opt, ...)
  opt = opt or "collect"
  if not gc_ok[opt] then
    refuse("collectgarbage: expected one of " .. concat(gc_list, ", ") .. ", got "
           .. tostring(opt), 2)
  end
  return real_collectgarbage(opt, ...)
end

env.print = function(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = tostring((select(i, ...))) end
  py_print(concat(parts, "\t"))
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
    error("handle: expected a release function or nil, got " .. type(release), 2)
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

local function on_error(e)
  if type(e) ~= "string" then e = tostring(e) end
  return traceback(e, 2)
end

local helpers = {env = env}

-- runs f(...) and answers true, results... or false, message-with-traceback
function helpers.run(f, ...)
  return xpcall(f, on_error, ...)
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
      error("curve:at: expected a time (number), got " .. type(t), 2)
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


def new_runtime(max_memory: int | None) -> Any:
    """Returns a lupa Lua 5.4 runtime with Python access turned off.

    Args:
        max_memory: the most bytes the Lua state may allocate, or None for no limit.

    Returns:
        A ``lupa.lua54.LuaRuntime`` without ``python.eval`` or ``python.builtins``, that
        refuses every Python attribute access.
    """
    return _lupa.LuaRuntime(
        register_eval=False,
        register_builtins=False,
        unpack_returned_tuples=True,
        attribute_filter=_deny_attributes,
        max_memory=max_memory,
    )


LuaRuntimeError = _lupa.LuaError
lua_type = _lupa.lua_type
