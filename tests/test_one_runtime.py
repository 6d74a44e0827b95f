"""One runtime for both doors: one launch context class, one recorder.

The oracle of every recording test: a fresh graph (over a fresh generator) cooked once at
the same values, compared to the bit.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import procgen_nb as pg
from procgen_nb import asset, cookrun, mesh, ops
from procgen_nb.track_gen import TrackGenConfig, TrackGenerator, exec
from procgen_nb.track_gen.gates import Course, GateGenConfig, GateGenerator

INSIDE = asset.resolve("procgen/inside", "computeShader")
POLAR_PINNED = "856500026f403bbb2072aa432e17c1ea4758c24fc14ebae9ec0ea77c2130d84f"


def _cfg(device="cpu", **kw):
    base = dict(num_envs=8, num_points=64, seed=1, device=device)
    return TrackGenConfig(**{**base, **kw})


# -- one launch context --------------------------------------------------------------------
def test_track_context_is_the_runtime_context():
    assert exec.LaunchContext is pg.LaunchContext
    ctx = pg.default_context("cpu")
    for name in ("strict", "host", "bounded_loop", "sync", "eager_cpu"):
        assert hasattr(ctx, name)


def test_track_generator_on_the_default_context_gives_the_pinned_bytes():
    ctx = pg.default_context("cpu")
    cfg = _cfg(generator="polar", num_envs=16, seed=7, epoch=3, z_profile=True)
    tg = TrackGenerator(cfg, ctx=ctx)
    assert tg.ctx is ctx
    tg.generate()
    tg.regenerate()
    assert tg.result.fingerprint() == POLAR_PINNED  # tests/track_gen/test_determinism.py


def test_track_generator_refuses_a_non_context():
    with pytest.raises(
        pg.ParamsError, match=r"ctx: expected a track_gen.exec.LaunchContext or None, got 'cpu'"
    ):
        TrackGenerator(_cfg(), ctx="cpu")


class _Counting(pg.LaunchContext):
    """A context that lists the kernels launched through it."""

    def __init__(self, device):
        super().__init__(device)
        self.kernels: list[str] = []

    def launch(self, kernel, dim, inputs=(), outputs=()):
        self.kernels.append(getattr(kernel, "key", str(kernel)))
        super().launch(kernel, dim, inputs, outputs)


def test_road_overlap_launches_through_the_callers_context(monkeypatch):
    made: list[str] = []
    real_init = pg.LaunchContext.__init__

    def init(self, *a, **k):
        made.append(type(self).__name__)
        real_init(self, *a, **k)

    ctx = _Counting("cpu")
    validity = {"road_overlap": True, "track_width": 0.05}
    tg = TrackGenerator(_cfg(validity=validity), ctx=ctx)
    monkeypatch.setattr(pg.LaunchContext, "__init__", init)
    before = len(ctx.kernels)
    tg.generate(epoch=1)
    assert made == []  # no second context opened by device name
    launched = ctx.kernels[before:]
    assert any("intersect_pairs" in k for k in launched), launched


def test_road_overlap_batch_through_a_context_matches_by_device():
    t = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    circle = np.stack([np.cos(t), np.sin(t)], -1)
    eight = np.stack([np.sin(t), np.sin(t) * np.cos(t)], -1)  # crosses itself at 0
    xy = np.stack([circle, eight]).astype(np.float32)
    ctx = _Counting("cpu")
    got = mesh.road_overlap_batch(xy, 0.1, ctx=ctx)
    assert got.tolist() == [False, True]  # hand-worked: a circle's ribbon is simple
    assert got.tolist() == mesh.road_overlap_batch(xy, 0.1, device="cpu").tolist()
    assert any("intersect_pairs" in k for k in ctx.kernels)
    with pytest.raises(pg.ParamsError, match="road_overlap_batch ctx: expected a LaunchContext"):
        mesh.road_overlap_batch(xy, 0.1, ctx="cpu")


def test_scope_makes_the_context_the_default_for_its_device():
    ctx = pg.LaunchContext("cpu")
    assert pg.default_context("cpu") is not ctx
    with ctx.scope():
        assert pg.default_context("cpu") is ctx
    assert pg.default_context("cpu") is not ctx


# -- one recorder --------------------------------------------------------------------------
def _track_graph(tg, extra=None):
    @pg.node(
        params={
            "epoch": pg.Field(0, bounds=(0, 100)),
            "radius": pg.Field(0.5, bounds=(0.0, 3.0), dynamic=True),
        }
    )
    def tracks(epoch, radius):
        res = tg.generate(epoch=epoch)
        xy = pg.Column(res.xy)
        flags = ops.device.kernel(
            kernel=INSIDE,
            bind={"points": xy},
            domain=xy,
            uniforms={"center": (0.0, 0.0), "radius": radius},
        )["columns"]["flags"]
        return {"flags": flags, "valid": pg.Column(res.valid)}

    g = pg.Graph("tracks")
    g.add("tracks", tracks)
    return g


def _fresh_flags(cfg, params):  # a fresh generator and graph at the same values
    tg = TrackGenerator(cfg)
    tg.generate()
    out = _track_graph(tg).cook(params=params)["tracks"]
    return out["flags"].numpy().copy(), out["valid"].numpy().copy()


def test_a_replay_reruns_the_generator_whatever_else_called_it(device):
    cfg = _cfg(device)
    tg = TrackGenerator(cfg)
    tg.generate(epoch=3)  # the word already holds the node's epoch: the node still fills it
    g = _track_graph(tg)
    g.cook(params={"tracks.epoch": 3, "tracks.radius": 0.5})
    tg.generate(epoch=7)  # another cell
    plans = cookrun.counts().plans
    out = g.cook(params={"tracks.radius": 0.6})
    assert cookrun.counts().plans == plans  # replayed, not planned again
    assert out.report.nodes[0].replayed
    flags, valid = _fresh_flags(cfg, {"tracks.epoch": 3, "tracks.radius": 0.6})
    assert np.array_equal(out["tracks"]["flags"].numpy(), flags)
    assert np.array_equal(out["tracks"]["valid"].numpy(), valid)
    assert tg.config.epoch == 3  # Python's epoch follows the word the replay wrote
    tg.generate(epoch=7)  # so the next outside call writes its epoch again
    ref = TrackGenerator(cfg)
    ref.generate(epoch=7)
    assert tg.result.fingerprint() == ref.result.fingerprint()


def test_a_cook_with_nothing_moved_reruns_after_another_call():
    cfg = _cfg()
    tg = TrackGenerator(cfg)
    g = _track_graph(tg)
    g.cook(params={"tracks.epoch": 2})
    tg.generate(epoch=9)
    out = g.cook(params={"tracks.epoch": 2})
    flags, valid = _fresh_flags(cfg, {"tracks.epoch": 2})
    assert np.array_equal(out["tracks"]["flags"].numpy(), flags)
    assert np.array_equal(out["tracks"]["valid"].numpy(), valid)
    again = g.cook(params={"tracks.epoch": 2})  # nothing else called: nothing runs
    assert all(n.reused for n in again.report.nodes)


def test_a_rebuild_between_cooks_makes_the_node_plan_again():
    cfg = _cfg(generator="polar")
    tg = TrackGenerator(cfg)
    g = _track_graph(tg)
    g.cook(params={"tracks.epoch": 1})
    tg.update(generator_params={"lobes": 7})  # static: rebuilds the pipeline
    plans = cookrun.counts().plans
    out = g.cook(params={"tracks.radius": 0.7})
    assert cookrun.counts().plans == plans + 1
    fresh = TrackGenerator(_cfg(generator="polar", generator_params={"lobes": 7}))
    fresh.generate()
    ref = _track_graph(fresh).cook(params={"tracks.epoch": 1, "tracks.radius": 0.7})
    assert np.array_equal(out["tracks"]["flags"].numpy(), ref["tracks"]["flags"].numpy())


def test_a_host_step_makes_the_node_plan_again_never_replay():
    cfg = _cfg(validity={"road_overlap": True, "track_width": 0.05})
    tg = TrackGenerator(cfg)
    g = _track_graph(tg)
    g.cook(params={"tracks.epoch": 4})
    tg.generate(epoch=5)
    plans = cookrun.counts().plans
    out = g.cook(params={"tracks.radius": 0.8})
    assert cookrun.counts().plans == plans + 1
    assert not out.report.nodes[0].replayed
    flags, valid = _fresh_flags(cfg, {"tracks.epoch": 4, "tracks.radius": 0.8})
    assert np.array_equal(out["tracks"]["flags"].numpy(), flags)
    assert np.array_equal(out["tracks"]["valid"].numpy(), valid)


def _gates_graph(gg):
    @pg.node(
        params={
            "epoch": pg.Field(0, bounds=(0, 100)),
            "radius": pg.Field(0.5, bounds=(0.0, 3.0), dynamic=True),
        }
    )
    def gates(epoch, radius):
        res = gg.generate(epoch=epoch)
        xy = pg.Column(res.xy)
        return ops.device.kernel(
            kernel=INSIDE,
            bind={"points": xy},
            domain=xy,
            uniforms={"center": (0.0, 0.0), "radius": radius},
        )["columns"]

    g = pg.Graph("gates")
    g.add("gates", gates)
    return g


def test_a_gate_generator_call_replays_in_the_graph():
    gcfg = GateGenConfig(num_envs=4, seed=2, device="cpu")
    gg = GateGenerator(gcfg)
    gg.generate(epoch=3)
    g = _gates_graph(gg)
    g.cook(params={"gates.epoch": 3})
    gg.generate(epoch=8)
    plans = cookrun.counts().plans
    out = g.cook(params={"gates.radius": 0.9})
    assert cookrun.counts().plans == plans
    fresh = GateGenerator(gcfg)
    ref = _gates_graph(fresh).cook(params={"gates.epoch": 3, "gates.radius": 0.9})
    assert np.array_equal(out["gates"]["flags"].numpy(), ref["gates"]["flags"].numpy())
    assert gg.result.fingerprint() == fresh.result.fingerprint()


def test_a_course_call_replays_in_the_graph():
    def make():
        return Course(
            TrackGenConfig(num_envs=4, num_points=64, seed=5, device="cpu", z_profile=True),
            GateGenConfig(num_envs=4, seed=5, device="cpu"),
        )

    course = make()

    def graph(c):
        @pg.node(params={"epoch": pg.Field(0, bounds=(0, 100)), "k": pg.Field(1.0, dynamic=True)})
        def lap(epoch, k):
            c.generate(epoch=epoch)
            xy = pg.Column(c.xy)
            flags = ops.device.kernel(
                kernel=INSIDE,
                bind={"points": xy},
                domain=xy,
                uniforms={"center": (0.0, 0.0), "radius": k},
            )["columns"]["flags"]
            return {"flags": flags, "valid": pg.Column(c.valid)}

        gr = pg.Graph("course")
        gr.add("lap", lap)
        return gr

    g = graph(course)
    g.cook(params={"lap.epoch": 2})
    course.generate(epoch=6)
    plans = cookrun.counts().plans
    out = g.cook(params={"lap.k": 0.7})
    assert cookrun.counts().plans == plans
    fresh = make()
    ref = graph(fresh).cook(params={"lap.epoch": 2, "lap.k": 0.7})
    for key in ("flags", "valid"):
        assert np.array_equal(out["lap"][key].numpy(), ref["lap"][key].numpy()), key
    assert course.fingerprint() == fresh.fingerprint()


def test_a_recording_replayed_inside_a_node_is_logged_once():
    ctx = pg.LaunchContext("cpu")
    a = wp.zeros(4, dtype=wp.int32, device="cpu")
    rec = ctx.record(lambda: ctx.fill(a, 3))
    from procgen_nb.launch import logging

    with logging() as log:
        rec.replay()
    assert [e[0] for e in log] == ["replay"]  # the capture logged nothing: it did not run
    assert a.numpy().tolist() == [3, 3, 3, 3]


# -- one kind of dynamic value -------------------------------------------------------------
def _jitter_graph(tg):
    @pg.node(
        params={
            # wider than PolarParams' [0, 1]: the generator's field refuses past 1
            "jitter": pg.Field(0.35, bounds=(0.0, 2.0), dynamic=True),
            "epoch": pg.Field(0, bounds=(0, 2**31 - 1), dynamic=True),
        }
    )
    def tracks(jitter, epoch):
        tg.update(generator_params={"radius_jitter": jitter})
        res = tg.generate(epoch=epoch)
        return {"xy": pg.Column(res.xy), "valid": pg.Column(res.valid)}

    g = pg.Graph("jitter")
    g.add("tracks", tracks)
    return g


def _polar(device="cpu"):
    return TrackGenerator(_cfg(device, generator="polar", num_envs=6, seed=3))


def test_a_node_moving_a_dynamic_params_field_replays_without_planning(device):
    tg = _polar(device)
    g = _jitter_graph(tg)
    g.cook(params={"tracks.jitter": 0.2, "tracks.epoch": 1})
    for jitter, epoch in ((0.6, 1), (0.9, 4), (0.05, 2)):
        plans, before = cookrun.counts().plans, pg.traffic()
        out = g.cook(params={"tracks.jitter": jitter, "tracks.epoch": epoch})
        moved = pg.traffic() - before
        assert cookrun.counts().plans == plans and moved.readbacks == 0
        assert out.report.nodes[0].replayed
        ref = _jitter_graph(_polar(device)).cook(
            params={"tracks.jitter": jitter, "tracks.epoch": epoch}
        )
        for key in ("xy", "valid"):
            assert np.array_equal(out["tracks"][key].numpy(), ref["tracks"][key].numpy()), key
        # Python's copies follow what the replay wrote
        assert tg.params.radius_jitter == pytest.approx(jitter) and tg.config.epoch == epoch
    direct = _polar(device)  # and the fields' own door agrees: update then generate
    direct.update(generator_params={"radius_jitter": 0.05})
    direct.generate(epoch=2)
    assert tg.result.fingerprint() == direct.result.fingerprint()


def test_a_value_the_params_field_refuses_plans_again_and_refuses():
    tg = _polar()
    g = _jitter_graph(tg)
    good = g.cook(params={"tracks.jitter": 0.3})
    kept = good["tracks"]["xy"].numpy().copy()
    with pytest.raises(pg.CookError, match=r"radius_jitter.*1\.5"):
        g.cook(params={"tracks.jitter": 1.5})  # the node allows it, PolarParams does not
    assert g.values["tracks.jitter"] == 0.3
    assert np.array_equal(g.last["tracks"]["xy"].numpy(), kept)


def test_a_node_reading_a_result_back_plans_again_every_cook():
    tg = TrackGenerator(_cfg())

    @pg.node(params={"epoch": pg.Field(0, bounds=(0, 100), dynamic=True)})
    def counted(epoch):
        res = tg.generate(epoch=epoch)
        return {"n": res.num_valid(), "valid": pg.Column(res.valid)}  # a host value

    g = pg.Graph("counted")
    g.add("counted", counted)
    g.cook(params={"counted.epoch": 1})
    plans = cookrun.counts().plans
    out = g.cook(params={"counted.epoch": 2})
    assert cookrun.counts().plans == plans + 1 and not out.report.nodes[0].replayed
    ref = TrackGenerator(_cfg())
    ref.generate(epoch=2)
    assert out["counted"]["n"] == int(np.count_nonzero(ref.result.valid.numpy()))
    assert np.array_equal(out["counted"]["valid"].numpy(), ref.result.valid.numpy())


def test_a_node_calling_a_generator_twice_is_reused_when_nothing_else_called_it():
    tg = TrackGenerator(_cfg())

    @pg.node(params={"epoch": pg.Field(0, bounds=(0, 100))})
    def twice(epoch):
        tg.generate(epoch=epoch + 1)
        return pg.Column(tg.generate(epoch=epoch).valid)

    g = pg.Graph("twice")
    g.add("twice", twice)
    g.cook(params={"twice.epoch": 3})
    before = pg.traffic()
    again = g.cook(params={"twice.epoch": 3})
    assert all(n.reused for n in again.report.nodes) and (pg.traffic() - before).launches == 0
    tg.generate(epoch=50)  # another call: the node's recording runs again
    out = g.cook(params={"twice.epoch": 3})
    ref = TrackGenerator(_cfg())
    ref.generate(epoch=3)
    assert np.array_equal(out["twice"].numpy(), ref.result.valid.numpy())
    assert tg.result.fingerprint() == ref.result.fingerprint()


def test_a_split_generator_in_a_node_replays_as_one_thread_would(monkeypatch):
    monkeypatch.setenv("PROCGEN_NB_THREADS", "2")
    cfg = _cfg(generator="polar", num_envs=64, num_points=512)
    tg = TrackGenerator(cfg)
    assert tg._parts  # a split call outside a node
    g = _track_graph(tg)
    g.cook(params={"tracks.epoch": 3})
    tg.generate(epoch=7)  # split, outside the graph
    out = g.cook(params={"tracks.radius": 0.9})
    assert out.report.nodes[0].replayed
    monkeypatch.setenv("PROCGEN_NB_THREADS", "1")
    flags, valid = _fresh_flags(cfg, {"tracks.epoch": 3, "tracks.radius": 0.9})
    assert np.array_equal(out["tracks"]["flags"].numpy(), flags)
    assert np.array_equal(out["tracks"]["valid"].numpy(), valid)
    tg.generate(epoch=7)  # split again after the replay
    ref = TrackGenerator(cfg)
    assert not ref._parts
    ref.generate(epoch=7)
    assert tg.result.fingerprint() == ref.result.fingerprint()


# -- a quiet context, an eager one -------------------------------------------------------
def test_a_quiet_context_leaves_its_work_out_of_the_traffic_counters():
    loud, quiet = pg.LaunchContext("cpu"), pg.LaunchContext("cpu", quiet=True)
    assert quiet.quiet is True and loud.quiet is False
    a, b = loud.zeros(4, wp.int32), loud.zeros(4, wp.int32)
    before = pg.traffic()
    quiet.fill(a, 3)
    quiet.copy(b, a)
    spent = pg.traffic() - before
    assert (spent.fills, spent.copies) == (0, 0)
    assert b.numpy().tolist() == [3, 3, 3, 3]  # the work ran, uncounted
    before = pg.traffic()
    loud.fill(a, 5)
    loud.copy(b, a)
    spent = pg.traffic() - before
    assert (spent.fills, spent.copies) == (1, 1)


@pytest.mark.parametrize("bad", ["yes", 2, None])
def test_launch_context_refuses_a_quiet_that_is_not_a_flag(bad):
    with pytest.raises(
        pg.ParamsError, match=rf"LaunchContext quiet: expected True or False, got {bad!r}"
    ):
        pg.LaunchContext("cpu", quiet=bad)


def test_runs_eagerly_is_eager_cpu_on_the_cpu():
    ctx = pg.LaunchContext("cpu")
    assert ctx.runs_eagerly is False
    ctx.eager_cpu = True
    assert ctx.runs_eagerly is True


def test_in_host_is_true_inside_host_blocks_only():
    ctx = pg.LaunchContext("cpu")
    assert ctx.in_host is False
    with ctx.host():
        assert ctx.in_host is True
        with ctx.host():  # nested: still inside
            pass
        assert ctx.in_host is True
    assert ctx.in_host is False


# -- a result kept from an earlier cook keeps its values, whoever writes its arrays ---------
def _zero_copy_graph(tg, dynamic=False):
    """A node that hands out the generator's own arrays (no copy)."""

    @pg.node(params={"epoch": pg.Field(0, bounds=(0, 100), dynamic=dynamic)})
    def gen(epoch):
        res = tg.generate(epoch=epoch)
        return {"xy": pg.Column(res.xy), "valid": pg.Column(res.valid)}

    g = pg.Graph("zero-copy")
    g.add("gen", gen)
    return g


