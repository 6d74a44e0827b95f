"""Luau's ``task`` library in the sandbox: ``spawn``, ``defer``, ``delay``, ``wait``, ``cancel``.

The 0.1 interface's ``cpu.call`` counts "the CPU time the call runs for ... in every task it
starts (task.spawn, task.defer, task.delay) ... while the call lasts, so a task it starts
and waits for is charged to it and one it leaves running is charged only what it ran
before the call returned: the time it waits on a frame, a program build, a read-back or a
task ... [is] not counted". Tasks are coroutines of the sandbox (each carries the count
hook, and the watchdog sees it while it runs), so they run on the calling thread under
the call's ceiling and memory cap, and the ceiling's error cannot be caught in them.

Scheduling is deterministic, on a virtual clock of frames (``FPS`` a second) that only
the scheduler moves; nothing sleeps:

- ``task.spawn(f or thread, ...)`` resumes it at once; the caller goes on when it yields
  or ends. ``task.defer(f or thread, ...)`` queues it (first in, first out) to the end of
  the current resumption cycle: when the thread the scheduler resumed (or the call's own
  thread, when it waits) yields or ends. ``task.delay(s, f or thread, ...)`` resumes it at
  the first frame at least ``s`` seconds on (at least one frame). Each returns the thread.
- ``task.wait(s)`` yields until the first frame at least ``s`` seconds on (at least one
  frame, ``task.wait()`` the next one) and returns the seconds of virtual time that
  passed. Timers due at one frame resume in the order they were set, and after each one
  the deferred queue runs empty. In the call's own thread (not a coroutine) ``task.wait``
  runs the scheduler in place: deferred tasks, then each frame's timers, the clock
  jumping over empty frames, until its own turn.
- ``task.cancel(thread)`` drops the thread's scheduled resumption and closes it.
- A thread has at most one scheduled resumption: scheduling it again replaces the first.
  A duration is a finite number of seconds (a negative one counts as 0).
- The call returns when its function returns; tasks still scheduled are left running (as
  Roblox leaves them for later frames) and are not charged to the call. They resume only
  when frames pass: ``LuaState.step`` runs them under a ceiling of its own. A call that
  fails drops every scheduled task. At most ``max_tasks`` resumptions are scheduled in a
  state at a time.
- A task that raises an error stops the call (or the step) with an error naming the task
  and where its function was defined; like the ceiling, ``pcall`` cannot catch it.
"""

from __future__ import annotations

#: Frames in a second of the virtual clock (Roblox's Heartbeat rate).
FPS = 60
#: The most resumptions (deferred, delayed, waiting) scheduled in one state at a time.
MAX_TASKS = 10_000
#: The virtual clock stops at 2^53 frames (a duration past it is refused).
MAX_FRAME = 1 << 53

