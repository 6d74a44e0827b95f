"""Every export format read back by a reader that is not the writer (csv, yaml, tomllib,
xml.etree, matplotlib's PNG reader, a JSON/base64 glTF reader, an OBJ parser written from
the spec) and compared with the generator's own arrays within the stated tolerance."""

from __future__ import annotations

import base64
import csv
import json
import math
import tomllib
import xml.etree.ElementTree as ET

import matplotlib.image
import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from procgen_nb.track_gen import export, gates, presets

SCALE = 50.0  # metres per world unit


@pytest.fixture(scope="module")
def gen():
    return presets.track(
        "bezier", num_envs=4, num_points=96, width={"variation": 0.3}, z_profile=True, seed=3
    )


@pytest.fixture(scope="module")
def ref(gen):
    """The generator's arrays in metres and the boundaries computed here from them."""
    d = gen.result.numpy()
    e = int(np.flatnonzero(d["valid"])[0])
    xy = d["xy"][e].astype(np.float64) * SCALE
    wl = d["width_left"][e].astype(np.float64) * SCALE
    wr = d["width_right"][e].astype(np.float64) * SCALE
    t = np.roll(xy, -1, 0) - np.roll(xy, 1, 0)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    left_n = np.stack([-t[:, 1], t[:, 0]], 1)
    return {
        "env": e,
        "seed": gen.config.env_seed_values()[e],
        "xy": xy,
        "wl": wl,
        "wr": wr,
        "z": d["z"][e].astype(np.float64) * SCALE,
        "left": xy + left_n * wl[:, None],
        "right": xy - left_n * wr[:, None],
        "tangent": t,
    }


def _dist_to_loop(q: np.ndarray, loop: np.ndarray, closed: bool = True) -> np.ndarray:
    a = loop
    b = np.roll(loop, -1, 0) if closed else loop[1:]
    a = a if closed else loop[:-1]
    d = b - a
    w = q[:, None] - a[None]
    t = np.clip((w * d).sum(2) / np.maximum((d * d).sum(1), 1e-300), 0, 1)
    return np.linalg.norm(q[:, None] - (a + t[..., None] * d), axis=2).min(1)


def _export(gen, ref, fmt, tmp_path, **kw):
    entry = export.export(gen, fmt, tmp_path, env=ref["env"], scale=SCALE, **kw)
    (row,) = entry["tracks"]
    assert row["seed"] == ref["seed"] and row["epoch"] == 0
    return [tmp_path / f for f in row["files"]]


def test_tumftm(gen, ref, tmp_path):
    (path,) = _export(gen, ref, "tumftm", tmp_path)
    assert path.name == f"bezier_s{ref['seed']}_e0.csv"
    lines = path.read_text().splitlines()
    assert lines[0] == "# x_m,y_m,w_tr_right_m,w_tr_left_m"
    rows = np.array([[float(v) for v in r] for r in csv.reader(lines[1:])])
    assert rows.shape == (96, 4)  # first point not repeated
    np.testing.assert_allclose(rows[:, :2], ref["xy"], atol=5e-7)
    np.testing.assert_allclose(rows[:, 2], ref["wr"], atol=5e-7)
    np.testing.assert_allclose(rows[:, 3], ref["wl"], atol=5e-7)
    # the right width runs along the normal to the right of travel (from the file alone)
    p = rows[:, :2]
    t = np.roll(p, -1, 0) - np.roll(p, 1, 0)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    right_n = np.stack([t[:, 1], -t[:, 0]], 1)
    np.testing.assert_allclose(p + right_n * rows[:, 2:3], ref["right"], atol=1e-5)