def _epoch_bytes(cfg, epoch):  # the reference: a fresh generator at that epoch
    ref = TrackGenerator(cfg)
    ref.generate(epoch=epoch)
    return ref.result.xy.numpy().copy(), ref.result.valid.numpy().copy()


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_kept_zero_copy_result_keeps_its_values_when_the_node_plans_or_replays(dynamic):
    cfg = _cfg()
    tg = TrackGenerator(cfg)
    g = _zero_copy_graph(tg, dynamic)
    a = g.cook(params={"gen.epoch": 3})
    b = g.cook(params={"gen.epoch": 5})  # static: the node plans again; dynamic: a replay
    assert b.report.nodes[0].replayed is dynamic
    for res, epoch in ((a, 3), (b, 5)):
        xy, valid = _epoch_bytes(cfg, epoch)
        assert np.array_equal(res["gen"]["xy"].numpy(), xy), epoch
        assert np.array_equal(res["gen"]["valid"].numpy(), valid), epoch
    assert not np.array_equal(*(_epoch_bytes(cfg, e)[0] for e in (3, 5)))  # they differ


def test_a_kept_zero_copy_result_keeps_its_values_after_an_outside_call():
    cfg = _cfg()
    tg = TrackGenerator(cfg)
    g = _zero_copy_graph(tg)
    a = g.cook(params={"gen.epoch": 3})
    before = pg.traffic()
    tg.generate(epoch=7)  # another cell writes the generator's arrays
    moved = pg.traffic() - before
    assert moved.readbacks == 0
    assert np.array_equal(a["gen"]["xy"].numpy(), _epoch_bytes(cfg, 3)[0])
    assert np.array_equal(g.outputs["gen"]["xy"].numpy(), _epoch_bytes(cfg, 3)[0])
    assert np.array_equal(tg.result.xy.numpy(), _epoch_bytes(cfg, 7)[0])


