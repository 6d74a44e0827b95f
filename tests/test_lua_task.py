"""Luau's ``task`` library in the Lua sandbox (issue 14 item 6).

The abi seed (``cpu.call``): "ceilingMs (param) refuses a call that ran longer ...,
counting the CPU time the call runs for on the thread that makes it, in every coroutine
it resumes, and in every task it starts (task.spawn, task.defer, task.delay) or component
hook it sets off while the call lasts, so a task it starts and waits for is charged to it
and one it leaves running is charged only what it ran before the call returned: the time
it waits on a frame, a program build, a read-back or a task, and the time its thread
waits for a core on a busy machine, are not counted."

The seed says nothing of the order tasks run in; the sandbox follows Roblox's task
scheduler on a virtual clock of 60 frames a second (``procgen_nb/lua/_task.py``), and
the order tests below are worked by hand from that text. The property test runs random
schedules against ``Model``, a small scheduler written from the same text.
"""

from __future__ import annotations

import heapq
import math
import re
import time
from collections import deque

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from procgen_nb.errors import LuaCeilingError, LuaError, LuaSandboxError, ParamsError
from procgen_nb.lua import LuaState

LOG = "local L = LOG; local function log(s) L[#L + 1] = s end; "


def run(lua, body, **kw):
    """Calls a function whose body logs to the global LOG; returns (log, results)."""
    lua.execute("LOG = {}")
    res = lua.call(f"function() {LOG}{body} end", node="t", **kw)
    return log_of(lua), res


def log_of(lua):
    return lua.call("function() return table.concat(LOG, ' ') end")[0].split()


@pytest.fixture
def lua():
    return LuaState()


@pytest.fixture(scope="module")
def per_ms():
    """Iterations of an empty Lua loop per millisecond of CPU time (calibrated here)."""
    lua = LuaState()
    n = 2_000_000
    best = math.inf
    for _ in range(3):
        t0 = time.thread_time()
        lua.call("function(n) for i = 1, n do end end", [n], ceiling_ms=60_000)
        best = min(best, time.thread_time() - t0)
    return n / (best * 1000.0)


def work(per_ms, ms):
    return f"for i = 1, {int(per_ms * ms)} do end"


# -- the library ------------------------------------------------------------------------------
def test_task_holds_luaus_functions_and_nothing_of_python(lua):
    """ "Calls a Luau function": Luau's task library is there, made of Lua functions only
    (no Python object reaches Lua), and its errors reach a script as strings."""
    kinds = lua.call(
        "function() local out = {} for k, v in pairs(task) do out[#out + 1] = k .. '=' .. type(v) "
        "end table.sort(out) return table.concat(out, ' '), getmetatable(task) end"
    )
    names = "cancel=function defer=function delay=function spawn=function wait=function"
    assert kinds == [names, None]
    errors = lua.call(
        "function() local out = {} for _, f in ipairs({function() task.wait({}) end, "
        "function() task.spawn(42) end, function() task.delay('x', print) end, "
        "function() task.cancel(1) end}) do local ok, e = pcall(f) out[#out + 1] = type(e) end "
        "return table.concat(out, ' ') end"
    )
    assert errors == ["string string string string"]


