"""The launch context of a track call and the ``StageBuilder`` a Stage builds with.

``LaunchContext`` here is ``procgen_nb.LaunchContext``, the one context of both doors (one
device, one stream, one set of traffic counters), with what Stages need: ``bounded_loop``
for BOUNDED stages, a strict mode that refuses readbacks outside ``ctx.host()``, and
``sync`` for legacy helpers. ``pg.default_context()`` drives a ``TrackGenerator`` as well.

Inside a caller's capture (the caller's ``ctx.record``, or a Warp capture open on the device,
on the CPU too) a track call's recordings do not replay: their work is emitted again, so it
joins the caller's recording, and host work (a readback, an allocation, ``ctx.host()``, a
HOST generator's step) raises ``NotCapturableError``. ``eager_cpu=True`` runs recordings
eagerly on the CPU (the seed's behaviour; by default the CPU records and replays).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import warp as wp

from .._traffic import _count
from ..dynamic import apply, is_dynamic, peek
from ..errors import GeneratorError, ParamsError
from ..launch import (
    LaunchContext,
    Recording,
    _via_ctx,  # noqa: F401  (the conformance kit's direct-launch check)
    capturing,
    check_eager_cpu,
    log_entry,
    logging_open,
)
from ._checks import check_epoch, check_int
from .plugin import CaptureClass


def count_replay(rec: Recording, recorded: bool = False) -> None:
    """Counts the traffic of one replay of ``rec``, and with ``recorded`` the work emitted
    while recording it (a quiet context's counts none: a split call counts, once, the
    traffic of the call it splits)."""
    for _ in range(2 if recorded else 1):
        _count("launches", rec.launches)
        _count("copies", rec.copies)
        _count("fills", rec.fills)
    _count("replays")


class _GraphCalls:
    """What a generator does so a graph node that calls it replays exactly (a mixin of
    ``TrackGenerator`` and ``GateGenerator``).

    Inside a node's cook the call's recordings replay into the node's log, so the graph's
    recording runs them again; the epoch fill is always logged (another call may have left
    another epoch in the word by the time the graph replays); and the log holds two
    probes: the build version (a rebuild makes the node plan again) and the call count
    (another call wrote the arrays the node returned: the graph replays the node).
    """

    _build_version = 0
    _calls = 0

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
        """A graph replayed a call of this generator: Python's epoch follows the word's."""
        if epoch is not None:
            self.config.epoch = int(epoch)  # the sync evaluates a dynamic epoch
        self._calls += 1

    def _host_step(self, name: str) -> None:
        """Marks the node cooking now (if any) to plan again every cook: a HOST step."""
        log_entry(("unrecordable", f"generator {self.stage.name!r} HOST step {name}"))


def _context(label: str, ctx: Any, device: str | None, required: bool = False) -> LaunchContext:
    """Returns ``ctx``, or a new context on ``device`` when it is None and not ``required``.

    Raises:
        ParamsError: anything but a ``LaunchContext`` (or None where one is made).
    """
    if ctx is None and not required:
        return LaunchContext(device)
    if not isinstance(ctx, LaunchContext):
        what = "" if required else " or None"
        raise ParamsError(f"{label}: expected a track_gen.exec.LaunchContext{what}, got {ctx!r}")
    return ctx


def salt(stream: str) -> int:
    """Returns the salt of the named random stream (a CRC-32 folded to 31 bits).

    Raises:
        GeneratorError: a stream name that is not a non-empty string.
    """
    if not isinstance(stream, str) or not stream:
        raise GeneratorError(f"b.salt stream: expected a non-empty name, got {stream!r}")
    return zlib.crc32(stream.encode()) & 0x7FFFFFFF


class StageBuilder:
    """What ``Stage.build(b, params)`` allocates and reads through.

    Attributes:
        E: number of envs. raw: the raw loop's size per env (generators).
        num_points: N, the resampled size. scale: ``config.scale``. device: the device.
        config: the generator's copy of the ``TrackGenConfig``.
        seed: ``[E]`` int32 base seeds (read-only). active: ``[E]`` int32 mask of the envs
            this call (re)generates; skipping inactive envs is optional for generators.
    """

    def __init__(
        self,
        *,
        stage: Any,
        config: Any,
        raw: int,
        seed: wp.array,
        active: wp.array,
        outputs: dict[str, Callable[[], wp.array]],
        inputs: dict[str, wp.array],
        param_buffer: Callable[[str], wp.array],
    ):
        self.stage = stage
        self.config = config
        self.E = int(config.num_envs)
        self.raw = int(raw)
        self.num_points = int(config.num_points)
        self.scale = float(config.scale)
        self.device = str(config.device)
        self.seed = seed
        self.active = active
        self._outputs = outputs
        self._inputs = inputs
        self._param_buffer = param_buffer
        self.scratch_buffers: dict[str, wp.array] = {}
        self.written: dict[str, wp.array] = {}
        if getattr(stage, "capture", None) is CaptureClass.HOST and "valid" in outputs:
            # the pipeline fills a generator's valid output as its step starts: marked, a
            # HOST step emitted inside a caller's capture is refused there
            outputs["valid"]()._procgen_host_stage = self._who()

    def _who(self) -> str:
        return getattr(self.stage, "name", "") or type(self.stage).__name__

    def salt(self, stream: str) -> int:
        """Returns the salt of the random stream ``stream`` (pass it to kernels / ops)."""
        return salt(stream)

    def scratch(self, name: str, dtype: Any, shape: int | tuple[int, ...]) -> wp.array:
        """Allocates a zeroed scratch buffer ``name`` of ``dtype`` and ``shape`` on the device.

        Raises:
            GeneratorError: a name used twice.
            ParamsError: a shape that is not integers >= 0.
        """
        if name in self.scratch_buffers:
            raise GeneratorError(
                f"{self._who()} b.scratch name: expected a new name, got {name!r} twice"
            )
        dims = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
        shape = tuple(check_int(f"{self._who()} b.scratch {name!r} shape", d, 0) for d in dims)
        arr = wp.zeros(shape, dtype=dtype, device=self.device)
        self.scratch_buffers[name] = arr
        return arr

    def write(self, name: str) -> wp.array:
        """Returns the output buffer ``name`` declared in the stage's ``writes``.

        Generators: ``"xy"`` ``[E*raw]`` vec2, ``"valid"`` ``[E]`` int32, ``"count"`` ``[E]``
        int32, an attribute ``[E*raw]`` float32. Post stages: attributes ``[E*N]`` float32.

        Raises:
            GeneratorError: a name not declared in ``writes`` or not writable here.
        """
        writes = tuple(getattr(self.stage, "writes", ()))
        if name not in writes:
            raise GeneratorError(
                f"{self._who()} b.write: expected a name declared in writes {list(writes)}, "
                f"got {name!r}"
            )
        make = self._outputs.get(name)
        if make is None:
            raise GeneratorError(
                f"{self._who()} b.write: expected one of {sorted(self._outputs)} for this "
                f"stage's phase, got {name!r}"
            )
        arr = make()
        self.written[name] = arr
        return arr

    def read(self, name: str) -> wp.array:
        """Returns an upstream output: ``"xy"`` (the resampled loop) or an attribute.

        Raises:
            GeneratorError: a name no earlier stage provides.
        """
        if name not in self._inputs:
            raise GeneratorError(
                f"{self._who()} b.read: expected one of {sorted(self._inputs)}, got {name!r}"
            )
        return self._inputs[name]

    def param(self, name: str) -> wp.array:
        """Returns the one-element device buffer of the dynamic field ``name``.

        Kernels read ``buf[0]``; the value changes between calls without a new recording.

        Raises:
            GeneratorError: ``name`` is not a dynamic field of the stage's Params.
        """
        return self._param_buffer(name)


__all__ = [
    "LaunchContext",
    "Recording",
    "StageBuilder",
    "capturing",
    "check_eager_cpu",
    "count_replay",
    "salt",
]
