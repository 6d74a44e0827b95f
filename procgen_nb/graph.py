"""Nodes and graphs: a node is a Python function that wires ops; a graph cooks them in order.

::

    @node(params={"radius": Field(0.5, bounds=(0.0, 2.0), doc="disk radius")})
    def keep(points, radius):
        flags = ops.device.kernel(kernel=INSIDE, bind={"points": points}, domain=points,
                                  uniforms={"center": (0, 0), "radius": radius})["columns"]
        return ops.device.kernel(kernel=COMPACT, bind={"flags": flags["flags"]},
                                 domain=points)["columns"]

    g = Graph("demo")
    g.add("points", make_points)
    g.add("keep", keep, points="points")
    result = g.cook(params={"keep.radius": 0.4})

A second cook re-runs only the nodes that a changed parameter, input, time/frame (for a
node that takes them) or ``cpu.read`` digest reaches; the others are reused. A cook that
raises keeps the previous good outputs (``graph.last``) and names the node and the op.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import re
import threading
import time as _time
from collections.abc import Callable, Mapping
from typing import Any

from ._traffic import Traffic, collect
from .errors import CookError, GraphError, ParamsError, ProcgenError
from .ops._op import CookScope, cook_scope
from .params import Field, Params, params_class
from .report import CookReport, NodeReport

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_versions = itertools.count(1)


class Node:
    """A node definition: a function of its inputs and declared parameters.

    Args:
        fn: the function; its parameters are the node's inputs, its declared params, and
            optionally ``time`` and ``frame`` (given by the cook).
        params: a mapping of name -> Field (or plain default), or a Params class.
        name: the node's type name (the function's name by default).
    """

    def __init__(self, fn: Callable[..., Any], params: Any = None, name: str | None = None):
        self.fn = fn
        self.name = name or fn.__name__
        if params is None:
            self.Params = params_class(f"{self.name}_params", {}, owner=self.name)
        elif isinstance(params, type) and issubclass(params, Params):
            self.Params = params
        elif isinstance(params, Mapping):
            fields = {
                k: (dataclasses.replace(v) if isinstance(v, Field) else Field(default=v))
                for k, v in params.items()
            }
            self.Params = params_class(f"{self.name}_params", fields, owner=self.name)
        else:
            raise GraphError(
                f"node {self.name!r} params: expected a dict of Fields or a Params class, got {params!r}"
            )
        sig = inspect.signature(fn)
        self.takes_time = "time" in sig.parameters
        self.takes_frame = "frame" in sig.parameters
        fields = self.Params.fields()
        self.inputs = tuple(
            p for p in sig.parameters if p not in fields and p not in ("time", "frame")
        )
        missing = [p for p in fields if p not in sig.parameters]
        if missing:
            raise GraphError(
                f"node {self.name!r}: expected the function to take its params {missing} "
                f"as arguments, got the signature {sig}"
            )
        self.__doc__ = fn.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<node {self.name} inputs={list(self.inputs)} params={list(self.Params.fields())}>"


def node(
    fn: Callable[..., Any] | None = None, *, params: Any = None, name: str | None = None
) -> Any:
    """Decorator making a function a Node with declared parameters (see Node)."""

    def wrap(f: Callable[..., Any]) -> Node:
        return Node(f, params=params, name=name)

    return wrap(fn) if fn is not None else wrap


@dataclasses.dataclass
class Const:
    """A constant input of a node (use it for a text value, which would name a node)."""

    value: Any


@dataclasses.dataclass
class _Instance:
    name: str
    node: Node
    wiring: dict[str, Any]


@dataclasses.dataclass
class _State:
    key: tuple
    output: Any
    version: int
    probes: list[tuple[Any, Callable[[], Any]]]


@dataclasses.dataclass
class CookResult:
    """The outputs of a cook (node name -> what the node returned) and its report."""

    outputs: dict[str, Any]
    report: CookReport

    def __getitem__(self, name: str) -> Any:
        return self.outputs[name]


class Graph:
    """Nodes wired together, cooked for given parameters, time and frame.

    Args:
        name: the graph's name (shown in reports and messages).
    """

    def __init__(self, name: str = "graph"):
        self.name = name
        self._nodes: dict[str, _Instance] = {}
        self._state: dict[str, _State] = {}
        self._memo: dict[Any, Any] = {}
        self._lua: Any = None
        self._lock = threading.RLock()
        self.values: dict[str, Any] = {}
        self.last: CookResult | None = None

    # -- building -------------------------------------------------------------------
    def add(self, name: str, fn: Node | Callable[..., Any], **inputs: Any) -> str:
        """Adds a node named ``name``; each input is a node name ("points", or "points.key"
        for a key of its output), a Const, or any other constant value.

        Raises:
            GraphError: a bad or duplicate name, an unknown input, or an upstream node that
                was not added before.
        """
        if not isinstance(name, str) or not _NAME.match(name):
            raise GraphError(f"graph {self.name!r} add(name): expected an identifier, got {name!r}")
        if name in self._nodes:
            raise GraphError(
                f"graph {self.name!r} add(name): expected a new name, got {name!r} again"
            )
        nd = fn if isinstance(fn, Node) else Node(fn)
        unknown = sorted(set(inputs) - set(nd.inputs))
        if unknown:
            raise GraphError(
                f"node {name!r} ({nd.name}): expected inputs among {list(nd.inputs)}, got {unknown}"
            )
        missing = [i for i in nd.inputs if i not in inputs and _default_of(nd.fn, i) is _NO]
        if missing:
            raise GraphError(
                f"node {name!r} ({nd.name}): expected a value for inputs {missing}, got none"
            )
        for key, src in inputs.items():
            if isinstance(src, str):
                up = src.split(".")[0]
                if up not in self._nodes:
                    raise GraphError(
                        f"node {name!r} input {key!r}: expected a node added before it among "
                        f"{list(self._nodes)}, got {src!r}"
                    )
        self._nodes[name] = _Instance(name, nd, dict(inputs))
        for pname, f in nd.Params.fields().items():
            self.values.setdefault(f"{name}.{pname}", f.default)
        return name

    @property
    def nodes(self) -> list[str]:
        """The node names in cook order."""
        return list(self._nodes)

    def params(self) -> dict[str, Field]:
        """Returns every declared parameter as ``"node.param" -> Field``."""
        out = {}
        for name, inst in self._nodes.items():
            for pname, f in inst.node.Params.fields().items():
                out[f"{name}.{pname}"] = f
        return out

    def set(self, **values: Any) -> None:
        """Sets parameter values by ``node__param=value`` (validated, kept for later cooks)."""
        self.values = self._checked({k.replace("__", "."): v for k, v in values.items()})

    def _checked(self, given: Mapping[str, Any]) -> dict[str, Any]:
        fields = self.params()
        out = dict(self.values)
        for key, value in given.items():
            if key not in fields:
                raise ParamsError(
                    f"graph {self.name!r} params: expected names among {sorted(fields)}, got {key!r}"
                )
            node_name = key.split(".")[0]
            out[key] = fields[key].check(value, f"{node_name}")
        return out

    def _lua_state(self) -> Any:
        if self._lua is None:
            from .lua import LuaState

            self._lua = LuaState()
        return self._lua

    # -- cooking --------------------------------------------------------------------
    def cook(
        self, params: Mapping[str, Any] | None = None, time: float = 0.0, frame: int = 0
    ) -> CookResult:
        """Cooks the graph; returns its outputs and report.

        Args:
            params: ``"node.param" -> value`` changes (kept for later cooks once the cook
                succeeds).
            time, frame: the cook's time and frame (given to nodes that take them).

        Raises:
            ParamsError: an unknown parameter or a value its Field refuses (nothing cooks).
            CookError: a node failed; names the node and the op; the previous outputs stay.
        """
        with self._lock:
            values = self._checked(dict(params or {}))
            new_state: dict[str, _State] = {}
            outputs: dict[str, Any] = {}
            reports: list[NodeReport] = []
            totals = Traffic()
            t_all = _time.perf_counter()
            for name, inst in self._nodes.items():
                nd = inst.node
                pvals = {p: values[f"{name}.{p}"] for p in nd.Params.fields()}
                args: dict[str, Any] = {}
                versions = []
                for key, src in inst.wiring.items():
                    if isinstance(src, str):
                        up, *path = src.split(".")
                        val = outputs[up]
                        for k in path:
                            val = _dig(val, k, name, key, src)
                        args[key] = val
                        versions.append((key, new_state[up].version, tuple(path)))
                    else:
                        args[key] = src.value if isinstance(src, Const) else src
                        versions.append((key, "const", _hashable(args[key])))
                cache_key = (
                    tuple(sorted((k, _hashable(v)) for k, v in pvals.items())),
                    tuple(versions),
                    time if nd.takes_time else None,
                    frame if nd.takes_frame else None,
                )
                prev = self._state.get(name)
                if prev is not None and prev.key == cache_key and not _digests_moved(prev):
                    new_state[name] = prev
                    outputs[name] = prev.output
                    reports.append(NodeReport(name, True, 0.0, Traffic()))
                    continue
                if nd.takes_time:
                    args["time"] = time
                if nd.takes_frame:
                    args["frame"] = frame
                scope = CookScope(name, self._memo, self._lua_state, time=time, frame=frame)
                t0 = _time.perf_counter()
                try:
                    with collect() as counted, cook_scope(scope):
                        result = nd.fn(**args, **pvals)
                except Exception as e:
                    failed = scope.failed_op
                    what = f" in op {failed}" if failed else ""
                    raise CookError(
                        f"graph {self.name!r}: node {name!r} ({nd.name}) failed{what}: "
                        f"{type(e).__name__}: {e}",
                        node=name,
                        op=failed,
                    ) from e
                dt = (_time.perf_counter() - t0) * 1000.0
                probes = [d for d in scope.digests if isinstance(d, tuple) and len(d) == 2]
                new_state[name] = _State(cache_key, result, next(_versions), probes)
                outputs[name] = result
                reports.append(NodeReport(name, False, dt, counted, list(scope.events)))
                totals = totals + counted
            report = CookReport(
                reports, totals, (_time.perf_counter() - t_all) * 1000.0, time=time, frame=frame
            )
            self._state = new_state
            self.values = values
            self.last = CookResult(outputs, report)
            return self.last

    @property
    def outputs(self) -> dict[str, Any]:
        """The outputs of the last good cook (empty before the first)."""
        return self.last.outputs if self.last is not None else {}

    def __repr__(self) -> str:
        return f"<Graph {self.name!r} nodes={self.nodes}>"


_NO = object()


def _default_of(fn: Callable[..., Any], name: str) -> Any:
    p = inspect.signature(fn).parameters.get(name)
    if p is None or p.default is inspect.Parameter.empty:
        return _NO
    return p.default


def _dig(val: Any, key: str, node: str, inp: str, src: str) -> Any:
    if isinstance(val, Mapping) and key in val:
        return val[key]
    if hasattr(val, key):
        return getattr(val, key)
    raise CookError(
        f"node {node!r} input {inp!r}: expected {src!r} to name an entry of the upstream output, "
        f"got no {key!r}",
        node=node,
    )


def _hashable(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return ("id", id(v))


def _digests_moved(state: _State) -> bool:
    for value, probe in state.probes:
        try:
            if probe() != value:
                return True
        except ProcgenError:
            return True
    return False