@pytest.mark.parametrize(
    ("src", "message"),
    [
        ("task.wait(0/0)", "task.wait: expected a finite duration in seconds"),
        ("task.wait(1/0)", "task.wait: expected a finite duration in seconds"),
        ("task.wait('1')", "task.wait: expected a duration in seconds (a number), got string"),
        ("task.delay(1e300, print)", "expected a duration that keeps the virtual clock under"),
        ("task.spawn(nil)", "task.spawn: expected a function or a coroutine, got nil"),
        ("task.defer(coroutine.running())", "expected a function or a suspended coroutine, got a "),
        ("task.cancel(coroutine.running())", "task.cancel: expected a suspended or dead coroutine"),
        ("task.wait(-1/0)", "task.wait: expected a finite duration in seconds, got -inf"),
        ("task.delay(0/0, print)", "task.delay: expected a finite duration in seconds, got "),
        ("task.wait('1')", 'task.wait: expected a duration in seconds (a number), got string "1"'),
        ("task.cancel(1)", "task.cancel: expected a coroutine, got number 1"),
        ("task.cancel('co')", 'task.cancel: expected a coroutine, got string "co"'),
        ("task.delay(1, 'x')", 'task.delay: expected a function or a coroutine, got string "x"'),
        # an integer duration is scaled in floats: math.maxinteger * 60 would wrap around
        ("task.wait(math.maxinteger)", "under 2^53 frames, got 9223372036854775807 s"),
        ("task.delay(153722867280912931, print)", "under 2^53 frames, got 153722867280912931 s"),
    ],
)
def test_bad_arguments_are_refused_with_what_is_accepted(lua, src, message):
    """Errors name the input, the value and what is accepted (the project's convention)."""
    with pytest.raises(LuaError, match=re.escape(message)):
        lua.call(f"function() {src} end", node="t")


# -- order (Roblox's scheduler on frames; hand-worked) -------------------------------------------
def test_spawn_runs_at_once_and_the_call_goes_on_when_it_yields(lua):
    """task.spawn "calls/resumes a function or coroutine immediately"; the call's thread
    goes on when the task yields, and "one it leaves running" stays scheduled."""
    got, _ = run(lua, "log('a') task.spawn(function() log('b') task.wait() log('c') end) log('d')")
    assert got == ["a", "b", "d"]
    assert lua.pending_tasks == 1
    assert lua.step() == 0
    assert log_of(lua) == ["a", "b", "d", "c"]


def test_a_worked_schedule_of_spawn_defer_delay_and_wait(lua):
    """Deferred tasks run at the end of the resumption cycle (first in, first out); timers
    resume at the first frame their duration has passed, in the order they were set, the
    deferred queue running empty after each; ``task.wait`` returns the seconds waited."""
    body = """
      log('m1')
      task.delay(2/60, function() log('delay2') end)
      task.defer(function() log('defer1') task.defer(function() log('defer2') end) end)
      task.spawn(function()
        log('spawn1') task.wait() log('spawn1-f1')
        task.defer(function() log('defer3') end)
        task.wait(1/60) log('spawn1-f2')
      end)
      task.delay(0, function() log('delay0') end)
      log('m2')
      local e = task.wait(2/60)
      log('m3:' .. math.floor(e * 60 + 0.5))
    """
    # seq: delay2 1 (due 2), defer1 2, spawn1 waits 3 (due 1), delay0 4 (due 1), main 5 (due 2)
    # main's wait: defer1, defer2; frame 1: spawn1 (then defer3, its wait seq 8 due 2),
    # delay0; frame 2: delay2 (seq 1 < 5), then main (seq 5 < 8); spawn1 is left running
    got, _ = run(lua, body)
    assert got == "m1 spawn1 m2 defer1 defer2 spawn1-f1 defer3 delay0 delay2 m3:2".split()
    assert lua.pending_tasks == 1
    assert lua.step(0) == 0  # frame 2 is not over: spawn1's timer is due
    assert log_of(lua)[-1] == "spawn1-f2"


def test_wait_returns_the_virtual_seconds_that_passed_in_whole_frames(lua):
    """``task.wait(s)`` resumes at the first frame (1/60 s) at least ``s`` on, at least one
    frame; a negative duration counts as 0. No real time passes."""
    t0 = time.monotonic()
    (frames,) = lua.call(
        "function() local out = {} for _, s in ipairs({0, -5, 1/60, 0.02, 0.05, 0.1, 1e6}) do "
        "out[#out + 1] = math.floor(task.wait(s) * 60 + 0.5) end "
        "out[#out + 1] = math.floor(task.wait() * 60 + 0.5) return out end"
    )
    assert frames == [1, 1, 1, 2, 3, 6, 60_000_000, 1]
    assert time.monotonic() - t0 < 2.0
    assert lua.task_clock == pytest.approx((1 + 1 + 1 + 2 + 3 + 6 + 60_000_000 + 1) / 60)


