"""The launch context of a track call and the ``StageBuilder`` a Stage builds with.

``LaunchContext`` here is ``procgen_nb.LaunchContext``, the one context of both doors (one
device, one stream, one set of traffic counters), with what Stages need: ``bounded_loop``
for BOUNDED stages, a strict mode that refuses readbacks outside ``ctx.host()``, and
``sync`` for legacy helpers. ``pg.default_context()`` drives a ``TrackGenerator`` as well.

Inside a caller's capture (the caller's ``ctx.record``, or a Warp capture open on the device,
on the CPU too) a track call's recordings do not replay: their work is emitted again, so it
joins the caller's recording, and host work (a readback, an allocation, ``ctx.host()``, a
HOST generator's step) raises ``NotCapturableError``. ``eager_cpu=True`` runs recordings
eagerly on the CPU (the 0.1 interface's behaviour; by default the CPU records and replays).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import warp as wp

from .._traffic import _count
from ..errors import GeneratorError, ParamsError
from ..launch import (
    LaunchContext,
    Recording,
    _via_ctx,  # noqa: F401  (the conformance kit's direct-launch check)
    capturing,
    check_eager_cpu,
    mark_host_stage,
)
from ._checks import check_int
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
        scratch_alloc: Callable[[str, Any, tuple[int, ...]], wp.array] | None = None,
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
        self._scratch_alloc = scratch_alloc
        self.scratch_buffers: dict[str, wp.array] = {}
        self.written: dict[str, wp.array] = {}
        if getattr(stage, "capture", None) is CaptureClass.HOST and "valid" in outputs:
            # the pipeline fills a generator's valid output as its step starts: marked, a
            # HOST step emitted inside a caller's capture is refused there
            mark_host_stage(outputs["valid"](), self._who())

    def _who(self) -> str:
        return getattr(self.stage, "name", "") or type(self.stage).__name__

    def salt(self, stream: str) -> int:
        """Returns the salt of the random stream ``stream`` (pass it to kernels / ops)."""
        return salt(stream)

    def scratch(self, name: str, dtype: Any, shape: int | tuple[int, ...]) -> wp.array:
        """Allocates a zeroed scratch buffer ``name`` of ``dtype`` and ``shape`` on the device.

        A buffer sized by the env count is per env, env-major (``n`` elements an env, env
        ``e``'s at ``[e*n, (e+1)*n)``): a CPU call split across worker threads hands each
        thread its envs' share of it, so a split call allocates it once.

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
        if self._scratch_alloc is not None:
            arr = self._scratch_alloc(name, dtype, shape)
        else:
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
