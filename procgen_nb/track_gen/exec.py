"""The launch context of a track call and the ``StageBuilder`` a Stage builds with.

``LaunchContext`` here is ``procgen_nb.LaunchContext`` (one device, one stream, one set of
traffic counters) with what Stages need on top: ``bounded_loop`` for BOUNDED stages, a
strict mode that refuses readbacks outside ``ctx.host()``, and ``sync`` for legacy helpers.

Inside a caller's capture (the caller's ``ctx.record``, or a Warp capture open on the device,
on the CPU too) a track call's recordings do not replay: their work is emitted again, so it
joins the caller's recording, and host work (a readback, an allocation, ``ctx.host()``, a
HOST generator's step) raises ``NotCapturableError``. ``eager_cpu=True`` runs recordings
eagerly on the CPU (the 0.1 interface's behaviour; by default the CPU records and replays).
"""

from __future__ import annotations

import contextlib
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import warp as wp

from .._traffic import _count
from ..errors import GeneratorError, NotCapturableError, ParamsError
from ..launch import LaunchContext as _BaseLaunchContext
from ..launch import Recording
from ._checks import check_int
from .plugin import CaptureClass

_tls = threading.local()


def _via_ctx() -> bool:
    """True while a LaunchContext of this module is emitting (for the stream check)."""
    return getattr(_tls, "depth", 0) > 0


@contextlib.contextmanager
def _emitting() -> Iterator[None]:
    _tls.depth = getattr(_tls, "depth", 0) + 1
    try:
        yield
    finally:
        _tls.depth -= 1


def capturing(ctx: Any) -> bool:
    """True while a capture is open where ``ctx`` emits: ``ctx.record``, or a Warp capture on
    its CUDA stream or (on the CPU) its device."""
    if ctx.recording:
        return True
    dev = ctx._wp_device
    if dev.is_cuda:
        return bool(ctx.stream is not None and ctx.stream.is_capturing)
    return bool(dev.is_capturing)


def _not_capturable(what: str) -> NotCapturableError:
    return NotCapturableError(
        f"{what}: expected a capturable generator inside a caller's capture, got a HOST one "
        "(capturable=False); call generate() outside the capture"
    )


class _TrackRecording(Recording):
    """A track call's recording. It emits its body again instead of replaying inside a
    caller's capture (joining the caller's recording) and while its context is
    ``eager_cpu`` on the CPU; made inside a capture or eagerly, it records at its first
    replay that needs the graph."""

    def __init__(self, ctx: LaunchContext, body: Callable[[], None], rec: Any):
        counts = (rec.launches, rec.copies, rec.fills) if rec is not None else (0, 0, 0)
        super().__init__(rec._graph if rec is not None else None, ctx.device, *counts)
        self._ctx, self._body = ctx, body

    def replay(self) -> None:
        """Runs the work: replays the graph, or emits the body (eager, or under a capture)."""
        ctx = self._ctx
        if ctx._eager() or capturing(ctx):
            self._body()
            self.replays += 1
            return
        if self._graph is None:
            rec = _BaseLaunchContext.record(ctx, self._body)
            self._graph, self.launches = rec._graph, rec.launches
            self.copies, self.fills = rec.copies, rec.fills
        if ctx._quiet:
            wp.capture_launch(self._graph)
            self.replays += 1
            return
        super().replay()


def count_replay(rec: Recording, recorded: bool = False) -> None:
    """Counts the traffic of one replay of ``rec``, and with ``recorded`` the work emitted
    while recording it (a quiet context's counts none: a split call counts, once, the
    traffic of the call it splits)."""
    for _ in range(2 if recorded else 1):
        _count("launches", rec.launches)
        _count("copies", rec.copies)
        _count("fills", rec.fills)
    _count("replays")


def check_eager_cpu(label: str, value: Any) -> bool:
    """Returns ``value`` as a bool.

    Raises:
        ParamsError: a value other than True, False, 1 or 0, named with ``label``.
    """
    if not isinstance(value, bool | int) or value not in (0, 1):
        raise ParamsError(f"{label}: expected True or False, got {value!r}")
    return bool(value)


