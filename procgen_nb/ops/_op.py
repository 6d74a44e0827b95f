"""The Op object every op is, and the cook scope ops report to.

An ``Op`` states its name, where it ``runs`` (gpu, cpu, cpu_to_gpu, gpu_to_cpu), the
inputs and params it takes as keyword arguments, and refuses any other keyword. No op
calls another op. While a graph cooks, ``current_cook()`` returns the scope of the node
being cooked: ops use it to fold pure calls, report wait points and digests.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import BindingError

RUNS = ("gpu", "cpu", "cpu_to_gpu", "gpu_to_cpu")


class CookScope:
    """What a cooking node's ops can reach: the plan memo, events, digests and the Lua state.

    Attributes:
        node: the name of the node being cooked.
        memo: the plan's memo (persistent across cooks of the same graph), for folded calls.
        events: a list of (kind, detail) the cook report shows ("wait", "folded", ...).
        digests: the digests ``cpu.read`` reported during this node's cook.
        lua: the graph's Lua state (created on first use), or None.
        time, frame: the cook's time and frame.
    """

    def __init__(
        self,
        node: str,
        memo: dict,
        lua_factory: Callable[[], Any] | None = None,
        time: float = 0.0,
        frame: int = 0,
    ):
        self.node = node
        self.memo = memo
        self.events: list[tuple[str, str]] = []
        self.digests: list[Any] = []
        self._lua_factory = lua_factory
        self.time = time
        self.frame = frame
        self.op: str | None = None
        self.failed_op: str | None = None
        self.guards: list[Any] = []
        self.words: list[Any] = []
        self._calls = 0
        #: site -> {uniform or specialize key -> value} the graph's kernel-level params set
        self.kernel_overrides: dict[str, dict[str, Any]] = {}
        #: (site, identity, uniforms given, specialize options, option lists) per kernel call
        self.kernel_calls: list[tuple] = []
        self._sites: dict[str, int] = {}

    def kernel_site(self, identity: str) -> str:
        """Names a device.kernel call within the node: ``inside``, then ``inside#2``, ..."""
        name = identity.split("/")[-1]
        n = self._sites[name] = self._sites.get(name, 0) + 1
        return name if n == 1 else f"{name}#{n}"

    def next_key(self, kind: str) -> tuple[str, str, int]:
        """Returns a key naming this op call within the node (stable from cook to cook)."""
        self._calls += 1
        return (self.node, kind, self._calls)

    @property
    def lua(self) -> Any:
        """The graph's Lua state (made on first use)."""
        if self._lua_factory is None:
            return None
        return self._lua_factory()

    def note(self, kind: str, detail: str) -> None:
        """Adds an event to the cook report of this node."""
        self.events.append((kind, detail))


_current: contextvars.ContextVar[CookScope | None] = contextvars.ContextVar(
    "procgen_nb_cook_scope", default=None
)


def current_cook() -> CookScope | None:
    """Returns the scope of the node being cooked, or None outside a cook.

    Example:
        >>> import procgen_nb as pg
        >>> from procgen_nb.ops import current_cook
        >>> current_cook() is None  # outside a cook
        True
        >>> g = pg.Graph("demo")
        >>> name = g.add("who", lambda: current_cook().node)
        >>> g.cook().outputs[name]  # inside: the node being cooked
        'who'
    """
    return _current.get()


@contextlib.contextmanager
def cook_scope(scope: CookScope) -> Iterator[CookScope]:
    """Makes ``scope`` current inside the block."""
    token = _current.set(scope)
    try:
        yield scope
    finally:
        _current.reset(token)


class Op:
    """An op: a named function of keyword inputs and params that states where it runs.

    Args:
        name: the procgen ABI's dotted name ("device.kernel").
        runs: one of gpu, cpu, cpu_to_gpu, gpu_to_cpu.
        fn: the implementation, called with the keyword arguments.
        inputs: names of the op's inputs.
        params: names of the op's params.
        outputs: names of the entries of the Record it returns.
    """

    def __init__(
        self,
        name: str,
        runs: str,
        fn: Callable[..., Any],
        inputs: tuple[str, ...],
        params: tuple[str, ...],
        outputs: tuple[str, ...],
    ):
        if runs not in RUNS:
            raise ValueError(f"op {name}: runs expected one of {RUNS}, got {runs!r}")
        self.name = name
        self.runs = runs
        self.inputs = inputs
        self.params = params
        self.outputs = outputs
        self._fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, **kwargs: Any) -> Any:
        accepted = set(self.inputs) | set(self.params)
        unknown = sorted(set(kwargs) - accepted)
        if unknown:
            raise BindingError(
                f"{self.name}: expected keyword arguments among {sorted(accepted)}, got {unknown}"
            )
        scope = current_cook()
        if scope is not None:
            prev, scope.op = scope.op, self.name
            try:
                return self._fn(**kwargs)
            except Exception:
                if scope.failed_op is None:
                    scope.failed_op = self.name
                raise
            finally:
                scope.op = prev
        return self._fn(**kwargs)

    def __repr__(self) -> str:
        return f"<op {self.name} runs={self.runs}>"


def op(
    name: str,
    runs: str,
    inputs: tuple[str, ...],
    params: tuple[str, ...] = (),
    outputs: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Op]:
    """Decorator making a function an Op."""

    def wrap(fn: Callable[..., Any]) -> Op:
        return Op(name, runs, fn, inputs, params, outputs)

    return wrap
