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
