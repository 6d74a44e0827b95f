"""``_Pipeline``: what a ``TrackGenerator`` and a ``GateGenerator`` share: steps, the plan
of a call (recorded segments and the HOST steps between them), record and replay, the
dynamic fields' device buffers, a rebuild that a refusal undoes, and the bookkeeping that
lets a graph node that calls a generator replay exactly.

A subclass builds, in its ``_setup(config)``: ``ctx``, ``stage``, ``config``, ``params``,
``result``, ``_steps`` (``_Step`` objects, in order) and ``_dyn`` (the dynamic fields'
one-element buffers, by ``(owner key, field)``); it empties ``_plans``, calls ``_built()``
and ``_warm_up()``. ``_steps_of(mode)`` is what a call of ``mode`` runs (the steps, after
a head when the subclass has one per mode).

The first call of a mode runs eagerly (the warm-up loads every kernel); later calls replay
the recording of the plan, except a HOST step, which runs eagerly between two replayed
segments. Inside a graph node's cook the call's recordings replay into the node's log, so
the graph's recording runs them again; the epoch fill is always logged (another call may
have left another epoch in the word by the time the graph replays), and the log holds two
probes: the build version (a rebuild makes the node plan again) and the call count
(another call wrote the arrays the node returned: the graph replays the node).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import warp as wp

from .._handout import keep_held
from ..dynamic import apply, is_dynamic, peek
from ..errors import GeneratorError, NotCapturableError
from ..launch import log_entry, logging_open, unlogged
from ..params import Params
from ._checks import check_epoch
from ._param_buffers import fill_value, param_dtype, param_value
from .exec import _context
from .plugin import CaptureClass


@dataclasses.dataclass
class _Step:
    """One step of a call: a name, a capture class and ``run(ctx)``."""

    name: str
    capture: CaptureClass
    run: Callable[[Any], None]


class _Pipeline:
    """The base of ``TrackGenerator`` and ``GateGenerator`` (see the module)."""

    #: what its errors call it
    _what = "generator"
    _build_version = 0
    _calls = 0

    # -- the steps and the plan of a call ------------------------------------------------
    def _steps_of(self, mode: str) -> list[_Step]:
        """The steps a call of ``mode`` runs, in order."""
        return list(self._steps)

    @property
    def host_driven(self) -> bool:
        """True when a step is HOST (it runs eagerly each call)."""
        return any(s.capture is CaptureClass.HOST for s in self._steps)

    @property
    def recordings(self) -> dict[str, tuple[Any, ...]]:
        """The recorded plan of each call kind made so far: its ``Recording`` objects, and
        the HOST steps that run eagerly between them. The same objects call after call,
        until a static change rebuilds the pipeline."""
        return {mode: tuple(plan) for mode, plan in self._plans.items()}

    def _run_step(self, step: _Step, ctx: Any) -> None:
        if step.capture is CaptureClass.HOST:
            step.run(ctx)
        else:
            with ctx.strict():
                step.run(ctx)

    def _run_eager(self, mode: str) -> None:
        for step in self._steps_of(mode):
            self._run_step(step, self.ctx)

    def _warm_up(self) -> None:
        """The first call, eager: it loads every kernel (no part of a node's recording)."""
        with unlogged():
            self._run_eager("generate")

    def _plan(self, mode: str) -> list[Any]:
        """The plan of ``mode`` (recorded on its first use): each run of GRAPH steps as one
        ``Recording``, each HOST step as itself."""
        plan = self._plans.get(mode)
        if plan is not None:
            return plan
        plan = []
        group: list[_Step] = []

        def close() -> None:
            if group:
                steps = list(group)
                plan.append(self.ctx.record(lambda: [self._run_step(s, self.ctx) for s in steps]))
                group.clear()

        for step in self._steps_of(mode):
            if step.capture is CaptureClass.HOST:
                close()
                plan.append(step)
            else:
                group.append(step)
        close()
        self._plans[mode] = plan
        return plan

    def _run(self, mode: str, epoch: int | None = None) -> Any:
        """Runs the plan of ``mode`` (the HOST steps eagerly, the rest replayed) and counts
        the call; returns ``self.result``. A graph's result still held over the result's
        arrays is moved to a copy first (``keep_held``): the call writes them."""
        keep_held(self._result_arrays())
        for item in self._plan(mode):
            if isinstance(item, _Step):
                self._host_step(item.name)
                self._run_step(item, self.ctx)
            else:
                item.replay()
        self._called(epoch)
        return self.result

    def _result_arrays(self) -> list[wp.array]:
        """The arrays of ``self.result`` (its array fields and dicts of arrays): what a
        call writes and a node may hand out."""
        out: list[wp.array] = []
        for v in vars(self.result).values():
            if isinstance(v, wp.array):
                out.append(v)
            elif isinstance(v, dict):
                out.extend(a for a in v.values() if isinstance(a, wp.array))
        return out

    def _generate(self, epoch: Any) -> Any:
        """``generate``: the epoch written when given, then a call of ``"generate"``."""
        if epoch is not None:
            self._set_epoch(epoch)
        return self._run("generate", epoch)

    def _emit(self, ctx: Any, mode: str = "generate") -> None:
        """``enqueue``: every step of ``mode`` emitted through ``ctx``.

        Raises:
            ParamsError: ``ctx`` is not a ``LaunchContext``.
            NotCapturableError: a HOST step and ``ctx`` is recording.
        """
        _context("enqueue ctx", ctx, None, required=True)
        if ctx.recording and self.host_driven:
            raise NotCapturableError(
                f"{self._what} {self.stage.name!r}: expected a capturable generator inside a "
                "caller's recording, got a HOST one (capturable=False); call generate() instead"
            )
        for step in self._steps_of(mode):
            self._run_step(step, ctx)

    # -- the dynamic fields' buffers and a rebuild ----------------------------------------
    def _param_buffer(
        self, key: str, pcls: type[Params] | None, values: Params | None, label: str = ""
    ) -> Callable[[str], wp.array]:
        """``b.param`` of the stage ``key``: the one-element buffer of a dynamic field of
        ``pcls`` (made on first use, holding its value in ``values``).

        Raises (from the getter):
            GeneratorError: a name that is not a dynamic field (the message names
            ``label``, ``key`` when empty).
        """

        def get(name: str) -> wp.array:
            if pcls is None or name not in pcls.dynamic_fields():
                dyn = [] if pcls is None else pcls.dynamic_fields()
                raise GeneratorError(
                    f"{label or key} b.param: expected a dynamic field {dyn}, got {name!r}"
                )
            buf = self._dyn.get((key, name))
            if buf is None:
                buf = self._dyn[(key, name)] = wp.array(
                    [param_value(pcls, name, getattr(values, name))],
                    dtype=param_dtype(pcls, name),
                    device=self.ctx.device,
                )
            return buf

        return get

    def _fill_dynamic(self, key: str, pcls: type[Params], name: str, value: Any) -> None:
        """Writes ``value`` (a node's dynamic number: its expression) to the buffer of the
        dynamic field ``name`` of the stage ``key``, when a kernel reads one."""
        buf = self._dyn.get((key, name))
        if buf is not None:
            self.ctx.fill(buf, fill_value(pcls, name, value, key))

    def _rebuild(self, cfg: Any) -> None:
        """Runs ``_setup(cfg)``; on any error puts every attribute back as it was.

        ``_setup`` assigns new buffers, steps and parts (it writes into none of the old
        ones), so the attributes as they were before it are the whole old state.

        Raises:
            Whatever ``_setup`` raised, after the old state is back.
        """
        saved = dict(vars(self))
        try:
            self._setup(cfg)
        except BaseException:
            vars(self).clear()
            vars(self).update(saved)
            raise

    # -- what a graph node that calls the generator needs ----------------------------------
    def _built(self) -> None:
        """Notes a (re)build of the pipeline."""
        self._build_version += 1
        self._calls += 1

    def _set_epoch(self, epoch: Any) -> None:
        """Checks ``epoch`` and writes it to the epoch word when it moved, or always inside a
        node. A node's dynamic number is written as its expression (the replay writes the
        epoch it moves to, and refuses one ``check_epoch`` refuses by planning again).

        Raises:
            ParamsError: an epoch that is not an integer in [0, 2**31 - 1].
        """
        now = check_epoch("generate epoch", peek(epoch))
        if now != self.config.epoch or logging_open():
            self.config.epoch = now
            if is_dynamic(epoch):
                epoch = apply(lambda v: check_epoch("generate epoch", v), "epoch", epoch)
            self.ctx.fill(self._epoch, epoch)

    def _called(self, epoch: int | None) -> None:
        """Counts a call; inside a node's cook, logs what a graph replay of it needs."""
        self._calls += 1
        if not logging_open():
            return
        log_entry(("sync", self._replayed, (epoch,)))
        log_entry(("probe", self._build_version, self._build_count))
        log_entry(("stale", self._calls, self._call_count))

    def _build_count(self) -> int:
        return self._build_version

    def _call_count(self) -> int:
        return self._calls

    def _replayed(self, epoch: int | None) -> None:
        """A graph is about to replay a call of this generator: another graph's results
        held over its arrays move to copies (``keep_held``; the replaying graph moves its
        own), and Python's epoch follows the word's."""
        keep_held(self._result_arrays())
        if epoch is not None:
            self.config.epoch = int(epoch)  # the sync evaluates a dynamic epoch
        self._calls += 1

    def _host_step(self, name: str) -> None:
        """Marks the node cooking now (if any) to plan again every cook: a HOST step."""
        log_entry(("unrecordable", f"generator {self.stage.name!r} HOST step {name}"))


__all__ = ["_Pipeline", "_Step"]
