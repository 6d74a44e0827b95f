"""``ops.cpu.call`` and ``ops.cpu.read``: Lua functions called on the CPU.

Both run ``fn`` in the graph's Lua state (``current_cook().lua``; a module-level
``LuaState`` outside a cook) under a CPU-time ceiling, and answer a ``CallResult``
whose ``values`` are the results, checked against ``returns``. ``cpu.call`` with
``pure`` on is made once per graph for the same function and arguments: its results are
constants of the plan (the cook report shows "folded"). ``cpu.read`` also calls
``digest`` with the same values and reports what it answered in
``current_cook().digests``, so the graph cooks again when the state it reads moves.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from ..columns import Record
from ..dynamic import (
    apply,
    constant_or_dynamic,
    evaluate,
    is_dynamic,
    leaves,
    mark_host,
    peek,
)
from ..errors import BindingError, LuaMemoryError, LuaReturnError
from ..lua import RETURN_TYPES, CallResult, Curve, LuaState
from ..lua._convert import canon
from ..lua._sandbox import lua_type
from ..lua.state import _ceiling
from ._op import CookScope, Op, current_cook, op

_default_state: LuaState | None = None


def _state(scope: CookScope | None) -> LuaState:
    """The graph's Lua state, or the module-level one outside a cook."""
    global _default_state
    if scope is not None:
        lua = scope.lua
        if lua is not None:
            return lua
    if _default_state is None:
        _default_state = LuaState()
    return _default_state


def _out_of_memory(state: LuaState, e: LuaMemoryError) -> LuaMemoryError:
    """The error to raise for a call that ran the state out of memory: the process's own
    state, still full after a collection, is replaced by a fresh one, and the error says so."""
    global _default_state
    if state is _default_state and state.exhausted:
        _default_state = None
        return LuaMemoryError(
            f"{e}; the process's Lua state (outside a cook) was still full, so it was replaced "
            f"by a fresh one: its globals are gone"
        )
    return e


def _check_params(
    name: str, fn: Any, args: Any, returns: Any, ceiling_ms: Any, flags: dict[str, Any]
) -> tuple[list, list[str] | None]:
    if not (isinstance(fn, str) or lua_type(fn) == "function"):
        raise BindingError(
            f"{name} fn: expected Lua source or a Lua function, got {type(fn).__name__} "
            f"{_short(fn)}"
        )
    if args is None:
        args = []
    if not isinstance(args, list | tuple):
        raise BindingError(f"{name} args: expected a list of values, got {_short(args)}")
    if returns is not None:
        if isinstance(returns, str) or not isinstance(returns, Sequence):
            raise BindingError(
                f"{name} returns: expected a list of type names, got {_short(returns)}"
            )
        for i, t in enumerate(returns):
            if t not in RETURN_TYPES:
                raise BindingError(
                    f"{name} returns[{i + 1}]: expected one of {', '.join(RETURN_TYPES)}, got {t!r}"
                )
        returns = list(returns)
    _ceiling(ceiling_ms, name)  # ParamsError for NaN, infinities, negatives, past a day
    for flag, value in flags.items():
        if not isinstance(value, bool):
            raise BindingError(f"{name} {flag}: expected True or False, got {value!r}")
    return list(args), returns


def _fold_key(fn: Any, args: list, returns: Any, device: bool, curves: bool) -> Any:
    """The memo key of a pure call, or None when an argument is not known at planning."""
    try:
        digest = hashlib.sha256(repr(canon(args)).encode()).hexdigest()
    except TypeError:
        return None
    # a Lua function is known by its Python wrapper (kept alive in the memo's value)
    ident = ("source", fn) if isinstance(fn, str) else ("function", id(fn))
    return ("cpu.call", ident, digest, tuple(returns or ()), device, curves)


