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

A result is a value: one kept from an earlier cook keeps its values when the graph cooks
again (``a = g.cook(...)``; ``g.cook(...)``; ``a["n"]`` still holds the first cook's
words). A replay writes the recording's arrays in place, so before it runs, the Columns
and live counts of earlier results that are still held (the result, or a Column taken out
of it) are moved to a device copy of their words (counted as copies, no readback); a
result nobody holds costs nothing.

A second cook re-runs only the nodes that a changed parameter, input, time/frame (for a
node that takes them) or ``cpu.read`` digest reaches; the others are reused. A cook that
raises keeps the previous good outputs (``graph.last``) and names the node and the op.

Dynamic values (dynamic Fields, ``time``, ``frame``, curves) follow ``procgen_nb.dynamic``:
what a node computes from one by arithmetic is replayed exactly, anything it reads in
Python makes it plan again when the value moves. So do device words a node reads back
(``Column.numpy()`` inside its body): when a replay would reach what it read (a value it
depends on moved, or a node upstream of it replays), the cook plans again, and that node
and the nodes downstream of it run again (a raw ``wp.array.numpy()`` is not seen: read
through the package's Columns). A constant input (a NumPy array, a list,
a dict) is keyed by its content: changed in place, it reaches its nodes at the next cook.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import threading
import time as _time
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from . import cookrun
from ._derived import derive
from ._fingerprint import fingerprint
from ._graph_edges import Edge, GraphEdges
from ._graph_state import (
    _MISSING,
    _digests_moved,
    _last_of,
    _release,
    _same,
    _stale,
    _State,
    host_reads,
    reached,
)
from ._handout import Handouts
from ._kernel_params import KernelParams
from ._traffic import Traffic, collect
from .cookrun import CookRecording
from .dynamic import Env, dynamic, tracking
from .errors import CookError, GraphError, ParamsError
from .launch import logging
from .nodes import _NO, Const, Node, _default_of, node
from .ops._op import CookScope, cook_scope
from .params import Field
from .report import CookReport, NodeReport