def test_ros_map(gen, ref, tmp_path):
    files = _export(gen, ref, "ros-map", tmp_path, resolution=0.1, wall=2)
    png, meta_path, center = files
    meta = yaml.safe_load(meta_path.read_text())
    assert set(meta) == {
        "image",
        "resolution",
        "origin",
        "negate",
        "occupied_thresh",
        "free_thresh",
        "mode",
    }
    assert meta["image"] == png.name and meta["resolution"] == 0.1 and meta["negate"] == 0
    img = matplotlib.image.imread(png)  # floats in [0, 1], row 0 at the top
    img = np.round(img * 255).astype(int)
    H, W = img.shape
    res, (ox, oy, _) = meta["resolution"], meta["origin"]

    def pixel(p):
        c = np.floor((p[:, 0] - ox) / res).astype(int)
        r = H - 1 - np.floor((p[:, 1] - oy) / res).astype(int)
        return img[r, c]

    def near_occupied(p, radius_px):
        c0 = np.floor((p[:, 0] - ox) / res).astype(int)
        r0 = H - 1 - np.floor((p[:, 1] - oy) / res).astype(int)
        k = int(math.ceil(radius_px))
        hit = np.zeros(len(p), bool)
        for dr in range(-k, k + 1):
            for dc in range(-k, k + 1):
                hit |= img[r0 + dr, c0 + dc] == 0
        return hit

    # the road is free along the centerline, walls sit on both boundaries, and a point a
    # few pixels outside the band is not free
    assert np.all(pixel(ref["xy"]) == 254)
    assert near_occupied(ref["left"], 2).all() and near_occupied(ref["right"], 2).all()
    out_l = ref["left"] + (ref["left"] - ref["xy"]) / ref["wl"][:, None] * 6 * res
    assert np.all(pixel(out_l) != 254)
    # midway between centerline and boundary is free (the wall is 2 px wide)
    mid = (ref["xy"] + ref["left"]) / 2
    assert np.mean(pixel(mid) == 254) > 0.95
    rows = np.array(
        [[float(v) for v in r] for r in csv.reader(center.read_text().splitlines()[1:])]
    )
    np.testing.assert_allclose(rows[:, :2], ref["xy"], atol=5e-7)


def _integrate_planview(root) -> tuple[np.ndarray, list[tuple[np.ndarray, float]]]:
    """The reference line from the OpenDRIVE 1.6 spec: each geometry's local curve
    (line; arc of constant curvature; paramPoly3 over p in [0, 1]) turned by hdg and put at
    x, y. Returns dense points and each piece's (points, s)."""
    pieces = []
    for g in root.iter("geometry"):
        x, y, hdg, length = (float(g.get(k)) for k in ("x", "y", "hdg", "length"))
        kind = g[0]
        if kind.tag == "line":
            t = np.linspace(0, length, 50)
            u, v = t, 0 * t
        elif kind.tag == "arc":
            k = float(kind.get("curvature"))
            t = np.linspace(0, length, 4000)
            # integrate heading hdg + k s with the trapezoid rule (not the closed form)
            ang = k * t
            du, dv = np.cos(ang), np.sin(ang)
            u = np.concatenate([[0], np.cumsum((du[1:] + du[:-1]) / 2 * np.diff(t))])
            v = np.concatenate([[0], np.cumsum((dv[1:] + dv[:-1]) / 2 * np.diff(t))])
        else:
            assert kind.tag == "paramPoly3" and kind.get("pRange") == "normalized"
            p = np.linspace(0, 1, 2000)
            c = {k: float(kind.get(k)) for k in kind.keys() if k != "pRange"}
            u = c["aU"] + c["bU"] * p + c["cU"] * p**2 + c["dU"] * p**3
            v = c["aV"] + c["bV"] * p + c["cV"] * p**2 + c["dV"] * p**3
        pts = np.stack(
            [x + np.cos(hdg) * u - np.sin(hdg) * v, y + np.sin(hdg) * u + np.cos(hdg) * v], 1
        )
        pieces.append((pts, float(g.get("s")), length, kind.tag))
    return np.concatenate([p[0] for p in pieces]), pieces


