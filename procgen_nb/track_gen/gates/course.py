"""``Course`` and ``build``: a centerline, its gates and its z profile per env, checked.

Two ways a course is made, chosen by the gate generator:

- it reads the centerline (``reads = ("xy",)``: ``arc_length``, ``curvature``): the
  ``TrackGenerator`` makes the centerline, then the gates are placed on it;
- it does not (``free``, a legacy ``GateGeneratorSpec``): the gates are made first, and
  the centerline is a closed Catmull-Rom spline through them in their order
  (``samples`` points per gate before resampling).

Then, on the device: each gate's nearest point of the centerline gives its arc position,
its signed lateral offset, its heading (the tangent there) and its height (the z profile
there, 0 without one); the course is valid when the centerline is valid, the gates are
valid (count, spacing), the gates go once around the track in the direction of travel,
and every gate fits inside the track (``|lateral| + size / 2 <= track_width / 2``, with 1e-5 of slack).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import warp as wp

from ..._handout import keep_held
from ...columns import Column, LiveCount, Record
from ...errors import GeneratorError, ParamsError
from ...launch import log_entry, logging_open, unlogged
from .._checks import check_int, check_positive
from .._node import course_node
from ..config import TrackGenConfig
from ..exec import LaunchContext, _context
from ..generators import _kernels as _gk
from ..ops import _kernels as _ok
from ..pipeline import TrackGenerator
from ..plugin import CaptureClass, Stage, registry
from . import _course_kernels as _ck
from ._registry import lookup
from .config import GateGenConfig
from .generator import GateGenerator, as_gate_stage

#: what each bit of ``Course.reason`` means
COURSE_REASONS = {
    1: "centerline invalid",
    2: "gates invalid (count, spacing or a non-finite gate)",
    4: "gates not in order along the track",
    8: "a gate outside the track's width",
}


class _ThroughGates(Stage):
    """The centerline generator of a course whose gates come first: a closed Catmull-Rom
    spline through each env's gates, in their order."""

    name = "through_gates"
    writes = ("xy", "count")

    def __init__(self, gates: GateGenerator, samples: int):
        self._gates = gates
        self._samples = samples

    @property
    def samples(self) -> int:
        """The spline points per gate of the centerline through the gates (``Course``'s
        ``samples``)."""
        return self._samples

    def raw_points(self, config: Any, params: Any) -> int:
        return self._gates.config.max_gates * self._samples

    def build(self, b: Any, params: Any) -> Callable[[Any], None]:
        res = self._gates.result
        xy, count = b.write("xy"), b.write("count")
        args = [res.xy, res.count, res.max_gates, self._samples, b.active, b.raw, xy, count]
        dim = b.E * b.raw

        def enqueue(ctx: Any) -> None:
            ctx.launch(_gk._closed_cr_k, dim, args)

        return enqueue


def _width(value: Any) -> float:
    return check_positive("Course track_width", value)