def _deep(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """Maps ``leaf`` over the Dynamic numbers inside lists, tuples and dicts of ``value``."""
    if is_dynamic(value):
        return leaf(value)
    if isinstance(value, list | tuple):
        return type(value)(_deep(v, leaf) for v in value)
    if isinstance(value, dict):
        return {k: _deep(v, leaf) for k, v in value.items()}
    return value


def _dynamic_leaves(value: Any) -> set[str]:
    found: set[str] = set()
    _deep(value, lambda d: found.update(leaves(d)))
    return found


def _curves_at(value: Any, t: Any) -> Any:
    """Replaces each number Curve by its value at ``t`` (an expression when ``t`` is dynamic)."""
    if isinstance(value, Curve):
        if value.lanes == 0 and is_dynamic(t):
            return apply(value.at, "curve", t)
        return value.at(t)  # a vector curve reads a dynamic t in Python (the node plans again)
    if isinstance(value, list | tuple):
        return type(value)(_curves_at(v, t) for v in value)
    if isinstance(value, dict):
        return {k: _curves_at(v, t) for k, v in value.items()}
    return value


class _CallSite:
    """A pure call whose arguments are dynamic: called again for new argument values.

    Its numeric results are expressions ``("call", site, i)`` a replay evaluates; results
    are cached by the argument values (the last 256).
    """

    def __init__(self, state: LuaState, fn: Any, args: list, opts: dict, name: str):
        self.state, self.fn, self.args, self.opts, self.name = state, fn, args, opts, name
        self.keys = _dynamic_leaves(args)
        self._cache: OrderedDict[Any, list] = OrderedDict()

    def results(self, values: dict[str, Any]) -> list:
        """The call's results for the dynamic ``values`` (called again when they are new)."""
        plain = _deep(self.args, lambda d: evaluate(d, values))
        key = repr(canon(plain))
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = list(self.state.call(self.fn, plain, **self.opts))
            while len(self._cache) > 256:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return got


def _pure_dynamic(scope: CookScope, state: LuaState, fn: Any, args: list, opts: dict) -> CallResult:
    env = next(iter(_envs(args)))
    site = _CallSite(state, fn, args, opts, "cpu.call")
    start = time.perf_counter()
    values = site.results(env.values)
    ms = (time.perf_counter() - start) * 1000.0
    out: list = []
    for i, v in enumerate(values):
        if isinstance(v, int | float) and not isinstance(v, bool):
            out.append(constant_or_dynamic(("call", site, i), env))
        else:  # a result that is no number: the node reads it in Python, so it plans again
            mark_host(site.keys)
            out.append(v)
    scope.note("pure", f"cpu.call: pure call with dynamic arguments ({ms:.2f} ms)")
    return CallResult(values=out)


def _envs(args: Any) -> list:
    found: list = []
    _deep(args, lambda d: found.append(d.env))
    return found


def _host_args(args: list) -> list:
    """The plain values of the Dynamic numbers in ``args``, read in Python (plans again)."""
    mark_host(_dynamic_leaves(args))
    return _deep(args, peek)


@op(
    "cpu.call",
    runs="cpu",
    inputs=("fn", "args"),
    params=("returns", "ceiling_ms", "pure", "device", "curves"),
    outputs=("values",),
)
def call(
    fn: Any,
    args: Sequence[Any] | None = None,
    returns: Sequence[str] | None = None,
    ceiling_ms: float | None = None,
    pure: bool = False,
    device: bool = False,
    curves: bool = False,
) -> CallResult:
    """Calls a Lua function with declared return types under a CPU-time ceiling.

    Args:
        fn: Lua source (``"function(a, b) return a + b end"``, a chunk returning a
            function, or a global's name) or a Lua function of the graph's Lua state.
        args: the values passed, in order. A device Column reaches Lua as a BufferRef
            ``{buffer, type, count, lanes, element}`` (no data moves); a Geometry read to
            the CPU (counting readbacks), or as it stands with ``device``; a Curve as its
            value at the cook's time, or as its curve with ``curves``.
        returns: the type name of each result (Number, String, Bool, Function, List,
            Record, Column, BufferRef, Handle, Geometry, Vec2, Vec3, Vec4, Color); None
            takes whatever the function returns.
        ceiling_ms: the most CPU time the call may take on its thread, coroutines
            included (5000 when 0 or None), from the chunk that gives ``fn`` to the
            conversion of its results; a runaway call is stopped near it. ``math.random``
            is seeded per call: from the cook scope's ``seed`` when it has one, else from
            the node's name.
        pure: the results are a function of the arguments alone: a call whose arguments
            are all known (no Column, Geometry, Handle or Lua value) is made once per graph
            and its results reused as constants (reported "folded").
        device: pass a Geometry as it stands on the device.
        curves: pass a Curve as its curve (a table ``{keys, at}``; ``curve:at(t)``).

    Returns:
        A ``CallResult`` with ``values``: the results, in order.

    Raises:
        BindingError: a bad fn, args, returns or flag.
        ParamsError: a ceiling_ms that is not a finite number from 0 to a day.
        LuaError: the function raised (Lua traceback, node named).
        LuaSandboxError: it reached outside the sandbox.
        LuaCeilingError: it ran past its ceiling.
        LuaReturnError: a result of another type or count than ``returns`` states.

    Example:
        >>> from procgen_nb import ops
        >>> fn = "function(a, b) return a + b, a * b end"
        >>> ops.cpu.call(fn=fn, args=[3, 4], returns=["Number", "Number"])["values"]
        [7, 12]
    """
    args, returns = _check_params(
        "cpu.call",
        fn,
        args,
        returns,
        ceiling_ms,
        {"pure": pure, "device": device, "curves": curves},
    )
    scope = current_cook()
    node = scope.node if scope is not None else None
    t = scope.time if scope is not None else 0.0
    if not curves:
        args = _curves_at(args, t)  # a curve read at the cook's time is a dynamic value
    state = _state(scope)
    opts = dict(returns=returns, ceiling_ms=ceiling_ms, node=node, device=device)
    opts.update(curves=curves, time=peek(t), what="cpu.call", seed=getattr(scope, "seed", None))
    if _dynamic_leaves(args):
        if pure and scope is not None:
            return _pure_dynamic(scope, state, fn, args, opts)
        args = _host_args(args)
    key = None
    if pure and scope is not None:
        key = _fold_key(fn, args, returns, device, curves)
        if key is not None and key in scope.memo:
            scope.note("folded", f"cpu.call: pure call reused ({len(scope.memo[key][0])} results)")
            return CallResult(values=_copy(list(scope.memo[key][0])))
    start = time.perf_counter()
    try:
        values = state.call(fn, args, **opts)
    except LuaMemoryError as e:
        raise _out_of_memory(state, e) from None
    result = CallResult(values=values)
    if scope is not None:
        ms = (time.perf_counter() - start) * 1000.0
        if key is not None and not result.handles:
            scope.memo[key] = (tuple(_copy(values)), fn)
            scope.note("folded", f"cpu.call: pure call made at planning ({ms:.2f} ms)")
        else:
            scope.note("lua", f"cpu.call: {ms:.2f} ms")
    return result


def _read(
    fn: Any,
    args: Sequence[Any] | None = None,
    digest: Any = None,
    returns: Sequence[str] | None = None,
    ceiling_ms: float | None = None,
    device: bool = False,
) -> CallResult:
    """Calls a Lua function that reads state outside the graph, and reports its digest.

    Args:
        fn, args, returns, ceiling_ms, device: as ``cpu.call``; one ceiling covers the
            digest and fn together.
        digest: Lua source or a Lua function called with the same values before ``fn``;
            it answers one Number, String, Bool or table standing for what ``fn`` reads.

    Returns:
        A ``CallResult`` with ``values``: fn's results, in order. The digest's value, made
        hashable (tables as sorted tuples), is appended to ``current_cook().digests`` with
        a probe that asks the digest again; the graph asks it before each cook and cooks
        the node again only when the answer moved.

    Raises:
        ParamsError: a ceiling_ms that is not a finite number from 0 to a day.
        BindingError: a bad fn, digest, args, returns or device; ``curves`` or
            ``pure`` given (cpu.read takes neither).
        LuaError, LuaSandboxError, LuaCeilingError: as ``cpu.call`` (fn or digest).
        LuaReturnError: fn's results against ``returns``, or a digest answering other
            than one Number, String, Bool or table.

    Example:
        The digest stands for what ``fn`` reads; a graph cooks the node again only when it moves:

        >>> from procgen_nb import ops
        >>> got = ops.cpu.read(
        ...     fn="function(n) return n * 2 end",
        ...     args=[21],
        ...     returns=["Number"],
        ...     digest="function(n) return n end",
        ... )
        >>> got["values"]
        [42]
    """
    args, returns = _check_params("cpu.read", fn, args, returns, ceiling_ms, {"device": device})
    args = _host_args(args)  # cpu.read is never replayed: a dynamic argument plans again
    if not (isinstance(digest, str) or lua_type(digest) == "function"):
        raise BindingError(
            f"cpu.read digest: expected Lua source or a Lua function, got "
            f"{type(digest).__name__} {_short(digest)}"
        )
    scope = current_cook()
    node = scope.node if scope is not None else None
    t = scope.time if scope is not None else 0.0
    state = _state(scope)
    seed = getattr(scope, "seed", None)
    start = time.perf_counter()
    with state.budget(ceiling_ms, what="cpu.read"):  # one ceiling for the digest and fn
        answer = state.call(
            digest,
            args,
            ceiling_ms=ceiling_ms,
            node=node,
            device=device,
            time=t,
            what="cpu.read digest",
            seed=seed,
        )
        value = _digest_value(answer, node)
        values = state.call(
            fn,
            args,
            returns=returns,
            ceiling_ms=ceiling_ms,
            node=node,
            device=device,
            time=t,
            what="cpu.read",
            seed=seed,
        )
    if scope is not None:

        def probe() -> Any:
            """Asks the digest again with the same values (the graph checks it each cook)."""
            again = state.call(
                digest,
                args,
                ceiling_ms=ceiling_ms,
                node=node,
                device=device,
                time=t,
                what="cpu.read digest",
                seed=seed,
            )
            return _digest_value(again, node)

        scope.digests.append((value, probe))
        ms = (time.perf_counter() - start) * 1000.0
        scope.note("lua", f"cpu.read: {ms:.2f} ms")
    return CallResult(values=values)


def _digest_value(answer: list, node: str | None) -> Any:
    """The hashable stand-in of a digest's answer.

    Raises:
        LuaReturnError: an answer other than one Number, String, Bool or table of them
            (a function, a Lua object, nothing, several values).
    """
    if len(answer) != 1 or answer[0] is None or lua_type(answer[0]) is not None:
        got = ", ".join(_type_name(a) for a in answer) or "nothing"
        raise LuaReturnError(
            f"cpu.read digest in node {node!r}: expected one Number, String, Bool or table, "
            f"got {got}"
        )
    try:
        return canon(answer[0])
    except TypeError as e:
        raise LuaReturnError(
            f"cpu.read digest in node {node!r}: expected one Number, String, Bool or table "
            f"of them, got {_short(answer[0])} ({e})"
        ) from None


def _type_name(value: Any) -> str:
    kind = lua_type(value)
    return f"a Lua {kind}" if kind is not None else type(value).__name__


class _ReadOp(Op):
    """``cpu.read``: refuses ``curves`` and ``pure`` by name before the generic check."""

    def __call__(self, **kwargs: Any) -> Any:
        for name in ("curves", "pure"):
            if name in kwargs:
                raise BindingError(
                    f"cpu.read {name}: expected no {name} (cpu.read takes no curves or pure: "
                    f"it reads state outside the graph at the cook's time, and is never "
                    f"folded), got {name}={kwargs[name]!r}; use cpu.call for a {name} call"
                )
        return super().__call__(**kwargs)


read = _ReadOp(
    "cpu.read",
    "cpu",
    _read,
    inputs=("fn", "args", "digest"),
    params=("returns", "ceiling_ms", "device"),
    outputs=("values",),
)


def _copy(value: Any) -> Any:
    """Copies the lists and Records of folded results, so no cook changes the constants."""
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, Record):
        return Record({k: _copy(v) for k, v in value.items()})
    return value


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."