def test_opendrive(gen, ref, tmp_path):
    tol = 0.02
    (path,) = _export(gen, ref, "opendrive", tmp_path, tolerance=tol)
    root = ET.parse(path).getroot()
    head = root.find("header")
    assert (head.get("revMajor"), head.get("revMinor")) == ("1", "6")
    road = root.find("road")
    assert road.find("link/predecessor").get("elementId") == road.get("id")  # closed
    line, pieces = _integrate_planview(root)
    # every centerline point within the tolerance of the reference line
    assert _dist_to_loop(ref["xy"], line, closed=False).max() <= tol + 1e-6
    # the pieces join within the tolerance, the last one back at the start; s adds up
    for (a, *_), (b, *_) in zip(pieces, pieces[1:] + pieces[:1]):
        assert np.linalg.norm(a[-1] - b[0]) <= 2 * tol
    assert pieces[0][1] == 0.0
    for (_, s_a, len_a, _), (_, s_b, _, _) in zip(pieces, pieces[1:]):
        assert s_b == pytest.approx(s_a + len_a)
    total = pieces[-1][1] + pieces[-1][2]
    assert float(road.get("length")) == pytest.approx(total)
    lap = np.linalg.norm(np.roll(ref["xy"], -1, 0) - ref["xy"], axis=1).sum()
    assert total == pytest.approx(lap, rel=1e-2)
    assert len(pieces) < len(ref["xy"])  # fitted, not one piece per segment
    # lane widths: each lane's width polynomials at each point's s (projected here)
    dense_s = np.concatenate([s + np.linspace(0, ln, len(p)) for p, s, ln, _ in pieces])
    d = np.linalg.norm(ref["xy"][:, None] - line[None], axis=2)
    s_pts = dense_s[d.argmin(1)]

    def width_at(lane, s):
        rows = sorted(
            (float(w.get("sOffset")), *(float(w.get(k)) for k in "abcd"))
            for w in lane.iter("width")
        )
        out = np.empty_like(s)
        for i, q in enumerate(s):
            s0, a, b, c, dd = [r for r in rows if r[0] <= q + 1e-9][-1]
            ds = q - s0
            out[i] = a + b * ds + c * ds**2 + dd * ds**3
        return out

    left = [ln for ln in road.iter("lane") if ln.get("id") == "1"][0]
    right = [ln for ln in road.iter("lane") if ln.get("id") == "-1"][0]
    slope = np.abs(np.diff(ref["wl"])).max() / (lap / 96)
    allow = 2 * tol + slope * 2 * tol  # s from a projection onto the line, not the writer's
    np.testing.assert_allclose(width_at(left, s_pts), ref["wl"], atol=allow)
    np.testing.assert_allclose(width_at(right, s_pts), ref["wr"], atol=allow)
    # elevation from z
    elev = sorted(
        (float(e.get("s")), float(e.get("a")), float(e.get("b"))) for e in road.iter("elevation")
    )
    z = np.array([[a + b * (q - s0) for s0, a, b in elev if s0 <= q + 1e-9][-1] for q in s_pts])
    zs = np.abs(np.diff(ref["z"])).max() / (lap / 96)
    np.testing.assert_allclose(z, ref["z"], atol=2 * tol + zs * 2 * tol)


def test_opendrive_uses_lines_and_arcs_where_they_fit(tmp_path):
    # a stadium: two straights and two half circles
    n = 40
    t = np.linspace(0, np.pi, n, endpoint=False)
    arc1 = np.stack([10 + 5 * np.sin(t), -5 * np.cos(t)], 1)
    arc2 = np.stack([-10 - 5 * np.sin(t), 5 * np.cos(t)], 1)
    s1 = np.stack([np.linspace(-10, 10, n, endpoint=False), np.full(n, -5.0)], 1)
    s2 = np.stack([np.linspace(10, -10, n, endpoint=False), np.full(n, 5.0)], 1)
    xy = np.concatenate([s1, arc1, s2, arc2])
    track = export.Track(xy=xy, left=np.full(len(xy), 1.0), right=np.full(len(xy), 1.0))
    root = ET.fromstring(export.opendrive_xml(track, tolerance=0.01))
    line, pieces = _integrate_planview(root)
    kinds = [k for *_, k in pieces]
    assert "line" in kinds and "arc" in kinds
    assert _dist_to_loop(xy, line, closed=False).max() <= 0.01 + 1e-6
    assert len(pieces) <= 12


