"""The runtime: device choice, columns, traffic counters, the launch context."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import procgen_nb as pg
from procgen_nb.columns import Column, LiveCount
from procgen_nb.device import get_device, resolve_device, set_device


def test_default_device_is_cpu_without_cuda(monkeypatch):
    monkeypatch.delenv("PROCGEN_DEVICE", raising=False)
    expected = "cuda:0" if any(d.startswith("cuda") for d in pg.available_devices()) else "cpu"
    assert get_device() == expected


def test_env_override_and_refusal(monkeypatch):
    monkeypatch.setenv("PROCGEN_DEVICE", "cpu")
    assert get_device() == "cpu"
    monkeypatch.setenv("PROCGEN_DEVICE", "tpu:3")
    with pytest.raises(
        pg.DeviceError, match=r"PROCGEN_DEVICE: expected one of \['cpu'.*got 'tpu:3'"
    ):
        get_device()


def test_set_device_refuses_unknown():
    with pytest.raises(pg.DeviceError, match="expected one of .*got 'metal'"):
        set_device("metal")
    with pytest.raises(pg.DeviceError):
        resolve_device("cuda:7")


def test_column_elements(device):
    for typ, dtype, word, lanes in [
        ("Float", wp.float32, "f32", 1),
        ("Int", wp.int32, "i32", 1),
        ("UInt", wp.uint32, "u32", 1),
        ("Vec2", wp.vec2f, "f32", 2),
        ("Vec3", wp.vec3f, "f32", 3),
        ("Vec4", wp.vec4f, "f32", 4),
        ("Color", wp.vec4f, "f32", 4),
    ]:
        col = Column(wp.zeros(5, dtype=dtype, device=device), typ)
        assert col.element() == word
        assert col.lanes == lanes
        assert col.count == 5 and col._capacity is None


def test_column_refuses_wrong_dtype(device):
    with pytest.raises(
        pg.BindingError, match="column of type Int: expected dtype int32, got float32"
    ):
        Column(wp.zeros(3, dtype=wp.float32, device=device), "Int")
    with pytest.raises(pg.BindingError, match="expected one of"):
        Column(wp.zeros(3, dtype=wp.float32, device=device), "Quaternion")
    with pytest.raises(pg.BindingError, match="expected a wp.array, got"):
        Column([1, 2, 3])


def test_live_column_carries_count_and_capacity(device):
    words = wp.array([3], dtype=wp.uint32, device=device)
    col = Column(wp.zeros(8, dtype=wp.float32, device=device), "Float", LiveCount(words, 8))
    assert col._capacity == 8 and col._liveCount is words
    assert isinstance(col.count, LiveCount)
    with pytest.raises(pg.BindingError, match="one-word device column"):
        LiveCount(wp.zeros(2, dtype=wp.uint32, device=device), 4)


def test_geometry_and_texture(device):
    p = Column(wp.zeros(4, dtype=wp.vec3f, device=device))
    g = pg.Geometry(point={"P": p})
    assert g.point.count == 4 and g.point["P"] is p
    with pytest.raises(AttributeError, match="no class 'prim'"):
        _ = g.prim
    t = pg.Texture(Column(wp.zeros(6, dtype=wp.vec4f, device=device), "Color"), 3, 2)
    assert (t.width, t.height) == (3, 2)
    with pytest.raises(pg.BindingError, match=r"width\*height == texels \(6\), got 4x2"):
        pg.Texture(t.texels, 4, 2)


def test_traffic_counts_launch_copy_fill_upload_readback(device):
    ctx = pg.LaunchContext(device)
    before = pg.traffic()
    with pg.collect() as c:
        a = ctx.upload(np.arange(4, dtype=np.float32), wp.float32)
        b = ctx.zeros(4, wp.float32)
        ctx.copy(b, a)
        ctx.fill(a, 2.0)
        out = ctx.readback(b)
    d = pg.traffic() - before
    assert (d.uploads, d.copies, d.fills, d.readbacks, d.waits) == (1, 1, 1, 1, 1)
    assert c.as_dict() == d.as_dict()
    np.testing.assert_array_equal(out, np.arange(4, dtype=np.float32))


@wp.kernel
def _add(a: wp.array(dtype=wp.float32), x: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] + x[0]


def test_recording_replays_with_dynamic_values_in_buffers(device):
    ctx = pg.LaunchContext(device)
    a = ctx.zeros(3, wp.float32)
    x = ctx.upload(np.array([1.0], np.float32), wp.float32)
    rec = ctx.record(lambda: ctx.launch(_add, 3, [a, x]))
    np.testing.assert_array_equal(a.numpy(), [0, 0, 0])  # capture runs nothing
    before = pg.traffic()
    rec.replay()
    ctx.fill(x, 5.0)  # a dynamic value changes between replays without a new recording
    rec.replay()
    d = pg.traffic() - before
    assert d.replays == 2 and d.launches == 2 and d.readbacks == 0
    np.testing.assert_array_equal(a.numpy(), [6, 6, 6])


def test_recording_refuses_readback_and_allocation(device):
    ctx = pg.LaunchContext(device)
    a = ctx.zeros(3, wp.float32)
    with pytest.raises(pg.NotCapturableError, match="readback: expected no host read"):
        ctx.record(lambda: ctx.readback(a))
    with pytest.raises(pg.NotCapturableError, match="zeros: expected no allocation"):
        ctx.record(lambda: ctx.zeros(3, wp.float32))
    assert not ctx.recording
