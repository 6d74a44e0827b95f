"""The legacy ``_src`` helpers share no scratch across threads.

``warp_pipeline.self_intersections_inplace`` kept one grid per (device, E, N) for the whole
process: two threads counting the crossings of different loops of the same size wrote the
same grid at once and got wrong counts (3 of 120 calls). Reference: the brute-force count
of every segment pair (``track_reference.crossings``), per loop.
"""

from __future__ import annotations

import threading

import numpy as np
import track_reference as ref
import warp as wp

from procgen_nb.track_gen._src import warp_pipeline

E, N, THREADS, CALLS = 8, 96, 4, 30


def _loops(rng: np.random.Generator) -> np.ndarray:
    """``[E, N, 2]`` star-shaped loops with noisy radii: a few crossings each, or none."""
    th = np.linspace(0.0, 2 * np.pi, N, endpoint=False)
    r = 1.0 + rng.uniform(0.0, 0.9, size=(E, 1)) * rng.standard_normal((E, N))
    return np.stack([r * np.cos(th), r * np.sin(th)], axis=-1).astype(np.float32)


def test_threads_counting_crossings_at_once_get_their_own_counts():
    wp.init()
    barrier = threading.Barrier(THREADS)
    wrong: list[str] = []
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            rng = np.random.default_rng(1000 + t)
            out = wp.zeros(E, dtype=wp.int32, device="cpu")
            barrier.wait()
            for call in range(CALLS):
                loops = _loops(rng)
                xy = wp.array(loops.reshape(-1, 2), dtype=wp.vec2, device="cpu")
                warp_pipeline.self_intersections_inplace(xy, E, N, out)
                want = [ref.crossings(loop) for loop in loops]
                got = out.numpy().tolist()
                if got != want:
                    wrong.append(f"thread {t} call {call}: {got} != {want}")
        except BaseException as exc:  # noqa: BLE001  (raised below)
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert not wrong, f"{len(wrong)} of {THREADS * CALLS} calls: {wrong[:3]}"


def test_one_thread_reuses_its_scratch():
    """Allocation-free after the first call for an output (a plugin's recorded call)."""
    xy = wp.array(_loops(np.random.default_rng(0)).reshape(-1, 2), dtype=wp.vec2, device="cpu")
    out = wp.zeros(E, dtype=wp.int32, device="cpu")
    warp_pipeline.self_intersections_inplace(xy, E, N, out)
    before = len(warp_pipeline._cache)
    for _ in range(3):
        warp_pipeline.self_intersections_inplace(xy, E, N, out)
    assert len(warp_pipeline._cache) == before


def test_an_outputs_grid_leaves_the_cache_when_the_output_is_freed():
    # one grid per output array: a caller keeping no outputs must not grow the cache
    import gc

    wp.init()
    xy = wp.array(_loops(np.random.default_rng(1)).reshape(-1, 2), dtype=wp.vec2, device="cpu")

    def grids():
        return sum(1 for k in warp_pipeline._cache if k[0] == "grid" and k[2:4] == (E, N))

    before = grids()
    outs = [wp.zeros(E, dtype=wp.int32, device="cpu") for _ in range(20)]
    for out in outs:
        warp_pipeline.self_intersections_inplace(xy, E, N, out)
    assert grids() == before + 20
    want = np.array([ref.crossings(p) for p in xy.numpy().reshape(E, N, 2)])
    assert all(np.array_equal(out.numpy(), want) for out in outs)
    del outs, out
    gc.collect()
    assert grids() == before
