"""A gate generator or a course as an ``explore`` target (``track_gen.gates.build``).

A gate generator is explored as the course it makes: the centerline from a track
generator with the gates placed on it (a generator that reads ``"xy"``, such as
``arc_length``), or the centerline through the gates (one that places its gates first,
such as ``free``). The form groups the fields: ``track.*`` (the centerline generator's
Params, when the gates do not come first), ``gates.*`` (the gate generator's Params) and
``course.*`` (``num_envs``, ``num_points``, ``track_width``, ``max_gates``, ``seed``,
``epoch``). A change of ``epoch`` generates again; any other change builds the course again.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from .._traffic import collect
from ..errors import ProcgenError
from ..params import Field, Params, params_class
from .frame import Frame, frame_from
from .target import Progress, Target, _literal, _no_progress, _timed
from .track_target import _generator_params, _row, racing_arrays, reason_counts

#: the fields of every course besides the generators' own Params.
COURSE_FIELDS: dict[str, Field] = {
    "num_envs": Field(16, bounds=(1, 65536), soft=(1, 64), doc="courses made at once"),
    "num_points": Field(
        128, bounds=(8, 65536), soft=(16, 512), step=8, doc="centerline points per env"
    ),
    "track_width": Field(
        0.2, bounds=(1e-3, None), soft=(0.01, 0.5), unit="world", doc="the track's full width"
    ),
    "max_gates": Field(32, bounds=(1, 4096), soft=(3, 64), doc="gate slots per env"),
    "seed": Field(0, bounds=(0, 2**31 - 1), doc="seed of env 0 (env e uses seed + e)"),
    "epoch": Field(0, bounds=(0, 2**31 - 1), doc="mixed into every env's seed; new courses"),
}

#: short labels of the bits of ``Course.reason`` (``track_gen.gates.COURSE_REASONS``).
_SHORT_REASONS = {1: "centerline", 2: "gates", 4: "gate order", 8: "gate off the track"}


def _gates() -> Any:
    try:
        from ..track_gen import gates
    except ImportError as exc:
        raise ProcgenError(
            f"explore: expected procgen_nb.track_gen.gates to make a course, got ImportError: {exc}"
        ) from exc
    return gates


def gate_spec(name: str) -> Any:
    """Returns the registered gate generator named ``name``.

    Raises:
        ProcgenError: when ``procgen_nb.track_gen.gates`` is missing.
        GeneratorError: an unknown name (the message lists the available ones).
    """
    return _gates().get_gate_generator(name)


def _gates_first(spec: Any) -> bool:
    return "xy" not in tuple(getattr(spec, "reads", ()) or ())


class CourseTarget(Target):
    """A course: a centerline generator and a gate generator, made with ``gates.build``.

    Args:
        gate_generator: a registered gate generator's name, an anchors Stage class or a
            ``GateGeneratorSpec``.
        generator: the centerline generator's name (``"polar"``); ignored when the gate
            generator places its gates first (the centerline runs through them).
        values: starting values by field name (``"gates.spacing"``, ``"course.num_envs"``),
            or by the short names of the ``course.*`` fields (``num_envs=16``).

    Raises:
        ProcgenError: when ``procgen_nb.track_gen.gates`` is missing.
        GeneratorError: an unknown generator name.
        ParamsError: a starting value a field refuses.
    """

    alone = True
    races = True
    group = True

    def __init__(self, gate_generator: Any, *, generator: str = "polar", **values: Any):
        self.gate = gate_generator if not isinstance(gate_generator, str) else None
        self.gate_name = (
            gate_generator
            if isinstance(gate_generator, str)
            else getattr(gate_generator, "name", "")
        )
        spec = gate_spec(gate_generator) if isinstance(gate_generator, str) else gate_generator
        self.gates_first = _gates_first(spec)
        self.generator = None if self.gates_first else generator
        fields: dict[str, Field] = {}
        if self.generator is not None:
            from ..track_gen.plugin import registry

            track_params = _generator_params(registry.get("generator", self.generator))
            for k, f in (track_params.fields() if track_params else {}).items():
                fields[f"track.{k}"] = dataclasses.replace(f)
        gate_params = _generator_params(spec)
        for k, f in (gate_params.fields() if gate_params else {}).items():
            fields[f"gates.{k}"] = dataclasses.replace(f)
        for k, f in COURSE_FIELDS.items():
            fields[f"course.{k}"] = dataclasses.replace(f)
        track = self.generator or "through the gates"
        self.name = f"{self.gate_name} gates on {track}"
        self.params_class = params_class("CourseExploreParams", fields, self.name)
        start = {(k if "." in k else f"course.{k}"): v for k, v in values.items()}
        self._initial = self.params_class(**start)
        self._key: Any = None
        self._course: Any = None

    @property
    def initial(self) -> Params:
        return self._initial

    def sections(self) -> list[tuple[str, list[str], bool]]:
        names = list(self.params_class.fields())
        out = []
        if self.generator is not None:
            track = [n for n in names if n.startswith("track.")]
            out.append((f"centerline ({self.generator})", track, True))
        out.append(
            (f"gates ({self.gate_name})", [n for n in names if n.startswith("gates.")], True)
        )
        out.append(("course", [n for n in names if n.startswith("course.")], True))
        return out

    def reason_labels(self) -> dict[int, str]:
        reasons = getattr(_gates(), "COURSE_REASONS", {})
        return {b: _SHORT_REASONS.get(b, t.split(" (")[0]) for b, t in reasons.items()}

    def width(self, params: Params) -> float | None:
        return float(params.to_dict()["course.track_width"])

    def check(self, params: Params) -> tuple[str, str] | None:
        """Refuses, before building, ``max_gates`` below the gates the gate generator may
        place (its ``capacity``), naming both controls."""
        need = self._capacity(params)
        have = params.to_dict()["course.max_gates"]
        if need is None or have >= need:
            return None
        return (
            "course.max_gates",
            f"max gates: {have} is below the {need} gates the {self.gate_name} generator may "
            f"place with these settings; accepted: {need} or more (or lower the gates' "
            "maximum count)",
        )

    def _capacity(self, params: Params) -> int | None:
        spec = self.gate if self.gate is not None else gate_spec(self.gate_name)
        capacity = getattr(spec, "capacity", None)
        gate_params = _generator_params(spec)
        if not callable(capacity) or gate_params is None:
            return None
        try:
            from ..track_gen.gates.stage import GateLayout

            _, gates, course = self._split(params)
            layout = GateLayout(
                num_envs=course["num_envs"],
                scale=1.0,
                max_gates=course["max_gates"],
                num_points=0 if self.gates_first else course["num_points"],
            )
            stage = spec() if isinstance(spec, type) else spec
            cap = stage.capacity(gate_params(**gates), layout)
            return int(cap["gates"])
        except Exception:  # the build will say what is wrong
            return None

    def _split(self, params: Params) -> tuple[dict, dict, dict]:
        d = params.to_dict()
        pick = lambda p: {k.split(".", 1)[1]: v for k, v in d.items() if k.startswith(p)}  # noqa: E731
        return pick("track."), pick("gates."), pick("course.")

    def _build_args(self, track: dict, gates: dict, course: dict) -> dict[str, Any]:
        args: dict[str, Any] = {"num_envs": course["num_envs"]}
        if self.generator is not None:
            args["generator"] = self.generator
            args["generator_params"] = track or None
        args["gate_generator"] = self.gate if self.gate is not None else self.gate_name
        args["gate_params"] = gates or None
        for k in ("num_points", "track_width", "max_gates", "seed", "epoch"):
            args[k] = course[k]
        return args

    def cook(self, params: Params, progress: Progress = _no_progress) -> Frame:
        gates_mod = _gates()
        track, gates, course = self._split(params)
        key = (
            tuple(track.items()),
            tuple(gates.items()),
            tuple((k, v) for k, v in course.items() if k != "epoch"),
        )
        rows = []
        t0 = time.perf_counter()
        with collect() as total:
            if key != self._key:
                progress(0.05, "building the course (the first build compiles kernels)")
                self._course, self._key = None, None
                args = self._build_args(track, gates, course)
                built, ms, tr = _timed(lambda: gates_mod.build(**args))
                self._course, self._key = built, key
                rows.append(_row(f"{self.gate_name} course: built", ms, tr, reused=False))
            else:
                progress(0.3, "generating")
                _, ms, tr = _timed(lambda: self._course.generate(epoch=course["epoch"]))
                rows.append(_row("generate", ms, tr))
            progress(0.85, "reading back")
            data, ms, tr = _timed(self._course.numpy)
            rows.append(_row("read back for the view", ms, tr))
        self.result = self._course  # the Course drawn: its arrays as numpy() read them
        elapsed = (time.perf_counter() - t0) * 1e3
        counts = {
            "valid centerlines": int(data["track_valid"].astype(bool).sum()),
            "valid gate layouts": int(data["gate_valid"].astype(bool).sum()),
            "gates (total)": int(data["gate_count"].sum()),
        }
        reasons = getattr(gates_mod, "COURSE_REASONS", {})
        labels = {b: _SHORT_REASONS.get(b, t.split(" (")[0]) for b, t in reasons.items()}
        counts.update(reason_counts(data["reason"], labels, "invalid: "))
        result = {
            "xy": data["xy"],
            "valid": data["valid"],
            "gates": {
                "positions": data["gate_xy"],
                "count": data["gate_count"],
                "heading": data["gate_heading"],
            },
            "counts": counts,
            "reason": data["reason"],
        }
        return frame_from(result, report=tuple(rows), elapsed_ms=elapsed, traffic=total)

    def racing(self, params: Params) -> dict[str, Any] | None:
        """The racing line of the course's centerlines (``racing_arrays``, at its
        ``track_width``)."""
        if self._course is None:
            return None
        return racing_arrays(self._course.track.result, self.width(params))

    def select(self, params: Params, env: int) -> tuple[int | None, int | None, str]:
        """Env ``env`` of a batch is env 0 of a course of one at seed ``seed + env`` (the
        same epoch and parameters: every env draws from its own seed): returns that seed,
        the epoch and the code that builds that one course alone."""
        d = params.to_dict()
        seed = int(d["course.seed"]) + int(env)
        epoch = int(d["course.epoch"])
        one = params.replace(**{"course.num_envs": 1, "course.seed": seed})
        code = self.code(one).replace(
            "course = build(\n", f"# env {env} of the batch you explored, alone\ncourse = build(\n"
        )
        return seed, epoch, code

    def code(self, params: Params) -> str:
        args = self._build_args(*self._split(params))
        lines = ["from procgen_nb.track_gen.gates import build", ""]
        gate = args.pop("gate_generator")
        if not isinstance(gate, str):
            mod = getattr(gate, "__module__", "__main__")
            qual = getattr(gate, "__qualname__", type(gate).__qualname__)
            if mod != "__main__":
                lines.insert(1, f"from {mod} import {qual.split('.')[0]}")
            gate_src = qual
        else:
            gate_src = repr(gate)
        body = [f"    {args.pop('num_envs')!r},"]
        for k, v in args.items():
            if k == "gate_params":
                body.append(f"    gate_generator={gate_src},")
            if isinstance(v, dict):
                body.append(f"    {k}={_literal(v, '    ')},")
            else:
                body.append(f"    {k}={v!r},")
        return "\n".join([*lines, "course = build(", *body, ")", ""])


def _gate_ref(gen: Any) -> Any:
    """The registered name of a GateGenerator's spec when the registry holds that spec."""
    spec, name = gen.spec, gen.config.generator
    try:
        if gate_spec(name) is spec:
            return name
    except ValueError:
        pass
    return spec