class Course:
    """Centerlines, gates and z profiles of ``num_envs`` courses, remade per call.

    Args:
        track: the ``TrackGenConfig`` of the centerlines (its ``generator`` is unused when
            the gates come first).
        gates: the ``GateGenConfig`` of the gates (the same ``num_envs``).
        track_width: the track's full width (world units, > 0).
        gate_generator: an anchors Stage or ``GateGeneratorSpec`` to run instead of
            looking ``gates.generator`` up in the registry.
        samples: spline points per gate of a centerline through the gates (>= 2).
        ctx: the launch context (a new one on ``track.device`` when None).

    Attributes:
        track: the ``TrackGenerator``. gates: the ``GateGenerator``.
        gates_first: True when the centerline runs through the gates.
        valid: ``[E]`` int32 course validity. reason: ``[E]`` int32 bits (``COURSE_REASONS``).
        s: ``[E*G]`` float32 arc position of each gate. lateral: ``[E*G]`` signed offsets.
        valid_count: ``[1]`` int32 valid courses (a live count).

    Raises:
        GeneratorError: generators that cannot make a course together, or refused configs.
        ParamsError: different ``num_envs``, or a refused ``track_width`` / ``samples``.
    """

    def __init__(
        self,
        track: TrackGenConfig,
        gates: GateGenConfig,
        *,
        track_width: float = 0.2,
        gate_generator: Any = None,
        samples: int = 8,
        ctx: LaunchContext | None = None,
    ):
        if not isinstance(track, TrackGenConfig) or not isinstance(gates, GateGenConfig):
            raise ParamsError(
                f"Course: expected a TrackGenConfig and a GateGenConfig, got {track!r}, {gates!r}"
            )
        if track.num_envs != gates.num_envs:
            raise ParamsError(
                f"Course gates.num_envs: expected track.num_envs={track.num_envs}, "
                f"got {gates.num_envs}"
            )
        samples = check_int("Course samples", samples, 2, 256)
        self.track_width = _width(track_width)
        self.ctx = _context("Course ctx", ctx, track.device)
        self._make(track, gates, gate_generator, samples)

    # -- construction --------------------------------------------------------------------
    def _make(
        self, track: TrackGenConfig, gates: GateGenConfig, gate_generator: Any, samples: int
    ) -> None:
        """Makes the two generators over checked configs, the course's arrays and its
        warm-up call (again, from ``node()``, when a static field moved)."""
        spec = gate_generator if gate_generator is not None else lookup(registry, gates.generator)
        stage = as_gate_stage(spec)
        self.gates_first = "xy" not in tuple(getattr(stage, "reads", ()))
        if self.gates_first:
            self.gates = GateGenerator(gates, self.ctx, generator=stage)
            through = _ThroughGates(self.gates, samples)
            self.track = TrackGenerator(track, self.ctx, generator=through)
        else:
            self.track = TrackGenerator(track, self.ctx)
            self.gates = GateGenerator(gates, self.ctx, generator=stage, track=self.track)
        self._build_course()
        with unlogged():  # the warm-up is no part of a graph node's recording
            self._run_course(eager=True)

    def _build_course(self) -> None:
        E, N = self.track.config.num_envs, self.track.config.num_points
        g, t = self.gates.result, self.track.result
        G = g.max_gates
        dev = self.ctx.device
        self.s = wp.zeros(E * G, dtype=float, device=dev)
        self.lateral = wp.zeros(E * G, dtype=float, device=dev)
        self.valid = wp.zeros(E, dtype=wp.int32, device=dev)
        self.reason = wp.zeros(E, dtype=wp.int32, device=dev)
        self.valid_count = wp.zeros(1, dtype=wp.int32, device=dev)
        z = t.attributes.get("z")
        zbuf = z if z is not None else wp.zeros(1, dtype=float, device=dev)
        place = [t.xy, zbuf, int(z is not None), N, g.xy, g.count, G]
        place += [g.position, g.heading, self.s, self.lateral]
        check = [t.xy, N, t.valid, g.valid, g.count, G, self.s, self.lateral, g.size]
        check += [self.track_width, self.valid, self.reason]

        def run(ctx: Any) -> None:
            ctx.launch(_ck._place_k, E * G, place)
            ctx.launch(_ck._course_valid_k, E, check)
            ctx.launch(_ok._count_k, 1, [self.valid, E, self.valid_count])

        self._course_run = run
        self._course_rec: Any = None

    def _keep_course(self) -> None:
        """Moves a graph's result still held over the course's own arrays to a copy
        (``keep_held``): the call about to run writes them."""
        keep_held([self.s, self.lateral, self.valid, self.reason, self.valid_count])

    def _run_course(self, eager: bool = False) -> None:
        self._keep_course()
        if logging_open():  # a graph replaying this call keeps the other graphs' results too
            log_entry(("sync", self._keep_course, ()))
        if eager:
            with self.ctx.strict():
                self._course_run(self.ctx)
            return
        if self._course_rec is None:
            self._course_rec = self.ctx.record(lambda: self._course_run(self.ctx))
        self._course_rec.replay()

    # -- running ------------------------------------------------------------------------------
    def generate(self, epoch: int | None = None) -> Course:
        """Makes every env's course again (for ``epoch`` when given); returns ``self``.

        Raises:
            ParamsError: an epoch that the configs refuse (not an integer in [0, 2**31 - 1]).
        """
        first, second = (self.gates, self.track) if self.gates_first else (self.track, self.gates)
        first.generate(epoch)
        second.generate(epoch)
        self._run_course()
        return self

    @property
    def host_driven(self) -> bool:
        """True when a stage of the course is HOST (it runs eagerly each call)."""
        return self.track.host_driven or self.gates.host_driven

    @property
    def xy(self) -> wp.array:
        """``[E*N]`` vec2 centerlines."""
        return self.track.result.xy

    @property
    def z(self) -> wp.array | None:
        """``[E*N]`` float32 heights of the centerline (None without a z profile)."""
        return self.track.result.attributes.get("z")

    @property
    def capture(self) -> CaptureClass:
        """HOST when a stage is HOST, else GRAPH."""
        return CaptureClass.HOST if self.host_driven else CaptureClass.GRAPH

    def columns(self) -> Record:
        """The course in the runtime's types (no copy): the track's ``result.columns()``
        with ``valid`` and ``valid_count`` the course's (an Int Column and a live count),
        ``track_valid`` the centerline's, and the gates' ``gate_position`` (Vec3),
        ``gate_heading``, ``gate_size``, ``s``, ``lateral`` (Float, ``[E*G]``) and
        ``gate_count`` (Int, ``[E]``)."""
        out = self.track.result.columns()
        out["track_valid"] = out["valid"]
        out["valid"] = Column(self.valid, "Int")
        out["valid_count"] = LiveCount(self.valid_count.view(wp.uint32), len(self.valid))
        out["reason"] = Column(self.reason, "Int")
        g = self.gates.result
        out["gate_position"] = Column(g.position, "Vec3")
        for key, arr in (("gate_heading", g.heading), ("gate_size", g.size)):
            out[key] = Column(arr, "Float")
        out["s"], out["lateral"] = Column(self.s, "Float"), Column(self.lateral, "Float")
        out["gate_count"] = Column(g.count, "Int")
        return out

    def node(self, name: str | None = None) -> Any:
        """Returns this course as a graph node answering ``columns()``.

        Its parameters are every Params field of the track generator (``track_<field>``,
        ``track_validity_<field>``, ``track_z_<field>``), of the gate generator
        (``gates_<field>``) and ``epoch``. Moving a dynamic field replays the node's
        recording; moving a static one rebuilds the generator it belongs to and makes the
        course again over the new generators (the node plans again).

        Raises:
            GeneratorError: a Params field named ``epoch`` or named like another one.
        """
        samples = self.track.stage.samples if self.gates_first else 8

        def restart() -> None:
            with unlogged():  # making the course is no part of the node's recording
                self._make(self.track.config, self.gates.config, self.gates.stage, samples)

        return course_node(self, restart, name)

    # -- display (a one-line repr; a table and a picture in a notebook) -----------------
    def __repr__(self) -> str:
        from ..._display import line

        E = self.track.config.num_envs
        names = f"{self.track.stage.name!r} centerlines, {self.gates.stage.name!r} gates"
        return line("Course", names, f"{E} envs", track_width=self.track_width)

    def _repr_html_(self) -> str:
        from ..._display import table, tracks_png

        E = self.track.config.num_envs
        rows = [("centerlines", self.track.stage.name), ("gates", self.gates.stage.name)]
        rows += [("envs", E), ("gates first", self.gates_first), ("track width", self.track_width)]
        rows += [("valid courses", f"{self.num_valid()} of {E}"), ("device", self.ctx.device)]
        return table("Course", rows, tracks_png(self.xy, self.valid, E))

    def num_valid(self) -> int:
        """Reads the live count of valid courses back (one readback; a graph node that
        calls it plans again every cook)."""
        log_entry(("unrecordable", "Course.num_valid() (a readback)"))
        return int(self.ctx.readback(self.valid_count)[0])

    def numpy(self) -> dict[str, np.ndarray]:
        """Reads the course back: the track's arrays (``xy [E, N, 2]``, ``z [E, N]``...),
        the gates' (``gate_position [E, G, 3]``, ``gate_heading``, ``gate_size``,
        ``gate_count``, ``gate_valid``), ``s``, ``lateral``, ``valid`` and ``reason``."""
        log_entry(("unrecordable", "Course.numpy() (a readback)"))
        E, G = self.track.config.num_envs, self.gates.result.max_gates
        out = dict(self.track.result.numpy())
        out["track_valid"] = out.pop("valid")
        for k, v in self.gates.result.numpy().items():
            out[f"gate_{k}"] = v
        rb = self.ctx.readback
        out["s"] = rb(self.s).reshape(E, G)
        out["lateral"] = rb(self.lateral).reshape(E, G)
        out["valid"] = rb(self.valid)
        out["reason"] = rb(self.reason)
        return out

    def fingerprint(self) -> str:
        """Returns the sha256 of the centerlines, heights, gates and validity, as hex."""
        data = self.numpy()
        h = hashlib.sha256()
        keys = ["xy", "z", "gate_position", "gate_heading", "gate_size", "gate_count", "valid"]
        for key in keys:
            if key in data:
                h.update(key.encode())
                h.update(np.ascontiguousarray(data[key]).tobytes())
        return h.hexdigest()