def test_cancel_drops_a_scheduled_task(lua):
    """task.cancel "cancels a thread, preventing it from being resumed" (Luau)."""
    got, _ = run(
        lua,
        "local a = task.delay(0.1, function() log('a') end) "
        "local b = task.defer(function() log('b') end) "
        "local c = task.spawn(function() task.wait(0.05) log('c') end) "
        "task.delay(0.2, function() log('d') end) "
        "task.cancel(a) task.cancel(b) task.cancel(c) task.wait(1) log('m')",
    )
    assert got == ["d", "m"]
    assert lua.pending_tasks == 0


def test_a_thread_has_one_scheduled_resumption(lua):
    """Scheduling a thread again replaces its first resumption (the sandbox's rule)."""
    got, _ = run(
        lua,
        "local co = coroutine.create(function(x) log(x) end) "
        "task.defer(co, 'first') task.delay(0.1, co, 'second') task.wait(1) log('m')",
    )
    assert got == ["second", "m"]


def test_a_waiting_thread_resumed_by_hand_is_not_resumed_again(lua):
    """A coroutine waiting in task.wait that a script resumes first returns what the
    script passed; the scheduler then leaves it alone."""
    got, _ = run(
        lua,
        "local co = coroutine.create(function() log(tostring(task.wait(1))) "
        "task.wait(5) log('never') end) "
        "coroutine.resume(co) coroutine.resume(co, 'early') task.wait(2) log('m')",
    )
    assert got == ["early", "m"]
    assert lua.pending_tasks == 1  # its second wait


def test_spawn_and_defer_pass_arguments_and_return_the_thread(lua):
    """task.spawn/defer/delay take ``...`` for the function and answer its thread."""
    got, res = run(
        lua,
        "local t = task.spawn(function(a, b) log(a .. b) end, 'x', 'y') "
        "task.defer(function(...) log(select('#', ...)) end, nil, nil) task.wait() "
        "return type(t), coroutine.status(t)",
    )
    assert got == ["xy", "2"]
    assert res == ["thread", "dead"]


def test_the_same_script_gives_the_same_order_every_run():
    """Deterministic scheduling: two fresh states, and one state twice, log the same."""
    body = (
        "for i = 1, 6 do task.delay((i % 3) / 40, function() log('d' .. i) task.wait(i / 90) "
        "log('e' .. i) end) task.defer(function() log('f' .. i) end) end "
        "task.spawn(function() for k = 1, 4 do task.wait() log('s' .. k) end end) task.wait(0.3)"
    )
    logs = [run(LuaState(), body)[0] for _ in range(2)]
    one = LuaState()
    logs += [run(one, body)[0] for _ in range(2)]
    assert logs[0] == logs[1] == logs[2] == logs[3]
    assert len(logs[0]) == 6 * 3 + 4


# -- charging ------------------------------------------------------------------------------------
def test_a_task_the_call_waits_for_is_charged_to_it(lua, per_ms):
    """ "so a task it starts and waits for is charged to it\""""
    with pytest.raises(LuaCeilingError, match="ceiling_ms=150 ms"):
        run(lua, f"task.delay(0, function() {work(per_ms, 1000)} end) task.wait(1)", ceiling_ms=150)
    with pytest.raises(LuaCeilingError, match="ceiling_ms=150 ms"):
        run(
            lua,
            "local done = false "
            f"task.spawn(function() task.wait(0.5) {work(per_ms, 1000)} done = true end) "
            "while not done do task.wait() end",
            ceiling_ms=150,
        )


