"""Every op and Stage runs for ``cuda:0`` up to the launch, on a machine without a GPU.

A fake ``cuda:0`` stands in for the device: Warp's allocators record the device each array
was asked for and allocate on the CPU; ``wp.launch``, ``wp.load_module``, graph capture
and replay record what they were given and run nothing. An array asked for on ``cuda:0``
reads as one (its ``device``) while copies, fills and reads run on the CPU memory behind
it; a pinned host buffer (the host side of a copy) is allowed. A generate, a course and a graph cook with every op then must ask for every array
and every launch on ``cuda:0``, never on the CPU or Warp's default device. (What the
kernels would compute is not checked here: that is the CPU tests' and benchmarks/gpu.sh's.)
"""

from __future__ import annotations

import contextlib
import threading
import types

import pytest
import warp as wp

from procgen_nb import device as pg_device

ALLOCATORS = ("empty", "zeros", "full", "ones", "empty_like", "zeros_like", "full_like")
#: Warp array methods that read ``self.device``: run on the CPU memory behind a fake array.
ARRAY_METHODS = (
    "fill_",
    "zero_",
    "numpy",
    "assign",
    "list",
    "flatten",
    "reshape",
    "view",
    "contiguous",
    "transpose",
    "__getitem__",
)
_inside = threading.local()
_ARRAY = wp.array  # Warp's array class (wp.array itself is replaced inside the fixture)


class _FakeDevice:
    """What the package reads of a CUDA device (``is_cuda``, ``alias``, ``stream``, ...)."""

    is_cuda, is_cpu, ordinal, alias = True, False, 0, "cuda:0"

    def __init__(self) -> None:
        self.context = object()
        self.context_guard = contextlib.nullcontext()  # (an array's deleter runs under it)
        self.stream = types.SimpleNamespace(device=self, cuda_stream=0, is_capturing=False)
        self.is_mempool_enabled = True

    def __str__(self) -> str:
        return "cuda:0"

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return str(other) == "cuda:0"

    def __hash__(self) -> int:
        return hash("cuda:0")