def _params_values(prefix: str, params: Any) -> dict[str, Any]:
    return {f"{prefix}.{k}": v for k, v in (params.to_dict() if params is not None else {}).items()}


def course_target(obj: Any) -> CourseTarget:
    """Returns the ``CourseTarget`` of a built ``Course`` or ``GateGenerator``, starting
    from its configuration.

    Raises:
        ProcgenError: when ``obj`` is neither.
    """
    gates_mod = _gates()
    if isinstance(obj, gates_mod.Course):
        tcfg, gcfg = obj.track.config, obj.gates.config
        values = _params_values("gates", obj.gates.params)
        if not obj.gates_first:
            values.update(_params_values("track", obj.track.params))
        values.update(
            num_envs=tcfg.num_envs,
            num_points=tcfg.num_points,
            track_width=obj.track_width,
            max_gates=gcfg.max_gates,
            seed=tcfg.seed,
            epoch=tcfg.epoch,
        )
        return CourseTarget(_gate_ref(obj.gates), generator=tcfg.generator, **values)
    if isinstance(obj, gates_mod.GateGenerator):
        gcfg = obj.config
        values = _params_values("gates", obj.params)
        values.update(
            num_envs=gcfg.num_envs, max_gates=gcfg.max_gates, seed=gcfg.seed, epoch=gcfg.epoch
        )
        return CourseTarget(_gate_ref(obj), **values)
    raise ProcgenError(f"course_target: expected a Course or a GateGenerator, got {obj!r}")
