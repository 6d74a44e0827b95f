"""A graph as an ``explore`` target: its ``"node.param"`` fields and ``graph.cook``."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import ParamsError
from ..params import Params, params_class
from .frame import Frame, frame_from, read_outputs, report_rows
from .target import Progress, Target, _literal, _no_progress, _timed


class GraphTarget(Target):
    """A graph: its ``"node.param"`` fields, cooked with ``graph.cook(params=...)``.

    Args:
        graph: a ``procgen_nb.Graph`` (``params()``, ``values``, ``cook()``).
        outputs: the one node whose output is drawn and counted; every node's when None
            (vector columns as point clouds, the last output holding ``xy``/``centerline``
            or ``gates`` as tracks, numbers and live counts as counts).

    Raises:
        ParamsError: when ``outputs`` names no node of the graph.
    """

    group = True

    def __init__(self, graph: Any, outputs: str | None = None):
        self.graph = graph
        self.name = getattr(graph, "name", "") or "graph"
        nodes = list(getattr(graph, "nodes", []) or [])
        if outputs is not None and nodes and outputs not in nodes:
            raise ParamsError(
                f"explore(graph, outputs=...): expected one of {nodes}, got {outputs!r}"
            )
        self._output = outputs
        self._sent: dict[str, Any] = {}
        self.refresh()

    def refresh(self) -> bool:
        """Takes the graph's parameters again; True when a cook found new ones (the
        kernel-level parameters appear after the graph's first cook) or changed the
        choices of one (the options that bind the columns given)."""
        fields = {k: dataclasses.replace(f, name=k) for k, f in self.graph.params().items()}
        old = getattr(self, "params_class", None)
        if old is not None and _shape(old.fields()) == _shape(fields):
            return False
        self.params_class = params_class("GraphParams", fields, self.name)
        kernel_params = getattr(self.graph, "kernel_params", None)
        self._kernel_keys = set(kernel_params()) if callable(kernel_params) else set()
        # what each node passes to its kernels (before any override): the reference the
        # copied code compares kernel-level values with
        start = self.initial.to_dict()
        self._kernel_start = {k: start[k] for k in self._kernel_keys if k in start}
        return old is not None

    def sections(self) -> list[tuple[str, list[str], bool]]:
        out: dict[str, list[str]] = {}
        for k in self.params_class.fields():
            out.setdefault(k.split(".", 1)[0], []).append(k)
        return [(node, names, True) for node, names in out.items()]

    def kernel_keys(self) -> set[str]:
        return set(self._kernel_keys)

    def live(self) -> bool:
        nodes = getattr(self.graph, "digest_nodes", None)
        return bool(nodes()) if callable(nodes) else False

    def moved(self) -> list[str]:
        moved = getattr(self.graph, "moved_digests", None)
        return list(moved()) if callable(moved) else []

    @property
    def initial(self) -> Params:
        known = self.params_class.fields()
        values = getattr(self.graph, "values", {}) or {}
        return self.params_class(**{k: v for k, v in values.items() if k in known})

    def cook(self, params: Params, progress: Progress = _no_progress) -> Frame:
        progress(0.1, "cooking the graph")
        # a kernel-level parameter overrides what its node passes once it is set, so send
        # one only when the person changed it in the form (node params are sent as they are)
        values = params.to_dict()
        shown = getattr(self.graph, "values", {}) or {}
        given = {
            k: v
            for k, v in values.items()
            if k not in self._kernel_keys
            or (self._sent[k] != v if k in self._sent else shown.get(k) != v)
        }
        result, ms, tr = _timed(lambda: self.graph.cook(params=given))
        self.result = result
        self._sent = values
        progress(0.85, "reading back")
        outputs = dict(getattr(result, "outputs", {}) or {})
        if self._output is not None:
            if self._output not in outputs:
                raise ParamsError(
                    f"explore(graph, outputs=...): expected one of {sorted(outputs)}, "
                    f"got {self._output!r}"
                )
            outputs = {self._output: outputs[self._output]}
        tracks, points, counts = read_outputs(outputs)
        report = getattr(result, "report", None)
        frame = frame_from(
            tracks if tracks is not None else {},
            points=points,
            report=report_rows(report),
            report_text=report.to_text() if hasattr(report, "to_text") else "",
            elapsed_ms=ms,
            traffic=tr,
        )
        frame.counts.update({k: v for k, v in counts.items() if k not in frame.counts})
        return frame

    def select(self, params: Params, env: int) -> tuple[int | None, int | None, str]:
        """A graph has no one seed: the seed is None. The epoch is the value of the graph's
        one ``"<node>.epoch"`` parameter (a track generator's or course's node), None when
        it has none or several. The code cooks the whole graph with ``params`` (it needs
        the ``graph`` explored) and names the env: a graph cannot rebuild one env alone."""
        d = params.to_dict()
        epochs = [k for k in d if k.endswith(".epoch") and k.count(".") == 1]
        epoch = int(d[epochs[0]]) if len(epochs) == 1 else None
        drawn = repr(self._output) if self._output is not None else "the output drawn"
        code = self.code(params) + f"# the env you clicked: index {env} of {drawn}\n"
        if epoch is not None:  # a generator node: where its seed is
            node = epochs[0].split(".")[0]
            code += (
                f"# {node!r} makes env {env} at its generator's seed + {env} "
                "(TrackGenerator.config.seed), epoch as above\n"
            )
        return None, epoch, code

    def code(self, params: Params) -> str:
        # node parameters as they are; a kernel-level value only where it differs from what
        # the node passes (setting one overrides the node)
        values = {
            k: v
            for k, v in params.to_dict().items()
            if k not in self._kernel_keys or self._kernel_start.get(k, v) != v
        }
        return (
            "# graph: the procgen_nb.Graph you explored\n"
            f"params = {_literal(values, '')}\n"
            "result = graph.cook(params=params)\n"
        )


def _shape(fields: Any) -> list[tuple[str, Any]]:
    """What a form shows of the fields: their names and choices (a cook that binds other
    columns changes the choices of a kernel's options)."""
    return [(k, None if f.choices is None else list(f.choices)) for k, f in dict(fields).items()]