def test_fs_cones(gen, ref, tmp_path):
    csv_path, yaml_path = _export(gen, ref, "fs-cones", tmp_path)
    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == [
        "tag",
        "x",
        "y",
        "direction",
        "x_variance",
        "y_variance",
        "xy_covariance",
    ]
    by = {}
    for r in rows:
        by.setdefault(r["tag"], []).append([float(r["x"]), float(r["y"])])
    blue, yellow, big = (np.array(by[k]) for k in ("blue", "yellow", "big_orange"))
    assert len(big) == 4 and len(by["car_start"]) == 1
    assert _dist_to_loop(blue, ref["left"]).max() < 1e-5
    assert _dist_to_loop(yellow, ref["right"]).max() < 1e-5
    # blue is left of travel: the cross product with the nearest point's tangent is > 0
    for cones, sign in ((blue, 1), (yellow, -1)):
        i = np.linalg.norm(cones[:, None] - ref["xy"][None], axis=2).argmin(1)
        rel = cones - ref["xy"][i]
        cross = ref["tangent"][i, 0] * rel[:, 1] - ref["tangent"][i, 1] * rel[:, 0]
        assert np.all(sign * cross > 0)
    # spacing: about the mean full width
    gap = np.linalg.norm(np.diff(blue, axis=0), axis=1)
    assert np.median(gap) == pytest.approx(np.mean(ref["wl"] + ref["wr"]), rel=0.2)
    doc = yaml.safe_load(yaml_path.read_text())
    np.testing.assert_allclose(np.array(doc["cones_left"]), blue, atol=1e-6)
    np.testing.assert_allclose(np.array(doc["cones_right"]), yellow, atol=1e-6)
    np.testing.assert_allclose(np.array(doc["cones_orange_big"]), big, atol=1e-6)
    assert len(doc["starting_pose_front_wing"]) == 3


def test_gates(tmp_path):
    course = gates.build(num_envs=3, seed=5)
    data = course.numpy()
    e = int(np.flatnonzero(data["valid"])[0])
    entry = export.export(course, "gates", tmp_path, env=e, scale=2.0)
    ypath, tpath = (tmp_path / f for f in entry["tracks"][0]["files"])
    G = int(data["gate_count"][e])
    want = data["gate_position"][e, :G].astype(np.float64) * 2.0
    doc = yaml.safe_load(ypath.read_text())
    got = np.array([g["position"] for g in doc["gates"]])
    assert [g["index"] for g in doc["gates"]] == list(range(G))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal([g["heading"] for g in doc["gates"]], data["gate_heading"][e, :G])
    toml = tomllib.loads(tpath.read_text())
    tg = toml["env"]["track"]["gates"]
    np.testing.assert_array_equal(np.array([g["pos"] for g in tg]), want)
    np.testing.assert_array_equal([g["rpy"][2] for g in tg], data["gate_heading"][e, :G])
    assert len(toml["env"]["track"]["drones"]) == 1


def _read_obj(text: str):
    objs, verts, cur = {}, [], None
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0] == "#":
            continue
        if parts[0] == "o":
            cur = objs.setdefault(parts[1], [])
        elif parts[0] == "v":
            verts.append([float(v) for v in parts[1:4]])
        elif parts[0] == "f":
            cur.append([int(v.split("/")[0]) - 1 for v in parts[1:4]])
    return np.array(verts), {k: np.array(v) for k, v in objs.items()}


def test_obj(gen, ref, tmp_path):
    (path,) = _export(gen, ref, "obj", tmp_path, wall_height=0.5)
    v, objs = _read_obj(path.read_text())
    assert sorted(objs) == ["road", "wall_left", "wall_right"]
    road = objs["road"]
    used = np.unique(road)
    rv = v[used]
    assert len(rv) == 2 * 96
    # every boundary point is a road vertex (within the 6-decimal print), at its height
    for side in ("left", "right"):
        d = np.linalg.norm(rv[:, None, :2] - ref[side][None], axis=2).min(0)
        assert d.max() < 2e-6
    np.testing.assert_allclose(np.sort(rv[:, 2]), np.sort(np.repeat(ref["z"], 2)), atol=1e-6)
    # the road faces up
    a, b, c = v[road[:, 0]], v[road[:, 1]], v[road[:, 2]]
    assert np.all(np.cross(b - a, c - a)[:, 2] > 0)
    wall = v[np.unique(objs["wall_left"])]
    assert wall[:, 2].max() == pytest.approx(ref["z"].max() + 0.5, abs=1e-5)


