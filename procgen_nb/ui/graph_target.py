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

    ``alone`` says whether the last ``select`` rebuilt its env alone (the output drawn is
    a generator's or a course's node's).

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
        self._drawn: str | None = None  # the node whose output the last cook drew
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
        self._drawn = next((k for k, v in outputs.items() if v is tracks), None)
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
        """Env ``env`` of the output drawn (``outputs``, else the node whose output the last
        cook drew).

        When that output is a track generator's or a course's node's (``TrackGenerator
        .node()``, ``Course.node()``), env ``env`` is env 0 of a batch of one at that
        generator's seed of env ``env`` (``seed + env``, or its ``env_seeds[env]``) and the
        node's epoch and parameters: returns that seed, the epoch and the code that builds
        it alone (``alone`` is True after the call).

        Otherwise the seed is None (a kernel node after the generator may reorder or drop
        envs: the code names the nodes between) and the epoch is the generator node's
        upstream of the output (or the graph's one ``"<node>.epoch"``), None when there is
        none or several; the code cooks the whole graph with ``params`` (it needs the
        ``graph`` explored) and names the env (``alone`` is False after the call).
        """
        d = params.to_dict()
        drawn = self._output if self._output is not None else self._drawn
        found = _generator_upstream(self.graph, drawn) if drawn is not None else None
        if found is not None and found[1] == drawn:
            gen, node = found
            one = _alone_code(gen, node, d, env)
            if one is not None:
                self.alone = True
                return one
        self.alone = False
        if found is not None:
            node = found[1]
            epoch = int(d[f"{node}.epoch"]) if f"{node}.epoch" in d else None
        else:
            epochs = [k for k in d if k.endswith(".epoch") and k.count(".") == 1]
            epoch = int(d[epochs[0]]) if len(epochs) == 1 else None
            node = epochs[0].split(".")[0] if len(epochs) == 1 else None
        what = repr(drawn) if drawn is not None else "the output drawn"
        code = self.code(params) + f"# the env you clicked: index {env} of {what}\n"
        if found is not None and drawn != node:
            between = _between(self.graph, node, drawn)
            code += (
                f"# {what} comes from generator node {node!r} through the nodes {between}:\n"
                f"# env {env} of {what} need not be env {env} of {node!r} (they may reorder or "
                "drop envs), so this cooks the whole graph\n"
            )
        elif epoch is not None:  # a generator node: where its seed is
            code += (
                f"# {node!r} makes env {env} at its generator's seed + {env} "
                f"(TrackGenerator.config.seed; env_seeds[{env}] when given), epoch as above\n"
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


def _wired_up(graph: Any, name: str) -> list[str]:
    """The nodes whose outputs node ``name``'s inputs read (``graph.edges()``)."""
    edges = getattr(graph, "edges", None)
    if not callable(edges):
        return []
    return list(dict.fromkeys(e.source for e in edges() if e.target == name))


def _node_generator(graph: Any, name: str) -> Any:
    """The TrackGenerator or Course node ``name`` calls (``node.generator``), or None."""
    node_of = getattr(graph, "node_of", None)
    if not callable(node_of) or name not in getattr(graph, "nodes", ()):
        return None
    return getattr(node_of(name), "generator", None)


def _generator_upstream(graph: Any, drawn: str) -> tuple[Any, str] | None:
    """(the generator, its node) of ``drawn`` itself, else of the one generator node
    upstream of it; None when there is none or several."""
    here = _node_generator(graph, drawn)
    if here is not None:
        return here, drawn
    seen, todo, found = {drawn}, [drawn], []
    while todo:
        for up in _wired_up(graph, todo.pop()):
            if up in seen:
                continue
            seen.add(up)
            gen = _node_generator(graph, up)
            if gen is not None:
                found.append((gen, up))
            else:
                todo.append(up)
    return found[0] if len(found) == 1 else None


def _between(graph: Any, source: str, drawn: str) -> list[str]:
    """The nodes on the wires from ``source`` to ``drawn`` (``drawn`` included), in cook
    order."""
    nodes = list(getattr(graph, "nodes", []) or [])
    reach = {source}
    for name in nodes:  # cook order: every upstream node comes first
        if name != source and any(u in reach for u in _wired_up(graph, name)):
            reach.add(name)
    feeds = {drawn}
    for name in reversed(nodes):
        if name in feeds:
            feeds.update(_wired_up(graph, name))
    return [n for n in nodes if n in reach and n in feeds and n != source]


def _alone_code(
    gen: Any, node: str, values: dict[str, Any], env: int
) -> tuple[int, int, str] | None:
    """(seed, epoch, code) of env ``env`` of generator node ``node`` alone, from its
    ``values`` (``"node.field"``); None for a generator of a kind it does not know."""
    if hasattr(gen, "track") and hasattr(gen, "gates"):
        return _course_code(gen, node, values, env)
    if hasattr(gen, "stage") and hasattr(gen, "config"):
        return _track_code(gen, node, values, env)
    return None


def _group(values: dict[str, Any], key: str, current: Any) -> dict[str, Any]:
    """The node's values (``key + field``) of every field of Params ``current`` ({} for
    None); a field the values lack keeps its current value."""
    if current is None:
        return {}
    return {k: values.get(f"{key}{k}", getattr(current, k)) for k in type(current).fields()}


def _env_seed(config: Any, env: int) -> int:
    """The seed env ``env`` of a batch is made with: ``env_seeds[env]``, else
    ``seed + env`` (``TrackGenConfig.seed``'s rule, as ``TrackTarget.select``)."""
    if getattr(config, "env_seeds", None) is not None:
        return int(config.env_seeds[env])
    return int(config.seed) + int(env)


def _track_code(tg: Any, node: str, values: dict[str, Any], env: int) -> tuple[int, int, str]:
    """(seed, epoch, code) of env ``env`` of TrackGenerator node ``node``: a
    ``presets.track`` of one env at its seed, with the node's values and the
    generator's other config."""
    from .track_target import _plugin_lines

    cfg = tg.config
    key = f"{node}."
    own = _group(values, key, tg.params)
    validity = _group(values, f"{key}validity_", cfg.validity)
    z = _group(values, f"{key}z_", tg.z_profile_params)
    seed, epoch = _env_seed(cfg, env), int(values.get(f"{key}epoch", cfg.epoch))
    width = cfg.width.to_dict() if cfg.width is not None else None
    args = {
        "validity": validity,
        "z_profile": z if tg.z_profile_params is not None else None,
        "width": width,
        "direction": cfg.direction,
        "scale": cfg.scale,
        "num_envs": 1,
        "num_points": cfg.num_points,
        "seed": seed,
    }
    body = "".join(
        f"    {k}={_literal(v, '    ') if isinstance(v, dict) else repr(v)},\n"
        for k, v in args.items()
    )
    code = (
        "from procgen_nb.track_gen import presets\n"
        f"{_plugin_lines(tg.spec)}"
        "\n"
        f"generator_params = {_literal(own, '')}\n"
        "generator = presets.track(\n"
        f"    generator={cfg.generator!r},\n"
        "    generator_params=generator_params,\n"
        f"{body}"
        ")\n"
        f"# env {env} of node {node!r} of the graph you explored, alone\n"
        f"result = generator.generate(epoch={epoch!r})\n"
    )
    return seed, epoch, code


def _course_code(
    course: Any, node: str, values: dict[str, Any], env: int
) -> tuple[int, int, str] | None:
    """(seed, epoch, code) of env ``env`` of Course node ``node``: a ``gates.build`` of
    one course at its seed with the node's values and the course's other config; None
    for a course ``build`` cannot make (per-point widths, a direction other than
    ``"ccw"``, or centerline and gates at different seeds)."""
    from .course_target import _gate_ref

    tcfg, gcfg = course.track.config, course.gates.config
    seed = _env_seed(tcfg, env)
    if tcfg.width is not None or tcfg.direction != "ccw" or _env_seed(gcfg, env) != seed:
        return None
    key = f"{node}."
    epoch = int(values.get(f"{key}epoch", tcfg.epoch))
    gate = _gate_ref(course.gates)
    lines = ["from procgen_nb.track_gen.gates import build"]
    if isinstance(gate, str):
        gate_src = repr(gate)
    else:
        mod = getattr(gate, "__module__", "__main__")
        qual = getattr(gate, "__qualname__", type(gate).__qualname__).split(".")[0]
        if mod == "__main__":
            lines.append(f"# {qual}: the gate generator defined in your notebook")
        else:
            lines.append(f"from {mod} import {qual}")
        gate_src = qual
    z = _group(values, f"{key}track_z_", course.track.z_profile_params)
    args: dict[str, Any] = {}
    if not course.gates_first:
        args["generator"] = tcfg.generator
        args["generator_params"] = _group(values, f"{key}track_", course.track.params)
    args.update(
        gate_params=_group(values, f"{key}gates_", course.gates.params),
        gate_ordering=gcfg.gate_ordering,
        num_points=tcfg.num_points,
        track_width=course.track_width,
        z_profile=z if course.track.z_profile_params is not None else None,
        samples=course.track.stage.samples if course.gates_first else 8,
        validity=_group(values, f"{key}track_validity_", tcfg.validity),
        scale=tcfg.scale,
        min_gates=gcfg.min_gates,
        max_gates=gcfg.max_gates,
        min_spacing=gcfg.min_spacing,
        gate_size=gcfg.gate_size,
        seed=seed,
        epoch=epoch,
    )
    body = ["    1,", f"    gate_generator={gate_src},"]
    body += [
        f"    {k}={_literal(v, '    ') if isinstance(v, dict) else repr(v)},"
        for k, v in args.items()
    ]
    code = "\n".join(
        [
            *lines,
            "",
            f"# env {env} of node {node!r} of the graph you explored, alone",
            "course = build(",
            *body,
            ")",
            "",
        ]
    )
    return seed, epoch, code
