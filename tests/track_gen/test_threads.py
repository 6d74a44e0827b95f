"""PROCGEN_NB_THREADS: a call split across worker threads gives the bytes of one thread.

Reference: the same generator built with ``PROCGEN_NB_THREADS=1`` (one thread, no parts),
compared array by array, byte for byte.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import procgen_nb
from procgen_nb.errors import GeneratorError, ParamsError
from procgen_nb.track_gen import TrackGenConfig, TrackGenerator, _threads, build, pipeline
from procgen_nb.track_gen.exec import LaunchContext
from procgen_nb.track_gen.plugin import registry


def _arrays(res) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in res.numpy().items()}  # attributes by name


def _same(a, b) -> None:
    ra, rb = _arrays(a), _arrays(b)
    assert ra.keys() == rb.keys()
    for k in ra:
        assert ra[k].tobytes() == rb[k].tobytes(), k
    assert a.num_valid() == b.num_valid()


@pytest.fixture
def small_split(monkeypatch):
    """Splits from 8 envs per thread (the real threshold is sized for speed, not tests)."""
    monkeypatch.setattr(_threads, "MIN_ENVS_PER_THREAD", 8)
    monkeypatch.setattr(_threads, "MIN_POINTS_PER_THREAD", 1)


def _pair(monkeypatch, threads: int, **cfg):
    monkeypatch.setenv("PROCGEN_NB_THREADS", "1")
    one = TrackGenerator(TrackGenConfig(device="cpu", **cfg))
    monkeypatch.setenv("PROCGEN_NB_THREADS", str(threads))
    split = TrackGenerator(TrackGenConfig(device="cpu", **cfg))
    assert len(split._parts) == threads and not one._parts
    return one, split


def _calls(one, split, E: int) -> None:
    """generate, generate at a new epoch, regenerate (invalid ones) and regenerate(mask),
    twice each (the first call of a mode records, the second replays in threads)."""
    for _ in range(2):
        _same(one.generate(), split.generate())
        _same(one.generate(epoch=4), split.generate(epoch=4))
        _same(one.regenerate(), split.regenerate())
        mask = np.arange(E) % 3 == 0
        _same(one.regenerate(mask), split.regenerate(mask))
        _same(one.generate(epoch=0), split.generate(epoch=0))
    np.testing.assert_array_equal(one.seeds.numpy(), split.seeds.numpy())
    assert one.result.fingerprint() == split.result.fingerprint()


@pytest.mark.parametrize("name", registry.available("generator"))
def test_every_builtin_generator_gives_the_bytes_of_one_thread(monkeypatch, small_split, name):
    E = 24 if name == "repulsive" else 40
    one, split = _pair(monkeypatch, 2, generator=name, num_envs=E, num_points=64, seed=9)
    _calls(one, split, E)


@pytest.mark.parametrize("threads", [3, 5])
def test_uneven_shares_give_the_bytes_of_one_thread(monkeypatch, small_split, threads):
    one, split = _pair(monkeypatch, threads, generator="hull", num_envs=43, num_points=48)
    assert [p.config.num_envs for p in split._parts] == [
        43 * (i + 1) // threads - 43 * i // threads for i in range(threads)
    ]
    _calls(one, split, 43)


def test_split_follows_updates_and_z_profile(monkeypatch, small_split):
    one, split = _pair(
        monkeypatch, 2, generator="polar", num_envs=40, num_points=32, z_profile=True
    )
    _same(one.generate(), split.generate())
    for tg in (one, split):
        assert not tg.update(validity={"track_width": 0.0})  # dynamic: no rebuild
        assert not tg.update(z_profile={"amplitude": 0.3})
    _same(one.generate(), split.generate())  # the z attribute among the arrays compared
    assert "z" in _arrays(split.result)
    for tg in (one, split):
        assert tg.update(generator_params={"lobes": 5})  # static: a rebuild, parts and all
    assert len(split._parts) == 2
    _calls(one, split, 40)


def test_a_course_with_gates_gives_the_bytes_of_one_thread(monkeypatch, small_split):
    """A course whose gates are placed on the centerline (``arc_length``): its track
    splits, and the whole course (track, z, gates, placement, validity) is unchanged."""
    monkeypatch.setenv("PROCGEN_NB_THREADS", "1")
    one = build(40, num_points=64, seed=2, device="cpu")
    monkeypatch.setenv("PROCGEN_NB_THREADS", "2")
    split = build(40, num_points=64, seed=2, device="cpu")
    assert len(split.track._parts) == 2 and not one.track._parts
    for epoch in (None, 3, 3, 0):
        one.generate(epoch)
        split.generate(epoch)
        a, b = one.numpy(), split.numpy()
        assert a.keys() == b.keys()
        for k in a:
            assert np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes(), k
        assert one.fingerprint() == split.fingerprint()


def test_the_parts_write_the_callers_arrays_in_place(monkeypatch, small_split):
    """Nothing is gathered: each part's outputs are views of its share of the parent's."""
    _, split = _pair(monkeypatch, 2, generator="polar", num_envs=40, num_points=32)
    res, N = split.result, 32
    for p in split._parts:
        a = p._share[1]
        assert p.result.xy.ptr == res.xy.ptr + a * N * 8
        assert p.result.valid.ptr == res.valid.ptr + a * 4
        assert p.seeds.ptr == split.seeds.ptr + a * 4
        assert p._epoch is split._epoch and p._dyn is split._dyn


def test_a_split_call_counts_the_traffic_of_the_call_it_splits(monkeypatch, small_split):
    """The traffic counters (and so the notebooks' printed counts) do not depend on the
    thread count: a split call counts the replays, launches, copies and fills of the
    one-thread call, construction included; a steady call reads nothing back."""
    deltas: dict[str, list] = {"one": [], "split": []}
    for key, threads in (("one", "1"), ("split", "3")):
        monkeypatch.setenv("PROCGEN_NB_THREADS", threads)
        before = procgen_nb.traffic()
        tg = TrackGenerator(TrackGenConfig(generator="hull", num_envs=40, num_points=32))
        deltas[key].append(procgen_nb.traffic() - before)
        assert len(tg._parts) == (3 if key == "split" else 0)
        mask = np.arange(40) % 2 == 0
        for call, arg in (
            (tg.generate, None),
            (tg.generate, None),
            (tg.generate, 5),
            (tg.regenerate, None),
            (tg.regenerate, None),
            (tg.regenerate, mask),
        ):
            with procgen_nb.collect() as t:
                call(arg)
            deltas[key].append(t)
    assert deltas["one"] == deltas["split"]
    steady = deltas["split"][2]
    assert steady.replays == 1 and steady.readbacks == 0 and steady.uploads == 0


def test_eager_and_callers_capture_do_not_split(monkeypatch, small_split):
    """With ``eager_cpu`` or inside a caller's capture a split generator runs its own
    one-thread pipeline (eager, or emitted into the capture): the same bytes."""
    one, split = _pair(monkeypatch, 2, generator="voronoi", num_envs=40, num_points=32)
    ref = one.generate(epoch=2).fingerprint()
    split.eager_cpu = True
    before = procgen_nb.traffic()
    assert split.generate(epoch=2).fingerprint() == ref
    assert (procgen_nb.traffic() - before).replays == 0
    split.eager_cpu = False
    split.generate(epoch=0)
    rec = LaunchContext("cpu").record(lambda: split.generate(epoch=2))
    assert split.result.fingerprint() != ref
    rec.replay()
    assert split.result.fingerprint() == ref


def test_an_error_in_a_worker_thread_is_the_packages_error(monkeypatch, small_split):
    """A part that fails in the pool raises in the caller, after every part has finished:
    the package's own errors as they are, others as a GeneratorError naming the worker."""
    _, split = _pair(monkeypatch, 3, generator="polar", num_envs=40, num_points=32)
    split.generate()
    split.generate()  # every part has recorded: the next calls run in the pool
    ran = []
    first = split._parts[0]
    monkeypatch.setattr(first, "_run", lambda mode: ran.append(0) or time_sleep(0.05))

    def boom(mode):
        raise RuntimeError("CPU graph replay failed")

    monkeypatch.setattr(split._parts[2], "_run", boom)
    with pytest.raises(GeneratorError, match="worker thread 2 of a split call: RuntimeError"):
        split.generate()
    assert ran == [0]

    def refused(mode):
        raise ParamsError("a refused value")

    monkeypatch.setattr(split._parts[1], "_run", refused)
    with pytest.raises(ParamsError, match="a refused value"):
        split.generate()


def time_sleep(s: float) -> None:
    import time

    time.sleep(s)


def test_default_is_the_cores_available(monkeypatch):
    monkeypatch.delenv("PROCGEN_NB_THREADS", raising=False)
    want = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert pipeline.threads_wanted() == _threads.cores() == want
    monkeypatch.setenv("PROCGEN_NB_THREADS", " ")
    assert pipeline.threads_wanted() == want
    monkeypatch.setenv("PROCGEN_NB_THREADS", "3")
    assert pipeline.threads_wanted() == 3


def test_small_calls_and_bad_values(monkeypatch):
    """The measured threshold: a thread gets MIN_POINTS_PER_THREAD points (envs x N) and
    MIN_ENVS_PER_THREAD envs, or the call has fewer threads (none below two)."""
    monkeypatch.setenv("PROCGEN_NB_THREADS", "4")
    pts, envs = _threads.MIN_POINTS_PER_THREAD, _threads.MIN_ENVS_PER_THREAD
    assert (pts, envs) == (16384, 8)

    def parts(E: int, N: int) -> int:
        return len(TrackGenerator(TrackGenConfig(num_envs=E, num_points=N))._parts)

    assert parts(16, 32) == 0  # a notebook-sized call: one thread
    assert parts(2 * pts // 64 - 1, 64) == 0
    assert parts(2 * pts // 64, 64) == 2
    assert parts(3 * pts // 256, 256) == 3
    assert parts(8 * pts // 256, 256) == 4  # no more than PROCGEN_NB_THREADS
    assert parts(3 * envs, pts) == 3  # and at least MIN_ENVS_PER_THREAD envs each
    assert _threads.threads_for(16, 32) == 1 and _threads.threads_for(3 * envs, pts) == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("PROCGEN_NB_THREADS", bad)
        with pytest.raises(ParamsError, match="PROCGEN_NB_THREADS"):
            pipeline.threads_wanted()


def test_a_forked_child_splits_with_a_pool_of_its_own(monkeypatch, small_split):
    """A process forked after a split call (a ProcessPoolExecutor worker of ``dataset``)
    does not wait on the parent's pool threads: its split calls finish, with the bytes."""
    import multiprocessing as mp

    one, split = _pair(monkeypatch, 2, generator="polar", num_envs=40, num_points=32)
    ref = one.generate(epoch=3).fingerprint()
    split.generate()
    split.generate()  # the pool exists now
    assert _threads._pool is not None
    ctx = mp.get_context("fork")
    q = ctx.Queue()

    def child() -> None:
        q.put(split.generate(epoch=3).fingerprint())

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    try:
        proc.join(60)
        assert proc.exitcode == 0  # None: the child hung on the parent's pool
        assert q.get(timeout=5) == ref
    finally:
        if proc.is_alive():
            proc.kill()


def test_a_split_generator_lists_its_parts_recordings(monkeypatch, small_split):
    """``recordings`` of a split generator: its parts' (it records none itself), the same
    objects after a dynamic update, none after a rebuild (it raised KeyError: the parent's
    own plans stay empty while its parts run the calls)."""
    _, split = _pair(monkeypatch, 2, generator="polar", num_envs=40, num_points=32)
    assert split.recordings == {}
    split.generate()
    plan = split.recordings["generate"]
    assert plan == tuple(r for p in split._parts for r in p._plans["generate"]) and plan
    assert not split.update(validity={"track_width": 0.0})
    split.generate()
    assert split.recordings["generate"] == plan and "regenerate" not in split.recordings
    assert split.update(generator_params={"lobes": 5})
    assert "generate" not in split.recordings


def test_a_split_call_warms_up_once(monkeypatch, small_split):
    """The parent's warm-up (the eager first call over every env) is the only one: its
    parts make none, and their calls still give the bytes of one thread."""
    warm: list[int] = []
    orig = TrackGenerator._run_eager

    def counting(self, mode):
        warm.append(self.config.num_envs)
        return orig(self, mode)

    monkeypatch.setattr(TrackGenerator, "_run_eager", counting)
    one, split = _pair(monkeypatch, 3, generator="hull", num_envs=48, num_points=32)
    assert warm == [48, 48]  # one generator alone, then the split one: no part's [16]
    _calls(one, split, 48)


def test_a_registered_spec_is_one_generator(monkeypatch, small_split):
    """A GeneratorSpec is called as its contract says: ``alloc_scratch`` once with the
    whole config, and ``generate`` over every env (it was [40, 20, 20] with two threads:
    the parent's scratch never used again); its bytes are those of one thread."""
    import dataclasses

    from kit_plugins import GOOD

    allocs: list[int] = []
    gens: list[int] = []

    def alloc(config):
        allocs.append(config.num_envs)
        return GOOD.alloc_scratch(config)

    def generate(seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx=None):
        gens.append(seeds_wp.shape[0])
        GOOD.generate(seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx=ctx)

    spec = dataclasses.replace(GOOD, name="test.counted", alloc_scratch=alloc, generate=generate)
    registry.add(spec)
    try:
        monkeypatch.setenv("PROCGEN_NB_THREADS", "1")
        one = TrackGenerator(TrackGenConfig(device="cpu", generator="test.counted", num_envs=40))
        allocs.clear()
        gens.clear()
        monkeypatch.setenv("PROCGEN_NB_THREADS", "2")
        split = TrackGenerator(TrackGenConfig(device="cpu", generator="test.counted", num_envs=40))
        assert allocs == [40] and gens == [40]  # the warm-up, once
        assert split._parts == []
        _calls(one, split, 40)
        assert allocs == [40] and set(gens) == {40}
    finally:
        registry.remove("generator", "test.counted")


@pytest.fixture
def allocated(monkeypatch):
    """The bytes Warp's CPU allocator hands out (a list of sizes), counted at the
    allocator itself: every ``wp.zeros``/``full``/``array`` of the package goes through it."""
    import warp as wp

    sizes: list[int] = []
    alloc = wp.get_device("cpu").get_allocator()
    orig = alloc.allocate

    def counting(n):
        sizes.append(n)
        return orig(n)

    monkeypatch.setattr(alloc, "allocate", counting)
    return sizes


@pytest.mark.parametrize(
    ("name", "cfg"),
    [
        ("polar", {"z_profile": True}),  # the z profile's stage: its own b.scratch
        ("hull", {"width": {"left": 0.03}, "direction": "random"}),  # widths, boundaries
        ("repulsive", {}),  # E*raw scratch buffers
        ("bezier", {}),  # E*g*g scratch
    ],
)
def test_a_split_call_allocates_what_one_call_does(monkeypatch, small_split, allocated, name, cfg):
    """A split generator's parts run over views of its arrays, scratch included: the bytes
    allocated building it and calling it are the one-thread generator's, but for each
    part's own one-word valid count (it was about twice: every part held its own scratch
    beside the parent's), and the outputs are the one-thread bytes."""
    sizes: dict[str, int] = {}
    gens = {}
    for threads in ("1", "3"):
        monkeypatch.setenv("PROCGEN_NB_THREADS", threads)
        allocated.clear()
        gen = TrackGenerator(
            TrackGenConfig(device="cpu", generator=name, num_envs=48, num_points=64, **cfg)
        )
        for _ in range(2):
            gen.generate()
            gen.regenerate()
        sizes[threads] = sum(allocated)
        gens[threads] = gen
    one, split = gens["1"], gens["3"]
    assert len(split._parts) == 3 and not one._parts
    assert sizes["1"] > 48 * 64 * 8  # at least the tracks themselves
    assert sizes["3"] == sizes["1"] + 3 * 4, sizes  # the parts' [1] int32 valid counts
    _calls(one, split, 48)


def test_a_share_takes_views_only_of_per_env_arrays():
    """``_Arrays.share_of``: an array with n elements an env is the parent's rows of the
    share's envs; a fixed-size table, another dtype or another trailing shape is the
    share's own (hand-worked offsets)."""
    import warp as wp

    from procgen_nb.track_gen._arrays import _Arrays

    parent = _Arrays("cpu", 10)
    per_env = parent.zeros("a", 10 * 3, wp.float32)
    table = parent.zeros("t", 7, wp.int32)
    rows = parent.zeros("r", (10, 2), wp.vec2)
    word = parent.shared("w", lambda: wp.zeros(1, dtype=wp.int32, device="cpu"))
    assert parent.nbytes == 10 * 3 * 4 + 7 * 4 + 10 * 2 * 8
    share = _Arrays.share_of(parent, 4, 5)
    v = share.zeros("a", 5 * 3, float)  # Python's float is float32, as wp.zeros takes it
    assert v.ptr == per_env.ptr + 4 * 3 * 4 and v.shape == (15,)
    r = share.zeros("r", (5, 2), wp.vec2)
    assert r.ptr == rows.ptr + 4 * 2 * 8 and r.shape == (5, 2)
    assert share.shared("w", lambda: None) is word
    assert share.nbytes == 0
    own = [
        share.zeros("t", 7, wp.int32),  # not sized by the envs: the share's own
        share.zeros("a", 5 * 3, wp.int32),  # another dtype
        share.zeros("r", (5, 3), wp.vec2),  # another trailing shape
        share.zeros("a", 5 * 3 + 1, wp.float32),  # not 3 an env
        share.zeros("new", 5, wp.int32),  # no such array in the parent
    ]
    assert all(o.ptr not in (per_env.ptr, table.ptr, rows.ptr) for o in own)
    assert share.nbytes == 7 * 4 + 15 * 4 + 15 * 8 + 16 * 4 + 5 * 4
    assert not parent.is_share and share.is_share
