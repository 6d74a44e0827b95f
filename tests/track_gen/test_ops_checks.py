"""Issue 12: an op refuses a scratch or an array it cannot use before it launches.

``ops.resample_uniform`` with its scratch arguments None (what a 0.1 port passes, since
the legacy helper allocated them) used to launch on null pointers and crash the process.
Every op now refuses None, a wrong dtype or a too-short array with a ``ParamsError`` that
names the op, the argument and the helper that allocates it.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import ops
from procgen_nb.track_gen._src import warp_pipeline
from procgen_nb.track_gen.exec import LaunchContext

E, RAW, N, G, MX = 3, 12, 20, 4, 6
DEV = "cpu"


def _z(n, dtype=wp.int32):
    return wp.zeros(n, dtype=dtype, device=DEV)


def _loops() -> wp.array:
    t = np.linspace(0, 2 * np.pi, RAW, endpoint=False)
    ring = np.c_[np.cos(t), np.sin(t)].astype(np.float32)
    return wp.array(np.concatenate([ring] * E), dtype=wp.vec2, device=DEV)


def _calls():
    """Each op with a valid argument list (positional after ctx), and the positions of the
    arguments that are arrays or scratch objects, with the helper the refusal names."""
    arc = ops.ArcScratch.alloc(DEV, E, RAW, N)
    grid = ops.GridScratch.alloc(DEV, E, N)
    seeds = wp.array(np.arange(E, dtype=np.int32), dtype=wp.int32, device=DEV)
    counts = wp.full(E, 4, dtype=wp.int32, device=DEV)
    one = wp.zeros(1, dtype=wp.float32, device=DEV)
    uni = ops.ArcScratch.alloc(DEV, E, RAW, N)
    build = "b.scratch"
    return {
        "arc_resample": (
            ops.arc_resample,
            [_loops(), _z(E * N, wp.vec2), arc, E, RAW, N, counts, counts],
            {0: build, 1: build, 2: "ops.ArcScratch.alloc"},
        ),
        "arc_resample_attribute": (
            ops.arc_resample_attribute,
            [_z(E * RAW, wp.float32), _z(E * N, wp.float32), arc, E, RAW, N],
            {0: build, 1: build, 2: "ops.ArcScratch.alloc"},
        ),
        "resample_uniform": (
            ops.resample_uniform,
            [_loops(), E, RAW, _z(E * N, wp.vec2), N, uni.seg, uni.cum, uni.counts, uni.t],
            {
                0: build,
                3: build,
                5: "ops.ArcScratch.alloc(device, num_envs, src_points, dst_points).seg",
                6: "ops.ArcScratch.alloc(device, num_envs, src_points, dst_points).cum",
                7: "ops.ArcScratch.alloc(device, num_envs, src_points, dst_points).counts",
                8: "ops.ArcScratch.alloc(device, num_envs, src_points, dst_points).t",
            },
        ),
        "resample_constant_spacing": (
            ops.resample_constant_spacing,
            [_loops(), E, RAW, 0.1, _z(E * N, wp.vec2), N, _z(E), _z(E)],
            {0: build, 4: build, 6: build, 7: build},
        ),
        "sample_counts": (ops.sample_counts, [seeds, 1, 3, 5, _z(E)], {0: "b.seed", 4: build}),
        "grid_cells": (
            ops.grid_cells,
            [seeds, 1, counts, G, _z(E * G * G), _z(E * MX), MX],
            {0: "b.seed", 2: build, 4: build, 5: build},
        ),
        "sample_grid_points": (
            ops.sample_grid_points,
            [seeds, 1, _z(E * MX), counts, G, 1.0, 1.0, _z(E * MX, wp.vec2), MX],
            {0: "b.seed", 2: "ops.grid_cells", 3: build, 7: build},
        ),
        "angle_sort": (ops.angle_sort, [_z(E * MX, wp.vec2), counts, MX], {0: build, 1: build}),
        "self_intersections": (
            ops.self_intersections,
            [_z(E * N, wp.vec2), E, N, _z(E), grid],
            {0: build, 3: build, 4: "ops.GridScratch.alloc"},
        ),
        "check_tracks": (
            ops.check_tracks,
            [_z(E * N, wp.vec2), E, N, grid, one, one, _z(E), _z(E), _z(E), _z(E)],
            {i: build for i in (0, 4, 5, 6, 7, 8, 9)} | {3: "ops.GridScratch.alloc"},
        ),
        "turning_number": (
            ops.turning_number,
            [_z(E * N, wp.vec2), E, N, _z(E)],
            {0: build, 3: build},
        ),
    }


#: arrays whose length is the number of envs the op works on (shorter: fewer envs; empty: refused)
DEFINES_E = {("sample_counts", 4), ("grid_cells", 2), ("sample_grid_points", 3), ("angle_sort", 1)}
CASES = [(op, pos) for op, (_, _, arrays) in _calls().items() for pos in arrays]


def test_every_op_runs_with_its_valid_arguments():
    ctx = LaunchContext(DEV)
    for fn, args, _ in _calls().values():
        fn(ctx, *args)


@pytest.mark.parametrize(("op", "pos"), CASES, ids=[f"{o}-{p}" for o, p in CASES])
def test_none_is_refused_naming_the_helper_that_allocates_it(op, pos):
    fn, args, arrays = _calls()[op]
    args[pos] = None
    with pytest.raises(ParamsError) as err:
        fn(LaunchContext(DEV), *args)
    msg = str(err.value)
    assert msg.startswith(f"ops.{op} ") and ": expected " in msg, msg
    assert msg.endswith("got None"), msg
    assert arrays[pos] in msg, msg


@pytest.mark.parametrize(("op", "pos"), CASES, ids=[f"{o}-{p}" for o, p in CASES])
def test_a_short_or_mistyped_array_is_refused(op, pos):
    fn, args, _ = _calls()[op]
    arg = args[pos]
    if not isinstance(arg, wp.array):  # a scratch object: a field of it made too short
        field = "seg" if isinstance(arg, ops.ArcScratch) else "chain"
        setattr(arg, field, _z(1))
        with pytest.raises(
            ParamsError, match=rf"^ops\.{op} scratch\.{field}: expected .* got 1 elements$"
        ):
            fn(LaunchContext(DEV), *args)
        return
    short = 0 if (op, pos) in DEFINES_E else arg.shape[0] - 1
    args[pos] = wp.zeros(short, dtype=arg.dtype, device=DEV)
    with pytest.raises(ParamsError, match=rf"^ops\.{op} .*: expected .* got {short} elements$"):
        fn(LaunchContext(DEV), *args)
    other = wp.float32 if arg.dtype != wp.float32 else wp.int32
    args[pos] = wp.zeros(arg.shape[0], dtype=other, device=DEV)
    with pytest.raises(ParamsError, match=rf"^ops\.{op} .*: expected a 1-d .* got a 1-d "):
        fn(LaunchContext(DEV), *args)


def test_resample_uniform_none_scratch_message():
    ctx = LaunchContext(DEV)
    with pytest.raises(ParamsError) as err:
        ops.resample_uniform(ctx, _loops(), E, RAW, _z(E * N, wp.vec2), N, None, None, None, None)
    assert str(err.value) == (
        f"ops.resample_uniform seg_wp: expected a 1-d int32 wp.array of at least {E * N} "
        "elements (ops.ArcScratch.alloc(device, num_envs, src_points, dst_points).seg "
        "allocates it), got None"
    )


def test_the_legacy_helper_still_allocates_what_the_op_refuses():
    # the 0.1 helper's allocating mode against the op given ArcScratch buffers: same points
    src = _loops()
    got = _z(E * N, wp.vec2)
    warp_pipeline.resample_uniform(src, E, RAW, got, N, None, None, ctx=LaunchContext(DEV))
    want = _z(E * N, wp.vec2)
    s = ops.ArcScratch.alloc(DEV, E, RAW, N)
    ops.resample_uniform(LaunchContext(DEV), src, E, RAW, want, N, s.seg, s.cum, s.counts, s.t)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # and the points are on the polygon, evenly spaced by arc length (a hand-made ring)
    pts = got.numpy().reshape(E, N, 2)[0]
    assert np.isfinite(pts).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ops.ArcScratch.alloc(DEV, 0, RAW, N), "ops.ArcScratch.alloc num_envs"),
        (lambda: ops.ArcScratch.alloc(DEV, E, 2.5, N), "ops.ArcScratch.alloc raw"),
        (lambda: ops.GridScratch.alloc(DEV, E, None), "ops.GridScratch.alloc num_points"),
        (lambda: ops.fill(LaunchContext(DEV), None, 1), "ops.fill arr"),
    ],
)
def test_sizes_and_fill_targets_are_checked(call, message):
    with pytest.raises(ParamsError, match=rf"^{message}: expected "):
        call()


def test_check_tracks_needs_three_points():
    grid = ops.GridScratch.alloc(DEV, E, 2)
    one = wp.zeros(1, dtype=wp.float32, device=DEV)
    outs = [_z(E) for _ in range(4)]
    with pytest.raises(
        ParamsError, match=r"^ops\.check_tracks num_points: expected an integer in \[3, "
    ):
        ops.check_tracks(LaunchContext(DEV), _z(E * 2, wp.vec2), E, 2, grid, one, one, *outs)


def test_attribute_resample_with_a_foreign_seg_stays_in_bounds():
    # seg is scratch the caller owns: indices past the loop are clamped to its last edge
    src = wp.array(np.arange(E * RAW, dtype=np.float32), dtype=wp.float32, device=DEV)
    dst = _z(E * N, wp.float32)
    arc = ops.ArcScratch.alloc(DEV, E, RAW, N)
    arc.seg.assign(np.full(E * N, 10**6, dtype=np.int32))
    arc.t.assign(np.zeros(E * N, dtype=np.float32))
    ops.arc_resample_attribute(LaunchContext(DEV), src, dst, arc, E, RAW, N)
    got = dst.numpy().reshape(E, N)
    # t = 0 on edge RAW-1: each env's last raw value
    np.testing.assert_array_equal(got, np.repeat([[e * RAW + RAW - 1] for e in range(E)], N, 1))


def test_stage_builder_scratch_shapes_are_checked():
    from procgen_nb.track_gen.config import TrackGenConfig
    from procgen_nb.track_gen.exec import StageBuilder

    class _S:
        name = "test.shapes"

    cfg = TrackGenConfig(num_envs=2, num_points=16, device=DEV)
    b = StageBuilder(
        stage=_S(),
        config=cfg,
        raw=16,
        seed=_z(2),
        active=_z(2),
        outputs={},
        inputs={},
        param_buffer=lambda n: None,
    )
    assert b.scratch("a", wp.int32, [2, 3]).shape == (2, 3)
    assert b.scratch("b", wp.float32, np.int64(5)).shape == (5,)
    with pytest.raises(
        ParamsError, match=r"^test.shapes b.scratch 'c' shape: expected an integer >= 0, got -1$"
    ):
        b.scratch("c", wp.int32, -1)


def test_the_legacy_gate_helpers_refuse_what_they_cannot_use():
    import warnings

    from procgen_nb.track_gen import GateGenConfig
    from procgen_nb.track_gen._src import warp_gate

    cfg = GateGenConfig(num_envs=E, max_gates=8, gate_ordering="random_pairs", device=DEV)
    pos = _z(E * 8, wp.vec2)
    count = wp.full(E, 8, dtype=wp.int32, device=DEV)
    ctx = LaunchContext(DEV)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(
            ParamsError,
            match=r"^track_gen._src.warp_gate.order_points scratch: expected the scratch of "
            r"alloc_order_scratch\(config\) or seeds_wp, got None$",
        ):
            warp_gate.order_points(pos, count, cfg, None, ctx=ctx)
        with pytest.raises(
            ParamsError,
            match=rf"^track_gen._src.warp_gate.order_points position: expected .* at least "
            rf"{E * 8} elements .* got {E * 8 - 1} elements$",
        ):
            warp_gate.order_points(_z(E * 8 - 1, wp.vec2), count, cfg, None, ctx=ctx)
        with pytest.raises(ParamsError, match=r"^track_gen._src.warp_gate.order_points seeds: "):
            warp_gate.order_points(pos, count, cfg, None, seeds_wp=_z(E - 1), ctx=ctx)
        short = type("Out", (), {"position": _z(8, wp.vec2), "count": count})()
        with pytest.raises(
            ParamsError, match=r"^track_gen._src.warp_gate.finish_ordered_gates out.position: "
        ):
            warp_gate.finish_ordered_gates(short, cfg, ctx=ctx)
        # with what it needs, it runs
        scratch = warp_gate.alloc_order_scratch(cfg)
        warp_gate.order_points(pos, count, cfg, scratch, ctx=ctx)


@pytest.mark.parametrize("op", ["sample_counts", "grid_cells", "sample_grid_points"])
def test_a_salt_must_be_an_int32(op):
    fn, args, _ = _calls()[op]
    args[1] = 2**31  # b.salt gives 0 <= salt < 2**31
    with pytest.raises(
        ParamsError, match=rf"^ops\.{op} salt: expected an integer in \[-2147483648, 2147483647\]"
    ):
        fn(LaunchContext(DEV), *args)