def test_a_kept_result_of_one_graph_survives_another_graphs_replay():
    cfg = _cfg()
    tg = TrackGenerator(cfg)
    g1, g2 = _zero_copy_graph(tg, True), _zero_copy_graph(tg, True)
    g1.cook(params={"gen.epoch": 1})
    g2.cook(params={"gen.epoch": 2})
    a1 = g1.cook(params={"gen.epoch": 3})
    a2 = g2.cook(params={"gen.epoch": 4})
    assert a1.report.nodes[0].replayed and a2.report.nodes[0].replayed
    assert np.array_equal(a1["gen"]["xy"].numpy(), _epoch_bytes(cfg, 3)[0])
    assert np.array_equal(a2["gen"]["xy"].numpy(), _epoch_bytes(cfg, 4)[0])


def test_a_kept_course_column_keeps_its_values_when_the_node_plans_again():
    tcfg, gcfg = _cfg(num_envs=4, num_points=32, seed=5), GateGenConfig(num_envs=4, seed=5)
    c = Course(tcfg, gcfg)

    @pg.node(params={"epoch": pg.Field(0, bounds=(0, 100))})
    def lap(epoch):
        c.generate(epoch=epoch)
        return {"xy": pg.Column(c.xy)}

    g = pg.Graph("course")
    g.add("lap", lap)
    a = g.cook(params={"lap.epoch": 1})
    g.cook(params={"lap.epoch": 2})
    ref = Course(tcfg, gcfg)
    ref.generate(epoch=1)
    assert np.array_equal(a["lap"]["xy"].numpy(), ref.xy.numpy())