def build(
    num_envs: int = 64,
    *,
    generator: str | None = None,
    generator_params: Mapping[str, Any] | None = None,
    gate_generator: Any = "arc_length",
    gate_params: Mapping[str, Any] | None = None,
    gate_ordering: str | None = None,
    num_points: int = 256,
    track_width: float = 0.2,
    z_profile: Any = True,
    samples: int = 8,
    ctx: LaunchContext | None = None,
    **config: Any,
) -> Course:
    """Builds a ``Course`` (warmed up: kernels loaded, first batch made).

    Args:
        num_envs: courses made at once.
        generator: the centerline generator (``"polar"`` when None); must be None when the
            gate generator makes the gates first (the centerline runs through them).
        generator_params: its Params fields.
        gate_generator: a registered gate generator's name, an anchors Stage or a
            ``GateGeneratorSpec``.
        gate_params: the gate generator's Params fields.
        gate_ordering: ``GateGenConfig.gate_ordering``.
        num_points: N, centerline points per env.
        track_width: the track's full width; also the centerline validity's
            ``track_width`` unless ``validity=`` says otherwise.
        z_profile: ``TrackGenConfig.z_profile`` (True: the default heights).
        samples: spline points per gate of a centerline through the gates.
        ctx: the launch context.
        **config: ``seed``, ``epoch``, ``scale``, ``device``, ``env_seeds`` (both configs),
            ``validity`` (the centerline's), ``min_gates``, ``max_gates``, ``min_spacing``,
            ``gate_size`` (the gates').

    Raises:
        ParamsError: an unknown keyword or a refused value.
        GeneratorError: unknown generators, refused params, or a centerline generator given
            with a gate generator that makes the centerline through its gates.
    """
    shared = {"seed", "epoch", "scale", "device", "env_seeds"}
    track_only = {"validity"}
    gate_only = {"min_gates", "max_gates", "min_spacing", "gate_size"}
    unknown = sorted(set(config) - shared - track_only - gate_only)
    if unknown:
        raise ParamsError(
            f"build: expected keywords among {sorted(shared | track_only | gate_only)}, "
            f"got {unknown}"
        )
    spec = lookup(registry, gate_generator) if isinstance(gate_generator, str) else gate_generator
    name = gate_generator if isinstance(gate_generator, str) else getattr(spec, "name", "")
    stage = as_gate_stage(spec)
    gates_first = "xy" not in tuple(getattr(stage, "reads", ()))
    if gates_first and (generator is not None or generator_params):
        raise GeneratorError(
            f"build generator: expected None with gate generator {name!r} (the centerline "
            f"runs through its gates), got {generator!r}"
        )
    common = {k: v for k, v in config.items() if k in shared}
    validity = config.get("validity")
    if validity is None:
        validity = {"track_width": _width(track_width)}
    tcfg = TrackGenConfig(
        num_envs=num_envs,
        num_points=num_points,
        generator=generator or "polar",
        generator_params=generator_params,
        z_profile=z_profile,
        validity=validity,
        **common,
    )
    gcfg = GateGenConfig(
        num_envs=num_envs,
        generator=name or "gates",
        generator_params=gate_params,
        gate_ordering=gate_ordering,
        **common,
        **{k: v for k, v in config.items() if k in gate_only},
    )
    return Course(
        tcfg, gcfg, track_width=track_width, gate_generator=stage, samples=samples, ctx=ctx
    )


__all__ = ["COURSE_REASONS", "Course", "build"]