def test_a_task_left_running_is_charged_what_it_ran_before_the_return(lua, per_ms):
    """ "and one it leaves running is charged only what it ran before the call returned\""""
    body = f"task.spawn(function() {work(per_ms, 20)} task.wait(0.5) {work(per_ms, 1000)} end)"
    t0 = time.thread_time()
    run(lua, body + " return 1", ceiling_ms=150)  # 20 ms before the return: charged, and under
    assert time.thread_time() - t0 < 0.15
    assert lua.pending_tasks == 1
    # ... and what it runs before the return counts: 1000 ms before it is past the ceiling
    with pytest.raises(LuaCeilingError):
        run(lua, f"task.spawn(function() {work(per_ms, 1000)} task.wait() end)", ceiling_ms=150)
    # the rest runs when frames pass, under a ceiling of its own
    run(lua, body, ceiling_ms=150)
    with pytest.raises(LuaCeilingError, match="task step in node 's': expected at most "):
        lua.step(60, ceiling_ms=150, node="s")
    assert lua.pending_tasks == 0  # a step that fails drops every scheduled task


def test_waiting_is_not_charged(lua):
    """ "the time it waits on a frame ... or a task ... [is] not counted": the virtual
    clock moves without CPU time, so a day of waits fits in a 50 ms ceiling."""
    got, res = run(
        lua,
        "local n = 0 task.spawn(function() while true do task.wait(3600) n = n + 1 end end) "
        "return task.wait(86400), n",
        ceiling_ms=50,
    )
    assert res == [86400.0, 23]  # its 24th wake is due with the call's, set after it


# -- hardening: the ceiling and a task's error cannot be caught ----------------------------------
@pytest.mark.parametrize(
    "body",
    [
        "pcall(task.spawn, function() while true do end end)",
        "task.defer(function() while true do end end) pcall(task.wait)",
        "xpcall(task.wait, function() return 1 end, 0.1) task.delay(0, function() end) "
        "task.defer(function() while true do end end) while true do pcall(task.wait) end",
        "coroutine.wrap(function() pcall(task.spawn, function() pcall(function() "
        "while true do end end) end) end)() return 1",
    ],
)
def test_the_ceiling_stops_a_task_through_pcall_and_coroutines(lua, body):
    """ "in every task it starts": the ceiling covers tasks, and pcall, xpcall and
    coroutines cannot catch its stop."""
    with pytest.raises(LuaCeilingError, match="ceiling_ms=100 ms"):
        run(lua, body, ceiling_ms=100)
    assert lua.pending_tasks == 0
    assert lua.call("function(a) return a + 1 end", [41]) == [42]


@pytest.mark.parametrize(
    ("body", "name"),
    [
        ("return pcall(task.spawn, function()\n error('boom') end)", "task.spawn of the function defined at t:1: t:2: boom"),
        ("task.defer(function()\n\n error('boom') end) return pcall(task.wait)", "task.defer of the function defined at t:1: t:3: boom"),
        ("task.delay(0.1, function() error('boom') end) local ok = xpcall(task.wait, print, 1)", "task.delay of the function defined at t:1"),
        ("coroutine.wrap(function() task.spawn(function() error('boom') end) end)()", "task.spawn of the function defined at t:1"),
        ("local co = coroutine.create(function() task.wait() error('boom') end) coroutine.resume(co) task.wait(1)", "a coroutine that called task.wait"),
    ],
)  # fmt: skip
def test_a_task_that_fails_stops_the_call_with_an_error_naming_it(lua, body, name):
    """A task's error surfaces as the package's ``LuaError``, naming the task and where its
    function is defined; pcall, xpcall and coroutines cannot catch it."""
    with pytest.raises(LuaError, match=f"cpu.call in node 't': Lua error: task failed: {name}"):
        run(lua, body)
    assert lua.pending_tasks == 0


def test_a_task_reaching_outside_the_sandbox_is_a_sandbox_error(lua):
    with pytest.raises(LuaSandboxError, match="task.spawn of the function defined at t:1: .*'io'"):
        run(lua, "task.spawn(function() return io end)")


def test_a_task_that_fails_in_a_step_names_it(lua):
    run(lua, "task.delay(1, function()\n error('late') end)")
    with pytest.raises(
        LuaError, match="task step in node 'x': Lua error: task failed: task.delay of"
    ):
        lua.step(120, node="x")


