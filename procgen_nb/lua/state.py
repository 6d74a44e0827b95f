"""``LuaState``: a sandboxed Lua 5.4 state (lupa) that runs calls under a CPU-time ceiling.

The sandbox holds the safe parts of the standard library (``math``, ``string`` without
``dump``, ``table``, ``utf8``, ``coroutine``, the base functions), ``load`` of text
chunks only, ``collectgarbage`` limited to collect/count/step/isrunning, ``print``
(to Python's stdout) and ``handle(value, release)``. Reading ``os``, ``io``,
``require``, ``dofile``, ``loadfile``, ``loadstring``, ``debug``, ``package`` or
``python``, loading bytecode, or setting a ``__gc`` finalizer raises ``LuaSandboxError``.
No Python object is reachable: arguments cross as Lua values (see ``_convert``), and an
error a Python function raises reaches a script as a message, never as the object.

The ceiling counts CPU time on the calling thread (``time.thread_time``), so time spent
waiting is not charged. One ceiling covers the whole call: running the chunk that gives
``fn``, the call, and converting its results (a result that expands past
``MAX_RESULT_VALUES`` values, counting a shared subtable each time it is reached, is
refused). A count hook on every thread the call runs (coroutines included) checks it
every ``hook_interval`` instructions; ``pcall``, ``xpcall`` and coroutines cannot catch
the error it raises, nor a stack overflow (near the C-stack limit no hook can run).
Standard functions that loop in C over a count the script chooses are guarded (see
``_guards``): a pattern match whose bounded cost passes a budget runs in Lua (where
the hook runs), and the others work in pieces. One instruction can be long (comparing two long strings): once a
call ran past its ceiling in wall time, a watchdog thread makes the hook run at the next
instruction (see ``_watchdog``). So no call runs more than about max(2 x ceiling,
ceiling + 1 s) of CPU time: a single instruction or C function is bounded by
``max_memory`` (512 MB by default: one copy of that size takes a fraction of a second,
more where the machine maps fresh memory slowly). An interrupt
(Ctrl-C) stops a call too, and is raised again in Python.

Luau's ``task`` library (``spawn``, ``defer``, ``delay``, ``wait``, ``cancel``) runs tasks
as coroutines of the call, on a virtual clock of frames, under the call's ceiling while it
lasts (see ``_task``); tasks a call leaves running resume when ``step`` lets frames pass.

``math.random`` is seeded before each call: with the call's ``seed``, as
``math.randomseed(seed)`` does, or by default from the node's name, so a node draws the
same numbers in every process. A Column reaches a script as a BufferRef whose ``buffer``
is a random token, given per node: a script cannot name a column it was not given.

Limits: a count hook makes tight Lua loops about 2.5 times as slow as unhooked Lua, and a
call costs about 20 us more than a plain lupa call (``benchmarks/lua_ceiling.py``); memory
is bounded by ``max_memory``; the ``__close`` handlers of a coroutine the ceiling stopped
do not run; a Lua function handed to Python and called there directly (not through
``call``) runs without a ceiling.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

from ..columns import Column
from ..errors import (
    BindingError,
    LuaCeilingError,
    LuaError,
    LuaMemoryError,
    LuaReturnError,
    LuaSandboxError,
    ParamsError,
)
from . import _guards, _lmatch, _sandbox, _task, _watchdog
from ._checks import (
    DEFAULT_CEILING_MS as DEFAULT_CEILING_MS,
)
from ._checks import (
    MAX_CEILING_MS as MAX_CEILING_MS,
)
from ._checks import (
    _ceiling,
    _node,
    _pair,
    _print,
    _seed_pair,
    _short,
    _trim_traceback,
)
from ._convert import _MAX_DEPTH, ArgOptions, _Convert
from ._tables import _Tables
from .values import Handle

#: The largest ``hook_interval`` (instructions between two checks of the clock).
MAX_HOOK_INTERVAL = 1_000_000
#: The most values a call's results may expand to (a table counts each time it is reached).
MAX_RESULT_VALUES = 1 << 21
#: The least and the most ``max_memory`` (bytes): the sandbox itself takes about 200 KB.
MIN_MAX_MEMORY = 1 << 20
MAX_MAX_MEMORY = 1 << 48


@dataclasses.dataclass
class _Span:
    """The CPU-time budget of one call: where it started, its deadline and its ceiling."""

    start: float
    deadline: float
    ceiling: float


class LuaState(_Tables, _Convert):
    """A sandboxed Lua state: compiles functions and calls them under a CPU-time ceiling.

    Args:
        max_memory: the most bytes the state may hold while a call runs, from 1 MiB to
            2^48 (a call past it fails with a ``LuaMemoryError``; the state works again
            once what holds the memory is let go), or None for no limit.
        hook_interval: Lua instructions between two checks of the CPU clock, 1 to
            1,000,000.

    Raises:
        ParamsError: a ``hook_interval`` or ``max_memory`` out of range.

    Attributes:
        release_errors: errors raised by Lua release functions that ran deferred (a
            Handle let go while a call was running), oldest first.
    """

    def __init__(self, *, max_memory: int | None = 1 << 29, hook_interval: int = 1000):
        if (
            isinstance(hook_interval, bool)
            or not isinstance(hook_interval, int)
            or not 1 <= hook_interval <= MAX_HOOK_INTERVAL
        ):
            raise ParamsError(
                f"hook_interval: expected a whole number from 1 to {MAX_HOOK_INTERVAL}, "
                f"got {hook_interval!r}"
            )
        if max_memory is not None and (
            isinstance(max_memory, bool)
            or not isinstance(max_memory, int)
            or not MIN_MAX_MEMORY <= max_memory <= MAX_MAX_MEMORY
        ):
            raise ParamsError(
                f"max_memory: expected a whole number of bytes from {MIN_MAX_MEMORY} (1 MiB: "
                f"the sandbox itself takes about 200 KB) to 2^48, or None, got "
                f"{_short(max_memory)}"
            )
        self._max_memory = max_memory
        self._capped = 0
        #: bytes the state held after the collection that followed its last memory error
        self._held_after_error: int | None = None
        self._lock = threading.RLock()
        self._deadline: float | None = None
        self._span: _Span | None = None
        self._tripped = False
        self._signal: BaseException | None = None
        self._depth = 0
        self._pending: list[Any] = []
        self.release_errors: list[LuaError] = []
        self._runtime = _sandbox.new_runtime()
        self._watch = _watchdog.Watch()
        real_load = self._runtime.eval("load")
        setup, err = _pair(real_load(_sandbox.SETUP, "=procgen_nb.sandbox"))
        if setup is None:
            raise LuaError(f"the Lua sandbox does not compile: {err}")
        self._helpers = setup(
            self._check,
            _print,
            self._note_error,
            self._watch.thread,
            self._watch.forget_thread,
            _sandbox.SANDBOX_MARK,
            _sandbox.CEILING_MARK,
            int(hook_interval),
            self._runtime.table_from(list(_sandbox.FORBIDDEN)),
            self._runtime.table_from(list(_sandbox.GC_OPTIONS)),
            self._runtime.table_from({"max_depth": _MAX_DEPTH}),
            self._cap_on,
            self._cap_off,
        )
        self._watch.bind(_watchdog.address(self._helpers.main_thread))
        guards, err = _pair(real_load(_guards.GUARDS, "=procgen_nb.guards"))
        if guards is None:
            raise LuaError(f"the Lua sandbox's guards do not compile: {err}")
        lmatch = real_load(_lmatch.MATCHER, "=procgen_nb.match")()
        limits = self._runtime.table_from(_guards.LIMITS)
        guards(self._helpers.env, self._helpers.poll, limits, lmatch, self._helpers.afford)
        task_limits = {"fps": _task.FPS, "max_tasks": _task.MAX_TASKS, "max_frame": _task.MAX_FRAME}
        self._tasks = real_load(_task.TASK, "=procgen_nb.task")(
            self._helpers.env, self._helpers.support, self._runtime.table_from(task_limits)
        )
        # token -> column, and column -> {node: token}: a token names a column for one node
        self._columns: weakref.WeakValueDictionary[str, Column] = weakref.WeakValueDictionary()
        self._column_ids: weakref.WeakKeyDictionary[Column, dict] = weakref.WeakKeyDictionary()
        self._py_handles: weakref.WeakValueDictionary[int, Handle] = weakref.WeakValueDictionary()
        self._lua_handles: weakref.WeakValueDictionary[int, Handle] = weakref.WeakValueDictionary()
        self._compiled: dict[str, Any] = {}

    # -- public ---------------------------------------------------------------------------
    @property
    def env(self) -> Any:
        """The sandbox's globals table (a lupa table): what scripts see as ``_G``."""
        return self._helpers.env

    def execute(
        self, source: str, *, ceiling_ms: float | None = None, node: str | None = None
    ) -> list:
        """Runs a Lua chunk in the sandbox and returns what it returned.

        Args:
            source: Lua source text (a chunk; globals it sets stay in the state).
            ceiling_ms: CPU-time ceiling (5000 when 0 or None).
            node: the node named in errors (and whose seed ``math.random`` draws from).

        Returns:
            The chunk's results converted as with ``returns=None``.

        Raises:
            ParamsError: a ``ceiling_ms`` that is not a finite number from 0 to a day.
            LuaError: a syntax or runtime error (with its traceback).
            LuaSandboxError: the chunk reached outside the sandbox.
            LuaCeilingError: the chunk ran past its ceiling.
            LuaReturnError: results that expand past ``MAX_RESULT_VALUES`` values.
        """
        with self._lock, self.budget(ceiling_ms, what="lua.execute"):
            f = self._load(source, node, expression=False)
            raw = self._run(f, (), node, "lua.execute")
            return self._results(raw, None, "lua.execute", node)

    def compile(self, fn: Any, *, node: str | None = None, ceiling_ms: float | None = None) -> Any:
        """Returns the Lua function ``fn`` stands for.

        Args:
            fn: Lua source of an expression giving a function
                (``"function(a, b) return a + b end"``, or the name of a global), Lua
                source of a chunk that returns one, or a Lua function of this state.
            node: the node named in errors.
            ceiling_ms: the ceiling for running a chunk (5000 when 0 or None).

        Returns:
            A lupa Lua function. Compiled sources are cached per state, so a chunk runs once.

        Raises:
            BindingError: ``fn`` is neither a string nor a Lua function, or its source does
                not give a function.
            LuaError: the source does not compile, or running the chunk failed.
        """
        if _sandbox.lua_type(fn) == "function":
            return fn
        if not isinstance(fn, str):
            raise BindingError(
                f"fn: expected Lua source or a Lua function, got {type(fn).__name__} {_short(fn)}"
            )
        f = self._compiled.get(fn)
        if f is not None:
            return f
        with self._lock, self.budget(ceiling_ms, what="fn"):
            chunk = self._load(fn, node, expression=True)
            raw = self._run(chunk, (), node, "fn")
        if len(raw) != 1 or _sandbox.lua_type(raw[0]) != "function":
            got = ", ".join(self._kind_of(v) for v in raw) or "nothing"
            raise BindingError(
                f"fn: expected Lua source giving a function, got source giving {got}: {_short(fn)}"
            )
        self._compiled[fn] = raw[0]
        return raw[0]

    def call(
        self,
        fn: Any,
        args: Sequence[Any] = (),
        *,
        returns: Sequence[str] | None = None,
        ceiling_ms: float | None = None,
        node: str | None = None,
        device: bool = False,
        curves: bool = False,
        time: float = 0.0,
        what: str = "cpu.call",
        seed: int | None = None,
    ) -> list:
        """Calls ``fn`` with ``args`` in the sandbox and returns its checked results.

        Args:
            fn: Lua source or a Lua function of this state (see ``compile``).
            args: Python values, converted as ``_convert._Convert._to_lua`` states.
            returns: the type name of each result, or None to take any results.
            ceiling_ms: CPU-time ceiling in milliseconds (5000 when 0 or None), covering
                the chunk that gives ``fn``, the call and the conversion of its results.
            node: the node named in errors; its BufferRefs are its own.
            device: a Geometry reaches Lua as it stands on the device (no readback).
            curves: a Curve reaches Lua as its curve; off, as its value at ``time``.
            time: the cook's time.
            what: the op named in errors.
            seed: ``math.random`` draws as after ``math.randomseed(seed)``; None seeds it
                from the node's name.

        Returns:
            The results as Python values, one per result.

        Raises:
            ParamsError: a ``ceiling_ms`` that is not a finite number from 0 to a day, or a
                ``seed`` that is not a whole number.
            BindingError: an argument no Lua value stands for, or a bad ``fn``.
            LuaError: the function raised (the message holds the Lua traceback).
            LuaSandboxError: it reached outside the sandbox.
            LuaCeilingError: it ran past its ceiling.
            LuaReturnError: a result of another type, or another count, than ``returns``.
        """
        seeds = _seed_pair(node, seed)
        opts = ArgOptions(device=bool(device), curves=bool(curves), time=float(time), node=node)
        with self._lock, self.budget(ceiling_ms, what=what):
            f = self.compile(fn, node=node)
            lua_args = tuple(self._to_lua(a, f"args[{i}]", opts) for i, a in enumerate(args))
            raw = self._run(f, lua_args, node, what, seeds)
            return self._results(raw, returns, what, node)

    @property
    def pending_tasks(self) -> int:
        """Threads with a resumption scheduled (``task.defer``, ``delay``, ``wait``): tasks
        that calls left running, which ``step`` resumes as frames pass."""
        return int(self._tasks.pending())

    @property
    def task_clock(self) -> float:
        """The virtual clock of ``task`` in seconds (frames of 1/60 s since the state was
        made); only the scheduler moves it."""
        return self._tasks.clock() / _task.FPS

    def step(
        self, frames: int = 1, *, ceiling_ms: float | None = None, node: str | None = None
    ) -> int:
        """Lets ``frames`` frames pass: resumes the tasks calls left running as they fall due.

        The deferred queue runs first, then each frame's timers in the order they were set
        (the deferred queue running empty after each), under a CPU-time ceiling of its own:
        a task a call left running is not charged to that call.

        Args:
            frames: frames of 1/60 s to pass, 0 to run the deferred queue only.
            ceiling_ms: CPU-time ceiling (5000 when 0 or None).
            node: the node named in errors.

        Returns:
            The tasks still scheduled.

        Raises:
            ParamsError: ``frames`` not a whole number from 0 to 2^31, or a bad ceiling.
            LuaError: a task raised (the message names it and where its function is).
            LuaCeilingError: the tasks ran past the ceiling (every scheduled task is dropped).
        """
        if isinstance(frames, bool) or not isinstance(frames, int) or not 0 <= frames <= 1 << 31:
            raise ParamsError(f"frames: expected a whole number from 0 to 2^31, got {frames!r}")
        with self._lock, self.budget(ceiling_ms, what="task step"):
            (left,) = self._run(self._tasks.step, (frames,), node, "task step")
        return int(left)

    def cancel_tasks(self) -> None:
        """Drops every scheduled task without running any Lua (their ``__close`` handlers
        do not run)."""
        with self._lock:
            self._tasks.clear()

    @contextlib.contextmanager
    def budget(self, ceiling_ms: float | None, *, what: str = "cpu.call") -> Iterator[None]:
        """Runs the calls inside under one CPU-time ceiling (``cpu.read``: digest and fn).

        A budget inside another keeps the earlier deadline of the two.

        Args:
            ceiling_ms: the ceiling in milliseconds (5000 when 0 or None).
            what: the input named when ``ceiling_ms`` is refused.

        Raises:
            ParamsError: a ``ceiling_ms`` that is not a finite number from 0 to a day.
        """
        ceiling = _ceiling(ceiling_ms, what)
        with self._lock:
            outer = self._span
            now = time.thread_time()
            span = _Span(now, now + ceiling / 1000.0, ceiling)
            if outer is not None and outer.deadline <= span.deadline:
                span = outer
            self._span = span
            try:
                yield
            finally:
                self._span = outer
                if outer is None and self._depth == 0 and self._pending:
                    self._release_pending()

    @property
    def max_memory(self) -> int | None:
        """The most bytes the state may hold while a call runs (None: no limit)."""
        return self._max_memory

    @property
    def memory_used(self) -> int:
        """The bytes the Lua state holds now (the sandbox itself included)."""
        return int(self._runtime.get_memory_used(total=True))

    @property
    def exhausted(self) -> bool:
        """Whether the state's last call ran out of memory and, after a full collection,
        it still holds more than 7/8 of ``max_memory`` (what holds it is reachable: a
        global). Setting those globals to nil (``state.env``, or a call) makes it usable."""
        if self._max_memory is None or self._held_after_error is None:
            return False
        return self.memory_used > self._max_memory - self._max_memory // 8

    # -- running ----------------------------------------------------------------------------
    def _cap_on(self) -> None:
        """Sets the memory limit as a call's Lua code starts (called from Lua)."""
        self._capped += 1
        if self._max_memory is not None:
            self._runtime.set_max_memory(self._max_memory, total=True)

    def _cap_off(self) -> None:
        """Lifts the memory limit as a call's Lua code ends (called from Lua, and from
        ``_run`` in case the call did not get there)."""
        self._capped = max(0, self._capped - 1)
        if self._capped == 0 and self._max_memory is not None:
            self._runtime.set_max_memory(0)

    def _memory_error(self, what: str, node: str | None) -> LuaMemoryError:
        self._runtime.gccollect()
        held = self.memory_used
        self._held_after_error = held
        return LuaMemoryError(
            f"{what} in node {_node(node)}: expected at most max_memory={self._max_memory} "
            f"bytes of Lua memory, got a call that needed more: not enough memory (the state "
            f"holds {held} bytes "
            f"after a full collection; set the globals that hold memory to nil to use it "
            f"again)"
        )

    def _check(self) -> bool:
        try:
            deadline = self._deadline
            if deadline is None:  # no call is running (a helper between two calls)
                return False
            if self._signal is not None:
                return True
            if time.thread_time() > deadline:
                self._tripped = True
                return True
            return False
        except BaseException as e:  # an interrupt: stop the call, raise it once it is out
            self._signal = e
            return True

    def _note_error(self, e: Any) -> None:
        """Keeps an interrupt a Python function raised under Lua, to raise after the call."""
        if isinstance(e, BaseException) and not isinstance(e, Exception):
            self._signal = e

    def _load(self, source: str, node: str | None, expression: bool) -> Any:
        name = "=" + (node or "lua")
        with self._lock:
            if expression:
                f, err = _pair(self._helpers.compile(source, name))
            else:
                f, err = _pair(self._runtime.eval("load")(source, name, "t", self.env))
        if f is None:
            raise LuaError(f"fn in node {_node(node)}: Lua source does not compile: {err}")
        return f

    def _run(
        self, f: Any, args: tuple, node: str | None, what: str, seeds: tuple | None = None
    ) -> tuple:
        if self._span is None:
            with self.budget(None, what=what):
                return self._run(f, args, node, what, seeds)
        span = self._span
        s1, s2 = seeds if seeds is not None else _seed_pair(node, None)
        measured: Any = None
        with self._lock:
            outer = self._deadline
            self._deadline = span.deadline if outer is None else min(outer, span.deadline)
            self._tripped = False
            self._depth += 1
            self._watch.start(span.deadline - time.thread_time())
            try:
                left = self._hard_left(span)
                res = self._helpers.run(s1, s2, left, f, *self._packed(args))
                res = res if isinstance(res, tuple) else (res,)
                if res[0] and any(_sandbox.lua_type(v) == "table" for v in res[1:]):
                    measured = self._helpers.run(
                        s1,
                        s2,
                        self._hard_left(span),
                        self._helpers.measure,
                        *self._packed((MAX_RESULT_VALUES, *res[1:])),
                    )
            except _sandbox.LuaRuntimeMemoryError:
                res = (False, _sandbox.MEMORY_MESSAGE)
            except _sandbox.LuaRuntimeError as e:
                if "cannot mix objects from different Lua runtimes" in str(e):
                    raise BindingError(
                        f"{what} in node {_node(node)}: expected fn and args of this graph's "
                        f"Lua state, got a Lua value of another state"
                    ) from None
                res = (False, str(e))
            except UnicodeDecodeError as e:
                res = e
            finally:
                if outer is None:  # the outermost call: the limit is off whatever happened
                    self._capped = 1
                    self._cap_off()
                self._deadline = outer  # first: a late poke of the watchdog finds no deadline
                self._watch.stop()
                self._helpers.forget()
                self._depth -= 1
                tripped, self._tripped = self._tripped, False
            signal, self._signal = self._signal, None
        if tripped or signal is not None or isinstance(res, UnicodeDecodeError) or not res[0]:
            self._tasks.clear()  # a call that fails drops every scheduled task
        if signal is not None:
            raise signal
        if isinstance(res, UnicodeDecodeError):
            raise LuaReturnError(
                f"{what} in node {_node(node)}: expected strings of UTF-8 text, got bytes "
                f"that are not ({res.reason} at byte {res.start})"
            )
        early = not res[0] and len(res) > 1 and str(res[1]).startswith(_sandbox.CEILING_MARK)
        if tripped or early or time.thread_time() > span.deadline:
            raise self._ceiling_error(what, node, span)
        if not res[0] and len(res) > 1 and res[1] == _sandbox.MEMORY_MESSAGE:
            raise self._memory_error(what, node)
        if not res[0]:
            msg = _trim_traceback(str(res[1]) if len(res) > 1 else "error")
            cls = LuaSandboxError if _sandbox.SANDBOX_MARK in msg else LuaError
            raise cls(f"{what} in node {_node(node)}: Lua error: {msg}")
        if measured is not None:
            measured = measured if isinstance(measured, tuple) else (measured,)
            if not measured[0]:  # not the ceiling (checked above): memory
                raise self._memory_error(what, node)
            if len(measured) > 1 and measured[1] is None:
                pos, why = measured[2], measured[3]
                expected = (
                    f"values nested at most {_MAX_DEPTH} deep"
                    if why == "depth"
                    else f"at most {MAX_RESULT_VALUES} values (a table counts each time it "
                    f"is reached)"
                )
                got = (
                    "deeper (a cycle?)" if why == "depth" else "more (shared or cyclic subtables?)"
                )
                raise LuaReturnError(
                    f"{what} in node {_node(node)}: result {pos}: expected {expected}, got {got}"
                )
        return res[1:]

    @staticmethod
    def _hard_left(span: _Span) -> float:
        """The CPU seconds a single long C call may still run into (``afford``): up to
        1.8 x the ceiling + 50 ms from the call's start, within the goal of 2 x + 100 ms."""
        hard = span.deadline + 0.8 * span.ceiling / 1000.0 + 0.05
        return max(0.0, hard - time.thread_time())

    def _packed(self, args: Sequence[Any]) -> tuple[int, Any]:
        """The count and a table of a call's arguments, made with no memory limit: pushing
        a string past the limit outside a protected call would abort the process."""
        return len(args), self._runtime.table_from({i + 1: a for i, a in enumerate(args)})

    def _results(self, raw: tuple, returns: Any, what: str, node: str | None) -> list:
        """Converts results under the running call's budget."""
        span = self._span

        def over() -> LuaCeilingError | None:
            if span is not None and time.thread_time() > span.deadline:
                return self._ceiling_error(what, node, span)
            return None

        return self._check_returns(raw, returns, what, node, over=over)

    def _ceiling_error(self, what: str, node: str | None, span: _Span) -> LuaCeilingError:
        used = (time.thread_time() - span.start) * 1000.0
        why = (
            "the call was stopped"
            if used > span.ceiling
            else "the call was stopped before a single long C call (string.rep) that its "
            "time left could not pay for"
        )
        return LuaCeilingError(
            f"{what} in node {_node(node)}: expected at most ceiling_ms={span.ceiling:g} ms of "
            f"CPU time, got {used:.1f} ms; {why}"
        )

    # -- values crossing ----------------------------------------------------------------------
    def _table(self, items: Any) -> Any:
        return self._runtime.table_from(items)
