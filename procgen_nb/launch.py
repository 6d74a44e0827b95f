"""The launch context: the one place that emits every launch, copy, fill and transfer.

Both the ABI ops and the track_gen Stages go through a ``LaunchContext``. It counts
traffic (see ``procgen_nb.traffic``), refuses host reads while a recording is open, and
records launches for replay with Warp's graph capture, which Warp supports on the CPU as
well as on CUDA (a recorded replay costs a few microseconds instead of tens per launch).

One class serves both doors: the track policies (``strict``, ``host``, ``eager_cpu``,
``bounded_loop``, the quiet share of a split call) are its own, so ``pg.default_context()``
drives a ``TrackGenerator``. One recorder: while a graph node cooks (``logging()``), every
launch, copy and fill is logged, and so is every ``Recording`` replayed (a track
generator's steady call), so the graph's recording runs it again; ``log_entry`` adds what
a replay needs besides (host bookkeeping, probes, an unrecordable mark).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import warp as wp

from ._traffic import _count
from .device import _init_warp, resolve_device
from .dynamic import concrete
from .errors import NotCapturableError, ParamsError, ProcgenError

_record_lock = threading.RLock()

#: id(array) -> the HOST generator whose step starts by filling that array (its valid
#: output): a fill of it inside a caller's capture is refused (``mark_host_stage``)
_host_stages: dict[int, str] = {}


def mark_host_stage(arr: wp.array, who: str) -> None:
    """Marks ``arr`` as the array a HOST generator ``who`` fills as its step starts: a
    ``fill`` of it inside a caller's capture raises ``NotCapturableError`` naming ``who``.
    The mark goes with the array."""
    key = id(arr)
    _host_stages[key] = who
    weakref.finalize(arr, _host_stages.pop, key, None)


#: the open cook log (a list of launches, copies, fills and replays), shared by every context
_active_log: contextvars.ContextVar[list[tuple] | None] = contextvars.ContextVar(
    "procgen_nb_launch_log", default=None
)
#: the context ``default_context`` answers for its device inside ``ctx.scope()``
_ambient: contextvars.ContextVar[LaunchContext | None] = contextvars.ContextVar(
    "procgen_nb_launch_ambient", default=None
)
_tls = threading.local()


def _via_ctx() -> bool:
    """True while a LaunchContext is emitting (the conformance kit's direct-launch check)."""
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


def check_eager_cpu(label: str, value: Any) -> bool:
    """Returns ``value`` as a bool.

    Raises:
        ParamsError: a value other than True, False, 1 or 0, named with ``label``.
    """
    if not isinstance(value, bool | int) or value not in (0, 1):
        raise ParamsError(f"{label}: expected True or False, got {value!r}")
    return bool(value)


def log_entry(entry: tuple) -> bool:
    """Appends ``entry`` to the open cook log (a graph node's cook); False when none is open.

    Besides the work a context emits, a log holds ``("replay", recording, ctx)`` (a
    recording replayed inside the node), ``("sync", fn, args)`` (host bookkeeping a replay
    of the log calls again with ``args`` evaluated for its dynamic values: no device work),
    ``("probe", value, fn)`` (the node plans again once ``fn()`` answers another value),
    ``("stale", value, fn)`` (once ``fn()`` answers another value, something else wrote
    what the node returned: its recording runs again) and ``("unrecordable", why)`` (the
    node did host work: it plans again every cook).
    """
    log = _active_log.get()
    if log is None:
        return False
    log.append(entry)
    return True


@contextlib.contextmanager
def unlogged() -> Iterator[None]:
    """Keeps what is emitted inside the block out of an open cook log (a warm-up pass)."""
    token = _active_log.set(None)
    try:
        yield
    finally:
        _active_log.reset(token)


def logging_open() -> bool:
    """True while a cook log is open (a graph node is cooking in this context)."""
    return _active_log.get() is not None


class Recording:
    """A recorded list of launches, copies and fills, replayed with ``replay()``.

    Made by ``LaunchContext.record``. Replayed inside a caller's capture (its ``record``,
    or a Warp capture open where the context emits) or while its context is ``eager_cpu``
    on the CPU, it emits its body again (so it joins the caller's recording); made inside
    a capture or eagerly, it records at its first replay that needs the graph. Replayed
    while a graph node cooks, it is part of the node's recording: the graph's replay runs
    it again.

    Attributes:
        launches: how many launches the recording holds (counted again on each replay).
        device: the device it was recorded on.
    """

    def __init__(self, ctx: LaunchContext, body: Callable[[], None], captured: Any = None):
        self._ctx, self._body = ctx, body
        self.device = ctx.device
        self._graph = None
        self.launches = self.copies = self.fills = 0
        if captured is not None:
            self._graph, (self.launches, self.copies, self.fills) = captured
        self.replays = 0

    def replay(self) -> None:
        """Runs the work: replays the graph (counting a replay and the work it holds), or
        emits the body (eager, or under a capture)."""
        ctx = self._ctx
        if ctx._eager() or capturing(ctx):
            self._body()
            self.replays += 1
            return
        if self._graph is None:
            self._graph, (self.launches, self.copies, self.fills) = ctx._capture(self._body)
        log_entry(("replay", self, ctx))
        self._launch(counted=not ctx._quiet)

    def emit(self) -> None:
        """Runs the work without counting it: what a graph recording that logged this
        replay does when it replays (inside its capture the body joins it)."""
        self._launch(counted=False)

    def _launch(self, counted: bool = True) -> None:
        """Launches the captured graph (emits the body inside a capture); counts it when
        ``counted``."""
        if capturing(self._ctx):
            quiet, self._ctx._quiet = self._ctx._quiet, True
            try:
                self._body()
            finally:
                self._ctx._quiet = quiet
        else:
            if self._graph is None:
                self._graph, (self.launches, self.copies, self.fills) = self._ctx._capture(
                    self._body
                )
            wp.capture_launch(self._graph)
        self.replays += 1
        if counted:
            _count("replays")
            _count("launches", self.launches)
            _count("copies", self.copies)
            _count("fills", self.fills)

    def release(self) -> None:
        """Lets the recording go."""
        self._graph = None


class LaunchContext:
    """One device and one stream; emits launches, copies, fills and transfers, and counts them.

    The one context of both doors: the ABI ops and the track_gen Stages emit through it.
    Its track policies: ``strict()`` (a capturable stage refuses readbacks outside
    ``host()``), ``host()`` (a HOST stage's host work, refused inside a caller's capture),
    ``eager_cpu`` (CPU recordings run their body eagerly), ``bounded_loop`` (a BOUNDED
    stage's fixed-bound loop) and a quiet mode (a split call's share, not counted).

    Args:
        device: a Warp device name; ``None`` takes ``procgen_nb.get_device()``.
        stream: a Warp stream on a CUDA device; ``None`` takes the device's current stream.
        eager_cpu: on the CPU, recordings run their body eagerly at each replay instead
            (the 0.1 interface's behaviour for track calls; False records and replays, measured
            faster). An attribute: setting it later applies to recordings already made.
        quiet: True leaves this context's launches, copies, fills and replays out of the
            traffic counters (the share of a split call: the caller counts the call once);
            read it as ``quiet``.

    Raises:
        ParamsError: an ``eager_cpu`` or a ``quiet`` other than True, False, 1 or 0.
    """

    def __init__(
        self,
        device: str | None = None,
        stream: Any = None,
        eager_cpu: bool = False,
        quiet: bool = False,
    ):
        quiet = check_eager_cpu("LaunchContext quiet", quiet)
        _init_warp()
        self.device = resolve_device(device)
        self._wp_device = wp.get_device(self.device)
        self.stream = stream
        if self.stream is None and self._wp_device.is_cuda:
            self.stream = self._wp_device.stream
        self._recording: list[int] | None = None
        self._host_ok = 0
        self._strict = 0
        self.eager_cpu = eager_cpu
        #: a quiet context's launches, copies, fills and replays are not counted in the
        #: traffic counters (the share of a split call: the caller counts the call once)
        self._quiet = quiet

    @property
    def quiet(self) -> bool:
        """True when this context's launches, copies, fills and replays are left out of the
        traffic counters (the constructor's ``quiet``; a recording's replay inside a
        caller's capture is quiet for its duration too)."""
        return self._quiet

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

    def _eager(self) -> bool:
        return self.eager_cpu and not self._wp_device.is_cuda

    @property
    def runs_eagerly(self) -> bool:
        """True when a recording's replay runs its body eagerly instead (``eager_cpu`` on a
        CPU device; a CUDA device always replays its graph)."""
        return self._eager()

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
        with _emitting():
            wp.launch(kernel, dim=dim, inputs=plain, device=self.device, stream=self.stream)
        self._emitted(0)
        log_entry(("launch", kernel, dim, args, self))

    def copy(
        self, dst: wp.array, src: wp.array, dst_offset: int = 0, src_offset: int = 0, count: int = 0
    ) -> None:
        """Copies ``count`` elements (all when 0) from ``src`` to ``dst`` on the device."""
        with _emitting():
            wp.copy(dst, src, dst_offset, src_offset, count, stream=self.stream)
        self._emitted(1)
        log_entry(("copy", dst, src, dst_offset, src_offset, count, self))

    def fill(self, arr: wp.array, value: Any) -> None:
        """Fills every element of ``arr`` with ``value`` on the device.

        Raises:
            NotCapturableError: the fill that starts a HOST generator's step, inside a
                caller's capture.
        """
        host = _host_stages.get(id(arr))
        if host is not None and capturing(self):  # a HOST generator's step starts
            raise _not_capturable(f"generator {host!r}")
        if arr.size == 0:
            return
        plain = concrete(value)  # a dynamic value's expression stays in the log
        with _emitting():
            if self.stream is not None:
                with wp.ScopedStream(self.stream):
                    arr.fill_(plain)
            else:
                arr.fill_(plain)
        self._emitted(2)
        log_entry(("fill", arr, value, self))

    def _emitted(self, kind: int) -> None:
        if not self._quiet:
            _count(("launches", "copies", "fills")[kind])
        if self._recording is not None:
            self._recording[kind] += 1

    # -- allocation and transfers ---------------------------------------------------
    def empty(self, shape: int | tuple[int, ...], dtype: Any) -> wp.array:
        """Allocates an uninitialised device array (refused while recording)."""
        self._no_alloc_while_recording("empty")
        with _emitting():
            return wp.empty(shape, dtype=dtype, device=self.device)

    def zeros(self, shape: int | tuple[int, ...], dtype: Any) -> wp.array:
        """Allocates a zeroed device array (refused while recording)."""
        self._no_alloc_while_recording("zeros")
        with _emitting():
            return wp.zeros(shape, dtype=dtype, device=self.device)

    def upload(self, values: Any, dtype: Any) -> wp.array:
        """Copies host values to a new device array of ``dtype``; counts one upload."""
        self._no_alloc_while_recording("upload")
        with _emitting():
            arr = wp.array(values, dtype=dtype, device=self.device)
        _count("uploads")
        return arr

    def readback(self, arr: wp.array) -> np.ndarray:
        """Waits for the device and copies ``arr`` to the host; counts a readback and a wait.

        Raises:
            NotCapturableError: inside a recording or a caller's capture, or inside a
                ``strict()`` block (a capturable stage's call) outside ``host()``.
        """
        if self._recording is not None:
            raise NotCapturableError(
                "readback: expected no host read while a recording is open, got a read of "
                f"an array of {arr.size} elements; read after the recorded call or use ctx.host()"
            )
        if capturing(self):
            raise _not_capturable(f"readback of {arr.size} elements")
        if self._strict and not self._host_ok:
            raise NotCapturableError(
                f"readback: expected host reads only inside ctx.host() of a HOST stage, got a "
                f"read of {arr.size} elements in a capturable stage"
            )
        out = arr.numpy().copy()
        _count("readbacks")
        _count("waits")
        return out

    def _no_alloc_while_recording(self, what: str) -> None:
        if self._recording is None and capturing(self):
            raise _not_capturable(f"{what} (an allocation)")
        if self._recording is not None:
            raise NotCapturableError(
                f"{what}: expected no allocation while a recording is open, got one; "
                "allocate in build() (b.scratch / b.write) or mark the stage HOST"
            )

    # -- scopes ---------------------------------------------------------------------
    @contextlib.contextmanager
    def scope(self) -> Iterator[LaunchContext]:
        """Makes this context's device (and stream) Warp's current ones inside the block,
        and this context the one ``default_context`` answers for its device (so the ops a
        step calls launch through it)."""
        token = _ambient.set(self)
        try:
            with wp.ScopedDevice(self.device):
                if self.stream is not None:
                    with wp.ScopedStream(self.stream):
                        yield self
                else:
                    yield self
        finally:
            _ambient.reset(token)

    @contextlib.contextmanager
    def host(self) -> Iterator[LaunchContext]:
        """Marks host work (readbacks, Python control flow) of a HOST stage.

        Inside a graph node's cook it marks the node as one that plans again every cook
        (host work is not recorded).

        Raises:
            NotCapturableError: inside a caller's capture.
        """
        if capturing(self):
            raise _not_capturable("ctx.host()")
        log_entry(("unrecordable", "host work (ctx.host())"))
        self._host_ok += 1
        try:
            yield self
        finally:
            self._host_ok -= 1

    @property
    def in_host(self) -> bool:
        """True inside a ``host()`` block (a HOST stage's host work: readbacks allowed)."""
        return self._host_ok > 0

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
        ok = not isinstance(iterations, bool) and isinstance(iterations, int | np.integer)
        if not ok and isinstance(iterations, float) and iterations.is_integer():
            ok = True
        if not ok or iterations < 0:
            raise ParamsError(
                f"bounded_loop iterations: expected an integer >= 0, got {iterations!r}"
            )
        for i in range(int(iterations)):
            body(i)

    @property
    def recording(self) -> bool:
        """True while a recording is open on this context."""
        return self._recording is not None

    def record(self, body: Callable[[], None]) -> Recording:
        """Records ``body`` under Warp graph capture and returns the Recording (nothing
        executes). Inside a caller's capture (or eagerly, ``eager_cpu``) it records nothing
        now: its replays emit ``body`` (into that capture).

        Refuses (NotCapturableError) a body that reads back or allocates; Warp errors inside
        the capture end the capture before they propagate.
        """
        if self._eager() or capturing(self):
            return Recording(self, body)
        return Recording(self, body, self._capture(body))

    def _capture(self, body: Callable[[], None]) -> tuple[Any, tuple[int, int, int]]:
        """Captures ``body``: (the Warp graph, (launches, copies, fills)). What it emits is
        not logged in an open cook log (it did not run: its replay is)."""
        if self._recording is not None:
            raise ProcgenError("record: expected no open recording, got a nested record()")
        with _record_lock:
            self._recording = [0, 0, 0]
            counts = self._recording
            token = _active_log.set(None)
            try:
                with wp.ScopedCapture(device=self.device, stream=self.stream) as cap:
                    body()
            finally:
                _active_log.reset(token)
                self._recording = None
        return cap.graph, (counts[0], counts[1], counts[2])

    def sync(self) -> None:
        """Waits for the device (legacy helpers' debug sync); a no-op while recording."""
        if not self.recording:
            self.synchronize()

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


@contextlib.contextmanager
def through(ctx: Any, device: Any, label: str) -> Iterator[str]:
    """Yields the device a library call launches on: ``ctx``'s, inside ``ctx.scope()``
    (every op inside then launches through the caller's context), or ``device`` (its
    default context) when ``ctx`` is None.

    Raises:
        ParamsError: a ``ctx`` that is not a LaunchContext, named with ``label``.
    """
    if ctx is None:
        yield resolve_device(device)
        return
    if not isinstance(ctx, LaunchContext):
        raise ParamsError(f"{label} ctx: expected a LaunchContext or None, got {ctx!r}")
    with ctx.scope():
        yield ctx.device


def default_context(device: str | None = None) -> LaunchContext:
    """Returns the shared LaunchContext of ``device`` (the current device when None), or,
    inside ``ctx.scope()``, ``ctx`` for its own device."""
    name = resolve_device(device)
    amb = _ambient.get()
    if amb is not None and amb.device == name:
        return amb  # inside ctx.scope(): the context the step emits through
    ctx = _default.get(name)
    if ctx is None:
        ctx = _default[name] = LaunchContext(name)
    return ctx