def test_the_memory_cap_holds_in_tasks():
    """Tasks allocate from the state's ``max_memory`` like the call."""
    lua = LuaState(max_memory=32 << 20)
    with pytest.raises(LuaError, match="not enough memory"):
        run(lua, "local t = {} task.spawn(function() for i = 1, 1e8 do t[i] = {i} end end)")
    assert lua.call("function(a) return a + 1 end", [41]) == [42]


def test_scheduled_tasks_are_capped_per_state(lua):
    """At most 10000 resumptions are scheduled in a state: a clean error past that."""
    run(lua, "for i = 1, 9999 do task.defer(print) end")
    with pytest.raises(LuaError, match="task.delay: expected at most 10000 scheduled tasks"):
        run(lua, "task.delay(1, print) task.delay(1, print)")
    assert lua.pending_tasks == 0  # the failed call dropped them


def test_a_scheduled_thread_closed_or_ended_by_hand_is_no_longer_pending(lua):
    """Its turn passes without a resumption and it stops counting (pending_tasks, the cap)."""
    run(lua, "local co = task.delay(1, print) coroutine.close(co)")
    run(lua, "local co = coroutine.create(function() end) task.delay(1, co) coroutine.resume(co)")
    assert lua.pending_tasks == 2
    assert lua.step(120) == 0
    assert lua.pending_tasks == 0


def test_the_cap_counts_scheduled_tasks_not_cancelled_or_replaced_ones(lua):
    """A cancel-and-delay loop (a debounce) or a thread delayed again and again keeps one
    task scheduled: the entries it leaves behind are dropped, not counted against the cap."""
    src = (
        "local t local co = coroutine.create(function() end) for i = 1, 25000 do "
        "if t then task.cancel(t) end t = task.delay(0.5, print) task.delay(1, co) "
        "task.cancel(task.defer(print)) end"
    )
    run(lua, src)
    assert lua.pending_tasks == 2
    assert lua.step(60) == 0


# -- tasks left running: LuaState.step -------------------------------------------------------
def test_step_resumes_tasks_left_running_as_frames_pass(lua):
    run(lua, "task.delay(0.5, function() log('half') end) task.delay(2, function() log('two') end)")
    assert (lua.pending_tasks, log_of(lua)) == (2, [])
    assert lua.step(29) == 2
    assert lua.step(1) == 1
    assert log_of(lua) == ["half"]
    lua.cancel_tasks()
    assert (lua.pending_tasks, lua.step(600), log_of(lua)) == (0, 0, ["half"])


@pytest.mark.parametrize("frames", [-1, 1.5, True, "2", 2**31 + 1])
def test_step_refuses_frames_that_are_not_a_whole_number(lua, frames):
    with pytest.raises(ParamsError, match="frames: expected a whole number from 0 to 2"):
        lua.step(frames)


# -- random schedules against a model ----------------------------------------------------------
DURATIONS = (0.0, 0.01, 1 / 60, 0.02, 0.05, 0.1, 0.25)


