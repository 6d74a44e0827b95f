"""``LuaState``: a sandboxed Lua 5.4 state (lupa) that runs calls under a CPU-time ceiling.

The sandbox holds the safe parts of the standard library (``math``, ``string`` without
``dump``, ``table``, ``utf8``, ``coroutine``, the base functions), ``load`` of text
chunks only, ``collectgarbage`` limited to collect/count/step/isrunning, ``print``
(to Python's stdout) and ``handle(value, release)``. Reading ``os``, ``io``,
``require``, ``dofile``, ``loadfile``, ``loadstring``, ``debug``, ``package`` or
``python``, loading bytecode, or setting a ``__gc`` finalizer raises ``LuaSandboxError``.
No Python object is reachable: arguments cross as Lua values (see ``_convert``).

The ceiling counts CPU time on the calling thread (``time.thread_time``), so time spent
waiting is not charged; a count hook on every thread the call runs (coroutines included)
checks it every ``hook_interval`` instructions and stops a runaway call. Limits: a count
hook makes tight Lua loops about twice as slow as unhooked Lua; one long C call (a huge
``string.rep``, a pathological pattern match) is not interrupted, only refused once it
returns, and memory is bounded by ``max_memory``; the ``__close`` handlers of a coroutine
the ceiling stopped do not run.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

from ..columns import Column
from ..errors import BindingError, LuaCeilingError, LuaError, LuaReturnError, LuaSandboxError
from . import _sandbox
from ._convert import ArgOptions, check_returns, kind_of, to_lua
from .values import Handle, _lua_handle

#: The ceiling a call gets when ``ceiling_ms`` is 0 or None.
DEFAULT_CEILING_MS = 5000.0


class LuaState:
    """A sandboxed Lua state: compiles functions and calls them under a CPU-time ceiling.

    Args:
        max_memory: the most bytes the state may allocate (a call past it fails with a
            ``LuaError``), or None for no limit.
        hook_interval: Lua instructions between two checks of the CPU clock.

    Attributes:
        release_errors: errors raised by Lua release functions that ran deferred (a
            Handle let go while a call was running), oldest first.
    """

    def __init__(self, *, max_memory: int | None = 1 << 30, hook_interval: int = 1000):
        if hook_interval < 1:
            raise BindingError(f"hook_interval: expected a number >= 1, got {hook_interval!r}")
        self._lock = threading.RLock()
        self._deadline: float | None = None
        self._tripped = False
        self._depth = 0
        self._pending: list[Any] = []
        self.release_errors: list[LuaError] = []
        self._runtime = _sandbox.new_runtime(max_memory)
        setup, err = _pair(self._runtime.eval("load")(_sandbox.SETUP, "=procgen_nb.sandbox"))
        if setup is None:
            raise LuaError(f"the Lua sandbox does not compile: {err}")
        self._helpers = setup(
            self._check,
            _print,
            _sandbox.SANDBOX_MARK,
            _sandbox.CEILING_MARK,
            int(hook_interval),
            self._runtime.table_from(list(_sandbox.FORBIDDEN)),
            self._runtime.table_from(list(_sandbox.GC_OPTIONS)),
        )
        self._columns: weakref.WeakValueDictionary[int, Column] = weakref.WeakValueDictionary()
        self._column_ids: weakref.WeakKeyDictionary[Column, int] = weakref.WeakKeyDictionary()
        self._next_buffer = 0
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
            node: the node named in errors.

        Returns:
            The chunk's results converted as with ``returns=None``.

        Raises:
            LuaError: a syntax or runtime error (with its traceback).
            LuaSandboxError: the chunk reached outside the sandbox.
            LuaCeilingError: the chunk ran past its ceiling.
        """
        f = self._load(source, node, expression=False)
        raw = self._run(f, (), ceiling_ms, node, "lua.execute")
        return check_returns(self, raw, None, "lua.execute", node)

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
        chunk = self._load(fn, node, expression=True)
        raw = self._run(chunk, (), ceiling_ms, node, "fn")
        if len(raw) != 1 or _sandbox.lua_type(raw[0]) != "function":
            got = ", ".join(kind_of(self, v) for v in raw) or "nothing"
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
    ) -> list:
        """Calls ``fn`` with ``args`` in the sandbox and returns its checked results.

        Args:
            fn: Lua source or a Lua function of this state (see ``compile``).
            args: Python values, converted as ``_convert.to_lua`` states.
            returns: the type name of each result, or None to take any results.
            ceiling_ms: CPU-time ceiling in milliseconds (5000 when 0 or None).
            node: the node named in errors.
            device: a Geometry reaches Lua as it stands on the device (no readback).
            curves: a Curve reaches Lua as its curve; off, as its value at ``time``.
            time: the cook's time.
            what: the op named in errors.

        Returns:
            The results as Python values, one per result.

        Raises:
            BindingError: an argument no Lua value stands for, or a bad ``fn``.
            LuaError: the function raised (the message holds the Lua traceback).
            LuaSandboxError: it reached outside the sandbox.
            LuaCeilingError: it ran past its ceiling.
            LuaReturnError: a result of another type, or another count, than ``returns``.
        """
        f = self.compile(fn, node=node, ceiling_ms=ceiling_ms)
        opts = ArgOptions(device=bool(device), curves=bool(curves), time=float(time))
        with self._lock:
            lua_args = tuple(to_lua(self, a, f"args[{i}]", opts) for i, a in enumerate(args))
            raw = self._run(f, lua_args, ceiling_ms, node, what)
            return check_returns(self, raw, returns, what, node)

    # -- running ----------------------------------------------------------------------------
    def _check(self) -> bool:
        deadline = self._deadline
        if deadline is not None and time.thread_time() > deadline:
            self._tripped = True
            return True
        return False

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
        self, f: Any, args: tuple, ceiling_ms: float | None, node: str | None, what: str
    ) -> tuple:
        ceiling = _ceiling(ceiling_ms)
        with self._lock:
            outer = self._deadline
            start = time.thread_time()
            self._deadline = start + ceiling / 1000.0
            if outer is not None:
                self._deadline = min(outer, self._deadline)
            self._tripped = False
            self._depth += 1
            try:
                res = self._helpers.run(f, *args)
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
                used = (time.thread_time() - start) * 1000.0
                self._depth -= 1
                self._deadline = outer
                tripped, self._tripped = self._tripped, False
            if self._depth == 0 and self._pending:
                self._release_pending()
        if isinstance(res, UnicodeDecodeError):
            raise LuaReturnError(
                f"{what} in node {_node(node)}: expected strings of UTF-8 text, got bytes "
                f"that are not ({res.reason} at byte {res.start})"
            )
        res = res if isinstance(res, tuple) else (res,)
        if tripped or used > ceiling:
            raise LuaCeilingError(
                f"{what} in node {_node(node)}: expected at most ceiling_ms={ceiling:g} ms of "
                f"CPU time, got {used:.1f} ms; the call was stopped"
            )
        if not res[0]:
            msg = _trim_traceback(str(res[1]) if len(res) > 1 else "error")
            cls = LuaSandboxError if _sandbox.SANDBOX_MARK in msg else LuaError
            raise cls(f"{what} in node {_node(node)}: Lua error: {msg}")
        return res[1:]

    # -- values crossing ----------------------------------------------------------------------
    def _table(self, items: Any) -> Any:
        return self._runtime.table_from(items)

    def _buffer_table(self, col: Column) -> Any:
        bid = self._column_ids.get(col)
        if bid is None:
            self._next_buffer += 1
            bid = self._next_buffer
            self._column_ids[col] = bid
            self._columns[bid] = col
        count = col.live.capacity if col.live is not None else len(col)
        entries: dict[str, Any] = {
            "buffer": bid,
            "type": col.type,
            "count": count,
            "lanes": col.lanes,
            "element": col.element(),
        }
        if col.live is not None:
            entries["live"] = True
            entries["capacity"] = col.live.capacity
        return self._table(entries)

    def _handle_table(self, h: Handle) -> Any:
        if h._origin == "lua" and getattr(h, "_lua_table", None) is not None:
            return h._lua_table
        self._py_handles[h.id] = h
        return self._helpers.new_handle(None, None, h.id)

    def _handle_info(self, t: Any) -> tuple | None:
        info = self._helpers.handle_info(t)
        if info is None or not isinstance(info, tuple):
            return None
        return info

    def _handle_from_lua(self, kind: str, hid: int, value: Any, table: Any) -> Handle | None:
        if kind == "py":
            return self._py_handles.get(hid)
        h = self._lua_handles.get(hid)
        if h is None:
            release = _LuaRelease(weakref.ref(self), table)
            h = _lua_handle(value, release, f"lua{hid}")
            h._lua_table = table
            self._lua_handles[hid] = h
        return h

    def _release_lua(self, table: Any) -> None:
        with self._lock:
            if self._depth:
                self._pending.append(table)
                return
            self._run(self._helpers.release_handle, (table,), None, None, "handle release")

    def _release_pending(self) -> None:
        pending, self._pending = self._pending, []
        for table in pending:
            try:
                self._run(self._helpers.release_handle, (table,), None, None, "handle release")
            except LuaError as e:
                self.release_errors.append(e)