def test_gltf(gen, ref, tmp_path):
    (path,) = _export(gen, ref, "gltf", tmp_path)
    doc = json.loads(path.read_text())
    assert doc["asset"]["version"] == "2.0"
    uri = doc["buffers"][0]["uri"]
    blob = base64.b64decode(uri.split(",", 1)[1])
    assert len(blob) == doc["buffers"][0]["byteLength"]
    (mesh,) = doc["meshes"]
    prim = mesh["primitives"][0]
    acc = doc["accessors"][prim["attributes"]["POSITION"]]
    view = doc["bufferViews"][acc["bufferView"]]
    assert acc["componentType"] == 5126 and acc["type"] == "VEC3"
    pos = np.frombuffer(blob, np.float32, acc["count"] * 3, view["byteOffset"]).reshape(-1, 3)
    np.testing.assert_allclose(pos.min(0), acc["min"])
    np.testing.assert_allclose(pos.max(0), acc["max"])
    xyz = np.stack([pos[:, 0], -pos[:, 2], pos[:, 1]], 1).astype(np.float64)  # Y up -> Z up
    tol = 1e-6 * np.abs(ref["xy"]).max() * 2
    np.testing.assert_allclose(xyz[0::2, :2], ref["left"], atol=tol)
    np.testing.assert_allclose(xyz[1::2, :2], ref["right"], atol=tol)
    np.testing.assert_allclose(xyz[0::2, 2], ref["z"], atol=tol)
    ia = doc["accessors"][prim["indices"]]
    iv = doc["bufferViews"][ia["bufferView"]]
    idx = np.frombuffer(blob, np.uint32, ia["count"], iv["byteOffset"])
    assert idx.max() < len(pos) and len(idx) == 3 * 2 * 96


def test_index_and_start_grid(gen, tmp_path):
    entry = export.export(gen, "tumftm", tmp_path, scale=SCALE)
    index = json.loads((tmp_path / export.INDEX).read_text())
    assert index["formats"]["tumftm"] == json.loads(json.dumps(entry))
    valid = gen.result.numpy()["valid"]
    assert [t["env"] for t in entry["tracks"]] == list(np.flatnonzero(valid))
    assert [s["env"] for s in entry["skipped"]] == list(np.flatnonzero(valid == 0))
    export.export(gen, "obj", tmp_path, scale=SCALE)
    index = json.loads((tmp_path / export.INDEX).read_text())
    assert sorted(index["formats"]) == ["obj", "tumftm"]
    (t,) = export.tracks(gen, entry["tracks"][0]["env"], scale=SCALE)
    poses = np.array(entry["tracks"][0]["start_poses"])
    assert poses.shape == (4, 3)
    # the grid is behind the line, in order, on the road, facing along the track
    line_mid = np.mean(entry["tracks"][0]["start_line"], axis=0)
    i0 = entry["tracks"][0]["start_index"]
    fwd = t.tangents()[i0]
    ahead = (poses[:, :2] - line_mid) @ fwd
    assert np.all(ahead < 0) and np.all(np.diff(ahead) < 0)
    dist = _dist_to_loop(poses[:, :2], t.xy)  # half its side's width out: on the road
    assert np.all(dist <= 0.51 * max(t.left.max(), t.right.max()))
    assert np.all(dist >= 0.49 * min(t.left.min(), t.right.min()))
    yaw_t = np.arctan2(fwd[1], fwd[0])
    assert np.all(np.abs(np.angle(np.exp(1j * (poses[:, 2] - yaw_t)))) < 0.5)


@settings(max_examples=25, deadline=None)
@given(
    lobes=st.integers(2, 7),
    amp=st.floats(0.0, 0.3),
    n=st.integers(12, 120),
    radius=st.floats(5.0, 500.0),
    tol=st.sampled_from([0.001, 0.01, 0.1]),
)
def test_opendrive_fit_within_tolerance(lobes, amp, n, radius, tol):
    t = np.arange(n) / n * 2 * np.pi
    r = radius * (1 + amp * np.sin(lobes * t))
    xy = np.stack([r * np.cos(t), r * np.sin(t)], 1)
    track = export.Track(xy=xy, left=np.full(n, 1.0), right=np.full(n, 1.0))
    root = ET.fromstring(export.opendrive_xml(track, tolerance=tol))
    line, pieces = _integrate_planview(root)
    assert _dist_to_loop(xy, line, closed=False).max() <= tol * (1 + 1e-6) + 1e-9 * radius
    ends = [p[0][-1] for p in pieces]
    starts = [p[0][0] for p in pieces[1:] + pieces[:1]]
    assert max(np.linalg.norm(a - b) for a, b in zip(ends, starts)) <= 2 * tol