TASK = r"""
local env, support, limits = ...
local cocreate, coclose, watch, unwatch, stopped, fail =
      support.cocreate, support.coclose, support.watch, support.unwatch, support.stopped,
      support.fail
local co_resume, co_status, co_running, co_yield, co_isyieldable =
      coroutine.resume, coroutine.status, coroutine.running, coroutine.yield,
      coroutine.isyieldable
local traceback, getinfo = debug.traceback, debug.getinfo
local type, tostring, error, pcall, setmetatable = type, tostring, error, pcall, setmetatable
local pack, unpack, ceil = table.pack, table.unpack, math.ceil
local s_format, s_sub = string.format, string.sub
local FPS, MAX, MAX_FRAME = limits.fps, limits.max_tasks, limits.max_frame
local FPS_F = FPS + 0.0

local now = 0                                     -- the virtual clock, in frames
local seq = 0                                     -- the order resumptions were scheduled in
local ticket = setmetatable({}, {__mode = "k"})   -- thread -> its scheduled resumption
local names = setmetatable({}, {__mode = "k"})    -- thread -> what errors call it
local nticket = 0                                 -- threads with a scheduled resumption
local defers, dhead, dtail = {}, 1, 0             -- the deferred queue
local heap, hn = {}, 0                            -- timers: a binary heap on (due, seq)

local function before(a, b)
  return a.due < b.due or (a.due == b.due and a.seq < b.seq)
end
local function push(e)
  hn = hn + 1
  local i = hn
  heap[i] = e
  while i > 1 do
    local p = i // 2
    if not before(heap[i], heap[p]) then break end
    heap[i], heap[p] = heap[p], heap[i]
    i = p
  end
end
local function pop()
  local top = heap[1]
  heap[1] = heap[hn]
  heap[hn] = nil
  hn = hn - 1
  local i = 1
  while true do
    local l, r, m = 2 * i, 2 * i + 1, i
    if l <= hn and before(heap[l], heap[m]) then m = l end
    if r <= hn and before(heap[r], heap[m]) then m = r end
    if m == i then break end
    heap[i], heap[m] = heap[m], heap[i]
    i = m
  end
  return top
end

-- drops the entries of the queue and the heap that were cancelled or replaced (a
-- cancel-and-delay loop leaves one a turn), in their order
local function compact()
  local live = {}
  for i = dhead, dtail do
    local e = defers[i]
    if ticket[e.co] == e.seq then live[#live + 1] = e end
  end
  defers, dhead, dtail = live, 1, #live
  local old, n = heap, hn
  heap, hn = {}, 0
  for i = 1, n do
    if ticket[old[i].co] == old[i].seq then push(old[i]) end
  end
end

local function set_ticket(co, what)
  if ticket[co] == nil and nticket >= MAX then
    error(what .. ": expected at most " .. MAX .. " scheduled tasks in a Lua state, got more "
          .. "(tasks left running by earlier calls count; LuaState.step runs them and "
          .. "cancel_tasks drops them)", 3)
  end
  if dtail - dhead + 1 + hn >= 2 * MAX then compact() end  -- at most MAX are live
  if ticket[co] == nil then nticket = nticket + 1 end
  seq = seq + 1
  ticket[co] = seq
  return seq
end
local function clear_ticket(co)
  if ticket[co] ~= nil then
    ticket[co] = nil
    nticket = nticket - 1
  end
end

-- a value as errors name it: its type, and a number or a short string itself
local function show(v)
  local kind = type(v)
  if kind == "number" then return kind .. " " .. tostring(v) end
  if kind == "string" then return kind .. " " .. s_format("%q", s_sub(v, 1, 40)) end
  return kind
end

local function where(f)
  local info = getinfo(f, "S")
  if info.what == "C" then return "a standard function" end
  return "the function defined at " .. info.short_src .. ":" .. info.linedefined
end

-- the thread a task runs in: a new coroutine of the sandbox for a function
local function thread_of(what, f)
  local kind = type(f)
  if kind == "function" then
    local co = cocreate(f)
    names[co] = what .. " of " .. where(f)
    return co
  elseif kind == "thread" then
    local st = co_status(f)
    if st ~= "suspended" then
      error(what .. ": expected a function or a suspended coroutine, got a " .. st
            .. " coroutine", 3)
    end
    if names[f] == nil then names[f] = what .. " of a coroutine" end
    return f
  end
  error(what .. ": expected a function or a coroutine, got " .. show(f), 3)
end

local function frames_of(what, s)
  if s == nil then return 1 end
  if type(s) ~= "number" then
    error(what .. ": expected a duration in seconds (a number), got " .. show(s), 3)
  end
  if s ~= s or s == 1 / 0 or s == -1 / 0 then
    error(what .. ": expected a finite duration in seconds, got " .. tostring(s), 3)
  end
  local n = ceil(s * FPS_F - 1e-9)  -- in floats: an integer's product would wrap around
  if n < 1 then n = 1 end
  if now + n > MAX_FRAME then
    error(what .. ": expected a duration that keeps the virtual clock under 2^53 frames, got "
          .. tostring(s) .. " s", 3)
  end
  return n
end

local function name_of(co)
  return names[co] or "a coroutine that called task.wait"
end

local function resumed(co, ok, ...)
  stopped()  -- the ceiling stopped the call, or another task failed: raise that again
  if not ok then
    local text = ...
    if type(text) ~= "string" then  -- at the C-stack limit even a pcall fails
      local okm, t = pcall(tostring, text)
      text = (okm and type(t) == "string") and t or "(an error object)"
    end
    local msg = traceback(co, "task failed: " .. name_of(co) .. ": " .. text)
    fail(msg)
    error(msg, 0)
  end
  if co_status(co) == "dead" then unwatch(co) end
end
local function resume(co, ...)
  watch(co)
  return resumed(co, co_resume(co, ...))
end

-- resumes an entry of the queue or the heap, unless it was cancelled or replaced, or its
-- thread was closed or ended by hand meanwhile (its turn is over all the same)
local function run(e)
  local co = e.co
  if ticket[co] ~= e.seq then return end
  clear_ticket(co)
  if co_status(co) ~= "suspended" then return end
  if e.start ~= nil then
    resume(co, (now - e.start) / FPS)
  else
    resume(co, unpack(e.args, 1, e.args.n))
  end
end

local function drain()
  while dhead <= dtail do
    local e = defers[dhead]
    defers[dhead] = nil
    dhead = dhead + 1
    run(e)
  end
  defers, dhead, dtail = {}, 1, 0
end

-- runs the scheduler until frame `due`, where an entry (due, mine) would resume
local function run_until(due, mine)
  drain()
  while true do
    local e = heap[1]
    while e ~= nil and e.due <= now and (e.due < due or e.seq < mine) do
      pop()
      run(e)
      drain()
      e = heap[1]
    end
    if now >= due then return end
    now = (e ~= nil and e.due < due) and e.due or due
  end
end

local task = {}

task.spawn = function(f, ...)
  local co = thread_of("task.spawn", f)
  clear_ticket(co)
  resume(co, ...)
  return co
end

task.defer = function(f, ...)
  local co = thread_of("task.defer", f)
  local s = set_ticket(co, "task.defer")
  dtail = dtail + 1
  defers[dtail] = {co = co, seq = s, args = pack(...)}
  return co
end

task.delay = function(s, f, ...)
  local n = frames_of("task.delay", s)
  local co = thread_of("task.delay", f)
  local q = set_ticket(co, "task.delay")
  push({co = co, seq = q, due = now + n, args = pack(...)})
  return co
end

local function waited(co, q, ...)
  if ticket[co] == q then clear_ticket(co) end  -- resumed by someone else first
  return ...
end

task.wait = function(s)
  local n = frames_of("task.wait", s)
  local co, main = co_running()
  if main then
    local start = now
    seq = seq + 1
    run_until(now + n, seq)
    return (now - start) / FPS
  end
  if not co_isyieldable() then
    error("task.wait: expected a thread that can yield, got one inside a C function "
          .. "(a string.gsub or table.sort callback, a metamethod called from C)", 2)
  end
  local q = set_ticket(co, "task.wait")
  push({co = co, seq = q, due = now + n, start = now})
  return waited(co, q, co_yield())
end

task.cancel = function(co)
  if type(co) ~= "thread" then
    error("task.cancel: expected a coroutine, got " .. show(co), 2)
  end
  local st = co_status(co)
  if st == "running" or st == "normal" then
    error("task.cancel: expected a suspended or dead coroutine, got a " .. st .. " one", 2)
  end
  clear_ticket(co)
  if st == "suspended" then coclose(co) end
end

env.task = task

local api = {}
-- frames pass after a call: the deferred queue runs, then each frame's timers
function api.step(frames)
  run_until(now + frames, 1 / 0)
  return nticket
end
function api.clear()
  ticket = setmetatable({}, {__mode = "k"})
  nticket, defers, dhead, dtail, heap, hn = 0, {}, 1, 0, {}, 0
end
function api.pending() return nticket end
function api.clock() return now end
return api
"""
