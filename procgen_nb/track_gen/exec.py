"""The launch context of a track call and the ``StageBuilder`` a Stage builds with.

``LaunchContext`` here is ``procgen_nb.LaunchContext`` (one device, one stream, one set of
traffic counters) with what Stages need on top: ``bounded_loop`` for BOUNDED stages, a
strict mode that refuses readbacks outside ``ctx.host()``, and ``sync`` for legacy helpers.
"""

from __future__ import annotations

import contextlib
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import warp as wp

from ..errors import GeneratorError, NotCapturableError, ParamsError
from ..launch import LaunchContext as _BaseLaunchContext
from ..launch import Recording
from ._checks import check_int

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


class LaunchContext(_BaseLaunchContext):
    """The call's launch context: ``launch``, ``copy``, ``fill``, ``scope()``, ``host()``,
    ``bounded_loop``; one device and one stream.

    Args:
        device: a Warp device name (None: ``procgen_nb.get_device()``).
        stream: a CUDA stream (None: the device's current stream).
    """

    def __init__(self, device: str | None = None, stream: Any = None):
        super().__init__(device, stream)
        self._strict = 0

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
        with _emitting():
            super().fill(arr, value)

    def readback(self, arr: wp.array) -> np.ndarray:
        """Copies ``arr`` to the host (counts a readback and a wait).

        Raises:
            NotCapturableError: inside a recording, or inside a GRAPH/BOUNDED stage's call
                outside ``ctx.host()``.
        """
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


__all__ = ["LaunchContext", "Recording", "StageBuilder", "salt"]