__all__ = ["Const", "CookResult", "Edge", "Graph", "Node", "node"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_versions = itertools.count(1)


@dataclasses.dataclass
class _Instance:
    name: str
    node: Node
    wiring: dict[str, Any]


@dataclasses.dataclass
class CookResult:
    """The outputs of a cook (node name -> what the node returned) and its report.

    The result keeps its values: a later cook of the graph never changes what its Columns
    and live counts hold (a replay moves a held result to a copy first)."""

    outputs: dict[str, Any]
    report: CookReport

    def __getitem__(self, name: str) -> Any:
        return self.outputs[name]


class Graph(KernelParams, GraphEdges):
    """Nodes wired together, cooked for given parameters, time and frame.

    Args:
        name: the graph's name (shown in reports and messages).
        record: keep a recording of each eager cook, replayed when nothing is new to plan.
    """

    def __init__(self, name: str = "graph", record: bool = True):
        self.name = name
        self.record = record
        self._recording: CookRecording | None = None
        self._guard_note: list[str] = []
        self._pending_overrides: set[str] = set()
        self._time, self._frame = 0.0, 0
        self._params: dict[str, Field] | None = None
        self._kernel_fields: dict[str, Field] = {}
        self._kernel_overrides: set[str] = set()
        self._nodes: dict[str, _Instance] = {}
        self._state: dict[str, _State] = {}
        self._memo: dict[Any, Any] = {}
        self._lua: Any = None
        self._env = Env()  # the values dynamic numbers of this graph answer
        self._lock = threading.RLock()
        self.values: dict[str, Any] = {}
        self.last: CookResult | None = None
        self._handouts = Handouts()
        self._last_made: tuple[dict[str, Any], CookReport] | None = None

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
        self._params = None
        for pname, f in nd.Params.fields().items():
            self.values.setdefault(f"{name}.{pname}", f.default)
        return name

    @property
    def nodes(self) -> list[str]:
        """The node names in cook order."""
        return list(self._nodes)

    def node_of(self, name: str) -> Any:
        """Returns the node (what ``@pg.node`` or ``TrackGenerator.node()`` made) added as
        ``name``.

        Raises:
            GraphError: no node of that name (the message lists the names).
        """
        inst = self._nodes.get(name)
        if inst is None:
            raise GraphError(f"node name: expected one of {list(self._nodes)}, got {name!r}")
        return inst.node

    def params(self) -> dict[str, Field]:
        """Returns every declared parameter as ``"node.param" -> Field``."""
        if self._params is not None:
            return dict(self._params)
        out = {}
        for name, inst in self._nodes.items():
            for pname, f in inst.node.Params.fields().items():
                out[f"{name}.{pname}"] = f
        out.update(self._kernel_fields)
        self._params = out
        return dict(out)

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

        A cook whose plan is unchanged (only dynamic Fields, ``time`` or ``frame`` moved)
        replays the recording of the last eager cook; one where nothing moved reuses every
        node; otherwise the nodes a change reaches cook again.

        Args:
            params: ``"node.param" -> value`` changes (kept for later cooks once the cook
                succeeds).
            time, frame: the cook's time and frame (given to nodes that take them, as
                dynamic values).

        Raises:
            ParamsError: an unknown parameter or a value its Field refuses (nothing cooks).
            CookError: a node failed; names the node and the op; the previous outputs stay.
        """
        with self._lock:
            values = self._checked(dict(params or {}))
            # a kernel-level param given at the value it shows changes nothing (a form sends
            # every value back); a new value overrides what the node passes
            overrides = self._kernel_overrides | {
                k
                for k in set(params or {}) & set(self._kernel_fields)
                if values[k] != self.values.get(k)
            }
            self._pending_overrides = overrides
            dyn = self._dynamic_values(values, time, frame)
            self._check_guards()
            before = dict(self._env.values)
            self._env.values.update(dyn)
            try:
                replay = self._try_replay(values, dyn, time, frame)
                if replay is not None:
                    return replay
                return self._cook_eager(values, dyn, time, frame)
            except BaseException:
                self._env.values.clear()  # the last good outputs answer their own values
                self._env.values.update(before)
                if self.last is None and self._last_made is not None:
                    self.last = CookResult(
                        self._handouts.hand_out(self._last_made[0]), self._last_made[1]
                    )
                raise

    def _dynamic_values(self, values: Mapping[str, Any], time: float, frame: int) -> dict:
        out: dict[str, Any] = {"time": float(time), "frame": int(frame)}
        for key, f in self.params().items():
            if f.dynamic:
                out[key] = values[key]
        return out

    def _keys(self, name: str, inst: _Instance, values: Mapping[str, Any], versions: list) -> tuple:
        nd = inst.node
        fields = nd.Params.fields()
        static = tuple(
            sorted(
                (p, fingerprint(values[f"{name}.{p}"])) for p, f in fields.items() if not f.dynamic
            )
        )
        static += tuple(
            sorted(
                (k, fingerprint(values[k]))
                for k in self._pending_overrides
                if k.split(".")[0] == name
            )
        )
        dyn = {f"{name}.{p}": values[f"{name}.{p}"] for p, f in fields.items() if f.dynamic}
        if nd.takes_time:
            dyn["time"] = self._time
        if nd.takes_frame:
            dyn["frame"] = self._frame
        return (static, tuple(versions)), tuple(sorted(dyn.items()))

    def _check_guards(self) -> None:
        rec = self._recording
        if rec is None:
            return
        over = rec.overrun()
        if not over:
            return
        cookrun._counts.guarded += 1
        rooms = self._memo.setdefault("rooms", {})
        for g in over:
            if g.room_key is not None:
                rooms[g.room_key] = rooms.get(g.room_key, 1) * 4  # recorded again with 4x the room
            self._state.pop(g.node, None)  # that node plans again (and refuses if it must)
        self._recording = None
        self._guard_note = [
            f"a replay ran past a guard of node {g.node!r}" + (f" ({g.why})" if g.why else "")
            for g in over
        ]

    def _try_replay(self, values: Mapping[str, Any], dyn: dict, time: float, frame: int):
        """Replays the recording when no node has anything new to plan; None otherwise.

        A node plans again when its static key or a digest moved, when a dynamic value
        it read in Python moved, or when its body read device words back into Python and
        the replay reaches it (``_graph_state.reached``: a value it depends on moved,
        something else wrote its arrays, or a node it reads is reached). Every other
        dynamic value is an expression the recording evaluates, so the replay gives the
        bytes of a fresh cook. A reached node reports "replayed", the others "reused".
        """
        rec = self._recording
        if rec is None or any(n not in self._state for n in self._nodes):
            return None
        self._time, self._frame = float(time), int(frame)
        keys = {}
        for name, inst in self._nodes.items():
            st = self._state[name]
            key = self._keys(name, inst, values, self._versions(inst))
            if key[0] != st.key[0] or _digests_moved(st):
                return None
            keys[name] = key
        moved = {k for k, v in dyn.items() if not _same(rec.values.get(k, _MISSING), v)}
        if any(moved & self._state[n].host for n in self._nodes):
            return None  # a node read a moved value in Python: it plans again
        wiring = {n: inst.wiring for n, inst in self._nodes.items()}
        hit = reached(self._nodes, wiring, self._state, moved)
        if any(self._state[n].reads for n in hit):
            return None  # a node computed in Python from words a replay may change: it plans
        same = not hit
        t0 = _time.perf_counter()
        with collect() as counted:
            if not same:
                if not rec.fits(dyn):
                    return None
                try:
                    evaluated = rec.evaluate(dyn)
                except Exception:  # noqa: BLE001 - the eager cook refuses it, naming the node
                    return None
                self._keep_held(rec)
                rec.replay(dyn, evaluated)
        for name in self._nodes:
            st = self._state[name]
            st.key = keys[name]
            st.deps = {k: dyn.get(k, v) for k, v in st.deps.items()}
            st.stale = [(probe(), probe) for _, probe in st.stale]
        dt = (_time.perf_counter() - t0) * 1000.0
        reports = []
        for n in self._nodes:
            reports.append(NodeReport(n, n not in hit, 0.0, Traffic(), replayed=n in hit))
        first = next((r for r in reports if r.replayed), None)
        if first is not None:  # the replay's traffic and time, once
            first.traffic = counted
            first.time_ms = dt
        self.values = dict(values)
        outputs = {n: self._state[n].output for n in self._nodes}
        return self._result(outputs, CookReport(reports, counted, dt, time=time, frame=frame))

    def _versions(self, inst: _Instance) -> list:
        """The upstream versions and constant fingerprints a node's key holds."""
        out = []
        for k, src in inst.wiring.items():
            if isinstance(src, str):
                up, *path = src.split(".")
                out.append((k, self._state[up].version, tuple(path)))
            else:
                out.append((k, "const", fingerprint(src.value if isinstance(src, Const) else src)))
        return out

    def _cook_eager(self, values: Mapping[str, Any], dyn: dict, time: float, frame: int):
        self._time, self._frame = float(time), int(frame)
        new_state: dict[str, _State] = {}
        outputs: dict[str, Any] = {}
        reports: list[NodeReport] = []
        totals = Traffic()
        found: list[tuple[str, tuple]] = []
        t_all = _time.perf_counter()
        for name, inst in self._nodes.items():
            nd = inst.node
            fields = nd.Params.fields()
            env = self._env
            pvals = {
                p: (
                    dynamic(values[f"{name}.{p}"], f"{name}.{p}", env)
                    if f.dynamic
                    else derive(values[f"{name}.{p}"], f"{name}.{p}")
                )
                for p, f in fields.items()
            }
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
                    versions.append((key, "const", fingerprint(args[key])))
            cache_key = self._keys(name, inst, values, versions)
            prev = self._state.get(name)
            moved = prev is not None and _digests_moved(prev)
            if (
                prev is not None
                and prev.key == cache_key
                and not moved
                and not _stale(prev)
                and all(_same(dyn.get(k, v), v) for k, v in prev.deps.items())
            ):
                new_state[name] = prev
                outputs[name] = prev.output
                reports.append(NodeReport(name, True, 0.0, Traffic()))
                continue
            t_dyn, f_dyn = dynamic(float(time), "time", env), dynamic(int(frame), "frame", env)
            if nd.takes_time:
                args["time"] = t_dyn
            if nd.takes_frame:
                args["frame"] = f_dyn
            scope = CookScope(name, self._memo, self._lua_state, time=t_dyn, frame=f_dyn)
            for key in self._pending_overrides:
                node_name, site, pname = key.split(".", 2)
                if node_name == name:
                    scope.kernel_overrides.setdefault(site, {})[pname] = values[key]
            t0 = _time.perf_counter()
            try:
                with collect() as counted, cook_scope(scope), logging() as log, tracking() as tr:
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
            probes += [(e[1], e[2]) for e in log if e[0] == "probe"]  # a generator's build
            recordable = not any(
                (k == "wait" and d.startswith("transfer.readback")) or k in ("lua", "host")
                for k, d in scope.events
            ) and not any(e[0] == "unrecordable" for e in log)
            deps = tr.used | tr.host  # a dynamic value the node never touched moves nothing
            new_state[name] = _State(
                cache_key,
                result,
                next(_versions),
                probes,
                log,
                scope.guards,
                scope.words,
                recordable,
                set(tr.host),
                {k: dyn[k] for k in deps if k in dyn},
                _last_of(e for e in log if e[0] == "stale"),
                host_reads(counted.readbacks, len(scope.guards)),
            )
            outputs[name] = result
            events = list(scope.events)
            if moved:
                events.insert(0, ("digest", "a cpu.read digest moved"))
            if self._guard_note and any(name in n for n in self._guard_note):
                events = [("guard", n) for n in self._guard_note if repr(name) in n] + events
            reports.append(NodeReport(name, False, dt, counted, events))
            totals = totals + counted
            found.extend((name, call) for call in scope.kernel_calls)
        report = CookReport(
            reports, totals, (_time.perf_counter() - t_all) * 1000.0, time=time, frame=frame
        )
        for name, st in self._state.items():
            if new_state.get(name) is not st:
                _release(st.output)  # handles a replaced output held are released with it
        self._state = new_state
        self.values = dict(values)
        self._kernel_overrides = set(self._pending_overrides)
        self._learn_kernel_params(found)
        self._guard_note = []
        cookrun._counts.plans += 1
        self._recording = None
        if self.record and all(st.recordable for st in new_state.values()):
            log = [e for n in self._nodes for e in new_state[n].log]
            guards = [g for n in self._nodes for g in new_state[n].guards]
            words = [w for n in self._nodes for w in new_state[n].words]
            self._recording = CookRecording(log, guards, words)
            self._recording.values = dict(dyn)
        return self._result(outputs, report)

    def _result(self, outputs: dict[str, Any], report: CookReport) -> CookResult:
        """The result handed out: its own Column and live-count objects over the outputs."""
        self._last_made = (outputs, report)
        self.last = CookResult(self._handouts.hand_out(outputs), report)
        return self.last

    def _keep_held(self, rec: CookRecording) -> None:
        """Moves every held Column of an earlier result that ``rec`` writes to a copy.

        The graph lets its own reference to the last result go first: a result only the
        graph held is freed, and its objects need no copy.
        """
        prev, self.last = self.last, None
        ref = weakref.ref(prev) if prev is not None else None
        del prev
        try:
            self._handouts.keep_values(rec.written())
        finally:
            self.last = ref() if ref is not None else None

    def moved_digests(self) -> list[str]:
        """Asks every ``cpu.read`` digest of the last cook again (nothing cooks).

        Returns:
            The nodes whose digest now answers another value (or fails): a cook would
            cook them again. A view polls this to cook when the state a graph reads moves.
        """
        with self._lock:
            return [n for n, st in self._state.items() if st.probes and _digests_moved(st)]

    def digest_nodes(self) -> list[str]:
        """The nodes whose last cook read state through a ``cpu.read`` digest (what
        ``moved_digests`` asks again; a view polls only a graph that has some)."""
        with self._lock:
            return [n for n, st in self._state.items() if st.probes]

    @property
    def outputs(self) -> dict[str, Any]:
        """The outputs of the last good cook (empty before the first)."""
        return self.last.outputs if self.last is not None else {}

    def __repr__(self) -> str:
        return f"<Graph {self.name!r} nodes={self.nodes}>"

    def _repr_html_(self) -> str:
        from ._display import table

        rows = []
        for name, inst in self._nodes.items():
            wired = ", ".join(f"{k}={v}" for k, v in inst.wiring.items())
            params = ", ".join(
                f"{p}={self.values.get(f'{name}.{p}')!r}" for p in inst.node.Params.fields()
            )
            rows.append((name, "; ".join(x for x in (wired, params) if x) or "(no inputs)"))
        return table(f"Graph {self.name!r} ({len(rows)} nodes, in cook order)", rows)


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
