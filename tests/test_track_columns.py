"""Track results in the runtime's types, and track generators and courses as graph nodes.

References: NumPy over the arrays read back (``np.flatnonzero`` of the valid flags), and a
fresh graph over a fresh generator cooked at the same values.
"""

from __future__ import annotations

import numpy as np
import pytest

import procgen_nb as pg
from procgen_nb import asset, cookrun, ops
from procgen_nb.track_gen import TrackGenConfig, TrackGenerator
from procgen_nb.track_gen.gates import Course, GateGenConfig
from procgen_nb.ui.graph_target import GraphTarget
from procgen_nb.ui.targets import as_target

COMPACT = asset.resolve("procgen/compact", "computeShader")
GATHER = asset.resolve("procgen/gather", "computeShader")


def _tg(**kw):
    base = dict(generator="polar", num_envs=16, num_points=32, seed=4, device="cpu")
    return TrackGenerator(TrackGenConfig(**{**base, **kw}))


def test_result_columns_are_the_result_arrays():
    tg = _tg()
    res = tg.generate()
    cols = res.columns()
    assert cols["xy"].type == "Vec2" and len(cols["xy"]) == 16 * 32
    assert cols["valid"].type == "Int" and cols["turning"].type == "Int"
    assert cols["xy"].data.ptr == res.xy.ptr and cols["valid"].data.ptr == res.valid.ptr
    live = cols["valid_count"]
    assert isinstance(live, pg.LiveCount) and live.capacity == 16
    valid = res.valid.numpy()
    assert int(live.words.numpy()[0]) == int(np.count_nonzero(valid)) == res.num_valid()
    tg.generate(epoch=5)  # the same words: the next call's count
    assert int(live.words.numpy()[0]) == int(np.count_nonzero(res.valid.numpy()))


@pg.node
def _keep(tracks):
    """Compacts the valid envs and gathers their turning numbers, on the device."""
    kept = ops.device.kernel(
        kernel=COMPACT, bind={"flags": tracks["valid"]}, domain=tracks["valid"]
    )["columns"]
    turning = ops.device.kernel(
        kernel=GATHER,
        specialize={"TYPE": "i32"},
        bind={"src": tracks["turning"], "idx": kept["indices"]},
        domain=kept["indices_count"],
    )["columns"]["dst"]
    return {"indices": kept["indices"], "count": kept["indices_count"], "turning": turning}


def _graph(tg):
    g = pg.Graph("keep")
    g.add("tracks", tg.node())
    g.add("keep", _keep, tracks="tracks")
    return g


def _read(out):
    k = out["keep"]
    n = int(k["count"].words.numpy()[0])
    return n, k["indices"].numpy()[:n].copy(), k["turning"].numpy()[:n].copy()


def test_a_graph_compacts_the_valid_envs_on_the_device_with_no_readback(device):
    tg = _tg(generator="hull", num_envs=24, device=device, generator_params={"repair": False})
    g = _graph(tg)
    before = pg.traffic()
    out = g.cook(params={"tracks.epoch": 0})
    assert (pg.traffic() - before).readbacks == 0
    n, idx, turning = _read(out)
    valid = tg.result.valid.numpy()
    assert 0 < n < 24  # the 0.1 hull (repair off) rejects some of these envs
    assert idx.tolist() == np.flatnonzero(valid).tolist()
    assert turning.tolist() == tg.result.turning.numpy()[valid != 0].tolist()


