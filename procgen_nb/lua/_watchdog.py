"""A watchdog thread that makes a running call's count hook fire at its next instruction.

The count hook checks the ceiling every ``hook_interval`` instructions, but one Lua
instruction can be long: comparing two equal 64 MB strings, or concatenating them, is one
instruction. A loop of such instructions would run ``hook_interval`` of them between two
checks. So while a call runs past its ceiling in wall-clock time (which its CPU time
cannot pass first), this thread sets the count of the hook of every Lua thread the call
runs (the main thread and the coroutines it made or resumed, kept alive for the call) to
1 every 20 ms, through ``lua_sethook`` (the C API Lua's own interpreter uses from a
signal handler for Ctrl-C). The hook then runs at the next instruction, checks the CPU
clock and stops the call if it is past its ceiling, or puts its interval back. A single
instruction or C function still runs to its end; its length is bounded by ``max_memory``.

Without ``lua_sethook`` in lupa's module (another build), ``available`` is False and calls
are checked by the count hook alone.
"""

from __future__ import annotations

import ctypes
import threading
import time
import weakref
from typing import Any

import lupa.lua54 as _lupa

#: How often (seconds) the watchdog pokes a call that ran past its ceiling in wall time.
PERIOD = 0.02

try:
    _lib = ctypes.CDLL(_lupa.__file__)
    _sethook = _lib.lua_sethook
    _sethook.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int)
    _sethook.restype = None
    _gethook = _lib.lua_gethook
    _gethook.argtypes = (ctypes.c_void_p,)
    _gethook.restype = ctypes.c_void_p
    _gethookmask = _lib.lua_gethookmask
    _gethookmask.argtypes = (ctypes.c_void_p,)
    _gethookmask.restype = ctypes.c_int
    available = True
except (OSError, AttributeError):  # pragma: no cover - another lupa build
    available = False


def address(text: str) -> int:
    """The lua_State address in ``tostring(thread)`` ("thread: 0x55d0...")."""
    return int(text.rsplit(" ", 1)[-1], 16)


class Watch:
    """The watchdog's view of one LuaState: the threads of the call running now."""

    def __init__(self):
        self.lock = threading.Lock()
        self.main = 0
        self.hook: int | None = None
        self.mask = 0
        self.threads: dict[int, None] = {}
        self.due: float | None = None  # monotonic time past which the call is poked

    def bind(self, main_thread: int) -> None:
        """Watches the state whose main thread (lua_State) is at ``main_thread``, once its
        count hook is set."""
        self.main = main_thread
        if available:
            self.hook = _gethook(main_thread)
            self.mask = _gethookmask(main_thread)

    def start(self, limit_s: float) -> None:
        """A call starts: poke it once it has run ``limit_s`` seconds of wall time."""
        if not self.hook:
            return
        with self.lock:
            self.threads.clear()
            self.due = time.monotonic() + limit_s
        _watchdog().add(self)

    def thread(self, text: str) -> None:
        """A coroutine the call runs (kept alive by the sandbox until the call is over)."""
        with self.lock:
            if self.due is not None:
                self.threads[address(text)] = None

    def forget_thread(self, text: str) -> None:
        """A coroutine that is over: it is not poked any more (before Lua lets it go)."""
        with self.lock:
            self.threads.pop(address(text), None)

    def stop(self) -> None:
        """The call is over: nothing of it is poked any more."""
        with self.lock:
            self.due = None
            self.threads.clear()

    def poke(self, now: float) -> bool:
        """Sets every thread's count hook to fire at once, if the call is due; answers
        whether the call is still running."""
        with self.lock:
            if self.due is None:
                return False
            if now >= self.due:
                for state in (self.main, *self.threads):
                    _sethook(state, self.hook, self.mask, 1)
            return True


class _Watchdog:
    def __init__(self):
        self._cond = threading.Condition()
        self._watches: weakref.WeakSet[Watch] = weakref.WeakSet()
        self._thread = threading.Thread(target=self._loop, name="procgen_nb lua watchdog")
        self._thread.daemon = True
        self._thread.start()

    def add(self, watch: Watch) -> None:
        with self._cond:
            if watch not in self._watches:
                self._watches.add(watch)
                self._cond.notify()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._watches:
                    self._cond.wait()
                watches = list(self._watches)
            time.sleep(PERIOD)
            now = time.monotonic()
            done = [w for w in watches if not w.poke(now)]
            with self._cond:
                for w in done:
                    if w.due is None:
                        self._watches.discard(w)


_the: _Watchdog | None = None
_the_lock = threading.Lock()


def _watchdog() -> Any:
    global _the
    if _the is None:
        with _the_lock:
            if _the is None:
                _the = _Watchdog()
    return _the