class FakeCuda:
    """Records the device of every allocation and launch (see the module docstring)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.dev = _FakeDevice()
        self.allocs: list[tuple[str, str]] = []  # (allocator, device asked for)
        self.staging: list[str] = []  # pinned host buffers (the host side of a copy)
        self.launches: list[tuple[str, str]] = []  # (kernel key, device)
        self.loads: list[str] = []
        self.captures = 0
        self.replays = 0
        self._ranges: list[tuple[int, int, str]] = []  # CPU memory of each array -> device
        real_get = wp.get_device
        self._cpu = real_get("cpu")

        def get_device(d=None):
            if d is self.dev or (d is not None and str(d).startswith("cuda")):
                return self.dev
            return real_get(d)

        monkeypatch.setattr(wp, "get_device", get_device)
        monkeypatch.setattr(pg_device, "available_devices", lambda: ["cpu", "cuda:0"])
        for name in ALLOCATORS:
            monkeypatch.setattr(wp, name, self._allocator(name, getattr(wp, name)))
        make = self._allocator("array", _ARRAY)

        class _ArrayMeta(type):
            # isinstance(x, wp.array) still means Warp's array; wp.array(...) records
            def __instancecheck__(cls, x):
                return isinstance(x, _ARRAY)

            def __subclasscheck__(cls, c):
                return issubclass(c, _ARRAY)

            def __call__(cls, *args, **kwargs):
                return make(*args, **kwargs)

        monkeypatch.setattr(wp, "array", _ArrayMeta("array", (), {}))
        for meth in ARRAY_METHODS:
            monkeypatch.setattr(_ARRAY, meth, self._on_cpu(getattr(_ARRAY, meth)))
        iface = _ARRAY.__array_interface__
        monkeypatch.setattr(_ARRAY, "__array_interface__", property(self._on_cpu(iface.fget)))
        real_copy = wp.copy

        def copy(dst, src, *args, stream=None, **kwargs):
            with self._cpu_view(dst), self._cpu_view(src):
                return real_copy(dst, src, *args, **kwargs)

        monkeypatch.setattr(wp, "copy", copy)
        monkeypatch.setattr(wp, "launch", self._launch)
        monkeypatch.setattr(wp, "load_module", self._load)
        monkeypatch.setattr(wp, "ScopedDevice", self._scoped_device(wp.ScopedDevice))
        monkeypatch.setattr(wp, "ScopedStream", self._scoped_stream(wp.ScopedStream))
        monkeypatch.setattr(wp, "ScopedCapture", self._capture)
        monkeypatch.setattr(wp, "capture_launch", self._replay)
        for name in ("synchronize_stream", "synchronize_device", "synchronize"):
            monkeypatch.setattr(wp, name, self._sync(getattr(wp, name)))
        monkeypatch.setattr(wp, "get_stream", lambda device=None: self.dev.stream)

    # -- allocation ---------------------------------------------------------------
    def _allocator(self, name, real):
        def alloc(*args, **kwargs):
            if name == "array" and not args and "data" not in kwargs:
                return real(*args, **kwargs)  # wp.array(dtype=...): a type, not an array
            if getattr(_inside, "depth", 0):
                return real(*args, **kwargs)  # Warp's own wp.zeros -> empty -> array
            asked = kwargs.pop("device", None)
            if asked is None and name.endswith("_like"):
                asked = getattr(args[0], "_fake_device", None)
            asked = "default" if asked is None else str(asked)
            pinned = kwargs.pop("pinned", False)
            _inside.depth = getattr(_inside, "depth", 0) + 1
            try:
                arr = real(*args, device="cpu", **kwargs)
            finally:
                _inside.depth -= 1
            if asked == "cpu" and pinned:
                self.staging.append(name)  # pinned: a CUDA device's host staging buffer
            else:
                self.allocs.append((name, asked))
            if arr.ptr:
                self._ranges.append((arr.ptr, arr.ptr + max(arr.capacity, 1), asked))
            if asked == "cuda:0":
                arr.device = self.dev  # reads as a CUDA array; its methods run on the CPU
            return arr

        return alloc

    @contextlib.contextmanager
    def _cpu_view(self, arr):
        fake = getattr(arr, "device", None) is self.dev
        if fake:
            arr.device = self._cpu
        try:
            yield
        finally:
            if fake:
                arr.device = self.dev

    def _on_cpu(self, meth):
        def run(arr, *args, **kwargs):
            if getattr(arr, "device", None) is not self.dev:
                return meth(arr, *args, **kwargs)
            with self._cpu_view(arr):
                out = meth(arr, *args, **kwargs)
            if isinstance(out, _ARRAY) and out is not arr and out.device is self._cpu:
                out.device = self.dev  # a view of a CUDA array is one too
            return out

        return run

    def device_of(self, arr) -> str | None:
        """The device an array (or a view of one) was allocated for; None: not seen."""
        ptr = getattr(arr, "ptr", None)
        if not ptr:
            return None
        for lo, hi, dev in reversed(self._ranges):
            if lo <= ptr < hi:
                return dev
        return None

    # -- emitting -------------------------------------------------------------------
    def _launch(self, kernel, dim=None, inputs=(), outputs=(), device=None, stream=None, **kw):
        dev = str(device) if device is not None else "default"
        self.launches.append((kernel.key, dev))
        for a in list(inputs) + list(outputs):
            if isinstance(a, _ARRAY):
                got = self.device_of(a)
                assert got in (None, "cuda:0"), f"{kernel.key}: an argument allocated on {got}"
        if kw.get("record_cmd"):  # a recorded launch (wp.Launch) that a replay re-issues
            fake = self

            class _Launch:
                def set_param_at_index(self, j, value):
                    pass

                def launch(self, stream=None):
                    fake.launches.append((kernel.key, dev))
                    fake.replays += 1

            return _Launch()
        return None

    def _load(self, module=None, device=None, **kw):
        self.loads.append(str(device))

    def _scoped_device(self, real):
        def scoped(d):
            if str(d).startswith("cuda") or d is self.dev:
                return contextlib.nullcontext()
            return real(d)

        return scoped

    def _scoped_stream(self, real):
        def scoped(stream, *a, **kw):
            if stream is self.dev.stream:
                return contextlib.nullcontext()
            return real(stream, *a, **kw)

        return scoped

    @contextlib.contextmanager
    def _capture(self, device=None, stream=None, **kw):
        assert str(device) == "cuda:0", device
        self.captures += 1
        self.dev.stream.is_capturing = True
        try:
            yield types.SimpleNamespace(graph=("fake graph", self.captures))
        finally:
            self.dev.stream.is_capturing = False

    def _replay(self, graph, stream=None, **kw):
        self.replays += 1

    def _sync(self, real):
        def sync(*args, **kwargs):
            target = args[0] if args else kwargs.get("device", kwargs.get("stream"))
            if target is None or target is self.dev.stream or str(target).startswith("cuda"):
                return None
            return real(*args, **kwargs)

        return sync

    # -- the check --------------------------------------------------------------------
    def assert_all_on_cuda(self) -> None:
        assert self.launches, "nothing was launched"
        off = [a for a in self.allocs if a[1] != "cuda:0"]
        assert not off, f"allocated off cuda:0: {off[:10]}"
        off = [x for x in self.launches if x[1] != "cuda:0"]
        assert not off, f"launched off cuda:0: {off[:10]}"
        assert all(d == "cuda:0" for d in self.loads), self.loads


@pytest.fixture
def fake_cuda(monkeypatch):
    from procgen_nb import launch

    pg_device._init_warp()
    monkeypatch.setattr(launch, "_default", {})
    monkeypatch.setattr(pg_device, "_override", None)
    fake = FakeCuda(monkeypatch)
    pg_device.set_device("cuda:0")
    yield fake


def test_the_fake_device_catches_an_allocation_on_the_cpu(fake_cuda):
    from procgen_nb.launch import LaunchContext

    ctx = LaunchContext("cuda:0")
    a = ctx.zeros(4, wp.float32)
    assert fake_cuda.device_of(a[1:]) == "cuda:0"
    wp.zeros(4, dtype=wp.float32, device="cpu")
    with pytest.raises(AssertionError, match="nothing was launched"):
        fake_cuda.assert_all_on_cuda()
    ctx.launch(_twice, dim=4, inputs=[a])
    assert fake_cuda.launches == [("_twice", "cuda:0")]
    with pytest.raises(AssertionError, match=r"allocated off cuda:0: \[\('zeros', 'cpu'\)\]"):
        fake_cuda.assert_all_on_cuda()


@wp.kernel
def _twice(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = 2.0 * a[i]


@pytest.mark.parametrize("name", ["bezier", "checkpoint", "hull", "polar", "repulsive", "voronoi"])
def test_every_generator_runs_for_cuda_up_to_the_launch(fake_cuda, name):
    from procgen_nb.track_gen import TrackGenConfig, TrackGenerator, plugin

    assert name in plugin.registry.available("generator")
    tg = TrackGenerator(TrackGenConfig(generator=name, num_envs=4, num_points=32, device="cuda:0"))
    tg.generate()
    tg.generate(epoch=1)  # the steady call (a replay of its recording on CUDA)
    fake_cuda.assert_all_on_cuda()


def test_the_registry_lists_the_generators_tested_here():
    from procgen_nb.track_gen import plugin

    want = test_every_generator_runs_for_cuda_up_to_the_launch.pytestmark[0].args[1]
    assert plugin.registry.available("generator") == want


@pytest.mark.parametrize("gate", ["arc_length", "curvature", "free"])
def test_every_gate_generator_and_course_runs_for_cuda_up_to_the_launch(fake_cuda, gate):
    from procgen_nb.track_gen import gates

    course = gates.build(8, gate_generator=gate, num_points=64, device="cuda:0")
    course.generate(epoch=1)  # the steady call
    fake_cuda.assert_all_on_cuda()


def test_a_graph_with_every_op_cooks_for_cuda_up_to_the_launch(fake_cuda):
    from procgen_nb import ops
    from procgen_nb.demo import build_demo_graph

    g = build_demo_graph()
    result = g.cook(params={"points.n": 64})
    ops.transfer.readback(columns={"kept": result["kept"]})
    g.cook(params={"keep.radius": 0.5})
    fake_cuda.assert_all_on_cuda()
    assert {k for k, _ in fake_cuda.launches} >= {"inside", "compact", "gather", "scan"}


def test_live_counts_bounds_and_guards_record_for_cuda(fake_cuda):
    """device.bound (a live count from a dynamic Field), device.guard and their replays."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import gpu_checks

    live = gpu_checks.live_graph(256)
    live.cook()
    assert live.cook(params={"flags.live": 64}).report.replayed
    guard = gpu_checks.guard_graph()
    guard.cook()
    assert guard.cook(params={"checked.limit": 0.55}).report.replayed
    fake_cuda.assert_all_on_cuda()
    # the live count replays as a CUDA graph; the guard graph (a dynamic uniform) as
    # recorded launches
    assert fake_cuda.captures >= 1 and fake_cuda.replays >= 2
    assert fake_cuda.staging  # the guard word is read into a pinned host buffer