def test_the_node_offers_the_params_fields_and_replays_a_dynamic_one():
    tg = _tg()
    g = _graph(tg)
    fields = g.params()
    assert {"tracks.lobes", "tracks.radius_jitter", "tracks.min_radius", "tracks.epoch"} <= set(
        fields
    )
    assert fields["tracks.radius_jitter"].dynamic and not fields["tracks.lobes"].dynamic
    g.cook()
    plans = cookrun.counts().plans
    params = {"tracks.radius_jitter": 0.8, "tracks.epoch": 3}
    out = g.cook(params=params)
    assert cookrun.counts().plans == plans  # a dynamic Params field: replayed
    ref = _graph(_tg()).cook(params=params)
    for a, b in zip(_read(out), _read(ref), strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(out["tracks"]["xy"].numpy(), ref["tracks"]["xy"].numpy())


def test_a_static_params_field_plans_again_and_matches_a_fresh_graph():
    tg = _tg()
    g = _graph(tg)
    g.cook()
    plans = cookrun.counts().plans
    out = g.cook(params={"tracks.lobes": 5})
    assert cookrun.counts().plans == plans + 1 and tg.params.lobes == 5
    ref = _graph(_tg(generator_params={"lobes": 5})).cook()
    assert np.array_equal(out["tracks"]["xy"].numpy(), ref["tracks"]["xy"].numpy())
    with pytest.raises(pg.ParamsError, match="tracks.lobes|lobes"):
        g.cook(params={"tracks.lobes": 2})  # PolarParams' bounds are the node's


def _course():
    return Course(
        TrackGenConfig(generator="polar", num_envs=4, num_points=64, seed=5, device="cpu"),
        GateGenConfig(generator="arc_length", num_envs=4, seed=5, device="cpu"),
    )


def test_a_course_node_answers_its_columns_and_replays():
    course = _course()
    nd = course.node()
    names = set(nd.Params.fields())
    assert "epoch" in names and names - {"epoch"}
    assert all(n.startswith(("track_", "gates_")) for n in names - {"epoch"})
    g = pg.Graph("course")
    g.add("course", nd)
    g.cook()
    assert {"track_radius_jitter", "gates_jitter"} <= names
    plans = cookrun.counts().plans
    moved = {"course.epoch": 2, "course.track_radius_jitter": 0.7, "course.gates_jitter": 0.5}
    out = g.cook(params=moved)
    assert cookrun.counts().plans == plans
    fresh = _course()
    fresh.track.update(generator_params={"radius_jitter": 0.7})
    fresh.gates.update({"jitter": 0.5})
    fresh.generate(epoch=2)
    data = fresh.numpy()
    cols = out["course"]
    assert np.array_equal(cols["valid"].numpy(), data["valid"])
    assert np.array_equal(cols["xy"].numpy().reshape(4, 64, 2), data["xy"])
    assert np.array_equal(cols["gate_count"].numpy(), data["gate_count"])
    got = cols["gate_position"].numpy().reshape(data["gate_position"].shape)
    assert np.array_equal(got, data["gate_position"], equal_nan=True)
    assert int(cols["valid_count"].words.numpy()[0]) == int(np.count_nonzero(data["valid"]))


def test_explore_takes_a_track_generator_as_a_graph_of_its_node():
    tg = _tg(num_envs=4)
    target = as_target(tg)
    assert isinstance(target, GraphTarget)
    assert {"tracks.radius_jitter", "tracks.epoch"} <= set(target.params_class.fields())
    with pytest.raises(pg.ParamsError, match="explore options for a track generator"):
        as_target(tg, num_envs=3)


def test_the_node_offers_validity_and_z_profile_fields_and_replays_them():
    tg = _tg(z_profile=True)
    g = pg.Graph("all fields")
    g.add("tracks", tg.node())
    fields = g.params()
    for key in ("tracks.validity_min_turn_radius", "tracks.validity_track_width"):
        assert fields[key].dynamic
    assert not fields["tracks.validity_road_overlap"].dynamic
    assert fields["tracks.z_amplitude"].dynamic and not fields["tracks.z_knots"].dynamic
    g.cook()
    plans = cookrun.counts().plans
    moved = {"tracks.validity_min_turn_radius": 0.3, "tracks.z_amplitude": 0.4}
    out = g.cook(params=moved)
    assert cookrun.counts().plans == plans  # dynamic fields of every stage: replayed
    ref = _tg(z_profile=True)
    ref.update(validity={"min_turn_radius": 0.3}, z_profile={"amplitude": 0.4})
    ref.generate()
    assert tg.result.fingerprint() == ref.result.fingerprint()
    assert np.array_equal(out["tracks"]["valid"].numpy(), ref.result.valid.numpy())
    assert np.array_equal(out["tracks"]["z"].numpy(), ref.result.attributes["z"].numpy())
    assert tg.config.validity.min_turn_radius == 0.3 and tg.z_profile_params.amplitude == 0.4


def test_a_params_field_named_epoch_is_refused_as_a_node():
    from procgen_nb.track_gen.generators.basic import Polar, PolarParams

    class EpochParams(PolarParams):
        epoch: int = pg.Field(0, bounds=(0, 10))

    class EpochPolar(Polar):
        name = "test.epoch_polar"
        Params = EpochParams

    tg = TrackGenerator(
        TrackGenConfig(num_envs=2, num_points=16, device="cpu"), generator=EpochPolar
    )
    with pytest.raises(pg.GeneratorError, match=r"without an 'epoch' field .*got one in"):
        tg.node()


def _course_with(track_params=None, gate_params=None, **tk):
    return Course(
        TrackGenConfig(
            generator="polar",
            num_envs=4,
            num_points=64,
            seed=5,
            device="cpu",
            generator_params=track_params,
            **tk,
        ),
        GateGenConfig(
            generator="arc_length", num_envs=4, seed=5, device="cpu", generator_params=gate_params
        ),
    )


def _same_course(cols, fresh):
    """The node's columns against a course made fresh and read back with ``numpy()``."""
    data = fresh.numpy()
    assert np.array_equal(cols["valid"].numpy(), data["valid"])
    assert np.array_equal(cols["xy"].numpy().reshape(data["xy"].shape), data["xy"])
    assert np.array_equal(cols["gate_count"].numpy(), data["gate_count"])
    got = cols["gate_position"].numpy().reshape(data["gate_position"].shape)
    assert np.array_equal(got, data["gate_position"], equal_nan=True)
    assert np.array_equal(cols["s"].numpy(), data["s"].reshape(-1), equal_nan=True)
    assert int(cols["valid_count"].words.numpy()[0]) == int(np.count_nonzero(data["valid"]))


def test_a_course_node_offers_every_params_field_static_ones_plan_again():
    course = _course()
    g = pg.Graph("course")
    g.add("course", course.node())
    fields = g.params()
    static = {"course.track_lobes", "course.track_validity_road_overlap", "course.gates_max_count"}
    dynamic = {
        "course.track_radius_jitter",
        "course.track_validity_track_width",
        "course.gates_jitter",
    }
    assert static | dynamic | {"course.epoch"} <= set(fields)
    assert not any(fields[k].dynamic for k in static)
    assert all(fields[k].dynamic for k in dynamic)
    offered = as_target(g).params_class.fields()  # what explore() shows of the graph
    assert static | dynamic <= set(offered) and not offered["course.track_lobes"].dynamic
    g.cook()
    plans = cookrun.counts().plans
    moved = {"course.track_lobes": 5, "course.gates_max_count": 12, "course.epoch": 1}
    out = g.cook(params=moved)
    assert cookrun.counts().plans == plans + 1  # a static field: the node plans again
    assert course.track.params.lobes == 5 and course.gates.params.max_count == 12
    fresh = _course_with({"lobes": 5}, {"max_count": 12})
    _same_course(out["course"], fresh.generate(epoch=1))
    # then a dynamic field of each generator: replayed over the rebuilt course, exact
    plans = cookrun.counts().plans
    moved |= {"course.track_radius_jitter": 0.7, "course.gates_jitter": 0.5, "course.epoch": 3}
    out = g.cook(params=moved)
    assert cookrun.counts().plans == plans
    fresh = _course_with({"lobes": 5, "radius_jitter": 0.7}, {"max_count": 12, "jitter": 0.5})
    _same_course(out["course"], fresh.generate(epoch=3))


def test_a_course_node_refuses_a_static_value_out_of_bounds_and_keeps_the_course():
    course = _course()
    g = pg.Graph("course")
    g.add("course", course.node())
    out = g.cook(params={"course.epoch": 2})
    before = out["course"]["xy"].numpy().copy()
    with pytest.raises(pg.ParamsError, match="lobes"):
        g.cook(params={"course.track_lobes": 2})  # PolarParams' bounds (3, 64)
    assert course.track.params.lobes == 8
    assert np.array_equal(course.xy.numpy(), before)


def _shared(tg):
    """Two nodes of one generator, each compacting its own valid envs downstream."""
    g = pg.Graph("shared")
    g.add("a", tg.node())
    g.add("b", tg.node())
    g.add("keep_a", _keep, tracks="a")
    g.add("keep_b", _keep, tracks="b")
    return g


def _alone(jitter, epoch, device="cpu"):
    """The reference: a generator of its own, updated and called once (read with NumPy)."""
    tg = _tg(device=device)
    tg.update(generator_params={"radius_jitter": jitter})
    res = tg.generate(epoch=epoch)
    return res.xy.numpy(), res.valid.numpy()


def test_two_nodes_of_one_generator_replay_each_its_own_call(device):
    tg = _tg(device=device)
    g = _shared(tg)
    for i, jitter in enumerate([0.3, 0.55, 0.8]):
        params = {"a.radius_jitter": jitter, "a.epoch": i, "b.radius_jitter": 0.1, "b.epoch": 9}
        plans = cookrun.counts().plans
        before = pg.traffic()
        out = g.cook(params=params)
        assert (pg.traffic() - before).readbacks == 0
        if i:  # a dynamic field moved: the graph's recording replays, no plan
            assert cookrun.counts().plans == plans and out.report.replayed
        fresh = _shared(_tg(device=device)).cook(params=params)
        for node, (j, e) in (("a", (jitter, i)), ("b", (0.1, 9))):
            xy, valid = _alone(j, e, device)
            assert np.array_equal(out[node]["xy"].numpy().reshape(xy.shape), xy)
            assert np.array_equal(out[node]["valid"].numpy(), valid)
            assert out[node]["xy"].numpy().tobytes() == fresh[node]["xy"].numpy().tobytes()
            n, idx, turning = _read({"keep": out[f"keep_{node}"]})
            assert idx.tolist() == np.flatnonzero(valid).tolist()
            assert (n, idx.tolist(), turning.tolist()) == tuple(
                x if isinstance(x, int) else x.tolist()
                for x in _read({"keep": fresh[f"keep_{node}"]})
            )


def test_a_node_output_keeps_its_call_when_the_generator_is_called_outside():
    tg = _tg()
    g = pg.Graph("one")
    g.add("tracks", tg.node())
    out = g.cook(params={"tracks.epoch": 2})
    xy = out["tracks"]["xy"].numpy().copy()
    tg.generate(epoch=11)  # another cell calls the generator
    assert np.array_equal(out["tracks"]["xy"].numpy(), xy)
    assert not np.array_equal(tg.result.xy.numpy(), xy)
    again = g.cook(params={"tracks.epoch": 2})  # stale arrays: the recording runs again
    assert np.array_equal(again["tracks"]["xy"].numpy(), xy)


def test_result_geometry_has_point_and_env_classes_with_no_readback():
    E, N = 6, 16
    tg = _tg(generator="hull", num_envs=E, num_points=N, seed=3, z_profile=True)
    res = tg.generate(epoch=2)
    before = pg.traffic()
    geo = res.geometry()
    d = pg.traffic() - before
    assert (d.readbacks, d.launches) == (0, 1)  # the env index, made once
    assert sorted(geo.classes) == ["env", "point"]
    assert geo.point.count == E * N and geo.env.count == E
    assert geo.point["xy"].type == "Vec2" and geo.point["env"].type == "Int"
    again = pg.traffic()
    geo = res.geometry()
    assert (pg.traffic() - again).launches == 0
    xy = res.xy.numpy()
    assert np.array_equal(geo.point["xy"].numpy(), xy)
    assert geo.point["env"].numpy().tolist() == np.repeat(np.arange(E), N).tolist()
    assert np.array_equal(geo.point["z"].numpy(), res.attributes["z"].numpy())
    valid = res.valid.numpy()
    assert np.array_equal(geo.env["valid"].numpy(), valid)
    assert np.array_equal(geo.env["reason"].numpy(), res.reason.numpy())
    # each env's seed and points against that env made alone from its base seed
    seeds = geo.env["seed"].numpy()
    base = tg.config.env_seed_values()
    for e in (0, E - 1):
        one = _tg(generator="hull", num_envs=1, num_points=N, env_seeds=[base[e]], z_profile=True)
        alone = one.generate(epoch=2).geometry()
        assert alone.env["seed"].numpy()[0] == seeds[e]
        assert np.array_equal(alone.point["xy"].numpy(), xy[e * N : (e + 1) * N])
    assert len(set(seeds.tolist())) == E  # and they are the call's, not one per batch


@pg.node
def _valid_seeds(tracks):
    """The seeds of the valid envs, compacted on the device from a Geometry's env class."""
    env = tracks.env
    kept = ops.device.kernel(kernel=COMPACT, bind={"flags": env["valid"]}, domain=env)["columns"]
    seeds = ops.device.kernel(
        kernel=GATHER,
        specialize={"TYPE": "i32"},
        bind={"src": env["seed"], "idx": kept["indices"]},
        domain=kept["indices_count"],
    )["columns"]["dst"]
    return {"count": kept["indices_count"], "seeds": seeds}


def test_a_graph_compacts_a_result_geometry_on_the_device():
    tg = _tg(generator="hull", num_envs=24, generator_params={"repair": False})

    @pg.node
    def tracks():
        return tg.generate(epoch=0).geometry()

    g = pg.Graph("geometry")
    g.add("tracks", tracks)
    g.add("seeds", _valid_seeds, tracks="tracks")
    before = pg.traffic()
    out = g.cook()
    assert (pg.traffic() - before).readbacks == 0
    n = int(out["seeds"]["count"].words.numpy()[0])
    valid, seeds = tg.result.valid.numpy(), tg.result.seeds.numpy()
    assert 0 < n < 24  # the 0.1 hull (repair off) rejects some of these envs
    assert out["seeds"]["seeds"].numpy()[:n].tolist() == seeds[valid != 0].tolist()


def test_a_gates_first_course_node_rebuilds_on_a_static_gates_field():
    def made(gate_params=None):
        return Course(
            TrackGenConfig(num_envs=4, num_points=64, seed=5, device="cpu"),
            GateGenConfig(
                generator="free", num_envs=4, seed=5, device="cpu", generator_params=gate_params
            ),
        )

    course = made()
    assert course.gates_first  # the centerline runs through the gates
    g = pg.Graph("free course")
    g.add("course", course.node())
    g.cook()
    out = g.cook(params={"course.gates_gates": 5, "course.epoch": 4})
    assert course.gates.params.gates == 5
    _same_course(out["course"], made({"gates": 5}).generate(epoch=4))
    assert out["course"]["gate_count"].numpy().tolist() == [5, 5, 5, 5]
