"""The launch context: the one place that emits every launch, copy, fill and transfer.

Both the ABI ops and the track_gen Stages go through a ``LaunchContext``. It counts
traffic (see ``procgen_nb.traffic``), refuses host reads while a recording is open, and
records launches for replay with Warp's graph capture, which Warp supports on the CPU as
well as on CUDA (a recorded replay costs a few microseconds instead of tens per launch).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import warp as wp

from ._traffic import _count
from .device import _init_warp, resolve_device
from .dynamic import concrete
from .errors import NotCapturableError, ProcgenError

_record_lock = threading.RLock()
#: the open cook log (a list of launches, copies and fills), shared by every context
_active_log: contextvars.ContextVar[list[tuple] | None] = contextvars.ContextVar(
    "procgen_nb_launch_log", default=None
)


class Recording:
    """A recorded list of launches, copies and fills, replayed with ``replay()``.

    Attributes:
        launches: how many launches the recording holds (counted again on each replay).
        device: the device it was recorded on.
    """

    def __init__(self, graph: Any, device: str, launches: int, copies: int, fills: int):
        self._graph = graph
        self.device = device
        self.launches = launches
        self.copies = copies
        self.fills = fills
        self.replays = 0

    def replay(self) -> None:
        """Runs the recorded work again; counts a replay and the launches it holds."""
        wp.capture_launch(self._graph)
        self.replays += 1
        _count("replays")
        _count("launches", self.launches)
        _count("copies", self.copies)
        _count("fills", self.fills)

    def release(self) -> None:
        """Lets the recording go."""
        self._graph = None


class LaunchContext:
    """One device and one stream; emits launches, copies, fills and transfers, and counts them.

    Args:
        device: a Warp device name; ``None`` takes ``procgen_nb.get_device()``.
        stream: a Warp stream on a CUDA device; ``None`` takes the device's current stream.
    """

    def __init__(self, device: str | None = None, stream: Any = None):
        _init_warp()
        self.device = resolve_device(device)
        self._wp_device = wp.get_device(self.device)
        self.stream = stream
        if self.stream is None and self._wp_device.is_cuda:
            self.stream = self._wp_device.stream
        self._recording: list[int] | None = None
        self._host_ok = 0

    # -- emitting -----------------------------------------------------------------
    def launch(
        self,
        kernel: Any,
        dim: int | Sequence[int],
        inputs: Sequence[Any] = (),
        outputs: Sequence[Any] = (),
    ) -> None:
        """Launches ``kernel`` over ``dim`` threads on this context's device and stream."""
        if isinstance(dim, int | np.integer) and int(dim) <= 0:
            return
        args = list(inputs) + list(outputs)
        plain = [concrete(a) for a in args]  # a dynamic value's expression stays in the log
        wp.launch(kernel, dim=dim, inputs=plain, device=self.device, stream=self.stream)
        self._emitted(0)
        log = _active_log.get()
        if log is not None:
            log.append(("launch", kernel, dim, args, self))

    def copy(
        self, dst: wp.array, src: wp.array, dst_offset: int = 0, src_offset: int = 0, count: int = 0
    ) -> None:
        """Copies ``count`` elements (all when 0) from ``src`` to ``dst`` on the device."""
        wp.copy(dst, src, dst_offset, src_offset, count, stream=self.stream)
        self._emitted(1)
        log = _active_log.get()
        if log is not None:
            log.append(("copy", dst, src, dst_offset, src_offset, count, self))

    def fill(self, arr: wp.array, value: Any) -> None:
        """Fills every element of ``arr`` with ``value`` on the device."""
        if arr.size == 0:
            return
        plain = concrete(value)  # a dynamic value's expression stays in the log
        if self.stream is not None:
            with wp.ScopedStream(self.stream):
                arr.fill_(plain)
        else:
            arr.fill_(plain)
        self._emitted(2)
        log = _active_log.get()
        if log is not None:
            log.append(("fill", arr, value, self))

    def _emitted(self, kind: int) -> None:
        _count(("launches", "copies", "fills")[kind])
        if self._recording is not None:
            self._recording[kind] += 1

    # -- allocation and transfers ---------------------------------------------------
    def empty(self, shape: int | tuple[int, ...], dtype: Any) -> wp.array:
        """Allocates an uninitialised device array (refused while recording)."""
        self._no_alloc_while_recording("empty")
        return wp.empty(shape, dtype=dtype, device=self.device)

    def zeros(self, shape: int | tuple[int, ...], dtype: Any) -> wp.array:
        """Allocates a zeroed device array (refused while recording)."""
        self._no_alloc_while_recording("zeros")
        return wp.zeros(shape, dtype=dtype, device=self.device)

    def upload(self, values: Any, dtype: Any) -> wp.array:
        """Copies host values to a new device array of ``dtype``; counts one upload."""
        self._no_alloc_while_recording("upload")
        arr = wp.array(values, dtype=dtype, device=self.device)
        _count("uploads")
        return arr

    def readback(self, arr: wp.array) -> np.ndarray:
        """Waits for the device and copies ``arr`` to the host; counts a readback and a wait."""
        if self._recording is not None:
            raise NotCapturableError(
                "readback: expected no host read while a recording is open, got a read of "
                f"an array of {arr.size} elements; read after the recorded call or use ctx.host()"
            )
        out = arr.numpy().copy()
        _count("readbacks")
        _count("waits")
        return out

    def _no_alloc_while_recording(self, what: str) -> None:
        if self._recording is not None:
            raise NotCapturableError(
                f"{what}: expected no allocation while a recording is open, got one; "
                "allocate in build() (b.scratch / b.write) or mark the stage HOST"
            )

    # -- scopes ---------------------------------------------------------------------
    @contextlib.contextmanager
    def scope(self) -> Iterator[LaunchContext]:
        """Makes this context's device (and stream) Warp's current ones inside the block."""
        with wp.ScopedDevice(self.device):
            if self.stream is not None:
                with wp.ScopedStream(self.stream):
                    yield self
            else:
                yield self

    @contextlib.contextmanager
    def host(self) -> Iterator[LaunchContext]:
        """Marks host work (readbacks, Python control flow) of a HOST stage."""
        self._host_ok += 1
        try:
            yield self
        finally:
            self._host_ok -= 1

    @property
    def recording(self) -> bool:
        """True while a recording is open on this context."""
        return self._recording is not None

    def record(self, body: Callable[[], None]) -> Recording:
        """Runs ``body`` under Warp graph capture and returns the Recording (nothing executes).

        Refuses (NotCapturableError) a body that reads back or allocates; Warp errors inside
        the capture end the capture before they propagate.
        """
        if self._recording is not None:
            raise ProcgenError("record: expected no open recording, got a nested record()")
        with _record_lock:
            self._recording = [0, 0, 0]
            counts = self._recording
            try:
                with wp.ScopedCapture(device=self.device, stream=self.stream) as cap:
                    body()
            finally:
                self._recording = None
        return Recording(cap.graph, self.device, counts[0], counts[1], counts[2])

    def synchronize(self) -> None:
        """Waits for the device (counts a wait)."""
        if self.stream is not None:
            wp.synchronize_stream(self.stream)
        else:
            wp.synchronize_device(self.device)
        _count("waits")


@contextlib.contextmanager
def logging() -> Iterator[list[tuple]]:
    """Logs every launch, copy and fill that any context emits inside the block.

    Each entry is ``("launch", kernel, dim, args, ctx)``, ``("copy", dst, src, dst_offset,
    src_offset, count, ctx)`` or ``("fill", arr, value, ctx)``; a cook recording is made of them.
    """
    log: list[tuple] = []
    token = _active_log.set(log)
    try:
        yield log
    finally:
        _active_log.reset(token)
        outer = _active_log.get()
        if outer is not None:
            outer.extend(log)


_default: dict[str, LaunchContext] = {}


def default_context(device: str | None = None) -> LaunchContext:
    """Returns the shared LaunchContext of ``device`` (the current device when None)."""
    name = resolve_device(device)
    ctx = _default.get(name)
    if ctx is None:
        ctx = _default[name] = LaunchContext(name)
    return ctx