class LaunchContext(_BaseLaunchContext):
    """The call's launch context: ``launch``, ``copy``, ``fill``, ``scope()``, ``host()``,
    ``bounded_loop``; one device and one stream.

    Args:
        device: a Warp device name (None: ``procgen_nb.get_device()``).
        stream: a CUDA stream (None: the device's current stream).
        eager_cpu: on the CPU, the recordings of track calls run their body eagerly at
            each replay instead (the 0.1 interface's behaviour; False records and replays, measured
            faster). An attribute: setting it later applies to recordings already made.
    """

    def __init__(self, device: str | None = None, stream: Any = None, eager_cpu: bool = False):
        super().__init__(device, stream)
        self._strict = 0
        self.eager_cpu = eager_cpu
        #: a quiet context's launches, copies, fills and replays are not counted in the
        #: traffic counters (the share of a split call: the caller counts the call once)
        self._quiet = False

    @property
    def eager_cpu(self) -> bool:
        """See the class docstring; settable.

        Raises:
            ParamsError: a value other than True, False, 1 or 0 (set or passed).
        """
        return self._eager_cpu

    @eager_cpu.setter
    def eager_cpu(self, value: bool) -> None:
        self._eager_cpu = check_eager_cpu("LaunchContext eager_cpu", value)

    def _emitted(self, kind: int) -> None:
        if not self._quiet:
            super()._emitted(kind)
        elif self._recording is not None:
            self._recording[kind] += 1

    def record(self, body: Callable[[], None]) -> Recording:
        """Records ``body`` (see ``procgen_nb.LaunchContext.record``). Inside a caller's
        capture it records nothing now: its replays there emit ``body`` into that capture."""
        if self._eager() or capturing(self):
            return _TrackRecording(self, body, None)
        return _TrackRecording(self, body, super().record(body))

    def _eager(self) -> bool:
        return self.eager_cpu and not self._wp_device.is_cuda

    def host(self) -> Any:
        """Marks host work of a HOST stage; refused inside a capture (NotCapturableError)."""
        if capturing(self):
            raise _not_capturable("ctx.host()")
        return super().host()

    def _no_alloc_while_recording(self, what: str) -> None:
        if capturing(self) and not self.recording:
            raise _not_capturable(f"{what} (an allocation)")
        super()._no_alloc_while_recording(what)

    def launch(self, kernel: Any, dim: Any, inputs: Any = (), outputs: Any = ()) -> None:
        """Launches ``kernel`` over ``dim`` threads on this context's device and stream."""
        with _emitting():
            super().launch(kernel, dim, inputs, outputs)

    def copy(
        self, dst: wp.array, src: wp.array, dst_offset: int = 0, src_offset: int = 0, count: int = 0
    ) -> None:
        """Copies ``count`` elements (all when 0) from ``src`` to ``dst`` on the device."""
        with _emitting():
            super().copy(dst, src, dst_offset, src_offset, count)

    def fill(self, arr: wp.array, value: Any) -> None:
        """Fills every element of ``arr`` with ``value`` on the device."""
        host = getattr(arr, "_procgen_host_stage", None)
        if host is not None and capturing(self):  # a HOST generator's step starts
            raise _not_capturable(f"generator {host!r}")
        with _emitting():
            super().fill(arr, value)

    def empty(self, shape: int | tuple[int, ...], dtype: Any) -> wp.array:
        """Allocates an uninitialised device array (refused while recording)."""
        with _emitting():
            return super().empty(shape, dtype)

    def zeros(self, shape: int | tuple[int, ...], dtype: Any) -> wp.array:
        """Allocates a zeroed device array (refused while recording); its zero fill counts
        as work emitted through this context."""
        with _emitting():
            return super().zeros(shape, dtype)

    def upload(self, values: Any, dtype: Any) -> wp.array:
        """Copies host values to a new device array of ``dtype``; counts one upload."""
        with _emitting():
            return super().upload(values, dtype)

    def readback(self, arr: wp.array) -> np.ndarray:
        """Copies ``arr`` to the host (counts a readback and a wait).

        Raises:
            NotCapturableError: inside a recording, or inside a GRAPH/BOUNDED stage's call
                outside ``ctx.host()``.
        """
        if capturing(self) and not self.recording:
            raise _not_capturable(f"readback of {arr.size} elements")
        if self._strict and not self._host_ok:
            raise NotCapturableError(
                f"readback: expected host reads only inside ctx.host() of a HOST stage, got a "
                f"read of {arr.size} elements in a capturable stage"
            )
        return super().readback(arr)

    @contextlib.contextmanager
    def strict(self) -> Iterator[LaunchContext]:
        """Refuses readbacks outside ``host()`` inside the block (a capturable stage's call)."""
        self._strict += 1
        try:
            yield self
        finally:
            self._strict -= 1

    def bounded_loop(self, iterations: int, body: Callable[[int], None]) -> None:
        """Runs ``body(i)`` for ``i`` in ``range(iterations)``: a loop with a fixed bound.

        Recorded unrolled, so every iteration replays; ``body`` makes converged envs skip
        their work on the device (a per-env freeze) rather than leaving the loop early.

        Raises:
            ParamsError: a negative or non-integer bound.
        """
        iterations = check_int("bounded_loop iterations", iterations, 0)
        for i in range(iterations):
            body(i)

    def sync(self) -> None:
        """Waits for the device (legacy helpers' debug sync); a no-op while recording."""
        if not self.recording:
            self.synchronize()


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