class Model:
    """The documented scheduler: spawn at once; defer FIFO at the end of the cycle;
    timers on (due frame, order set), the deferred queue drained after each; the call's
    own wait runs the scheduler in place until its turn."""

    def __init__(self):
        self.now, self.seq, self.log = 0, 0, []
        self.defers: deque = deque()
        self.timers: list = []
        self.entry: dict = {}  # task id -> seq of its scheduled resumption

    @staticmethod
    def frames(s):
        return max(1, math.ceil(s * 60 - 1e-9))

    def schedule(self, tid):
        self.seq += 1
        self.entry[tid] = self.seq
        return self.seq

    def body(self, ops, tid, main):
        self.log.append(f"{tid}<")
        for op in ops:
            if op[0] == "log":
                self.log.append(f"{tid}.{op[1]}")
            elif op[0] == "wait":
                n, start = self.frames(op[1]), self.now
                if main:
                    self.seq += 1
                    self.run_until(self.now + n, self.seq)
                else:
                    q = self.schedule(tid)
                    heapq.heappush(self.timers, (self.now + n, q, tid, start))
                    yield
                self.log.append(f"{tid}.w{self.now - start}")
            elif op[0] == "spawn":
                self.tasks[op[1]] = self.body(op[2], op[1], False)
                self.resume(op[1])
            elif op[0] == "defer":
                self.tasks[op[1]] = self.body(op[2], op[1], False)
                self.defers.append((self.schedule(op[1]), op[1]))
            elif op[0] == "delay":
                self.tasks[op[1]] = self.body(op[3], op[1], False)
                q = self.schedule(op[1])
                heapq.heappush(self.timers, (self.now + self.frames(op[2]), q, op[1], None))
            elif op[0] == "cancel":
                self.entry.pop(op[1], None)
                self.tasks[op[1]] = None
        self.log.append(f"{tid}>")

    def resume(self, tid):
        gen = self.tasks[tid]
        if gen is None:
            return
        try:
            next(gen)
        except StopIteration:
            self.tasks[tid] = None

    def run_entry(self, q, tid):
        if self.entry.get(tid) == q and self.tasks[tid] is not None:
            del self.entry[tid]
            self.resume(tid)

    def drain(self):
        while self.defers:
            self.run_entry(*self.defers.popleft())

    def run_until(self, due, mine):
        self.drain()
        while True:
            while (
                self.timers and self.timers[0][0] <= self.now and self.timers[0][:2] < (due, mine)
            ):
                d, q, tid, _ = heapq.heappop(self.timers)
                self.run_entry(q, tid)
                self.drain()
            if self.now >= due:
                return
            self.now = min(due, self.timers[0][0]) if self.timers else due

    def call(self, ops):
        self.tasks = {}
        for _ in self.body(ops, 0, True):
            raise AssertionError("the call's own thread never yields")

    def pending(self):
        return len(self.entry)


@st.composite
def programs(draw, depth=0, counter=None, main=True):
    counter = counter if counter is not None else [0]
    ops, started = [], []
    for _ in range(draw(st.integers(0, 6 if depth < 2 else 3))):
        kinds = ["log", "wait"] + (["spawn", "defer", "delay"] if depth < 3 else [])
        if main and started:
            kinds.append("cancel")
        kind = draw(st.sampled_from(kinds))
        if kind == "log":
            ops.append(("log", len(ops)))
        elif kind == "wait":
            ops.append(("wait", draw(st.sampled_from(DURATIONS))))
        elif kind == "cancel":
            ops.append(("cancel", draw(st.sampled_from(started))))
        else:
            counter[0] += 1
            tid = counter[0]
            if main:
                started.append(tid)
            sub = draw(programs(depth + 1, counter, False))
            if kind == "delay":
                ops.append(("delay", tid, draw(st.sampled_from(DURATIONS)), sub))
            else:
                ops.append((kind, tid, sub))
    return ops


def lua_body(ops, tid):
    out = [f"log('{tid}<')"]
    for op in ops:
        if op[0] == "log":
            out.append(f"log('{tid}.{op[1]}')")
        elif op[0] == "wait":
            out.append(
                f"do local e = task.wait({op[1]!r}); log('{tid}.w' .. math.floor(e * 60 + 0.5)) end"
            )
        elif op[0] == "cancel":
            out.append(f"task.cancel(T[{op[1]}])")
        elif op[0] == "delay":
            out.append(
                f"T[{op[1]}] = task.delay({op[2]!r}, function() {lua_body(op[3], op[1])} end)"
            )
        else:
            out.append(f"T[{op[1]}] = task.{op[0]}(function() {lua_body(op[2], op[1])} end)")
    out.append(f"log('{tid}>')")
    return " ".join(out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 30))
def test_random_schedules_match_the_model(ops, frames):
    """Random small schedules of spawn/defer/delay/wait/cancel log what the model logs,
    in the call and when frames pass after it, with the same tasks left running."""
    lua = LuaState()
    lua.execute("T = {}")
    got, _ = run(lua, lua_body(ops, 0))
    model = Model()
    model.call(ops)
    assert got == model.log
    assert lua.pending_tasks == model.pending()
    left = lua.step(frames)
    model.run_until(model.now + frames, math.inf)
    assert log_of(lua) == model.log
    assert left == model.pending()