def test_a_replay_puts_back_the_constant_a_node_gave_a_params_field():
    # the node sets radius_jitter to a constant; another cell sets it to 0.9 and calls the
    # generator; the graph's replay writes 0.2 again, and Python's Params follow it
    tg = _polar()

    @pg.node(params={"epoch": pg.Field(0, bounds=(0, 100), dynamic=True)})
    def tracks(epoch):
        tg.update(generator_params={"radius_jitter": 0.2})
        return {"xy": pg.Column(tg.generate(epoch=epoch).xy)}

    g = pg.Graph("const")
    g.add("tracks", tracks)
    g.cook(params={"tracks.epoch": 1})
    tg.update(generator_params={"radius_jitter": 0.9})
    tg.generate(epoch=7)
    out = g.cook(params={"tracks.epoch": 2})
    assert out.report.nodes[0].replayed
    assert tg.params.radius_jitter == pytest.approx(0.2)
    tg.generate(epoch=7)  # an outside call gives the bytes its Params say
    ref = _polar()
    ref.update(generator_params={"radius_jitter": 0.2})
    ref.generate(epoch=7)
    assert tg.result.fingerprint() == ref.result.fingerprint()


def test_a_kept_metrics_column_keeps_its_values_when_the_node_plans_again():
    from procgen_nb.track_gen import metrics

    cfg = _cfg()
    tg = TrackGenerator(cfg)

    @pg.node(params={"epoch": pg.Field(0, bounds=(0, 100))})
    def lengths(epoch):  # the metrics' own arrays handed out, no copy
        return {"length": pg.Column(metrics.enqueue(tg.generate(epoch=epoch))["length"])}

    g = pg.Graph("metrics")
    g.add("m", lengths)
    a = g.cook(params={"m.epoch": 3})
    g.cook(params={"m.epoch": 5})
    ref = TrackGenerator(cfg)
    want = metrics.compute(ref.generate(epoch=3))["length"]
    assert np.array_equal(a["m"]["length"].numpy(), want)
    assert not np.array_equal(metrics.compute(ref.generate(epoch=5))["length"], want)


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_kept_course_flag_column_keeps_its_values(dynamic):
    tcfg, gcfg = _cfg(num_envs=4, num_points=32, seed=5), GateGenConfig(num_envs=4, seed=5)

    def graph(c):
        @pg.node(params={"epoch": pg.Field(0, bounds=(0, 100), dynamic=dynamic)})
        def lap(epoch):  # the course's own arrays handed out, no copy
            c.generate(epoch=epoch)
            cols = c.columns()
            return {"s": cols["s"], "valid": cols["valid"]}

        g = pg.Graph("course-own")
        g.add("lap", lap)
        return g

    c = Course(tcfg, gcfg)
    g, other = graph(c), graph(c)
    other.cook(params={"lap.epoch": 3})
    a = g.cook(params={"lap.epoch": 1})
    b = g.cook(params={"lap.epoch": 2})  # a plan (static) or a replay (dynamic) of g
    other.cook(params={"lap.epoch": 0})  # a plan, or a replay, of another graph
    c.generate(epoch=3)  # and a cell
    ref = Course(tcfg, gcfg)
    for res, epoch in ((a, 1), (b, 2)):
        ref.generate(epoch=epoch)
        assert res["lap"]["s"].numpy().tobytes() == ref.s.numpy().tobytes()  # NaN past gates
        assert np.array_equal(res["lap"]["valid"].numpy(), ref.valid.numpy())
    ref.generate(epoch=3)
    assert b["lap"]["s"].numpy().tobytes() != ref.s.numpy().tobytes()