class _LuaRelease:
    """Releases a Lua-side handle in its state (deferred while a call is running)."""

    def __init__(self, state: weakref.ref, table: Any):
        self._state = state
        self._table = table

    def __call__(self) -> None:
        state, table = self._state(), self._table
        self._table = None
        if state is not None and table is not None:
            state._release_lua(table)


def _pair(res: Any) -> tuple[Any, Any]:
    if isinstance(res, tuple):
        return res[0], (res[1] if len(res) > 1 else None)
    return res, None


def _ceiling(ceiling_ms: float | None) -> float:
    if ceiling_ms is None or ceiling_ms == 0:
        return DEFAULT_CEILING_MS
    if isinstance(ceiling_ms, bool) or not isinstance(ceiling_ms, int | float) or ceiling_ms < 0:
        raise BindingError(f"ceiling_ms: expected a number >= 0 (0 for 5000), got {ceiling_ms!r}")
    return float(ceiling_ms)


def _node(node: str | None) -> str:
    return repr(node) if node is not None else "<outside a cook>"


def _print(text: str) -> None:
    print(text)


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _trim_traceback(msg: str) -> str:
    """Drops the sandbox's own frames (the xpcall that runs every call) from a traceback."""
    lines = msg.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == "[C]: in function 'xpcall'":
            return "\n".join(lines[:i])
    return msg
